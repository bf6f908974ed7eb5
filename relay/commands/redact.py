"""`relay redact [FILE]`: the redaction engine as a filter, for any log.

Reads FILE (standard input when absent or ``-``) and writes the redacted text to standard
output as it goes, with bounded memory. The machine's facts — user, home, host names, the
values of secret-named environment variables (which include relay's token variables) — are
gathered once. ``--report`` prints the counts and the verdict to standard error. The exit
status is 0 whatever was found: a filter that fails on a secret would break pipelines; when
the output is not fit to publish (binary input, too much redacted), one warning line goes to
standard error. As Unix filters do, a reader that goes away (``| head``) ends the run
quietly, and an output that cannot be written (a full disk) is a one-line error.
"""

from __future__ import annotations

import argparse
import dataclasses
import errno
import io
import os
import re
import stat as _stat
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO, cast

from relay.commands.output import Output
from relay.errors import LocalUsageError

if TYPE_CHECKING:
    from relay.redact import RedactionReport, Redactor, StreamRedactor

# Each read's whole lines go out before the next read, from a file as from a pipe: the
# window is then a read and a line, not the redactor's megabyte, whose copies (lowered,
# joined, replaced) put a file's peak 9 MB above a pipe's (73 MB against 64 MB on 37 MB of
# Python source). Half a megabyte, the redactor's window, not a sixteenth: every window
# pays for each rule's start however few lines it holds, and four times fewer windows read
# a build log a tenth faster (56 MB per CPU-second against 51 on 100 MB); half as many as
# a quarter megabyte's read it 2.8% faster by CPU time, for 1.4 MB more at its peak (56.6
# MB; 2.5 MB more on 37 MB of Python source).
READ_SIZE = 1 << 19
SIGPIPE_STATUS = 141  # what a shell reports for a filter that a closed pipe ended


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
        help="an extra pattern to redact as [redacted:NAME] (repeatable; run in linear time "
        "unless it needs look-around or back-references)",
    )
    p.add_argument(
        "--allow",
        action="append",
        default=[],
        metavar="REGEX",
        help="never redact text that matches this whole (repeatable)",
    )
    p.add_argument(
        "--output",
        "-o",
        type=Path,
        default=None,
        help="write the redacted text to this file instead of standard output",
    )
    p.add_argument(
        "--json",
        action="store_true",
        help="print the report as the JSON envelope (needs --output for the text)",
    )
    p.add_argument(
        "--jobs",
        "-j",
        type=_jobs,
        default=None,
        metavar="N",
        help="processes for a large file (default: one per core; 1: this process alone)",
    )
    p.set_defaults(func=run)


def _jobs(value: str) -> int:
    """``--jobs``: a whole number of processes, at least one."""
    if not value.isdigit() or int(value) < 1:
        raise argparse.ArgumentTypeError(f"{value!r} is not a number of processes (1 or more)")
    return int(value)


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
        _check_regex("--pattern", spec, regex)
        patterns[name] = regex
    return patterns


def _check_regex(flag: str, spec: str, regex: str) -> None:
    """Name the flag and the pattern in the error, not a place in the engine's combined regex."""
    try:
        re.compile(regex.encode())
    except re.error as err:
        where = "" if err.pos is None else f" at position {err.pos}"
        raise LocalUsageError(
            f"{flag} {spec!r} is not a valid regex: {err.msg}{where}",
            hint="fix the pattern (Python regex syntax)",
        ) from err


def _allowed(specs: Iterable[str]) -> list[str]:
    """Check each ``--allow`` on its own, so that an error names it."""
    for spec in specs:
        _check_regex("--allow", spec, spec)
    return list(specs)


def _open(path: str) -> io.BufferedReader:
    if path == "-":
        return cast(io.BufferedReader, sys.stdin.buffer)
    try:
        return open(path, "rb")
    except OSError as err:
        raise LocalUsageError(
            f"cannot read {path}: {err.strerror}", hint="pass a readable file, or pipe the log in"
        ) from err


def _write(text: str | bytes, sink: BinaryIO | None = None) -> None:
    """Write all of ``text``: a large write that the file takes only in part (a size limit)
    returns a short count instead of raising, so write the rest until it does raise."""
    out = sink or sys.stdout.buffer
    data = memoryview(text.encode() if isinstance(text, str) else text)
    while data:
        written = out.write(data)
        if not written:  # a non-blocking output that takes nothing now
            raise BlockingIOError(errno.EAGAIN, os.strerror(errno.EAGAIN))
        data = data[written:]


