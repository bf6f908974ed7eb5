"""The loop's work tree reads git without GitPython and reads each commit's files once:
against real clones, its answers are git's own, however HEAD is kept, and move with it."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from edges_helpers import Remote, commit_file, git

from relay.edges.git import Clone, GitFailed, LocalRepo, as_relay_error
from relay.edges.worktree import WorkTree
from relay.errors import ConfigError


def test_head_is_gits_however_head_is_kept(remote: Remote, tmp_path: Path) -> None:
    tree = WorkTree.open(remote.a)
    assert isinstance(tree.clone.repo, LocalRepo), "the loop's clone runs git itself"
    first = git(remote.a, "rev-parse", "HEAD")
    assert tree.head() == first  # a branch whose ref is a loose file
    git(remote.a, "pack-refs", "--all")
    assert not (remote.a / ".git/refs/heads/main").exists()
    assert tree.head() == first  # the ref only in packed-refs
    second = commit_file(remote.a, "b.txt", "b\n", "second")
    assert tree.head() == second  # a loose ref again, newer than the packed one
    git(remote.a, "checkout", "-q", "--detach", first)
    assert tree.head() == first  # a detached HEAD
    git(remote.a, "checkout", "-q", "main")
    linked = tmp_path / "linked"
    git(remote.a, "worktree", "add", "-q", "-b", "side", str(linked), first)
    other = WorkTree.open(linked)
    assert other.root == linked.resolve()
    assert other.head() == first  # a linked worktree: its own HEAD, the common refs
    assert other.common_dir() == (remote.a / ".git").resolve()
    assert tree.head() == second


def test_reads_of_head_follow_head(remote: Remote) -> None:
    """What HEAD holds is kept by the commit HEAD is, never by the word: a new commit
    is read afresh."""
    tree = WorkTree.open(remote.a)
    assert tree.show("HEAD", "README.md") == "hello\n"
    assert tree.show("HEAD", "notes.txt") is None
    assert tree.in_head("README.md") and not tree.in_head("notes.txt")
    before = tree.head()
    assert tree.files_at("HEAD") == ["README.md"]
    after = commit_file(remote.a, "README.md", "changed\n", "edit")
    commit_file(remote.a, "notes.txt", "n\n", "notes")
    assert tree.show("HEAD", "README.md") == "changed\n"
    assert tree.show("HEAD", "notes.txt") == "n\n"
    assert tree.files_at("HEAD") == ["README.md", "notes.txt"]
    assert tree.in_head("notes.txt")
    assert tree.show(before, "README.md") == "hello\n"
    assert tree.changed_in(before) == ["README.md", "notes.txt"]
    assert tree.changed_in(after) == ["notes.txt"]
    git(remote.a, "reset", "-q", "--hard", after)
    assert tree.changed_in(before) == ["README.md"]
    assert tree.show("HEAD", "notes.txt") is None


def test_a_failed_command_is_gits_error(remote: Remote, tmp_path: Path) -> None:
    tree = WorkTree.open(remote.a)
    with pytest.raises(GitFailed) as failed:
        tree.git("rev-parse", "--verify", "no-such-branch")
    assert failed.value.status != 0
    mapped = as_relay_error(failed.value)
    assert isinstance(mapped, ConfigError)
    assert "`git -c core.hooksPath" in mapped.message
    with pytest.raises(ConfigError, match="not inside a git clone"):
        Clone.open_local(tmp_path)


def test_a_loop_pass_over_the_tree_loads_no_gitpython(remote: Remote) -> None:
    """GitPython is loaded for network commands only: its import and its processes are
    no part of the loop's local work."""
    script = (
        "import sys\n"
        "from pathlib import Path\n"
        "from relay.edges.worktree import WorkTree\n"
        f"tree = WorkTree.open(Path({str(remote.a)!r}))\n"
        "tree.show('HEAD', 'README.md'); tree.tracked_changes(); tree.untracked()\n"
        "tree.commit(['README.md'], 'nothing to commit')\n"
        "tree.in_head('missing.txt')\n"
        "print('git' in sys.modules)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True, timeout=60
    )
    assert done.stdout.strip() == "False", done.stderr


def test_head_named_elsewhere_by_gits_environment_is_gits(
    remote: Remote, monkeypatch: pytest.MonkeyPatch
) -> None:
    """GIT_DIR naming another repository (a hook's environment) is what git reads: so
    does relay, which then asks git rather than read the tree's own files."""
    tree = WorkTree.open(remote.a)
    other = git(remote.b, "rev-parse", "HEAD")
    commit_file(remote.a, "c.txt", "c\n", "a's own")
    assert tree.head() != other
    monkeypatch.setenv("GIT_DIR", str(remote.b / ".git"))
    assert tree.head() == other


