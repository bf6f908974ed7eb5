"""systemd user timers: the units read back, `systemd-analyze verify` on them, the systemctl
and loginctl command lines as recorded."""

from __future__ import annotations

import dataclasses
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from sched_helpers import Recorder, awkward_entry

from relay.errors import LocalUsageError
from relay.schedulers import Completed, Entry, SchedulerError, SystemdScheduler
from relay.schedulers.systemd import exec_start, quote_exec_word

NOT_FOUND = Completed(1, "", "Failed to get unit file state: No such file or directory\n")
NO_BUS = Completed(1, "", "Failed to connect to bus: No medium found\n")
# Directory names holding what a unit file treats specially: a specifier that exists (%h
# would become the home directory), a $ (literal in a program's path), spaces, non-ASCII;
# and what systemd refuses in a program's path outright (quotes and a backslash).
AWKWARD_DIR = "bin %h 100% $HOME semi;colon é 项目"
UNSAFE_DIR = 'bin "q" back\\slash it\'s'


def read_unit(text: str) -> dict[str, dict[str, str]]:
    """A unit file as sections of settings (each key appears once in ours)."""
    sections: dict[str, dict[str, str]] = {}
    current: dict[str, str] = {}
    for line in text.splitlines():
        if line.startswith("[") and line.endswith("]"):
            current = sections.setdefault(line[1:-1], {})
        elif line:
            key, _, value = line.partition("=")
            assert key not in current, f"{key} twice"
            current[key] = value
    return sections


def program_entry(root: Path, directory: str) -> Entry:
    """An entry whose interpreter lives under ``directory`` (a link to this Python)."""
    program = root / directory / "python"
    program.parent.mkdir(parents=True)
    program.symlink_to(sys.executable)
    return awkward_entry(root, python=str(program))


def write_units(root: Path, entry: Entry) -> list[Path]:
    """The rendered units, written where `systemd-analyze verify` can read them together."""
    unit_dir = root / "units"
    unit_dir.mkdir()
    paths = []
    for name, text in SystemdScheduler(home=root).render(entry).items():
        path = unit_dir / name
        path.write_text(text, encoding="utf-8")
        paths.append(path)
    return paths


def analyze(root: Path, paths: list[Path], *, user: bool) -> tuple[int, list[str]]:
    """Run `systemd-analyze [--user] verify`; its exit status and what it said of our units."""
    runtime = root / "runtime"
    runtime.mkdir(mode=0o700, exist_ok=True)
    env = {**os.environ, "XDG_RUNTIME_DIR": str(runtime), "SYSTEMD_LOG_COLOR": "0"}
    argv = ["systemd-analyze", *(["--user"] if user else []), "verify", *map(str, paths)]
    done = subprocess.run(argv, capture_output=True, text=True, env=env, check=False)
    said = [line for line in done.stderr.splitlines() if paths[0].stem in line]
    return done.returncode, said


def test_units_have_every_setting(tmp_path: Path) -> None:
    entry = awkward_entry(tmp_path)
    units = SystemdScheduler(home=tmp_path).render(entry)
    assert set(units) == {f"{entry.label}.service", f"{entry.label}.timer"}
    service = read_unit(units[f"{entry.label}.service"])
    timer = read_unit(units[f"{entry.label}.timer"])
    assert service["Service"]["Type"] == "oneshot"
    assert service["Service"]["ExecStart"].startswith(f'"{entry.argv[0]}" "-P" "-m" "relay.cli"')
    assert service["Service"]["WorkingDirectory"] == entry.working_dir.replace("%", "%%")
    assert service["Service"]["StandardOutput"] == f"append:{entry.stdout_log}"
    assert service["Service"]["StandardError"] == f"append:{entry.stderr_log}"
    assert f'"PATH={entry.env["PATH"]}"' in service["Service"]["Environment"]
    assert "100%% it's" in service["Unit"]["Description"]
    assert timer["Timer"]["OnActiveSec"]
    assert timer["Timer"]["OnUnitActiveSec"] == "300s"
    assert timer["Timer"]["AccuracySec"] == "1s"
    assert timer["Timer"]["Unit"] == f"{entry.label}.service"
    assert timer["Install"]["WantedBy"] == "timers.target"


@pytest.mark.parametrize(
    ("word", "variables", "quoted"),
    [
        ("plain", True, '"plain"'),
        ("two words", True, '"two words"'),
        ("50% off %h", True, '"50%% off %%h"'),
        ("$HOME ${X}", True, '"$$HOME $${X}"'),
        ("$HOME", False, '"$HOME"'),
        ('say "hi"', True, '"say \\"hi\\""'),
        ("a\\b\tc", True, '"a\\\\b\\tc"'),
        ("it's é 项目", True, '"it\'s é 项目"'),
    ],
)
def test_exec_words_are_quoted_for_systemd(word: str, variables: bool, quoted: str) -> None:
    assert quote_exec_word(word, expands_variables=variables) == quoted


