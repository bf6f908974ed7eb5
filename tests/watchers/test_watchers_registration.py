"""The watcher record remembers `--at-boot`, so teardown, doctor and status act on the very
entry that was registered (a LaunchDaemon in the system domain, not a LaunchAgent)."""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime
from pathlib import Path

from relay.schedulers import Entry, LaunchdScheduler
from relay.watchers.registration import Seam, WatcherRecord


def entry(tmp_path: Path) -> Entry:
    return Entry(
        label="relay-watch-mac-0123456789ab",
        argv=("/usr/bin/python3", "-m", "relay.cli", "watch", "--once", "--scheduled"),
        working_dir=str(tmp_path),
        stdout_log=str(tmp_path / "watch.log"),
        stderr_log=str(tmp_path / "watch.err.log"),
    )


def test_the_record_keeps_at_boot_and_the_seam_rebuilds_that_backend(tmp_path: Path) -> None:
    spec = entry(tmp_path)
    record = WatcherRecord(
        node="mac",
        scheduler="launchd",
        entry=dataclasses.asdict(spec),
        active=True,
        registered_at=datetime.now(UTC),
        at_boot=True,
    )
    again = WatcherRecord.model_validate_json(record.model_dump_json())
    assert again.at_boot and again.spec() == spec
    backend = Seam(home=tmp_path).of(again)
    assert isinstance(backend, LaunchdScheduler) and backend.domain == "system"
    written_before = record.model_dump(mode="json")
    del written_before["at_boot"]  # a record of a relay before --at-boot
    plain = WatcherRecord.model_validate(written_before)
    assert plain.at_boot is False
    agent = Seam(home=tmp_path).of(plain)
    assert isinstance(agent, LaunchdScheduler) and agent.domain.startswith("gui/")
    assert agent.plist_path(spec).parent == tmp_path / "Library" / "LaunchAgents"


def test_entries_that_run_with_nobody_logged_in_are_known(tmp_path: Path) -> None:
    from relay.watchers.scheduled_token import runs_logged_out

    def record(scheduler: str, *, at_boot: bool = False) -> WatcherRecord:
        return WatcherRecord(
            node="n",
            scheduler=scheduler,
            entry=dataclasses.asdict(entry(tmp_path)),
            active=True,
            registered_at=datetime.now(UTC),
            at_boot=at_boot,
        )

    assert runs_logged_out(record("Task Scheduler"))  # S4U
    assert runs_logged_out(record("launchd", at_boot=True))  # a LaunchDaemon
    assert runs_logged_out(record("systemd", at_boot=True))  # lingering asked for
    assert not runs_logged_out(record("launchd"))  # a LaunchAgent runs in the login session
    assert not runs_logged_out(record("cron")) and not runs_logged_out(None)
