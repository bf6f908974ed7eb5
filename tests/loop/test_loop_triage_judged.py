"""Triage judges HEAD's gate runs as the ratchet judges a candidate's: HEAD holds code a
maker wrote, and the gates run one after another in one tree. On a real repository with
real pytest, ruff and coverage as gates: a test run that leaves what makes the lint gate
pass (an ignore file, a ruff configuration), or that tampers with pytest's reports,
retires no goal: that kind is unknown, said on the board. Failing tests are read from the
run's JUnit report; an honest HEAD (coverage's report carried from one gate to the next)
triages as it always did. `relay doctor` runs each gate from an empty scratch and says
when one ran in a tree an earlier run changed."""

from __future__ import annotations

import io
import json
import shlex
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

import pytest
from loop_project import CALC, PY, TEST_GATE, Project, Ran, make_project

from relay.loop.goals import GoalState, parse_board

RED_CALC = "def add(a, b):\n    return a - b\n"
LINT_CALC = "import os\n\n\n" + CALC
TEST_ADD = "from calc import add\n\n\ndef test_add():\n    assert add(1, 2) == 3\n"


def plant(project: Project, files: dict[str, str], message: str) -> None:
    for name, text in files.items():
        project.write(name, text)
    project.git("add", "-A")
    project.git("commit", "-qm", message)


def found_first(tmp_path: Path, calc: str, finding: str, message: str) -> tuple[Project, Ran]:
    """A project whose HEAD holds ``calc`` as src/calc.py, triaged once: ``finding`` alone
    is enqueued (what each attack then tries to make triage retire)."""
    project = make_project(tmp_path, accept=None)
    plant(project, {"src/calc.py": calc}, message)
    first = project.loop("triage")
    assert [e["finding"] for e in first.data["enqueued"]] == [finding], first.data
    return project, first


def open_goals(project: Project) -> dict[str, GoalState]:
    return {r.goal: r.state for r in parse_board(project.read("docs/loop/BOARD.md")).rows}


# what a test module, when collected, writes into the tree the gates share
HIDE = {
    ".ignore": "pathlib.Path('.ignore').write_text('*\\n')",
    "ruff.toml": "pathlib.Path('ruff.toml').write_text('extend-exclude = [\"src\"]\\n')",
}


@pytest.mark.parametrize("how", sorted(HIDE))
def test_a_test_run_that_hides_a_lint_finding_from_the_lint_gate_retires_nothing(
    tmp_path: Path, how: str
) -> None:
    project, first = found_first(tmp_path, LINT_CALC, "lint src/calc.py F401", "a lint finding")
    assert first.data["unknown"] == {}
    module = f"import pathlib\n\n{HIDE[how]}\n\n\ndef test_more():\n    assert True\n"
    plant(project, {"tests/test_more.py": module}, "a test module that writes into the tree")
    again = project.loop("triage")
    assert again.status == 0, again
    assert again.data["retired"] == [] and "lint" in again.data["unknown"], again.data
    why = again.data["unknown"]["lint"]
    left = f"left {how}"
    assert "ran, but the run of test changed the tree the gates share (" in why, why
    assert left in why, why
    board = project.read("docs/loop/BOARD.md")
    assert "## Triage" in board and "- lint: unknown (`" in board, board
    assert open_goals(project) == {"G1": GoalState.OPEN}
    # the gate's log says why its run is not trusted
    logs = sorted((project.root / again.data["gate_logs"]).glob("*lint*.log"))
    assert left in logs[-1].read_text(), logs
    # the module gone, the finding is seen again and nothing is unknown
    project.git("rm", "-q", "tests/test_more.py")
    project.git("commit", "-qm", "the module is gone")
    last = project.loop("triage")
    assert last.data["unknown"] == {} and last.data["retired"] == [], last.data
    assert [f["key"] for f in last.data["findings"]] == ["lint src/calc.py F401"]
    assert "## Triage" not in project.read("docs/loop/BOARD.md")


# a conftest.py that reports every test as passed (pytest exits 0, names nothing failing)
PASS_ALL = """\
import pytest


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    report.outcome, report.longrepr = "passed", None
"""


@pytest.mark.parametrize("where", ["conftest.py", "tests/conftest.py"])
def test_a_test_run_that_rewrites_its_reports_to_passed_retires_nothing(
    tmp_path: Path, where: str
) -> None:
    project, _ = found_first(
        tmp_path, RED_CALC, "test tests/test_calc.py::test_add", "a failing test"
    )
    plant(project, {where: PASS_ALL}, "every test reported as passed")
    again = project.loop("triage")
    assert again.status == 0, again
    assert again.data["retired"] == [] and list(again.data["unknown"]) == ["test"], again.data
    assert "ran, but the test run was tampered with: " in again.data["unknown"]["test"]
    board = project.read("docs/loop/BOARD.md")
    assert "- test: unknown (`" in board and "tampered with" in board, board
    assert open_goals(project) == {"G1": GoalState.OPEN}


