"""The roster's limits hold where they apply, on a real project with scripted roles: a
maker out of its `turns` on a goal stops there, the goal blocked for a person with the
reason, and the run goes on; a managed maker's copies cap its threads in a session (the
one beyond is interrupted, against the stand-in of the Managed Agents API); and `relay
loop check` refuses limits that cannot hold. (`copies` of a local maker:
test_loop_roster_copies.py.)"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import managed_standin
import pytest
from loop_project import PY, TEST_GATE, Project, make_project
from managed_standin import Standin

from relay.loop.goals import GoalState, parse_board

standin_process = managed_standin.standin_process  # the fixtures, shared
standin = managed_standin.standin


@pytest.fixture(autouse=True)
def _quick_pytest(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")


def with_roles(project: Project, roles: str) -> None:
    """LOOP.md's `## Roles` with ``roles`` after its prose, committed."""
    loop = project.read("docs/loop/LOOP.md")
    head, _, rest = loop.partition("## Roles\n")
    body, sep, tail = rest.partition("\n## ")
    project.write(
        "docs/loop/LOOP.md", f"{head}## Roles\n{body.rstrip()}\n\n{roles}\n{sep.lstrip()}{tail}"
    )
    project.git("commit", "-qam", "the roster")


def test_a_maker_out_of_turns_stops_on_its_goal_and_the_run_goes_on(tmp_path: Path) -> None:
    project = make_project(tmp_path, gates=(TEST_GATE,), retries=5)
    accept = f"{PY} -m pytest -q -p no:cacheprovider tests/test_neg.py"
    assert project.loop("goal", "add", "Negate", "--accept", accept).status == 0
    maker = project.script(
        "maker",
        """
        import re
        goal = re.search(r"^# (G[0-9]+):", BRIEF, re.M).group(1)
        count(goal)
        if goal == "G1":  # a wrong mul, every time: its acceptance test fails
            put("src/calc.py", "def add(a, b):\\n    return a + b\\n\\n\\ndef mul(a, b):\\n    return a + b\\n")
            put("tests/test_mul.py", "from calc import mul\\n\\n\\ndef test_mul():\\n    assert mul(2, 3) == 6\\n")
        else:
            put("src/neg.py", "def neg(a):\\n    return -a\\n")
            put("tests/test_neg.py", "from neg import neg\\n\\n\\ndef test_neg():\\n    assert neg(2) == -2\\n")
        """,  # noqa: E501
    )
    with_roles(project, f"- maker: command `{maker}`\n  - Limits: turns 2\n")
    ran = project.loop("run")
    assert ran.status == 0, ran
    # five retries allowed, two turns: the maker was asked twice on G1, then stopped there
    assert project.calls("G1") == 2, ran
    why = (
        "maker has used its 2 turns on G1 (2 asked; LOOP.md's roster: Limits: turns 2):"
        " raise the limit or split the goal"
    )
    board = parse_board(project.read("docs/loop/BOARD.md"))
    g1 = next(r for r in board.rows if r.goal == "G1")
    assert g1.state is GoalState.BLOCKED and g1.notes == why, g1
    assert ran.data["blocked"] == [{"goal": "G1", "blocker": why}]
    # the run went on: G2 was made and kept
    assert [k["goal"] for k in ran.data["kept"]] == ["G2"]
    assert project.calls("G2") == 1 and project.clean()
    assert "loop: G1 out of turns" in project.subjects()


def test_check_refuses_limits_that_cannot_hold(tmp_path: Path) -> None:
    project = make_project(tmp_path, gates=(TEST_GATE,))
    with_roles(
        project,
        "- maker: node win-desktop\n  - Limits: copies 2\n"
        "- code-reviewer: agent codex\n  - Limits: turns 0\n",
    )
    checked = project.loop("check")
    assert checked.status != 0
    said = " ".join(e["message"] for e in checked.errors) + str(checked.data)
    assert "copies 2 on 1 node(s)" in said and "turns 0: it could never run" in said, checked
    run = project.loop("run")
    assert run.status != 0 and "cannot run" in run.errors[0]["message"]


def test_a_managed_makers_copies_cap_its_threads(
    tmp_path: Path, standin: Callable[..., Standin]
) -> None:
    project = make_project(tmp_path, gates=(TEST_GATE,))
    with_roles(
        project,
        "- maker: managed-agent\n  - Limits: copies 2\n- code-reviewer: managed-agent\n",
    )
    # three maker threads at once; the third holds until it is interrupted (without the
    # cap, the session would never end)
    api = standin(
        [
            [
                {"spawn": "maker", "as": "m1"},
                {"spawn": "maker", "as": "m2"},
                {"spawn": "maker", "as": "m3"},
                {"in": "m3", "hold": True},
                {"in": "m1", "idle": True},
                {"in": "m2", "idle": True},
                {"say": "nothing to claim"},
            ]
        ]
    )
    assert project.loop("roster", "create", "--backend", "managed-agents").status == 0
    ran = project.loop("run", "--backend", "managed-agents")
    assert ran.status == 0, ran
    [capped] = ran.data["capped"]
    sent = api.sent("user.interrupt", ran.data["session"])
    assert sent == [{"type": "user.interrupt", "session_thread_id": capped}]
    threads = api.client().beta.sessions.threads.list(ran.data["session"])
    makers = [t for t in threads if t.parent_thread_id is not None]
    assert len(makers) == 3 and capped == makers[-1].id  # the newest, beyond the two
