"""A webhook delivery for another node's job makes no request: a third node, admitted to the
roster and receiving every delivery of the repository through `relay watch --webhook` (a
real process, the hub's real deliveries), hears a job it is not bound to change in every
way and asks the hub nothing; the hub's own counters say so. A turn on a job naming it, sent
last down the same ordered queue, does reach it (so the silence before is no broken
receiver)."""

from __future__ import annotations

from pathlib import Path

from events_world import Watchers, free_port, node_env, passes, wait_until
from worlds import Node, World

from relay.edges.local import NodeState

BYSTANDER = "bystander"


def test_a_delivery_for_another_nodes_job_makes_no_request(
    world: World, watchers: Watchers, tmp_path: Path
) -> None:
    hub = world.hub
    node = Node(
        BYSTANDER, world.clone(BYSTANDER), world.controller.token, world.controller.monkeypatch
    )
    world.admit(node)
    port, secret = free_port(), "bystander secret"
    with node.monkeypatch.context() as m:
        m.setenv("RELAY_WEBHOOK_SECRET", secret)
        node.call("join", "--node", BYSTANDER, "--scheduler", "none",
                  "--webhook", f"http://127.0.0.1:{port}/")  # fmt: skip
    others = world.open_job()  # the controller's and the worker's job
    mine = world.open_job(worker=BYSTANDER)
    env = node_env(node.token, RELAY_WEBHOOK_SECRET=secret)
    watchers.start(node.clone, node=BYSTANDER, port=port, env=env, log=tmp_path / "b")
    before = passes(node.clone)
    hub.reset_requests()  # type: ignore[attr-defined]

    # the other job changes in every way a delivery tells: comments by its account and by
    # a stranger, the baton moved, the body rewritten, closed
    world.api(f"/issues/{others}/comments", "POST", {"body": "a note"})
    world.stranger_comment(others, "a stranger's remark")
    world.api(f"/issues/{others}/labels", "PUT", {"labels": ["awaiting:controller"]})
    world.api(f"/issues/{others}", "PATCH", {"title": "Renamed", "state": "closed"})
    # on its own job, the baton handed to the controller is no turn of the bystander's
    world.api(f"/issues/{mine}/labels", "PUT", {"labels": ["awaiting:controller"]})
    # then handed back: its turn, last in the hook's queue
    world.api(f"/issues/{mine}/labels", "PUT", {"labels": ["awaiting:worker"]})

    wait_until(lambda: passes(node.clone) > before, what="the bystander's pass of its own job")
    rows = hub.requests()  # type: ignore[attr-defined]
    repo = f"/repos/{world.repo}"
    mine_prefix = f"{repo}/issues/{mine}"
    ours = {
        ("POST", f"{repo}/issues/{others}/comments"): 2,
        ("PUT", f"{repo}/collaborators/mallory"): 1,
        ("PUT", f"{repo}/issues/{others}/labels"): 1,
        ("PATCH", f"{repo}/issues/{others}"): 1,
        ("PUT", f"{mine_prefix}/labels"): 2,
    }
    counted: dict[tuple[str, str], int] = {}
    for row in rows:
        key = (row["method"], row["path"])
        counted[key] = counted.get(key, 0) + row["count"]
    theirs = {k: n for k, n in counted.items() if k not in ours}
    assert {k: counted.get(k) for k in ours} == ours, counted
    # everything else the hub answered is the bystander's one pass, over its own job only
    assert theirs, counted
    assert all(path.startswith(mine_prefix) for _, path in theirs), theirs
    assert passes(node.clone) == before + 1
    logged = NodeState.for_clone(node.clone).passes()[-1]
    assert logged.requests == sum(theirs.values()), (logged, theirs)


def test_a_payload_that_lies_costs_a_pass_and_runs_nothing(
    world: World, watchers: Watchers, tmp_path: Path
) -> None:
    """The payload is only ever a reason to look: a signed delivery saying a plain issue is
    the worker's job with a TASK waiting makes it read that issue, find no job, and do
    nothing."""
    import json
    import uuid

    from events_world import deliver, sign

    w = world.worker
    port, secret = free_port(), "worker secret"
    with w.monkeypatch.context() as m:
        m.setenv("RELAY_WEBHOOK_SECRET", secret)
        w.call("join", "--webhook", f"http://127.0.0.1:{port}/")
    job = world.issue(world.open_job())  # a real job: its body is what the lie borrows
    plain = world.api("/issues", "POST", {"title": "Just an issue", "body": "Nothing here."})
    watch = watchers.start(
        w.clone, node=w.name, port=port, env=node_env(w.token, RELAY_WEBHOOK_SECRET=secret),
        log=tmp_path / "w",
    )  # fmt: skip
    before = passes(w.clone)
    lie = {
        "action": "labeled",
        "issue": {**job, "number": plain["number"], "labels": [{"name": "awaiting:worker"}]},
        "label": {"name": "awaiting:worker"},
        "repository": {"full_name": world.repo},
        "sender": job["user"],
    }
    body = json.dumps(lie).encode()
    head = {"X-GitHub-Event": "issues", "X-GitHub-Delivery": str(uuid.uuid4())}
    assert (
        deliver(watch.url + "/", body, {**head, "X-Hub-Signature-256": sign(secret, body)}) == 202
    )
    wait_until(lambda: passes(w.clone) > before, what="the pass the lie caused")
    logged = NodeState.for_clone(w.clone).passes()[-1]
    assert logged.outcome == "idle", logged
    assert world.claim_refs() == {}
    assert world.comments(plain["number"]) == [] and world.comments(job["number"]) == []
