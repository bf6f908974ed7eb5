"""Code coverage.py leaves out is never counted as covered. coverage.py drops from its
figures every line its exclusion patterns match (by default a line of ``...`` and ``if
TYPE_CHECKING:`` beside the pragma), and a match on any line of a statement written over
several drops the whole statement with the block it opens; so untested code under a
header that holds such a line in a parenthesis or a string, or under ``if
TYPE_CHECKING:`` where the name is the module's own (true at run time), leaves coverage
at 100%. On a real repository with coverage as a gate, such a change is held for a
person (it was kept with coverage not lower) and such a HEAD makes triage say coverage
unknown (it retired the coverage goal); honest stubs and typing-only imports are free."""

from __future__ import annotations

from pathlib import Path

import pytest
from loop_project import CALC, TEST_MUL, make_project
from test_loop_coverage_forged import UNTESTED, floor_project
from test_loop_triage_judged import open_goals, plant

from relay.loop.excluded import Hidden, exclusion_patterns, hidden_added, hidden_from_coverage
from relay.loop.goals import GoalState

_MUL = CALC + "\n\ndef mul(a, b):\n    return a * b\n\n\n"
_DIV = "    if b == 0:\n        raise ZeroDivisionError\n    return a / b\n"
# mul tested, div untested and left out of coverage's figures, three ways
HIDDEN = {
    "ellipsis": _MUL + "def div(a, b, _=(\n    ...\n)):\n" + _DIV,
    "string": _MUL + 'def div(a, b, _="""\nif TYPE_CHECKING:\n"""):\n' + _DIV,
    "type-checking": _MUL
    + "TYPE_CHECKING = True\nif TYPE_CHECKING:\n\n    def div(a, b):\n"
    + "".join(f"    {line}\n" for line in _DIV.splitlines()),
    # a `case` clause's line left out leaves its block out
    "case": CALC
    + '\n\ndef mul(a, b, op="*"):\n    match op:\n        case "*":\n            return a * b\n'
    + '        case _ if op != """\n...\n""":\n'
    + "".join(f"        {line}\n" for line in _DIV.splitlines()),
    # lone CR line ends: Python and coverage.py read lines, a reading of "\n" one
    "cr": (
        _MUL
        + "TYPE_CHECKING = True\nif TYPE_CHECKING:\n\n    def div(a, b):\n"
        + "".join(f"    {line}\n" for line in _DIV.splitlines())
    ).replace("\n", "\r"),
}
# the line each hold names
LINE = {"ellipsis": 9, "string": 9, "type-checking": 10, "case": 9, "cr": 10}


@pytest.mark.parametrize("how", sorted(HIDDEN))
def test_a_change_whose_untested_code_coverage_leaves_out_is_held(tmp_path: Path, how: str) -> None:
    project = make_project(tmp_path, retries=0, coverage=True)
    maker = project.script(
        "maker", f"put('src/calc.py', {HIDDEN[how]!r})\nput('tests/test_mul.py', {TEST_MUL!r})\n"
    )
    ran = project.loop("run", "--maker", maker)
    assert ran.data["kept"] == [], ran
    assert project.read("src/calc.py") == CALC and project.clean()
    row = next(r for r in project.read("docs/loop/BOARD.md").splitlines() if "| G1 " in r)
    assert "| blocked |" in row and "held for a person" in row, row
    assert f"src/calc.py:{LINE[how]}: coverage leaves out" in row, row
    assert "G1" not in project.read("docs/loop/state/failures.md")


@pytest.mark.parametrize("how", sorted(HIDDEN))
def test_triage_does_not_retire_a_coverage_goal_on_code_coverage_leaves_out(
    tmp_path: Path, how: str
) -> None:
    project = floor_project(tmp_path)
    files = {"src/calc.py": HIDDEN[how], "tests/test_mul.py": TEST_MUL}
    plant(project, files, "untested code left out of coverage")
    again = project.loop("triage")
    assert again.status == 0, again
    assert again.data["retired"] == [], again.data
    why = again.data["unknown"]["coverage"]
    assert f"src/calc.py:{LINE[how]}: coverage leaves out" in why, why
    assert open_goals(project) == {"G1": GoalState.OPEN}


