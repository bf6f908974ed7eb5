"""A spine set up by an earlier relay is migrated by `relay join` only where the roster was
never in the clone's history. The clone's history is what it fetched: a collaborator with
push access who rewrites the branch before a node fetches, or who pushes a roster of her
own while that node's join is publishing its revision 1, has that node obey her table or
her roster, unpinned, though it joined before."""

from __future__ import annotations

import hashlib
import os
import shlex
from pathlib import Path

import pytest
from test_relay_trust import add_me, as_login, earlier_relay, mallory, public_key, runs
from test_relay_trust_breaks import her_roster, her_task
from worlds import CONTROLLER, STRANGER, WORKER, World, git

from relay.edges.local import NodeState
from relay.protocol.master_text import set_public_key
from relay.protocol.roster import ROSTER_PATH, fingerprint
from relay.protocol.signatures import public_key_of

LOOP = "docs/loop/LOOP.md"


def test_a_migration_rewritten_away_before_the_worker_fetched_is_not_migrated_again(
    world: World, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    root = earlier_relay(world)
    own = fingerprint(public_key(world.controller))  # its person vouches for the table
    done = world.controller.run("join", "--node", CONTROLLER, "--scheduler", "none", "--trust", own)
    assert "migrated the node table to a signed roster" in done.stdout, done.stderr
    # she rewrites main back to the earlier relay's spine, with her table on it, before
    # the worker (offline, or between two polls) fetched the controller's revision 1
    eve = mallory(world, monkeypatch)
    key = hashlib.sha256(b"eve").digest()
    git("reset", "-q", "--hard", root, cwd=eve.clone)
    loop = eve.clone / LOOP
    text = set_public_key(loop.read_text(), node=CONTROLLER, keys=public_key_of(key))
    loop.write_text(add_me(world)(text))
    git("commit", "-qam", "tidy", cwd=eve.clone)
    as_login(world, STRANGER, "push", "-q", "-f", "origin", "HEAD:main", cwd=eve.clone)
    listed = git("log", "--all", "--format=%H", "--", ROSTER_PATH, cwd=world.bare).split()
    assert not listed, "the roster is still on a ref of the hub"
    done = world.worker.run("join", "--node", WORKER, "--scheduler", "none")  # the upgrade
    marker = tmp_path / "RAN"
    her_task(world, key, marker)
    ran = world.worker.run("watch", "--once")
    assert runs(marker) == 0, done.stdout + done.stderr + ran.stderr


def test_a_roster_pushed_while_the_join_migrates_is_not_trusted_unpinned(
    world: World, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    earlier_relay(world)
    eve = mallory(world, monkeypatch)
    key = hashlib.sha256(b"eve").digest()
    (eve.clone / ROSTER_PATH).write_text(her_roster(world, key))
    git("add", ROSTER_PATH, cwd=eve.clone)
    git("commit", "-qm", "a roster of my own", cwd=eve.clone)
    # her push lands between the worker's fetch and its push of revision 1 (a hook of the
    # test's, run once, stands for the timing)
    env = " ".join(f"{k}={shlex.quote(v)}" for k, v in world.git_auth(STRANGER).items())
    hook = NodeState.for_clone(world.worker.clone).root.parent / "hooks" / "pre-push"
    hook.parent.mkdir(exist_ok=True)
    eves = shlex.quote(str(eve.clone))
    hook.write_text(
        '#!/bin/sh\nrm -f "$0"\nunset GIT_DIR GIT_WORK_TREE GIT_INDEX_FILE GIT_PREFIX\n'
        f"env {env} git -C {eves} push -q origin HEAD:main >/dev/null 2>&1\nexit 0\n"
    )
    os.chmod(hook, 0o755)
    own = fingerprint(public_key(world.worker))  # it migrates, vouched for by its person
    done = world.worker.run("join", "--node", WORKER, "--scheduler", "none", "--trust", own)
    assert not hook.exists(), "the hook did not run"
    assert public_key(world.worker)  # the worker holds its key, listed in her roster
    marker = tmp_path / "RAN"
    her_task(world, key, marker)
    ran = world.worker.run("watch", "--once")
    assert runs(marker) == 0, done.stdout + done.stderr + ran.stderr
