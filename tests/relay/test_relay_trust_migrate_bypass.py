"""A clone that joined before and trusts no roster now is told to pin the admin's key. A
collaborator with push access who deletes the roster from the branch and edits the node
table instead has that pinned join migrate her table: the pin is never checked against a
table this node signs itself."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest
from test_relay_trust import add_me, appends, as_login, mallory, public_key, runs
from worlds import CONTROLLER, STRANGER, WORKER, World, git

from relay.edges.local import NodeState
from relay.protocol import JobBody, TaskMsg, render_body, render_message
from relay.protocol.master_text import set_public_key
from relay.protocol.roster import ROSTER_PATH, fingerprint
from relay.protocol.signatures import public_key_of, sign_body

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
    made = world.api("/issues", "POST", {"title": "t", "body": "x"}, login=STRANGER)
    number = made["number"]
    job = JobBody(controller=CONTROLLER, worker=WORKER, objective="Mine.", tasks=1, revision=1)
    body = sign_body(render_body(job), repo=world.repo, private_key=key, issue=number)
    world.api(f"/issues/{number}", "PATCH", {"body": body}, login=STRANGER)
    marker = tmp_path / "RAN"
    task = TaskMsg(issue=number, node=CONTROLLER, task=1, objective="x", steps=(appends(marker),))
    signed = sign_body(render_message(task), repo=world.repo, private_key=key)
    world.api(f"/issues/{number}/comments", "POST", {"body": signed}, login=STRANGER)
    world.api(f"/issues/{number}/labels", "PUT", {"labels": ["awaiting:worker"]}, login=STRANGER)
    done = world.worker.run("watch", "--once")
    assert runs(marker) == 0, done.stdout + done.stderr