def _forget_dirs() -> None:
    from relay.edges import git as edges_git
    from relay.edges import worktree
    from relay.ratchet import threads

    edges_git._TOPS.clear()
    edges_git._DIRS.clear()
    worktree._COMMON.clear()
    threads.common_dir.cache_clear()
    threads._main_tree.cache_clear()


def test_git_directories_come_with_the_work_tree(remote: Remote, tmp_path: Path) -> None:
    """The git process that finds the work tree also says its git directories: each of
    relay's readers gets git's own answer from it (the same as its own question to git
    gives), for the main tree, a linked worktree and a folder inside."""
    from relay.edges.git import known_dirs
    from relay.ratchet import threads
    from relay.ratchet.sandbox import hidden_for

    linked = tmp_path / "linked"
    git(remote.a, "worktree", "add", "-q", "-b", "side2", str(linked), "HEAD")
    (remote.a / "sub").mkdir()
    for where, top in ((remote.a, remote.a), (linked, linked), (remote.a / "sub", remote.a)):
        _forget_dirs()
        asked = (
            threads.common_dir(top),
            threads._main_tree(top),
            WorkTree(Clone(LocalRepo(top))).common_dir(),
            hidden_for(top),
        )
        _forget_dirs()
        tree = WorkTree.open(where)
        assert tree.root == top.resolve()
        known = known_dirs(tree.root)
        assert known is not None, "learned with the work tree"
        said = git(top, "rev-parse", "--path-format=absolute", "--git-common-dir", "--git-dir")
        assert [str(known.absolute_common), str(known.git_dir)] == said.split("\n")
        learned = (
            threads.common_dir(tree.root),
            threads._main_tree(tree.root),
            tree.common_dir(),
            hidden_for(tree.root),
        )
        assert learned == asked
        assert learned[1] is (where != linked)
    _forget_dirs()


def _housekeeping(trace: Path) -> list[list[str]]:
    """The ``git maintenance`` and ``git gc`` processes git's own trace saw start."""
    starts = [json.loads(line) for line in trace.read_text().splitlines()]
    argvs = [s["argv"] for s in starts if s.get("event") == "start"]
    return [a for a in argvs if "maintenance" in a or "gc" in a]


