"""What a pass reads of git, read once: the spine at the remote's refs (each ref resolved
from the clone's files to the commit git would name, each commit's files read once a
process, never one ref's content for another's) and the origin's URL. Against real clones
of a real remote."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from edges_helpers import Remote, commit_file, git

from relay.edges.git import Clone
from relay.edges.refs import head_object, ref_object
from relay.node import spine
from relay.node.spine import LOOP_PATH, read_loop, read_spine_file

ROSTER = "docs/loop/relay/roster.json"
_STARTED: list[list[str]] = []  # the processes started while one is counted


def _count_starts(event: str, args: tuple[object, ...]) -> None:
    if event == "subprocess.Popen" and _STARTED:
        _STARTED[-1].append(str(args[1]))


sys.addaudithook(_count_starts)


def started(read: Callable[[], object]) -> tuple[object, list[str]]:
    """What ``read()`` gives, and the argv of each process it started."""
    _STARTED.append([])
    try:
        said = read()
    finally:
        argvs = _STARTED.pop()
    return said, argvs


def push_files(clone: Path, files: dict[str, str], message: str, *, branch: str = "main") -> str:
    """Commit ``files`` in ``clone`` and push them to ``branch``; the commit."""
    for name, text in files.items():
        (clone / name).parent.mkdir(parents=True, exist_ok=True)
        (clone / name).write_text(text)
        git(clone, "add", name)
    git(clone, "commit", "-q", "-m", message)
    git(clone, "push", "-q", "origin", f"HEAD:refs/heads/{branch}")
    return git(clone, "rev-parse", "HEAD")


@pytest.fixture(autouse=True)
def _nothing_kept() -> None:
    spine._READ.clear()  # each test counts its own reads


def test_a_ref_and_head_read_from_files_are_the_commits_git_names(
    remote: Remote, tmp_path: Path
) -> None:
    a, b = remote.a, remote.b

    def agrees(name: str) -> str:
        found = ref_object(b, name)
        assert found is not None, name
        assert found[1] == git(b, "rev-parse", "--verify", "-q", name), name
        return found[1]

    first = agrees("refs/remotes/origin/HEAD")  # symbolic, loose
    assert agrees("refs/remotes/origin/main") == first
    git(b, "pack-refs", "--all")
    assert not (b / ".git/refs/remotes/origin/main").exists()
    assert agrees("refs/remotes/origin/HEAD") == first  # to a ref only in packed-refs
    second = commit_file(a, "x.txt", "x\n", "second")
    git(a, "push", "-q", "origin", "HEAD:refs/heads/main")
    git(b, "fetch", "-q", "origin")
    assert agrees("refs/remotes/origin/HEAD") == second  # a loose ref newer than packed
    git(b, "update-ref", "refs/remotes/origin/feature/deep", first)
    assert agrees("refs/remotes/origin/feature/deep") == first
    linked = tmp_path / "linked"
    git(b, "worktree", "add", "-q", "--detach", str(linked))
    found = ref_object(linked, "refs/remotes/origin/main")
    assert found is not None and found[1] == second  # a worktree reads the common refs
    assert head_object(linked) == first == git(linked, "rev-parse", "HEAD")  # detached
    assert head_object(b) == first == git(b, "rev-parse", "HEAD")  # on a packed branch
    git(b, "merge", "-q", "--ff-only", "origin/main")
    assert head_object(b) == second  # its loose ref, newer than the packed one
    for name in ("refs/remotes/origin/none", "refs/remotes/origin/../heads/main",
                 "refs/remotes/origin/x.lock", "refs/remotes/origin/.hidden", "HEAD",
                 "refs/tags/v1", "refs/remotes/origin/feature"):  # fmt: skip
        assert ref_object(b, name) is None, f"{name}: git's to answer"


def test_a_commits_spine_files_are_read_once_and_a_moved_ref_is_read_again(
    remote: Remote,
) -> None:
    a, b = remote.a, remote.b
    one = push_files(a, {str(LOOP_PATH): "# Loop one\n", ROSTER: '{"one": 1}\n'}, "spine")
    git(b, "fetch", "-q", "origin")
    text, argvs = started(lambda: read_loop(b))
    assert text == "# Loop one\n" and argvs, "read with git the first time"
    assert started(lambda: read_loop(b)) == ("# Loop one\n", []), "then kept"
    roster = '{"one": 1}\n'  # read with LOOP.md, in the same process
    assert started(lambda: read_spine_file(b, ROSTER, branch=None)) == (roster, [])

    push_files(a, {str(LOOP_PATH): "# Loop two\n", ROSTER: '{"two": 2}\n'}, "edit")
    assert started(lambda: read_loop(b)) == ("# Loop one\n", []), "as last fetched"
    git(b, "fetch", "-q", "origin")  # the ref moves: the new commit's files are read
    text, argvs = started(lambda: read_loop(b))
    assert text == "# Loop two\n" and argvs
    assert read_spine_file(b, ROSTER, branch=None) == '{"two": 2}\n'
    git(b, "update-ref", "refs/remotes/origin/main", one)
    assert started(lambda: read_loop(b)) == ("# Loop one\n", []), "moved back: kept by commit"


def test_a_file_read_at_one_ref_never_stands_for_another_refs(remote: Remote) -> None:
    """Two branches with the same spine file at different contents: each ref reads its
    own commit's, whatever was read (and kept) before at the other."""
    a, b = remote.a, remote.b
    push_files(a, {str(LOOP_PATH): "# Loop\n", ROSTER: '{"main": 1}\n'}, "main's")
    push_files(a, {ROSTER: '{"data": 1}\n'}, "data's", branch="data")
    git(b, "fetch", "-q", "origin")
    assert read_spine_file(b, ROSTER, branch=None) == '{"main": 1}\n'
    assert read_spine_file(b, ROSTER, branch="data") == '{"data": 1}\n'
    assert read_spine_file(b, ROSTER, branch=None) == '{"main": 1}\n'
    # a collaborator pushes another roster to the data branch: it is read, not the kept one
    forged = commit_file(a, ROSTER, '{"forged": 1}\n', "another")
    git(a, "push", "-q", "origin", "HEAD:refs/heads/data")
    git(b, "fetch", "-q", "origin")
    assert git(b, "rev-parse", "refs/remotes/origin/data") == forged
    assert read_spine_file(b, ROSTER, branch="data") == '{"forged": 1}\n'
    assert read_spine_file(b, ROSTER, branch=None) == '{"main": 1}\n'
    (b / ".git/refs/remotes/origin/data").write_text("not a sha\n")  # git's to answer then
    assert ref_object(b, "refs/remotes/origin/data") is None
    assert read_spine_file(b, ROSTER, branch="data") == '{"main": 1}\n', "a broken ref is none"


