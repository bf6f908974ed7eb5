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
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace

from relay.loop.checks import Finding as Check
from relay.loop.checks import (
    junit_tests,
    mypy_findings,
    pytest_failures,
    read_gate,
    ruff_findings,
    stem,
)
from relay.loop.goals import Board, BoardRow, Goal, GoalsFile, GoalState, next_id
from relay.loop.markdown import find, sections

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


def failing_tests(
    output: str, *, gate: str, tests: Sequence[tuple[str, str]] | None = None
) -> list[Finding]:
    """A failing or erroring test, accepted when that test passes (``gate`` is the test
    gate's command, narrowed to the node id). With ``tests`` (every test the run's JUnit
    report names, with its outcome) the report says which tests failed, the output only in
    what order and which files could not be collected (no test case of the report); else
    pytest's short summary alone says."""
    named = pytest_failures(output)
    if tests is not None:
        failed = {node: outcome for node, outcome in tests if outcome in ("failed", "error")}
        ran = dict(tests)
        # a file that could not be collected is no test case of the report: its ERROR line
        kept = [f for f in named if f.path in failed or ("::" not in f.path and f.path not in ran)]
        said = {f.path for f in kept}
        kept += [
            Check("test", node, failed="FAILED" if outcome == "failed" else "ERROR")
            for node, outcome in sorted(failed.items())
            if node not in said
        ]
        named = kept
    found = []
    for failure in named:
        node = failure.path
        verb = "Fix the failing test" if failure.failed == "FAILED" else "Fix the erroring test"
        # a parametrised test's id holds its parameters' text (anyone's writing): the
        # title names the test function only; its whole id is in the criterion
        shown = node.split("[", 1)[0] + (" (one of its parameter sets)" if "[" in node else "")
        found.append(Finding("test", f"test {node}", f"{verb} {shown}", narrowed(gate, node)))
    return found


def lint_findings(output: str, *, gate: str) -> list[Finding]:
    """ruff's findings in any of its output formats (concise, full, format's), one goal per
    file and code, accepted when the lint gate passes on that file."""
    seen: dict[str, Finding] = {}
    for finding in ruff_findings(output):
        path, code = finding.path, finding.code
        key = f"lint {path} {code}"
        if key not in seen:
            accept = narrowed(gate, path, select=code)
            seen[key] = Finding("lint", key, f"Fix {code} in {path}", accept)
    return list(seen.values())


def type_findings(output: str, *, gate: str) -> list[Finding]:
    """mypy-style ``path:line: error: ...`` findings, one goal per file, accepted when the
    type gate passes."""
    seen: dict[str, Finding] = {}
    for finding in mypy_findings(output):
        key = f"type {finding.path}"
        seen.setdefault(key, Finding("type", key, f"Fix the type errors in {finding.path}", gate))
    return list(seen.values())


TOOLS = ("pytest", "ruff", "flake8", "pyflakes", "pycodestyle")
_VALUE_OPTIONS = frozenset((
    "-p", "-k", "-m", "-c", "-o", "-W", "-n", "-r", "--rootdir", "--cov", "--cov-report",
    "--cov-config", "--ignore", "--deselect", "--junitxml", "--basetemp", "--durations",
    "--maxfail", "--tb", "--config", "--select", "--extend-select", "--target-version",
    "--line-length", "--output-format", "--exclude", "--extend-exclude",
))  # fmt: skip
_SHELL = frozenset(("&&", "||", ";", "|", ">", "<", "2>&1"))


_CODE = re.compile(r"[A-Z]+[0-9]+")


def narrowed(gate: str, target: str, *, select: str = "") -> str:
    """The gate narrowed to one target (a test's node id, a file): the paths it names
    (``.``, ``tests/``) give way to the target, so that a goal's acceptance does not wait
    on every other finding of a red gate; with ``select`` (a lint code), a linter's check
    is narrowed to that code too (the file's other findings are other goals). A command
    relay cannot read is appended to."""
    appended = f"{gate} {shlex.quote(target)}"
    try:
        words = shlex.split(gate)
    except ValueError:
        return appended
    tool = next(
        (i for i, w in enumerate(words) if w.rsplit("/", 1)[-1] in TOOLS and "=" not in w), None
    )
    if tool is None or any(w in _SHELL for w in words):
        return appended
    kept, value, sub = words[: tool + 1], False, words[tool].endswith("ruff")
    linter = words[tool].rsplit("/", 1)[-1] in ("ruff", "flake8")
    dropping = False
    for word in words[tool + 1 :]:
        if dropping:  # the value of a --select relay replaces
            dropping = False
            continue
        if select and word in ("--select", "--extend-select") and not value:
            dropping = True
            continue
        if select and word.startswith(("--select=", "--extend-select=")) and not value:
            continue
        if value or word.startswith("-"):
            kept.append(word)
            value = not value and word in _VALUE_OPTIONS
        elif sub and word in ("check", "format"):
            kept.append(word)
            linter = linter and word == "check"
        sub = False
    narrow = ["--select", select] if select and linter and _CODE.fullmatch(select) else []
    return shlex.join([*kept, *narrow, target])


