"""Claims that know their own, against the real hub: a lost answer to the claim ref is this
node's claim (not a lost race), a pass killed between the ref and its record is finished by
the next pass, another runner's bare claim ref is taken over after a short grace (and said),
and a long task keeps its claim alive with a heartbeat."""

from __future__ import annotations

import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from worlds import World

from relay.edges.local import NodeState
from relay.protocol.wire import decode_block

PY = Path(sys.executable).as_posix()


def head_sha(world: World) -> str:
    ref = world.api("/git/ref/heads/main")
    sha: str = ref["object"]["sha"]
    return sha


def claims(world: World, job: int) -> list[dict[str, object]]:
    return [c for c in world.comments(job) if c["body"].startswith("### Claim")]


def results(world: World, job: int) -> list[dict[str, object]]:
    return [c for c in world.comments(job) if c["body"].startswith("### RESULT")]


def test_a_lost_answer_to_the_claim_ref_is_this_nodes_claim(world: World, job: int) -> None:
    c, w = world.controller, world.worker
    c.call("task", str(job), "--step", "python -V")
    world.hub.set_faults("502_after=1,limit=1,on=POST:/git/refs")  # type: ignore[attr-defined]
    try:
        out = w.call("watch", "--once")
    finally:
        world.hub.clear_faults()  # type: ignore[attr-defined]
    assert "RESULT 1 posted (done" in out, out
    assert len(claims(world, job)) == 1 and len(results(world, job)) == 1
    assert world.labels(job) == {"awaiting:controller"}
    block = decode_block(str(claims(world, job)[0]["body"]))
    state = NodeState.for_clone(w.clone)
    record = state.claim(issue=job, task=1)
    assert record is not None and record.nonce == block["fields"]["nonce"]
    assert state.attempts() == {}


def test_a_lost_answer_to_a_comment_with_its_baton_posts_it_once_and_moves_the_baton(
    world: World, job: int
) -> None:
    """The claim and the RESULT each go with their baton move in one request (a GraphQL
    mutation): when its answer is lost after it was done (a 502, a dropped connection),
    the comment found is the answer, nothing is posted twice, and the baton ends where it
    would have."""
    c, w = world.controller, world.worker
    for fault in ("502_after", "drop_after"):
        c.call("task", str(job), "--step", "python -V")
        world.hub.set_faults(f"{fault}=1,on=POST:/graphql")  # type: ignore[attr-defined]
        try:
            out = w.call("watch", "--once")
            struck = world.hub.admin("GET", "/_hub/faults")["injected"]  # type: ignore[attr-defined]
        finally:
            world.hub.clear_faults()  # type: ignore[attr-defined]
        assert struck == 2, f"{fault}: the claim's and the RESULT's answers were both lost"
        assert "posted (done" in out, out
        n = len(claims(world, job))
        assert n == len(results(world, job)), [x["body"][:20] for x in world.comments(job)]
        assert world.labels(job) == {"awaiting:controller"}
    assert len(claims(world, job)) == 2 and len(results(world, job)) == 2


def test_a_pass_killed_after_creating_the_claim_ref_is_finished_by_the_next(
    world: World, job: int
) -> None:
    """What a SIGKILL between the ref and the local record leaves: the attempt's nonce on
    disk and the ref on the hub. The next pass knows the ref for its own and runs the task
    once, with no word of a takeover."""
    c, w = world.controller, world.worker
    c.call("task", str(job), "--step", "python -V")
    state = NodeState.for_clone(w.clone)
    nonce = state.record_attempt(issue=job, task=1, now=datetime.now(UTC))
    world.api("/git/refs", "POST", {"ref": f"refs/relay/claims/{job}/1", "sha": head_sha(world)})
    out = w.call("watch", "--once")
    assert "RESULT 1 posted (done" in out, out
    [claim] = claims(world, job)
    assert decode_block(str(claim["body"]))["fields"]["nonce"] == nonce
    assert not any("takes the task over" in str(x["body"]) for x in world.comments(job))
    assert len(results(world, job)) == 1


def test_another_runners_bare_claim_ref_is_taken_over_after_the_grace_and_said(
    world: World, job: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A claim ref with no claim (another runner of the node stopped between the two) is
    waited out within the pass that sees it, then taken over, and the thread says so. (The
    grace and the settle cut to three seconds.)"""
    import importlib

    for name in ("relay.protocol.decide", "relay.protocol.work"):
        module = importlib.import_module(name)
        monkeypatch.setattr(module, "BARE_GRACE", timedelta(seconds=3))
        monkeypatch.setattr(module, "BARE_SETTLE", timedelta(seconds=3))
    c, w = world.controller, world.worker
    c.call("task", str(job), "--step", "python -V")
    world.api("/git/refs", "POST", {"ref": f"refs/relay/claims/{job}/1", "sha": head_sha(world)})
    out = w.call("watch", "--once")
    assert "has a claim ref but no claim yet" in out, out
    assert "RESULT 1 posted (done" in out, out
    said = [x for x in world.comments(job) if "takes the task over" in str(x["body"])]
    assert len(said) == 1 and "another runner" in str(said[0]["body"])
    assert len(claims(world, job)) == 1 and len(results(world, job)) == 1
    assert NodeState.for_clone(w.clone).bare_seen() == []


def test_a_long_task_keeps_its_claim_alive_with_a_heartbeat(world: World, job: int) -> None:
    c, w = world.controller, world.worker
    c.call("task", str(job), "--step", f'"{PY}" -c "import time; time.sleep(3.5)"')
    done = w.run("watch", "--once", env=w.env(RELAY_HEARTBEAT_SECONDS="1"))
    assert done.returncode == 0, done.stderr
    [claim] = claims(world, job)
    assert claim["updated_at"] != claim["created_at"], "the claim comment was beaten"
    fields = decode_block(str(claim["body"]))["fields"]
    claimed = datetime.fromisoformat(str(fields["claimed_at"]).replace("Z", "+00:00"))
    alive = datetime.fromisoformat(str(fields["alive_until"]).replace("Z", "+00:00"))
    assert alive - claimed > timedelta(seconds=4 * 1 + 1), "alive_until moved forward"
    assert "RESULT 1 is back: done" in c.call("watch", "--once"), "the beaten claim is trusted"
