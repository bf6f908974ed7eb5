"""`relay doctor`: every check passes on a healthy node, and each one fails on its own
when its part is broken — with what to do about it and a non-zero exit."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from e2e_world import entry_words, line_for, read_crontab, relay_lines, write_crontab
from worlds import WORKER, World, data_of, envelope_of

from relay.edges.local import NodeState, PassRecord
from relay.watchers.registration import load, save

CHECKS = ("git", "roster", "watcher", "last pass", "token for scheduled passes", "token", "labels")


def joined(world: World) -> World:
    """The worker joined with a cron watcher and its token saved, bound by an open job."""
    world.worker.call("join", "--node", WORKER, "--scheduler", "cron", "--save-token")
    world.open_job()
    return world


def as_entry(world: World) -> list[str]:
    """The worker's watcher entry's own command line, read back from the crontab."""
    return entry_words(line_for(read_crontab(), WORKER))


def one_pass(world: World) -> None:
    """A pass as the scheduler's entry starts it (its own command line, nonce and all)."""
    world.worker.call(*as_entry(world))


def doctor(world: World, **env: str) -> tuple[int, dict[str, str], dict[str, str]]:
    """`relay doctor --json` in this process (the plain `relay doctor` runs as a process
    below): exit status, each check's status, each check's fix."""
    w = world.worker
    token = env.pop("RELAY_TOKEN", None)
    done = w.invoke("doctor", "--json", "--node", w.name, token=token, **env)
    data = envelope_of(done.stdout)["data"]
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
    state.log_pass(PassRecord(at=then, node=WORKER, outcome="idle", started_by="scheduler"))


def failed_pass(world: World) -> None:
    w = world.worker
    done = w.run(*as_entry(world), env=w.env(RELAY_TOKEN="not-a-token"))
    assert done.returncode != 0 and "rejected the token" in done.stderr


def no_pass_long_after_join(world: World) -> None:
    """Joined well over one interval ago, and no pass ever came."""
    state = NodeState.for_clone(world.worker.clone)
    record = load(state, WORKER)
    assert record is not None
    then = datetime.now(UTC) - timedelta(seconds=record.interval + 120)
    save(state, record.model_copy(update={"registered_at": then}))


def scheduled_token_rejected(world: World) -> None:
    """The token scheduled passes find (the token file) no longer works; the shell's does."""
    one_pass(world)
    (world.worker.clone / ".git" / "relay" / "token").write_text("not-a-token\n")


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
    "last pass (none yet)": (no_pass_long_after_join, {}),
    "last pass (stale)": (stale_pass, {}),
    "last pass (failed)": (failed_pass, {}),
    "token for scheduled passes": (token_file_open, {}),
    "token": (scheduled_token_rejected, {}),
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
    expected_skips = {
        "token": {"labels"},  # labels need a working token
        "token for scheduled passes": {"token", "labels"},  # the same token, found unusable
    }.get(name, set())
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
    data = data_of(world.worker.call("status", "--json"))  # the same, in this process
    (mine,) = [row for row in data["watchers"] if row["node"] == WORKER]
    assert mine["active"] and mine["scheduler"] == "cron"
    assert mine["last_pass"]["outcome"] == "idle"


def test_right_after_join_the_first_pass_is_pending_not_failed(
    world: World, real_crontab: None
) -> None:
    joined(world)
    status, found, _ = doctor(world)
    assert status == 0 and found["last pass"] == "pending"
    assert "the first is due by" in world.worker.ok("doctor")


def test_doctor_checks_the_token_scheduled_passes_use_not_the_shells(
    world: World, real_crontab: None
) -> None:
    w = world.worker
    w.call("join", "--node", WORKER, "--scheduler", "cron")  # no --save-token
    world.open_job()
    status, found, fixes = doctor(world)  # this shell's RELAY_TOKEN works
    assert status == 1 and found["token"] == "fail"
    assert "relay join --save-token" in fixes["token"]
    w.call("join", "--node", WORKER, "--save-token")
    status, found, _ = doctor(world, RELAY_TOKEN="not-a-token")  # the shell's is broken
    assert found["token"] == "ok", found


def test_a_scheduled_pass_without_a_token_says_to_save_one(
    world: World, real_crontab: None
) -> None:
    w = world.worker
    w.call("join", "--node", WORKER, "--scheduler", "cron")
    done = w.run("watch", "--once", "--scheduled", env=w.env(token=""))
    assert done.returncode != 0
    assert "a scheduled pass found no token" in done.stderr
    assert "relay join --save-token" in done.stderr


def test_a_torn_down_watcher_is_not_said_to_have_had_no_job(
    world: World, real_crontab: None
) -> None:
    joined(world)
    world.worker.ok("leave")  # on demand, while a job still binds the node
    said = world.worker.run("doctor").stdout
    assert "no open job bound it" not in said and "`relay join` registers it again" in said


def test_a_pass_that_fails_before_it_starts_still_leaves_a_heartbeat(
    world: World, real_crontab: None
) -> None:
    """No token for the scheduled pass: doctor names the failure, not 'no pass yet'."""
    w = world.worker
    w.call("join", "--node", WORKER, "--scheduler", "cron")  # no --save-token
    world.open_job()
    done = w.run(*as_entry(world), env=w.env(token=""))
    assert done.returncode != 0
    beat = NodeState.for_clone(w.clone).heartbeat()
    assert beat is not None and beat.outcome.startswith("error: "), beat
    assert "--save-token" in beat.outcome
    status, found, _ = doctor(world)
    assert status == 1 and found["last pass"] == "fail"


