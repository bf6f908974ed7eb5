"""What a pass and a round trip cost on the wire, counted by the hub and by the pass.

An idle pass is one conditional request (the open-issue list, answered 304) whatever the
number of open jobs; a change is read for the changed job alone. A round trip (TASK ->
claim -> RESULT -> the controller notified) makes at most eight write requests.
"""

from __future__ import annotations

from typing import Any

from worlds import WORKER, World

WRITES = ("POST", "PATCH", "PUT", "DELETE")


def idle_pass(world: World) -> dict[str, Any]:
    """The worker's `watch --once --json`: what the pass itself counted."""
    data: dict[str, Any] = world.worker.json("watch", "--once")
    return data


def writes(world: World) -> dict[str, int]:
    """The API write requests the hub has answered so far, by method (git is not counted)."""
    hub: Any = world.hub
    rows = [r for r in hub.requests() if ".git/" not in r["path"]]
    return {m: sum(r["count"] for r in rows if r["method"] == m) for m in WRITES}


def test_an_idle_pass_is_one_request_at_one_and_at_twelve_open_jobs(world: World) -> None:
    first = world.open_job()
    idle_pass(world)  # reads the new job's thread, fills the caches
    once = idle_pass(world)
    assert (once["requests"], once["not_modified"], once["outcome"]) == (1, 1, "idle")

    others = [world.open_job(title=f"job {n}") for n in range(11)]
    filled = idle_pass(world)
    assert filled["requests"] == 1 + len(others)  # the list, then each new thread once
    again = idle_pass(world)
    assert (again["requests"], again["not_modified"]) == (1, 1)

    # one thread changes: the list, then that thread alone; then idle again
    world.stranger_comment(others[3], "a note from someone who gives no instructions")
    changed = idle_pass(world)
    assert (changed["requests"], changed["not_modified"]) == (2, 0)
    assert idle_pass(world)["requests"] == 1
    assert world.labels(first) == {"awaiting:controller"}  # nothing was the worker's turn


def test_a_round_trip_makes_at_most_eight_writes(world: World, job: int) -> None:
    c, w = world.controller, world.worker
    c.ok("watch", "--once")  # the controller's idle pass before the TASK
    before = writes(world)
    c.ok("task", str(job), "--step", "git --version")
    w.ok("watch", "--once", "--node", WORKER)
    c.ok("watch", "--once")
    after = writes(world)
    made = {m: after[m] - before[m] for m in WRITES}
    assert world.heads(job)[-1].startswith("### RESULT 1")
    assert world.labels(job) == {"awaiting:controller"}
    # TASK comment + body/baton PATCH; claim ref, claim comment, baton, RESULT, baton;
    # the controller's "Current state" PATCH
    assert sum(made.values()) <= 8, made
