"""The worker's memory that a task ran, from the issue's events, against a real hub:
mallory (push access, in no row of the roster) and a worker with no local records (an
Actions runner). Each test asserts what relay promises."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from test_relay_seal_breaks import asked_again, delete_evidence
from test_relay_seal_breaks_again import drop_newest_log
from test_relay_trust import appends, mallory, runs
from worlds import STRANGER, World


def comment_of(world: World, job: int, heading: str) -> dict[str, object]:
    found = [c for c in world.comments(job) if str(c["body"]).startswith(heading)]
    assert len(found) == 1, [str(c["body"])[:40] for c in world.comments(job)]
    return dict(found[0])


@pytest.mark.parametrize(
    "copy",
    [
        True,
        False,  # TASK 1's claim only deleted: the events still hold TASK 2's
    ],
)
def test_an_older_claim_copied_over_the_newer_one_never_runs_a_task_twice(
    world: World, job: int, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, copy: bool
) -> None:
    """TASK 1 and TASK 2 ran and were answered. She edits TASK 2's claim comment to carry
    TASK 1's signed claim (a claim may be edited: its heartbeat) and deletes TASK 1's own
    claim comment, so the thread holds a claim of TASK 1 made after TASK 2 was posted.
    She deletes RESULT 2 and the claim ref, drops the log from the data branch and puts
    `working` on. The events hold the node's `working` for TASK 2, but the rule counts it
    as TASK 1's (a claim of an earlier TASK made later), and a worker with no local
    records runs TASK 2 again."""
    eve = mallory(world, monkeypatch)
    first, second = tmp_path / "ONE", tmp_path / "TWO"
    world.controller.call("task", str(job), "--step", appends(first))
    world.worker.call("watch", "--once")
    world.controller.call("watch", "--once")
    time.sleep(1.1)  # not a whole task cycle within one second (see claimed_by_events)
    world.controller.call("task", str(job), "--step", appends(second))
    time.sleep(1.1)  # the worker's pass comes in a later second than the TASK (as it does)
    world.worker.call("watch", "--once")
    assert runs(second) == 1
    one = comment_of(world, job, "### Claim · TASK 1")
    two = comment_of(world, job, "### Claim · TASK 2")
    if copy:
        edit = {"body": one["body"]}
        world.api(f"/issues/comments/{two['id']}", "PATCH", edit, login=STRANGER)
    else:
        world.api(f"/issues/comments/{two['id']}", "DELETE", login=STRANGER)
    world.api(f"/issues/comments/{one['id']}", "DELETE", login=STRANGER)
    result = comment_of(world, job, "### RESULT 2")
    world.api(f"/issues/comments/{result['id']}", "DELETE", login=STRANGER)
    world.api(f"/git/refs/relay/claims/{job}/2", "DELETE", login=STRANGER)
    drop_newest_log(world, eve.clone, job, 2)
    asked_again(world, job, second)


def test_a_baton_taken_away_before_the_claim_moves_it_never_runs_a_task_twice(
    world: World, job: int, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """She takes `awaiting:worker` off after the worker's pass read the labels and before
    its claim moves them (it has made the claim ref by then: she can watch for it). The
    move finds no baton at `awaiting:worker`, changes nothing and says so, and the claim
    runs the TASK anyway: no `working` of the node's is in the events. She deletes claim,
    RESULT and ref, drops the log and puts `working` on: a worker with no local records
    runs TASK 1 again."""
    import relay.node.execute as execute

    eve = mallory(world, monkeypatch)
    marker = tmp_path / "RAN"
    world.controller.call("task", str(job), "--step", appends(marker))
    move = execute.comment_then_move

    async def raced(*args: object, **kwargs: object) -> execute.Posted:
        if kwargs.get("to") == "working":
            away = {"labels": ["awaiting:controller"]}
            world.api(f"/issues/{job}/labels", "PUT", away, login=STRANGER)
        return await move(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(execute, "comment_then_move", raced)
    world.worker.call("watch", "--once")
    monkeypatch.setattr(execute, "comment_then_move", move)
    assert runs(marker) == 1
    delete_evidence(world, job, 1)
    drop_newest_log(world, eve.clone, job, 1)
    asked_again(world, job, marker)


def test_a_deleted_claim_the_controller_never_saw_does_not_stop_repair_reposting(
    world: World, job: int, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """TASK 1 ran; she deletes its claim comment before the controller's next pass (which
    sees RESULT 1 and no claim). TASK 2 is posted and she deletes it before the worker
    reads it: it never ran. `relay job repair` asks the events with TASK 2's posted time,
    which the controller kept: the node's one `working` came before it, and TASK 2 is
    posted again."""
    mallory(world, monkeypatch)
    first, second = tmp_path / "ONE", tmp_path / "TWO"
    world.controller.call("task", str(job), "--step", appends(first))
    world.worker.call("watch", "--once")
    claim = comment_of(world, job, "### Claim · TASK 1")
    world.api(f"/issues/comments/{claim['id']}", "DELETE", login=STRANGER)
    world.controller.call("watch", "--once")
    time.sleep(1.1)  # not a whole task cycle within one second (see claimed_by_events)
    world.controller.call("task", str(job), "--step", appends(second))
    posted = comment_of(world, job, "### TASK 2")
    world.api(f"/issues/comments/{posted['id']}", "DELETE", login=STRANGER)
    world.worker.call("watch", "--once")
    assert runs(second) == 0
    repaired = world.controller.call("job", "repair", str(job))
    assert "posted again as TASK 3" in repaired, repaired
    world.worker.call("watch", "--once")
    assert runs(second) == 1
