"""The gates' output read as failing checks, and the ratchet's comparison of a candidate's
checks with the baseline's; which of the baseline's tests a change removed or edited. The
outputs are the tools' own (ruff 0.17's full and concise formats, pytest's short summary,
mypy's), and one test reads what the real ruff and pytest print on a real tree."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from relay.loop.checks import (
    GateChecks,
    fixed,
    mypy_findings,
    pytest_failures,
    read_gate,
    rewritten,
    ruff_findings,
    suite_change,
    swap_needed,
    unknown,
    weakened,
    worse,
)

RUFF_FULL = """\
F401 [*] `os` imported but unused
 --> src/calc.py:1:8
  |
1 | import os
  |        ^^
2 | import sys
  |
help: Remove unused import: `os`

F401 [*] `sys` imported but unused
 --> src/calc.py:2:8
  |
2 | import sys
  |        ^^^

E741 Ambiguous variable name: `l`
 --> src/other.py:4:5
  |
4 |     l = 1
  |     ^

invalid-syntax: Expected an expression
 --> src/broken.py:1:5
  |

Found 4 errors.
[*] 2 fixable with `--fix`.
"""
RUFF_CONCISE = """\
src/calc.py:1:8: F401 [*] `os` imported but unused
src/calc.py:2:8: F401 [*] `sys` imported but unused
src/other.py:4:5: E741 Ambiguous variable name: `l`
Found 3 errors.
"""
RUFF_FORMAT = """\
unformatted: File would be reformatted
 --> src/calc.py:5:7
  |
4 |
  - def f( x):
5 + def f(x):
  |

