"""The `relay` command line: one module per verb under `relay.commands`, one place to render.

Each verb module exposes ``register(subparsers)`` which adds its parser and sets
``func`` to a callable taking the parsed namespace and returning a ``Result``.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

from relay.errors import RelayError
from relay.result import Result, render

# Verb modules, imported lazily so that `relay watch --once` does not pay for the hub.
VERBS: tuple[str, ...] = (
    "init",
    "join",
    "job",
    "task",
    "watch",
    "result",
    "hypothesis",
    "strike",
    "resolve",
    "status",
    "redact",
    "hub",
    "demo",
)


def build_parser() -> argparse.ArgumentParser:
    """Build the full parser; verb modules are imported here, not at import time."""
    parser = argparse.ArgumentParser(
        prog="relay", description="Hand work between machines through GitHub issues."
    )
    sub = parser.add_subparsers(dest="verb", metavar="VERB")
    sub.required = True
    for verb in VERBS:
        module = importlib.import_module(f"relay.commands.{verb}")
        module.register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run one CLI invocation and return its exit status."""
    args = build_parser().parse_args(argv)
    json_output = bool(getattr(args, "json", False))
    try:
        result: Result = args.func(args)
    except RelayError as err:
        print(f"relay: {err}", file=sys.stderr)
        return err.exit_status
    except KeyboardInterrupt:
        print("relay: interrupted", file=sys.stderr)
        return 130
    render(result, json_output=json_output)
    return result.exit_status


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
