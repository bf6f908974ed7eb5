"""One hub per data folder: a second one is refused naming the first, the pid file goes
when the hub stops and a stale one is replaced; `relay hub token` and `relay hub repo`
find the data folder of the hub they talk to, or say which database they used."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest


def relay(*args: str, **env: str) -> subprocess.CompletedProcess[str]:
    """`relay ARGS` with no token or API URL of this shell's, plus ``env``."""
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("RELAY_", "GH_", "GITHUB_"))}
    clean.update(env)
    argv = [sys.executable, "-m", "relay.cli", *args]
    return subprocess.run(argv, env=clean, capture_output=True, text=True, timeout=60)


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:  # a zombie nobody reaped has ended too
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return True


def wait_gone(pid: int, timeout: float = 10) -> bool:
    deadline = time.monotonic() + timeout
    while alive(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    return not alive(pid)


def detached(data: Path) -> tuple[int, str]:
    done = relay("hub", "--port", "0", "--data", str(data), "--detach", "--json")
    assert done.returncode == 0, done.stderr
    info = json.loads(done.stdout)["data"]
    return int(info["pid"]), str(info["url"])


@pytest.fixture
def first(tmp_path: Path) -> Iterator[tuple[Path, int, str]]:
    """A detached hub on its own folder, stopped at the end whatever the test did."""
    data = (tmp_path / "hub-data").resolve()
    pid, url = detached(data)
    yield data, pid, url
    pids = {pid}
    with contextlib.suppress(OSError, ValueError):  # a second hub wrongly let in: its pid
        pids.add(int((data / "hub.pid").read_text()))
    for running in pids:
        if alive(running):
            os.kill(running, signal.SIGKILL)
            wait_gone(running)


def whoami(url: str, token: str) -> int:
    request = urllib.request.Request(f"{url}/user", headers={"Authorization": f"token {token}"})
    try:
        with urllib.request.urlopen(request, timeout=10) as answer:
            return int(answer.status)
    except urllib.error.HTTPError as err:
        return err.code


@pytest.mark.parametrize("how", ["foreground", "--detach"])
def test_a_second_hub_on_the_same_folder_is_refused_naming_the_first(
    first: tuple[Path, int, str], how: str
) -> None:
    data, pid, url = first
    log_before = (data / "hub.log").read_text()
    extra = ["--detach"] if how == "--detach" else []
    done = relay("hub", "--port", "0", "--data", str(data), *extra)
    assert done.returncode == 2, done.stderr
    assert done.stderr.splitlines() == [
        f"relay: a hub already serves {data} (pid {pid}, {url}) — use that one, stop it"
        f" (`kill {pid}`) or pass another --data"
    ]
    assert done.stdout == ""
    assert (data / "hub.pid").read_text() == f"{pid}\n"  # `kill $(cat hub.pid)` stops the first
    assert (data / "hub.log").read_text() == log_before
    assert alive(pid) and whoami(url, "x" * 40) == 401  # the first one still serves


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_the_pid_file_goes_when_the_hub_stops(
    first: tuple[Path, int, str], sig: signal.Signals
) -> None:
    data, pid, _ = first
    assert (data / "hub.pid").exists() and (data / "hub.json").exists()
    os.kill(pid, sig)
    assert wait_gone(pid)
    assert not (data / "hub.pid").exists() and not (data / "hub.json").exists()
    again, _ = detached(data)  # the folder is free again
    os.kill(again, signal.SIGTERM)
    assert wait_gone(again)


def test_a_foreground_hub_stopped_with_ctrl_c_leaves_no_pid_file(tmp_path: Path) -> None:
    data = tmp_path / "data"
    argv = [sys.executable, "-m", "relay.cli", "hub", "--port", "0", "--data", str(data)]
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None and "http://" in proc.stdout.readline()
        assert (data / "hub.pid").read_text() == f"{proc.pid}\n"
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=15) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert not (data / "hub.pid").exists()


