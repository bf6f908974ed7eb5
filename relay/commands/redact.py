"""`relay redact [FILE]`: the redaction engine as a filter, for any log.

Reads FILE (standard input when absent or ``-``) and writes the redacted text to standard
output as it goes, with bounded memory. The machine's facts — user, home, host names, the
values of secret-named environment variables (which include relay's token variables) — are
gathered once. ``--report`` prints the counts and the verdict to standard error. The exit
status is 0 whatever was found: a filter that fails on a secret would break pipelines.
"""

from __future__ import annotations

import argparse
import dataclasses
import io
import sys
from typing import Any, cast

from relay.errors import LocalUsageError
from relay.result import Result

READ_SIZE = 1 << 16


def register(sub: Any) -> None:
    """Add the `redact` verb."""
    p: argparse.ArgumentParser = sub.add_parser(
        "redact", help="redact secrets and personal data from a log (stdin to stdout)"
    )
    p.add_argument("file", nargs="?", default="-", help="log to redact (default: stdin)")
    p.add_argument("--report", action="store_true", help="print what was redacted to stderr")
    p.add_argument(
        "--pattern",
        action="append",
        default=[],
        metavar="NAME=REGEX",
        help="an extra pattern to redact as [redacted:NAME] (repeatable)",
    )
    p.add_argument(
        "--allow",
        action="append",
        default=[],
        metavar="REGEX",
        help="never redact text that matches this whole (repeatable)",
    )
    p.set_defaults(func=run)


def _extra_patterns(specs: list[str]) -> dict[str, str]:
    """Parse ``NAME=REGEX`` options."""
    patterns = {}
    for spec in specs:
        name, sep, regex = spec.partition("=")
        if not sep or not name or not regex:
            raise LocalUsageError(
                f"--pattern {spec!r} is not NAME=REGEX",
                hint="for example --pattern ticket=TCK-[0-9]+",
            )
        patterns[name] = regex
    return patterns


def _open(path: str) -> io.BufferedReader:
    if path == "-":
        return cast(io.BufferedReader, sys.stdin.buffer)
    try:
        return open(path, "rb")
    except OSError as err:
        raise LocalUsageError(
            f"cannot read {path}: {err.strerror}", hint="pass a readable file, or pipe the log in"
        ) from err


def run(args: argparse.Namespace) -> Result:
    """Stream the input through the redactor to stdout; the Result carries only the report."""
    from relay.redact import Redactor, gather_facts

    redactor = Redactor(
        gather_facts(),
        extra_patterns=_extra_patterns(args.pattern),
        allowed=args.allow,
    )
    stream = redactor.open()
    out = sys.stdout.buffer
    source = _open(args.file)
    try:
        while chunk := source.read1(READ_SIZE):
            out.write(stream.feed(chunk).encode())
            if len(chunk) < READ_SIZE:  # slow input (a pipe, a terminal): pass lines on now
                out.write(stream.flush().encode())
                out.flush()
        out.write(stream.finish().encode())
        out.flush()
    finally:
        if source is not sys.stdin.buffer:
            source.close()
    report = stream.report
    if args.report:
        print(report.summary(), file=sys.stderr)
    return Result(data={"report": dataclasses.asdict(report)})