1 file would be reformatted
"""
PYTEST = """\
..F.E                                                                    [100%]
=========================== short test summary info ============================
FAILED tests/test_calc.py::test_add - assert 0 == 3
FAILED tests/test_calc.py::test_param[a b-1] - AssertionError: no
ERROR tests/test_db.py::TestDb::test_open - RuntimeError: gone
ERROR tests/test_broken.py
SUBFAILED(i=1) tests/test_u.py::T::test_sub - AssertionError: 1 == 1
SUBFAILED[odd] (i=3, j='x') tests/test_u.py::T::test_sub - AssertionError: 3 == 3
SUBFAILED(<subtest>) tests/test_s.py::test_fixture[a b] - assert 0
2 failed, 2 passed, 2 errors in 0.12s
"""
MYPY = """\
src/calc.py:3: error: Incompatible return value type (got "str", expected "int")  [return-value]
src/calc.py:9:5: error: Name "x" is not defined  [name-defined]
src/calc.py:12: note: See https://mypy.readthedocs.io
Found 2 errors in 1 file (checked 3 source files)
"""


def test_ruff_is_read_in_its_full_concise_and_format_outputs() -> None:
    full = [(f.path, f.code, f.line) for f in ruff_findings(RUFF_FULL)]
    assert full == [
        ("src/calc.py", "F401", 1),
        ("src/calc.py", "F401", 2),
        ("src/other.py", "E741", 4),
        ("src/broken.py", "invalid-syntax", 1),
    ]
    concise = [(f.path, f.code, f.line) for f in ruff_findings(RUFF_CONCISE)]
    assert concise == full[:3]
    assert [(f.path, f.code) for f in ruff_findings(RUFF_FORMAT)] == [
        ("src/calc.py", "unformatted")
    ]
    assert [f.id for f in ruff_findings("Would reformat: src/a.py\n")] == [
        "lint src/a.py unformatted"
    ]


def test_pytest_and_mypy_are_read_by_node_id_and_by_file_and_code() -> None:
    assert [f.id for f in pytest_failures(PYTEST)] == [
        "test tests/test_calc.py::test_add",
        "test tests/test_calc.py::test_param[a b-1]",
        "test tests/test_db.py::TestDb::test_open",
        "test tests/test_broken.py",
        "test tests/test_u.py::T::test_sub",
        "test tests/test_u.py::T::test_sub",
        "test tests/test_s.py::test_fixture[a b]",
    ]
    assert [f.id for f in mypy_findings(MYPY)] == [
        "type src/calc.py return-value",
        "type src/calc.py name-defined",
    ]


def test_a_gate_is_worse_only_when_it_names_a_check_the_baseline_did_not() -> None:
    base = read_gate("lint", output=RUFF_CONCISE, exit_code=1, timed_out=False)
    assert base.known and dict(base.failing) == {
        "lint src/calc.py F401": 2,
        "lint src/other.py E741": 1,
    }
    # the same findings on other lines (code moved) are not worse; one fixed is better
    moved = RUFF_CONCISE.replace(":1:8:", ":7:8:").replace(":4:5:", ":9:5:")
    assert worse(base, read_gate("lint", output=moved, exit_code=1, timed_out=False)) == []
    one_fixed = "src/calc.py:1:8: F401 [*] `os` imported but unused\nsrc/other.py:4:5: E741 x\n"
    now = read_gate("lint", output=one_fixed, exit_code=1, timed_out=False)
    assert worse(base, now) == [] and fixed(base, now) == []
    all_fixed = read_gate("lint", output="", exit_code=0, timed_out=False)
    assert worse(base, all_fixed) == [] and fixed(base, all_fixed) == [
        "lint src/calc.py F401",
        "lint src/other.py E741",
    ]
    # a new finding, or a third F401 in the same file, is worse
    more = (
        RUFF_CONCISE
        + "src/calc.py:3:8: F401 [*] `re` imported but unused\nsrc/new.py:1:1: E401 x\n"
    )
    assert worse(base, read_gate("lint", output=more, exit_code=1, timed_out=False)) == [
        "lint src/calc.py F401 (2 -> 3)",
        "lint src/new.py E401",
    ]


def test_a_gate_that_did_not_run_or_named_nothing_is_unknown_and_never_passes() -> None:
    missing = read_gate("test", output="sh: 1: pytest: not found\n", exit_code=127, timed_out=False)
    assert not missing.ran and not missing.known
    assert missing.said() == "test: unknown (did not run: exit 127: sh: 1: pytest: not found)"
    slow = read_gate("test", output="", exit_code=None, timed_out=True, timeout=60)
    assert slow.said() == "test: unknown (did not run: ran past 60s)"
    opaque = read_gate("test", output="Traceback...\nKeyError: 'x'\n", exit_code=1, timed_out=False)
    assert opaque.ran and not opaque.known
    base = read_gate("test", output=PYTEST, exit_code=1, timed_out=False)
    assert worse(base, missing) == ["test did not run (exit 127: sh: 1: pytest: not found)"]
    assert worse(base, opaque) == ["test failed (exit 1) and its output names no failing check"]
    assert fixed(base, missing) == []  # nothing is read as fixed from a gate that did not run
    assert [g.gate for g in unknown([base, missing, opaque])] == ["test", "test"]
    passing = GateChecks("test", ran=True, passed=True)
    assert worse(missing, passing) == [] and worse(None, passing) == []
    assert worse(missing, base) == ["test failed, and its baseline cannot be compared"]


BEFORE = """\
from calc import add


def test_add():
    assert add(1, 2) == 3


class TestMore:
    def test_zero(self):
        assert add(0, 0) == 0

    def helper(self):
        return 1
