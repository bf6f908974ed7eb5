"""`relay demo`: relay's main job end to end on the embedded hub (filled in by the relay issue)."""

from __future__ import annotations

import argparse
from typing import Any

from relay.result import Result


def register(sub: Any) -> None:
    """Add the `demo` verb."""
    p: argparse.ArgumentParser = sub.add_parser("demo", help="run relay end to end on a local hub")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> Result:
    """Placeholder until the hub and the relay land."""
    return Result(lines=("demo: not yet available",), exit_status=1)
