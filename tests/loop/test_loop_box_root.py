"""Every folder at the top of / but the system's and the software's is empty in a box, as
HOME is: a unix socket bound there by a process in another network namespace (absent from
the table relay reads) or after the box started is reached by no box command, and a file
there that the command does not run from is not seen; what it runs from (a virtualenv
outside HOME, a version manager's folder, an nvm prefix, a toolchain in HOME) still runs,
with the logins such a folder holds (a prefix's pip.conf, nvm's etc/npmrc, cargo's
config.toml) hidden in it.

The folders here lie beside this checkout, outside the temporary folders, HOME and /run,
as a service's or a person's data does."""

from __future__ import annotations

import json
import os
import shlex
import socket
import stat
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from relay.ratchet.sandbox import NAMESPACES, Sandbox, host_sockets, level

needs_namespaces = pytest.mark.skipif(
    level() != NAMESPACES, reason="this machine cannot make user and mount namespaces"
)

# a listener in a network namespace of its own: says "ready", then counts who connects
LISTENER = """
import socket, sys
from pathlib import Path
path, count = sys.argv[1], Path(sys.argv[2])
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.bind(path)
s.listen(8)
print("ready", flush=True)
n = 0
while True:
    c, _ = s.accept()
    n += 1
    count.write_text(str(n))
    c.close()
"""

# the box's command: says "ready" once its mounts are made, waits for the late socket,
# then tries both sockets, the data file and the tools it runs from
PROBE = """
import json, os, socket, subprocess, sys
names = json.loads(sys.argv[1])
print("ready", flush=True)
sys.stdin.readline()


def reach(path):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(3)
    try:
        s.connect(path)
        return True
    except OSError as err:
        return type(err).__name__
    finally:
        s.close()


def read(path):
    try:
        with open(path) as f:
            return f.read()
    except OSError as err:
        return type(err).__name__


def run(argv):
    done = subprocess.run(argv, capture_output=True, text=True)
    return done.stdout.strip() if done.returncode == 0 else f"rc {done.returncode}"


def wrote(path):
    try:
        with open(path, "w") as f:
            f.write("box")
        return True
    except OSError:
        return False


print(json.dumps({
    "netns": reach(names["netns"]),
    "late": reach(names["late"]),
    "data": read(names["data"]),
    "data_dir": os.path.isdir(os.path.dirname(names["data"])),
    "secrets": {n: read(p) for n, p in names["secrets"].items()},
    "tools": {n: run(argv) for n, argv in names["tools"].items()},
    "var_tmp": wrote(names["var_tmp"]),
}), flush=True)
"""


def counted(count: Path) -> str:
    try:
        return count.read_text()
    except OSError:
        return ""


def script(path: Path, body: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"#!/bin/sh\n{body}\n")
    path.chmod(path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)  # chmod +x
    return path


@pytest.fixture
def netns_listener(outside_temp: Path) -> Iterator[tuple[Path, Path]]:
    """A service in a network namespace of its own, listening on a socket in a folder
    outside HOME, the temporary folders and /run: its socket and its count of callers."""
    folder = outside_temp / "srv-data"
    folder.mkdir()
    path, count = folder / "netns.sock", folder / "netns.count"
    own = ["unshare", "--net"] if os.geteuid() == 0 else ["unshare", "-r", "--net"]
    argv = [*own, sys.executable, "-c", LISTENER, str(path), str(count)]
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        if proc.stdout.readline().strip() != "ready":
            proc.kill()
            pytest.skip(f"cannot listen in a network namespace here: {proc.communicate()[1]}")
        yield path, count
    finally:
        proc.kill()
        proc.wait(timeout=10)