def test_a_pass_a_person_starts_does_not_hide_a_dead_watcher(
    world: World, real_crontab: None
) -> None:
    joined(world)
    stale_pass(world)  # the scheduler's last pass is long gone
    world.worker.call("watch", "--once", "--node", WORKER)  # a person runs one by hand
    beat = NodeState.for_clone(world.worker.clone).heartbeat()
    assert beat is not None and beat.started_by == "person" and beat.outcome == "idle"
    status, found, _ = doctor(world)
    assert status == 1 and found["last pass"] == "fail", found
    said = world.worker.run("doctor").stdout
    assert "a pass started by person" in said and "does not count" in said
    line = next(
        x for x in world.worker.ok("status", as_node=False).splitlines() if "cron entry" in x
    )
    assert "not the watcher's" in line


def test_cron_without_daemon_is_not_called_working(world: World, real_crontab: None) -> None:
    from sched_helpers import cron_daemon

    cron_daemon(world.root, running=False)  # WSL or a container: a table nobody reads
    said = world.worker.ok("join", "--scheduler", "cron", "--save-token")
    assert "verified:" not in said
    assert "registered but NOT running" in said and "no cron daemon is running" in said
    assert len(relay_lines(read_crontab())) == 1  # kept: it runs once cron is started
    world.open_job()
    status, found, fixes = doctor(world)
    assert status == 1 and found["watcher"] == "fail"
    assert "sudo service cron start" in fixes["watcher"]
    line = next(
        x for x in world.worker.ok("status", as_node=False).splitlines() if "cron entry" in x
    )
    assert "NOT RUNNING: no cron daemon is running here" in line
    cron_daemon(world.root, running=True)  # someone started cron
    status, found, _ = doctor(world)
    assert found["watcher"] == "ok", found


def test_status_asks_the_scheduler_not_the_nodes_own_record(
    world: World, real_crontab: None
) -> None:
    joined(world)
    entry_removed(world)  # the record still says "registered"; the crontab does not
    record = load(NodeState.for_clone(world.worker.clone), WORKER)
    assert record is not None and record.active
    said = world.worker.ok("status", as_node=False)
    line = next(x for x in said.splitlines() if x.strip().startswith(f"{WORKER}:"))
    assert "MISSING, cron says: the crontab has no line # relay:" in line
    data = data_of(world.worker.call("status", "--json"))  # the same, in this process
    (mine,) = [row for row in data["watchers"] if row["node"] == WORKER]
    assert mine["entry"]["ok"] is False and mine["last_pass"]["started_by"] == "scheduler"


def test_doctor_warns_that_a_launch_agent_waits_for_a_login(world: World, tmp_path: Path) -> None:
    """launchd is asked (its answers recorded): a LaunchAgent passes, with a warning."""
    from sched_helpers import FakeLaunchd

    from relay.commands.doctor import Status, check_entry
    from relay.node.context import open_node
    from relay.watchers.registration import Seam, register

    w = world.worker
    w.call("join", "--node", WORKER, "--scheduler", "none")
    ctx = open_node(repo_dir=w.clone, node=WORKER, api=None)
    launchd = FakeLaunchd()
    seam = Seam(runner=launchd, home=tmp_path / "Users" / "zoë")
    column, lines = register(ctx, override="launchd", interval=300, seam=seam)
    assert column == "launchd" and any("until you log in" in line for line in lines)
    record = load(ctx.state, WORKER)
    assert record is not None and not record.at_boot
    found = check_entry(ctx, record, seam=seam)
    assert found.status is Status.WARN and "until you log in" in found.detail
    assert launchd.calls[-1][:2] == ("launchctl", "print")  # doctor asked launchd itself
    launchd.loaded.clear()  # someone booted it out by hand
    assert check_entry(ctx, record, seam=seam).status is Status.FAIL


def test_a_scheduled_pass_by_hand_is_a_person_s_and_only_the_entry_s_own_is_the_scheduler_s(
    world: World, real_crontab: None
) -> None:
    """`relay watch --once --scheduled` typed by a person cannot pose as the heartbeat:
    only the command line the entry carries (its registration's nonce) does; rejoining
    keeps the entry as it is, and an entry registered anew has a nonce of its own."""
    joined(world)
    w = world.worker
    state = NodeState.for_clone(w.clone)
    w.call("watch", "--once", "--scheduled", "--node", WORKER)
    beat = state.heartbeat()
    assert beat is not None and beat.started_by == "person", beat
    w.call("watch", "--once", "--scheduled", "--nonce", "0" * 32, "--node", WORKER)
    assert state.passes()[-1].started_by == "person"
    status, found, _ = doctor(world)
    assert found["last pass"] == "pending", found  # no scheduled pass yet, as before

    first = as_entry(world)
    assert "--nonce" in first and "--scheduled" in first
    w.call(*first)
    assert state.passes()[-1].started_by == "scheduler"
    status, found, _ = doctor(world)
    assert status == 0 and found["last pass"] == "ok", found

    w.call("join", "--node", WORKER, "--scheduler", "cron")
    assert as_entry(world) == first, "a rejoin leaves the entry (and its nonce) as it was"
    w.call("join", "--node", WORKER, "--scheduler", "none")
    w.call("join", "--node", WORKER, "--scheduler", "cron")
    again = as_entry(world)
    assert again != first, "a new registration has a nonce of its own"
    w.call(*first)  # the earlier entry's command line, kept by someone
    assert state.passes()[-1].started_by == "person"
    w.call(*again)
    assert state.passes()[-1].started_by == "scheduler"
