"""Publishing a spine file: one failure rule. A push the remote refuses leaves neither the
commit nor the edit behind, and an edit that changes nothing publishes nothing."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest
from edges_helpers import Remote, git

from relay.edges.git import Clone
from relay.errors import RelayError
from relay.node.apply import publish_edit, publish_edits

LOOP = Path("docs/loop/LOOP.md")


def refuse_pushes(bare: Path) -> None:
    hook = bare / "hooks" / "pre-receive"
    hook.write_text("#!/bin/sh\necho 'refused by the test' >&2\nexit 1\n")
    hook.chmod(hook.stat().st_mode | stat.S_IEXEC)


def test_a_refused_push_undoes_the_commit_and_the_edit(remote: Remote) -> None:
    clone = Clone.open(remote.a)
    assert publish_edit(clone, LOOP, lambda old: "first\n", "relay: first", branch=None)
    head = git(remote.a, "rev-parse", "HEAD")
    refuse_pushes(remote.bare)
    with pytest.raises(RelayError):
        publish_edit(
            clone, LOOP, lambda old: (old or "") + "second\n", "relay: second", branch=None
        )
    assert git(remote.a, "rev-parse", "HEAD") == head
    assert (remote.a / LOOP).read_text() == "first\n"
    assert git(remote.a, "status", "--porcelain") == ""


def test_an_edit_is_applied_to_the_file_as_the_remote_has_it(remote: Remote) -> None:
    a, b = Clone.open(remote.a), Clone.open(remote.b)
    publish_edit(a, LOOP, lambda old: "row a\n", "relay: a", branch=None)
    # b has not pulled: its edit still starts from what a pushed
    assert publish_edit(b, LOOP, lambda old: (old or "") + "row b\n", "relay: b", branch=None)
    assert (remote.b / LOOP).read_text() == "row a\nrow b\n"
    assert not publish_edits(b, {LOOP: lambda old: old or ""}, "relay: nothing", branch=None)


def counted_fetches(repo: Path, log: Path) -> Path:
    """Have every fetch from ``repo``'s origin go through a program that notes it first
    (git's own ``remote.origin.uploadpack``); the file it notes them in."""
    program = log.with_suffix(".sh")
    program.write_text(f'#!/bin/sh\necho fetch >> "{log}"\nexec git upload-pack "$@"\n')
    program.chmod(program.stat().st_mode | stat.S_IEXEC)
    git(repo, "config", "remote.origin.uploadpack", str(program))
    return log


def test_a_publish_after_the_commands_fetch_fetches_again_only_when_its_push_is_refused(
    remote: Remote, tmp_path: Path
) -> None:
    """A command fetches as it starts; its publish a moment later takes the refs that fetch
    left (no second fetch). When another node pushed in between, the refused push makes the
    publish fetch and apply its edit again on the new tip."""
    log = counted_fetches(remote.b, tmp_path / "fetches.log")

    def fetches() -> int:
        return len(log.read_text().splitlines()) if log.exists() else 0

    b = Clone.open(remote.b)
    b.refresh()  # the command's own fetch, as it starts
    assert fetches() == 1
    assert publish_edit(b, LOOP, lambda old: (old or "") + "row b\n", "relay: b", branch=None)
    assert fetches() == 1, "the publish fetched again a moment after the command did"

    b.refresh()
    publish_edit(
        Clone.open(remote.a), LOOP, lambda old: (old or "") + "row a\n", "relay: a", branch=None
    )
    assert publish_edit(b, LOOP, lambda old: (old or "") + "row c\n", "relay: c", branch=None)
    assert fetches() == 3, "the refused push is followed by one fetch"
    assert (remote.b / LOOP).read_text() == "row b\nrow a\nrow c\n"
    assert git(remote.bare, "show", f"main:{LOOP}") == "row b\nrow a\nrow c"


def _housekeeping(trace: Path) -> list[str]:
    """The command of this clone's after which git's own trace saw a ``git maintenance``
    or ``gc`` start (the remote's receive-pack, which runs its own, left out)."""
    import json

    starts = [json.loads(line) for line in trace.read_text().splitlines()]
    argvs = {s["sid"]: s["argv"] for s in starts if s.get("event") == "start"}

    def verb(argv: list[str]) -> str:
        words = argv[1:]
        while words and words[0] == "-c":
            words = words[2:]
        return words[0] if words else ""

    parents = [
        argvs.get(sid.rpartition("/")[0], ["?"])
        for sid, argv in argvs.items()
        if verb(argv) in ("maintenance", "gc")
    ]
    return [verb(p) for p in parents if not any(w.endswith("receive-pack") for w in p)]


def test_a_publish_leaves_gits_housekeeping_to_its_fetch(
    remote: Remote, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A refresh then a publish (a pass's shape) start git's housekeeping (``git
    maintenance run --auto``) after each fetch, as git does, and not again after the merge
    and the commit that follow it moments later."""
    clone = Clone.open(remote.a)
    trace = tmp_path / "trace.json"
    monkeypatch.setenv("GIT_TRACE2_EVENT", str(trace))
    git(remote.b, "commit", "-q", "--allow-empty", "-m", "b's")  # a plain commit: git's
    assert _housekeeping(trace) == ["commit"]
    git(remote.b, "push", "-q", "origin", "HEAD:main")
    trace.unlink()
    clone.refresh()  # fetches b's commit and fast-forwards to it
    assert publish_edit(clone, LOOP, lambda old: "row\n", "relay: row", branch=None)
    said = trace.read_text()
    assert '"merge"' in said and '"commit"' in said, "it merged and committed"
    assert _housekeeping(trace) == ["fetch"], "once, after the fetch"
