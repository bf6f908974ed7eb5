"""A unix socket the machine has bound in a folder outside the machine's usual socket
folders (a database's under /var/lib, LXD's under /var/snap) is reached by no box: the
box covers every socket ``/proc/net/unix`` names, not only those in /run and the like.
The folder here lies outside the temporary folders (a box's /tmp is its own)."""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator
from pathlib import Path

import pytest
from loop_project import CALC_MUL, TEST_GATE, TEST_MUL, make_project

from relay.ratchet.sandbox import NAMESPACES, host_sockets, level

needs_namespaces = pytest.mark.skipif(
    level() != NAMESPACES, reason="this machine cannot make user and mount namespaces"
)

PROBE = """\
import json
import socket


def reach_unix(path):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(3)
    try:
        s.connect(path)
        return True
    except OSError as err:
        return type(err).__name__
    finally:
        s.close()
"""


@pytest.fixture
def service(outside_temp: Path) -> Iterator[socket.socket]:
    """A service of the machine listening on a socket in a folder of its own."""
    folder = outside_temp / "var-lib-service"
    folder.mkdir()
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(str(folder / "service.sock"))
    listener.listen(4)
    listener.setblocking(False)
    try:
        yield listener
    finally:
        listener.close()


def test_the_machines_sockets_are_read_from_one_table(service: socket.socket) -> None:
    path = Path(service.getsockname())
    assert path in host_sockets([])
    assert path not in host_sockets([path.parent])  # a box's own folder is left alone


@needs_namespaces
def test_no_maker_nor_gate_reaches_a_socket_the_machine_bound_outside_the_socket_folders(
    tmp_path: Path, service: socket.socket
) -> None:
    where = str(service.getsockname())
    project = make_project(tmp_path, retries=0, gates=(TEST_GATE,))
    scripts = project.scripts
    gate = (
        PROBE
        + f"saw = reach_unix({where!r})\n"
        + f"open({str(scripts / 'gate-saw.json')!r}, 'w').write(json.dumps(saw))\n"
        + "\n\ndef test_nothing():\n    assert True\n"
    )
    maker = project.script(
        "maker",
        PROBE
        + f"saw = reach_unix({where!r})\n"
        + f"open({str(scripts / 'maker-saw.json')!r}, 'w').write(json.dumps(saw))\n"
        + f"put('src/calc.py', {CALC_MUL!r})\nput('tests/test_mul.py', {TEST_MUL!r})\n"
        + f"put('tests/test_zz_sock.py', {gate!r})\n",
    )
    ran = project.loop("run", "--maker", maker)
    made = json.loads((scripts / "maker-saw.json").read_text())
    gated = json.loads((scripts / "gate-saw.json").read_text())
    assert made is not True and gated is not True, (made, gated)
    with pytest.raises(BlockingIOError):  # nobody connected
        service.accept()
    assert [k["goal"] for k in ran.data["kept"]] == ["G1"], ran  # the boxes still work
