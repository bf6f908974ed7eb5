"""A step's own secret on a line that starts in UTF-16 and ends in UTF-8."""

from __future__ import annotations

import sys
from pathlib import Path

from test_relay_leak_encodings import TOKEN, _recoverable
from worlds import World

PY = Path(sys.executable).as_posix()


def test_a_line_that_turns_utf8_mid_line_carries_no_token(world: World, job: int) -> None:
    """PowerShell writes a prompt without a line break in UTF-16, then a native program
    prints the token in UTF-8 on the same line: the line has enough NULs to be read as
    UTF-16, and the token becomes CJK characters."""
    c, w = world.controller, world.worker
    script = (
        "import os, sys; out = sys.stdout.buffer; "
        "out.write(''.join('Name=svc%d State=Running\\r\\n' % i for i in range(100))"
        ".encode('utf-16-le')); "
        "out.write('Name=deploy State=Running Value='.encode('utf-16-le')); "
        "out.write((os.environ['DEPLOY_API_TOKEN'] + '\\n').encode())"
    )
    c.ok("task", str(job), "--step", f'"{PY}" -c "{script}"')
    done = w.run("watch", "--once", env=w.env(DEPLOY_API_TOKEN=TOKEN))
    assert done.returncode == 0, done.stderr
    log = world.remote_file(f"docs/loop/relay/{job}/logs/result-001.log")
    result = world.comments(job)[-1]["body"]
    leaked = [where for where, text in (("log", log), ("RESULT", result)) if _recoverable(text)]
    assert not leaked, f"the token can be rebuilt from the published {leaked}"
