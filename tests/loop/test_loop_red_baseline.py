"""A red baseline is a goal, not a stop; tests may grow and be fixed, never be weakened.
On a real repository with real pytest and ruff as gates: triage's goals for a failing
test and a lint finding are worked and kept, a change that makes any gate worse is not,
a gate that cannot run is unknown (never a pass), new tests in an existing test file are
kept, and an edited or removed baseline test is judged as the issue says."""

from __future__ import annotations

import shlex
import subprocess
from pathlib import Path

import pytest
from loop_project import CALC, CALC_MUL, LINT_GATE, PY, TEST_GATE, TEST_MUL, Project, make_project
from test_loop_ratchet import board_row, failures

from relay.loop.goals import GoalState, parse_board, parse_goals


@pytest.fixture(autouse=True)
def _quick_pytest(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PYTHONDONTWRITEBYTECODE", "1")
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")


RED_CALC = "import os\n\n\ndef add(a, b):\n    return a - b\n"
TEST_CALC = "from calc import add\n\n\ndef test_add():\n    assert add(1, 2) == 3\n"
MORE_TESTS = TEST_CALC + "\n\ndef test_add_zero():\n    assert add(0, 5) == 5\n"


def plant(project: Project, files: dict[str, str], message: str) -> None:
    for name, text in files.items():
        project.write(name, text)
    project.git("add", "-A")
    project.git("commit", "-qm", message)


def green(project: Project, commit: str) -> list[str]:
    """The gates that fail on ``commit`` (checked out in a worktree of its own)."""
    where = project.root.parent / f"check-{commit[:8]}"
    project.git("worktree", "add", "-q", "--detach", str(where), commit)
    try:
        return [
            gate
            for gate in (TEST_GATE, LINT_GATE)
            if subprocess.run(gate, shell=True, cwd=where, capture_output=True).returncode != 0
        ]
    finally:
        project.git("worktree", "remove", "--force", str(where))


def test_triage_then_run_fixes_a_red_build(tmp_path: Path) -> None:
    project = make_project(tmp_path, accept=None)
    plant(project, {"src/calc.py": RED_CALC}, "a red build: a failing test and a lint finding")
    triaged = project.loop("triage")
    assert [(e["goal"], e["finding"]) for e in triaged.data["enqueued"]] == [
        ("G1", "test tests/test_calc.py::test_add"),
        ("G2", "lint src/calc.py F401"),
    ], triaged
    goals = parse_goals(project.read("docs/loop/GOALS.md")).goals
    assert goals[1].accept == f"{PY} -m ruff check --no-cache --select F401 src/calc.py"
    # G1's maker fixes the code and adds a test to the existing test file (leaving the
    # lint finding, the baseline's, alone); G2's removes the unused import
    maker = project.script(
        "maker",
        "count('maker')\n"
        "if 'test_add' in BRIEF.splitlines()[0]:\n"
        f"    put('src/calc.py', {RED_CALC.replace('a - b', 'a + b')!r})\n"
        f"    put('tests/test_calc.py', {MORE_TESTS!r})\n"
        "else:\n"
        "    text = pathlib.Path('src/calc.py').read_text()\n"
        "    put('src/calc.py', text.replace('import os\\n\\n\\n', ''))\n",
    )
    ran = project.loop("run", "--maker", maker)
    assert ran.status == 0, ran
    assert [k["goal"] for k in ran.data["kept"]] == ["G1", "G2"]
    assert ran.data["kept"][0]["gates"] == "2/3 gates pass (was 0/3); failing checks 2 -> 1"
    assert ran.data["kept"][1]["gates"] == "3/3 gates pass (was 1/3); failing checks 1 -> 0"
    assert project.read("src/calc.py") == CALC and project.read("tests/test_calc.py") == MORE_TESTS
    assert board_row(project, "G1")[0] is GoalState.DONE and failures(project) == []
    assert board_row(project, "G2")[0] is GoalState.DONE
    kept = project.git("log", "--format=%H", "--grep", "^G[12]: ").split()
    assert len(kept) == 2
    g2, g1 = kept
    assert green(project, g1) == [LINT_GATE]  # the baseline's lint finding, no worse
    assert green(project, g2) == []
    assert "never be weakened" in project.seen("maker", 1)
    assert "No gate may get worse" in project.seen("maker", 1)
    assert (
        "Already failing at the baseline (they may stay or be fixed; nothing else may fail):\n\n"
        "- test: test tests/test_calc.py::test_add\n- lint: lint src/calc.py F401\n"
    ) in project.seen("maker", 1)
    assert "- lint: lint src/calc.py F401" in project.seen("maker", 2)
    assert project.clean()


def test_a_change_that_makes_a_red_gate_worse_is_not_kept(tmp_path: Path) -> None:
    project = make_project(tmp_path, retries=1)
    plant(project, {"src/calc.py": "import os\n\n\n" + CALC}, "a lint finding")
    sneaky = "import sys\n\n\n" + TEST_MUL
    maker = project.script(
        "maker",
        "n = count('maker')\n"
        f"put('src/calc.py', 'import os\\n\\n\\n' + {CALC_MUL!r})\n"
        f"put('tests/test_mul.py', {sneaky!r} if n == 1 else {TEST_MUL!r})\n",
    )
    ran = project.loop("run", "--maker", maker)
    assert ran.status == 0, ran
    assert [k["goal"] for k in ran.data["kept"]] == ["G1"] and project.calls("maker") == 2
    assert failures(project) == [("G1", 1, "lint/format")]
    text = project.read("docs/loop/state/failures.md")
    assert "exited 1, worse than the baseline (" in text
    assert "- lint tests/test_mul.py F401" in text and "- lint src/calc.py" not in text
    # kept with the baseline's own finding still there: red, but no worse
    assert project.read("src/calc.py") == "import os\n\n\n" + CALC_MUL


def test_a_gate_that_cannot_run_is_unknown_never_a_pass(tmp_path: Path) -> None:
    missing = "relay-no-such-linter --check ."
    project = make_project(tmp_path, gates=(TEST_GATE, missing))
    maker = project.script("maker", "count('maker')\n")
    ran = project.loop("run", "--maker", maker)
    assert ran.status == 1 and project.calls("maker") == 0
    assert (
        "the baseline's gates cannot be compared (lint: unknown (did not run: exit 127"
        in (ran.data["stopped"])
    ), ran.data
    assert "unknown (did not run: exit 127" in board_row(project)[4]
    # triage: the failing test's goal is not retired while the test gate cannot run
    (tmp_path / "again").mkdir()
    project = make_project(tmp_path / "again", accept=None, gates=(TEST_GATE,))
    plant(project, {"src/calc.py": RED_CALC}, "a failing test")
    assert [e["goal"] for e in project.loop("triage").data["enqueued"]] == ["G1"]
    contract = project.read("docs/loop/CONTRACT.md")
    project.write("docs/loop/CONTRACT.md", contract.replace(f"{PY} -m pytest", "relay-no-pytest"))
    project.git("commit", "-qam", "the test gate cannot run here")
    again = project.loop("triage")
    assert again.data["retired"] == [] and list(again.data["unknown"]) == ["test"], again.data
    board = project.read("docs/loop/BOARD.md")
    assert "## Triage" in board and "- test: unknown (`relay-no-pytest" in board
    assert parse_board(board).rows[0].state is GoalState.OPEN
    project.write("docs/loop/CONTRACT.md", contract)
    project.git("commit", "-qam", "the test gate runs again")
    plant(project, {"src/calc.py": CALC}, "fixed by hand")
    last = project.loop("triage")
    assert [r["goal"] for r in last.data["retired"]] == ["G1"] and last.data["unknown"] == {}
    assert "## Triage" not in project.read("docs/loop/BOARD.md")


ACCEPT_IN_CALC = f"{TEST_GATE} tests/test_calc.py::test_mul"
TEST_CALC_MUL = TEST_CALC.replace("import add", "import add, mul") + (
    "\n\ndef test_mul():\n    assert mul(2, 3) == 6\n"
)


def test_a_baseline_test_is_kept_unless_the_goal_may_edit_tests(tmp_path: Path) -> None:
    """Renaming a baseline test is refused unless the goal may edit tests; tests added
    next to it in the same file are kept either way."""
    renamed = TEST_CALC_MUL.replace("def test_add()", "def test_addition()")
    edit = f"put('src/calc.py', {CALC_MUL!r})\nput('tests/test_calc.py', {renamed!r})\n"
    project = make_project(tmp_path, retries=0, accept=ACCEPT_IN_CALC)
    ran = project.loop("run", "--maker", project.script("maker", edit))
    assert ran.data["kept"] == [] and project.read("tests/test_calc.py") == TEST_CALC
    text = project.read("docs/loop/state/failures.md")
    assert "1 test(s) the baseline had are gone (tests/test_calc.py::test_add" in text
    assert "--may-edit-tests" in text
    # tests added to the existing test file (the baseline's test as it was) are kept
    maker = project.script(
        "adder", f"put('src/calc.py', {CALC_MUL!r})\nput('tests/test_calc.py', {TEST_CALC_MUL!r})\n"
    )
    ran = project.loop("run", "--maker", maker)
    assert ran.status == 0 and [k["goal"] for k in ran.data["kept"]] == ["G1"], ran
    assert project.read("tests/test_calc.py") == TEST_CALC_MUL and project.clean()
    # the same change, declared
    (tmp_path / "declared").mkdir()
    other = make_project(tmp_path / "declared", retries=0, accept=None)
    added = other.loop("goal", "add", "Multiply", "--accept", ACCEPT_IN_CALC, "--may-edit-tests")
    assert added.data == {"goal": "G1"}
    assert "- May edit tests: yes" in other.read("docs/loop/GOALS.md")
    maker = other.script("maker", "count('maker')\n" + edit)
    checker = other.script(
        "checker",
        'count(\'checker\')\nprint(cite())\nprint(\'{"verdict": "approve", "findings": []}\')\n',
    )
    ran = other.loop("run", "--maker", maker, "--checker", checker)
    assert [k["goal"] for k in ran.data["kept"]] == ["G1"], ran
    assert "may edit existing tests" in other.seen("maker", 1)
    assert "may edit existing tests" in other.seen("checker", 1)
    assert other.read("tests/test_calc.py") == renamed


def test_tests_edited_under_may_edit_tests_with_no_checker_go_to_a_person(
    tmp_path: Path,
) -> None:
    """Recorded *and reviewed*: with no checker to read the edited tests, a weakened
    assertion would pass every gate, so the candidate is put back and the goal blocked."""
    weak = TEST_CALC_MUL.replace("== 3", "is not None")
    edit = f"put('src/calc.py', {CALC_MUL!r})\nput('tests/test_calc.py', {weak!r})\n"
    project = make_project(tmp_path, retries=0, accept=None)
    added = project.loop("goal", "add", "Multiply", "--accept", ACCEPT_IN_CALC, "--may-edit-tests")
    assert added.data == {"goal": "G1"}, added
    ran = project.loop("run", "--maker", project.script("maker", edit))
    assert ran.data["kept"] == [], ran
    assert [b["goal"] for b in ran.data["blocked"]] == ["G1"], ran
    why = ran.data["blocked"][0]["blocker"]
    assert "tests edited under --may-edit-tests need a checker or a person's review" in why
    assert "tests/test_calc.py::test_add" in why
    assert project.read("tests/test_calc.py") == TEST_CALC and project.read("src/calc.py") == CALC
    assert project.clean()


def test_an_edited_baseline_test_is_refused_and_a_changed_helper_is_swapped(
    tmp_path: Path,
) -> None:
    project = make_project(tmp_path, retries=0)
    weak = TEST_CALC.replace("== 3", "is not None")
    broken = CALC_MUL.replace("a + b", "a - b")
    maker = project.script(
        "maker",
        f"put('src/calc.py', {broken!r})\nput('tests/test_mul.py', {TEST_MUL!r})\n"
        f"put('tests/test_calc.py', {weak!r})\n",
    )
    ran = project.loop("run", "--maker", maker)
    assert ran.data["kept"] == [] and project.read("src/calc.py") == CALC
    text = project.read("docs/loop/state/failures.md")
    assert "1 test(s) the baseline had were edited (tests/test_calc.py::test_add is a" in text
    assert "must pass on the candidate as the baseline wrote it" in text
    # what the tests lean on (the module around them) is run as the baseline wrote it
    (tmp_path / "helper").mkdir()
    other = make_project(tmp_path / "helper", retries=0)
    shadow = TEST_CALC.replace("from calc import add\n", "def add(a, b):\n    return 3\n")
    maker = other.script(
        "maker",
        f"put('src/calc.py', {broken!r})\nput('tests/test_mul.py', {TEST_MUL!r})\n"
        f"put('tests/test_calc.py', {shadow!r})\n",
    )
    ran = other.loop("run", "--maker", maker)
    assert ran.data["kept"] == [] and other.read("src/calc.py") == CALC
    text = other.read("docs/loop/state/failures.md")
    assert (
        "with the baseline's copy of `tests/test_calc.py` swapped in and the goal's new"
        " `tests/test_mul.py` left out: test" in text
    ), text
    assert "the goal changed `tests/test_calc.py`, which the baseline's tests use" in text


TOTAL = "def total(xs):\n    return sum(xs) + 1\n"
TEST_TOTAL = (
    "from calc import total\n\n\ndef test_total():\n    assert total([1, 2]) == 3\n\n\n"
    "def test_empty():\n    assert total([]) == 0\n"
)


def test_a_red_test_is_never_edited_to_match_the_bug(tmp_path: Path) -> None:
    """A failing test triage enqueues is fixed in the code: editing its expectations to
    what the bug returns is refused, whatever the failing-check count says."""
    project = make_project(tmp_path, accept=None, retries=0, gates=(TEST_GATE,))
    plant(project, {"src/calc.py": TOTAL, "tests/test_calc.py": TEST_TOTAL}, "total is off by one")
    enqueued = project.loop("triage").data["enqueued"]
    assert [e["goal"] for e in enqueued] == ["G1", "G2"], enqueued
    to_the_bug = TEST_TOTAL.replace("== 3", "== 4").replace("== 0", "== 1")
    maker = project.script("maker", f"put('tests/test_calc.py', {to_the_bug!r})\n")
    ran = project.loop("run", "--maker", maker)
    assert ran.data["kept"] == [], ran
    assert project.read("tests/test_calc.py") == TEST_TOTAL
    text = project.read("docs/loop/state/failures.md")
    assert "test(s) the baseline had were edited (tests/test_calc.py::test_total" in text
    # the fix in the code is kept, the tests as the baseline wrote them
    fixed = project.script("fixer", f"put('src/calc.py', {TOTAL.replace(' + 1', '')!r})\n")
    ran = project.loop("run", "--maker", fixed)
    assert [k["goal"] for k in ran.data["kept"]] == ["G1"], ran
    assert project.read("tests/test_calc.py") == TEST_TOTAL


def test_a_test_is_not_weakened_across_two_goals(tmp_path: Path) -> None:
    """Goal A loosens a baseline assertion with the code unchanged; goal B would then
    break the code behind it. A is refused, so B's break is caught by the real test."""
    project = make_project(tmp_path, accept=None, retries=0, gates=(TEST_GATE,))

    def has(path: str, text: str) -> str:
        code = f"import sys; sys.exit({text!r} not in open({path!r}).read())"
        return f"{PY} -c {shlex.quote(code)}"

    project.loop("goal", "add", "Tidy the tests", "--accept", has("tests/test_calc.py", "tidy"))
    project.loop("goal", "add", "Simplify add", "--accept", has("src/calc.py", "return 0"))
    loose = "# tidy\n" + TEST_CALC.replace("== 3", "is not None")
    maker = project.script(
        "maker",
        "if 'Tidy' in BRIEF.splitlines()[0]:\n"
        f"    put('tests/test_calc.py', {loose!r})\n"
        "else:\n"
        "    put('src/calc.py', 'def add(a, b):\\n    return 0\\n')\n",
    )
    ran = project.loop("run", "--maker", maker)
    assert ran.data["kept"] == [], ran
    assert project.read("tests/test_calc.py") == TEST_CALC and project.read("src/calc.py") == CALC
    assert {f[0] for f in failures(project)} == {"G1", "G2"}


def test_an_optimisation_is_measured_interleaved_and_reports_its_coverage(tmp_path: Path) -> None:
    """The machine slows down with every run of the metric (a loaded machine): measured
    A/B/A/B, the baseline and the candidate drift alike, and the log shows the order."""
    project = make_project(tmp_path, accept=None, coverage=True)
    plant(project, {"cost.txt": "100\n"}, "the cost the metric reads")
    log = project.scripts / "metric.log"  # shared with the boxes (conftest)
    code = (
        f"import pathlib; log = pathlib.Path({str(log)!r}); cost = int(open('cost.txt').read());"
        " n = len(log.read_text().split()) if log.exists() else 0;"
        " log.write_text((log.read_text() if log.exists() else '') + str(cost) + ' ');"
        " print(cost * (1 + 0.02 * n))"
    )
    metric = f"{PY} -c {shlex.quote(code)}"
    added = project.loop(
        "goal", "add", "Cheaper", "--metric", metric, "--direction", "down", "--threshold", "10",
        "--runs", "3",
    )  # fmt: skip
    assert added.status == 0, added
    maker = project.script("maker", 'put("cost.txt", "80\\n")\nprint("IDEA: cheaper")\n')
    ran = project.loop("run", "--maker", maker)
    assert ran.status == 0, ran
    [kept] = ran.data["kept"]
    assert kept["coverage"] == "100.00% -> 100.00% (+0.00)", kept
    assert "line coverage 100.00% -> 100.00% (+0.00)" in kept["gates"]
    # three runs at the goal's start, then baseline and candidate alternately
    assert log.read_text().split() == ["100"] * 3 + ["100", "80"] * 3
    assert "noise " in kept["gates"] and "over 3 interleaved runs each" in kept["gates"]
    ledger = project.read("docs/loop/EXPERIMENTS.md")
    assert "interleaved runs each; baseline" in ledger


def test_a_test_file_that_cannot_be_collected_is_a_failing_check_of_its_own(
    tmp_path: Path,
) -> None:
    """One test file that fails to import does not stop the run: it is a failing check
    named for the file, the other tests still run and are compared, and the other goals
    are worked."""
    project = make_project(tmp_path)
    broken = "from calc import mean\n\n\ndef test_mean():\n    assert mean([1, 3]) == 2\n"
    plant(project, {"tests/test_mean.py": broken}, "a test of a function not written yet")
    triaged = project.loop("triage")
    assert [e["finding"] for e in triaged.data["enqueued"]] == ["test tests/test_mean.py"], triaged
    assert "neither enqueued nor retired" not in project.read("docs/loop/BOARD.md")
    # G1 (mul) is worked on the red baseline; a maker that also breaks add is caught
    breaks = CALC_MUL.replace("a + b", "a - b")
    maker = project.script(
        "maker",
        "n = count('maker')\n"
        "if BRIEF.startswith('# G1'):\n"
        f"    put('src/calc.py', {breaks!r} if n == 1 else {CALC_MUL!r})\n"
        f"    put('tests/test_mul.py', {TEST_MUL!r})\n"
        "else:\n"
        "    text = pathlib.Path('src/calc.py').read_text()\n"
        "    put('src/calc.py', text + '\\n\\ndef mean(xs):\\n    return sum(xs) / len(xs)\\n')\n",
    )
    ran = project.loop("run", "--maker", maker)
    assert ran.status == 0, ran
    assert [k["goal"] for k in ran.data["kept"]] == ["G1", "G2"], ran
    [(goal, attempt, _)] = failures(project)  # the baseline's ImportError is in the output too
    assert (goal, attempt) == ("G1", 1)
    text = project.read("docs/loop/state/failures.md")
    assert "- test tests/test_calc.py::test_add" in text
    assert ran.data["kept"][1]["gates"].endswith("failing checks 1 -> 0")
    assert project.clean()


def test_a_lint_goal_is_kept_when_its_own_code_is_fixed_in_a_file_with_others(
    tmp_path: Path,
) -> None:
    """A file with two lint findings is two goals: each is accepted on its own code, so a
    maker that fixes exactly that code is kept, the other finding left for its own goal."""
    project = make_project(tmp_path, accept=None, retries=0)
    two = "import os\n\n\ndef add(a, b):\n    unused = 1\n    return a + b\n"
    plant(project, {"src/calc.py": two}, "two lint findings in one file")
    enqueued = project.loop("triage").data["enqueued"]
    assert [e["finding"] for e in enqueued] == ["lint src/calc.py F401", "lint src/calc.py F841"]
    maker = project.script(
        "maker",
        "text = pathlib.Path('src/calc.py').read_text()\n"
        "if 'F401' in BRIEF.splitlines()[0]:\n"
        "    put('src/calc.py', text.replace('import os\\n\\n\\n', ''))\n"
        "else:\n"
        "    put('src/calc.py', text.replace('    unused = 1\\n', ''))\n",
    )
    ran = project.loop("run", "--maker", maker)
    assert [k["goal"] for k in ran.data["kept"]] == ["G1", "G2"], ran
    assert failures(project) == [] and project.read("src/calc.py") == CALC
