"""Each box has a temporary folder of its own and nothing else outside its tree and scratch
is writable: a maker, and the gates running what it wrote, cannot see another goal's box
in the machine's /tmp (its judged tree, its reports), nor leave anything in /tmp, /var/tmp
or /dev/shm, nor write beside the person's clone; where the clone lies outside the
temporary folders its parents are read-only, and the project's virtualenv and
node_modules are readable but never writable."""

from __future__ import annotations

import json
import os
import shutil
import socket
import tempfile
import uuid
from pathlib import Path

import pytest
from loop_project import CALC, CALC_MUL, TEST_GATE, TEST_MUL, Project, make_project

from relay.errors import LocalUsageError
from relay.ratchet.sandbox import JUDGED_SHARE_ENV, NAMESPACES, SHARE_ENV, Sandbox, level

needs_namespaces = pytest.mark.skipif(
    level() != NAMESPACES, reason="this machine cannot make user and mount namespaces"
)
# what the maker and the gates' test module run: each attempt's outcome, in a file of the
# test's shared scripts folder
PROBE = """\
import json
import os
import pathlib
import tempfile


def read(path):
    try:
        return pathlib.Path(path).read_text()
    except OSError:
        return None


def wrote(path, text="owned\\n"):
    try:
        pathlib.Path(path).write_text(text)
        return True
    except OSError:
        return False


def made(path):
    try:
        pathlib.Path(path).mkdir()
        return True
    except OSError:
        return False
"""