def test_a_change_with_a_typing_only_import_and_a_stub_is_kept(tmp_path: Path) -> None:
    """What coverage leaves out of honest code runs nothing: the change is kept."""
    calc = (
        "from __future__ import annotations\n\nfrom typing import TYPE_CHECKING, Protocol\n\n"
        "if TYPE_CHECKING:\n    from collections.abc import Sequence\n\n\n"
        "class Num(Protocol):\n    def __mul__(self, other: Num) -> Num: ...\n\n\n"
        + CALC
        + "\n\ndef mul(a, b):\n    return a * b\n\n\ndef total(xs: Sequence[int]) -> int:\n"
        "    return sum(xs)\n"
    )
    test = (
        TEST_MUL
        + "\n\ndef test_total():\n    from calc import total\n\n    assert total([1, 2]) == 3\n"
    )
    project = make_project(tmp_path, retries=0, coverage=True)
    maker = project.script(
        "maker", f"put('src/calc.py', {calc!r})\nput('tests/test_mul.py', {test!r})\n"
    )
    ran = project.loop("run", "--maker", maker)
    assert [k["goal"] for k in ran.data["kept"]] == ["G1"], ran
    assert project.read("src/calc.py") == calc


PATTERNS = exclusion_patterns({})
HONEST = '''"""Doc.

if TYPE_CHECKING:
...
"""
import typing
from typing import TYPE_CHECKING, Protocol, overload

if TYPE_CHECKING:
    from x import Y
if typing.TYPE_CHECKING:
    import z
USAGE = """
...
if TYPE_CHECKING:
"""


class P(Protocol):
    def f(self) -> int: ...
    def g(
        self,
    ) -> int: ...
    def h(self):
        """Doc."""
        ...


@overload
def k(a: int) -> int: ...
def k(a):
    if a:  # pragma: no cover
        return 1
    return 2
'''


def test_an_except_clause_coverage_leaves_out_is_a_finding() -> None:
    text = (
        "def f(c):\n    try:\n        return 1 / c\n"
        '    except (ValueError if """\n...\n""" else ZeroDivisionError):\n'
        "        return c * 2\n"
    )
    assert hidden_from_coverage(text, PATTERNS) == [
        Hidden(4, "coverage leaves out an `except` block, which runs")
    ]


def test_a_function_with_a_body_under_typings_flag_is_a_finding() -> None:
    """Another module may make typing's flag true (``typing.TYPE_CHECKING = True``): a
    function that would then run is no declaration for a type checker."""
    text = "from typing import TYPE_CHECKING\n\nif TYPE_CHECKING:\n    def div(a, b):\n"
    text += "        return a / b\n"
    assert hidden_from_coverage(text, PATTERNS) == [
        Hidden(3, "coverage leaves out an `if` block, which runs")
    ]


def test_what_honest_code_has_coverage_leave_out_is_no_finding() -> None:
    assert hidden_from_coverage(HONEST, PATTERNS) == []
    assert hidden_from_coverage("def f(:\n    ...\n", PATTERNS) == []  # no module


@pytest.mark.parametrize("how", sorted(HIDDEN))
def test_each_way_of_hiding_code_that_runs_is_a_finding(how: str) -> None:
    found = hidden_from_coverage(HIDDEN[how], PATTERNS)
    assert [h.line for h in found] == [LINE[how]], found
    assert hidden_added(HIDDEN[how], HIDDEN[how], PATTERNS) == []  # the baseline's, credited
    assert hidden_added(_MUL, HIDDEN[how], PATTERNS) == found


def test_typings_flag_bound_elsewhere_is_a_finding() -> None:
    body = "if TYPE_CHECKING:\n    x = 1\n"
    for binding in (
        "from flags import TYPE_CHECKING\n",
        "from typing import TYPE_CHECKING\nTYPE_CHECKING = not TYPE_CHECKING\n",
        "from typing import TYPE_CHECKING\nimport typing\ntyping.TYPE_CHECKING = True\n",
        "from typing import Any as TYPE_CHECKING\n",
    ):
        assert hidden_from_coverage(binding + body, PATTERNS), binding
    assert hidden_from_coverage(
        "import os as typing\nif typing.TYPE_CHECKING:\n    x = 1\n", PATTERNS
    )
    assert not hidden_from_coverage(
        "import typing as t\nif t.TYPE_CHECKING:\n    x = 1\n", PATTERNS
    )


