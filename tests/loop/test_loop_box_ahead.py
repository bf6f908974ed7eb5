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
- What a gate could tell apart is as a fresh box has it: a candidate that changes a
  ``.gitattributes`` gets a box made afresh (a file whose blob did not change would keep
  the bytes the old attributes gave it); the files' and folders' times follow the index's
  order (a tracked output edited by hand is no newer than its source, as make sees it);
  the environments shown are the candidate's; the reflogs are a fresh box's.
- In a run, each attempt's judged box made ahead is the one its candidate is judged in
  (made where the candidate's parent is), and the person's replace refs never move a box
  off its own history.
- Where another account may rename entries of the temporary folder (no sticky bit), a
  box it swapped for its own is never written in: relay makes no box ahead there, and a
  box folder that is not the one made is not taken.

Real git repositories and real boxes."""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from relay.ratchet import sandbox
from relay.ratchet.judge import AHEAD_FILES
from tests.loop.loop_project import CALC_MUL, TEST_GATE, TEST_MUL, make_project

ROOT = Path(__file__).resolve().parents[2]


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


def child(root: Path, message: str = "candidate", *, removes: bool = False) -> str:
    """A commit on HEAD that changes a file, makes one executable and adds one in a new
    folder (with ``removes``, also removes a file and a folder's last file); the source's
    branch moved to it."""
    (root / "a.py").write_text("A = 2\n")
    (root / "pkg" / "old.py").chmod(0o755)
    if removes:
        (root / "gone.py").unlink()
        (root / "pkg" / "old.py").unlink()
    (root / "new").mkdir()
    (root / "new" / "b.py").write_text("B = 2\n")
    git("add", "-A", cwd=root)
    git("commit", "-qm", message, cwd=root)
    return git("rev-parse", "HEAD", cwd=root)


def stats(tree: Path) -> dict[str, tuple[int, str]]:
    """Every file's mode and text, but the git folder's."""
    return {
        p.relative_to(tree).as_posix(): (p.stat().st_mode, p.read_text())
        for p in tree.rglob("*")
        if p.is_file() and ".git" not in p.relative_to(tree).parts
    }


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
    ahead._thread.join()
    assert ahead._box is not None
    made = ahead._box.folder
    commit = child(source)
    with sandbox.judged(source, commit, hidden=()) as fresh:
        want = files(fresh.tree)
        want_stats = stats(fresh.tree)
        want_objects = held(fresh.tree)
    with sandbox.judged(source, commit, hidden=(), ahead=ahead) as box:
        assert box.folder == made, "not the box made ahead"
        tree = box.tree
        assert git("rev-parse", "HEAD", cwd=tree) == commit
        assert git("symbolic-ref", "HEAD", cwd=tree) == "refs/heads/relay-loop/judged"
        assert git("status", "--porcelain", "--ignored", cwd=tree) == ""
        assert files(tree) == want, "the moved tree is not the commit's checkout"
        assert stats(tree) == want_stats, "the moved tree's files are not the commit's"
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


def repo(tmp_path: Path, files: dict[str, bytes]) -> tuple[Path, str]:
    root = tmp_path / "source"
    root.mkdir()
    git("init", "-q", "-b", "main", cwd=root)
    git("config", "user.name", "P", cwd=root)
    git("config", "user.email", "p@x.invalid", cwd=root)
    for name, data in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_bytes(data)
    git("add", "-A", cwd=root)
    git("commit", "-qm", "base", cwd=root)
    return root, git("rev-parse", "HEAD", cwd=root)


def change(root: Path, files: dict[str, bytes]) -> str:
    for name, data in files.items():
        (root / name).write_bytes(data)
    git("add", "-A", cwd=root)
    git("commit", "-qm", "candidate", cwd=root)
    return git("rev-parse", "HEAD", cwd=root)


def run_in(box: sandbox.Sandbox, command: str) -> int:
    done = subprocess.run(
        ["/bin/sh", "-c", box.wrap(command)], cwd=box.tree, env=box.env(dict(os.environ)),
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    return done.returncode


def fresh_and_moved(
    source: Path,
    base: str,
    commit: str,
    command: str,
    *,
    moved: bool = True,
    one_step: bool = False,
) -> tuple[int, int]:
    """``command``'s exit in a box made at ``commit`` and in one made ahead at ``base``
    and taken there (moved there, or with ``moved`` False made afresh: it is not moved).
    With ``one_step``, skipped where the box made ahead was checked out across a step of
    the file system's clock (the case is one of a checkout within one)."""
    ahead = sandbox.judged_ahead(source, base, hidden=())
    ahead._thread.join()
    assert ahead._box is not None
    made = ahead._box.folder
    tree = ahead._box.tree
    if one_step and len({p.lstat().st_mtime_ns for p in tree.iterdir() if p.is_file()}) > 1:
        ahead.close()
        pytest.skip("a step of the clock fell within the first checkout")
    time.sleep(1.1)  # the maker's time
    with sandbox.judged(source, commit, hidden=()) as fresh:
        got_fresh = run_in(fresh, command)
    with sandbox.judged(source, commit, hidden=(), ahead=ahead) as box:
        assert (box.folder == made) is moved, "moved" if not moved else "not the box made ahead"
        got_moved = run_in(box, command)
    return got_fresh, got_moved


def test_attributes_changed_by_the_candidate(tmp_path: Path) -> None:
    source = b"def test_it():\n    assert True\n"
    root, base = repo(tmp_path, {"test_it.py": source})
    commit = change(
        root,
        {
            ".gitattributes": b"test_it.py working-tree-encoding=UTF-16\n",
            "test_it.py": source.decode().encode("utf-16"),
        },
    )
    command = f"{sys.executable} test_it.py"
    fresh, moved = fresh_and_moved(root, base, commit, command, moved=False)
    assert fresh != 0, "a fresh clone cannot run the re-encoded file"
    assert moved == fresh, f"fresh clone {fresh}, the box taken {moved}"


def make_check(
    tmp_path: Path, output: bytes, changed: dict[str, bytes], between: int = 0
) -> tuple[int, int]:
    """``make check`` (which wants "fixed" in parser.c, made from parser.y when that is
    newer) in a fresh box and in a moved one, at a commit that changes ``changed`` on one
    whose parser.c is ``output`` and parser.y "broken" (``between``: files between the two
    in the index's order)."""
    files = {
        "Makefile": b"check: parser.c\n\tgrep -q fixed parser.c\n"
        b"parser.c: parser.y\n\tcp parser.y parser.c\n",
        "parser.c": output,
        "parser.y": b"broken\n",
        **{f"parser.m/{i}.txt": b"%d\n" % i for i in range(between)},  # order: c, m/, y
    }
    root, base = repo(tmp_path, files)
    commit = change(root, changed)
    return fresh_and_moved(root, base, commit, "make -s check", one_step=not between)


def test_a_tracked_output_edited_by_hand(tmp_path: Path) -> None:
    fresh, moved = make_check(tmp_path, b"broken\n", {"parser.c": b"fixed by hand\n"}, between=3000)
    assert fresh != 0, "the fresh clone regenerates parser.c"
    assert moved == fresh, f"fresh clone {fresh}, moved box {moved}"


def in_own_tmpfs(tmp_path: Path, script: str, *args: str) -> subprocess.CompletedProcess[str]:
    """``script`` run by Python in a mount namespace of its own, with a tmpfs of its own
    at its first argument (a folder under ``tmp_path``; ``args`` follow): the test is
    skipped where none can be made (the script exits 77 when its mount fails)."""
    place = tmp_path / "tmpfs"
    place.mkdir()
    if os.getuid() == 0:
        argv = ["unshare", "--mount", "--propagation", "private"]
    else:
        argv = ["unshare", "--user", "--map-root-user", "--mount"]
    mount = (
        "import subprocess, sys\n"
        "if subprocess.run(['mount', '-t', 'tmpfs', '-o', 'mode=1777', 'relay-test',"
        " sys.argv[1]]).returncode != 0:\n"
        "    sys.exit(77)\n"
    )
    done = subprocess.run(
        [*argv, sys.executable, "-c", mount + script, str(place), *args],
        capture_output=True, text=True, timeout=300, cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )  # fmt: skip
    if done.returncode == 77:
        pytest.skip(f"no tmpfs of the test's own: {done.stderr[-300:]}")
    assert done.returncode == 0, done.stderr[-2000:]
    return done


def test_an_environment_the_candidate_stops_tracking_in(tmp_path: Path) -> None:
    root, base = repo(tmp_path, {"a.py": b"A = 1\n", "node_modules/.keep": b""})
    (root / "node_modules" / "leftpad").mkdir()
    (root / "node_modules" / "leftpad" / "index.js").write_text("//\n")
    git("rm", "-q", "node_modules/.keep", cwd=root)
    git("commit", "-qm", "untracked", cwd=root)
    commit = git("rev-parse", "HEAD", cwd=root)

    def make(at: str) -> Callable[[], contextlib.AbstractContextManager[sandbox.Sandbox]]:
        return lambda: sandbox.standalone(root, at, "relay-loop/G1", hidden=())

    with sandbox.standalone(root, commit, "relay-loop/G1", hidden=()) as fresh:
        want = fresh.exposed
    ahead = sandbox.BoxAhead(root, base, "relay-loop/G1", make(base))
    with sandbox.taken_or_made(ahead, commit, make(commit)) as box:
        assert box.exposed == want == ("node_modules",)


def test_a_moved_box_reflog(tmp_path: Path) -> None:
    root, base = repo(tmp_path, {"a.py": b"A = 1\n"})
    commit = change(root, {"a.py": b"A = 2\n"})
    with sandbox.judged(root, commit, hidden=()) as fresh:
        want = git("reflog", cwd=fresh.tree).count("\n")
    ahead = sandbox.judged_ahead(root, base, hidden=())
    with sandbox.judged(root, commit, hidden=(), ahead=ahead) as box:
        assert git("reflog", cwd=box.tree).count("\n") == want
        assert base[:7] not in git("reflog", "--all", cwd=box.tree)


def recorded_takes(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, bool]]:
    """Each box made ahead that is taken, as (its branch, whether it was the one used)."""
    taken: list[tuple[str, bool]] = []
    real = sandbox.BoxAhead.take

    def take(
        self: sandbox.BoxAhead, commit: str, into: contextlib.ExitStack
    ) -> sandbox.Sandbox | None:
        box = real(self, commit, into)
        taken.append((self.branch, box is not None))
        return box

    monkeypatch.setattr(sandbox.BoxAhead, "take", take)
    return taken


def run_two_attempts(tmp_path: Path, *, data_files: int) -> None:
    """A run whose first attempt fails the acceptance (its work is held) and whose
    second is kept, on a project holding ``data_files`` files besides its code."""
    project = make_project(tmp_path, retries=1, gates=(TEST_GATE,))
    if data_files:
        for i in range(data_files):
            project.write(f"data/{i:03}.txt", f"{i}\n")
        project.git("add", "-A")
        project.git("commit", "-qm", "data")
    wrong = CALC_MUL.replace("a * b", "a + b")
    maker = project.script(
        "maker",
        f"n = count('maker')\nput('src/calc.py', {CALC_MUL!r} if n > 1 else {wrong!r})\n"
        f"put('tests/test_mul.py', {TEST_MUL!r})\n",
    )
    ran = project.loop("run", "--maker", maker)
    assert [k["goal"] for k in ran.data["kept"]] == ["G1"], ran


@pytest.mark.skipif(not sandbox.ahead_allowed(), reason="no box is made ahead here")
def test_each_attempts_boxes_made_ahead_are_the_ones_used(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The maker's box made while the baseline is measured is the first attempt's, and
    each attempt's judged box made ahead is the one its candidate is judged in."""
    taken = recorded_takes(monkeypatch)
    run_two_attempts(tmp_path, data_files=AHEAD_FILES)
    assert taken == [
        ("relay-loop/G1", True),
        (sandbox.JUDGED_BRANCH, True),
        (sandbox.JUDGED_BRANCH, True),
    ], taken


def test_a_small_trees_boxes_are_made_when_wanted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A tree of fewer than AHEAD_FILES files, whose checkout costs what a move does:
    no box is made ahead."""
    taken = recorded_takes(monkeypatch)
    run_two_attempts(tmp_path, data_files=0)
    assert taken == []


def test_a_replace_ref_does_not_move_a_box_off_its_history(tmp_path: Path) -> None:
    root, _ = repo(tmp_path, {"a.py": b"A = 1\n"})
    git("checkout", "-qb", "embargoed", cwd=root)
    embargoed = change(root, {"plan.txt": b"EMBARGOED\n"})
    git("checkout", "-q", "main", cwd=root)
    commit = change(root, {"a.py": b"A = 2\n"})
    git("replace", "--graft", commit, embargoed, cwd=root)  # the person's own graft
    ahead = sandbox.judged_ahead(root, embargoed, hidden=())
    with sandbox.judged(root, commit, hidden=(), ahead=ahead) as box:
        every = subprocess.run(
            ["git", "cat-file", "--batch-all-objects", "--batch"],
            cwd=box.tree, capture_output=True, check=True,
        ).stdout  # fmt: skip
        assert b"EMBARGOED" not in every


def open_share(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    request: pytest.FixtureRequest,
    *,
    mine: int | None = None,
) -> tuple[Path, Path]:
    """A folder other accounts reach (tmp_path's parents are closed to them), removed
    afterwards, holding a share every account may rename entries of (0777, no sticky
    bit); TMPDIR the share, or with ``mine`` a folder of this user's of that mode in it;
    HOME one whose git trusts every repository (``safe.directory = *``, as containers
    often set), and the run's packs made anew there. The folder and the temporary one."""
    place = Path(tempfile.mkdtemp(prefix="relay-test-swap-", dir="/tmp"))
    os.chmod(place, 0o755)
    request.addfinalizer(lambda: shutil.rmtree(place, ignore_errors=True))
    share = place / "share"
    share.mkdir()
    os.chmod(share, 0o777)
    temp = share
    if mine is not None:
        temp = share / "tmp"
        temp.mkdir()
        os.chmod(temp, mine)
    home = tmp_path / "home"
    home.mkdir()
    (home / ".gitconfig").write_text("[safe]\n\tdirectory = *\n")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("TMPDIR", str(temp))
    monkeypatch.setattr("tempfile.tempdir", None)
    monkeypatch.setattr(sandbox, "_PACK_FOLDER", [])
    monkeypatch.setattr(sandbox, "_PACKS", {})
    return place, temp


@pytest.mark.skipif(os.getuid() != 0 or not shutil.which("setpriv"), reason="root, setpriv")
def test_another_account_swaps_a_box_made_ahead(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, request: pytest.FixtureRequest
) -> None:
    """TMPDIR a folder every account may rename entries in (no sticky bit): relay makes
    no box ahead there; and a box made ahead that another account swapped for a repository
    of its own, whose configuration names a program git runs (trusted by a person's
    ``safe.directory = *``, as containers often set), is not taken: nothing of relay's
    runs that program or writes through the link it left."""
    place, shared = open_share(tmp_path, monkeypatch, request)
    assert not sandbox.ahead_allowed(), "a box is made ahead where another may swap it"
    root, base = repo(tmp_path, {"a.py": b"A = 1\n"})
    commit = change(root, {"a.py": b"A = 2\n"})
    victim = place / "victim"
    victim.write_text("root's own file\n")
    victim.chmod(0o600)
    marker = place / "ran"
    program = place / "program"
    program.write_text(f"#!/bin/sh\necho ran > {marker}\n")
    program.chmod(0o755)
    ahead = sandbox.judged_ahead(root, base, hidden=())
    ahead._thread.join()
    assert ahead._box is not None
    folder = ahead._box.folder
    swap = (
        f"mv {folder} {shared}/away && mkdir {folder} && git init -q {folder}/tree"
        f" && git -C {folder}/tree config core.fsmonitor {program}"
        f" && ln -s {victim} {folder}/tree/.git/packed-refs"
    )
    subprocess.run(
        ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "sh", "-c", swap],
        check=True, env={"PATH": "/usr/bin:/bin", "HOME": str(shared)},
    )  # fmt: skip
    with sandbox.judged(root, commit, hidden=(), ahead=ahead) as box:
        assert box.folder != folder, "the swapped folder was taken"
        assert git("rev-parse", "HEAD", cwd=box.tree) == commit
    assert victim.read_text() == "root's own file\n"
    assert not marker.exists(), "relay's git ran the other account's program"


def test_a_candidate_that_removes_files_gets_a_box_made_afresh(source: Path) -> None:
    """A folder that held more entries keeps its size where git removes them: the box is
    made at the commit instead, which holds neither the file nor the emptied folder."""
    base = git("rev-parse", "HEAD", cwd=source)
    ahead = sandbox.judged_ahead(source, base, hidden=())
    ahead._thread.join()
    assert ahead._box is not None
    made = ahead._box.folder
    commit = child(source, removes=True)
    with sandbox.judged(source, commit, hidden=(), ahead=ahead) as box:
        assert box.folder != made, "moved across a removal"
        assert git("rev-parse", "HEAD", cwd=box.tree) == commit
        assert not (box.tree / "gone.py").exists() and not (box.tree / "pkg").exists()
