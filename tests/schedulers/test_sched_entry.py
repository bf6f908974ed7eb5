"""The entry spec: labels that never collide, a sane PATH, and never a token."""

from __future__ import annotations

import dataclasses
import os
import sys
from pathlib import Path

import pytest
from sched_helpers import awkward_entry, windows_entry

from relay.errors import LocalUsageError
from relay.schedulers import (
    CronScheduler,
    Entry,
    LaunchdScheduler,
    Scheduler,
    SystemdScheduler,
    TaskScheduler,
    default_argv,
    label_for,
)

TOKENS = {
    "GITHUB_TOKEN": "ghp_" + "a1B2c3D4e5" * 4,
    "GH_TOKEN": "github_pat_" + "Z9y8X7w6V5" * 5,
    "RELAY_TOKEN": "ghs_" + "q" * 36,
    "RELAY_HUB_URL": "https://relay:ghp_" + "s3cr3tS3cr3t" * 3 + "@hub.invalid/api",
    "RELAY_APP_KEY": "-----BEGIN RSA PRIVATE KEY-----",
}


# Entry.create builds this OS's paths; these tests expect POSIX ones (Windows: see below).
POSIX_ONLY = pytest.mark.skipif(os.name == "nt", reason="expects POSIX paths from Entry.create")


def all_backends(home: Path) -> list[Scheduler]:
    return [
        LaunchdScheduler(home=home, uid=501),
        CronScheduler(home=home),
        SystemdScheduler(home=home),
        TaskScheduler(home=home),
    ]


def test_labels_differ_per_clone_and_per_node(tmp_path: Path) -> None:
    one, two = tmp_path / "one", tmp_path / "two"
    labels = {
        label_for(clone=one, node="mac"),
        label_for(clone=two, node="mac"),
        label_for(clone=one, node="linux"),
    }
    assert len(labels) == 3
    assert label_for(clone=one, node="mac") == label_for(clone=one, node="mac")
    assert all(label.startswith("relay-watch-") for label in labels)


def test_label_of_an_exotic_node_name_is_still_portable(tmp_path: Path) -> None:
    label = label_for(clone=tmp_path, node="Zoë's MacBook Pro (2) " + "x" * 80)
    Entry(label=label, argv=("/bin/true",), working_dir="/", stdout_log="/o", stderr_log="/e")
    assert len(label) <= 60


@POSIX_ONLY
def test_create_builds_the_watch_pass_with_absolute_paths(tmp_path: Path) -> None:
    entry = awkward_entry(tmp_path, python="/opt/py/bin/python3")
    clone = Path(entry.working_dir)
    assert entry.argv == default_argv("/opt/py/bin/python3", clone, "mac-mini")
    assert entry.argv[1:6] == ("-P", "-m", "relay.cli", "watch", "--once")
    assert entry.interval_seconds == 300
    assert Path(entry.stdout_log).parent == tmp_path / "state dir"
    assert entry.env["PATH"].split(":")[0] == "/opt/py/bin"
    assert entry.env["LANG"] == "C.UTF-8"


@POSIX_ONLY
def test_path_drops_relative_entries_and_duplicates(tmp_path: Path) -> None:
    entry = Entry.create(
        clone=tmp_path,
        node="n",
        state_dir=tmp_path,
        python=Path("/usr/bin/py"),
        environ={"PATH": "bin:/usr/bin:.:/usr/bin:/sbin"},
    )
    assert entry.env["PATH"] == "/usr/bin:/usr/local/bin:/bin"


def test_argv_is_a_parameter(tmp_path: Path) -> None:
    argv = ["/usr/bin/env", "relay", "watch", "--once"]
    entry = Entry.create(clone=tmp_path, node="n", state_dir=tmp_path, argv=argv, environ={})
    assert entry.argv == tuple(argv)


@POSIX_ONLY
def test_no_token_reaches_any_rendered_file(tmp_path: Path) -> None:
    environ = {"PATH": "/usr/bin:/bin", "RELAY_HUB_URL_PLAIN": "http://127.0.0.1:8080", **TOKENS}
    entry = Entry.create(clone=tmp_path, node="n", state_dir=tmp_path, environ=environ)
    assert dict(entry.environment).keys() == {"PATH", "RELAY_HUB_URL_PLAIN"}
    win = windows_entry(clone=r"C:\src\relay")
    for backend in all_backends(tmp_path):
        subject = win if isinstance(backend, TaskScheduler) else entry
        text = "\n".join(backend.render(subject).values())
        assert "127.0.0.1:8080" in text or isinstance(backend, TaskScheduler)
        for secret in TOKENS.values():
            assert secret not in text
        assert "ghp_" not in text and "github_pat_" not in text


@pytest.mark.parametrize("secret", list(TOKENS.values())[:4])
def test_a_token_in_the_command_is_refused(secret: str) -> None:
    with pytest.raises(LocalUsageError, match="token-shaped"):
        Entry(
            label="relay-watch-x",
            argv=("/bin/relay", "--token", secret),
            working_dir="/",
            stdout_log="/o",
            stderr_log="/e",
        )


