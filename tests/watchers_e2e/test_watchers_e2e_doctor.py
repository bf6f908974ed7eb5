"""`relay doctor`: every check passes on a healthy node, and each one fails on its own
when its part is broken — with what to do about it and a non-zero exit."""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import UTC, datetime, timedelta

import pytest
from e2e_world import WORKER, World, read_crontab, write_crontab

from relay.state import NodeState, PassRecord

CHECKS = ("watcher", "last pass", "token for scheduled passes", "token", "labels")


def joined(world: World) -> World:
    """The worker joined with a cron watcher and its token saved, bound by an open job."""
    world.worker.call("join", "--node", WORKER, "--scheduler", "cron", "--save-token")
    world.open_job()
    return world


def one_pass(world: World) -> None:
    world.worker.call("watch", "--once", "--node", WORKER)


def doctor(world: World, **env: str) -> tuple[int, dict[str, str], dict[str, str]]:
    """Run `relay doctor --json`: exit status, each check's status, each check's fix."""
    w = world.worker
    done = w.run("doctor", "--json", env=w.env(**env))
    data = json.loads(done.stdout)
    assert data["node"] == WORKER and data["ok"] is (done.returncode == 0)
    checks = data["checks"]
    assert tuple(c["name"] for c in checks) == CHECKS
    return (
        done.returncode,
        {c["name"]: c["status"] for c in checks},
        {c["name"]: c["fix"] for c in checks},
    )


def test_a_healthy_node_passes_every_check(world: World, real_crontab: None) -> None:
    joined(world)
    one_pass(world)
    status, found, _ = doctor(world)
    assert status == 0 and set(found.values()) == {"ok"}
    said = world.worker.ok("doctor")
    assert f"{WORKER}: all checks passed" in said and "octo" in said


def stale_pass(world: World) -> None:
    state = NodeState.for_clone(world.worker.clone)
    then = datetime.now(UTC) - timedelta(seconds=3 * 300 + 60)
    state.log_pass(PassRecord(at=then, node=WORKER, outcome="idle"))


def failed_pass(world: World) -> None:
    w = world.worker
    done = w.run("watch", "--once", env=w.env(RELAY_TOKEN="not-a-token"))
    assert done.returncode != 0 and "rejected the token" in done.stderr


def entry_removed(world: World) -> None:
    one_pass(world)
    write_crontab("")  # someone emptied the crontab by hand


def token_file_open(world: World) -> None:
    one_pass(world)
    (world.worker.clone / ".git" / "relay" / "token").chmod(0o644)


def label_deleted(world: World) -> None:
    one_pass(world)
    world.api("/labels/needs:human", "DELETE")


BREAKS: dict[str, tuple[Callable[[World], None], dict[str, str]]] = {
    "watcher": (entry_removed, {}),
    "last pass (none yet)": (lambda world: None, {}),
    "last pass (stale)": (stale_pass, {}),
    "last pass (failed)": (failed_pass, {}),
    "token for scheduled passes": (token_file_open, {}),
    "token": (one_pass, {"RELAY_TOKEN": "not-a-token"}),
    "labels": (label_deleted, {}),
}


@pytest.mark.parametrize("broken", list(BREAKS))
def test_each_check_fails_alone_with_a_fix(broken: str, world: World, real_crontab: None) -> None:
    joined(world)
    breaking, env = BREAKS[broken]
    breaking(world)
    status, found, fixes = doctor(world, **env)
    name = broken.split(" (")[0]
    assert status == 1
    assert found[name] == "fail" and fixes[name]
    expected_skips = {"labels"} if name == "token" else set()
    others = {check: state for check, state in found.items() if check != name}
    assert {c for c, s in others.items() if s != "ok"} == expected_skips, found
    if name == "watcher":
        assert read_crontab() == ""


def test_status_shows_each_local_watchers_last_pass(world: World, real_crontab: None) -> None:
    joined(world)
    one_pass(world)
    said = world.worker.ok("status", as_node=False)
    assert "watchers in this clone:" in said
    line = next(x for x in said.splitlines() if x.strip().startswith(f"{WORKER}:"))
    assert "cron entry, every 300s" in line and "idle" in line and "requests" in line
    data = json.loads(world.worker.ok("status", "--json", as_node=False))
    (mine,) = [row for row in data["watchers"] if row["node"] == WORKER]
    assert mine["active"] and mine["scheduler"] == "cron"
    assert mine["last_pass"]["outcome"] == "idle"
