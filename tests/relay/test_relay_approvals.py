"""A person's approval of a destructive TASK, against a real hub: the account that posted
the TASK cannot approve it; another instruction account of the worker's can."""

from __future__ import annotations

import sys
from pathlib import Path

from worlds import CONTROLLER, OWNER, WORKER, World

PY = Path(sys.executable).as_posix()
PERSON = "carol"


def people_world(blank: World) -> World:
    """Relay set up so that the worker also obeys a person, carol (a collaborator)."""
    blank.tokens(PERSON)
    blank.api(f"/collaborators/{PERSON}", "PUT", {})
    blank.init()
    accounts = f"{OWNER},{PERSON}"
    blank.worker.call("join", "--node", WORKER, "--scheduler", "none", "--accounts", accounts)
    blank.controller.call("join", "--node", CONTROLLER, "--scheduler", "none")
    blank.controller.call("nodes", "approve", WORKER, "--node", CONTROLLER)
    return blank


def test_only_a_persons_approval_runs_a_destructive_task(blank: World, tmp_path: Path) -> None:
    world = people_world(blank)
    job = world.open_job()
    marker = tmp_path / "WIPED"
    step = f'"{PY}" -c "open({str(marker)!r}, \'w\')"'
    world.controller.call(
        "task", str(job), "--step", step, "--scope", "destructive", "--authorized-by-human"
    )
    out = world.worker.call("watch", "--once")
    assert "waits for a person's approval" in out and not marker.exists()
    notice = world.comments(job)[-1]["body"]
    assert "/relay approve TASK 1" in notice
    # the account that posted the TASK approving it is the controller approving itself
    world.api(f"/issues/{job}/comments", "POST", {"body": "/relay approve TASK 1"})
    world.worker.call("watch", "--once")
    assert not marker.exists()
    assert sum("/relay approve TASK 1" in c["body"] for c in world.comments(job)) == 2  # once
    world.api(f"/issues/{job}/comments", "POST", {"body": "/relay approve TASK 1"}, login=PERSON)
    out = world.worker.call("watch", "--once")
    assert "RESULT 1 posted (done" in out and marker.exists()


def test_a_persons_thumbs_up_on_the_task_approves_it(blank: World, tmp_path: Path) -> None:
    world = people_world(blank)
    job = world.open_job()
    marker = tmp_path / "WIPED"
    step = f'"{PY}" -c "open({str(marker)!r}, \'w\')"'
    world.controller.call(
        "task", str(job), "--step", step, "--scope", "destructive", "--authorized-by-human"
    )
    task = next(c for c in world.comments(job) if c["body"].startswith("### TASK 1"))
    world.api(f"/issues/comments/{task['id']}/reactions", "POST", {"content": "+1"})
    world.worker.call("watch", "--once")
    assert not marker.exists()  # the TASK's own account
    path = f"/issues/comments/{task['id']}/reactions"
    world.api(path, "POST", {"content": "+1"}, login=PERSON)
    assert "RESULT 1 posted (done" in world.worker.call("watch", "--once") and marker.exists()


def test_the_account_a_node_acts_as_cannot_approve_for_it(blank: World, tmp_path: Path) -> None:
    """The worker runs as `wbot`, also one of its instruction accounts: wbot's approval
    would be the node approving itself, even before the node has posted in the job."""
    from worlds import Node

    bot = "wbot"
    for login in (bot, PERSON):
        blank.tokens(login)
        blank.api(f"/collaborators/{login}", "PUT", {})
    blank.init()
    worker = Node(WORKER, blank.worker.clone, blank.tokens(bot), blank.worker.monkeypatch)
    accounts = f"{OWNER},{bot},{PERSON}"
    worker.call("join", "--node", WORKER, "--scheduler", "none", "--accounts", accounts)
    blank.controller.call("join", "--node", CONTROLLER, "--scheduler", "none")
    blank.controller.call("nodes", "approve", WORKER, "--node", CONTROLLER)
    job = blank.open_job()
    marker = tmp_path / "WIPED"
    step = f'"{PY}" -c "open({str(marker)!r}, \'w\')"'
    blank.controller.call(
        "task", str(job), "--step", step, "--scope", "destructive", "--authorized-by-human"
    )
    blank.api(f"/issues/{job}/comments", "POST", {"body": "/relay approve TASK 1"}, login=bot)
    out = worker.call("watch", "--once")
    assert "waits for a person's approval" in out and not marker.exists()
    blank.api(f"/issues/{job}/comments", "POST", {"body": "/relay approve TASK 1"}, login=PERSON)
    assert "RESULT 1 posted (done" in worker.call("watch", "--once") and marker.exists()