def test_exec_start_quotes_the_program_as_systemd_reads_it() -> None:
    argv = ("/opt/a $X 5%/python", "-c", "print('$HOME 5%')")
    assert exec_start(argv) == '"/opt/a $X 5%%/python" "-c" "print(\'$$HOME 5%%\')"'
    unsafe = ('/home/o\'brien/"x"\\py', "--once")
    assert exec_start(unsafe) == '"/usr/bin/env" "/home/o\'brien/\\"x\\"\\\\py" "--once"'
    with pytest.raises(LocalUsageError, match="absolute"):
        exec_start(("python3", "--once"))


ANALYZE = pytest.mark.skipif(shutil.which("systemd-analyze") is None, reason="no systemd-analyze")


@ANALYZE
@pytest.mark.parametrize("user", [False, True], ids=["system", "user"])
def test_systemd_analyze_verify_accepts_units_with_awkward_paths(
    tmp_path: Path, user: bool
) -> None:
    """verify resolves specifiers and checks that the program exists, so a wrong escape of
    % or $ in the program's path shows up as an error (shown by spoiling the escapes)."""
    entry = program_entry(tmp_path, AWKWARD_DIR)
    paths = write_units(tmp_path, entry)
    assert analyze(tmp_path, paths, user=user) == (0, [])
    service = next(path for path in paths if path.suffix == ".service")
    good = service.read_text(encoding="utf-8")
    for spoiled in (good.replace("bin %%h", "bin %h"), good.replace("$HOME", "$$HOME", 1)):
        assert spoiled != good
        service.write_text(spoiled, encoding="utf-8")
        status, said = analyze(tmp_path, paths, user=user)
        assert status != 0 and any("is not executable" in line for line in said)


@ANALYZE
def test_a_program_path_systemd_refuses_is_started_through_env(tmp_path: Path) -> None:
    entry = program_entry(tmp_path, UNSAFE_DIR)
    paths = write_units(tmp_path, entry)
    assert analyze(tmp_path, paths, user=False) == (0, [])
    service = next(path for path in paths if path.suffix == ".service").read_text("utf-8")
    assert '\nExecStart="/usr/bin/env" "/' in service
    assert 'bin \\"q\\" back\\\\slash it\'s/python" "-P" "-m" "relay.cli"' in service


def test_register_writes_units_then_reloads_enables_and_restarts(
    tmp_path: Path, recorder: Recorder
) -> None:
    backend = SystemdScheduler(runner=recorder, home=tmp_path)
    entry = awkward_entry(tmp_path)
    backend.register(entry)
    timer = f"{entry.label}.timer"
    assert recorder.calls == [
        ("systemctl", "--user", "daemon-reload"),
        ("systemctl", "--user", "enable", "--now", timer),
        ("systemctl", "--user", "restart", timer),
    ]
    unit_dir = tmp_path / ".config" / "systemd" / "user"
    for name, text in backend.render(entry).items():
        assert (unit_dir / name).read_text(encoding="utf-8") == text
    if os.name != "nt":  # the POSIX log path of a Windows run is nobody's directory
        assert Path(entry.stdout_log).parent.is_dir()


def test_register_without_a_user_manager_says_why(tmp_path: Path) -> None:
    recorder = Recorder(answers={("systemctl", "--user"): [NO_BUS]})
    backend = SystemdScheduler(runner=recorder, home=tmp_path)
    with pytest.raises(SchedulerError, match="Failed to connect to bus") as caught:
        backend.register(awkward_entry(tmp_path))
    assert caught.value.hint is not None and "--scheduler cron" in caught.value.hint
    assert caught.value.argv == ("systemctl", "--user", "daemon-reload")
    assert recorder.calls == [("systemctl", "--user", "daemon-reload")]


@pytest.mark.parametrize(
    ("enabled", "active", "ok"),
    [
        (Completed(0, "enabled\n", ""), Completed(0, "active\n", ""), True),
        (Completed(1, "disabled\n", ""), Completed(0, "active\n", ""), False),
        (Completed(0, "enabled\n", ""), Completed(3, "inactive\n", ""), False),
        (NOT_FOUND, Completed(3, "inactive\n", ""), False),
        (NO_BUS, NO_BUS, False),
    ],
)
def test_verify_asks_is_enabled_and_is_active(
    tmp_path: Path, enabled: Completed, active: Completed, ok: bool
) -> None:
    entry = awkward_entry(tmp_path)
    recorder = Recorder(
        answers={
            ("systemctl", "--user", "is-enabled"): [enabled],
            ("systemctl", "--user", "is-active"): [active],
        }
    )
    result = SystemdScheduler(runner=recorder, home=tmp_path).verify(entry)
    assert result.ok is ok and result.scheduler == "systemd"
    assert entry.label in result.detail
    timer = f"{entry.label}.timer"
    assert recorder.calls == [
        ("systemctl", "--user", "is-enabled", timer),
        ("systemctl", "--user", "is-active", timer),
    ]


