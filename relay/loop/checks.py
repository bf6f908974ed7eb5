"""What a gate's output says failed, as a set of check ids, and whether a candidate's gate
is worse than the baseline's; and which of the baseline's tests a change removed or edited.

Ground rules: a red baseline is a goal, not a stop. A gate is judged by the checks it
names: a candidate keeps a change when no gate names a check the baseline did not (a new
failing test, a new lint or type finding). A gate that failed without naming any check,
or did not run at all, cannot be compared: it is "unknown", never read as passing. Lint
and type findings are counted per file and code (line numbers move when code is edited);
failing tests are their pytest node ids.
"""

from __future__ import annotations

import ast
import re
import xml.etree.ElementTree as ElementTree
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

NOT_RUN_EXITS = (126, 127)  # the shell could not run the command (not executable, not found)

# pytest's own word that it stopped before running every test (-x, --maxfail, or an
# error while collecting): the failures it names are not all of them
_STOPPED = re.compile(r"^!+ (?:stopping after \d+ failures?|Interrupted: .*) !+$")
_PYTEST = re.compile(r"^(?P<what>FAILED|ERROR) (?P<node>.+?)(?: - .*)?$")
# a failed subtest (unittest's subTest, pytest's subtests fixture): pytest 9 names it by
# its test's node id after its message and parameters, ``SUBFAILED[msg] (i=1) node``
_SUBTEST = re.compile(r"^SUBFAILED(?:\[.*?\])? ?(?:\([^)]*\))? (?P<node>.+?)(?: - .*)?$")
# A path may hold a colon (``tests/test_a:b.py``): it runs to the first ``:line:col: CODE``
# (concise) or to the last ``:line:col`` (the arrow's line ends there), never to a colon.
_RUFF_CONCISE = re.compile(r"^(?P<path>\S.*?):(?P<line>\d+):(?P<col>\d+): (?P<code>[A-Z]+[0-9]+)\b")
_RUFF_HEADER = re.compile(r"^(?P<code>[A-Z]+[0-9]+|[a-z][a-z-]*[a-z]):?(?: \[\*\])? \S")
_RUFF_ARROW = re.compile(r"^\s*--> (?P<path>\S.*):(?P<line>\d+):(?P<col>\d+)\s*$")
_RUFF_REFORMAT = re.compile(r"^Would reformat: (?P<path>\S.*)$")
_MYPY = re.compile(
    r"^(?P<path>\S.*?\.pyi?):(?P<line>\d+):(?:\d+:)? error: .*?(?:\[(?P<code>[\w-]+)\])?$"
)


@dataclass(frozen=True)
class Finding:
    """One finding a tool printed: its kind (test, lint, type), where, and its code."""

    kind: str
    path: str
    code: str = ""
    line: int = 0
    failed: str = ""  # a test's own word: FAILED or ERROR

    @property
    def id(self) -> str:
        """The check's id: a test's node id, a lint or type finding's file and code."""
        if self.kind == "test":
            return f"test {self.path}"
        return f"{self.kind} {self.path} {self.code}".rstrip()


def pytest_failures(output: str) -> list[Finding]:
    """The failing and erroring tests of pytest's short summary, by node id (a test
    once for each of its subtests that failed)."""
    found = []
    for line in output.splitlines():
        match = _PYTEST.match(line.strip())
        if match is not None:
            found.append(Finding("test", match["node"].strip(), failed=match["what"]))
        elif (sub := _SUBTEST.match(line.strip())) is not None:
            found.append(Finding("test", sub["node"].strip(), failed="FAILED"))
    return found


def ruff_findings(output: str) -> list[Finding]:
    """ruff's findings in any of its output formats: the concise ``path:line:col: CODE
    message``, the full one (``CODE message`` then `` --> path:line:col``), and ``ruff
    format --check``'s (``unformatted`` findings, or ``Would reformat: path``)."""
    found = []
    header: str | None = None
    for raw in output.splitlines():
        line = raw.rstrip()
        concise = _RUFF_CONCISE.match(line)
        if concise is not None:
            found.append(Finding("lint", concise["path"], concise["code"], int(concise["line"])))
            header = None
            continue
        arrow = _RUFF_ARROW.match(line)
        if arrow is not None:
            if header is not None:
                found.append(Finding("lint", arrow["path"], header, int(arrow["line"])))
            header = None
            continue
        reformat = _RUFF_REFORMAT.match(line)
        if reformat is not None:
            found.append(Finding("lint", reformat["path"].strip(), "unformatted"))
            continue
        if line and not line[0].isspace():
            head = _RUFF_HEADER.match(line)
            header = head["code"] if head is not None else None
    return found


