"""A box's folder goes after its run even where code run in it made folders its owner
cannot enter or write (mode 000 in its HOME and temporary folder, 0500 in its tree, its
HOME itself): an ordinary user's removal cannot list such a folder, so each is made
owner-rwx (never through a link) and the removal tried again; a link the box left to a
folder outside is removed, never followed, and what it leads to keeps its mode. The next
gate's scratch is emptied all the same.

Real boxes (the maker's and a judged one), run by an ordinary user: as root the test's
child process drops to ``nobody`` (root removes a mode-000 folder whatever its mode)."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile
from pathlib import Path
from typing import Any

import pytest

from relay.ratchet.sandbox import NAMESPACES, level, remove_tree

needs_namespaces = pytest.mark.skipif(
    level() != NAMESPACES, reason="this machine cannot make user and mount namespaces"
)
NOBODY = 65534
ROOT = Path(__file__).resolve().parents[2]
# what the box's code leaves: folders no ordinary user's removal enters, and a link out
LOCK = """
set -e
mkdir -p "$HOME/stay/deep" "$TMPDIR/stay" sub
echo kept > "$HOME/stay/deep/kept.txt"
echo kept > "$TMPDIR/stay/kept.txt"
echo kept > sub/kept.txt
ln -s "$OUTSIDE" "$HOME/out"
chmod 0 "$HOME/stay/deep" "$HOME/stay" "$TMPDIR/stay"
chmod 0500 sub
chmod 0 "$HOME"
"""
CHILD = """
import json, os, subprocess, sys
from pathlib import Path
from relay.ratchet.sandbox import level, judged, standalone

work = Path(sys.argv[1])
print(json.dumps({"level": level()}), flush=True)
source = work / "source"
source.mkdir()
for args in (["init", "-q", "-b", "main"], ["-c", "user.name=P", "-c", "user.email=p@e.invalid",
             "commit", "-q", "--allow-empty", "-m", "one"]):
    subprocess.run(["git", *args], cwd=source, check=True)
commit = subprocess.run(["git", "rev-parse", "HEAD"], cwd=source, capture_output=True,
                        text=True, check=True).stdout.strip()
for made in (standalone(source, commit, "relay-loop/G1", hidden=()),
             judged(source, commit, hidden=())):
    with made as box:
        env = box.env({"PATH": os.environ["PATH"], "HOME": str(box.home),
                       "OUTSIDE": sys.argv[2]})
        done = subprocess.run(["/bin/sh", "-c", box.wrap(sys.argv[3], env)], cwd=box.tree,
                              env=env, capture_output=True, text=True)
        assert done.returncode == 0, done.stderr
        box.fresh_scratch()  # the next gate's: from an empty HOME and temporary folder
        assert not os.listdir(box.home) and not os.listdir(box.tmp)
        print(json.dumps({"folder": str(box.folder)}), flush=True)
