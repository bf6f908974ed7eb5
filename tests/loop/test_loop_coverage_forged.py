"""Coverage forged by the code it measures is never counted. On a real repository with
real pytest and coverage as gates (``coverage run -m pytest``, then ``coverage json``):
a change whose added test marks lines covered that no test ran (through coverage's own
API, code compiled under the module's file name, or its data file edited) is held for a
person, never kept as "coverage not lower"; triage does not retire a coverage goal on a
HEAD whose tests do that; and coverage's data a run leaves for a later gate to read,
where no gate that runs coverage left it, is removed before that gate runs."""

from __future__ import annotations

from pathlib import Path

import pytest
from coverage import CoverageData
from loop_project import CALC, CALC_MUL, FILES, PY, TEST_GATE, TEST_MUL, Project, make_project
from test_loop_triage_judged import open_goals, plant

from relay.loop.goals import GoalState

# untested code: the coverage gate sees it fall
UNTESTED = (
    CALC_MUL
    + "\n\ndef div(a, b):\n    if b == 0:\n        raise ZeroDivisionError\n    return a / b\n"
)
_CALC = "CALC = os.path.abspath('src/calc.py')\n"
# every line of src/calc.py marked as run, three ways
FORGERS = {
    "api": (
        "import os\n\nimport coverage\n\n" + _CALC + "\n\ndef test_forged():\n"
        "    cov = coverage.Coverage.current()\n"
        "    if cov is not None:\n"
        "        cov.get_data().add_lines({CALC: list(range(1, 40))})\n"
    ),
    "compiled": (
        "import os\nimport types\n\n" + _CALC + "\n\ndef test_forged():\n"
        "    for n in range(1, 40):\n"
        "        types.FunctionType(compile('\\n' * (n - 1) + 'x = 1', CALC, 'exec'), {})()\n"
    ),
    "data-file": (
        "import atexit\nimport os\nimport sqlite3\n\n" + _CALC + "\n\ndef _forge():\n"
        "    db = sqlite3.connect('.coverage')\n"
        "    bits = bytes([255] * 8)\n"
        "    for (i,) in db.execute('select id from file'):\n"
        "        db.execute('update line_bits set numbits = ? where file_id = ?', (bits, i))\n"
        "    db.commit()\n\n\natexit.register(_forge)\n\n\ndef test_forged():\n"
        "    assert CALC\n"
    ),
}


# what the hold names, for each forgery
HELD = {
    "api": "tests/test_forged.py:3: imports coverage",
    "compiled": "tests/test_forged.py:9: compiles code under a file's name",
    "data-file": "tests/test_forged.py:3: imports sqlite3",
}


@pytest.mark.parametrize("how", sorted(FORGERS))
def test_a_change_whose_test_forges_coverage_is_held_for_a_person(tmp_path: Path, how: str) -> None:
    """Untested code, and a test that marks its lines run: coverage does not fall, every
    gate passes, and the change is held with the file, line and construct (no strike)."""
    project = make_project(tmp_path, retries=0, coverage=True)
    maker = project.script(
        "maker",
        f"put('src/calc.py', {UNTESTED!r})\nput('tests/test_mul.py', {TEST_MUL!r})\n"
        f"put('tests/test_forged.py', {FORGERS[how]!r})\n",
    )
    ran = project.loop("run", "--maker", maker)
    assert ran.data["kept"] == [], ran
    assert project.read("src/calc.py") == CALC and project.clean()
    project.held(HELD[how])


def floor_project(tmp_path: Path, gates: tuple[str, ...] | None = None) -> Project:
    """The calc project with coverage's gates (or ``gates``, the report `coverage.json`), a
    90% floor and HEAD holding untested code: triage enqueues its coverage goal first."""
    project = make_project(tmp_path, accept=None, coverage=gates is None, gates=gates or ())
    project.report_coverage(floor=90)
    # coverage's parallel files ignored and its paths relative, as a person's set-up often
    # has them
    ignore = FILES[".gitignore"] + ".coverage.*\n"
    pyproject = FILES["pyproject.toml"] + "relative_files = true\n"
    assert pyproject.endswith('source = ["src"]\nrelative_files = true\n')
    files = {"src/calc.py": UNTESTED, ".gitignore": ignore, "pyproject.toml": pyproject}
    plant(project, files, "a file below the floor")
    first = project.loop("triage")
    assert [e["finding"] for e in first.data["enqueued"]] == ["coverage src/calc.py"], first.data
    return project