def coverage_findings(
    files: Mapping[str, float],
    *,
    floor: int,
    report_gate: str,
    lines: Mapping[str, tuple[int, int]] | None = None,
    bounds: Mapping[str, int] | None = None,
) -> list[Finding]:
    """A file whose line coverage is below the floor (from coverage.py's JSON report's
    per-file percentages), accepted when a check of that one file's figure passes. With
    ``lines`` (each file's statements and missing lines), the check also bounds the
    missing lines to what the floor allows of the statements counted now: code that runs
    at import (a table of constants) raises the percentage with no line more tested, and
    meets no goal. ``bounds`` (:func:`coverage_bound` of an open goal's check): a file at
    the floor whose missing lines are still above its goal's bound is still a finding."""
    found = []
    for path, percent in sorted(files.items()):
        counted = (lines or {}).get(path)  # None where the report gives no counts
        bound = (bounds or {}).get(path)
        if percent + 1e-9 >= floor and (bound is None or counted is None or counted[1] <= bound):
            continue
        allowed = bound
        if allowed is None and counted is not None:
            allowed = int(counted[0] * (100 - floor) / 100 + 1e-9)
        check = coverage_check(path, floor, missing=allowed)
        accept = f"{report_gate} && {check}" if report_gate else check
        title = f"Cover {path} to {floor}% (now {percent:.0f}%)"
        found.append(Finding("coverage", f"coverage {path}", title, accept))
    return found


def coverage_check(
    path: str, floor: int, report: str = "coverage.json", missing: int | None = None
) -> str:
    """A command that passes when ``path``'s line coverage in the report is at the floor
    (and, with ``missing``, no more of its lines than that are missing)."""
    bound = f" and f['missing_lines']<={missing}" if missing is not None else ""
    code = (
        "import json,sys;"
        f"f=json.load(open({report!r}))['files'][{path!r}]['summary'];"
        f"sys.exit(0 if f['percent_covered']>={floor}{bound} else 1)"
    )
    return f"python3 -c {shlex.quote(code)}"


_BOUND = re.compile(r"missing_lines[^\]]*\]<=(\d+)")


def coverage_bound(accept: str) -> int | None:
    """The missing lines a coverage goal's check (:func:`coverage_check`) allows."""
    found = _BOUND.search(accept)
    return int(found.group(1)) if found else None


def marker_findings(texts: Mapping[str, str]) -> list[Finding]:
    """Each ``TODO``/``FIXME`` marker, accepted when its line's text is gone from the file.
    The goal is titled by the marker's path and line only: its text is anyone's writing
    (a kept change's, too), and a title heads every brief and review, so the text reaches
    a maker or checker only quoted in a fence as data (``marker_text``)."""
    found = []
    for path, text in sorted(texts.items()):
        if not path.endswith(MARKER_FILES) or not path.isprintable():
            continue
        for number, line in enumerate(text.splitlines(), start=1):
            match = _MARKER.search(line)
            if match is None:
                continue
            stripped = line.strip()
            accept = f"! grep -qF -- {shlex.quote(stripped)} {shlex.quote(path)}"
            key = f"{MARKER_KEY}{path} {stripped}"
            title = f"Resolve the {match.group(1)} at {path}:{number}"
            found.append(Finding("marker", key, title, accept))
    return found


MARKER_KEY = "marker "


