"""Watchers that mend themselves: `relay doctor --fix` re-creates the scheduler entry the
OS lost (the same entry, nonce and all), and a foreground `relay watch` that ends because
no job binds its node removes the node's entry as a scheduled pass would."""

from __future__ import annotations

import subprocess
from datetime import UTC, datetime

from e2e_world import line_for, read_crontab, write_crontab
from worlds import WORKER, World, envelope_of, stop_process

from relay.edges.local import NodeState
from relay.watchers.registration import load

USER_TABLE = "# mine\n*/7 * * * * /bin/true\n"


def test_doctor_fix_re_creates_a_lost_entry(world: World, real_crontab: None) -> None:
    w = world.worker
    write_crontab(USER_TABLE)
    w.ok("join", "--scheduler", "cron", "--save-token")
    world.open_job()
    line = line_for(read_crontab(), WORKER)
    write_crontab(USER_TABLE)  # someone (or an OS upgrade) emptied relay's line
    plain = w.run("doctor")
    assert plain.returncode == 1 and "FAIL  watcher" in plain.stdout
    assert read_crontab() == USER_TABLE  # without --fix doctor only says so
    done = w.run("doctor", "--fix", "--json")
    data = envelope_of(done.stdout)["data"]
    assert data["fixed"] == [
        f"fixed: re-created the cron entry of {WORKER} (every 300s): {data['checks'][2]['detail']}"
    ]
    assert data["checks"][2]["name"] == "watcher" and data["checks"][2]["status"] == "ok"
    assert read_crontab() == USER_TABLE + line + "\n"  # the very entry, its nonce and all
    again = w.run("doctor", "--fix", "--json")
    assert envelope_of(again.stdout)["data"]["fixed"] == []  # nothing left to mend
    assert read_crontab() == USER_TABLE + line + "\n"


def test_a_foreground_watch_that_ends_removes_the_nodes_entry(
    world: World, real_crontab: None
) -> None:
    """It used to end saying so and leave the cron entry in place, passing forever."""
    w, c = world.worker, world.controller
    write_crontab(USER_TABLE)
    w.ok("join", "--scheduler", "cron", "--save-token")
    job = world.open_job()
    assert line_for(read_crontab(), WORKER)
    proc = subprocess.Popen(
        w.argv("watch", "--interval", "1"),
        env=w.env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        c.ok("task", str(job), "--verification", "--step", "echo hi")
        c.ok("result", str(job), "--wait", "--timeout", "60", "--poll", "0.3", as_node=False)
        assert proc.poll() is None, "a job binds the worker: it keeps watching"
        c.ok("resolve", str(job), "--summary", "Done.")
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            stop_process(proc)
    assert proc.returncode == 0, err
    assert f"no open job binds {WORKER} any more: watching on this machine has ended" in out
    assert "watcher torn down: the cron entry is removed" in out
    assert read_crontab() == USER_TABLE
    record = load(NodeState.for_clone(w.clone), WORKER)
    assert record is not None and not record.active
    assert world.column(WORKER) == f"none (torn down {datetime.now(UTC):%Y-%m-%d})"
