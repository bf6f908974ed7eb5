"""`python -m relay` (on Windows `py -m relay`): the same CLI as the `relay` script, for
machines where the script's directory is not on the PATH."""

from __future__ import annotations

import sys

from relay.cli import main

if __name__ == "__main__":
    sys.exit(main())
