"""Triage retires a finding only where a trusted run observed it gone. HEAD holds code a
maker wrote, its ``.gitignore`` and its conftest.py included: on a real repository with
real pytest, ruff and coverage as gates, a test run that leaves an ignored ruff
configuration for the lint gate, a conftest.py that deselects or skips a failing test, one
that rewrites every report but the canary's (told by its place outside the session's
items, or by its name), or a coverage run whose test run was tampered with, retires
nothing. A test deleted from the tree is still retired."""

from __future__ import annotations

from pathlib import Path

import pytest
from loop_project import CALC, make_project
from test_loop_triage_judged import (
    LINT_CALC,
    PASS_ALL,
    RED_CALC,
    found_first,
    open_goals,
    plant,
)

from relay.loop.goals import Goal, GoalState

TEST_ADD = "test tests/test_calc.py::test_add"


@pytest.mark.parametrize("name", [".ruff.toml", ".ignore"])
def test_what_a_test_run_leaves_that_head_ignores_is_swept_before_the_lint_gate(
    tmp_path: Path, name: str
) -> None:
    """HEAD's .gitignore names the file its test run writes: git ignores it, and it is
    removed before the lint gate runs, which sees the finding as before."""
    project, _ = found_first(tmp_path, LINT_CALC, "lint src/calc.py F401", "a lint finding")
    text = {".ruff.toml": 'extend-exclude = [\\"src\\"]\\n', ".ignore": "*\\n"}[name]
    module = (
        f'import pathlib\n\npathlib.Path({name!r}).write_text("{text}")'
        "\n\n\ndef test_more():\n    assert True\n"
    )
    ignore = project.read(".gitignore") + f"{name}\n"
    plant(project, {"tests/test_more.py": module, ".gitignore": ignore}, "an ignored config")
    again = project.loop("triage")
    assert again.status == 0, again
    assert again.data["retired"] == [] and again.data["unknown"] == {}, again.data
    assert [f["key"] for f in again.data["findings"]] == ["lint src/calc.py F401"], again.data
    assert open_goals(project) == {"G1": GoalState.OPEN}


DESELECT = (
    "def pytest_collection_modifyitems(config, items):\n"
    "    items[:] = [i for i in items if i.name != 'test_add']\n"
)
SKIP = (
    "import pytest\n\n\ndef pytest_collection_modifyitems(config, items):\n"
    "    for item in items:\n"
    "        if item.name == 'test_add':\n"
    "            item.add_marker(pytest.mark.skip(reason='later'))\n"
)


@pytest.mark.parametrize("conftest", [DESELECT, SKIP], ids=["deselected", "skipped"])
def test_a_failing_test_the_run_leaves_out_is_not_retired_and_a_deleted_one_is(
    tmp_path: Path, conftest: str
) -> None:
    project, _ = found_first(tmp_path, RED_CALC, TEST_ADD, "a failing test")
    more = "def test_more():\n    assert True\n"
    plant(project, {"tests/conftest.py": conftest, "tests/test_more.py": more}, "left out")
    again = project.loop("triage")
    assert again.status == 0, again
    assert again.data["retired"] == [], again.data
    assert open_goals(project) == {"G1": GoalState.OPEN}
    # the test deleted (its function gone from its file): gone, and retired
    plant(project, {"tests/test_calc.py": "def test_other():\n    assert True\n"}, "deleted")
    last = project.loop("triage")
    assert [r["goal"] for r in last.data["retired"]] == ["G1"], last.data


# every report rewritten to passed but the canary's: told by the session's items, or by
# its name, the call's exception dropped too
BY_ITEMS = """\
import pytest


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    if item in item.session.items:
        report.outcome, report.longrepr = "passed", None
"""
BY_NAME = """\
import re

import pytest


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    real = not re.fullmatch(r"test_[0-9a-f]{12}", item.name)
    if real and call.when == "call":
        call.excinfo = None
    outcome = yield
    if real:
        report = outcome.get_result()
        report.outcome, report.longrepr = "passed", None
"""
LATE = """\
import re

import pytest


@pytest.hookimpl(hookwrapper=True, tryfirst=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    if not re.fullmatch(r"test_[0-9a-f]{12}", item.name):
        report = outcome.get_result()
        report.outcome, report.longrepr = "passed", None
"""


