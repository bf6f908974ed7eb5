"""`relay join`'s watcher: registered, verified, recorded; twice is once; `none` declines."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pytest
from e2e_world import line_for, read_crontab, relay_lines, write_crontab
from worlds import CONTROLLER, WORKER, World

from relay.node.context import open_node
from relay.schedulers import Completed, SchedulerError
from relay.watchers.registration import DECLINED, Seam, load, register

USER_TABLE = "# mine\n*/7 * * * * /bin/true\n"


def test_joining_twice_changes_nothing(world: World, real_crontab: None) -> None:
    write_crontab(USER_TABLE)
    w = world.worker
    first = w.ok("join", "--scheduler", "cron", "--interval", "600")
    assert "trusted the roster" in first and "every 600s" in first
    head, table = world.remote_head(), read_crontab()
    assert line_for(table, WORKER).startswith("*/10 * * * * ")
    again = w.ok("join")  # no flag: the clone's earlier choice and interval stand
    assert "win-desktop is already in the node table" in again and "every 600s" in again
    assert (world.remote_head(), read_crontab()) == (head, table)
    w.ok("join", "--scheduler", "cron", "--interval", "600")
    assert (world.remote_head(), read_crontab()) == (head, table)
    assert world.column(WORKER) == "cron"


def test_scheduler_none_declines_by_flag_or_variable(world: World, real_crontab: None) -> None:
    write_crontab(USER_TABLE)
    said = world.worker.ok("join", "--scheduler", "none")
    assert "watcher: none (declined)" in said
    assert world.column(WORKER) == DECLINED
    c = world.controller
    said = c.ok("join", env=c.env(RELAY_SCHEDULER="none"))
    assert "watcher: none (declined)" in said
    assert world.column(CONTROLLER) == DECLINED
    assert read_crontab() == USER_TABLE
    head = world.remote_head()
    world.worker.ok("join")  # a rejoin keeps the earlier refusal
    assert world.remote_head() == head and read_crontab() == USER_TABLE


def test_declining_later_removes_the_earlier_entry(world: World, real_crontab: None) -> None:
    write_crontab(USER_TABLE)
    w = world.worker
    w.ok("join", "--scheduler", "cron")
    assert len(relay_lines(read_crontab())) == 1
    said = w.ok("join", "--scheduler", "none")
    assert "removed the earlier cron watcher" in said
    assert read_crontab() == USER_TABLE
    assert world.column(WORKER) == DECLINED


class SystemdAnswers:
    """The OS seam as a systemd user manager answers it; lingering off."""

    def __init__(self, *, enabled: str = "enabled") -> None:
        self.calls: list[tuple[str, ...]] = []
        self.enabled = enabled

    def __call__(self, argv: Sequence[str], *, stdin: str | None = None) -> Completed:
        self.calls.append(tuple(argv))
        answers = {
            "is-enabled": f"{self.enabled}\n",
            "is-active": "active\n",
            "show-user": "Linger=no\n",
        }
        said = next((text for word, text in answers.items() if word in argv), "")
        return Completed(0, said, "")


def test_systemd_join_says_when_lingering_is_needed(
    world: World, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    w = world.worker
    w.call("join", "--node", WORKER, "--scheduler", "none")
    ctx = open_node(repo_dir=w.clone, node=WORKER, api=None)
    runner = SystemdAnswers()
    seam = Seam(runner=runner, home=tmp_path / "user-home")
    column, lines = register(ctx, override="systemd", interval=300, seam=seam)
    assert column == "systemd"
    assert any("loginctl enable-linger" in line for line in lines)
    assert ("systemctl", "--user", "daemon-reload") in runner.calls
    record = load(ctx.state, WORKER)
    assert record is not None and record.active and record.scheduler == "systemd"
    units = tmp_path / "user-home" / ".config" / "systemd" / "user"
    assert (units / f"{record.entry['label']}.timer").is_file()


def test_an_entry_the_os_does_not_keep_is_not_recorded(world: World, tmp_path: Path) -> None:
    w = world.worker
    w.call("join", "--node", WORKER, "--scheduler", "none")
    ctx = open_node(repo_dir=w.clone, node=WORKER, api=None)
    runner = SystemdAnswers(enabled="disabled")
    seam = Seam(runner=runner, home=tmp_path / "user-home")
    with pytest.raises(SchedulerError, match="did not keep the watcher"):
        register(ctx, override="systemd", interval=300, seam=seam)
    assert any(call[2:4] == ("disable", "--now") for call in runner.calls)  # cleaned up
    record = load(ctx.state, WORKER)
    assert record is None and world.column(WORKER) == DECLINED
