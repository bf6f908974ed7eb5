"""The contract's run count for a metric: `relay loop init` writes `Metric runs: 5`, an
optimisation goal with no `--runs` is measured that many times on each arm (interleaved),
so a change within the machine's noise is not kept; a contract without the line gets the
default, said on the board; one run is taken only when asked, and the board says the noise
is then not measured."""

from __future__ import annotations

import shlex
from pathlib import Path

import pytest
from loop_project import PY, TEST_GATE, Project, make_project

from relay.loop.contract import DEFAULT_METRIC_RUNS, parse_contract
from relay.loop.goals import parse_goals


@pytest.fixture(autouse=True)
def _quick_pytest(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PYTHONDONTWRITEBYTECODE", "1")
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")


def noisy_metric(project: Project) -> tuple[str, Path]:
    """A metric whose machine is loaded now and then: every third run (counted in a log
    the boxes share) reads 30% slow, whatever the code."""
    log = project.scripts / "metric.log"
    code = (
        f"import pathlib; log = pathlib.Path({str(log)!r}); cost = int(open('cost.txt').read());"
        " n = len(log.read_text().split()) if log.exists() else 0;"
        " log.write_text((log.read_text() if log.exists() else '') + str(cost) + ' ');"
        " print(cost * (1.3 if n % 3 == 0 else 1.0))"
    )
    return f"{PY} -c {shlex.quote(code)}", log


def cost_project(tmp_path: Path) -> Project:
    project = make_project(tmp_path, gates=(TEST_GATE,), retries=0, accept=None)
    project.write("cost.txt", "100\n")
    project.git("add", "-A")
    project.git("commit", "-qm", "the cost the metric reads")
    return project


def bound(project: Project, name: str) -> str:
    """One line of the board's bounds section, by its name."""
    board = project.read("docs/loop/BOARD.md")
    [line] = [x for x in board.splitlines() if x.startswith(f"- {name}: ")]
    return line


def test_init_writes_the_run_count_and_a_goal_without_runs_takes_it(tmp_path: Path) -> None:
    """The default is several runs of each arm, interleaved: a 10% gain measured while
    every third run reads 30% slow is within the noise and is not kept (one run of each
    would have kept it)."""
    project = cost_project(tmp_path)
    contract = project.read("docs/loop/CONTRACT.md")
    assert f"- Metric runs: {DEFAULT_METRIC_RUNS}\n" in contract
    assert parse_contract(contract).budget.metric_runs == DEFAULT_METRIC_RUNS
    metric, log = noisy_metric(project)
    added = project.loop(
        "goal", "add", "Cheaper", "--metric", metric, "--direction", "down", "--threshold", "5"
    )  # fmt: skip
    assert added.status == 0, added
    [goal] = parse_goals(project.read("docs/loop/GOALS.md")).goals
    assert goal.runs is None and "- Runs:" not in project.read("docs/loop/GOALS.md")
    maker = project.script("maker", 'put("cost.txt", "90\\n")\nprint("IDEA: cheaper")\n')
    ran = project.loop("run", "--maker", maker)
    assert ran.status == 0, ran
    assert ran.data["kept"] == [], ran
    # five runs at the goal's start, then five of the baseline and five of the candidate,
    # alternately
    assert log.read_text().split() == ["100"] * 5 + ["100", "90"] * 5
    ledger = project.read("docs/loop/EXPERIMENTS.md")
    assert "over 5 interleaved runs each" in ledger and "the change is within the noise" in ledger
    assert project.read("cost.txt") == "100\n"
    assert bound(project, "Metric runs") == (
        "- Metric runs: 5 of the baseline and 5 of the candidate, interleaved; medians and"
        " spread (the contract's `Metric runs:`)"
    )


def test_a_contract_without_the_line_gets_the_default_said_on_the_board(tmp_path: Path) -> None:
    project = cost_project(tmp_path)
    contract = project.read("docs/loop/CONTRACT.md")
    project.write("docs/loop/CONTRACT.md", contract.replace("- Metric runs: 5\n", ""))
    project.git("commit", "-qam", "a contract written before the run count")
    assert parse_contract(project.read("docs/loop/CONTRACT.md")).budget.metric_runs is None
    metric, log = noisy_metric(project)
    args = ("--metric", metric, "--direction", "down", "--threshold", "5")
    assert project.loop("goal", "add", "Cheaper", *args).status == 0
    maker = project.script("maker", 'put("cost.txt", "90\\n")\nprint("IDEA: cheaper")\n')
    ran = project.loop("run", "--maker", maker)
    assert ran.status == 0 and ran.data["kept"] == [], ran
    assert len(log.read_text().split()) == 5 + 2 * 5
    line = bound(project, "Metric runs")
    assert "5 of the baseline and 5 of the candidate" in line
    assert "relay's default: the contract has no `Metric runs:` line" in line


def test_the_contracts_run_count_is_read_and_checked(tmp_path: Path) -> None:
    project = cost_project(tmp_path)
    contract = project.read("docs/loop/CONTRACT.md")
    three = contract.replace("- Metric runs: 5\n", "- Metric runs: 3\n")
    assert parse_contract(three).budget.runs() == 3
    project.write(
        "docs/loop/CONTRACT.md", contract.replace("- Metric runs: 5\n", "- Metric runs: 0\n")
    )
    checked = project.loop("check")
    assert checked.status != 0 and "Metric runs is a whole number of at least 1" in str(checked)


def test_one_run_is_taken_only_when_asked_and_the_board_says_so(tmp_path: Path) -> None:
    """`--runs 1` overrides the contract: one run of each arm, and the board and the
    ledger say the noise was not measured."""
    project = cost_project(tmp_path)
    metric, log = noisy_metric(project)
    args = ("--metric", metric, "--direction", "down", "--threshold", "5", "--runs", "1")
    assert project.loop("goal", "add", "Cheaper", *args).status == 0
    assert "- Runs: 1\n" in project.read("docs/loop/GOALS.md")
    maker = project.script("maker", 'put("cost.txt", "90\\n")\nprint("IDEA: cheaper")\n')
    ran = project.loop("run", "--maker", maker)
    assert ran.status == 0, ran
    [kept] = ran.data["kept"]  # one run each: the threshold alone decides
    assert "noise not measured (1 run each)" in kept["gates"]
    assert log.read_text().split() == ["100", "100", "90"]
    assert bound(project, "Metric runs of G1") == (
        "- Metric runs of G1: 1 of the baseline and 1 of the candidate; noise not measured"
        " (the goal's `Runs:` (--runs))"
    )
