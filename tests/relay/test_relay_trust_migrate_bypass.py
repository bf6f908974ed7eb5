"""A clone that joined before and trusts no roster now is told to pin the admin's key. A
collaborator with push access who deletes the roster from the branch and edits the node
table instead has that pinned join migrate her table: the pin is never checked against a
table this node signs itself."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest
from test_relay_trust import add_me, as_login, mallory, public_key, runs
from test_relay_trust_breaks import her_task
from worlds import CONTROLLER, STRANGER, WORKER, World, git

from relay.edges.local import NodeState
from relay.protocol.master_text import set_public_key
from relay.protocol.roster import ROSTER_PATH, fingerprint
from relay.protocol.signatures import public_key_of

LOOP = "docs/loop/LOOP.md"


@pytest.mark.parametrize("pinned", [True, False])
def test_a_deleted_roster_and_an_edited_table_are_not_migrated_by_a_rejoin(
    world: World, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, pinned: bool
) -> None:
    eve = mallory(world, monkeypatch)
    key = hashlib.sha256(b"eve").digest()
    as_login(world, STRANGER, "pull", "-q", "--ff-only", cwd=eve.clone)
    loop = eve.clone / LOOP
    text = set_public_key(loop.read_text(), node=CONTROLLER, keys=public_key_of(key))
    loop.write_text(add_me(world)(text))
    git("rm", "-q", ROSTER_PATH, cwd=eve.clone)
    git("commit", "-qam", "tidy", cwd=eve.clone)
    as_login(world, STRANGER, "push", "-q", "origin", "HEAD:main", cwd=eve.clone)
    (NodeState.for_clone(world.worker.clone).roster_path).unlink()  # as after an upgrade
    pin = ("--trust", fingerprint(public_key(world.controller))) if pinned else ()
    world.worker.run("join", "--node", WORKER, "--scheduler", "none", *pin)
    marker = tmp_path / "RAN"
    her_task(world, key, marker)
    done = world.worker.run("watch", "--once")
    assert runs(marker) == 0, done.stdout + done.stderr