def mypy_findings(output: str) -> list[Finding]:
    """mypy's ``path:line: error: message  [code]`` findings."""
    found = []
    for line in output.splitlines():
        match = _MYPY.match(line.strip())
        if match is not None:
            found.append(Finding("type", match["path"], match["code"] or "", int(match["line"])))
    return found


def findings(output: str) -> list[Finding]:
    """Every finding any of the tools relay reads printed in ``output``."""
    return [*pytest_failures(output), *ruff_findings(output), *mypy_findings(output)]


@dataclass(frozen=True)
class GateChecks:
    """What one run of one gate says: whether it ran, whether it passed, and the checks it
    names as failing (id, how many times)."""

    gate: str
    ran: bool
    passed: bool
    failing: tuple[tuple[str, int], ...] = ()
    why: str = ""  # why it did not run, or how it failed without naming a check
    partial: bool = False  # it stopped early: the checks it names are not all that fail
    # every test the gate's pytest ran, with its outcome (from its JUnit XML report); None
    # when the gate wrote no report (not pytest, or told to write its own elsewhere)
    tests: tuple[tuple[str, str], ...] | None = None
    tampered: str = ""  # the line that says its test run cannot be trusted: it does not pass
    # what the run did to the tree it judged (:func:`tree_marks`): a candidate's run may do
    # only what the baseline's run of the same gate did
    marks: frozenset[str] = frozenset()
    cut: int = 0  # bytes left out of its output, which its report does not make up for

    @property
    def known(self) -> bool:
        """Whether the gate's state can be compared: it passed, or it named everything that
        failed."""
        return self.ran and (self.passed or (bool(self.failing) and not self.partial))

    def ids(self) -> set[str]:
        return {check for check, _ in self.failing}

    def unknown_why(self) -> str:
        """Why the gate's state is unknown ("" when it is known)."""
        if not self.ran:
            return f"did not run: {self.why}"
        if self.partial and not self.passed and self.cut:
            return (
                f"{self.cut} bytes of its output were left out ({self.why}), so it does not"
                " name every failing check"
            )
        if self.partial and not self.passed:
            return (
                f"stopped early ({self.why}: -x, --maxfail or an error while collecting), so"
                " it does not name every failing check"
            )
        return "" if self.known else f"failed naming no check: {self.why}"

    def said(self) -> str:
        """The gate's state in a few words, for the board and the report."""
        if not self.known:
            return f"{self.gate}: unknown ({self.unknown_why()})"
        if self.passed:
            return f"{self.gate}: pass"
        return f"{self.gate}: {sum(n for _, n in self.failing)} failing check(s)"


def read_gate(
    gate: str,
    *,
    output: str,
    exit_code: int | None,
    timed_out: bool,
    timeout: float = 0.0,
    junit: str | None = None,
    tampered: str = "",
    cut: int = 0,
) -> GateChecks:
    """One gate's run as checks: a timeout or a command the shell could not run is a gate
    that did not run; a failure is itemised from its output. ``junit`` is the JUnit XML
    report its pytest wrote, if any: which tests ran at all, and every test it says failed
    is a failing check whether or not the output names it (the code under test writes to
    the same output, and may print a summary of its own). ``tampered`` is the line that
    says its test run cannot be trusted (from relay's pytest plugin): it does not pass.
    ``cut``: bytes left out of the middle of ``output`` (relay keeps its head and tail): a
    failure read from such an output names not every check unless its report does."""
    if timed_out:
        return GateChecks(gate, ran=False, passed=False, why=f"ran past {timeout:.0f}s")
    if exit_code is None or exit_code in NOT_RUN_EXITS:
        last = next((ln.strip() for ln in reversed(output.splitlines()) if ln.strip()), "")
        how = f"exit {exit_code}" + (f": {last[:160]}" if last else "")
        return GateChecks(gate, ran=False, passed=False, why=how)
    tests = junit_tests(junit) if junit is not None else None
    if tampered:
        return GateChecks(gate, True, False, why=tampered, tests=tests, tampered=tampered)
    if exit_code == 0:
        return GateChecks(gate, ran=True, passed=True, tests=tests)
    said = findings(output)
    if tests is not None:
        # The report names every test that ran, by one id: the summary's tests are left out
        # (its ids are relative to where pytest ran and cut at " - ": the same failure would
        # count twice), but for a file that failed to collect, which is no test case there.
        said = [f for f in said if f.kind != "test" or "::" not in f.path]
        said += [Finding("test", n, failed=o.upper()) for n, o in tests if o in ("failed", "error")]
    named = Counter(f.id for f in said)
    counted = tuple(sorted(named.items()))
    stopped = any(_STOPPED.match(line.strip()) for line in output.splitlines())
    lost = cut if tests is None else 0  # what was left out may name more
    return GateChecks(
        gate,
        ran=True,
        passed=False,
        failing=counted,
        why=f"exit {exit_code}",
        partial=stopped or lost > 0,
        cut=lost,
        tests=tests,
    )


