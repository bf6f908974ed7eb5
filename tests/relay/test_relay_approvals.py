"""A person's approval of a destructive TASK, against a real hub: the account that posted
the TASK cannot approve it; another instruction account of the worker's can."""

from __future__ import annotations

import sys
from pathlib import Path

from relay_world import one_line_error
from worlds import CONTROLLER, OWNER, WORKER, World, key_of

from relay.protocol import TaskMsg, render_message

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
    key = key_of(blank.worker, WORKER)
    blank.controller.call("nodes", "approve", WORKER, "--node", CONTROLLER, "--fingerprint", key)
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
    key = key_of(worker, WORKER)
    blank.controller.call("nodes", "approve", WORKER, "--node", CONTROLLER, "--fingerprint", key)
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


def wiping_step(tmp_path: Path) -> tuple[str, Path, Path]:
    """A step that removes a directory recursively and then leaves a marker behind."""
    scratch, marker = tmp_path / "scratch", tmp_path / "WIPED"
    (scratch / "inner").mkdir(parents=True)
    step = f'rm -rf "{scratch.as_posix()}" && "{PY}" -c "open({str(marker)!r}, \'w\')"'
    return step, scratch, marker


def test_a_build_task_that_deletes_recursively_waits_for_a_person(
    blank: World, tmp_path: Path
) -> None:
    """'Destructive' is what a step does, not the word the controller types."""
    world = people_world(blank)
    job = world.open_job()
    step, scratch, marker = wiping_step(tmp_path)
    refused = one_line_error(world.controller.run("task", str(job), "--step", step))
    assert "step 1 is destructive (recursive removal (rm -r))" in refused, refused
    assert "add --authorized-by-human" in refused and "redacted" not in refused
    world.controller.call(
        "task", str(job), "--step", step, "--scope", "build", "--authorized-by-human"
    )
    out = world.worker.call("watch", "--once")
    assert "waits for a person's approval" in out
    assert scratch.exists() and not marker.exists()
    world.api(f"/issues/{job}/comments", "POST", {"body": "/relay approve TASK 1"}, login=PERSON)
    out = world.worker.call("watch", "--once")
    assert "RESULT 1 posted (done" in out and marker.exists() and not scratch.exists()


def test_a_build_task_posted_past_relay_task_does_not_run_without_a_person(
    blank: World, tmp_path: Path
) -> None:
    """The controller signs and posts a `build` TASK with `rm -rf` itself: the worker
    judges the steps, not the label, and never runs it on the controller's word alone."""
    world = people_world(blank)
    job = world.open_job()
    step, scratch, marker = wiping_step(tmp_path)
    for authorized in (False, True):
        task = TaskMsg(
            issue=job,
            node=CONTROLLER,
            task=1 + authorized,
            objective="Build it.",
            steps=(step,),
            scope="build",
            authorized_by_human=authorized,
        )
        signed = world.signed(world.controller, render_message(task))
        world.api(f"/issues/{job}/comments", "POST", {"body": signed})
        world.api(f"/issues/{job}/labels", "PUT", {"labels": ["awaiting:worker"]})
        out = world.worker.call("watch", "--once")
        assert scratch.exists() and not marker.exists()
        if not authorized:
            assert f"#{job}: TASK 1 answered as declined" in out
            result = world.comments(job)[-1]["body"]
            assert "step 1 is destructive (recursive removal (rm -r))" in result
    assert "waits for a person's approval" in out
    world.api(f"/issues/{job}/comments", "POST", {"body": "/relay approve TASK 2"}, login=PERSON)
    assert "RESULT 2 posted (done" in world.worker.call("watch", "--once") and marker.exists()
