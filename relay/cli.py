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
    "doctor",
    "leave",
    "redact",
    "hub",
    "demo",
)


def build_parser(argv: Sequence[str] | None = None) -> argparse.ArgumentParser:
    """Build the parser; only the verb named in ``argv`` is imported (all of them for help),
    so that a scheduled `relay watch --once` does not pay for the hub or the wizard."""
    parser = argparse.ArgumentParser(
        prog="relay", description="Hand work between machines through GitHub issues."
    )
    sub = parser.add_subparsers(dest="verb", metavar="VERB")
    sub.required = True
    words = list(sys.argv[1:] if argv is None else argv)
    chosen = [w for w in words[:1] if w in VERBS] or list(VERBS)
    for verb in VERBS:
        if verb in chosen:
            importlib.import_module(f"relay.commands.{verb}").register(sub)
        else:
            sub.add_parser(verb, help=f"see `relay {verb} --help`")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run one CLI invocation and return its exit status."""
    args = build_parser(argv).parse_args(argv)
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