def test_a_stale_pid_file_is_recognised_and_replaced(tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.mkdir()
    gone = subprocess.Popen(["true"])
    gone.wait()
    for stale in (gone.pid, os.getpid()):  # a pid that ended, and one that is not a hub
        (data / "hub.pid").write_text(f"{stale}\n")
        pid, _ = detached(data)
        try:
            assert (data / "hub.pid").read_text() == f"{pid}\n"
        finally:
            os.kill(pid, signal.SIGTERM)
            assert wait_gone(pid)


def test_hub_token_without_data_finds_the_hub_relay_api_url_names(
    first: tuple[Path, int, str],
) -> None:
    data, _, url = first
    done = relay("hub", "token", "alice", RELAY_API_URL=url)
    assert done.returncode == 0, done.stderr
    assert whoami(url, done.stdout.strip()) == 200
    assert done.stderr == f"relay: the token is for the hub at {url} (--data {data})\n"


def test_hub_token_without_data_or_a_running_hub_says_which_database(tmp_path: Path) -> None:
    home = tmp_path / "xdg"
    done = relay("hub", "token", "alice", XDG_DATA_HOME=str(home))
    assert done.returncode == 0, done.stderr
    default = home / "relay" / "hub"
    assert done.stderr.startswith(f"relay: the token is in the default database {default} ")
    assert "pass --data" in done.stderr and len(done.stderr.splitlines()) == 1


@pytest.mark.parametrize("api", ["http://127.0.0.1:9", "https://api.github.com"])
def test_hub_token_for_a_url_no_hub_of_yours_serves_is_refused(tmp_path: Path, api: str) -> None:
    """It minted into the default database, which no hub serves, and exited 0."""
    home = tmp_path / "xdg"
    stray = relay("hub", "token", "alice", XDG_DATA_HOME=str(home), RELAY_API_URL=api)
    assert stray.returncode == 2 and stray.stdout == ""
    assert stray.stderr.splitlines() == [
        f"relay: no running hub of yours serves RELAY_API_URL={api} (none of yours runs)"
        " — pass --data with the folder the hub you use serves"
    ]
    assert not (home / "relay" / "hub").exists()  # no database was made


def test_hub_token_with_two_hubs_running_and_none_named_is_refused(
    first: tuple[Path, int, str], tmp_path: Path
) -> None:
    data, _, url = first
    other = (tmp_path / "hub-b").resolve()
    pid, other_url = detached(other)
    try:
        done = relay("hub", "token", "alice")
        assert done.returncode == 2 and done.stdout == "", done.stderr
        (line,) = done.stderr.splitlines()
        assert line.startswith("relay: ") and " hubs of yours run: " in line, line
        assert f"--data {data} for {url}" in line and f"--data {other} for {other_url}" in line
        assert line.endswith(" — pass --data to say which (or set RELAY_API_URL to its URL)")
        named = relay("hub", "token", "alice", RELAY_API_URL=other_url)
        assert named.returncode == 0 and whoami(other_url, named.stdout.strip()) == 200
    finally:
        os.kill(pid, signal.SIGTERM)
        assert wait_gone(pid)


def test_hub_repo_with_a_token_of_another_database_names_the_hubs_folder(
    first: tuple[Path, int, str], tmp_path: Path
) -> None:
    data, _, url = first
    elsewhere = relay("hub", "token", "alice", "--data", str(tmp_path / "other")).stdout.strip()
    done = relay("hub", "repo", "list", RELAY_API_URL=url, RELAY_TOKEN=elsewhere)
    assert done.returncode == 2
    assert done.stderr.splitlines() == [
        f"relay: the hub at {url} rejected the token — make one for it with"
        f" `relay hub token LOGIN --data {data}` (the folder it serves)"
    ]


def test_a_data_folder_that_cannot_be_made_is_one_line(tmp_path: Path) -> None:
    (tmp_path / "a-file").write_text("")
    done = relay("hub", "--port", "0", "--data", str(tmp_path / "a-file" / "sub"))
    assert done.returncode == 2
    assert done.stderr.splitlines() == [
        f"relay: cannot take {tmp_path / 'a-file' / 'sub' / 'hub.pid'}: Not a directory"
        " — pass a --data folder you can write"
    ]


@pytest.mark.parametrize("how", ["foreground", "--detach"])
def test_a_taken_port_is_one_line_exit_2_and_leaves_no_data_folder(
    tmp_path: Path, how: str
) -> None:
    """The foreground hub left hub.sqlite3 in the new folder; --detach left hub.log and
    exited 1 where the foreground exited 2."""
    import socket

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        data = tmp_path / "new-data"
        flags = ["--detach"] if how == "--detach" else []
        done = relay("hub", "--port", str(port), "--data", str(data), *flags)
    assert done.returncode == 2, done.stderr
    (line,) = done.stderr.splitlines()
    assert line.startswith(f"relay: cannot listen on 127.0.0.1:{port}: "), line
    assert "pick another --port" in line
    assert not data.exists()


def test_an_address_not_of_this_machine_is_named_as_typed(tmp_path: Path) -> None:
    """The redactor masked the address the person typed ("cannot listen on <ip>:0"), so
    the line did not say which address was wrong."""
    done = relay("hub", "--host", "192.0.2.7", "--port", "0", "--data", str(tmp_path / "d"))
    assert done.returncode == 2, done.stderr
    (line,) = done.stderr.splitlines()
    assert line.startswith("relay: cannot listen on 192.0.2.7:0: "), line
    assert "with --host" in line