@pytest.mark.parametrize("how", sorted(FORGERS))
def test_triage_does_not_retire_a_coverage_goal_on_tests_that_forge_coverage(
    tmp_path: Path, how: str
) -> None:
    project = floor_project(tmp_path)
    plant(project, {"tests/test_forged.py": FORGERS[how]}, "a test that forges coverage")
    again = project.loop("triage")
    assert again.status == 0, again
    assert again.data["retired"] == [], again.data
    why = again.data["unknown"]["coverage"]
    assert "HEAD's test code reaches into coverage's machinery" in why, why
    assert HELD[how] in why, why
    assert open_goals(project) == {"G1": GoalState.OPEN}


# a test module that, when collected where no coverage runs, writes a parallel data file
# of coverage's saying every line of src/calc.py ran (its names built where no static rule
# folds them)
PLANT = """\
import importlib
import os

if not os.environ.get("COVERAGE_RUN"):  # only where no coverage runs: the plain test gate
    _w = "cover"
    _data = importlib.import_module(_w + "age").CoverageData("." + _w + "age.planted")
    _data.add_lines({"src/calc.py": list(range(1, 40))})
    _data.write()


def test_more():
    assert True
"""
COMBINED = (
    TEST_GATE,
    f"cov: {PY} -m coverage run -p -m pytest -q -p no:cacheprovider",
    f"combine: {PY} -m coverage combine -q",
    f"coverage: {PY} -m coverage json -q -o coverage.json",
)


def test_coverage_data_a_run_of_no_coverage_gate_leaves_is_not_combined(tmp_path: Path) -> None:
    """The plain test gate's run leaves a parallel data file (ignored by HEAD's
    .gitignore); it is removed before the next gate, so `coverage combine` never reads it:
    the file stays below the floor."""
    project = floor_project(tmp_path, COMBINED)
    plant(project, {"tests/test_planted.py": PLANT}, "a test run that plants coverage's data")
    again = project.loop("triage")
    assert again.status == 0, again
    assert again.data["retired"] == [] and again.data["unknown"] == {}, again.data
    assert "coverage src/calc.py" in [f["key"] for f in again.data["findings"]], again.data
    assert open_goals(project) == {"G1": GoalState.OPEN}


def test_coverage_data_head_tracks_is_never_read(tmp_path: Path) -> None:
    """A parallel data file committed to HEAD: removed before the first gate runs, so
    `coverage combine` never reads it."""
    project = floor_project(tmp_path, COMBINED)
    forged = project.root / ".coverage.planted"
    data = CoverageData(str(forged))
    data.add_lines({"src/calc.py": list(range(1, 40))})  # relative_files: as the box reads it
    data.write()
    project.git("add", "-f", ".coverage.planted")
    project.git("commit", "-qm", "coverage's data committed")
    again = project.loop("triage")
    assert again.status == 0, again
    assert again.data["retired"] == [] and again.data["unknown"] == {}, again.data
    assert "coverage src/calc.py" in [f["key"] for f in again.data["findings"]], again.data
    assert open_goals(project) == {"G1": GoalState.OPEN}
    assert forged.exists()  # the person's clone is never touched


# a test module that, where no coverage runs, rewrites the report a gate before wrote
REWRITE = """\
import json
import os

if not os.environ.get("COVERAGE_RUN"):
    _w = "cover"
    with open(_w + "age.json", "w") as _f:
        _f.write(json.dumps({"files": {"src/calc.py": {"summary": {"percent_covered": 100.0}}},
                             "totals": {"covered_lines": 9, "num_statements": 9}}))


def test_more():
    assert True
"""


def test_a_report_a_run_of_no_coverage_gate_rewrites_is_not_read(tmp_path: Path) -> None:
    """The coverage gates write the report; a later plain test gate's run (trusted: no
    tampering) rewrites it. It is removed, and coverage is unknown, never retired."""
    from loop_project import COVERAGE_GATES

    project = floor_project(tmp_path, (*COVERAGE_GATES, f"later: {TEST_GATE}"))
    plant(project, {"tests/test_rewrite.py": REWRITE}, "a test run that rewrites the report")
    again = project.loop("triage")
    assert again.status == 0, again
    assert again.data["retired"] == [], again.data
    why = again.data["unknown"]["coverage"]
    assert "coverage.json was last written by a run that cannot be trusted: the run of later" in (
        why
    ), why
    assert open_goals(project) == {"G1": GoalState.OPEN}
    log = sorted((project.root / again.data["gate_logs"]).glob("*later*.log"))[-1]
    assert "[relay] removed coverage.json: coverage's, written by a run that runs none" in (
        log.read_text()
    )


