"""The git edge against real repositories: a bare remote, two clones, real push races."""

from __future__ import annotations

import os
import socket
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from edges_helpers import Remote, clone, commit_file, git

import relay.edges.git as git_edge
from relay.edges.git import Clone, RepoSlug, parse_remote_url
from relay.errors import ConfigError, Conflict, RemoteUnavailable


@pytest.mark.parametrize(
    ("url", "slug"),
    [
        ("https://github.com/octo/relay.git", "octo/relay"),
        ("https://github.com/octo/relay", "octo/relay"),
        ("https://user:tok@ghe.example.com/team/app.git", "team/app"),
        ("ssh://git@github.com/octo/relay.git", "octo/relay"),
        ("ssh://git@github.com:22/octo/relay", "octo/relay"),
        ("git@github.com:octo/relay.git", "octo/relay"),
        ("github.com:octo/relay", "octo/relay"),
        ("/srv/git/relay.git", None),
        ("../relay.git", None),
        ("file:///srv/git/octo/relay.git", None),
        ("C:\\repos\\relay.git", None),
        ("C:/repos/relay", None),
        ("https://github.com/only-owner", None),
    ],
)
def test_parse_remote_url(url: str, slug: str | None) -> None:
    parsed = parse_remote_url(url)
    assert (None if parsed is None else str(parsed)) == slug


def test_repo_slug_parse() -> None:
    assert RepoSlug.parse(" octo/relay ") == RepoSlug("octo", "relay")
    with pytest.raises(ConfigError, match="pass --repo OWNER/NAME"):
        RepoSlug.parse("octo")


def test_open_finds_the_clone_and_its_remote(remote: Remote) -> None:
    sub = remote.a / "docs"
    sub.mkdir()
    repo = Clone.open(sub)
    assert repo.root == remote.a
    assert repo.remote_url() == str(remote.bare)
    assert repo.remote_slug() is None, "a local path names no GitHub repository"
    git(remote.a, "remote", "add", "gh", "git@github.com:octo/relay.git")
    assert repo.remote_slug("gh") == RepoSlug("octo", "relay")
    assert repo.remote_url("missing") is None
    assert repo.current_branch() == "main"


def test_open_outside_a_clone_is_a_config_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="not inside a git clone"):
        Clone.open(tmp_path)


def test_commit_takes_only_the_given_paths(remote: Remote) -> None:
    repo = Clone.open(remote.a)
    (remote.a / "README.md").write_text("a person's unfinished edit\n")
    (remote.a / ".gitignore").write_text("*.log\n")
    log = remote.a / "docs" / "loop" / "relay" / "7" / "logs" / "result-001.log"
    log.parent.mkdir(parents=True)
    log.write_text("step 1 ok\n")
    info = repo.commit([log], "relay: result 1 of #7")
    assert info is not None and not info.fallback_identity
    assert git(remote.a, "show", "--name-only", "--format=%an|%s", "HEAD").splitlines() == [
        "alice|relay: result 1 of #7",
        "",
        "docs/loop/relay/7/logs/result-001.log",
    ]
    assert repo.dirty_paths() == ["README.md"], "the person's edit stays uncommitted"
    assert "?? .gitignore" in git(remote.a, "status", "--porcelain")
    assert repo.commit([log], "again") is None, "nothing changed, nothing committed"


def test_commit_without_identity_uses_the_fallback(remote: Remote, tmp_path: Path) -> None:
    anon = clone(remote.bare, tmp_path / "anon", name=None)
    repo = Clone.open(anon)
    (anon / "note.txt").write_text("x\n")
    info = repo.commit(["note.txt"], "relay: note")
    assert info is not None and info.fallback_identity
    assert git(anon, "log", "-1", "--format=%an <%ae>") == "relay <relay@localhost>"


