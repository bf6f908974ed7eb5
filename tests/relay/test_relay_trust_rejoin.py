"""After an upgrade (or after the unreadable accepted roster was removed), relay tells the
person to run `relay join`. A collaborator with push access who planted a roster of her own
before that, listing the worker with its own public key, is not trusted by that join: a
clone that joined before pins the admin's key."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest
from test_relay_trust import mallory, push_edit, runs
from test_relay_trust_breaks import her_roster, her_task
from worlds import WORKER, World

from relay.edges.local import NodeState
from relay.protocol.roster import ROSTER_PATH


def test_relay_join_as_the_hint_says_does_not_trust_a_planted_roster(
    world: World, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    eve = mallory(world, monkeypatch)
    key = hashlib.sha256(b"eve").digest()
    text = her_roster(world, key)
    push_edit(world, eve, ROSTER_PATH, lambda _old: text, "a roster of my own")
    (NodeState.for_clone(world.worker.clone).roster_path).unlink()  # as after an upgrade
    said = world.worker.run("status")
    assert "run `relay join`" in said.stdout + said.stderr
    rejoined = world.worker.run("join", "--node", WORKER, "--scheduler", "none")  # as it says
    assert rejoined.returncode != 0 and "relay join --trust" in rejoined.stderr
    marker = tmp_path / "RAN"
    her_task(world, key, marker)
    done = world.worker.run("watch", "--once")
    assert runs(marker) == 0, done.stderr
