"""The small markdown the spine files share: sections, table rows, code spans and fences.

Ground rules: a section is a ``## `` heading and everything up to the next one (headings
inside code fences do not count); text relay does not own is carried through byte for
byte, so ``"".join`` of what :func:`sections` returns is the text it was given.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from relay.errors import SpineFileError

_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")


@dataclass(frozen=True)
class Section:
    """One ``## `` section: its heading's words (None for the text before the first) and
    its raw text, heading line included; ``first_line`` is 1-based, for error messages."""

    heading: str | None
    text: str
    first_line: int


def sections(text: str) -> list[Section]:
    """The text cut at its ``## `` headings; joined back, the parts are the text."""
    lines = text.splitlines(keepends=True)
    starts: list[tuple[int, str | None]] = [(0, None)]
    fence: str | None = None
    for index, line in enumerate(lines):
        match = _FENCE.match(line)
        if match:
            mark = match.group(1)
            if fence is None:
                fence = mark
            elif (
                mark[0] == fence[0] and len(mark) >= len(fence) and not line.strip(mark[0] + " \n")
            ):
                fence = None
        elif fence is None and line.startswith("## "):
            starts.append((index, line[3:].strip()))
    found = []
    for pos, (index, heading) in enumerate(starts):
        end = starts[pos + 1][0] if pos + 1 < len(starts) else len(lines)
        found.append(Section(heading, "".join(lines[index:end]), index + 1))
    return found


def find(parts: list[Section], heading: str) -> int | None:
    """The index of the first section headed ``heading`` (case-insensitive), or None."""
    for index, part in enumerate(parts):
        if part.heading is not None and part.heading.lower() == heading.lower():
            return index
    return None


def body_lines(part: Section) -> list[tuple[int, str]]:
    """(1-based line number, line without its newline) of a section's lines after the
    heading."""
    lines = part.text.splitlines()
    skip = 0 if part.heading is None else 1
    return [(part.first_line + i, line) for i, line in enumerate(lines) if i >= skip]


def cell(text: str) -> str:
    """A value as a table cell: one line, its pipes escaped."""
    return " ".join(text.split()).replace("\\", "\\\\").replace("|", "\\|")


def row(values: list[str]) -> str:
    """One markdown table row."""
    return "| " + " | ".join(cell(v) for v in values) + " |"


def split_row(line: str) -> list[str] | None:
    """The cells of a table row (escaped pipes kept as text), or None if not a row."""
    text = line.strip()
    if not (text.startswith("|") and text.endswith("|") and len(text) >= 2):
        return None
    cells, current, escaped = [], "", False
    for char in text[1:-1]:
        if escaped:
            current += char if char in "|\\" else "\\" + char
            escaped = False
        elif char == "\\":
            escaped = True
        elif char == "|":
            cells.append(current.strip())
            current = ""
        else:
            current += char
    if escaped:
        current += "\\"
    cells.append(current.strip())
    return cells


def table_rows(
    text: str, columns: tuple[str, ...], *, name: str
) -> tuple[str, list[tuple[int, list[str]]]]:
    """An append-only table file (the iteration log, the experiments ledger): the text
    before the table, and each data row's line number and cells (header and rule rows
    skipped); nothing but table rows may follow the table."""
    lines = text.splitlines(keepends=True)
    head_end = next((i for i, line in enumerate(lines) if split_row(line)), len(lines))
    found = []
    for number, line in enumerate(lines[head_end:], start=head_end + 1):
        cells = split_row(line)
        if cells is None:
            if line.strip():
                raise SpineFileError(name, number, "only table rows may follow the table")
            continue
        if is_rule_row(cells) or cells == list(columns):
            continue
        found.append((number, cells))
    return "".join(lines[:head_end]), found


def is_rule_row(cells: list[str]) -> bool:
    """Whether a table row is the ``| --- | --- |`` line under the header."""
    return all(re.fullmatch(r":?-{3,}:?", c) for c in cells)


def code_span(text: str) -> str:
    """``text`` as an inline code span, with a delimiter longer than any backtick run in it."""
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    tick = "`" * (longest + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{tick}{pad}{text}{pad}{tick}"


def parse_code_span(text: str) -> str | None:
    """The content of an inline code span that is the whole of ``text``, or None."""
    match = re.fullmatch(r"(`+)(.+?)\1", text.strip(), flags=re.DOTALL)
    if match is None:
        return None
    inner, size = match.group(2), len(match.group(1))
    if re.search(rf"(?<!`)`{{{size}}}(?!`)", inner) or inner.startswith("`"):
        return None
    if len(inner) >= 2 and inner.startswith(" ") and inner.endswith(" ") and inner.strip():
        return inner[1:-1]
    return inner


def fenced(text: str) -> str:
    """``text`` in a backtick fence longer than any backtick run at the start of its lines."""
    runs = re.findall(r"^\s*(`{3,})", text, flags=re.MULTILINE)
    tick = "`" * max([3, *(len(r) + 1 for r in runs)])
    return f"{tick}\n{text}\n{tick}\n" if text else f"{tick}\n{tick}\n"


def unfence(lines: list[tuple[int, str]], start: int) -> tuple[str, int] | None:
    """The text of the fence opening at ``lines[start]`` and the index after its closing
    line, or None when ``lines[start]`` opens no fence or the fence never closes."""
    opening = lines[start][1]
    match = re.fullmatch(r"(`{3,})", opening.strip())
    if match is None:
        return None
    tick = match.group(1)
    for index in range(start + 1, len(lines)):
        if lines[index][1].strip() == tick:
            return "\n".join(text for _, text in lines[start + 1 : index]), index + 1
    return None