"""


def test_tests_may_grow_but_a_baseline_test_removed_or_edited_is_told() -> None:
    grown = BEFORE + "\n\ndef test_mul():\n    assert 2 * 3 == 6\n"
    change = suite_change("tests/test_calc.py", BEFORE, grown)
    assert change.added == ("tests/test_calc.py::test_mul",)
    assert change.removed == change.edited == () and not swap_needed(change)
    # reformatting or a comment is no edit; a helper changed is no test edited
    restyled = BEFORE.replace("add(1, 2) == 3", "add(1,  2)  ==  3  # one and two").replace(
        "1\n", "2\n"
    )
    restyled_only = BEFORE.replace("add(1, 2) == 3", "add(1,  2)  ==  3  # one and two")
    assert not swap_needed(suite_change("tests/test_calc.py", BEFORE, restyled_only))
    helped = suite_change("tests/test_calc.py", BEFORE, restyled)
    assert helped.edited == () and helped.helper and swap_needed(helped)  # tests lean on it
    assert rewritten([helped]) == []
    weaker = BEFORE.replace("== 0", "is not None").replace("def test_add", "def test_plus")
    change = suite_change("tests/test_calc.py", BEFORE, weaker)
    assert change.removed == ("tests/test_calc.py::test_add",)
    assert change.edited == ("tests/test_calc.py::TestMore::test_zero",)
    assert change.added == ("tests/test_calc.py::test_plus",) and swap_needed(change)
    assert weakened([change]) == [
        "tests/test_calc.py::test_add is a test the baseline had; it is gone"
    ]
    assert rewritten([change]) == [
        "tests/test_calc.py::TestMore::test_zero is a test the baseline had; its code was edited"
    ]
    unreadable = suite_change("tests/test_calc.py", BEFORE, "def (:\n")
    assert not unreadable.readable and swap_needed(unreadable) and weakened([unreadable]) == []
    js = suite_change("tests/calc.test.js", "test('a', () => {})", "test('b', () => {})")
    assert not js.readable and swap_needed(js)


def test_what_the_real_tools_print_is_read(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text("[tool.ruff]\nline-length = 100\n")
    (tmp_path / "mod.py").write_text("import os\n\n\nx = 1\n")
    (tmp_path / "test_mod.py").write_text(
        "def test_ok():\n    assert True\n\n\ndef test_bad():\n    assert 1 == 2\n"
    )
    outputs = {}
    for name, args in {
        "full": ["-m", "ruff", "check", "--no-cache", "--select", "F", "."],
        "concise": [
            "-m",
            "ruff",
            "check",
            "--no-cache",
            "--select",
            "F",
            "--output-format=concise",
            ".",
        ],
        "pytest": ["-m", "pytest", "-q", "-p", "no:cacheprovider", "test_mod.py"],
    }.items():
        done = subprocess.run(
            [sys.executable, *args], cwd=tmp_path, capture_output=True, text=True, check=False
        )
        outputs[name] = read_gate(name, output=done.stdout + done.stderr, exit_code=done.returncode,
                                  timed_out=False)  # fmt: skip
    assert outputs["full"].failing == (("lint mod.py F401", 1),)
    assert outputs["concise"].failing == outputs["full"].failing
    assert outputs["pytest"].failing == (("test test_mod.py::test_bad", 1),)


def test_a_goals_acceptance_is_its_gate_narrowed_to_the_one_finding() -> None:
    from relay.loop.triage import lint_findings, narrowed

    py = "/usr/bin/python3 -m pytest -q -p no:cacheprovider tests/"
    node = "tests/test_a.py::test_x[a b]"
    assert narrowed(py, node) == f"/usr/bin/python3 -m pytest -q -p no:cacheprovider '{node}'"
    assert narrowed("ruff check --no-cache .", "src/a.py") == "ruff check --no-cache src/a.py"
    assert narrowed("ruff format --check src tests", "src/a.py") == "ruff format --check src/a.py"
    assert narrowed("coverage run -m pytest -x", "t.py::t") == "coverage run -m pytest -x t.py::t"
    assert narrowed("make lint", "src/a.py") == "make lint src/a.py"  # unread: appended
    assert narrowed("ruff check . && mypy", "src/a.py") == "ruff check . && mypy src/a.py"
    found = lint_findings(RUFF_FULL, gate="ruff check --no-cache .")
    assert [(f.key, f.accept) for f in found] == [
        ("lint src/calc.py F401", "ruff check --no-cache --select F401 src/calc.py"),
        ("lint src/other.py E741", "ruff check --no-cache --select E741 src/other.py"),
        ("lint src/broken.py invalid-syntax", "ruff check --no-cache src/broken.py"),
    ]
    # one code at a time: the gate's own selection gives way to the finding's code
    assert (
        narrowed("ruff check --select F,UP --line-length 100 .", "a.py", select="UP009")
        == "ruff check --line-length 100 --select UP009 a.py"
    )
    assert narrowed("flake8 --select=E src", "a.py", select="E501") == "flake8 --select E501 a.py"
    assert narrowed("ruff format --check .", "a.py", select="F401") == "ruff format --check a.py"


def test_triage_retires_nothing_it_could_not_observe_and_says_so_on_the_board() -> None:
    from relay.loop.goals import Board, BoardRow, Goal, GoalState, parse_board, render_board
    from relay.loop.triage import retired, with_unknown

    goals = (
        Goal("G1", "Fix the failing test t.py::a", "pytest t.py::a", finding="test t.py::a"),
        Goal("G2", "Fix F401 in a.py", "ruff check a.py", finding="lint a.py F401"),
    )
    rows = {g.id: BoardRow(g.id, g.title) for g in goals}
    gone = retired([], goals, rows, {"test": "`pytest` did not run: exit 127"})
    assert [(r.goal, r.state) for r in gone] == [("G2", GoalState.DONE)]
    assert retired([], goals, rows) != gone  # observed, both would go
    board = Board("# Board\n", tuple(rows.values()), "## Notes\n\nmine\n")
    why = {"test": "`pytest` did not run: exit 127: sh: pytest: not found"}
    noted = with_unknown(board, why, when="2026-12-04 21:00:00Z")
    text = render_board(noted)
    assert (
        "## Triage\n\nLast triage (2026-12-04 21:00:00Z):\n\n- test: unknown (`pytest` did not"
        " run: exit 127: sh: pytest: not found); its goals are neither enqueued nor retired"
    ) in text
    assert "## Notes\n\nmine\n" in text and parse_board(text).rows == board.rows
    again = with_unknown(parse_board(text), why, when="2026-12-04 22:00:00Z")
    assert render_board(again).count("## Triage") == 1 and "22:00:00Z" in render_board(again)
    cleared = with_unknown(parse_board(text), {}, when="later")
    assert "## Triage" not in render_board(cleared) and "## Notes\n\nmine\n" in render_board(
        cleared
    )


def test_an_improvement_must_beat_the_threshold_and_the_measured_noise() -> None:
    from relay.loop.metric import compare_runs

    steady = compare_runs([100, 101, 99], [80, 81, 79], direction="down", threshold=10)
    assert steady.improved and steady.change_pct == -20.0
    assert steady.text == (
        "100 -> 80 (-20.00%; needed -10% down); noise 2.00% over 3 interleaved runs each;"
        " baseline 99..101, candidate 79..81"
    )
    # the same medians on a noisy machine: the 20% is inside a 30% spread
    noisy = compare_runs([100, 130, 90], [80, 60, 95], direction="down", threshold=10)
    assert not noisy.improved and noisy.text.endswith("; the change is within the noise")
    assert "noise 40.00%" in noisy.text
    # below the threshold however quiet; one run each leaves the noise unmeasured
    assert not compare_runs([100, 100], [95, 95], direction="down", threshold=10).improved
    one = compare_runs([10], [12], direction="up", threshold=5)
    assert one.improved and one.text.endswith("noise not measured (1 run each)")
    assert not compare_runs([10, 10], [12, 12], direction="down", threshold=5).improved


def test_the_dry_runs_order_is_the_runs_order() -> None:
    from relay.loop.goals import Board, BoardRow, Goal, GoalState, next_goal, plan_order

    goals = (
        Goal("G1", "Tried once", "true"),
        Goal("G2", "Fresh", "true"),
        Goal("G3", "After G1", "true", depends=("G1",)),
        Goal("G4", "In progress", "true"),
        Goal("G5", "Blocked", "true"),
        Goal("G6", "Waits on G5", "true", depends=("G5",)),
    )
    board = Board(
        "",
        (
            BoardRow("G1", "Tried once", GoalState.OPEN, 3, 1),
            BoardRow("G4", "In progress", GoalState.IN_PROGRESS),
            BoardRow("G5", "Blocked", GoalState.BLOCKED, 9, 3),
        ),
    )
    order, left = plan_order(goals, board)
    assert [g.id for g in order] == ["G4", "G2", "G1", "G3"]
    assert [g.id for g in left] == ["G5", "G6"]
    # what a run does: next_goal, each goal done in turn
    worked, now = [], board
    while (chosen := next_goal(goals, now).goal) is not None:
        worked.append(chosen)
        now = now.with_row(BoardRow(chosen.id, chosen.title, GoalState.DONE))
    assert worked == order
    # one goal (--goal): its dependencies are read from the whole board
    assert [g.id for g in plan_order(goals, board, only="G3")[0]] == []
    done_g1 = board.with_row(BoardRow("G1", "Tried once", GoalState.DONE))
    assert [g.id for g in plan_order(goals, done_g1, only="G3")[0]] == ["G3"]
    assert next_goal(goals, done_g1, only="G3").goal == goals[2]


def test_a_helper_of_the_tests_is_swapped_and_the_candidates_own_tests_are_spared() -> None:
    helper = suite_change(
        "tests/helpers.py", "def check(x):\n    assert x\n", "def check(x):\n    pass\n"
    )
    assert helper.helper and swap_needed(helper) and weakened([helper]) == []
    same = suite_change("tests/helpers.py", "X = 1\n", "X = 1\n")
    assert not swap_needed(same)
    base = read_gate("test", output="", exit_code=0, timed_out=False)
    swapped = read_gate(
        "test",
        output="FAILED tests/test_new.py::test_a - x\nFAILED tests/test_calc.py::test_two[1]\n"
        "FAILED tests/test_calc.py::test_add - y\nERROR tests/test_newer.py\n",
        exit_code=1,
        timed_out=False,
    )
    new = ["tests/test_new.py", "tests/test_newer.py", "tests/test_calc.py::test_two"]
    assert worse(base, swapped, new_tests=new) == ["test tests/test_calc.py::test_add"]
    assert len(worse(base, swapped)) == 4


def test_a_pytest_run_that_stopped_early_names_too_little_to_compare() -> None:
    stopped = (
        "FAILED tests/test_x.py::test_a - assert 0\n"
        "!!!!!!!!!!!!!!!!!!!!!!!!!! stopping after 1 failures !!!!!!!!!!!!!!!!!!!!!!!!!!!\n"
        "1 failed in 0.59s\n"
    )
    base = read_gate("test", output=stopped, exit_code=1, timed_out=False)
    assert (
        base.partial and not base.known and base.failing == (("test tests/test_x.py::test_a", 1),)
    )
    assert base.said().startswith("test: unknown (stopped early (exit 1: -x, --maxfail or an")
    collecting = "ERROR tests/test_y.py\n!!!!!!!! Interrupted: 1 error during collection !!!!!!!!\n"
    assert read_gate("test", output=collecting, exit_code=2, timed_out=False).partial
    full = read_gate(
        "test", output="FAILED tests/test_x.py::test_a\n", exit_code=1, timed_out=False
    )
    assert worse(full, base) == [
        "test stopped early (exit 1: -x, --maxfail or an error while collecting), so it does not"
        " name every failing check; relay cannot tell whether it got worse"
    ]


def test_each_gate_says_which_tests_ran_unless_the_project_turned_junit_off(
    tmp_path: Path,
) -> None:
    """Relay asks a gate's pytest for a JUnit report of the tests it ran; a project whose
    gate turns the junitxml plugin off still runs its gate, with nothing said of its tests."""
    from relay.loop.contract import Gate
    from relay.ratchet.measure import measure

    root = tmp_path / "project"  # (the test's own folder holds the folders shared with boxes)
    (root / "tests").mkdir(parents=True)
    (root / "tests/test_a.py").write_text("def test_a():\n    pass\n", encoding="utf-8")
    pytest_ = f"{sys.executable} -m pytest -q -p no:cacheprovider"
    gates = [Gate("test", pytest_), Gate("off", f"{pytest_} -p no:junitxml")]
    ran = measure(root, gates, timeout=120, coverage_report=None, stop_at_failure=False)
    assert [r.passed for r in ran.results] == [True, True], ran
    assert [c.tests for c in ran.checks] == [(("tests/test_a.py::test_a", "passed"),), None]
    assert sorted(p.name for p in root.iterdir()) == ["tests"]  # no report left behind