"""


def as_ordinary_user() -> tuple[str, dict[str, Any], dict[str, str]]:
    """What runs the child as an ordinary user: this interpreter as itself where it is one,
    else as nobody, with an interpreter nobody can run (this one may lie in root's HOME)
    importing relay and its packages from where this one does."""
    if os.getuid() != 0:
        return sys.executable, {}, {}
    drop: dict[str, Any] = {"user": NOBODY, "group": NOBODY, "extra_groups": []}
    paths = sysconfig.get_paths()
    found = {"PYTHONPATH": os.pathsep.join([str(ROOT), paths["purelib"], paths["platlib"]])}
    for python in (sys.executable, shutil.which("python3", path="/usr/bin:/bin") or ""):
        check = [python, "-c", "import relay.ratchet.sandbox"]
        with contextlib.suppress(OSError):
            if subprocess.run(check, env=found, cwd="/", check=False, **drop).returncode == 0:
                return python, drop, found
    pytest.skip("no interpreter here that an ordinary user can run relay with")


def said_by_a_person(script: str, *args: str, ordinary: bool, **more: str) -> Any:
    """What ``script`` (Python that makes a real box as a person would) prints as JSON, run
    as this test's user or as an ordinary user of the host (nobody, where this test is
    root), with relay importable and the variables ``more``."""
    python, drop, found = as_ordinary_user() if ordinary else (sys.executable, {}, {})
    env = {"PATH": os.environ["PATH"], "PYTHONPATH": str(ROOT), **found, **more}
    done = subprocess.run(
        [python, "-c", script, *args],
        cwd="/", env=env, capture_output=True, text=True, timeout=120, check=False, **drop,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def boxes_of_an_ordinary_user(work: Path, script: str) -> list[dict[str, Any]]:
    """Two real boxes (a maker's and a judged one) made by an ordinary user in ``work``,
    each running ``script``: what the child said, one JSON line each."""
    outside = work / "outside"
    outside.mkdir()
    outside.chmod(0o555)
    for each in ("home", "tmp", "cache"):
        (work / each).mkdir()
    if os.getuid() == 0:
        for each in (work, work / "home", work / "tmp", work / "cache"):
            os.chown(each, NOBODY, NOBODY)
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith(("GIT_", "XDG_"))},
        "HOME": str(work / "home"),
        "TMPDIR": str(work / "tmp"),
        "XDG_CACHE_HOME": str(work / "cache"),
    }
    python, drop, more = as_ordinary_user()
    code = [python, "-c", CHILD, str(work), str(outside), script]
    done = subprocess.run(
        code, cwd=work, env={**env, **more}, capture_output=True, text=True, timeout=120, **drop,
    )  # fmt: skip
    said = [json.loads(line) for line in done.stdout.splitlines()]
    if said and said[0]["level"] != NAMESPACES:
        pytest.skip("an ordinary user cannot make user and mount namespaces here")
    assert done.returncode == 0, done.stderr
    return said


@needs_namespaces
def test_folders_a_box_locked_go_with_it_and_a_link_out_is_not_followed() -> None:
    work = Path(tempfile.mkdtemp(prefix="relay-test-removed-"))
    try:
        said = boxes_of_an_ordinary_user(work, LOCK)
        outside = work / "outside"
        folders = [Path(s["folder"]) for s in said[1:]]
        assert len(folders) == 2
        for folder in folders:
            assert folder.is_relative_to(work / "tmp")
            assert not os.path.lexists(folder), f"{folder} outlived its box"
        assert oct(outside.stat().st_mode)[-3:] == "555", "a link's target was made writable"
    finally:
        remove_tree(work)
        if os.path.lexists(work):  # as root: what an ordinary user's removal left
            subprocess.run(["rm", "-rf", str(work)], check=False)


# what a box of an ordinary user's relay tries: a file of its own (the person's on disk)
# made set-user-ID or set-group-ID, for another local account to run as the person
SPECIAL = """
set -e
echo '#!/bin/sh' > made
for mode in 4755 2755 6755; do
    if chmod "$mode" made 2>/dev/null; then echo "chmod $mode was let through" >&2; exit 3; fi
done
if python3 -c 'import os; os.close(os.open("new", os.O_CREAT | os.O_WRONLY, 0o4755))' 2>/dev/null
then
    echo "a set-user-ID file was created" >&2; exit 3
fi
test ! -u made && test ! -g made
"""


@needs_namespaces
def test_an_ordinary_users_box_makes_no_file_set_user_id() -> None:
    work = Path(tempfile.mkdtemp(prefix="relay-test-special-"))
    try:
        said = boxes_of_an_ordinary_user(work, SPECIAL)
        assert len(said) == 3  # both boxes ran the script to its end
    finally:
        remove_tree(work)
        if os.path.lexists(work):
            subprocess.run(["rm", "-rf", str(work)], check=False)


# a box of an ordinary user's relay opens a folder and a file of the person's share to
# every local account (its own umask cleared: no chmod of others' write bit goes through);
# the next box (the same relay) looks at them
PERSONS_BOX = """
import os, subprocess, sys
from dataclasses import replace
from pathlib import Path
from relay.ratchet.sandbox import NAMESPACES, Sandbox, level

work = Path(sys.argv[1])
share = work / "share"
os.environ["RELAY_SANDBOX_SHARE"] = str(share)
os.environ.pop("RELAY_SANDBOX_SHARE_JUDGES", None)
folder = work / "tmp" / "box"
for name in ("tree", "home", "tmp"):
    (folder / name).mkdir(parents=True)
box = Sandbox(folder, folder / "tree", folder / "home", (), NAMESPACES)
env = {"PATH": "/usr/bin:/bin", "HOME": str(box.home), "TMPDIR": str(box.tmp)}


def ran(command):
    done = subprocess.run(["/bin/sh", "-c", box.wrap(command, env)], cwd=box.tree, env=env,
                          capture_output=True, text=True)
    print(level(), done.returncode, done.stdout.split(), done.stderr.strip())
"""
OPENED = (
    PERSONS_BOX
    + """
ran(f"umask 0 && mkdir -p {share}/sub && touch {share}/sub/f")
ran(f"stat -c %a {share}/sub {share}/sub/f")
"""
)


def in_a_persons_box(script: str, work: Path) -> list[list[str]]:
    """``script`` (:data:`PERSONS_BOX` and its own lines) run by an ordinary user of the
    host in ``work``, whose ``tmp`` and ``share`` (with what they hold) are given to that
    user: each line it printed as [level, exit status, the rest]; a skip where that user
    cannot make namespaces."""
    work.chmod(0o755)
    if os.getuid() == 0:
        for each in (work, *(p for d in ("tmp", "share") for p in (work / d).rglob("*")),
                     work / "tmp", work / "share"):  # fmt: skip
            os.chown(each, NOBODY, NOBODY)
    python, drop, more = as_ordinary_user()
    env = {"PATH": os.environ["PATH"], "HOME": str(work), "TMPDIR": str(work / "tmp")}
    done = subprocess.run(
        [python, "-c", script, str(work)], cwd=work, env={**env, **more},
        capture_output=True, text=True, timeout=120, **drop,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    rows = [line.split(" ", 2) for line in done.stdout.splitlines()]
    if rows and rows[0][0] != NAMESPACES:
        pytest.skip("an ordinary user cannot make user and mount namespaces here")
    return rows


@needs_namespaces
def test_what_a_box_of_an_ordinary_user_opened_in_a_share_is_closed_before_the_next() -> None:
    """The person's share is theirs on disk: a folder and a file a box made writable by
    every local account are theirs no longer before the next box starts (the same walk a
    root relay's set-up makes, as the person)."""
    work = Path(tempfile.mkdtemp(prefix="relay-test-opened-"))
    try:
        for each in ("tmp", "share"):
            (work / each).mkdir()
        rows = in_a_persons_box(OPENED, work)
        assert [r[1] for r in rows] == ["0", "0"], rows
        assert rows[1][2].startswith("['775', '664']"), rows
    finally:
        subprocess.run(["rm", "-rf", str(work)], check=False)
