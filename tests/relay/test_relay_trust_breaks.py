"""Breaks of the trust rooted in the nodes, against a real hub: a collaborator with push
access who is in no row of the roster (mallory) tries what the README's threat table says
she cannot do. Each test asserts what relay promises; those that do not hold yet are
strict xfails."""

from __future__ import annotations

import hashlib
from datetime import UTC, datetime
from pathlib import Path

import pytest
from test_relay_trust import appends, as_login, mallory, push_edit, runs
from worlds import CONTROLLER, OWNER, STRANGER, WORKER, World, git

from relay.edges.local import NodeState
from relay.protocol import Account, JobBody, TaskMsg, log_path, render_body, render_message
from relay.protocol.roster import ROSTER_PATH, Member, Revision, render_chain, sign_revision
from relay.protocol.signatures import public_key_of, sign_body


def her_roster(world: World, key: bytes) -> str:
    """A roster of mallory's own: she is its admin, the controller signs with her key, and
    both nodes obey her account; the worker is listed with its own (public) key."""
    held = NodeState.for_clone(world.worker.clone).signing_key(WORKER)
    assert held is not None
    me = world.api(f"/collaborators/{STRANGER}/permission")["user"]
    mine = Account(id=me["id"], login=STRANGER)
    forged = Revision(
        revision=1,
        repository=world.repo,
        members=(
            Member(name="evil", accounts=(mine,), keys=public_key_of(key), admin=True),
            Member(name=CONTROLLER, accounts=(mine,), keys=public_key_of(key)),
            Member(name=WORKER, accounts=(mine,), keys=public_key_of(held)),
        ),
        signed_by="evil",
        at=datetime.now(UTC),
    )
    return render_chain((sign_revision(forged, private_key=key),))


def her_task(world: World, key: bytes, marker: Path) -> None:
    """Her job, her TASK (which appends to ``marker``), her baton: all signed by ``key``,
    the key her roster or table gives the controller."""
    made = world.api("/issues", "POST", {"title": "t", "body": "x"}, login=STRANGER)
    number = made["number"]
    job = JobBody(controller=CONTROLLER, worker=WORKER, objective="Mine.", tasks=1, revision=1)
    body = sign_body(render_body(job), repo=world.repo, private_key=key, issue=number)
    world.api(f"/issues/{number}", "PATCH", {"body": body}, login=STRANGER)
    task = TaskMsg(issue=number, node=CONTROLLER, task=1, objective="x", steps=(appends(marker),))
    signed = sign_body(render_message(task), repo=world.repo, private_key=key)
    world.api(f"/issues/{number}/comments", "POST", {"body": signed}, login=STRANGER)
    world.api(f"/issues/{number}/labels", "PUT", {"labels": ["awaiting:worker"]}, login=STRANGER)


def test_a_planted_roster_listing_the_workers_public_key_is_not_trusted(
    world: World, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """A clone with no accepted roster (after an upgrade, or after the unreadable file was
    deleted as relay's own hint says) takes the branch's roster only if it lists this node
    with the key the clone holds. A public key is public: she copies it into her roster."""
    eve = mallory(world, monkeypatch)
    key = hashlib.sha256(b"eve").digest()
    text = her_roster(world, key)
    push_edit(world, eve, ROSTER_PATH, lambda _old: text, "a roster of my own")
    (NodeState.for_clone(world.worker.clone).roster_path).unlink()  # as after an upgrade
    marker = tmp_path / "RAN"
    her_task(world, key, marker)
    done = world.worker.run("watch", "--once")
    assert runs(marker) == 0, done.stderr


def test_repair_never_posts_again_a_task_that_ran_before_the_controller_looked(
    world: World, job: int, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """The worker runs TASK 1 and answers; before the controller's next pass she deletes
    the TASK, the claim, the RESULT and the claim ref. The controller never saw the claim,
    so `relay job repair` posts the TASK again under a new number, and the worker (whose
    "already ran" memory is keyed by the task number) runs the same steps a second time.
    The log of TASK 1 is still in the repository's history, and the issue's events still
    say a node set `working`."""
    mallory(world, monkeypatch)
    marker = tmp_path / "RAN"
    world.controller.call("task", str(job), "--step", appends(marker))
    world.worker.call("watch", "--once")
    assert runs(marker) == 1
    for comment in world.comments(job):
        if comment["body"].startswith(("### TASK", "### Claim", "### RESULT")):
            world.api(f"/issues/comments/{comment['id']}", "DELETE", login=STRANGER)
    world.api(f"/git/refs/relay/claims/{job}/1", "DELETE", login=STRANGER)
    repaired = world.controller.call("job", "repair", str(job))
    world.worker.call("watch", "--once")
    assert runs(marker) == 1, repaired


def test_a_log_planted_on_a_branch_of_hers_does_not_spend_a_task_that_never_ran(
    world: World, job: int, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """She pushes, on a branch of her own, the log file of the TASK about to be posted (she
    could push those of every number of every job in one commit). The worker's memory that
    a task ran is a log its own key sealed, so hers says nothing and the TASK runs."""
    eve = mallory(world, monkeypatch)
    planted = eve.clone / log_path(job, 1)
    planted.parent.mkdir(parents=True, exist_ok=True)
    planted.write_text("nothing ran\n")
    git("checkout", "-qb", "notes", cwd=eve.clone)
    git("add", "-A", cwd=eve.clone)
    git("commit", "-qm", "notes", cwd=eve.clone)
    as_login(world, STRANGER, "push", "-q", "origin", "notes", cwd=eve.clone)
    marker = tmp_path / "RAN"
    world.controller.call("task", str(job), "--step", appends(marker))
    out = world.worker.call("watch", "--once")
    assert runs(marker) == 1, out


def test_a_data_branch_she_names_in_loop_md_is_not_where_the_controller_publishes(
    world: World, job: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """LOOP.md names relay's data branch, but anyone with push access edits LOOP.md: the
    handover `relay resolve` writes goes to the branch of the roster the nodes signed
    (here none: the default branch), and the clone's pulls are not pointed at hers."""
    eve = mallory(world, monkeypatch)

    def hers(text: str) -> str:
        head, sep, rest = text.partition("- Repository:")
        assert sep, text
        return f"{head}- Data branch: `hers`\n{sep}{rest}"

    push_edit(world, eve, "docs/loop/LOOP.md", hers, "relay's own branch")
    c = world.controller
    as_login(world, OWNER, "fetch", "-q", cwd=c.clone)  # as its next pass does
    c.call("resolve", str(job), "--summary", "The cache was stale.", "--force", "t")
    assert "The cache was stale." in world.remote_file("docs/loop/handover.md")
    branches = git("branch", "--list", "hers", cwd=world.bare)
    assert not branches.strip(), branches
    config = (c.clone / ".git" / "config").read_text()
    assert "dataBranch" not in config, config