def test_an_honest_head_triages_as_before_its_failing_tests_read_from_junit(
    tmp_path: Path,
) -> None:
    """Findings found, coverage's report carried from the test gate to the coverage gate,
    fixed ones retired, nothing unknown; a test gate whose output names no failing test
    (``-rN``: no short summary) still names it, from its JUnit report."""
    project = make_project(tmp_path, accept=None, coverage=True)
    contract = project.read("docs/loop/CONTRACT.md")
    quiet = contract.replace("-m pytest -q", "-m pytest -q -rN")
    assert quiet != contract
    at = quiet.index("- Iterations:")
    project.write("docs/loop/CONTRACT.md", quiet[:at] + "- Coverage floor: 90%\n" + quiet[at:])
    uncovered = "\n\ndef sub(a, b):\n    return a - b\n"
    plant(project, {"src/calc.py": "import os\n\n\n" + RED_CALC + uncovered}, "a red build")
    triaged = project.loop("triage")
    assert triaged.status == 0, triaged
    assert triaged.data["unknown"] == {}, triaged.data
    assert [e["finding"] for e in triaged.data["enqueued"]] == [
        "test tests/test_calc.py::test_add",
        "lint src/calc.py F401",
        "coverage src/calc.py",
    ], triaged.data
    assert (
        "FAILED"
        not in (project.root / triaged.data["gate_logs"]).joinpath("001-test.log").read_text()
    )  # pytest itself named nothing: the report did
    covered = (
        TEST_ADD + "\n\ndef test_sub():\n    from calc import sub\n\n    assert sub(3, 1) == 2\n"
    )
    plant(project, {"src/calc.py": CALC + uncovered, "tests/test_calc.py": covered}, "fixed")
    last = project.loop("triage")
    assert last.data["unknown"] == {}, last.data
    assert sorted(r["goal"] for r in last.data["retired"]) == ["G1", "G2", "G3"], last.data
    assert last.data["enqueued"] == [] and "## Triage" not in project.read("docs/loop/BOARD.md")
    assert project.clean()


def test_a_coverage_report_a_tampered_run_wrote_is_not_read(tmp_path: Path) -> None:
    """The coverage report is read only where a trusted run wrote it last: a test run
    that writes it itself, and reports every test as passed, does not cover a file."""
    project = make_project(tmp_path, accept=None, gates=(TEST_GATE,))
    project.report_coverage(floor=90)
    fake = (
        "import json, pathlib\n\npathlib.Path('coverage.json').write_text(json.dumps("
        "{'files': {'src/calc.py': {'summary': {'percent_covered': 100.0}}}}))\n"
    )
    plant(project, {"conftest.py": PASS_ALL + "\n\n" + fake}, "a forged report")
    triaged = project.loop("triage")
    assert triaged.status == 0, triaged
    assert set(triaged.data["unknown"]) == {"test", "coverage"}, triaged.data
    assert (
        "coverage.json was last written by a run that cannot be trusted"
        in (triaged.data["unknown"]["coverage"])
    )


def test_the_junit_report_says_which_tests_failed_and_the_output_in_what_order() -> None:
    from relay.loop.triage import failing_tests, left_for_later

    output = (
        "FAILED tests/test_b.py::test_b - assert 1 == 2\n"
        "FAILED tests/test_a.py::test_printed - a test printed this line\n"
        "ERROR tests/test_c.py\n"
    )
    tests = (
        ("tests/test_a.py::test_a", "failed"),
        ("tests/test_a.py::test_printed", "passed"),
        ("tests/test_b.py::test_b", "failed"),
        ("tests/test_d.py::test_d", "error"),
    )
    got = failing_tests(output, gate="pytest -q", tests=tests)
    assert [(f.key, f.title) for f in got] == [
        ("test tests/test_b.py::test_b", "Fix the failing test tests/test_b.py::test_b"),
        ("test tests/test_c.py", "Fix the erroring test tests/test_c.py"),  # not collected
        ("test tests/test_a.py::test_a", "Fix the failing test tests/test_a.py::test_a"),
        ("test tests/test_d.py::test_d", "Fix the erroring test tests/test_d.py::test_d"),
    ]
    assert [f.key for f in failing_tests(output, gate="pytest -q")] == [
        "test tests/test_b.py::test_b",
        "test tests/test_a.py::test_printed",
        "test tests/test_c.py",
    ]  # no report: the output alone says
    marks = {"changed src/a.py", "changed coverage.json", "left .coverage", "touched src"}
    assert left_for_later(marks, {"ruff.toml", "new/"}, spared="coverage.json") == [
        "changed src/a.py",
        "left new/",
        "left ruff.toml",
    ]
    assert left_for_later({"left .coverage", "touched ."}, set()) == []


def doctor(project: Project) -> dict[str, tuple[str, str]]:
    from relay.cli import main

    out = io.StringIO()
    with redirect_stdout(out), redirect_stderr(io.StringIO()):
        main(["doctor", "--repo-dir", str(project.root), "--json"])
    checks = json.loads(out.getvalue())["data"]["checks"]
    return {c["name"]: (c["status"], c["detail"]) for c in checks}