@pytest.mark.parametrize(
    ("conftest", "said"),
    [
        (BY_ITEMS, "relay's canary test (which must fail) passed"),
        (BY_NAME, "whose call raised, says passed"),
        (LATE, "was changed from failed to passed after pytest made it"),
    ],
    ids=["by-items", "by-name", "tryfirst"],
)
def test_a_conftest_that_passes_every_report_but_the_canarys_retires_nothing(
    tmp_path: Path, conftest: str, said: str
) -> None:
    project, _ = found_first(tmp_path, RED_CALC, TEST_ADD, "a failing test")
    plant(project, {"tests/conftest.py": conftest}, "reports rewritten")
    again = project.loop("triage")
    assert again.status == 0, again
    assert again.data["retired"] == [] and list(again.data["unknown"]) == ["test"], again.data
    why = again.data["unknown"]["test"]
    assert "ran, but the test run was tampered with: " in why, why
    assert said in why, why
    assert open_goals(project) == {"G1": GoalState.OPEN}


def test_coverage_measured_by_a_tampered_test_run_is_unknown(tmp_path: Path) -> None:
    """`coverage run` of a test run that was tampered with, then an honest `coverage
    json`: the report is written by a trusted run, but of data an untrusted one left."""
    project = make_project(tmp_path, accept=None, coverage=True)
    contract = project.read("docs/loop/CONTRACT.md")
    at = contract.index("- Iterations:")
    project.write(
        "docs/loop/CONTRACT.md", contract[:at] + "- Coverage floor: 90%\n" + contract[at:]
    )
    uncovered = "\n\ndef sub(a, b):\n    return a - b\n"
    plant(project, {"src/calc.py": CALC + uncovered}, "a file below the floor")
    first = project.loop("triage")
    assert [e["finding"] for e in first.data["enqueued"]] == ["coverage src/calc.py"], first.data
    plant(project, {"tests/conftest.py": PASS_ALL}, "reports rewritten")
    again = project.loop("triage")
    assert again.status == 0, again
    assert sorted(again.data["unknown"]) == ["coverage", "test"], again.data
    assert "was last written by a run that cannot be trusted" in again.data["unknown"]["coverage"]
    assert again.data["retired"] == [], again.data


def test_which_failing_tests_triage_saw_gone() -> None:
    from relay.loop.triage import retired, tests_cleared, to_sweep

    goals = tuple(
        Goal(f"G{n}", "t", "pytest", finding=f"test {node}")
        for n, node in enumerate(
            [
                "tests/t.py::test_a",  # passed
                "tests/t.py::test_b",  # still in its file, did not run
                "tests/t.py::TestC::test_c[x-1]",  # gone from its file
                "tests/gone.py::test_d",  # its file gone
                "tests/u.py",  # could not be collected; now collected
                "tests/v.py",  # could not be collected; still not collected
            ],
            start=1,
        )
    )
    texts = {
        "tests/t.py": "def test_a():\n    pass\n\n\ndef test_b():\n    pass\n",
        "tests/u.py": "def test_u():\n    pass\n",
        "tests/v.py": "import nothing\n",
    }
    tests = [("tests/t.py::test_a", "passed"), ("tests/u.py::test_u", "passed")]
    cleared = tests_cleared(goals, tests, texts)
    assert sorted(cleared) == [
        "test tests/gone.py::test_d",
        "test tests/t.py::TestC::test_c[x-1]",
        "test tests/t.py::test_a",
        "test tests/u.py",
    ]
    from relay.loop.goals import BoardRow

    # a test named only as data (test_b = _b), its file's tests not run: not seen gone
    named = {"tests/t.py": "def _b():\n    pass\n\n\ntest_b = _b\n"}
    assert tests_cleared(goals[1:2], [], named) == frozenset()
    assert tests_cleared(goals[1:2], [("tests/t.py::test_z", "passed")], {"tests/t.py": ""}) == {
        "test tests/t.py::test_b"
    }
    rows = {g.id: BoardRow(g.id, g.title) for g in goals}
    assert [r.goal for r in retired([], goals, rows, {}, cleared)] == ["G1", "G3", "G4", "G5"]
    # what git ignores goes before the next gate, but coverage's data and its report
    left = {".ruff.toml", ".pytest_cache/", ".coverage", ".coverage.host.1.x", "coverage.json",
            "src/.ignore", "build/"}  # fmt: skip
    assert to_sweep(left, spared="coverage.json") == [
        ".pytest_cache/", ".ruff.toml", "build/", "src/.ignore",
    ]  # fmt: skip


