"""Teardown on demand (`relay leave`) and the race the issue names: a job that arrives
while a pass is tearing its watcher down brings the watcher back."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from datetime import UTC, datetime

import pytest
from e2e_world import as_cron, line_for, read_crontab, write_crontab
from worlds import WORKER, World, git

from relay.node.context import NodeContext, open_node
from relay.schedulers import Completed, run_command
from relay.watchers.once import run_pass
from relay.watchers.registration import Seam, load, tear_down

USER_TABLE = "# mine\n*/7 * * * * /bin/true\n"


def loop_history(world: World) -> list[str]:
    """The subjects of the pushed commits that touched the master file, newest first."""
    log = git("log", "--format=%s", "main", "--", "docs/loop/LOOP.md", cwd=world.bare)
    return log.splitlines()


def test_leave_tears_down_on_demand(world: World, real_crontab: None) -> None:
    write_crontab(USER_TABLE)
    w = world.worker
    w.ok("join", "--scheduler", "cron")
    number = world.open_job()
    said = w.ok("leave")
    assert "watcher torn down: the cron entry is removed" in said
    assert f"still bound to #{number}" in said  # told, and not brought back
    assert read_crontab() == USER_TABLE
    assert world.column(WORKER) == f"none (torn down {datetime.now(UTC):%Y-%m-%d})"
    head = world.remote_head()
    assert "has no watcher registered in this clone" in w.ok("leave")
    assert world.remote_head() == head and read_crontab() == USER_TABLE


def test_a_job_arriving_during_teardown_brings_the_watcher_back(
    world: World, real_crontab: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_crontab(USER_TABLE)
    w, c = world.worker, world.controller
    w.ok("join", "--scheduler", "cron", "--save-token")
    line = line_for(read_crontab(), WORKER)
    first = world.open_job()
    world.api(f"/issues/{first}", "PATCH", {"state": "closed"})  # the worker's job ended
    opened: list[int] = []

    def racing(argv: Sequence[str], *, stdin: str | None = None) -> Completed:
        """The real crontab; the moment our line is written away, a job is opened."""
        answer = run_command(argv, stdin=stdin)
        if list(argv) == ["crontab", "-"] and line not in (stdin or "") and not opened:
            out = c.ok("job", "open", "--worker", WORKER, "--title", "Late", "--objective", "?")
            opened.append(int(out.split("#", 1)[1].split(":", 1)[0]))
        return answer

    async def hook(ctx: NodeContext) -> list[str]:
        return list((await tear_down(ctx, seam=Seam(runner=racing))).lines)

    monkeypatch.setenv("RELAY_TOKEN", w.token)
    ctx = open_node(repo_dir=w.clone, node=WORKER, api=None)
    report = asyncio.run(run_pass(ctx, on_teardown=hook))  # no open job binds the worker

    assert report.teardown and len(opened) == 1
    assert any("registered again" in said for said in report.lines)
    assert read_crontab() == USER_TABLE + line + "\n"  # the same entry, back in place
    assert world.column(WORKER) == "cron"
    assert loop_history(world)[:2] == [
        "relay: win-desktop watcher is cron again (a job arrived)",
        "relay: win-desktop watcher torn down (no open job binds it)",
    ]
    record = load(ctx.state, WORKER)
    assert record is not None and record.active
    done = as_cron(line, world.root / "home")  # the next scheduled pass sees the job
    errors = (w.clone / ".git" / "relay" / "watch.err.log").read_text()
    assert done.returncode == 0, errors
    assert read_crontab() == USER_TABLE + line + "\n" and world.column(WORKER) == "cron"


def test_a_watcher_waits_for_its_first_job(world: World, real_crontab: None) -> None:
    write_crontab(USER_TABLE)
    w = world.worker
    w.ok("join", "--scheduler", "cron", "--save-token")  # joined before any job exists
    line = line_for(read_crontab(), WORKER)
    head = world.remote_head()
    done = as_cron(line, world.root / "home")
    assert done.returncode == 0, done.stderr
    assert "its watcher stays for the first one" in (w.clone / ".git/relay/watch.log").read_text()
    assert read_crontab() == USER_TABLE + line + "\n"
    assert world.remote_head() == head and world.column(WORKER) == "cron"
