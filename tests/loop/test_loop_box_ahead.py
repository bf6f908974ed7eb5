"""Boxes made ahead: while relay measures the baseline's acceptance and while the maker
works, the next boxes (the maker's, the judged one) are made on a thread, then moved to
the commit they are wanted at before any code runs in them.

- A box made ahead and moved to a later commit is the box relay makes there: that
  commit checked out on the box's branch and nothing else in the tree, git's status
  clean, its history and tags alone in the repository (no other branch's objects).
- It is moved only along its own history: taken at a commit its commit is no ancestor
  of (another branch's), the box is made afresh there and holds nothing of the first.
- A commit that tracks a path where the box shows one of the person's environments is
  not moved to either (the fresh box shows none there).
- A box made ahead and never taken is removed, and so is one still held as relay ends.

Real git repositories and real boxes."""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
from pathlib import Path

import pytest

from relay.ratchet import sandbox


def git(*args: str, cwd: Path) -> str:
    done = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=True)
    return done.stdout.strip()


@pytest.fixture
def source(tmp_path: Path) -> Path:
    root = tmp_path / "source"
    (root / "pkg").mkdir(parents=True)
    git("init", "-q", "-b", "main", cwd=root)
    git("config", "user.name", "Person", cwd=root)
    git("config", "user.email", "person@example.invalid", cwd=root)
    (root / "a.py").write_text("A = 1\n")
    (root / "gone.py").write_text("GONE = 1\n")
    (root / "pkg" / "old.py").write_text("OLD = 1\n")
    git("add", "-A", cwd=root)
    git("commit", "-qm", "one", cwd=root)
    git("tag", "v1", cwd=root)
    return root


def child(root: Path, message: str = "candidate") -> str:
    """A commit on HEAD that changes a file, removes one and a folder's last file, and
    adds one in a new folder (the source's branch moved to it)."""
    (root / "a.py").write_text("A = 2\n")
    (root / "gone.py").unlink()
    (root / "pkg" / "old.py").unlink()
    (root / "new").mkdir()
    (root / "new" / "b.py").write_text("B = 2\n")
    git("add", "-A", cwd=root)
    git("commit", "-qm", message, cwd=root)
    return git("rev-parse", "HEAD", cwd=root)


def held(tree: Path) -> set[str]:
    listed = git("cat-file", "--batch-all-objects", "--batch-check=%(objectname)", cwd=tree)
    return set(listed.split())


def history(root: Path, *tips: str) -> set[str]:
    return {line.split()[0] for line in git("rev-list", "--objects", *tips, cwd=root).splitlines()}


def files(tree: Path) -> dict[str, str]:
    """Every file of the tree but the git folder's, with its text."""
    return {
        p.relative_to(tree).as_posix(): p.read_text()
        for p in tree.rglob("*")
        if p.is_file() and ".git" not in p.relative_to(tree).parts
    }


def test_a_box_made_ahead_and_moved_is_the_box_made_at_its_commit(source: Path) -> None:
    base = git("rev-parse", "HEAD", cwd=source)
    ahead = sandbox.judged_ahead(source, base, hidden=())
    commit = child(source)
    with sandbox.judged(source, commit, hidden=()) as fresh:
        want = files(fresh.tree)
        want_objects = held(fresh.tree)
    with sandbox.judged(source, commit, hidden=(), ahead=ahead) as box:
        tree = box.tree
        assert git("rev-parse", "HEAD", cwd=tree) == commit
        assert git("symbolic-ref", "HEAD", cwd=tree) == "refs/heads/relay-loop/judged"
        assert git("status", "--porcelain", "--ignored", cwd=tree) == ""
        assert files(tree) == want, "the moved tree is not the commit's checkout"
        assert not (tree / "pkg").exists(), "a folder the commit no longer has is left"
        assert held(tree) == want_objects == history(source, commit, "v1")
        assert git("tag", cwd=tree) == "v1"
        assert box.read_only == (tree / ".git",), "a judged box's git folder is read-only"
        folder = box.folder
    sandbox._removed()
    assert not folder.exists()


