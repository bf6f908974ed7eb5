"""Attacks on the boxes made ahead, after the first round of fixes, as tests: a moved box
is the box made there, or relay makes none ahead.

- Files close together in the index's order are as old as each other in a fresh box
  (the file system's clock moves in steps of milliseconds, and a fresh checkout writes
  them within one): make leaves a tracked output edited by hand (or beside a source the
  candidate changed) alone there, and in a moved box, whose written files take the time
  of the file before them plus whole steps of the checkout's pace.
- Where the temporary folder lists its entries in the order they were made (tmpfs,
  btrfs, xfs), a file the move wrote would be listed last: there a box is made afresh.
- A tag the person deletes while the box waits is gone from a fresh box: its object is
  in the packs the box was made with, so that box is made afresh.
- A temporary folder of this user's, closed to others, whose parent another account may
  rename entries of: no box is made ahead there (that account could swap the whole
  temporary folder between relay's check of the box folder and relay's git in it).

Real git repositories and real boxes."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from relay.ratchet import sandbox
from tests.loop.test_loop_box_ahead import (
    change,
    git,
    in_own_tmpfs,
    make_check,
    open_share,
    repo,
)

ROOT = Path(__file__).resolve().parents[2]


def test_a_tracked_output_edited_by_hand_next_to_its_source(tmp_path: Path) -> None:
    """No files between the output and its source in the index: a fresh checkout writes
    both within one tick of the file system's clock, so make sees the source no newer."""
    fresh, moved = make_check(tmp_path, b"broken\n", {"parser.c": b"fixed by hand\n"})
    if fresh != 0:
        pytest.skip("a tick of the clock fell between the two files in the fresh checkout")
    assert moved == fresh, f"fresh clone {fresh}, moved box {moved}"


LISTED = """
import json, os, tempfile
from pathlib import Path
os.environ["TMPDIR"] = sys.argv[1]
tempfile.tempdir = None
from tests.loop.test_loop_box_ahead import change, fresh_and_moved, repo
work = Path(tempfile.mkdtemp())  # the clone on the same file system
root, base = repo(work, {"d/a.txt": b"a\\n", "d/b.txt": b"b\\n"})
commit = change(root, {"d/a.txt": b"a, changed\\n"})
first = 'test "$(find d -type f | head -n 1)" = d/a.txt'
print(json.dumps(fresh_and_moved(root, base, commit, first, moved=False)))
"""


@pytest.mark.skipif(not shutil.which("unshare"), reason="unshare")
def test_a_folder_listed_in_the_order_its_entries_were_made(tmp_path: Path) -> None:
    """TMPDIR on a tmpfs (as /tmp is on many systems): ``find`` lists a folder's files in
    the order they were made; a gate that takes the first it finds would get another file
    in a moved box: the box is made afresh there."""
    done = in_own_tmpfs(tmp_path, LISTED)
    fresh, moved = json.loads(done.stdout.strip().splitlines()[-1])
    assert moved == fresh, f"fresh clone {fresh}, moved box {moved}"


def test_a_tag_deleted_while_the_box_waits(tmp_path: Path) -> None:
    root, base = repo(tmp_path, {"a.py": b"A = 1\n"})
    git("tag", "-a", "rel-1", "-m", "EMBARGOED release notes", cwd=root)
    ahead = sandbox.judged_ahead(root, base, hidden=())
    ahead._thread.join()
    git("tag", "-d", "rel-1", cwd=root)  # the person's second thoughts
    commit = change(root, {"a.py": b"A = 2\n"})
    every = ["git", "cat-file", "--batch-all-objects", "--batch"]
    with sandbox.judged(root, commit, hidden=()) as fresh:
        assert b"EMBARGOED" not in subprocess.run(every, cwd=fresh.tree, capture_output=True).stdout
    with sandbox.judged(root, commit, hidden=(), ahead=ahead) as box:
        assert git("tag", cwd=box.tree) == ""
        held = subprocess.run(every, cwd=box.tree, capture_output=True).stdout
        assert b"EMBARGOED" not in held, "the deleted tag's object is in the moved box"