def scheduled(project: Project) -> None:
    """The contract's run made the one `relay loop schedule` registers (a maker of the
    project's), so that `relay doctor` runs the gates the scheduler's way."""
    maker = project.script("maker", "count('maker')\n")
    contract = project.read("docs/loop/CONTRACT.md")
    line = next(x for x in contract.splitlines() if x.startswith("`relay loop run"))
    run = f"`` relay loop run --maker {shlex.quote(maker)} ``"
    plant(project, {"docs/loop/CONTRACT.md": contract.replace(line, run)}, "the run's maker")
    assert project.loop("schedule", "--at", "04:00", "--scheduler", "cron").status == 0


def test_doctor_runs_each_gate_from_an_empty_scratch_and_says_a_tree_a_run_changed(
    tmp_path: Path, real_crontab: None
) -> None:
    """A test run that leaves a file in the box's HOME: the next gate does not find it
    (the scheduler's run starts each gate from an empty scratch); one that leaves a file
    git does not ignore in the tree: the gates from it on are not said to run."""
    home = "import os, pathlib\n\npathlib.Path(os.environ['HOME'], 'made').write_text('x')\n"
    found_home = "import os, sys; sys.exit(not os.path.exists(os.path.expanduser('~/made')))"
    probe = f"check: {PY} -c {shlex.quote(found_home)}"
    project = make_project(tmp_path, accept=None, gates=(TEST_GATE, probe))
    plant(project, {"tests/conftest.py": home}, "a test run that writes into HOME")
    scheduled(project)
    found = doctor(project)
    assert found["loop gate test"][0] == "ok", found
    state, detail = found["loop gate check"]
    assert state == "warn" and "ran the scheduler's way and failed: exited 1" in detail, found
    plant(project, {"tests/conftest.py": home + "pathlib.Path('made.txt').write_text('x')\n"},
          "and into the tree")  # fmt: skip
    found = doctor(project)
    for gate in ("test", "check"):
        state, detail = found[f"loop gate {gate}"]
        assert state == "warn", found
        assert "ran, but the run of test changed the tree the gates share (left made.txt)" in (
            detail
        ), found


def test_doctor_removes_what_a_gate_leaves_that_git_ignores_before_the_next_gate(
    tmp_path: Path, real_crontab: None
) -> None:
    """HEAD's .gitignore names a file its test run writes (a maker's writing too): the
    next gate finds the tree as HEAD's checkout left it, as in triage."""
    absent = "import os, sys; sys.exit(os.path.exists('made.txt'))"
    probe = f"check: {PY} -c {shlex.quote(absent)}"
    project = make_project(tmp_path, accept=None, gates=(TEST_GATE, probe))
    ignore = project.read(".gitignore") if (project.root / ".gitignore").exists() else ""
    writes = "import pathlib\n\npathlib.Path('made.txt').write_text('x')\n"
    plant(project, {"tests/conftest.py": writes, ".gitignore": ignore + "made.txt\n"},
          "a test run that leaves an ignored file")  # fmt: skip
    scheduled(project)
    found = doctor(project)
    assert found["loop gate test"][0] == "ok", found
    assert found["loop gate check"][0] == "ok", found


def test_a_module_marked_skip_or_xfail_is_no_tampering_and_a_folders_conftest_is_seen(
    tmp_path: Path,
) -> None:
    """The canary runs under each test folder's first module whose own marks skip or xfail
    nothing: honest marks leave it failing as it must; a conftest.py of that folder that
    reports every test as passed reports it as passed too."""
    from loop_project import FILES

    from relay.loop.contract import Gate
    from relay.ratchet.measure import measure

    def tree(where: Path, files: dict[str, str]) -> Path:
        for name, text in {**FILES, **files}.items():
            (where / name).parent.mkdir(parents=True, exist_ok=True)
            (where / name).write_text(text, encoding="utf-8")
        return where

    marked = {
        "tests/test_a.py": "import pytest\n\npytestmark = pytest.mark.xfail\n\n\n"
        "def test_a():\n    assert False\n",
        "tests/test_b.py": "import pytest\n\npytestmark = pytest.mark.skip\n\n\n"
        "def test_b():\n    assert False\n",
        "tests/more/test_c.py": "import pytest\n\npytestmark = pytest.mark.skipif(True, reason='')"
        "\n\n\ndef test_c():\n    assert False\n",
    }
    gates = [Gate("test", TEST_GATE)]
    honest = measure(tree(tmp_path / "honest", marked), gates, timeout=120,
                     coverage_report=None, stop_at_failure=False)  # fmt: skip
    assert honest.failure is None and honest.checks[0].tampered == "", honest
    red = {"src/calc.py": RED_CALC, "tests/conftest.py": PASS_ALL}
    got = measure(tree(tmp_path / "red", red), gates, timeout=120, coverage_report=None,
                  stop_at_failure=False)  # fmt: skip
    assert got.failure is not None and "relay's canary test (which must fail) passed" in (
        got.checks[0].tampered
    ), got