@needs_namespaces
def test_no_box_reaches_a_socket_outside_the_system_folders_nor_sees_its_folder(
    tmp_path: Path,
    outside_temp: Path,
    netns_listener: tuple[Path, Path],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    netns, count = netns_listener
    data = netns.parent / "service.conf"
    data.write_text("the service's own\n")
    # what the box's command runs from, outside HOME and the temporary folders
    tools = outside_temp / "tools"
    pyenv = tools / ".pyenv"
    script(pyenv / "versions" / "1.0" / "bin" / "mytool", "echo pyenv-ok")
    script(pyenv / "shims" / "mytool", 'exec "${0%/shims/*}/versions/1.0/bin/mytool"')
    (pyenv / "versions" / "1.0" / "pip.conf").write_text(
        "[global]\nindex-url = https://u:pyenv-pw@x\n"
    )
    nvm = tools / "nvm" / "versions" / "node" / "v20"
    (nvm / "lib").mkdir(parents=True)
    (nvm / "lib" / "msg").write_text("nvm-ok\n")
    script(nvm / "bin" / "nodeish", 'cat "${0%/bin/*}/lib/msg"')
    (nvm / "etc").mkdir()
    (nvm / "etc" / "npmrc").write_text("//registry.npmjs.org/:_authToken=npm-secret\n")
    venv = tools / "venvs" / "proj"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    # a toolchain in a HOME outside the temporary folders, its registry token in its config
    home = outside_temp / "home"
    script(home / ".cargo" / "bin" / "cargoish", "echo cargo-ok")
    (home / ".cargo" / "config.toml").write_text('[registry]\ntoken = "cargo-secret"\n')
    monkeypatch.setenv("HOME", str(home))
    path = os.pathsep.join(
        [
            *(str(p) for p in (pyenv / "shims", nvm / "bin", venv / "bin")),
            str(home / ".cargo" / "bin"),
            os.environ["PATH"],
        ]
    )
    env = {**os.environ, "PATH": path}
    late = netns.parent / "late.sock"
    var_tmp = Path("/var/tmp") / f"relay-box-root-{os.getpid()}"
    names = {
        "netns": str(netns),
        "late": str(late),
        "data": str(data),
        "secrets": {
            "pip.conf": str(pyenv / "versions" / "1.0" / "pip.conf"),
            "npmrc": str(nvm / "etc" / "npmrc"),
            "cargo": str(home / ".cargo" / "config.toml"),
        },
        "tools": {
            "pyenv": ["mytool"],
            "nvm": ["nodeish"],
            "cargo": ["cargoish"],
            "venv": [str(venv / "bin" / "python"), "-c", "print('venv-ok')"],
        },
        "var_tmp": str(var_tmp),
    }
    folder = tmp_path / "box"
    (folder / "tree").mkdir(parents=True)
    box = Sandbox(folder, folder / "tree", folder / "home", (), NAMESPACES)
    command = shlex.join([sys.executable, "-c", PROBE, json.dumps(names)])
    # the test can fail: the listener takes a caller from here, and relay's table of the
    # machine's sockets (read in its own network namespace) does not name it
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as caller:
        caller.connect(str(netns))
    deadline = time.monotonic() + 10
    while counted(count) != "1" and time.monotonic() < deadline:
        time.sleep(0.05)  # (the listener writes its count once it has accepted)
    assert counted(count) == "1"
    assert netns not in host_sockets([])

    proc = subprocess.Popen(
        ["/bin/sh", "-c", box.wrap(command, env)],
        cwd=box.tree,
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stdin is not None and proc.stdout is not None
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as listener:
        try:
            ready = proc.stdout.readline().strip()
            listener.bind(str(late))  # after the box started: in no table it could read
            listener.listen(4)
            listener.setblocking(False)
            out, err = proc.communicate("go\n", timeout=120)
        finally:
            if proc.poll() is None:
                proc.kill()
        assert ready == "ready", err
        assert proc.returncode == 0, err
        saw = json.loads(out)
        with pytest.raises(BlockingIOError):  # nobody connected
            listener.accept()
    try:
        assert saw["netns"] is not True and saw["late"] is not True, saw
        assert counted(count) == "1"  # the box's attempt never reached it
        assert saw["data"] == "FileNotFoundError" and saw["data_dir"] is False, saw
        assert saw["tools"] == {
            "pyenv": "pyenv-ok",
            "nvm": "nvm-ok",
            "cargo": "cargo-ok",
            "venv": "venv-ok",
        }, saw
        assert all("secret" not in text and "-pw" not in text for text in saw["secrets"].values())
        assert saw["var_tmp"] is True and not var_tmp.exists(), saw  # the box's own /var/tmp
    finally:
        var_tmp.unlink(missing_ok=True)
