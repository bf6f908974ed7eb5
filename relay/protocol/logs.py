"""The payload data plane, pure: cap a full log, pick the RESULT's excerpt.

These functions take redacted text and return text; they read no file and no clock. A full
log is capped so that a runaway task cannot bloat the repository: its head and tail are
kept, and the cut says how many lines and characters went. The excerpt is at most 30
lines, each capped, around the first error when a step failed (else the tail), with HTML
comment openers broken so it cannot pass for a relay machine block. The one excerpt cut
and its width live here; the one fence that shows it is :func:`relay.protocol.wire.fenced`.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

MAX_LOG_CHARS = 1_000_000
HEAD_SHARE = 0.4  # of a capped log; the tail, where a failure usually shows, gets the rest
EXCERPT_LINES = 30
LINE_CHARS = 200
LINES_BEFORE_ERROR = 8

_ANSI = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b[@-Z\\-_]")
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
_ERROR = re.compile(
    r"(?i)\b(?:error|errors|fatal|failed|failure|exception|traceback|panic(?:ked)?|"
    r"segmentation fault|assertionerror|npm err!)\b|^E\s{2,}|^FAIL\b"
)


def cap_log(text: str, *, limit: int = MAX_LOG_CHARS) -> str:
    """``text`` itself when it fits in ``limit`` characters, else its head and tail whole
    lines with a marker line in between that says how much was cut."""
    if len(text) <= limit:
        return text
    head_end = text.rfind("\n", 0, int(limit * HEAD_SHARE)) + 1
    tail_start = text.find("\n", len(text) - int(limit * (1 - HEAD_SHARE))) + 1
    if tail_start <= head_end:
        tail_start = head_end
    cut = text[head_end:tail_start]
    marker = (
        f"[... relay cut {cut.count(chr(10)):,} lines ({len(cut):,} characters) "
        f"from the middle of this log ...]\n"
    )
    return text[:head_end] + marker + text[tail_start:]


def clean_line(line: str, *, width: int = LINE_CHARS) -> str:
    """One line fit for an excerpt: no terminal escapes or control bytes, at most ``width``."""
    line = _CONTROL.sub("", _ANSI.sub("", line.rstrip("\r\n"))).replace("\t", "    ")
    line = line.replace("<!--", "<\\!--")  # never readable as a hidden machine block
    if len(line) > width:
        return line[: width - 1] + "…"
    return line


def first_error(lines: Sequence[str]) -> int | None:
    """The index of the first line that reads as an error, if any."""
    for index, line in enumerate(lines):
        if _ERROR.search(line):
            return index
    return None


def excerpt(
    text: str,
    *,
    failed: bool,
    max_lines: int = EXCERPT_LINES,
    width: int = LINE_CHARS,
) -> list[str]:
    """At most ``max_lines`` cleaned lines: around the first error when the task failed,
    otherwise (or when no line reads as an error) the tail."""
    lines = text.splitlines()
    while lines and not lines[-1].strip():
        lines.pop()
    at = first_error(lines) if failed else None
    if at is None:
        chosen = lines[-max_lines:] if max_lines > 0 else []
    else:
        start = max(0, min(at - LINES_BEFORE_ERROR, len(lines) - max_lines))
        chosen = lines[start : start + max_lines]
    return [clean_line(line, width=width) for line in chosen]