def test_relays_commit_starts_no_housekeeping_of_gits(
    remote: Remote, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A commit of relay's starts no ``git maintenance``/``gc --auto`` process (one per
    commit otherwise): relay packs the clone itself. A plain commit, the control, does."""
    tree = WorkTree.open(remote.a)
    trace = tmp_path / "trace.json"
    monkeypatch.setenv("GIT_TRACE2_EVENT", str(trace))
    (remote.a / "notes.txt").write_text("n\n")
    assert tree.commit(["notes.txt"], "notes") == tree.head()
    assert _housekeeping(trace) == []
    commit_file(remote.a, "more.txt", "m\n", "more")
    assert _housekeeping(trace), "a plain commit starts git's housekeeping"


_STARTED: list[list[str]] = []  # the processes a read started, while one is counted


def _count_starts(event: str, args: tuple[object, ...]) -> None:
    if event == "subprocess.Popen" and _STARTED:
        _STARTED[-1].append(str(args[1]))


sys.addaudithook(_count_starts)


def test_files_read_ahead_in_one_process_are_what_each_read_alone_gives(
    remote: Remote,
) -> None:
    """Several files read ahead (``show_all``) cost one git process, and then read as
    each read alone reads: a file, a link, a missing path, bytes that are no UTF-8, a
    name with spaces; a folder is left to the read alone (git shows its listing)."""
    a = remote.a
    (a / "docs").mkdir()
    (a / "docs/a b.txt").write_text("spaced\n")
    (a / "raw.bin").write_bytes(b"\xff\xfe no utf-8\n")
    (a / "link").symlink_to("README.md")
    git(a, "add", "docs", "raw.bin", "link")
    commit = commit_file(a, "empty.txt", "", "more")
    names = ["README.md", "docs/a b.txt", "raw.bin", "link", "empty.txt", "none.txt", "docs"]
    alone = WorkTree.open(a)
    expected = {n: alone.show(commit, n) for n in names}
    assert expected["docs"] is not None and "a b.txt" in expected["docs"]
    assert expected["none.txt"] is None and expected["empty.txt"] == ""
    ahead = WorkTree.open(a)
    _STARTED.append([])
    try:
        ahead.show_all([(commit, n) for n in names] + [("HEAD", "README.md")])
        read = {n: ahead.show(commit, n) for n in names if n != "docs"}
        head = ahead.show("HEAD", "README.md")
    finally:
        started = _STARTED.pop()
    assert len(started) == 1 and "cat-file" in started[0]
    assert read == {n: t for n, t in expected.items() if n != "docs"}
    assert head == expected["README.md"]
    assert ahead.show(commit, "docs") == expected["docs"]


def test_the_files_paths_name_are_git_ls_trees_answer(remote: Remote) -> None:
    """What a kept candidate's paths name in it (``bring``) is read from the commit's
    listing, and is what ``git ls-tree`` answers: a file, a folder with or without its
    slash, a name that looks like a pattern (git takes it literally), one it lacks."""
    a = remote.a
    (a / "src/pkg").mkdir(parents=True)
    for name in ("src/pkg/m.py", "src/x.py", "src*", "srcx"):
        (a / name).write_text(f"{name}\n")
    git(a, "add", "-A")
    commit = commit_file(a, "README.md", "edited\n", "tree")
    tree = WorkTree.open(a)
    for paths in (
        ["src/x.py"],
        ["src"],
        ["src/"],
        ["src/pkg", "README.md"],
        ["src*"],
        ["src/*.py"],
        ["none.txt", "src/pkg/m.py"],
        ["sr"],
    ):
        said = git(a, "ls-tree", "-r", "--name-only", "-z", commit, "--", *paths)
        assert tree._files_under(commit, paths) == sorted(p for p in said.split("\0") if p)


def test_relays_commit_of_files_git_tracks_is_one_process_and_the_rest_as_before(
    remote: Remote,
) -> None:
    """Tracked files changed or deleted (one ignored, tracked all the same) are committed
    by one git process, a folder by add and commit; a new file (ignored too), a folder's
    new files and files left as they were are committed, or not, as ``add`` then
    ``commit`` commit them. What else the person staged stays staged and out of relay's
    commit."""
    a = remote.a
    (a / ".gitignore").write_text("*.log\n")
    (a / "kept.log").write_text("1\n")
    (a / "gone.txt").write_text("g\n")
    git(a, "add", "-f", ".gitignore", "kept.log", "gone.txt")
    commit_file(a, "board.md", "b\n", "base")
    tree = WorkTree.open(a)
    (a / "board.md").write_text("b2\n")
    (a / "kept.log").write_text("2\n")
    (a / "gone.txt").unlink()
    (a / "staged.txt").write_text("the person's\n")
    git(a, "add", "staged.txt")
    _STARTED.append([])
    try:
        made = tree.commit(["board.md", "kept.log", "gone.txt"], "relay's")
    finally:
        started = _STARTED.pop()
    staging = [w for s in started for w in ("add", "diff", "commit") if f"'{w}'" in s]
    assert staging == ["commit"], started  # (beside them: an identity, a path in HEAD)
    assert made == tree.head()
    said = git(a, "show", "--name-status", "--format=", "HEAD").split()
    assert said == ["M", "board.md", "D", "gone.txt", "M", "kept.log"], said
    assert git(a, "diff", "--cached", "--name-only").split() == ["staged.txt"]
    assert tree.commit(["board.md"], "unchanged") is None
    (a / "new.log").write_text("new\n")
    (a / "state" / "gates").mkdir(parents=True)
    (a / "state" / "gates" / "one.txt").write_text("1\n")
    assert tree.commit(["new.log", "state"], "new") == tree.head()
    said = git(a, "show", "--name-status", "--format=", "HEAD").split()
    assert said == ["A", "new.log", "A", "state/gates/one.txt"], said
    assert tree.commit(["state", "board.md"], "unchanged") is None
    (a / "state" / "gates" / "two.txt").write_text("2\n")  # a tracked folder's new file
    _STARTED.append([])
    try:
        assert tree.commit(["state"], "folder") == tree.head()
    finally:
        started = _STARTED.pop()
    staging = [w for s in started for w in ("add", "diff", "commit") if f"'{w}'" in s]
    assert staging == ["add", "commit"], started
    assert git(a, "show", "--name-only", "--format=", "HEAD").split() == ["state/gates/two.txt"]
    assert git(a, "diff", "--cached", "--name-only").split() == ["staged.txt"]
