"""Signed messages against a real hub: what a collaborator, a forger or a replay can do
to a job now that trust rests on the nodes' keys (and on no timestamp)."""

from __future__ import annotations

import sys
from pathlib import Path

from worlds import CONTROLLER, STRANGER, WORKER, World, data_of

from relay.edges.local import NodeState
from relay.protocol import TaskMsg, parse_master, render_message
from relay.protocol.signatures import parse_keys, public_key_of, sign_body
from relay.protocol.wire import decode_block, encode_block

PY = Path(sys.executable).as_posix()


def writes(marker: Path) -> str:
    return f'"{PY}" -c "open({str(marker)!r}, \'w\')"'


def collaborator(world: World) -> None:
    world.tokens(STRANGER)
    world.api(f"/collaborators/{STRANGER}", "PUT", {})


def test_join_keeps_the_private_key_and_publishes_the_public_one(world: World) -> None:
    for node in (world.controller, world.worker):
        key = NodeState.for_clone(node.clone).signing_key(node.name)
        assert key is not None
        path = NodeState.for_clone(node.clone).signing_key_path(node.name)
        assert path.stat().st_mode & 0o077 == 0
        row = parse_master(world.remote_file("docs/loop/LOOP.md")).node(node.name)
        assert row is not None and parse_keys(row.public_key).current == public_key_of(key)


def test_an_edit_by_a_collaborator_within_the_same_second_is_never_run(
    world: World, job: int, tmp_path: Path
) -> None:
    collaborator(world)
    marker = tmp_path / "RAN"
    task = TaskMsg(issue=job, node=CONTROLLER, task=1, objective="Check.", steps=("python -V",))
    signed = world.signed(world.controller, render_message(task))
    # the collaborator's TASK is well formed and carries the controller's real signature
    evil = render_message(task.model_copy(update={"steps": (writes(marker),)}))
    payload = {**decode_block(evil), "sig": decode_block(signed)["sig"]}
    tampered = evil[: evil.rindex("<!-- relay:")] + encode_block(payload) + "\n"
    for _ in range(10):  # until the edit lands in the second the comment was made
        made = world.api(f"/issues/{job}/comments", "POST", {"body": signed})
        path = f"/issues/comments/{made['id']}"
        edited = world.api(path, "PATCH", {"body": tampered}, login=STRANGER)
        if edited["updated_at"] == edited["created_at"]:
            break
        world.api(path, "DELETE")
    assert edited["updated_at"] == edited["created_at"] and edited["body"] == tampered
    world.api(f"/issues/{job}/labels", "PUT", {"labels": ["awaiting:worker"]})
    out = world.worker.ok("watch", "--once", "--verbose")
    assert "does not verify by mac-studio's key" in out
    assert not marker.exists()
    assert not any("### RESULT" in c["body"] for c in world.comments(job))


def test_a_body_edited_by_a_collaborator_is_refused_not_followed(world: World, job: int) -> None:
    collaborator(world)
    body = world.issue(job)["body"]
    changed = body.replace("Find why.", "Upload the secrets.")
    assert changed != body
    world.api(f"/issues/{job}", "PATCH", {"body": changed}, login=STRANGER)
    done = world.controller.run("task", str(job), "--step", "python -V")
    assert done.returncode != 0 and "does not verify by mac-studio's key" in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1
    assert not world.comments(job)  # nothing was posted on the strength of the edit
    status = data_of(world.controller.ok("status", "--json"))
    assert all(row["issue"] != job or "error" in row for row in status["jobs"])


def test_a_forged_and_a_replayed_task_are_data(world: World, tmp_path: Path) -> None:
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
    from cryptography.hazmat.primitives.serialization import Encoding, NoEncryption, PrivateFormat

    first, second = world.open_job(), world.open_job(title="Another")
    world.controller.call("task", str(first), "--step", "python -V")
    replay = world.comments(first)[-1]["body"].replace(f'"issue":{first}', f'"issue":{second}')
    marker = tmp_path / "RAN"
    other = Ed25519PrivateKey.generate().private_bytes(
        Encoding.Raw, PrivateFormat.Raw, NoEncryption()
    )
    task = TaskMsg(issue=second, node=CONTROLLER, task=1, objective="x", steps=(writes(marker),))
    forged = sign_body(render_message(task), repo=world.repo, private_key=other)
    for body in (replay, forged):  # both posted by the controller's own account
        world.api(f"/issues/{second}/comments", "POST", {"body": body})
    world.api(f"/issues/{second}/labels", "PUT", {"labels": ["awaiting:worker"]})
    out = world.worker.ok("watch", "--once", "--issue", str(second), "--verbose")
    assert out.count("ignored") >= 2 and not marker.exists()


def test_a_rotated_key_keeps_the_past_and_signs_the_future(world: World, job: int) -> None:
    c, w = world.controller, world.worker
    c.call("task", str(job), "--step", "python -V")
    w.call("watch", "--once")
    old = NodeState.for_clone(w.clone).signing_key(WORKER)
    said = w.call("join", "--node", WORKER, "--scheduler", "none", "--rotate-key")
    assert "signing key rotated" in said
    new = NodeState.for_clone(w.clone).signing_key(WORKER)
    assert old is not None and new is not None and new != old
    row = parse_master(world.remote_file("docs/loop/LOOP.md")).node(WORKER)
    assert row is not None
    keys = parse_keys(row.public_key)
    assert keys.current == public_key_of(new) and keys.retired[0][0] == public_key_of(old)
    assert "RESULT 1 is back: done" in c.call("watch", "--once")  # signed by the old key
    c.call("task", str(job), "--step", "python -V")
    w.call("watch", "--once")
    assert "RESULT 2 is back: done" in c.call("watch", "--once")  # signed by the new one


def test_a_stray_marked_issue_keeps_no_watcher_and_is_not_a_job(world: World) -> None:
    collaborator(world)
    job = world.open_job()
    real = world.issue(job)["body"]
    stray = world.api(
        "/issues", "POST", {"title": "Looks like a job", "body": real}, login=STRANGER
    )
    world.api(f"/issues/{job}", "PATCH", {"state": "closed"})
    # the stray copy (signed, but opened by an account that gives no instructions) binds
    # nobody: the worker's pass finds no job, says nothing of it, and tears down
    report = data_of(world.worker.ok("watch", "--once", "--json"))
    assert report["teardown"] is True and report["outcome"] == "idle"
    assert not any(f"#{stray['number']}" in line for line in report["lines"])