# a test's outcomes in a JUnit XML report, worst last; "ran" ones were called at all
_OUTCOMES = ("passed", "skipped", "failed", "error")
RAN = frozenset({"passed", "failed", "error"})
NOT_RUN_MARK = "did not run"  # in every line that says a test or a gate did not run


def junit_tests(xml: str) -> tuple[tuple[str, str], ...] | None:
    """Every test case a pytest JUnit XML report names, by node id (``file::Class::name``
    where the report says the file, else ``classname::name``), with its outcome: passed,
    skipped (xfail included), failed or error; a file that failed to collect is no test
    case. None when the text is no such report."""
    try:
        root = ElementTree.fromstring(xml)
    except (ElementTree.ParseError, ValueError):
        return None
    if root.tag not in ("testsuites", "testsuite"):
        return None
    found: dict[str, str] = {}
    for case in root.iter("testcase"):
        if not case.get("classname"):  # a file that could not be collected: no test
            continue  # (its ERROR line in the summary is a failing check of its own)
        node = _node_id(case.get("file"), case.get("classname", ""), case.get("name", ""))
        outcome = "passed"
        for child in case:
            tag = {"failure": "failed", "error": "error", "skipped": "skipped"}.get(child.tag)
            if tag is not None and _OUTCOMES.index(tag) > _OUTCOMES.index(outcome):
                outcome = tag
        if node in found and _OUTCOMES.index(found[node]) > _OUTCOMES.index(outcome):
            outcome = found[node]
        found[node] = outcome
    return tuple(sorted(found.items()))


def _node_id(file: str | None, classname: str, name: str) -> str:
    """pytest's node id of a JUnit test case: the report writes the file (xunit1) and the
    dotted module and classes (``tests.test_calc.TestA``) it was made from; a test of
    another file (a doctest of ``docs/usage.md``) is named by the file, dots for slashes."""
    if file:
        module = (file[:-3] if file.endswith(".py") else file).replace("/", ".")
        if classname == module or classname.startswith(module + "."):
            classes = [c for c in classname[len(module) :].split(".") if c]
            return "::".join([file, *classes, name])
    return f"{classname}::{name}" if classname else name


def not_run(base: GateChecks | None, now: GateChecks, *, excused: Iterable[str] = ()) -> list[str]:
    """The tests ``base`` (the gate at the baseline) ran that ``now`` did not run at all
    (not collected, deselected, or skipped), one line each: a baseline test that did not
    run is failing, never passing. Empty when either run wrote no report, or ``now``
    stopped early (that is worse of its own). ``excused`` are tests a goal that declared
    --may-edit-tests removed."""
    if base is None or base.tests is None or now.tests is None or now.partial:
        return []
    there = dict(now.tests)
    spared = set(excused)
    return [
        f"test {node} {NOT_RUN_MARK} (it {'passed' if was == 'passed' else 'ran'} at the baseline)"
        for node, was in base.tests
        if was in RAN and there.get(node) not in RAN and node not in spared
    ]


def excused(check: str, tests: Iterable[str]) -> bool:
    """Whether ``check`` is one of ``tests`` (node ids or files), a parametrisation or a
    test inside one of them."""
    return any(
        check == f"test {t}" or check.startswith((f"test {t}[", f"test {t}::")) for t in tests
    )


def worse(
    base: GateChecks | None,
    now: GateChecks,
    *,
    new_tests: Iterable[str] = (),
    excused_gone: Iterable[str] = (),
) -> list[str]:
    """How ``now`` is worse than ``base`` (the same gate at the baseline), one line each;
    empty when it is not. A gate that did not run, or failed naming no check, is worse
    unless it passes; a check failing more often than at the baseline is worse, but for
    the ``new_tests`` (the candidate's own, in a run that judges only the baseline's); a
    test the baseline ran that did not run is worse, but for ``excused_gone``."""
    if now.tampered:
        return [f"{now.gate}: {now.tampered}"]
    missing = not_run(base, now, excused=excused_gone)
    if now.passed:
        return missing
    if not now.ran:
        return [f"{now.gate} did not run ({now.why})"]
    if now.partial:
        return [f"{now.gate} {now.unknown_why()}; relay cannot tell whether it got worse"]
    if not now.failing:
        return [f"{now.gate} failed ({now.why}) and its output names no failing check", *missing]
    if base is None or not base.known:
        return [f"{now.gate} failed, and its baseline cannot be compared", *missing]
    was = dict(base.failing)
    lines = []
    spared = tuple(new_tests)
    for check, count in now.failing:
        if spared and excused(check, spared):
            continue
        before = was.get(check, 0)
        if count > before:
            lines.append(check if before == 0 else f"{check} ({before} -> {count})")
    return lines + missing


