"""What an independent review found in join, teardown and the scheduled pass, each shown
end to end: launchd's bootout ending the pass that asked for it, half-written state, a
rejoin restarting the wait for a first job, and Windows passes writing their own log."""

from __future__ import annotations

import asyncio
import json
import os
import re
import shlex
import sys
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from e2e_world import as_cron, line_for, read_crontab, write_crontab
from worlds import CONTROLLER, WORKER, Node, World

from relay.edges.local import NodeState
from relay.node.context import open_node
from relay.protocol.decide import FIRST_JOB_GRACE
from relay.schedulers import Completed, SchedulerError, run_command
from relay.watchers.registration import Seam, load, register, save, tear_down

USER_TABLE = "# mine\n*/7 * * * * /bin/true\n"
FAKE = Path(__file__).resolve().parent / "fake_launchctl.py"


def today() -> str:
    return f"{datetime.now(UTC):%Y-%m-%d}"


class Launchd:
    """The fake launchctl on a PATH of its own, and what it was asked."""

    def __init__(self, root: Path) -> None:
        self.bin = root / "fake bin"
        self.bin.mkdir()
        program = self.bin / "launchctl"
        program.write_text(f"#!{sys.executable}\n" + FAKE.read_text())
        program.chmod(0o755)
        self.state = root / "launchd.json"

    def env(self, node: Node, **extra: str) -> dict[str, str]:
        path = f"{self.bin}{os.pathsep}{os.environ['PATH']}"
        return node.env(PATH=path, FAKE_LAUNCHD_STATE=str(self.state), **extra)

    def seen(self) -> dict[str, Any]:
        return dict(json.loads(self.state.read_text()))


def launchd_join(world: World, *, in_process: bool = False) -> tuple[Launchd, str]:
    """The worker joined with a launchd watcher, its job opened and closed since (the
    join as a process, or ``in_process`` where it is only the test's setup)."""
    fake = Launchd(world.root)
    w = world.worker
    if in_process:
        path = f"{fake.bin}{os.pathsep}{os.environ['PATH']}"
        said = w.call(
            "join", "--node", WORKER, "--scheduler", "launchd", "--save-token",
            PATH=path, FAKE_LAUNCHD_STATE=str(fake.state),
        )  # fmt: skip
    else:
        said = w.ok("join", "--scheduler", "launchd", "--save-token", env=fake.env(w))
    assert "verified: launchd has gui/" in said
    record = load(NodeState.for_clone(w.clone), WORKER)
    assert record is not None
    number = world.open_job()
    world.api(f"/issues/{number}", "PATCH", {"state": "closed"})
    return fake, str(record.entry["label"])


@pytest.mark.skipif(os.name == "nt", reason="SIGTERM is POSIX")
def test_a_launchd_pass_survives_the_bootout_of_its_own_job(world: World) -> None:
    fake, label = launchd_join(world)
    w = world.worker
    env = fake.env(w, token="", XPC_SERVICE_NAME=label)  # as launchd starts the job
    done = w.run("watch", "--once", "--scheduled", env=env)
    assert fake.seen()["terminated"] == [label]  # launchd did send the SIGTERM
    assert done.returncode == 0, done.stderr
    assert "watcher torn down: the launchd entry is removed" in done.stdout
    record = load(NodeState.for_clone(w.clone), WORKER)
    assert record is not None and not record.active  # recorded after the removal
    plist = world.root / "home" / "Library" / "LaunchAgents" / f"{label}.plist"
    assert not plist.exists() and fake.seen()["loaded"] == []
    assert world.column(WORKER) == f"none (torn down {today()})"


@pytest.mark.skipif(os.name == "nt", reason="SIGTERM is POSIX")
def test_a_job_arriving_during_a_launchd_teardown_keeps_the_job_loaded(
    world: World,
) -> None:
    """launchd will not take the label back while the pass (its job) still runs, so the
    pass decides before its bootout: a job that arrives once the column is pushed (here:
    opened by the remote's post-receive hook, as the push lands) keeps the job loaded."""
    fake, label = launchd_join(world, in_process=True)
    w, c = world.worker, world.controller
    late = c.argv("job", "open", "--worker", WORKER, "--title", "Late", "--objective", "?")
    env = {k: v for k, v in c.env().items() if k in ("PATH", "HOME", "RELAY_TOKEN")}
    hook = world.bare / "hooks" / "post-receive"
    exports = "".join(f"export {k}={shlex.quote(v)}\n" for k, v in env.items())
    hook.write_text(
        "#!/bin/sh\n" + exports + "unset GIT_DIR\n"
        f"{shlex.join(late)} >/dev/null 2>&1\n"
        f"rm -f {shlex.quote(str(hook))}\n"  # once
    )
    hook.chmod(0o755)
    plist = Path(w.env()["HOME"]) / "Library/LaunchAgents" / f"{label}.plist"
    assert plist.is_file()
    env = fake.env(w, token="", XPC_SERVICE_NAME=label)
    done = w.run("watch", "--once", "--scheduled", env=env)
    assert done.returncode == 0, done.stderr
    assert "a job arrived during the teardown" in done.stdout
    assert "bootout" not in [call[0] for call in fake.seen()["calls"][-3:]]
    assert fake.seen()["loaded"] == [label]
    assert plist.is_file(), "the plist is back, so the job loads again at the next login"
    record = load(NodeState.for_clone(w.clone), WORKER)
    assert record is not None and record.active
    assert world.column(WORKER) == "launchd"