def test_the_projects_own_patterns_are_read_and_hold_only_where_they_hide_more() -> None:
    toml = '[tool.coverage.report]\nexclude_also = ["def __repr__", "raise AssertionError"]\n'
    ini = "[report]\nexclude_lines =\n    if DEBUG:\n"
    patterns = exclusion_patterns({"pyproject.toml": toml, ".coveragerc": ini})
    assert {"def __repr__", "raise AssertionError", "if DEBUG:"} <= set(patterns)
    own = "class A:\n    def __repr__(self):\n        return 'A'\n\n\nif DEBUG:\n    x = 1\n"
    assert hidden_from_coverage(own, patterns) == []  # on the statement's own line
    sneaked = 'def div(a, b, _="""\ndef __repr__\n"""):\n    return a / b\n'
    assert [h.line for h in hidden_from_coverage(sneaked, patterns)] == [1]
    assert hidden_from_coverage(sneaked, PATTERNS) == []  # not excluded without the pattern


# src/calc.py below the floor, raised above it by statements that run at import: no line of
# mul's or div's more tested
PADDED = UNTESTED + "\n\n" + "".join(f"_P{i} = {i}\n" for i in range(40))
TEST_DIV = (
    "import pytest\n\nfrom calc import div\n\n\ndef test_div():\n    assert div(6, 3) == 2\n"
    "    with pytest.raises(ZeroDivisionError):\n        div(1, 0)\n"
)


def test_a_coverage_goal_is_not_met_by_code_that_runs_at_import(tmp_path: Path) -> None:
    """The goal's check bounds the file's missing lines to what the floor allows of the
    statements triage counted: padding raises the percentage and is not kept; tests are."""
    project = floor_project(tmp_path)
    padder = project.script("padder", f"put('src/calc.py', {PADDED!r})\n")
    ran = project.loop("run", "--maker", padder)
    assert ran.data["kept"] == [], ran
    assert project.read("src/calc.py") == UNTESTED and project.clean()
    tester = project.script(
        "tester",
        f"put('tests/test_mul.py', {TEST_MUL!r})\nput('tests/test_div.py', {TEST_DIV!r})\n",
    )
    ran = project.loop("run", "--maker", tester)
    assert [k["goal"] for k in ran.data["kept"]] == ["G1"], ran


def test_triage_does_not_retire_a_coverage_goal_on_code_that_runs_at_import(
    tmp_path: Path,
) -> None:
    project = floor_project(tmp_path)
    plant(project, {"src/calc.py": PADDED}, "constants that run at import")
    again = project.loop("triage")
    assert again.status == 0, again
    assert again.data["retired"] == [] and again.data["unknown"] == {}, again.data
    assert "coverage src/calc.py" in [f["key"] for f in again.data["findings"]], again.data
    assert open_goals(project) == {"G1": GoalState.OPEN}
    plant(project, {"tests/test_mul.py": TEST_MUL, "tests/test_div.py": TEST_DIV}, "tests")
    done = project.loop("triage")
    assert [r["goal"] for r in done.data["retired"]] == ["G1"], done.data