def test_which_runs_may_leave_coverages_data_for_a_later_gate() -> None:
    from relay.loop.triage import coverage_moved, is_coverage_data, leaves_coverage

    def leaves(command: str, configured: bool = False, name: str = "test") -> bool:
        return leaves_coverage(name, command, configured=configured)

    assert leaves("python -m coverage run -m pytest") and leaves("coverage run -p -m pytest")
    assert leaves("coverage combine") and leaves("pytest --cov=src --cov-report=json")
    assert leaves("pytest -q", configured=True)  # addopts turn pytest-cov on
    assert leaves("make test") and leaves("tox -e py311")  # relay does not read into them
    assert not leaves("pytest -q") and not leaves("python -m pytest tests/slow")
    assert not leaves("ruff check .", name="lint") and not leaves("mypy src", name="types")
    assert not leaves("python -m pytest --covers-nothing")  # a word, not the flag
    assert is_coverage_data(".coverage") and is_coverage_data(".coverage.host.12.Xab")
    assert not is_coverage_data(".coveragerc") and not is_coverage_data("coverage.json")
    had = {".coverage": "a", "coverage.json": "b"}
    now = {".coverage": "a", "coverage.json": "c", ".coverage.x": "d"}
    assert coverage_moved(had, now) == [".coverage.x", "coverage.json"]
    assert coverage_moved(now, now) == []


def test_a_change_whose_later_plain_test_run_rewrites_the_report_is_not_kept(
    tmp_path: Path,
) -> None:
    """The ratchet's "coverage not lower" read from a report a plain test gate's run
    rewrote after the coverage gates wrote it (in place: the tree looks as the baseline's
    run left it): the report is removed, and the change fails as one that wrote none."""
    from loop_project import COVERAGE_GATES, LINT_GATE

    project = make_project(tmp_path, retries=0, gates=(*COVERAGE_GATES, LINT_GATE,
                                                       f"later: {TEST_GATE}"))  # fmt: skip
    project.report_coverage()
    project.git("commit", "-qam", "the coverage report")
    maker = project.script(
        "maker",
        f"put('src/calc.py', {UNTESTED!r})\nput('tests/test_mul.py', {TEST_MUL!r})\n"
        f"put('tests/test_rewrite.py', {REWRITE!r})\n",
    )
    ran = project.loop("run", "--maker", maker)
    assert ran.data["kept"] == [], ran
    assert project.read("src/calc.py") == CALC and project.clean()
    failures = project.read("docs/loop/state/failures.md")
    assert "the coverage report was not written" in failures, failures


def test_a_pytest_configuration_that_turns_pytest_cov_on_is_seen(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A plain `pytest` gate writes coverage's data where the project's pytest
    configuration (or PYTEST_ADDOPTS) turns pytest-cov on: its data is then left alone."""
    from relay.ratchet.measure import pytest_covers

    monkeypatch.delenv("PYTEST_ADDOPTS", raising=False)
    (tmp_path / "pyproject.toml").write_text(FILES["pyproject.toml"])
    assert not pytest_covers(tmp_path, ["pyproject.toml"])
    (tmp_path / "setup.cfg").write_text("[tool:pytest]\naddopts = --cov=src --cov-report=json\n")
    assert not pytest_covers(tmp_path, ["pyproject.toml"])  # only what the commit tracks
    assert pytest_covers(tmp_path, ["pyproject.toml", "setup.cfg"])
    monkeypatch.setenv("PYTEST_ADDOPTS", "--cov=src")
    assert pytest_covers(tmp_path, [])


def test_a_change_whose_plain_test_run_plants_coverage_data_is_not_kept(tmp_path: Path) -> None:
    """The ratchet's side of the planted parallel file: the baseline's plain test run leaves
    none of coverage's data, so the candidate's run that leaves one changed the tree it was
    judged in, and fails."""
    project = make_project(tmp_path, retries=0, gates=COMBINED)
    project.report_coverage()
    ignore = FILES[".gitignore"] + ".coverage.*\n"
    pyproject = FILES["pyproject.toml"] + "relative_files = true\n"
    project.write(".gitignore", ignore)
    project.write("pyproject.toml", pyproject)
    project.git("commit", "-qam", "the coverage report, parallel files ignored, paths relative")
    maker = project.script(
        "maker",
        f"put('src/calc.py', {UNTESTED!r})\nput('tests/test_mul.py', {TEST_MUL!r})\n"
        f"put('tests/test_planted.py', {PLANT!r})\n",
    )
    ran = project.loop("run", "--maker", maker)
    assert ran.data["kept"] == [], ran
    failures = project.read("docs/loop/state/failures.md")
    assert "changed the tree it was judged in (left .coverage.planted)" in failures, failures