def _read(source: io.BufferedReader, name: str) -> bytes:
    try:
        return source.read1(READ_SIZE)
    except OSError as err:  # a directory, a device error: not the output's fault
        raise LocalUsageError(
            f"cannot read {name}: {err.strerror}", hint="pass a readable file, or pipe the log in"
        ) from err


def _pump(
    source: io.BufferedReader, stream: StreamRedactor, *, name: str, sink: BinaryIO | None = None
) -> None:
    """Copy the source through the redactor to ``sink`` (standard output by default)."""
    out = sink or sys.stdout.buffer
    while chunk := _read(source, name):
        _write(stream.feed_bytes(chunk), out)
        _write(stream.flush_bytes(), out)
        if len(chunk) < READ_SIZE:  # slow input (a pipe, a terminal): pass lines on now
            out.flush()
    _write(stream.finish_bytes(), out)
    out.flush()


def _drop_stdout() -> None:
    """Point standard output at the null device, so that the text still buffered for a
    closed pipe or a full disk is not written again (and fails again) at exit."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    os.close(devnull)


def _steady_heap() -> None:
    """Keep freed memory at the heap's top for the next window (glibc): each window's
    megabyte-sized copies are otherwise given back and faulted in again, a tenth of the
    run's time spent in the kernel. Nothing changes where the C library has no such knob."""
    if not sys.platform.startswith("linux"):
        return
    import ctypes

    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):
        return
    m_top_pad = -2
    mallopt(m_top_pad, 16 << 20)


def run(args: argparse.Namespace) -> Output:
    """Stream the input through the redactor to stdout; the Output carries only the report."""
    from relay.node.redaction import redactor_here

    _steady_heap()

    # the node's own recipe: in a clone, its master section's patterns and node hosts too
    redactor = redactor_here(
        extra_patterns=_extra_patterns(args.pattern), allowed=_allowed(args.allow)
    )
    if args.json and args.output is None:
        raise LocalUsageError(
            "--json prints the report on standard output, so the text needs --output FILE",
            hint="add --output redacted.log",
        )
    stream = redactor.open()
    source = _open(args.file)
    sink = _create(args.output) if args.output is not None else None
    report: RedactionReport | None = None
    try:
        name = "standard input" if args.file == "-" else args.file
        report = _in_pieces(redactor, source, args.jobs, sink)
        if report is None:
            _pump(source, stream, name=name, sink=sink)
    except BrokenPipeError:
        _drop_stdout()  # the reader has all it wanted (| head): stop quietly, as filters do
        return Output(exit_status=SIGPIPE_STATUS)
    except OSError as err:
        _drop_stdout()
        raise LocalUsageError(
            f"cannot write the redacted text to standard output: {err.strerror}",
            hint="free some space, or send the output somewhere else",
        ) from err
    finally:
        if source is not sys.stdin.buffer:
            source.close()
        if sink is not None:
            sink.close()
    return _finish(report or stream.report, verbose=args.report)


def _in_pieces(
    redactor: Redactor, source: io.BufferedReader, jobs: int | None, sink: BinaryIO | None
) -> RedactionReport | None:
    """A large regular file redacted on every core (see ``relay.redact.parallel``); None
    when the input is a pipe, small, or one process is asked for (the caller streams it)."""
    from relay.redact import parallel

    count = jobs or parallel.cores()
    if count < 2 or source is sys.stdin.buffer:
        return None
    stat = os.fstat(source.fileno())
    if not _stat.S_ISREG(stat.st_mode) or stat.st_size < parallel.MIN_PARALLEL:
        return None
    from concurrent.futures.process import BrokenProcessPool

    out = sink or sys.stdout.buffer
    try:
        tally = parallel.redact_file(
            redactor, source.name, stat.st_size, lambda text: _write(text, out), jobs=count
        )
    except BrokenProcessPool as err:
        raise LocalUsageError(
            "a redaction process ended before its piece was done (out of memory?); "
            "the output is incomplete",
            hint="run it again with -j 1, or with more memory free",
        ) from err
    out.flush()
    return tally.report(redactor.recipe.max_redacted_share)


def _create(path: Path) -> BinaryIO:
    """The output file, opened for writing; a one-line error when it cannot be."""
    try:
        return path.open("wb")
    except OSError as err:
        raise LocalUsageError(
            f"cannot write {path}: {err.strerror}", hint="choose a path you may write"
        ) from err


def _finish(report: RedactionReport, *, verbose: bool) -> Output:
    """Say on stderr what was redacted (asked for) and that the output is unsafe (always)."""
    if verbose:
        print(report.summary(), file=sys.stderr)
    elif not report.safe:
        print(f"relay: warning: do not publish this output: {report.reason}", file=sys.stderr)
    return Output(data={"report": dataclasses.asdict(report)})