def fixed(base: GateChecks, now: GateChecks) -> list[str]:
    """The baseline's failing checks that ``now`` no longer names (when it can be read)."""
    if not now.known:
        return []
    still = now.ids()
    return [check for check, _ in base.failing if check not in still]


def checks_delta(before: Iterable[GateChecks], after: Iterable[GateChecks]) -> str:
    """How many checks the contract's gates name as failing, before and after ("" when
    the baseline had none: a green baseline says nothing more than its gates)."""
    was = sum(n for g in before if g.gate != "accept" for _, n in g.failing)
    if not was:
        return ""
    now = sum(n for g in after if g.gate != "accept" for _, n in g.failing)
    return f"failing checks {was} -> {now}"


def unknown(gates: Iterable[GateChecks]) -> list[GateChecks]:
    """The gates whose state cannot be compared (did not run, or named no check)."""
    return [g for g in gates if not g.known]


# --- tests may grow, never be weakened ---


SUPPORT = "<support>"  # tests_in's key for the module's code that is no test function


def tests_in(text: str) -> dict[str, str] | None:
    """A Python test module's test functions (``test_*`` at module level and in
    ``Test*`` classes) by qualified name, each with a dump of its code, and under
    ``SUPPORT`` the rest of the module (imports, helpers, fixtures, a class's other
    methods); None when the text is not Python relay can parse."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return None
    found: dict[str, str] = {}
    rest: list[ast.stmt] = []  # what is not a test: imports, helpers, fixtures
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name.startswith(
            "test"
        ):
            found[node.name] = ast.dump(node, include_attributes=False)
        elif isinstance(node, ast.ClassDef) and node.name.startswith("Test"):
            for item in node.body:
                if isinstance(
                    item, ast.FunctionDef | ast.AsyncFunctionDef
                ) and item.name.startswith("test"):
                    found[f"{node.name}::{item.name}"] = ast.dump(item, include_attributes=False)
                else:
                    rest.append(item)
        else:
            rest.append(node)
    found[SUPPORT] = "\n".join(ast.dump(n, include_attributes=False) for n in rest)
    return found


@dataclass(frozen=True)
class SuiteChange:
    """What a change did to one test file the baseline had."""

    path: str
    removed: tuple[str, ...] = ()  # node ids of baseline tests that are gone
    edited: tuple[str, ...] = ()  # node ids of baseline tests whose code changed
    added: tuple[str, ...] = ()
    readable: bool = True  # False: not Python relay parses; judged by swapping the file
    helper: bool = False  # helpers changed: a file with no test of its own, or the code
    # around a test file's tests (imports, fixtures, helpers), which its tests lean on


def suite_change(path: str, before: str, after: str | None) -> SuiteChange:
    """Which of the baseline's tests in ``path`` a change removed or edited, and which it
    added."""
    was = tests_in(before) if path.endswith(".py") else None
    now = tests_in(after or "") if path.endswith(".py") else None
    if was is None or now is None:
        return SuiteChange(path, readable=False)

    def node(name: str) -> str:
        return f"{path}::{name}"

    support = was.pop(SUPPORT, "") != now.pop(SUPPORT, "")
    return SuiteChange(
        path,
        removed=tuple(node(n) for n in was if n not in now),
        edited=tuple(node(n) for n in was if n in now and now[n] != was[n]),
        added=tuple(node(n) for n in now if n not in was),
        helper=(not was and before != after) or (bool(was) and support),
    )


def swap_needed(change: SuiteChange) -> bool:
    """Whether the baseline's copy of the file must be run against the candidate: a test
    the baseline had was edited (it must still pass as it was), a helper the baseline's
    tests use changed, or relay cannot tell."""
    return bool(change.edited) or change.helper or not change.readable


def weakened(changes: Iterable[SuiteChange]) -> list[str]:
    """One line for each baseline test a change removed (tests may grow, never shrink)."""
    return [f"{node} is a test the baseline had; it is gone" for c in changes for node in c.removed]


def rewritten(changes: Iterable[SuiteChange]) -> list[str]:
    """One line for each baseline test whose code a change edited: a test the baseline
    had runs as the baseline wrote it (a red one included: editing it to match a bug is
    weakening it), unless the goal declared --may-edit-tests."""
    return [
        f"{node} is a test the baseline had; its code was edited"
        for c in changes
        for node in c.edited
    ]


def baseline_failing(gates: Mapping[str, GateChecks]) -> list[str]:
    """The baseline's failing checks, gate by gate, for the brief and the board."""
    return [f"{name}: {check}" for name, g in gates.items() for check, _ in g.failing]