def test_a_secret_variable_given_directly_is_refused() -> None:
    with pytest.raises(LocalUsageError, match="GH_TOKEN"):
        Entry(
            label="relay-watch-x",
            argv=("/bin/relay",),
            working_dir="/",
            stdout_log="/o",
            stderr_log="/e",
            environment=(("GH_TOKEN", "anything"),),
        )


@pytest.mark.parametrize("interval", [0, 59, 86401])
def test_interval_out_of_range_is_refused(interval: int, tmp_path: Path) -> None:
    with pytest.raises(LocalUsageError, match="interval"):
        Entry.create(clone=tmp_path, node="n", state_dir=tmp_path, interval_seconds=interval)


@pytest.mark.parametrize(
    ("field", "value"), [("working_dir", "/a\nb"), ("label", "Relay Watch"), ("argv", ())]
)
def test_malformed_entries_are_refused(field: str, value: object) -> None:
    fields: dict[str, object] = {
        "label": "relay-watch-x",
        "argv": ("/bin/true",),
        "working_dir": "/",
        "stdout_log": "/o",
        "stderr_log": "/e",
    }
    fields[field] = value
    with pytest.raises(LocalUsageError):
        Entry(**fields)  # type: ignore[arg-type]


@pytest.mark.skipif(sys.platform != "win32", reason="Windows paths come from Entry.create there")
def test_create_on_windows_builds_a_task_without_tokens(tmp_path: Path) -> None:
    environ = {"PATH": r"C:\Windows\system32", **TOKENS}
    entry = Entry.create(clone=tmp_path, node="win", state_dir=tmp_path / "state", environ=environ)
    assert entry.argv[0] == sys.executable and entry.working_dir == str(tmp_path.resolve())
    assert entry.env["PATH"].split(";")[0] == str(Path(sys.executable).parent)
    text = "\n".join(TaskScheduler(home=tmp_path).render(entry).values())
    assert all(secret not in text for secret in TOKENS.values())


def test_the_entry_does_not_change_with_the_shell_that_joins(tmp_path: Path) -> None:
    """RELAY_SCHEDULER=cron relay join, then a plain relay join: the same entry (a changed
    launchd entry would be booted out, killing a running pass)."""
    base = {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", "RELAY_API_URL": "http://h:1"}
    plain = Entry.create(clone=tmp_path, node="n", state_dir=tmp_path, environ=base)
    chosen = Entry.create(
        clone=tmp_path,
        node="n",
        state_dir=tmp_path,
        environ={**base, "RELAY_SCHEDULER": "cron", "RELAY_NODE": "n"},
    )
    assert chosen == plain
    assert ("RELAY_API_URL", "http://h:1") in plain.environment


@POSIX_ONLY
def test_the_registration_s_nonce_is_on_the_command_line_every_backend_renders(
    tmp_path: Path,
) -> None:
    """Task Scheduler has no environment: the nonce a pass presents is an argument, and
    every backend writes it; an entry of an older relay has none."""
    from relay.schedulers import entry_nonce, new_nonce

    nonce = new_nonce()
    assert len(nonce) == 32 and nonce != new_nonce()
    entry = Entry.create(clone=tmp_path, node="mac", state_dir=tmp_path, nonce=nonce)
    assert entry_nonce(entry.argv) == nonce and "--scheduled" in entry.argv
    for backend in all_backends(tmp_path)[:3]:
        assert any(nonce in text for text in backend.render(entry).values()), backend
    win = windows_entry(clone=r"C:\Users\Zoë\src\repo")
    win = dataclasses.replace(win, argv=(*win.argv, "--nonce", nonce))
    (task,) = TaskScheduler(home=tmp_path).render(win).values()
    assert f"--nonce {nonce}" in task
    older = default_argv("/usr/bin/python3", tmp_path, "mac")
    assert entry_nonce(older) is None


@POSIX_ONLY
def test_the_watch_pass_never_imports_a_relay_package_the_clone_holds(tmp_path: Path) -> None:
    """The pass runs in the clone (its working directory) with ``-P``: the clone's own
    ``relay/`` is not on sys.path, this relay answers."""
    import subprocess

    clone, marker = tmp_path / "clone", tmp_path / "shadow-ran.txt"
    (clone / "relay").mkdir(parents=True)
    shadow = f"import pathlib\npathlib.Path({str(marker)!r}).write_text('ran')\n"
    for name in ("__init__.py", "cli.py"):
        (clone / "relay" / name).write_text(shadow)
    entry = Entry.create(clone=clone, node="n", state_dir=tmp_path, environ=dict(os.environ))
    env = dict(entry.environment)
    if os.environ.get("PYTHONPATH"):  # the relay under test, as the test's own run finds it
        env["PYTHONPATH"] = os.environ["PYTHONPATH"]
    done = subprocess.run(
        entry.argv, cwd=entry.working_dir, env=env, capture_output=True, text=True, timeout=60
    )
    assert not marker.exists()
    assert done.returncode != 0 and "Traceback" not in done.stderr, done.stderr
    assert "relay" in done.stderr.lower(), done.stderr  # relay's own one-line error: no clone