def marker_text(finding: str | None) -> str | None:
    """What a marker goal's finding (``- Finding:``) quotes, its path and the marker's
    line, or None for any other goal: shown to a maker or checker only in a fence, as
    data."""
    if not finding or not finding.startswith(MARKER_KEY):
        return None
    return finding[len(MARKER_KEY) :]


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
    findings: Iterable[Finding],
    goals: Sequence[Goal],
    rows: Mapping[str, BoardRow],
    unknown: Mapping[str, str] | None = None,
    cleared: Collection[str] | None = None,
) -> list[BoardRow]:
    """The board rows of triage's goals whose finding is gone (the test fixed or deleted,
    the marker removed), marked done with a one-line reason. A goal being worked (in
    progress) or already done is left as it is, and so is one whose kind of finding
    triage could not observe (``unknown``: its gate did not run, or named nothing). With
    ``cleared`` (:func:`tests_cleared`), a failing test's goal is retired only when that
    test was seen to pass or is gone from the tree: a test the run left out (deselected,
    never collected) is not observed, whatever else ran."""
    seen = {f.key for f in findings}
    blind = unknown or {}
    out: list[BoardRow] = []
    for goal in goals:
        row = rows.get(goal.id)
        if not goal.finding or goal.finding in seen or row is None:
            continue
        if row.state in (GoalState.DONE, GoalState.IN_PROGRESS) or kind_of(goal) in blind:
            continue
        if cleared is not None and kind_of(goal) == "test" and goal.finding not in cleared:
            continue
        why = f"retired by triage: the finding `{goal.finding}` is gone"
        out.append(BoardRow(row.goal, row.title, GoalState.DONE, row.attempts,
                            row.failed_passes, "retired", why))  # fmt: skip
    return out


def tests_cleared(
    goals: Sequence[Goal], tests: Iterable[tuple[str, str]], texts: Mapping[str, str]
) -> frozenset[str]:
    """The failing-test findings of ``goals`` a trusted run observed gone (``tests``: each
    test its JUnit report names, with its outcome): the test passed; its file collected (a
    file that could not be collected: a test of it ran); its file gone from the tree
    (``texts``: HEAD's tracked files); or its file collected and its name nowhere in it
    (deleted). A test that did not run at all (a conftest.py that deselects it) while its
    file still names it is none of these."""
    outcomes = dict(tests)
    out = set()
    for goal in goals:
        if kind_of(goal) != "test" or not goal.finding:
            continue
        node = goal.finding.partition(" ")[2]
        path, _, rest = node.partition("::")
        collected = any(p.startswith(f"{path}::") for p in outcomes)
        if outcomes.get(node) == "passed" or path not in texts:
            out.add(goal.finding)
        elif not rest:
            if collected:
                out.add(goal.finding)
        else:
            name = rest.rsplit("::", 1)[-1].split("[", 1)[0]
            if collected and not re.search(rf"\b{re.escape(name)}\b", texts[path]):
                out.add(goal.finding)
    return frozenset(out)


def kind_of(goal: Goal) -> str:
    """The kind of finding a triage goal carries (test, lint, type, coverage, marker)."""
    return (goal.finding or "").split(" ", 1)[0]


TRIAGE_SECTION = "Triage"


def with_unknown(board: Board, unknown: Mapping[str, str], *, when: str) -> Board:
    """The board saying which kinds of finding the last triage could not observe (a gate
    that did not run is unknown, never a pass); the section is dropped when all ran."""
    parts = sections(board.after)
    at = find(parts, TRIAGE_SECTION)
    body = ""
    if unknown:
        lines = [
            f"- {kind}: unknown ({why}); its goals are neither enqueued nor retired"
            for kind, why in sorted(unknown.items())
        ]
        body = f"## {TRIAGE_SECTION}\n\nLast triage ({when}):\n\n" + "\n".join(lines) + "\n"
    if at is None:
        if not body:
            return board
        gap = "\n" if board.after.strip() and not board.after.endswith("\n\n") else ""
        return replace(board, after=board.after + gap + body)
    texts = [p.text for p in parts]
    texts[at] = body + ("\n" if body and at + 1 < len(parts) else "")
    return replace(board, after="".join(texts))


# --- reading a gate's judged run ---


def gate_kind(name: str, command: str) -> str:
    """The kind of finding a gate's output is read for: test, type, lint, or "" (none)."""
    words = f"{name} {command}".lower()
    if "pytest" in words or name.startswith("test"):
        return "test"
    if any(k in words for k in ("mypy", "pyright", "type")):
        return "type"
    if any(k in words for k in ("ruff", "lint", "flake8")):
        return "lint"
    return ""


# a gate's command that runs coverage (``coverage run``, ``-m coverage``, pytest-cov's
# ``--cov``), and a pytest configuration that turns pytest-cov on for a plain ``pytest``
RUNS_COVERAGE = re.compile(r"(?<![\w.-])(?:coverage|pytest[-_]cov)(?![\w-])|--cov\b")
_PYTEST = re.compile(r"(?<![\w.-])pytest(?![\w-])")