def test_no_box_ahead_where_another_account_may_rename_the_temporary_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, request: pytest.FixtureRequest
) -> None:
    """TMPDIR this user's own folder, closed to others, in a folder every account may
    rename entries of (a team's share with no sticky bit): another account renames the
    temporary folder itself and puts one of its own at its name."""
    open_share(tmp_path, monkeypatch, request, mine=0o700)
    assert not sandbox.ahead_allowed(), "boxes are made ahead where another may swap them"


ATTACKER = """
import ctypes, os, subprocess, sys
share, box, packs, program = sys.argv[1:5]
evil = os.path.join(share, "evil")
tree = os.path.join(evil, box, "tree")
os.makedirs(tree)
os.makedirs(os.path.join(evil, packs))
os.chmod(os.path.join(evil, packs), 0o777)  # relay packs into it: the attacker has the objects
subprocess.run(["git", "init", "-q", tree], check=True)
subprocess.run(["git", "-C", tree, "config", "core.fsmonitor", program], check=True)
for each in (os.path.join(tree, ".git"), os.path.join(tree, ".git", "objects", "pack")):
    os.chmod(each, 0o777)
libc = ctypes.CDLL(None, use_errno=True)
# renameat2(AT_FDCWD, share/tmp, AT_FDCWD, share/evil, RENAME_EXCHANGE), x86_64 and aarch64
number = {"x86_64": 316, "aarch64": 276}[os.uname().machine]
swapped = libc.syscall(number, -100, os.path.join(share, "tmp").encode(), -100, evil.encode(), 2)
sys.exit(0 if swapped == 0 else 1)
"""


@pytest.mark.skipif(
    os.getuid() != 0
    or not shutil.which("setpriv")
    or os.uname().machine not in ("x86_64", "aarch64"),
    reason="root, setpriv",
)
def test_another_account_swaps_the_temporary_folder_after_the_check(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, request: pytest.FixtureRequest
) -> None:
    """The temporary folder's parent is every account's (no sticky bit): after relay
    found the box folder the one it made, the other account exchanges the temporary
    folder for one of its own (the moment a racing swap wins, taken here for certain);
    relay's git then runs in its repository and runs the program it names."""
    place, mine = open_share(tmp_path, monkeypatch, request, mine=0o755)
    share = mine.parent
    root, base = repo(tmp_path, {"a.py": b"A = 1\n"})
    commit = change(root, {"a.py": b"A = 2\n"})
    marker = place / "ran"
    program = place / "program"
    program.write_text(f"#!/bin/sh\nid -u > {marker}\n")
    program.chmod(0o755)
    ahead = sandbox.judged_ahead(root, base, hidden=()) if sandbox.ahead_allowed() else None
    if ahead is not None:
        ahead._thread.join()
        assert ahead._box is not None
        box, packs = ahead._box.folder.name, sandbox._PACK_FOLDER[0].name
        real = sandbox.move_box

        def raced(*args: object) -> None:  # the other account's swap wins the race here
            subprocess.run(
                ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups",
                 sys.executable, "-c", ATTACKER, str(share), box, packs, str(program)],
                check=True, env={"PATH": "/usr/bin:/bin", "HOME": str(share)},
            )  # fmt: skip
            real(*args)  # type: ignore[arg-type]

        monkeypatch.setattr(sandbox, "move_box", raced)
    with sandbox.judged(root, commit, hidden=(), ahead=ahead) as taken:
        assert git("rev-parse", "HEAD", cwd=taken.tree) == commit
    ran = marker.read_text().strip() if marker.exists() else None
    assert ran is None, f"relay's git ran the other account's program (as uid {ran})"


def test_a_source_changed_next_to_its_output(tmp_path: Path) -> None:
    """The candidate changes a source whose tracked output precedes it in the index, with
    no file between: a fresh checkout writes both within one step of the clock, so make
    leaves the output alone; in the moved box the source is no newer than it either."""
    fresh, moved = make_check(tmp_path, b"fixed\n", {"parser.y": b"broken again\n"})
    if fresh != 0:
        pytest.skip("a tick of the clock fell between the two files in the fresh checkout")
    assert moved == fresh, f"fresh clone {fresh}, moved box {moved}"