def test_files_read_together_are_what_git_show_gives(remote: Remote) -> None:
    """LOOP.md and the roster read in one process are each what ``git show`` gives: bytes
    that are no UTF-8, a missing file; a folder where a file was is left to ``git show``."""
    a, b = remote.a, remote.b
    (a / "docs/loop/relay").mkdir(parents=True)
    (a / LOOP_PATH).write_bytes(b"# Loop \xff\n")
    git(a, "add", str(LOOP_PATH))
    push_files(a, {"other.txt": "x\n"}, "no roster")
    git(b, "fetch", "-q", "origin")
    loop, argvs = started(lambda: spine._read_at(b, "refs/remotes/origin/HEAD", str(LOOP_PATH)))
    assert loop == b"# Loop \xff\n" and len(argvs) == 1
    said = started(lambda: spine._read_at(b, "refs/remotes/origin/HEAD", ROSTER))
    assert said == (None, []), "its absence read with LOOP.md"
    push_files(a, {f"{ROSTER}/inside": "a folder\n"}, "a folder")
    git(b, "fetch", "-q", "origin")
    shown = git(b, "show", f"{git(b, 'rev-parse', 'origin/main')}:{ROSTER}")  # by its commit
    assert read_spine_file(b, ROSTER, branch=None) == shown + "\n"


def test_the_origin_is_read_once_for_a_commands_clones_and_again_when_its_config_changes(
    remote: Remote, tmp_path: Path
) -> None:
    a = remote.a

    def fetch() -> None:
        Clone.open(a).fetch()  # a clone opened anew, as each part of a command opens one

    _, argvs = started(fetch)
    assert any("get-url" in argv for argv in argvs), "read with git the first time"
    _, argvs = started(fetch)
    assert not any("get-url" in argv for argv in argvs), "then taken as read"
    moved = tmp_path / "moved.git"
    git(tmp_path, "clone", "-q", "--bare", str(remote.bare), str(moved))
    git(a, "remote", "set-url", "origin", str(moved))
    _, argvs = started(fetch)
    assert any("get-url" in argv for argv in argvs), "its config changed: read again"
    clone = Clone.open(a)
    clone.fetch()
    assert clone._origin == str(moved)


def test_relays_data_branch_is_read_once_and_again_when_it_is_recorded(remote: Remote) -> None:
    a = remote.a

    def data_branch() -> str | None:
        return Clone.open(a).data_branch()

    assert started(data_branch)[0] is None
    assert started(data_branch) == (None, []), "taken as read"
    Clone.open(a).record_data_branch("relay-data")
    said, argvs = started(data_branch)
    assert said == "relay-data" and argvs, "the config changed: read again"
    git(a, "config", "relay.dataBranch", "other")  # by hand: the file changes too
    assert data_branch() == "other"
    Clone.open(a).record_data_branch(None)
    assert data_branch() is None


def test_the_identity_is_read_once_for_a_commands_clones_and_again_when_it_changes(
    remote: Remote,
) -> None:
    a = remote.a
    _, argvs = started(lambda: Clone.open(a)._identity_args())
    assert any("--get-regexp" in argv for argv in argvs)
    assert started(lambda: Clone.open(a)._identity_args()) == ([], []), "alice's, as read"
    git(a, "config", "--unset", "user.name")
    said, argvs = started(lambda: Clone.open(a)._identity_args())
    assert said == ["-c", "user.name=relay"] and argvs, "read again: relay's name stands in"
    (a / "n.txt").write_text("n\n")
    Clone.open(a).commit(["n.txt"], "n")
    assert git(a, "log", "-1", "--format=%an <%ae>") == "relay <alice@example.invalid>"
