"""`relay demo`: relay's main job end to end on the embedded hub (see relay.demo)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from relay.result import Result


def register(sub: Any) -> None:
    """Add the `demo` verb."""
    p: argparse.ArgumentParser = sub.add_parser("demo", help="run relay end to end on a local hub")
    p.add_argument("--keep", type=Path, default=None, help="keep the demo's files in this folder")
    p.add_argument("--json", action="store_true", help="print the timings as JSON at the end")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> Result:
    """Run the demo, printing as it goes."""
    from relay.demo import run_demo

    out = sys.stderr if args.json else sys.stdout  # with --json, stdout holds only JSON
    timings = run_demo(lambda line: print(line, file=out, flush=True), keep=args.keep)
    return Result(lines=("demo finished",), data={"timings": timings})
