"""What a pass and a round trip cost on the wire, counted by the hub and by the pass.

An idle pass is one conditional request (the open-issue list, answered 304) whatever the
number of open jobs; a change is read for the changed job alone. A round trip (TASK ->
claim -> RESULT -> the controller notified) makes at most six write requests.
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


def graphql_writes(world: World) -> int:
    """The GraphQL requests the hub has answered (relay sends only mutations there)."""
    hub: Any = world.hub
    return sum(r["count"] for r in hub.requests() if r["path"] == "/graphql")


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


def test_a_round_trip_makes_at_most_six_writes(world: World, job: int) -> None:
    c, w = world.controller, world.worker
    c.ok("watch", "--once")  # the controller's idle pass before the TASK
    before, before_graphql = writes(world), graphql_writes(world)
    c.ok("task", str(job), "--step", "git --version")
    w.ok("watch", "--once", "--node", WORKER)
    c.ok("watch", "--once")
    after = writes(world)
    made = {m: after[m] - before[m] for m in WRITES}
    assert world.heads(job)[-1].startswith("### RESULT 1")
    assert world.labels(job) == {"awaiting:controller"}
    # TASK comment + body/baton PATCH; claim ref, claim comment with its baton, RESULT
    # with its baton (a GraphQL mutation each: comment, then labels); the controller's
    # "Current state" PATCH
    assert sum(made.values()) <= 6, made
    assert graphql_writes(world) - before_graphql == 2, "claim and RESULT: one request each"
    # what the thread shows a person is what it showed: the claim, the RESULT, and each
    # of the baton's moves (labeled, then unlabeled), in that order
    heads = world.heads(job)
    moves = [(e["event"], e["label"]["name"]) for e in world.api(f"/issues/{job}/events")
             if e["event"] in ("labeled", "unlabeled")]  # fmt: skip
    assert [h.split(" ·")[0] for h in heads] == ["### TASK 1", "### Claim", "### RESULT 1"]
    assert moves[-4:] == [
        ("labeled", "working"), ("unlabeled", "awaiting:worker"),
        ("labeled", "awaiting:controller"), ("unlabeled", "working"),
    ]  # fmt: skip


def test_a_comment_edited_in_place_is_read_again_before_the_node_acts(
    world: World, job: int
) -> None:
    """The issue list does not show an edit in place (the hub, like GitHub as far as it
    promises, leaves the issue's updated_at alone): an idle pass reuses the cached thread,
    and refresh() — what a pass runs before it acts — reads the edit."""
    import asyncio

    from relay.node.context import client, open_node
    from relay.node.observe import observe, refresh

    note = world.stranger_comment(job, "first words")
    world.api(f"/issues/comments/{note}", "PATCH", {"body": "edited words"})
    world.stranger_comment(job, "a later note")  # the issue changes once more
    idle_pass(world)  # reads the thread as it is now: "edited words" (fresh)
    world.api(f"/issues/comments/{note}", "PATCH", {"body": "edited again, in place"})

    def bodies(snapshot: Any) -> list[str]:
        (issue,) = [i for i in snapshot.issues if i.number == job]
        return [c.body for c in issue.comments]

    async def look() -> tuple[list[str], list[str]]:
        ctx = open_node(repo_dir=world.worker.clone, node=WORKER, api=None)
        async with client(ctx) as gh:
            args = {"master": ctx.master, "state": ctx.state, "node": WORKER}
            cached = await observe(gh, **args)
            fresh = await refresh(gh, cached, state=ctx.state, node=WORKER, numbers={job})
            return bodies(cached), bodies(fresh)

    with world.worker.monkeypatch.context() as m:
        m.setenv("RELAY_TOKEN", world.worker.token)
        cached, fresh = asyncio.run(look())
    assert "edited words" in cached and "edited again, in place" not in cached
    assert "edited again, in place" in fresh
