"""Scheduled mode's triage, decided purely: what the gates' output and the repository's
files show needs doing (a failing or erroring test, a lint or type finding, a file below
the coverage floor, a ``TODO``/``FIXME`` marker), each as a goal with a command as its
acceptance criterion, and which of them are new.

Ground rules: every finding has a stable key (the test's node id, the tool and the
path:line and code, the file, the marker's path and text), kept on its goal as
``- Finding:``, so that a finding is never enqueued twice, whatever state its goal is in.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from relay.loop.goals import BoardRow, Goal, GoalsFile, GoalState, next_id

_PYTEST = re.compile(r"^(FAILED|ERROR) (\S+?)(?:::(\S+))?(?: - .*)?$")
_RUFF = re.compile(r"^(?P<path>[^\s:][^:]*):(?P<line>\d+):(?P<col>\d+): (?P<code>[A-Z]+\d+) ")
_MYPY = re.compile(
    r"^(?P<path>[^\s:][^:]*\.pyi?):(?P<line>\d+): error: .*?(?:\[(?P<code>[\w-]+)\])?$"
)
_MARKER = re.compile(r"\b(TODO|FIXME)\b[:\s]*(.*)")
MARKER_FILES = (".py", ".js", ".ts", ".go", ".rs", ".sh", ".md", ".toml", ".c", ".h", ".java")


@dataclass(frozen=True)
class Finding:
    """One thing triage found, as the goal it becomes."""

    kind: str  # test, lint, type, coverage, marker
    key: str
    title: str
    accept: str

    def data(self) -> dict[str, str]:
        return {"kind": self.kind, "key": self.key, "title": self.title, "accept": self.accept}


def failing_tests(output: str, *, gate: str) -> list[Finding]:
    """A failing or erroring test in pytest's short summary, accepted when that test passes
    (``gate`` is the test gate's command, the node id appended)."""
    found = []
    for line in output.splitlines():
        match = _PYTEST.match(line.strip())
        if match is None:
            continue
        what, path, name = match.groups()
        node = f"{path}::{name}" if name else path
        verb = "Fix the failing test" if what == "FAILED" else "Fix the erroring test"
        found.append(Finding("test", f"test {node}", f"{verb} {node}", _pytest_one(gate, node)))
    return found


def _pytest_one(gate: str, node: str) -> str:
    """The test gate narrowed to one node id (``-x`` style flags kept)."""
    return f"{gate} {shlex.quote(node)}"


def lint_findings(output: str, *, gate: str) -> list[Finding]:
    """ruff-style ``path:line:col: CODE message`` findings, one goal per file and code,
    accepted when the lint gate passes on that file."""
    seen: dict[str, Finding] = {}
    for line in output.splitlines():
        match = _RUFF.match(line.strip())
        if match is None:
            continue
        path, code = match["path"], match["code"]
        key = f"lint {path} {code}"
        if key not in seen:
            seen[key] = Finding("lint", key, f"Fix {code} in {path}", f"{gate} {shlex.quote(path)}")
    return list(seen.values())


def type_findings(output: str, *, gate: str) -> list[Finding]:
    """mypy-style ``path:line: error: ...`` findings, one goal per file, accepted when the
    type gate passes."""
    seen: dict[str, Finding] = {}
    for line in output.splitlines():
        match = _MYPY.match(line.strip())
        if match is None:
            continue
        path = match["path"]
        key = f"type {path}"
        seen.setdefault(key, Finding("type", key, f"Fix the type errors in {path}", gate))
    return list(seen.values())


def coverage_findings(files: Mapping[str, float], *, floor: int, report_gate: str) -> list[Finding]:
    """A file whose line coverage is below the floor (from coverage.py's JSON report's
    per-file percentages), accepted when a check of that one file's figure passes."""
    found = []
    for path, percent in sorted(files.items()):
        if percent + 1e-9 >= floor:
            continue
        check = coverage_check(path, floor)
        accept = f"{report_gate} && {check}" if report_gate else check
        title = f"Cover {path} to {floor}% (now {percent:.0f}%)"
        found.append(Finding("coverage", f"coverage {path}", title, accept))
    return found


def coverage_check(path: str, floor: int, report: str = "coverage.json") -> str:
    """A command that passes when ``path``'s line coverage in the report is at the floor."""
    code = (
        "import json,sys;"
        f"f=json.load(open({report!r}))['files'][{path!r}]['summary'];"
        f"sys.exit(0 if f['percent_covered']>={floor} else 1)"
    )
    return f"python3 -c {shlex.quote(code)}"


def marker_findings(texts: Mapping[str, str]) -> list[Finding]:
    """Each ``TODO``/``FIXME`` marker, accepted when its line's text is gone from the file."""
    found = []
    for path, text in sorted(texts.items()):
        if not path.endswith(MARKER_FILES):
            continue
        for line in text.splitlines():
            match = _MARKER.search(line)
            if match is None:
                continue
            said = " ".join(match.group(2).split())[:80] or "(no text)"
            stripped = line.strip()
            accept = f"! grep -qF -- {shlex.quote(stripped)} {shlex.quote(path)}"
            key = f"marker {path} {stripped}"
            title = f"Resolve the {match.group(1)} in {path}: {said}"
            found.append(Finding("marker", key, title, accept))
    return found


def new_findings(findings: Iterable[Finding], goals: Sequence[Goal]) -> list[Finding]:
    """The findings no goal carries yet (each key once, in the order found)."""
    known = {g.finding for g in goals if g.finding}
    fresh: list[Finding] = []
    for finding in findings:
        if finding.key not in known:
            known.add(finding.key)
            fresh.append(finding)
    return fresh


def enqueue(doc: GoalsFile, findings: Sequence[Finding]) -> tuple[Goal, ...]:
    """The goals the new findings become, numbered after the backlog's."""
    made: list[Goal] = []
    for finding in new_findings(findings, doc.goals):
        current = GoalsFile(doc.before, doc.intro, (*doc.goals, *made), doc.after)
        made.append(Goal(next_id(current), finding.title, finding.accept, finding=finding.key))
    return tuple(made)


def retired(
    findings: Iterable[Finding], goals: Sequence[Goal], rows: Mapping[str, BoardRow]
) -> list[BoardRow]:
    """The board rows of triage's goals whose finding is gone (the test fixed or deleted,
    the marker removed), marked done with a one-line reason. A goal being worked (in
    progress) or already done is left as it is."""
    seen = {f.key for f in findings}
    out: list[BoardRow] = []
    for goal in goals:
        row = rows.get(goal.id)
        if not goal.finding or goal.finding in seen or row is None:
            continue
        if row.state in (GoalState.DONE, GoalState.IN_PROGRESS):
            continue
        why = f"retired by triage: the finding `{goal.finding}` is gone"
        out.append(BoardRow(row.goal, row.title, GoalState.DONE, row.attempts,
                            row.failed_passes, "retired", why))  # fmt: skip
    return out
