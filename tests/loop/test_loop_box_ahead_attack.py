"""Attacks on the boxes made ahead: each a strict xfail, the finding it shows.

- A judged box moved to a candidate that changes ``.gitattributes`` keeps the earlier
  bytes of every file whose blob did not change: a fresh clone of the candidate gives
  another verdict (here: the suite's file re-encoded, which a fresh clone cannot run).
- A moved box's unchanged files are older than its changed ones: a make-based gate sees
  a tracked output edited by hand as newer than its source (a fresh clone regenerates it).
- The person's environment shown in a fresh box but not in the moved one (the commit it
  was made at tracked a file in that folder; the candidate does not).
- A moved box's reflogs name the commit it was made at.
- In a run, a later attempt's judged box is made at the attempt's start (the goal's work
  so far), which is never an ancestor of the candidate (a commit on HEAD): it is thrown
  away and the judged box made afresh, as before the change.
- Where the person's clone has a replace ref, the move's ancestry check follows it, and
  a box made on another branch keeps that branch's objects.
- A temporary folder another account may rename entries in: that account swaps the box
  made ahead for a folder of its own before relay moves it, and relay writes through a
  link it left (root's file emptied)."""

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
from tests.loop.loop_project import CALC_MUL, TEST_GATE, TEST_MUL, make_project

pytestmark = pytest.mark.skipif(sandbox.level() != sandbox.NAMESPACES, reason="namespaces")


def git(*args: str, cwd: Path) -> str:
    done = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=True)
    return done.stdout.strip()


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


def fresh_and_moved(source: Path, base: str, commit: str, command: str) -> tuple[int, int]:
    ahead = sandbox.judged_ahead(source, base, hidden=())
    ahead._thread.join()
    assert ahead._box is not None
    made = ahead._box.folder
    time.sleep(1.1)  # the maker's time
    with sandbox.judged(source, commit, hidden=()) as fresh:
        got_fresh = run_in(fresh, command)
    with sandbox.judged(source, commit, hidden=(), ahead=ahead) as moved:
        assert moved.folder == made, "not the box made ahead"
        got_moved = run_in(moved, command)
    return got_fresh, got_moved


@pytest.mark.xfail(
    raises=AssertionError, strict=True, reason="the move keeps bytes a fresh checkout converts"
)
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
    fresh, moved = fresh_and_moved(root, base, commit, f"{sys.executable} test_it.py")
    assert (fresh, moved) == (fresh, fresh), f"fresh clone {fresh}, moved box {moved}"


@pytest.mark.xfail(
    raises=AssertionError, strict=True, reason="the move leaves unchanged files older"
)
def test_a_tracked_output_edited_by_hand(tmp_path: Path) -> None:
    files = {
        "Makefile": b"check: parser.c\n\tgrep -q fixed parser.c\n"
        b"parser.c: parser.y\n\tcp parser.y parser.c\n",
        "parser.c": b"broken\n",
        "parser.y": b"broken\n",
        **{f"parser.m/{i}.txt": b"%d\n" % i for i in range(3000)},  # index order: c, m/, y
    }
    root, base = repo(tmp_path, files)
    commit = change(root, {"parser.c": b"fixed by hand\n"})
    fresh, moved = fresh_and_moved(root, base, commit, "make -s check")
    assert fresh != 0, "the fresh clone regenerates parser.c"
    assert moved == fresh, f"fresh clone {fresh}, moved box {moved}"


@pytest.mark.xfail(
    raises=AssertionError, strict=True, reason="exposure is decided at the box's first commit"
)
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


@pytest.mark.xfail(raises=AssertionError, strict=True, reason="the move's checkout is logged")
def test_a_moved_box_reflog(tmp_path: Path) -> None:
    root, base = repo(tmp_path, {"a.py": b"A = 1\n"})
    commit = change(root, {"a.py": b"A = 2\n"})
    with sandbox.judged(root, commit, hidden=()) as fresh:
        want = git("reflog", cwd=fresh.tree).count("\n")
    ahead = sandbox.judged_ahead(root, base, hidden=())
    with sandbox.judged(root, commit, hidden=(), ahead=ahead) as box:
        assert git("reflog", cwd=box.tree).count("\n") == want
        assert base[:7] not in git("reflog", "--all", cwd=box.tree)


@pytest.mark.xfail(
    raises=AssertionError,
    strict=True,
    reason="made at the attempt's start, never the candidate's ancestor",
)
def test_a_later_attempts_judged_box_is_moved(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Attempt 1 fails the acceptance (its work is held); attempt 2 passes. Every box made
    ahead is taken where it was wanted."""
    taken: list[tuple[str, bool]] = []
    real = sandbox.BoxAhead.take

    def take(
        self: sandbox.BoxAhead, commit: str, into: contextlib.ExitStack
    ) -> sandbox.Sandbox | None:
        box = real(self, commit, into)
        taken.append((self.branch, box is not None))
        return box

    monkeypatch.setattr(sandbox.BoxAhead, "take", take)
    project = make_project(tmp_path, retries=1, gates=(TEST_GATE,))
    wrong = CALC_MUL.replace("a * b", "a + b")
    maker = project.script(
        "maker",
        f"n = count('maker')\nput('src/calc.py', {CALC_MUL!r} if n > 1 else {wrong!r})\n"
        f"put('tests/test_mul.py', {TEST_MUL!r})\n",
    )
    ran = project.loop("run", "--maker", maker)
    assert [k["goal"] for k in ran.data["kept"]] == ["G1"], ran
    judged = [ok for branch, ok in taken if branch == sandbox.JUDGED_BRANCH]
    assert judged == [True, True], taken


@pytest.mark.xfail(
    raises=AssertionError, strict=True, reason="the move's check follows the person's replace refs"
)
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


@pytest.mark.skipif(os.getuid() != 0 or not shutil.which("setpriv"), reason="root, setpriv")
@pytest.mark.xfail(
    raises=AssertionError, strict=True, reason="the box folder is not checked before the move"
)
def test_another_account_swaps_a_box_made_ahead(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, request: pytest.FixtureRequest
) -> None:
    """TMPDIR a folder every account may rename entries in (no sticky bit)."""
    place = Path(tempfile.mkdtemp(prefix="relay-test-swap-", dir="/tmp"))
    os.chmod(place, 0o755)  # reached by the other account, unlike tmp_path's parents
    request.addfinalizer(lambda: shutil.rmtree(place, ignore_errors=True))
    shared = place / "shared"
    shared.mkdir()
    os.chmod(shared, 0o777)
    monkeypatch.setenv("TMPDIR", str(shared))
    monkeypatch.setattr("tempfile.tempdir", None)
    root, base = repo(tmp_path, {"a.py": b"A = 1\n"})
    commit = change(root, {"a.py": b"A = 2\n"})
    victim = place / "victim"
    victim.write_text("root's own file\n")
    victim.chmod(0o600)
    ahead = sandbox.judged_ahead(root, base, hidden=())
    ahead._thread.join()
    assert ahead._box is not None
    folder = ahead._box.folder
    swap = (
        f"mv {folder} {shared}/away && mkdir -p {folder}/tree/.git/objects/pack"
        f" && ln -s {victim} {folder}/tree/.git/packed-refs"
    )
    subprocess.run(
        ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "sh", "-c", swap],
        check=True, env={"PATH": "/usr/bin:/bin"},
    )  # fmt: skip
    with sandbox.judged(root, commit, hidden=(), ahead=ahead):
        pass
    assert victim.read_text() == "root's own file\n"