# Python's compiled files: a cache, never the candidate's, removed from the judged tree
# after each run (see :func:`relay.ratchet.measure.swept`), so what one run compiled, or
# forged, is never what the next loads
PYCACHE = "__pycache__"


@dataclass(frozen=True)
class TreeState:
    """The tree a gate judges, before or after its run: each tracked file's identity
    (inode, change time, size; None when missing or not reached through real folders) and
    each folder holding one (inode, change time, entries; None when missing, a link, or
    under one). A change time moves whenever a file or folder is written, renamed or has its
    entries changed, whatever it then holds, and nothing sets it back."""

    files: Mapping[str, tuple[int, int, int] | None]
    folders: Mapping[str, tuple[int, int, frozenset[str]] | None]


def stem(name: str) -> str:
    """A name up to its first dot after the first character: ``.coverage.host.pid12.x`` and
    ``.coverage`` are one kind of output, ``coverage.json`` and ``coverage.xml`` another."""
    head, dot, _ = name[1:].partition(".")
    return name[:1] + head if dot else name


def tree_marks(before: TreeState, after: TreeState) -> frozenset[str]:
    """What a run did to the tree: ``changed F`` (a tracked file or folder written,
    renamed, replaced or removed, even when put back as it was, or a folder made a link),
    ``left P`` (an entry no file is tracked under, in a folder that holds tracked files,
    after the run; never ``__pycache__``), ``touched D`` (a folder whose entries changed)
    and ``stirred D`` (one whose entries changed and changed back)."""
    marks = {f"changed {f}" for f, was in before.files.items() if after.files.get(f) != was}
    for folder, now in after.folders.items():
        was = before.folders.get(folder)
        if now is None:
            if was is not None:
                marks.add(f"changed {folder}/")
            continue
        for name in now[2]:
            path = f"{folder}/{name}" if folder else name
            if name != PYCACHE and path not in after.files and path not in after.folders:
                marks.add(f"left {path}")
        if was is None:
            continue
        if was[0] != now[0]:
            marks.add(f"changed {folder}/")
        elif was[1] != now[1]:
            marks.add(f"touched {folder}")
            if was[2] == now[2]:
                marks.add(f"stirred {folder}")
    return frozenset(marks)


def unexplained(
    marks: frozenset[str], before: TreeState, baseline: Iterable[frozenset[str]]
) -> list[str]:
    """What a candidate's run did to its tree that the baseline's run of the same gate
    (``baseline``: its marks; every gate's, for a gate the baseline did not run) did not:
    a tracked file or folder written or replaced, an entry left of a kind (:func:`stem`) the
    baseline's run leaves nowhere, or a folder's entries come and gone where the baseline's
    stayed still. Code under test that rewrites a test, a tool's configuration or its own
    measure before a later reader reads it shows here, in the order found."""
    base = frozenset().union(*baseline)
    left = {stem(m.rpartition("/")[2].removeprefix("left ")) for m in base if m.startswith("left ")}
    out = []
    for mark in sorted(marks - base):
        kind, _, path = mark.partition(" ")
        if kind == "touched":
            continue
        if kind == "left":
            folder, _, name = path.rpartition("/")
            there = before.folders.get(folder)
            if stem(name) in left or (there is not None and name in there[2]):
                continue  # the baseline's run leaves one of its kind, or it was there already
        if kind == "stirred" and f"touched {path}" in base:
            continue
        out.append(f"{kind} {path or '.'}")
    return out


MOVED = "the code judged changed the tree it was judged in"


def moved_line(moved: list[str]) -> str:
    """The line that says a candidate's run changed its tree (:func:`unexplained`)."""
    more = ", ..." if len(moved) > 4 else ""
    return f"{MOVED} ({', '.join(moved[:4])}{more}) where the baseline's run did not"