def leaves_coverage(name: str, command: str, *, configured: bool) -> bool:
    """Whether coverage's data and report a gate's run writes may be read by a later gate:
    one that runs coverage (its command says so; a plain pytest run where the project's
    pytest configuration turns pytest-cov on, ``configured``), or one whose command relay
    does not read into (a make target, a script). A plain pytest run, a linter or a type
    checker writes none: what its run left there is what the code it ran wrote."""
    if RUNS_COVERAGE.search(command):
        return True
    if gate_kind(name, command) in ("lint", "type"):
        return False
    return configured if _PYTEST.search(command) else True


def coverage_moved(before: Mapping[str, str], after: Mapping[str, str]) -> list[str]:
    """Coverage's data files and report a run wrote (new, or changed since ``before``:
    each one's identity, what it holds among it), to be removed when the run was not one
    that writes them (:func:`leaves_coverage`)."""
    return sorted(p for p, now in after.items() if before.get(p) != now)


def is_coverage_data(name: str) -> bool:
    """Whether a file's name is coverage's data (``.coverage``, a parallel
    ``.coverage.host.pid.x``), never its configuration (``.coveragerc``)."""
    return stem(name) == ".coverage"


def left_for_later(
    marks: Iterable[str], untracked: Iterable[str], *, spared: str | None = None
) -> list[str]:
    """What the tree holds since HEAD's checkout that a later run could read: a tracked
    file or folder written, renamed, replaced or removed (``marks``, from the checkout's
    state to now; ``spared``: the coverage report, which a gate writes), and an entry git
    neither tracks nor ignores (``untracked``, new since the checkout). Empty when the runs
    left only what the project ignores: its outputs and caches."""
    changed = sorted(
        path
        for mark in marks
        if (path := mark.partition(" ")[2]) and mark.startswith("changed ") and path != spared
    )
    left = sorted(p for p in untracked if p != spared)
    return [f"changed {p}" for p in changed] + [f"left {p}" for p in left]


def to_sweep(ignored: Iterable[str], *, spared: str | None = None) -> list[str]:
    """What a run left in the tree that git ignores (``ignored``, new since HEAD's
    checkout), removed before the next gate runs: HEAD's ``.gitignore`` is a maker's
    writing, and an ignored ``.ruff.toml``, ``pytest.ini`` or ``.pytest_cache`` an
    earlier run left would change what a later gate reads. Kept: coverage's data
    (``.coverage`` and its parallel files), which ``coverage json`` reads after
    ``coverage run``, and ``spared`` (the coverage report)."""
    kept = []
    for entry in ignored:
        path = entry.rstrip("/")
        if path == spared or stem(path.rpartition("/")[2]) == ".coverage":
            continue
        kept.append(entry)
    return sorted(kept)


def moved_why(gate: str, moved: Sequence[str]) -> str:
    """Why every gate from ``gate``'s run on cannot be trusted: the tree it left."""
    more = ", ..." if len(moved) > 4 else ""
    return f"the run of {gate} changed the tree the gates share ({', '.join(moved[:4])}{more})"


def judged_findings(
    name: str,
    command: str,
    *,
    output: str,
    passed: bool,
    exit_code: int | None,
    timed_out: bool,
    timeout: float,
    junit: str | None,
    tampered: str = "",
    moved: str = "",
) -> tuple[str, list[Finding], str]:
    """One gate's judged run read for findings: its kind, what it names, and why that kind
    is unknown ("" when it is known). A run whose test run was tampered with (``tampered``,
    relay's pytest plugin's line) or that ran in a tree a run changed (``moved``) names
    nothing triage may trust, so its kind is unknown: a missing finding is never read as
    fixed. Failing tests come from the run's JUnit report where it wrote one."""
    kind = gate_kind(name, command)
    if not kind:
        return "", [], ""
    if tampered or moved:
        return kind, [], f"`{command}` ran, but {tampered or moved}"
    if passed:
        return kind, [], ""
    if kind == "test":
        tests = junit_tests(junit) if junit is not None else None
        got = failing_tests(output, gate=command, tests=tests)
    else:
        got = (type_findings if kind == "type" else lint_findings)(output, gate=command)
    checks = read_gate(name, output=output, exit_code=exit_code, timed_out=timed_out,
                       timeout=timeout)  # fmt: skip
    why = ""
    if not got or checks.partial:  # what it did not name may still fail
        why = f"`{command}` {checks.unknown_why() or 'named nothing'}"
    return kind, got, why