def test_a_failed_removal_keeps_the_record_and_puts_the_column_back(
    world: World, real_crontab: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_crontab(USER_TABLE)
    w = world.worker
    w.call("join", "--node", WORKER, "--scheduler", "cron")
    line = line_for(read_crontab(), WORKER)

    def no_writes(argv: Sequence[str], *, stdin: str | None = None) -> Completed:
        if list(argv) == ["crontab", "-"]:
            return Completed(1, "", "crontab: cannot write the table\n")
        return run_command(argv, stdin=stdin)

    monkeypatch.setenv("RELAY_TOKEN", w.token)
    ctx = open_node(repo_dir=w.clone, node=WORKER, api=None)
    with pytest.raises(SchedulerError, match="cannot write the table"):
        asyncio.run(tear_down(ctx, seam=Seam(runner=no_writes)))
    record = load(ctx.state, WORKER)
    assert record is not None and record.active
    assert line_for(read_crontab(), WORKER) == line
    assert world.column(WORKER) == "cron"


def test_a_failed_switch_of_backend_keeps_the_old_entry(
    world: World, real_crontab: None, tmp_path: Path
) -> None:
    write_crontab(USER_TABLE)
    w = world.worker
    w.call("join", "--node", WORKER, "--scheduler", "cron")
    line = line_for(read_crontab(), WORKER)

    def no_user_manager(argv: Sequence[str], *, stdin: str | None = None) -> Completed:
        if argv[0] == "systemctl":
            return Completed(1, "", "Failed to connect to bus: No medium found\n")
        return run_command(argv, stdin=stdin)

    ctx = open_node(repo_dir=w.clone, node=WORKER, api=None)
    seam = Seam(runner=no_user_manager, home=tmp_path / "home")
    with pytest.raises(SchedulerError, match="No medium found"):
        register(ctx, override="systemd", interval=300, seam=seam)
    assert line_for(read_crontab(), WORKER) == line
    record = load(ctx.state, WORKER)
    assert record is not None and record.active and record.scheduler == "cron"
    assert list((tmp_path / "home" / ".config" / "systemd" / "user").iterdir()) == []
    assert world.column(WORKER) == "cron"


@pytest.mark.parametrize(
    "flags", [("--scheduler", "bogus"), ("--scheduler", "cron", "--interval", "10")]
)
def test_join_refuses_bad_input_before_pushing_anything(
    world: World, real_crontab: None, flags: tuple[str, ...]
) -> None:
    write_crontab(USER_TABLE)
    head = world.remote_head()
    done = world.worker.run("join", *flags)
    assert done.returncode == 2 and done.stderr.startswith("relay: ")
    assert world.remote_head() == head
    assert world.column(WORKER) == "none"  # its row (from its admission) is as it was
    assert read_crontab() == USER_TABLE


def test_a_rejoin_keeps_the_wait_and_the_wait_is_bounded(world: World, real_crontab: None) -> None:
    write_crontab(USER_TABLE)
    w = world.worker
    w.ok("join", "--scheduler", "cron", "--save-token")
    state = NodeState.for_clone(w.clone)
    first = load(state, WORKER)
    w.ok("join")
    again = load(state, WORKER)
    assert first is not None and again is not None
    assert again.registered_at == first.registered_at  # the wait did not start over
    line = line_for(read_crontab(), WORKER)
    home = world.root / "home"
    assert as_cron(line, home).returncode == 0  # no job yet: it waits
    assert line_for(read_crontab(), WORKER) == line
    long_ago = datetime.now(UTC) - FIRST_JOB_GRACE - timedelta(minutes=5)
    save(state, again.model_copy(update={"registered_at": long_ago}))
    done = as_cron(line, home)  # a day without a job: the pass tears down, as the issue says
    assert done.returncode == 0, done.stderr
    assert read_crontab() == USER_TABLE
    assert world.column(WORKER) == f"none (torn down {today()})"
    assert world.column(CONTROLLER) == "none"  # the other node's row is untouched


def test_watch_log_keeps_the_lines_and_the_errors_of_a_pass(world: World) -> None:
    w = world.worker
    w.call("join", "--node", WORKER, "--scheduler", "none")
    log = world.root / "Zoë's logs" / "watch.log"
    w.ok("watch", "--once", "--log", str(log))
    assert f"{WORKER}: nothing to do" in log.read_text(encoding="utf-8")
    done = w.run("watch", "--once", "--scheduled", "--log", str(log), env=w.env(token=""))
    assert done.returncode != 0
    last = log.read_text(encoding="utf-8").splitlines()[-1]
    assert re.match(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC relay: ", last), last
    assert "a scheduled pass found no token" in last
    assert w.token not in log.read_text(encoding="utf-8")
