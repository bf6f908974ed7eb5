"""A checker's `Limits: turns 1` counts the same in a parallel run as in a sequential
one: a candidate its worktree judged within the turn is judged again on the moved main
line without being blocked as out of turns, so two independent goals are both kept."""

from __future__ import annotations

from pathlib import Path

import pytest
from loop_project import board_rows, goals_project
from test_loop_parallel_group import MAKER, _accept
from test_loop_roster_limits import with_roles

from relay.loop.goals import GoalState


@pytest.fixture(autouse=True)
def _quick_pytest(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")


APPROVE = """
count("review")
print(cite())
print('{"verdict": "approve", "findings": []}')
"""


@pytest.mark.timeout(300)
def test_re_judging_on_the_moved_main_line_spends_no_new_turn(tmp_path: Path) -> None:
    project = goals_project(
        tmp_path, [("Mul", _accept("mul"), (), None), ("Beta", _accept("beta"), (), None)]
    )
    maker, checker = project.script("maker", MAKER), project.script("checker", APPROVE)
    with_roles(
        project,
        f"- maker: command `{maker}`\n- code-reviewer: command `{checker}`\n  - Limits: turns 1\n",
    )
    ran = project.loop("run", "--parallel", "2")
    assert ran.status == 0, ran
    assert sorted(k["goal"] for k in ran.data["kept"]) == ["G1", "G2"], ran.data
    rows = board_rows(project)
    assert rows["G1"][0] is GoalState.DONE and rows["G2"][0] is GoalState.DONE, rows
    assert ran.data["blocked"] == [], ran.data
    # each goal judged in its worktree, the later one again on the moved main line
    assert project.calls("review") == 3, project.calls("review")
    assert project.clean()