# Both ways a clone is opened: through GitPython, and with git run as plain processes
# (``open_local``: what a verb that fetches first uses, the network's commands included).
OPENERS = pytest.mark.parametrize(
    "opener", [Clone.open, Clone.open_local], ids=["gitpython", "plain"]
)


@OPENERS
def test_a_rejected_push_is_rebased_and_retried(
    remote: Remote, opener: Callable[[Path], Clone]
) -> None:
    a, b = opener(remote.a), opener(remote.b)
    commit_file(remote.a, "from-a.txt", "a\n", "a's change")
    commit_file(remote.b, "from-b.txt", "b\n", "b's change")
    assert a.push() == 1
    assert b.push() == 2, "b's first push is rejected, then rebased and pushed"
    pushed = git(remote.bare, "log", "--format=%s", "main").splitlines()
    assert pushed == ["b's change", "a's change", "first"]
    assert b.head_sha() == git(remote.bare, "rev-parse", "main")


def test_commit_and_push_returns_the_pushed_sha(remote: Remote) -> None:
    commit_file(remote.a, "from-a.txt", "a\n", "a's change")
    Clone.open(remote.a).push()
    b = Clone.open(remote.b)
    (remote.b / "log.txt").write_text("result\n")
    info = b.commit_and_push(["log.txt"], "relay: log")
    assert info is not None
    assert info.sha == git(remote.bare, "rev-parse", "main")
    assert b.remote_has_commit(info.sha)


def test_push_gives_up_with_a_conflict_after_its_attempts(remote: Remote) -> None:
    commit_file(remote.a, "from-a.txt", "a\n", "a's change")
    Clone.open(remote.a).push()
    commit_file(remote.b, "from-b.txt", "b\n", "b's change")
    before = git(remote.bare, "rev-parse", "main")
    with pytest.raises(Conflict) as err:
        Clone.open(remote.b).push(attempts=1)
    assert "rejected 1 times" in str(err.value) and "\n" not in str(err.value)
    assert git(remote.bare, "rev-parse", "main") == before, "the remote is as it was"


def test_pull_rebase_conflict_is_aborted_and_reported(remote: Remote) -> None:
    commit_file(remote.a, "README.md", "alice's line\n", "a edits")
    Clone.open(remote.a).push()
    own = commit_file(remote.b, "README.md", "bob's line\n", "b edits")
    b = Clone.open(remote.b)
    with pytest.raises(Conflict, match="rebase was aborted"):
        b.pull_rebase()
    assert b.head_sha() == own
    assert b.current_branch() == "main"
    assert not (remote.b / ".git" / "rebase-merge").exists()
    assert (remote.b / "README.md").read_text() == "bob's line\n"


def test_pull_fast_forwards_a_dirty_clone_around_a_persons_edits(remote: Remote) -> None:
    pushed = commit_file(remote.a, "notes.md", "from a\n", "a adds notes")
    Clone.open(remote.a).push()
    (remote.b / "README.md").write_text("uncommitted\n")
    b = Clone.open(remote.b)
    b.pull_rebase()
    assert b.head_sha() == pushed and (remote.b / "notes.md").read_text() == "from a\n"
    assert (remote.b / "README.md").read_text() == "uncommitted\n"
    assert b.dirty_paths() == ["README.md"]


def test_pull_refuses_a_dirty_clone_it_cannot_fast_forward(remote: Remote) -> None:
    commit_file(remote.a, "README.md", "a's line\n", "a edits")
    Clone.open(remote.a).push()
    (remote.b / "README.md").write_text("uncommitted\n")
    with pytest.raises(ConfigError, match=r"uncommitted changes \(README.md\).*will not stash"):
        Clone.open(remote.b).pull_rebase()
    assert (remote.b / "README.md").read_text() == "uncommitted\n"
    commit_file(remote.b, "local.md", "b's\n", "b's own commit")
    (remote.b / "README.md").write_text("uncommitted\n")
    with pytest.raises(ConfigError, match="commits the remote does not have"):
        Clone.open(remote.b).pull_rebase()
    assert (remote.b / "README.md").read_text() == "uncommitted\n"


