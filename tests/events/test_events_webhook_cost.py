"""What a webhook round trip costs, counted by the hub: both nodes on `relay watch --webhook`
processes, the TASK sent, and every request the hub answered for the repository until the
wire is quiet again (the test itself waits on the nodes' local records, not the API).
The figures for people, before and after, come from ``make bench`` (bench_webhook)."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from events_world import Watchers, free_port, node_env, wait_until
from worlds import World

from relay.edges.local import NodeState

WRITES = ("POST", "PATCH", "PUT", "DELETE")


def settled(hub: Any, repo: str, quiet: float = 1.5) -> list[dict[str, Any]]:
    """The hub's counted requests for ``repo`` once none came for ``quiet`` seconds (read
    through the admin endpoint, which is not counted)."""

    def rows() -> list[dict[str, Any]]:
        found: list[dict[str, Any]] = hub.requests()
        # a GraphQL mutation (a comment with its baton move) is a write of this repository's
        return [r for r in found if r["path"].startswith((f"/repos/{repo}/", "/graphql"))]

    last, since = rows(), time.monotonic()
    while time.monotonic() - since < quiet:
        time.sleep(0.1)
        if (now := rows()) != last:
            last, since = now, time.monotonic()
    return last


def test_a_webhook_round_trip_costs_at_most_20_requests(
    world: World, watchers: Watchers, tmp_path: Path
) -> None:
    c, w = world.controller, world.worker
    secret = "round trip secret"
    ports = {c.name: free_port(), w.name: free_port()}
    for node in (c, w):
        with node.monkeypatch.context() as m:
            m.setenv("RELAY_WEBHOOK_SECRET", secret)
            node.call("join", "--webhook", f"http://127.0.0.1:{ports[node.name]}/")
    job = world.open_job()
    for node in (c, w):
        env = node_env(node.token, RELAY_WEBHOOK_SECRET=secret)
        watchers.start(node.clone, node=node.name, port=ports[node.name], env=env,
                       log=tmp_path / f"{node.name}.log")  # fmt: skip
    settled(world.hub, world.repo)
    world.hub.reset_requests()  # type: ignore[attr-defined]

    c.call("task", str(job), "--step", "true")
    wait_until(lambda: (job, 1) in NodeState.for_clone(c.clone).notified(), what="notified")
    rows = settled(world.hub, world.repo)
    total = sum(r["count"] for r in rows)
    writes = sum(r["count"] for r in rows if r["method"] in WRITES and ".git/" not in r["path"])
    shown = [(r["method"], r["path"], r["status"], r["count"]) for r in rows]
    api = sum(r["count"] for r in rows if ".git/" not in r["path"])
    assert api <= 20, (total, shown)
    # TASK, body and baton; the claim ref; the claim with its baton (one GraphQL mutation);
    # the RESULT with its baton (one); the controller's "Current state" (README: how many
    # round trips an hour)
    assert writes == 6, shown
    assert world.labels(job) == {"awaiting:controller"}
