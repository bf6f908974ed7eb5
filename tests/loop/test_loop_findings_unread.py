"""A gate on a red baseline is judged by the checks its output names. A finding whose line
relay's reader cannot parse, or that falls in the middle of the output relay does not keep
(the first and last 128 KiB are kept), is no check at all: with the baseline's own failing
checks still named, the candidate's gate reads as no worse, and a change with new findings,
or a newly failing test, is kept.

Real git repositories, real pytest and ruff as the gates, scripted makers."""

from __future__ import annotations

from pathlib import Path

import pytest
from loop_project import CALC_MUL, LINT_GATE, TEST_GATE, TEST_MUL, make_project

from relay.loop.checks import read_gate, ruff_findings


@pytest.fixture(autouse=True)
def _quick_pytest(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PYTHONDONTWRITEBYTECODE", "1")
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")


# ruff's default (full) output for a finding in a file whose path holds a colon
FULL = "F401 [*] `sys` imported but unused\n --> tests/test_a:b.py:1:8\n  |\n"


def test_a_lint_finding_in_a_path_with_a_colon_is_read() -> None:
    assert [f.path for f in ruff_findings(FULL)] == ["tests/test_a:b.py"]


# a new test module with a colon in its name, holding two new lint findings
HIDDEN = "import os\nimport sys\n\n\ndef test_fine():\n    assert True\n"


def test_a_change_with_new_lint_findings_in_a_colon_path_is_not_kept(tmp_path: Path) -> None:
    project = make_project(tmp_path, gates=(TEST_GATE, LINT_GATE))
    project.write("src/old.py", "import json\n")  # the red baseline: one lint finding
    project.git("add", "-A")
    project.git("commit", "-qm", "an old module with an unused import")
    maker = project.script(
        "maker",
        f"put('src/calc.py', {CALC_MUL!r})\nput('tests/test_mul.py', {TEST_MUL!r})\n"
        f"put('tests/test_a:b.py', {HIDDEN!r})\n",
    )
    ran = project.loop("run", "--maker", maker)
    assert ran.status == 0, ran
    kept = [k["goal"] for k in ran.data["kept"]]
    if kept:  # what was kept has findings the baseline did not
        assert "tests/test_a:b.py" not in project.git("ls-files"), ran.data["kept"]


# the baseline: add works, sub does not (its test fails: a red baseline, a goal's to fix)
RED_CALC = "def add(a, b):\n    return a + b\n\n\ndef sub(a, b):\n    return a + b\n"
RED_TESTS = (
    "from calc import add, sub\n\n\ndef test_add():\n    assert add(1, 2) == 3\n\n\n"
    "def test_sub():\n    assert sub(3, 1) == 2\n"
)
# the candidate: mul for the goal, add broken (test_add now fails), with an exception
# message long enough to push pytest's summary past the first half of what relay keeps of a
# gate's output, and, as the interpreter ends, more than the last half again, ending with
# the baseline's own failing test's line: the summary that names test_add is dropped
SABOTAGE = """\
class _Note:
    def __del__(self, o=open, lines=("." * 70,) * 2000):
        with o(1, "w", closefd=False) as out:
            out.write("\\n".join(lines) + "\\nFAILED tests/test_calc.py::test_sub\\n")


_note = _Note()


def add(a, b):
    raise ValueError("\\n".join(["y" * 70] * 2500))


def sub(a, b):
    return a + b


def mul(a, b):
    return a * b
"""


def test_a_new_failing_test_whose_summary_line_is_cut_from_the_output_is_not_kept(
    tmp_path: Path,
) -> None:
    project = make_project(tmp_path, gates=(TEST_GATE,))
    project.write("src/calc.py", RED_CALC)
    project.write("tests/test_calc.py", RED_TESTS)
    project.git("add", "-A")
    project.git("commit", "-qm", "sub, whose test fails")
    maker = project.script(
        "maker", f"put('src/calc.py', {SABOTAGE!r})\nput('tests/test_mul.py', {TEST_MUL!r})\n"
    )
    ran = project.loop("run", "--maker", maker)
    assert ran.status == 0, ran
    assert [k["goal"] for k in ran.data["kept"]] == [], ran.data["kept"]


JUNIT = """<testsuites><testsuite name="pytest">
<testcase classname="tests.test_calc" name="test_add" file="tests/test_calc.py">
<failure message="boom"/></testcase>
<testcase classname="tests.test_calc" name="test_sub" file="tests/test_calc.py">
<failure message="boom"/></testcase>
<testcase classname="tests.test_calc" name="test_mul" file="tests/test_calc.py"/>
</testsuite></testsuites>"""


def test_a_failing_test_the_report_names_counts_whatever_the_output_says() -> None:
    """The output names one failing test (the code under test can print such a line
    itself); the report pytest wrote names two: both are failing checks."""
    said = "FAILED tests/test_calc.py::test_sub - assert 4 == 2\n"
    checks = read_gate("tests", output=said, exit_code=1, timed_out=False, junit=JUNIT)
    assert checks.ids() == {
        "test tests/test_calc.py::test_add",
        "test tests/test_calc.py::test_sub",
    }
    assert checks.known


def test_a_failure_read_from_a_cut_output_without_a_report_is_unknown() -> None:
    """Relay keeps the head and tail of a gate's output: with the middle left out and no
    report to make up for it, what the output names is not every failing check."""
    said = "F401 `os` imported but unused\n --> src/a.py:1:8\n"
    whole = read_gate("lint", output=said, exit_code=1, timed_out=False)
    assert whole.known and whole.ids() == {"lint src/a.py F401"}
    cut = read_gate("lint", output=said, exit_code=1, timed_out=False, cut=4096)
    assert not cut.known
    assert "4096 bytes of its output were left out" in cut.unknown_why()
    reported = read_gate("tests", output="", exit_code=1, timed_out=False, junit=JUNIT, cut=9)
    assert reported.known  # the report names every test that failed
