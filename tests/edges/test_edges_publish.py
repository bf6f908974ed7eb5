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
    assert publish_edit(clone, LOOP, lambda old: "first\n", "relay: first")
    head = git(remote.a, "rev-parse", "HEAD")
    refuse_pushes(remote.bare)
    with pytest.raises(RelayError):
        publish_edit(clone, LOOP, lambda old: (old or "") + "second\n", "relay: second")
    assert git(remote.a, "rev-parse", "HEAD") == head
    assert (remote.a / LOOP).read_text() == "first\n"
    assert git(remote.a, "status", "--porcelain") == ""


def test_an_edit_is_applied_to_the_file_as_the_remote_has_it(remote: Remote) -> None:
    a, b = Clone.open(remote.a), Clone.open(remote.b)
    publish_edit(a, LOOP, lambda old: "row a\n", "relay: a")
    # b has not pulled: its edit still starts from what a pushed
    assert publish_edit(b, LOOP, lambda old: (old or "") + "row b\n", "relay: b")
    assert (remote.b / LOOP).read_text() == "row a\nrow b\n"
    assert not publish_edits(b, {LOOP: lambda old: old or ""}, "relay: nothing")
