"""Every box has a network of its own, loopback alone: neither a maker nor the gates reach
the machine's abstract unix sockets (a per-network namespace, as containerd's shims and X11
use) or its TCP listeners on 127.0.0.1. A plain command maker goes out only through
relay's egress proxy, to the hosts the contract's ``## Network access`` lists for it
(here a stand-in API on this machine); anything else it asks for is refused, and the
refusal is in its transcript (nothing listed: test_loop_box_network_closed.py; the agent
CLIs' roles: test_loop_box_network_agent.py)."""

from __future__ import annotations

import contextlib
import io
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from loop_project import CALC_MUL, TEST_GATE, TEST_MUL, Project, make_project

from relay.cli import main
from relay.ratchet.sandbox import NAMESPACES, Sandbox, level

needs_namespaces = pytest.mark.skipif(
    level() != NAMESPACES, reason="this machine cannot make user and mount namespaces"
)

# what a role (and the gates' test module) tries: the machine's listeners, directly, and
# hosts through the proxy its environment names
PROBE = """\
import http.client
import json
import os
import socket
import urllib.parse


def reach_tcp(port):
    try:
        socket.create_connection(("127.0.0.1", port), timeout=3).close()
        return True
    except OSError:
        return False


def reach_abstract(name):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        s.connect("\\0" + name)
        return True
    except OSError:
        return False
    finally:
        s.close()


def through(host, port):
    proxy = os.environ.get("HTTPS_PROXY")
    if not proxy:
        return "no proxy"
    at = urllib.parse.urlsplit(proxy)
    conn = http.client.HTTPConnection(at.hostname, at.port, timeout=10)
    conn.set_tunnel(host, port)
    try:
        conn.request("GET", "/v1/messages")
        answer = conn.getresponse()
        return f"{answer.status} {answer.read().decode()}"
    except OSError as err:
        return f"refused: {err}"
    finally:
        conn.close()
"""


@dataclass
class Machine:
    """What listens on the machine, outside every box."""

    tcp: socket.socket  # a service on the host's loopback
    abstract: socket.socket  # an abstract unix socket (the host's network namespace)
    name: str
    api: int  # the stand-in model API's port
    asked: list[str]

    @property
    def port(self) -> int:
        return int(self.tcp.getsockname()[1])

    def untouched(self) -> bool:
        """Nothing connected to the service or the abstract socket."""
        for each in (self.tcp, self.abstract):
            try:
                each.accept()[0].close()
                return False
            except BlockingIOError:
                continue
        return True


@pytest.fixture
def machine() -> Iterator[Machine]:
    tcp = socket.socket()
    tcp.bind(("127.0.0.1", 0))
    tcp.listen(4)
    tcp.setblocking(False)
    name = f"relay-test-{uuid.uuid4().hex[:12]}"
    abstract = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    abstract.bind("\0" + name)
    abstract.listen(4)
    abstract.setblocking(False)
    api = socket.socket()
    api.bind(("127.0.0.1", 0))
    api.listen(8)
    asked: list[str] = []

    def serve() -> None:  # a model API's stand-in: it answers each request with its path
        while True:
            try:
                conn, _ = api.accept()
            except OSError:
                return
            with conn:
                head = b""
                while b"\r\n\r\n" not in head:
                    got = conn.recv(4096)
                    if not got:
                        break
                    head += got
                line = head.split(b"\r\n", 1)[0].decode()
                asked.append(line)
                body = f"stand-in API {line.split()[1] if ' ' in line else '?'}".encode()
                conn.sendall(
                    b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s"
                    % (len(body), body)
                )

    server = threading.Thread(target=serve, daemon=True)
    server.start()
    try:
        yield Machine(tcp, abstract, name, int(api.getsockname()[1]), asked)
    finally:
        for each in (tcp, abstract):
            each.close()
        api.shutdown(socket.SHUT_RDWR)
        api.close()
        server.join(timeout=5)