# rewrites the JUnit report once pytest has written it: test_add's failure taken out
FORGE_JUNIT = """\
import atexit
import os
import re


def _forge():
    found = re.search(r"--junitxml=(\\S+)", os.environ.get("PYTEST_ADDOPTS", ""))
    if found:
        with open(found.group(1)) as report:
            text = report.read()
        shape = r'(<testcase [^>]*name="test_add"[^>]*>).*?</testcase>'
        with open(found.group(1), "w") as report:
            report.write(re.sub(shape, r"\\1</testcase>", text, flags=re.S))


atexit.register(_forge)
"""


def test_a_junit_report_rewritten_after_pytest_wrote_it_retires_nothing(tmp_path: Path) -> None:
    """Another test still fails (pytest exits 1 as its session did); the report says
    test_add passed, relay's plugin signed that it failed."""
    project, _ = found_first(tmp_path, RED_CALC, TEST_ADD, "a failing test")
    other = "def test_other():\n    assert 1 == 2\n"
    plant(project, {"tests/conftest.py": FORGE_JUNIT, "tests/test_other.py": other}, "forged")
    again = project.loop("triage")
    assert again.status == 0, again
    assert again.data["retired"] == [] and list(again.data["unknown"]) == ["test"], again.data
    why = again.data["unknown"]["test"]
    assert "the JUnit report says tests/test_calc.py::test_add passed, but relay's" in why, why
    assert open_goals(project)["G1"] == GoalState.OPEN


# pytest-rerunfailures' way (a failed report logged as "rerun", the test run again); with
# RERUNS = 0 the failure is logged as "rerun" and never run again
RERUN = """\
from _pytest.runner import runtestprotocol

RERUNS = {reruns}


def pytest_runtest_protocol(item, nextitem):
    item.ihook.pytest_runtest_logstart(nodeid=item.nodeid, location=item.location)
    for attempt in range(RERUNS + 1):
        reports = runtestprotocol(item, nextitem=nextitem, log=False)
        failed = any(r.failed for r in reports)
        for report in reports:
            if report.failed and (attempt < RERUNS or not RERUNS):
                report.outcome = "rerun"
            item.ihook.pytest_runtest_logreport(report=report)
        if not failed or not RERUNS:
            break
    item.ihook.pytest_runtest_logfinish(nodeid=item.nodeid, location=item.location)
    return True
"""
FLAKY = "RUNS = []\n\n\ndef test_flaky():\n    RUNS.append(1)\n    assert len(RUNS) > 1\n"


@pytest.mark.parametrize("reruns", [1, 0], ids=["rerun", "never-run-again"])
def test_a_report_marked_for_a_rerun_is_no_tampering_and_a_rerun_that_never_comes_is(
    tmp_path: Path, reruns: int
) -> None:
    from loop_project import FILES, TEST_GATE

    from relay.loop.contract import Gate
    from relay.ratchet.measure import measure

    files = {**FILES, "tests/conftest.py": RERUN.format(reruns=reruns), "tests/test_f.py": FLAKY}
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text, encoding="utf-8")
    got = measure(tmp_path, [Gate("test", TEST_GATE)], timeout=120, coverage_report=None,
                  stop_at_failure=False)  # fmt: skip
    if reruns:
        assert got.failure is None and got.checks[0].tampered == "", got
    else:
        assert "the JUnit report says tests/test_f.py::test_flaky passed, but relay's" in (
            got.checks[0].tampered
        ), got