def test_a_coverage_goals_check_bounds_the_missing_lines(tmp_path: Path) -> None:
    import json
    import subprocess

    from relay.loop.triage import coverage_bound, coverage_findings

    lines = {"src/a.py": (40, 20), "src/b.py": (10, 1)}
    found = coverage_findings(
        {"src/a.py": 50.0, "src/b.py": 90.0}, floor=80, report_gate="", lines=lines
    )
    assert [f.key for f in found] == ["coverage src/a.py"]
    assert coverage_bound(found[0].accept) == 8  # 20% of 40 statements
    report = tmp_path / "coverage.json"
    for percent, missing, status in ((50.0, 20, 1), (85.0, 20, 1), (85.0, 8, 0)):
        summary = {"percent_covered": percent, "missing_lines": missing}
        report.write_text(json.dumps({"files": {"src/a.py": {"summary": summary}}}))
        done = subprocess.run(found[0].accept, shell=True, cwd=tmp_path, check=False)
        assert done.returncode == status, (percent, missing)
    # a file at the floor whose goal's bound is not met is still a finding
    again = coverage_findings(
        {"src/a.py": 85.0}, floor=80, report_gate="", lines={"src/a.py": (80, 12)},
        bounds={"src/a.py": 8},
    )  # fmt: skip
    assert [f.key for f in again] == ["coverage src/a.py"]
    assert coverage_bound(again[0].accept) == 8
    # a report that gives no counts for a file: the percentage alone, as before
    bare = coverage_findings({"src/c.py": 50.0}, floor=80, report_gate="", lines={})
    assert [f.key for f in bare] == ["coverage src/c.py"] and coverage_bound(bare[0].accept) is None


DIV = "def div(a, b):\n    if b == 0:\n        raise ZeroDivisionError\n    return a / b\n"
TEST_EXT = TEST_DIV.replace("from calc import div", "from ext.div import div")


def test_a_module_coverage_cannot_find_is_not_kept(tmp_path: Path) -> None:
    """A new module in a new folder of src/ with no __init__.py, which no test imports:
    coverage never finds it, so its untested lines left coverage at 100% and the change
    was kept. Now it fails as a coverage drop would; as a tested package it is kept."""
    from loop_project import CALC_MUL

    project = make_project(tmp_path, retries=0, coverage=True)
    base = f"put('src/calc.py', {CALC_MUL!r})\nput('tests/test_mul.py', {TEST_MUL!r})\n"
    maker = project.script("maker", base + f"put('src/ext/div.py', {DIV!r})\n")
    ran = project.loop("run", "--maker", maker)
    assert ran.data["kept"] == [], ran
    failures = project.read("docs/loop/state/failures.md")
    assert "coverage did not measure src/ext/div.py" in failures, failures
    tested = project.script(
        "tested",
        base + f"put('src/ext/div.py', {DIV!r})\nput('src/ext/__init__.py', '')\n"
        f"put('tests/test_ext.py', {TEST_EXT!r})\n",
    )
    ran = project.loop("run", "--maker", tested)
    assert [k["goal"] for k in ran.data["kept"]] == ["G1"], ran


def test_which_added_modules_coverage_did_not_measure() -> None:
    from relay.ratchet.measure import unmeasured_failure

    measured = frozenset({"src/calc.py", "src/pkg/a.py"})
    failed = unmeasured_failure(["src/ext/div.py"], measured, judged=True)
    assert failed is not None and failed.what == "coverage did not measure src/ext/div.py"
    assert unmeasured_failure(["src/pkg/b.py", "src/x.py"], measured, judged=True) is not None
    # outside the folders coverage measures, not Python, measured, or no report judged
    assert (
        unmeasured_failure(["tools/x.py", "setup.py", "src/pkg/data.txt"], measured, judged=True)
        is None
    )
    assert unmeasured_failure(["src/calc.py"], measured, judged=True) is None
    assert unmeasured_failure(["src/ext/div.py"], measured, judged=False) is None
    assert unmeasured_failure(["src/ext/div.py"], None, judged=True) is None


def test_typings_constant_written_false_is_no_finding() -> None:
    idiom = "TYPE_CHECKING = False\nif TYPE_CHECKING:\n    from typing import Any\n"
    assert hidden_from_coverage(idiom, PATTERNS) == []
    assert hidden_from_coverage(idiom + "TYPE_CHECKING = True\n", PATTERNS)
    assert hidden_from_coverage(idiom.replace("False", "not False"), PATTERNS)
    # the pragma in a comment on any line of the header is a suppression, judged as one
    pragma = "def f(\n    a,\n):  # pragma: no cover\n    return a\n"
    assert hidden_from_coverage(pragma, PATTERNS) == []