@pytest.fixture(autouse=True)
def _quick_pytest(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
    for name in ("HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy", "NO_PROXY"):
        monkeypatch.delenv(name, raising=False)


def probes(m: Machine) -> str:
    """The probe's calls, as a dict ``got`` of what each found."""
    return (
        "got = {\n"
        f"    'host_tcp': reach_tcp({m.port}),\n"
        f"    'abstract': reach_abstract({m.name!r}),\n"
        f"    'api': through('127.0.0.1', {m.api}),\n"
        f"    'host_service': through('127.0.0.1', {m.port}),\n"
        "    'elsewhere': through('api.example.invalid', 443),\n"
        "    'proxy': os.environ.get('HTTPS_PROXY'),\n"
        "}\n"
    )


def gate_module(m: Machine, record: Path) -> str:
    """A test module the maker adds: at import (in the gates' box) it probes too."""
    return (
        PROBE + probes(m) + f"open({str(record)!r}, 'w').write(json.dumps(got))\n"
        "\n\ndef test_nothing():\n    assert True\n"
    )


def allow(project: Project, line: str) -> None:
    """The contract lists hosts for a role (a person's edit, committed)."""
    contract = project.read("docs/loop/CONTRACT.md")
    project.write("docs/loop/CONTRACT.md", contract + f"\n## Network access\n\n{line}\n")
    project.git("commit", "-qam", "the maker may reach the stand-in")


def transcript(project: Project) -> str:
    found = sorted(project.root.glob(".git/relay/**/transcripts/G1-attempt-1-maker.log"))
    assert found, "no maker transcript"
    return found[0].read_text()


@needs_namespaces
def test_a_plain_maker_reaches_its_listed_host_alone_and_no_box_reaches_the_machine(
    tmp_path: Path, machine: Machine, monkeypatch: pytest.MonkeyPatch
) -> None:
    project = make_project(tmp_path, retries=0, gates=(TEST_GATE,))
    allow(project, f"- maker: `127.0.0.1:{machine.api}`")
    scripts = project.scripts
    maker = project.script(
        "maker",
        PROBE
        + probes(machine)
        + "got['brief'] = BRIEF[BRIEF.index('## Network'):]\n"
        + f"open({str(scripts / 'maker-saw.json')!r}, 'w').write(json.dumps(got))\n"
        + f"put('src/calc.py', {CALC_MUL!r})\nput('tests/test_mul.py', {TEST_MUL!r})\n"
        + f"put('tests/test_zz_net.py', {gate_module(machine, scripts / 'gate-saw.json')!r})\n",
    )
    bin_dir = tmp_path / "agents"  # a codex on PATH for the dry run's check of the roles
    bin_dir.mkdir(exist_ok=True)
    (bin_dir / "codex").write_text("#!/bin/sh\nexit 0\n")
    (bin_dir / "codex").chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    planned = io.StringIO()
    with contextlib.redirect_stdout(planned):
        argv = ["loop", "run", "--maker", maker, "--checker", "codex:review", "--dry-run"]
        assert main([*argv, "--repo-dir", str(project.root)]) == 0
    assert f"  maker ({maker}): 127.0.0.1:{machine.api}\n" in planned.getvalue()
    assert "  checker (codex:review): api.openai.com, chatgpt.com" in planned.getvalue()
    ran = project.loop("run", "--maker", maker)
    assert [k["goal"] for k in ran.data["kept"]] == ["G1"], ran
    made = json.loads((scripts / "maker-saw.json").read_text())
    assert made["host_tcp"] is False and made["abstract"] is False, made
    assert made["api"] == "200 stand-in API /v1/messages", made
    assert made["host_service"].startswith("refused:") and "403" in made["host_service"], made
    assert made["elsewhere"].startswith("refused:") and "403" in made["elsewhere"], made
    assert made["proxy"] and made["proxy"].startswith("http://127.0.0.1:"), made
    assert (
        f"HTTPS to these hosts,\nthrough the proxy `HTTPS_PROXY` names: `127.0.0.1:{machine.api}`"
        in (made["brief"])
    )
    # the gates run the candidate's code: no way out at all
    gated = json.loads((scripts / "gate-saw.json").read_text())
    assert gated == {
        "host_tcp": False,
        "abstract": False,
        "api": "no proxy",
        "host_service": "no proxy",
        "elsewhere": "no proxy",
        "proxy": None,
    }, gated
    assert machine.untouched()
    assert machine.asked == ["GET /v1/messages HTTP/1.1"]
    said = transcript(project)
    assert f"relay egress: refused CONNECT 127.0.0.1:{machine.port} for the maker" in said
    assert "relay egress: refused CONNECT api.example.invalid:443 for the maker" in said
    assert project.read("src/calc.py") == CALC_MUL and project.clean()


@needs_namespaces
def test_a_boxs_loopback_is_up_on_a_machine_without_iproute2(outside_temp: Path) -> None:
    """A slim image has no `ip`: the box still brings its own loopback up (the gates'
    tests and the egress forwarder listen there)."""
    tools = outside_temp / "bin"  # the programs the box's set-up runs, and no `ip`
    tools.mkdir()
    for name in ("sh", "env", "unshare", "mount", "umount", "findmnt", "mkdir", "touch", "ln"):
        found = shutil.which(name)
        assert found is not None, name
        (tools / name).symlink_to(found)
    for name in ("rmdir", "find", "cut"):
        (tools / name).symlink_to(shutil.which(name) or "/bin/false")
    folder = Path(tempfile.mkdtemp(prefix="relay-test-lo-"))
    try:
        (folder / "tree").mkdir()
        box = Sandbox(folder, folder / "tree", folder / "home", (), NAMESPACES)
        env = {**os.environ, "PATH": str(tools)}
        code = (
            "import socket; s = socket.socket(); s.bind(('127.0.0.1', 0)); s.listen();"
            " socket.create_connection(s.getsockname()).close(); print('up')"
        )
        command = box.wrap(f'command -v ip || {sys.executable} -c "{code}"', env)
        done = subprocess.run(
            ["/bin/sh", "-c", command], cwd=box.tree, env=env, capture_output=True, text=True
        )
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    assert (done.returncode, done.stdout) == (0, "up\n"), done.stderr