@pytest.fixture(autouse=True)
def _quick_pytest(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")


def gate_module(body: str) -> str:
    """A test module the maker adds: at import (in the gates' box) it runs ``body``."""
    return PROBE + "\n" + body + "\n\ndef test_nothing():\n    assert True\n"


@needs_namespaces
def test_a_box_sees_no_other_box_and_leaves_nothing_in_the_machines_temporary_folders(
    tmp_path: Path,
) -> None:
    host = Path(tempfile.gettempdir()).resolve()
    other = Path(tempfile.mkdtemp(prefix="relay-judge-"))  # another goal's box, as /tmp holds it
    try:
        (other / "tree" / "src").mkdir(parents=True)
        (other / "tree" / "src" / "calc.py").write_text(CALC)
        (other / "report.xml").write_text("<testsuite tests='1'/>\n")
        project = make_project(tmp_path, retries=0, gates=(TEST_GATE,))
        mark = uuid.uuid4().hex
        planted = [host / f"relay-planted-{mark}", Path(f"/var/tmp/relay-planted-{mark}")]
        planted += [Path(f"/dev/shm/relay-planted-{mark}"), tmp_path / f"beside-{mark}"]
        planted = [p for p in planted if p.parent.is_dir()]
        body = (
            f"HOST = {str(host)!r}\n"
            f"OTHER = {str(other)!r}\n"
            "got = {\n"
            "    'boxes': sorted(n for n in os.listdir(HOST) if n.startswith('relay-')),\n"
            "    'other_tree': read(OTHER + '/tree/src/calc.py'),\n"
            "    'other_tampered': wrote(OTHER + '/tree/src/calc.py'),\n"
            "    'other_report': wrote(OTHER + '/report.xml', '<testsuite failures=\"0\"/>'),\n"
            "    'tmpdir': os.environ.get('TMPDIR'),\n"
            "    'gettempdir': tempfile.gettempdir(),\n"
            f"    'planted': [wrote(p) for p in {[str(p) for p in planted]!r}],\n"
            "}\n"
        )
        record = "pathlib.Path({!r}).write_text(json.dumps(got))\n"
        module = gate_module(body + record.format(str(project.scripts / "gate-saw.json")))
        maker = project.script(
            "maker",
            PROBE
            + body
            + record.format(str(project.scripts / "maker-saw.json"))
            + f"put('src/calc.py', {CALC_MUL!r})\nput('tests/test_mul.py', {TEST_MUL!r})\n"
            + f"put('tests/test_zz_tmp.py', {module!r})\n",
        )
        ran = project.loop("run", "--maker", maker)
        assert [k["goal"] for k in ran.data["kept"]] == ["G1"], ran
        for who, prefix in (("maker", "relay-attempt-"), ("gate", "relay-judge-")):
            got = json.loads((project.scripts / f"{who}-saw.json").read_text())
            # its /tmp holds its own box's folder alone, and its TMPDIR is in that folder
            assert len(got["boxes"]) == 1 and got["boxes"][0].startswith(prefix), got
            assert got["boxes"][0] != other.name, got
            assert got["tmpdir"] == f"{host}/{got['boxes'][0]}/tmp" == got["gettempdir"], got
            assert got["other_tree"] is None, got
            assert not got["other_tampered"] and not got["other_report"], got
            assert got["planted"] == [True] * len(planted), got  # in its own /tmp, gone with it
        assert (other / "tree" / "src" / "calc.py").read_text() == CALC
        assert (other / "report.xml").read_text() == "<testsuite tests='1'/>\n"
        assert [p for p in planted if p.exists()] == []
        assert project.clean()
    finally:
        shutil.rmtree(other, ignore_errors=True)


@needs_namespaces
def test_outside_the_temporary_folders_the_clones_parents_and_its_environments_are_read_only(
    outside_temp: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The person's clone where it usually is (not under HOME, not in /tmp): the maker and
    the gates cannot write beside it, nor make a folder next to it, nor write the
    project's virtualenv or node_modules, which they can still read."""
    project = make_project(outside_temp, retries=0, gates=(TEST_GATE,))
    monkeypatch.setenv(SHARE_ENV, str(project.scripts))
    monkeypatch.setenv(JUDGED_SHARE_ENV, str(project.scripts))  # (bin is no share now)
    venv, modules = project.root / ".venv", project.root / "node_modules"
    (venv / "lib").mkdir(parents=True)
    (venv / "pyvenv.cfg").write_text("home = /usr/bin\n")
    (venv / "lib" / "site.pth").write_text("../src\n")
    (modules / "left-pad").mkdir(parents=True)
    (modules / "left-pad" / "index.js").write_text("module.exports = 1;\n")
    (project.root / ".git" / "info" / "exclude").write_text(".venv/\nnode_modules/\n")
    before = {p: p.read_text() for p in (*venv.rglob("*"), *modules.rglob("*")) if p.is_file()}
    beside = outside_temp / "beside.txt"
    body = (
        "got = {\n"
        f"    'beside': wrote({str(beside)!r}),\n"
        f"    'sibling': made({str(outside_temp / 'calc-planted')!r}),\n"
        f"    'venv_read': read({str(venv / 'pyvenv.cfg')!r}),\n"
        f"    'venv_new': wrote({str(venv / 'lib' / 'planted.pth')!r}, 'import os\\n'),\n"
        f"    'venv_changed': wrote({str(venv / 'lib' / 'site.pth')!r}, '/elsewhere\\n'),\n"
        f"    'modules_read': read({str(modules / 'left-pad' / 'index.js')!r}),\n"
        f"    'modules_changed': wrote({str(modules / 'left-pad' / 'index.js')!r}),\n"
        "    'own_tmp': tempfile.gettempdir() == os.environ.get('TMPDIR'),\n"
        "}\n"
    )
    record = "pathlib.Path({!r}).write_text(json.dumps(got))\n"
    module = gate_module(body + record.format(str(project.scripts / "gate-saw.json")))
    maker = project.script(
        "maker",
        PROBE
        + body
        + record.format(str(project.scripts / "maker-saw.json"))
        + f"put('src/calc.py', {CALC_MUL!r})\nput('tests/test_mul.py', {TEST_MUL!r})\n"
        + f"put('tests/test_zz_parent.py', {module!r})\n",
    )
    ran = project.loop("run", "--maker", maker)
    assert [k["goal"] for k in ran.data["kept"]] == ["G1"], ran
    expected = {
        "beside": False,
        "sibling": False,
        "venv_read": "home = /usr/bin\n",
        "venv_new": False,
        "venv_changed": False,
        "modules_read": "module.exports = 1;\n",
        "modules_changed": False,
        "own_tmp": True,
    }
    for who in ("maker", "gate"):
        assert json.loads((project.scripts / f"{who}-saw.json").read_text()) == expected, who
    assert sorted(p.name for p in outside_temp.iterdir()) == ["calc", "programs", "scripts"]
    now = {p: p.read_text() for p in (*venv.rglob("*"), *modules.rglob("*")) if p.is_file()}
    assert now == before
    assert project.read("src/calc.py") == CALC_MUL and project.clean()


@needs_namespaces
def test_a_maker_the_person_keeps_in_a_temporary_folder_runs_and_cannot_change_itself(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`--maker /tmp/…/maker.py`, a folder not shared with the boxes: the box shows the
    folder of a file the command names, read-only, so the maker runs (and is kept) but
    cannot rewrite itself for the next attempt."""
    project = make_project(tmp_path, retries=0, gates=(TEST_GATE,))
    monkeypatch.delenv(SHARE_ENV, raising=False)
    monkeypatch.delenv(JUDGED_SHARE_ENV, raising=False)
    own = tmp_path / "mine"
    own.mkdir()
    maker = own / "maker.py"
    maker.write_text(
        "import os, pathlib, sys\n"
        "pathlib.Path(os.environ['RELAY_LOOP_EXPLAIN']).write_text('mul, with its test')\n"
        f"me = pathlib.Path({str(maker)!r})\n"
        "try:\n    me.write_text('# rewritten\\n')\nexcept OSError:\n    pass\n"
        f"pathlib.Path('src/calc.py').write_text({CALC_MUL!r})\n"
        f"pathlib.Path('tests/test_mul.py').write_text({TEST_MUL!r})\n"
    )
    before = maker.read_text()
    ran = project.loop("run", "--maker", f"python3 {maker}")
    assert [k["goal"] for k in ran.data["kept"]] == ["G1"], ran
    assert maker.read_text() == before


def probe_both(project: Project, body: str, name: str) -> tuple[dict[str, object], ...]:
    """Run ``body`` in the maker and, through a test module it adds, in the gates; the
    run keeps G1; what each saw."""
    scripts = project.scripts
    record = "pathlib.Path({!r}).write_text(json.dumps(got))\n"
    module = gate_module(body + record.format(str(scripts / "gate-saw.json")))
    maker = project.script(
        "maker",
        PROBE
        + body
        + record.format(str(scripts / "maker-saw.json"))
        + f"put('src/calc.py', {CALC_MUL!r})\nput('tests/test_mul.py', {TEST_MUL!r})\n"
        + f"put('tests/test_zz_{name}.py', {module!r})\n",
    )
    ran = project.loop("run", "--maker", maker)
    assert [k["goal"] for k in ran.data["kept"]] == ["G1"], ran
    return tuple(json.loads((scripts / f"{w}-saw.json").read_text()) for w in ("maker", "gate"))


@needs_namespaces
def test_a_clone_whose_path_has_a_space_is_hidden_all_the_same(outside_temp: Path) -> None:
    """A clone under "x sp/": its git directory (relay's token) is hidden like any other,
    and the run works."""
    (outside_temp / "x sp").mkdir()
    project = make_project(outside_temp / "x sp", retries=0, gates=(TEST_GATE,))
    (project.root / ".git" / "relay").mkdir(parents=True, exist_ok=True)
    token = project.root / ".git" / "relay" / "token"
    token.write_text("relay-node-token\n")
    body = (
        "got = {\n"
        f"    'token': read({str(token)!r}),\n"
        f"    'listed': sorted(os.listdir({str(project.root / '.git')!r})),\n"
        f"    'beside': wrote({str(outside_temp / 'x sp' / 'beside.txt')!r}),\n"
        "}\n"
    )
    for got in probe_both(project, body, "space"):
        assert got["token"] is None and "relay" not in got["listed"], got
        assert got["beside"] is False, got
    assert token.read_text() == "relay-node-token\n"
    assert project.read("src/calc.py") == CALC_MUL and project.clean()


@needs_namespaces
def test_no_box_reaches_a_socket_the_machine_listens_on(tmp_path: Path) -> None:
    """A service's socket under /run (as docker's or a database's): neither the maker
    nor the gates can connect to it, though a read-only folder does not stop connect()."""
    if not os.access("/run", os.W_OK):
        pytest.skip("/run is not writable here")
    where = Path(tempfile.mkdtemp(prefix="relay-test-", dir="/run"))
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        listener.bind(str(where / "service.sock"))
        listener.listen(4)
        listener.setblocking(False)
        project = make_project(tmp_path, retries=0, gates=(TEST_GATE,))
        body = (
            "import socket\n"
            "def reach(path):\n"
            "    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)\n"
            "    try:\n"
            "        s.connect(path)\n"
            "        return True\n"
            "    except OSError:\n"
            "        return False\n"
            "    finally:\n"
            "        s.close()\n"
            f"got = {{'reached': reach({str(where / 'service.sock')!r})}}\n"
        )
        for got in probe_both(project, body, "socket"):
            assert got == {"reached": False}, got
        with pytest.raises(BlockingIOError):
            listener.accept()
        # the socket is still the machine's, reachable outside the boxes
        probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        probe.connect(str(where / "service.sock"))
        probe.close()
    finally:
        listener.close()
        shutil.rmtree(where, ignore_errors=True)


@needs_namespaces
def test_a_box_has_the_harmless_devices_alone(tmp_path: Path) -> None:
    """In every box /dev holds null, zero, random and their like: no loop device, disk or
    console opens for writing, even where relay runs as root; /dev/null still works."""
    blocks = sorted(str(p) for p in Path("/dev").iterdir() if p.is_block_device())[:2]
    devices = [d for d in ("/dev/loop-control", "/dev/console", *blocks) if os.path.exists(d)]
    project = make_project(tmp_path, retries=0, gates=(TEST_GATE,))
    body = (
        "def opened(path):\n"
        "    try:\n"
        "        os.close(os.open(path, os.O_RDWR))\n"
        "        return True\n"
        "    except OSError:\n"
        "        return False\n"
        "got = {\n"
        f"    'devices': [opened(d) for d in {devices!r}],\n"
        "    'null': wrote('/dev/null'),\n"
        "    'random': len(open('/dev/urandom', 'rb').read(8)),\n"
        "    'listed': sorted(os.listdir('/dev')),\n"
        "}\n"
    )
    for got in probe_both(project, body, "dev"):
        assert got["devices"] == [False] * len(devices), got
        assert got["null"] is True and got["random"] == 8, got
        listed = got["listed"]
        assert isinstance(listed, list) and "null" in listed and "loop-control" not in listed, got
    assert project.read("src/calc.py") == CALC_MUL and project.clean()


def test_a_path_with_a_line_break_is_refused_never_left_visible(tmp_path: Path) -> None:
    """The box's lists are one path a line: a hidden folder whose name holds a line break
    cannot be listed, so no box is made rather than one that shows it."""
    folder = tmp_path / "box"
    secret = tmp_path / "odd\nname"
    secret.mkdir()
    box = Sandbox(folder, folder / "tree", folder / "home", (secret,), NAMESPACES)
    with pytest.raises(LocalUsageError, match="line break"):
        box.wrap("true")