def test_a_box_made_ahead_is_never_moved_off_its_own_history(source: Path) -> None:
    """Made ahead on another branch's commit, it is not moved to the candidate: the box
    taken holds the candidate's history alone."""
    git("checkout", "-qb", "embargoed", cwd=source)
    (source / "plan.txt").write_text("EMBARGOED: the unannounced plan\n")
    git("add", "plan.txt", cwd=source)
    git("commit", "-qm", "EMBARGOED plan", cwd=source)
    embargoed = git("rev-parse", "HEAD", cwd=source)
    git("checkout", "-q", "main", cwd=source)
    ahead = sandbox.judged_ahead(source, embargoed, hidden=())
    commit = child(source)
    with sandbox.judged(source, commit, hidden=(), ahead=ahead) as box:
        assert git("rev-parse", "HEAD", cwd=box.tree) == commit
        assert held(box.tree) == history(source, commit, "v1")
        every = subprocess.run(
            ["git", "cat-file", "--batch-all-objects", "--batch"],
            cwd=box.tree, capture_output=True, check=True,
        ).stdout  # fmt: skip
        assert b"EMBARGOED" not in every
        assert not (box.tree / "plan.txt").exists()


def test_a_commit_tracking_an_environments_place_gets_a_box_made_there(source: Path) -> None:
    """The person's virtualenv is shown in a box made where the commit does not track
    its place; a commit that does gets a fresh box, which holds the commit's file."""
    venv = source / "venv"
    venv.mkdir()
    (venv / "pyvenv.cfg").write_text("home = /usr/bin\n")
    base = git("rev-parse", "HEAD", cwd=source)
    ahead = sandbox.BoxAhead(
        source,
        base,
        "relay-loop/G1",
        lambda: sandbox.standalone(source, base, "relay-loop/G1", hidden=()),
    )
    with contextlib.ExitStack() as stack:
        first = ahead.take(base, stack)
        assert first is not None and "venv" in first.exposed, "the environment is not shown"
    ahead = sandbox.BoxAhead(
        source,
        base,
        "relay-loop/G1",
        lambda: sandbox.standalone(source, base, "relay-loop/G1", hidden=()),
    )
    # a commit that tracks the environment's very place (the person's clone does not)
    blob = subprocess.run(
        ["git", "hash-object", "-w", "--stdin"], input="TRACKED\n", cwd=source,
        capture_output=True, text=True, check=True,
    ).stdout.strip()  # fmt: skip
    index = {**os.environ, "GIT_INDEX_FILE": str(source / ".git" / "tmp-index")}
    subprocess.run(["git", "read-tree", "HEAD"], cwd=source, env=index, check=True)
    subprocess.run(
        ["git", "update-index", "--add", "--cacheinfo", f"100644,{blob},venv/lib.py"],
        cwd=source, env=index, check=True,
    )  # fmt: skip
    tree = subprocess.run(
        ["git", "write-tree"], cwd=source, env=index, capture_output=True, text=True, check=True
    ).stdout.strip()
    commit = git("commit-tree", tree, "-p", "HEAD", "-m", "tracks venv", cwd=source)
    with sandbox.taken_or_made(
        ahead, commit, lambda: sandbox.standalone(source, commit, "relay-loop/G1", hidden=())
    ) as box:
        assert "venv" not in box.exposed
        assert (box.tree / "venv" / "lib.py").read_text() == "TRACKED\n"
        assert git("rev-parse", "HEAD", cwd=box.tree) == commit
        assert git("status", "--porcelain", cwd=box.tree) == ""


def test_a_box_made_ahead_goes_untaken_and_as_relay_ends(source: Path) -> None:
    base = git("rev-parse", "HEAD", cwd=source)
    ahead = sandbox.judged_ahead(source, base, hidden=())
    ahead._thread.join()
    made = ahead._box
    assert made is not None and made.tree.is_dir()
    ahead.close()
    sandbox._removed()
    assert not made.folder.exists()
    code = (
        "import sys; from pathlib import Path; from relay.ratchet.sandbox import judged_ahead\n"
        "ahead = judged_ahead(Path(sys.argv[1]), sys.argv[2], hidden=())\n"
        "ahead._thread.join()\n"
        "print(ahead._box.folder)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code, str(source), base],
        capture_output=True, text=True, check=True, timeout=60,
    )  # fmt: skip
    folder = Path(done.stdout.strip())
    assert folder.name.startswith("relay-judge-") and not folder.exists()