def test_remote_has_commit(remote: Remote) -> None:
    a = Clone.open(remote.a)
    pushed = a.head_sha()
    assert a.remote_has_commit(pushed)
    local = commit_file(remote.a, "local.txt", "l\n", "not pushed")
    assert not a.remote_has_commit(local)
    assert not a.remote_has_commit("0" * 40)


def test_checkout_a_branch_that_only_the_remote_has(remote: Remote) -> None:
    git(remote.a, "checkout", "-q", "-b", "fix/flaky")
    commit_file(remote.a, "fix.txt", "f\n", "fix")
    Clone.open(remote.a).push()
    b = Clone.open(remote.b)
    b.checkout("fix/flaky")
    assert b.current_branch() == "fix/flaky"
    assert (remote.b / "fix.txt").exists()
    with pytest.raises(ConfigError, match="cannot check out branch 'nope'"):
        b.checkout("nope")


@OPENERS
def test_an_unreachable_remote_is_remote_unavailable(
    remote: Remote, tmp_path: Path, opener: Callable[[Path], Clone]
) -> None:
    git(remote.a, "remote", "set-url", "origin", str(tmp_path / "gone.git"))
    a = opener(remote.a)
    with pytest.raises(RemoteUnavailable, match="git fetch cannot reach the remote"):
        a.fetch()
    commit_file(remote.a, "x.txt", "x\n", "x")
    with pytest.raises(RemoteUnavailable, match="git push"):
        a.push()


@pytest.fixture
def silent_remote() -> Iterator[str]:
    """An http remote that takes every connection and never answers (a stalled server)."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(16)
    held: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:
        server.settimeout(0.2)
        while not stop.is_set():
            try:
                held.append(server.accept()[0])
            except OSError:
                continue

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.getsockname()[1]}/octo/relay.git"
    finally:
        stop.set()
        thread.join()
        for each in (*held, server):
            each.close()


def _processes_naming(text: str) -> list[str]:
    """The command lines of this machine's processes that name ``text``."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                line = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
            except OSError:
                continue
            if text in line and str(os.getpid()) != entry.name:
                found.append(line)
    return found


def _gits_in(folder: Path) -> list[str]:
    """The command lines of the git processes working in ``folder`` (their cwd)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if Path(os.readlink(entry / "cwd")) != folder.resolve():
                    continue
                line = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
            except OSError:
                continue
            if "git" in line.split(" ")[0]:
                found.append(line)
    return found


@pytest.mark.skipif(not Path("/proc/self/cmdline").exists(), reason="reads /proc")
@OPENERS
def test_a_remote_that_never_answers_is_given_up_with_the_helpers_git_started(
    remote: Remote, silent_remote: str, monkeypatch: pytest.MonkeyPatch,
    opener: Callable[[Path], Clone],
) -> None:  # fmt: skip
    """A fetch from a remote that takes the connection and never answers ends at the
    network's bound with a one-line error that says so, and leaves no git process behind:
    git's http helper, which holds the connection, goes with it."""
    monkeypatch.setattr(git_edge, "NETWORK_TIMEOUT", 2.0)
    git(remote.a, "remote", "set-url", "origin", silent_remote)
    a = opener(remote.a)
    started = time.monotonic()
    with pytest.raises(RemoteUnavailable, match="the remote gave no answer within 2 s") as got:
        a.fetch()
    assert time.monotonic() - started < 30
    assert got.value.hint and "git remote -v" in got.value.hint
    port = silent_remote.split(":")[2].split("/")[0]

    def left() -> list[str]:  # git's helper (it names the URL), and any git in this clone
        return _processes_naming(f"127.0.0.1:{port}") + _gits_in(remote.a)

    deadline = time.monotonic() + 5
    while left() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert left() == []
