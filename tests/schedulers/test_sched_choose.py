"""choose(): the platform's scheduler, `--scheduler` over RELAY_SCHEDULER over the platform,
and the "does a user manager answer" probe asked through the seam."""

from __future__ import annotations

from pathlib import Path

import pytest
from sched_helpers import Recorder

from relay.errors import LocalUsageError
from relay.schedulers import (
    CHOICES,
    ENV_VAR,
    Completed,
    CronScheduler,
    LaunchdScheduler,
    Scheduler,
    SchedulerKind,
    SystemdScheduler,
    TaskScheduler,
    choose,
    declined,
    parse_kind,
)

PROBE = ("systemctl", "--user", "is-system-running")
OFFLINE = Completed(1, "offline\n", "")
NO_BUS = Completed(1, "", "Failed to connect to bus: No medium found\n")
MISSING = Completed(127, "", "systemctl: command not found")


def probe(answer: Completed) -> Recorder:
    return Recorder(answers={PROBE: [answer]})


@pytest.mark.parametrize(
    ("platform", "backend"), [("darwin", LaunchdScheduler), ("win32", TaskScheduler)]
)
def test_macos_and_windows_need_no_probe(platform: str, backend: type[Scheduler]) -> None:
    recorder = Recorder()
    chosen = choose(platform=platform, environ={}, runner=recorder)
    assert type(chosen) is backend
    assert recorder.calls == []


@pytest.mark.parametrize(
    ("answer", "backend"),
    [
        (Completed(0, "running\n", ""), SystemdScheduler),
        (Completed(1, "degraded\n", ""), SystemdScheduler),  # a failed unit, manager is up
        (Completed(1, "starting\n", ""), SystemdScheduler),
        (OFFLINE, CronScheduler),  # PID 1 is not systemd (a container)
        (NO_BUS, CronScheduler),  # no user manager for this session (su, ssh, cron)
        (MISSING, CronScheduler),  # no systemd at all
    ],
)
@pytest.mark.parametrize("platform", ["linux", "freebsd14"])
def test_elsewhere_systemd_only_when_a_user_manager_answers(
    platform: str, answer: Completed, backend: type[Scheduler]
) -> None:
    recorder = probe(answer)
    assert type(choose(platform=platform, environ={}, runner=recorder)) is backend
    assert recorder.calls == [PROBE]


def test_the_variable_beats_the_platform_and_the_flag_beats_both() -> None:
    recorder = probe(Completed(0, "running\n", ""))
    by_env = choose(platform="darwin", environ={ENV_VAR: "systemd"}, runner=recorder)
    assert type(by_env) is SystemdScheduler
    by_flag = choose(
        platform="darwin", override="cron", environ={ENV_VAR: "launchd"}, runner=recorder
    )
    assert type(by_flag) is CronScheduler
    blank = choose(platform="darwin", override=" ", environ={ENV_VAR: " "}, runner=recorder)
    assert type(blank) is LaunchdScheduler
    assert recorder.calls == []  # a named scheduler is never second-guessed by the probe


def test_the_variable_is_read_from_the_environment_when_none_is_given(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv(ENV_VAR, "Task Scheduler")
    assert type(choose(platform="linux", runner=Recorder())) is TaskScheduler
    monkeypatch.delenv(ENV_VAR)
    assert type(choose(platform="linux", runner=probe(OFFLINE))) is CronScheduler


@pytest.mark.parametrize(
    ("typed", "kind"),
    [
        ("launchd", SchedulerKind.LAUNCHD),
        ("task-scheduler", SchedulerKind.TASK_SCHEDULER),
        ("Task Scheduler", SchedulerKind.TASK_SCHEDULER),
        ("schtasks", SchedulerKind.TASK_SCHEDULER),
        (" CRON ", SchedulerKind.CRON),
        ("crontab", SchedulerKind.CRON),
        ("systemd", SchedulerKind.SYSTEMD),
    ],
)
def test_names_as_people_type_them(typed: str, kind: SchedulerKind) -> None:
    assert parse_kind(typed) is kind


def test_every_choice_names_a_backend_whose_column_is_its_kind() -> None:
    columns = {choose(override=name, environ={}, runner=Recorder()).describe() for name in CHOICES}
    assert columns == {"launchd", "Task Scheduler", "cron", "systemd"}


@pytest.mark.parametrize(
    ("override", "environ"), [("anacron", {}), (None, {ENV_VAR: "anacron"})], ids=["flag", "env"]
)
def test_an_unknown_name_is_refused_with_the_valid_ones(
    override: str | None, environ: dict[str, str]
) -> None:
    with pytest.raises(LocalUsageError) as caught:
        choose(platform="linux", override=override, environ=environ, runner=Recorder())
    message = str(caught.value)
    assert "anacron" in message
    assert all(name in message for name in (*CHOICES, "none"))


def test_none_declines_a_watcher_and_is_no_backend() -> None:
    assert declined(override="none", environ={})
    assert declined(environ={ENV_VAR: "None"})
    assert not declined(override="cron", environ={ENV_VAR: "none"})  # the flag wins
    assert not declined(environ={})
    with pytest.raises(LocalUsageError, match="declined"):
        choose(override="none", environ={}, runner=Recorder())


def test_the_backend_gets_the_seam_the_home_and_the_sleep(tmp_path: Path) -> None:
    recorder = Recorder()
    slept: list[float] = []
    chosen = choose(
        override="launchd", environ={}, runner=recorder, home=tmp_path, sleep=slept.append
    )
    assert chosen.runner is recorder and chosen.home == tmp_path
    chosen.sleep(0.5)
    assert slept == [0.5]
