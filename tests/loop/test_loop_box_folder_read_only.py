"""A box's own folder is read-only to the code in it: its tree, scratch HOME and
temporary folder are writable, and the few places relay names for it (a gate's report,
the guard's verdicts, an agent's transcripts), nothing else. No entry is made, renamed,
replaced or linked there, so nothing relay binds or reads back from it is the box's
doing. A real box, and a real `relay loop run` whose maker and gate try it."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from loop_project import CALC_MUL, TEST_GATE, TEST_MUL, make_project

from relay.ratchet.sandbox import NAMESPACES, Sandbox, level

needs_namespaces = pytest.mark.skipif(
    level() != NAMESPACES, reason="this machine cannot make user and mount namespaces"
)

# each attempt, in a shell: the name said where the box managed it
TRIES = (
    ("create", "touch {f}/new"),
    ("mkdir", "mkdir {f}/made"),
    ("rename", "mv {f}/brief.md {f}/brief.old"),
    ("replace", "echo planted > {f}/brief.md"),
    ("remove", "rm -f {f}/brief.md"),
    ("symlink", "ln -s /etc {f}/link"),
    ("swap-tree", "mv {f}/tree {f}/tree.old"),
    ("swap-home", "mv {f}/home {f}/home.old"),
    ("chmod", "chmod 755 {f}"),
    ("sub-create", "touch {f}/plugin/new"),
    ("sub-replace", "echo planted > {f}/plugin/mod.py"),
    ("sub-symlink", "ln -s /etc {f}/plugin/link"),
    ("history-parent", "touch {f}/history/new"),
)
# what the box writes all the same
WRITES = (
    ("tree", "touch {f}/tree/ok"),
    ("home", "touch {f}/home/ok"),
    ("tmp", "touch {f}/tmp/ok && touch $TMPDIR/ok2"),
    ("named", "touch {f}/history/maker.history/ok"),
)


@pytest.fixture
def box() -> Iterator[Sandbox]:
    folder = Path(tempfile.mkdtemp(prefix="relay-test-ro-"))
    for name in ("tree", "home", "tmp", "plugin", "history/maker.history"):
        (folder / name).mkdir(parents=True)
    (folder / "brief.md").write_text("relay's brief\n")
    (folder / "plugin" / "mod.py").write_text("relay's plugin\n")
    try:
        named = (folder / "history" / "maker.history",)
        yield Sandbox(folder, folder / "tree", folder / "home", (), NAMESPACES, writable=named)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def listing(folder: Path) -> dict[str, str]:
    found = {}
    for path in sorted(folder.rglob("*")):
        kind = "link" if path.is_symlink() else "dir" if path.is_dir() else path.read_text()
        found[str(path.relative_to(folder))] = kind
    return found


@needs_namespaces
def test_nothing_in_the_box_folder_is_made_renamed_replaced_or_linked_from_inside(
    box: Sandbox,
) -> None:
    folder = box.folder.resolve()
    env = {"PATH": os.environ["PATH"], "HOME": str(box.home), "TMPDIR": str(folder / "tmp")}
    tries = "\n".join(
        f"if {how.format(f=folder)} 2>/dev/null; then echo did {name}; fi" for name, how in TRIES
    )
    writes = "\n".join(
        f"if {how.format(f=folder)}; then echo wrote {name}; fi" for name, how in WRITES
    )
    made = ["tree/ok", "home/ok", "tmp/ok", "tmp/ok2", "history/maker.history/ok"]
    mode = folder.stat().st_mode
    before: dict[str, str] = {}
    for _ in range(2):  # the second time, with the mount points the first set-up made
        for name in made:
            (folder / name).unlink(missing_ok=True)
        done = subprocess.run(
            ["/bin/sh", "-c", box.wrap(f"{tries}\n{writes}", env)],
            cwd=box.tree,
            env=env,
            capture_output=True,
            text=True,
        )
        assert done.returncode == 0, done.stderr
        assert done.stdout.split("\n")[:-1] == [f"wrote {name}" for name, _ in WRITES], done
        after = listing(folder)
        assert set(made) <= set(after), after
        assert before in ({}, after)
        before = after
    assert (folder / "brief.md").read_text() == "relay's brief\n"
    assert (folder / "plugin" / "mod.py").read_text() == "relay's plugin\n"
    assert not any(kind == "link" for kind in before.values()), before
    assert folder.stat().st_mode == mode


@needs_namespaces
def test_a_loop_run_keeps_its_change_while_its_maker_and_gate_write_no_box_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The maker's box and the judged boxes the gates run in: each tries to plant a file
    in its box folder (and fails), while the maker's change, the gate's report and the
    guard's verdicts are written and the change is kept."""
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
    project = make_project(tmp_path, gates=(TEST_GATE,))
    record = project.scripts / "planted.txt"
    plant = (
        "def plant(who):\n"
        "    import os, pathlib\n"
        "    box = pathlib.Path(os.environ['TMPDIR']).parent\n"
        "    try:\n"
        "        (box / 'planted').write_text(who)\n"
        "        said = 'planted'\n"
        "    except OSError as err:\n"
        "        said = err.strerror\n"
        f"    with open({str(record)!r}, 'a') as out:\n"
        "        out.write(f'{who}: {said}\\n')\n"
    )
    test = f"{plant}\n\n{TEST_MUL}\n\ndef test_plant():\n    plant('gate')\n"
    maker = project.script(
        "maker",
        f"{plant}plant('maker')\n"
        f"put('src/calc.py', {CALC_MUL!r})\nput('tests/test_mul.py', {test!r})\n",
    )
    ran = project.loop("run", "--maker", maker)
    assert ran.status == 0 and [k["goal"] for k in ran.data["kept"]] == ["G1"], ran
    said = record.read_text().splitlines()
    assert "maker: Read-only file system" in said and "gate: Read-only file system" in said, said
    assert not any(line.endswith("planted") for line in said), said
