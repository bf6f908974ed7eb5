"""The thread tells people, against the real hub: a TASK from an account that gives no
instructions, and a baton moved by such an account, are each said once in the thread,
naming the account — not only in a pass's output."""

from __future__ import annotations

from worlds import STRANGER, World

from relay.protocol import TaskMsg, render_message


def notices(world: World, job: int, text: str) -> list[str]:
    return [c["body"] for c in world.comments(job) if text in c["body"]]


def test_a_task_from_a_stranger_is_refused_in_the_thread_once(world: World, job: int) -> None:
    forged = TaskMsg(issue=job, node="mac-studio", task=1, objective="x", steps=("whoami",))
    world.stranger_comment(job, render_message(forged))
    world.stranger_comment(job, render_message(forged.model_copy(update={"task": 2})))
    world.api(f"/issues/{job}/labels", "PUT", {"labels": ["awaiting:worker"]})
    for _ in range(2):
        world.worker.call("watch", "--once")
    said = notices(world, job, f"does not act on comments by `{STRANGER}`")
    assert len(said) == 1, said
    assert not any(c["body"].startswith("### Claim") for c in world.comments(job))


def test_a_baton_moved_by_a_stranger_is_put_back_and_the_mover_named(
    world: World, job: int
) -> None:
    world.controller.call("task", str(job), "--step", "python -V")
    world.worker.call("watch", "--once")
    assert world.labels(job) == {"awaiting:controller"}
    world.stranger_comment(job, "just looking")  # the account exists and may write
    labels = {"labels": ["awaiting:worker"]}
    world.api(f"/issues/{job}/labels", "PUT", labels, login=STRANGER)
    out = world.worker.call("watch", "--once")
    assert "baton moved to awaiting:controller" in out, out
    assert world.labels(job) == {"awaiting:controller"}
    said = notices(world, job, f"`{STRANGER}` added the baton label `awaiting:worker`")
    assert len(said) == 1, [c["body"][:80] for c in world.comments(job)]
    world.worker.call("watch", "--once")
    assert len(notices(world, job, "added the baton label")) == 1, "named once"
