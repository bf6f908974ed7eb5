"""End to end with the real crontab: join registers, the jobs keep it, the last one ends it.

Every scheduled pass here is the exact command line `relay join` put into the crontab,
run the way cron runs it (``/bin/sh -c``, cron's minimal environment, no token in the
environment): the pass must find its token in the node's token file.
"""

from __future__ import annotations

import stat
from datetime import UTC, datetime

from e2e_world import as_cron, line_for, read_crontab, relay_lines, write_crontab
from worlds import CONTROLLER, WORKER, World

USER_TABLE = (
    "# the user's own crontab, kept byte for byte\n"
    'MAILTO=""\n'
    "17 3 * * * /bin/echo 'nightly 100\\% done' >/dev/null 2>&1\n"
)


def today() -> str:
    return f"{datetime.now(UTC):%Y-%m-%d}"


def test_join_registers_a_cron_watcher_that_the_last_job_tears_down(
    world: World, real_crontab: None
) -> None:
    write_crontab(USER_TABLE)
    c, w = world.controller, world.worker
    home = world.root / "home"

    said = w.ok("join", "--scheduler", "cron", "--save-token")
    assert "verified: the crontab holds # relay:relay-watch-win-desktop-" in said
    assert "the token file" in said and "a scheduled pass will find no token" not in said
    token_file = w.clone / ".git" / "relay" / "token"
    assert stat.S_IMODE(token_file.stat().st_mode) == 0o600
    assert token_file.read_text().strip() == w.token
    table = read_crontab()
    assert table.startswith(USER_TABLE) and len(relay_lines(table)) == 1
    worker_line = line_for(table, WORKER)
    assert w.token not in table
    assert world.column(WORKER) == "cron"

    said = c.ok("join", "--scheduler", "cron")  # its token only in the environment
    assert "a scheduled pass will find no token: run `relay join --save-token`" in said
    assert world.column(CONTROLLER) == "cron"
    assert len(relay_lines(read_crontab())) == 2

    number = world.open_job()
    c.call("task", str(number), "--objective", "Say hello.", "--step", "echo hello-from-cron")
    done = as_cron(worker_line, home)  # the worker's turn: the scheduled pass runs the TASK
    assert done.returncode == 0, done.stderr
    assert any(h.startswith("### RESULT 1") for h in world.heads(number))
    assert "RESULT 1 posted" in (w.clone / ".git" / "relay" / "watch.log").read_text()
    assert line_for(read_crontab(), WORKER) == worker_line  # a job binds it: kept
    assert world.column(WORKER) == "cron"

    said = c.ok("resolve", str(number), "--summary", "Hello was said.", "--force", "t")
    assert "watcher torn down: the cron entry is removed" in said
    assert any("its cron watcher is removed" in c["body"] for c in world.comments(number))
    assert world.column(CONTROLLER) == f"none (torn down {today()})"
    assert relay_lines(read_crontab()) == [worker_line]

    done = as_cron(worker_line, home)  # the next pass finds no job binding the worker
    assert done.returncode == 0, done.stderr
    assert read_crontab() == USER_TABLE  # every other line exactly as it was
    assert world.column(WORKER) == f"none (torn down {today()})"
    assert "watcher torn down" in (w.clone / ".git" / "relay" / "watch.log").read_text()

    head = world.remote_head()
    again = as_cron(worker_line, home)  # a tick that fired during the teardown: no change
    assert again.returncode == 0, again.stderr
    assert (world.remote_head(), read_crontab()) == (head, USER_TABLE)