def test_teardown_disables_removes_units_and_reloads(tmp_path: Path) -> None:
    recorder = Recorder(answers={("systemctl", "--user", "disable"): [NOT_FOUND]})
    backend = SystemdScheduler(runner=recorder, home=tmp_path)
    entry = awkward_entry(tmp_path)
    backend.register(entry)
    unit_dir = tmp_path / ".config" / "systemd" / "user"
    (unit_dir / "someone-else.timer").write_text("[Timer]\nOnActiveSec=1h\n")
    del recorder.calls[:]
    backend.teardown(entry)
    assert recorder.calls == [
        ("systemctl", "--user", "disable", "--now", f"{entry.label}.timer"),
        ("systemctl", "--user", "daemon-reload"),
    ]
    assert sorted(p.name for p in unit_dir.iterdir()) == ["someone-else.timer"]
    backend.teardown(entry)  # twice is fine


@pytest.mark.parametrize(
    ("answer", "advised"),
    [
        (Completed(0, "Linger=yes\n", ""), False),
        (Completed(0, "Linger=no\n", ""), True),
        (Completed(1, "", "Failed to get user: User ID 0 is not logged in or lingering"), True),
        (Completed(127, "", "loginctl: command not found"), True),
    ],
)
def test_join_is_told_when_lingering_is_needed(
    tmp_path: Path, answer: Completed, advised: bool
) -> None:
    recorder = Recorder(answers={("loginctl", "show-user"): [answer]})
    backend = SystemdScheduler(runner=recorder, home=tmp_path)
    advice = backend.advice(awkward_entry(tmp_path))
    assert bool(advice) is advised
    assert all("loginctl enable-linger" in line for line in advice)
    ((program, verb, _user, *rest),) = recorder.calls
    assert (program, verb, *rest) == ("loginctl", "show-user", "-p", "Linger")


@pytest.mark.parametrize("path", ["relative/dir", "/ends in a blank ", "/ends in\\"])
def test_paths_a_unit_file_cannot_hold_are_refused(tmp_path: Path, path: str) -> None:
    base = awkward_entry(tmp_path)
    entry = dataclasses.replace(base, working_dir=path)
    with pytest.raises(LocalUsageError, match="systemd"):
        SystemdScheduler(home=tmp_path).render(entry)


def test_a_description_never_continues_onto_the_next_line(tmp_path: Path) -> None:
    base = awkward_entry(tmp_path)
    entry = dataclasses.replace(base, description="ends in a backslash \\")
    (service, _timer) = SystemdScheduler(home=tmp_path).render(entry).values()
    assert "Description=ends in a backslash\n" in service


def test_at_boot_asks_logind_to_linger_and_says_when_it_refused(tmp_path: Path) -> None:
    import getpass

    off = Completed(0, "Linger=no\n", "")
    active = {
        ("systemctl", "--user", "is-enabled"): [Completed(1, "disabled\n", "")],
        ("systemctl", "--user", "is-active"): [Completed(3, "inactive\n", "")],
    }
    granted = Recorder(
        answers={**active, ("loginctl", "show-user"): [off, Completed(0, "Linger=yes\n", "")]}
    )
    backend = SystemdScheduler(runner=granted, home=tmp_path, at_boot=True)
    entry = awkward_entry(tmp_path)
    backend.register(entry)
    assert ("loginctl", "enable-linger", getpass.getuser()) in granted.calls
    assert backend.advice(entry) == ()  # logind lingers now: nothing to warn about
    refused = Recorder(answers={**active, ("loginctl", "show-user"): [off]})
    backend = SystemdScheduler(runner=refused, home=tmp_path / "b", at_boot=True)
    backend.register(entry)
    (said,) = backend.advice(entry)
    assert (
        said.startswith("warning:") and f"sudo loginctl enable-linger {getpass.getuser()}" in said
    )
    plain = Recorder(answers={**active, ("loginctl", "show-user"): [off]})
    SystemdScheduler(runner=plain, home=tmp_path / "c").register(entry)
    assert not any(c[:2] == ("loginctl", "enable-linger") for c in plain.calls)  # not asked
