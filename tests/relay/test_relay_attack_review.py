"""The trust issue reviewed as its attacker, against a real hub: a collaborator with push
access who is in no row of the roster (mallory) tries the ways past it that a review found;
each is closed."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from test_relay_approvals import PERSON, people_world
from test_relay_trust import appends, as_login, mallory, post_destructive, public_key, runs
from worlds import STRANGER, WORKER, Node, World, git

from relay.edges.local import NodeState
from relay.protocol import log_path
from relay.protocol.roster import fingerprint


def test_a_same_second_edit_of_a_persons_comment_never_approves(
    blank: World, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """The issue: a `/relay approve TASK n` comment that was *ever* edited does not count.
    GitHub's REST timestamps are whole seconds, so an edit made within the second the
    person posted looks unedited; GraphQL's lastEditedAt (which the hub serves) would say."""
    world = people_world(blank)
    mallory(world, monkeypatch)
    job = world.open_job()
    marker = tmp_path / "WIPED"
    post_destructive(world, job, marker)
    for _ in range(20):  # her script edits each of carol's comments as soon as it appears
        said = world.api(
            f"/issues/{job}/comments", "POST", {"body": "I'll look tomorrow"}, login=PERSON
        )
        path = f"/issues/comments/{said['id']}"
        edited = world.api(path, "PATCH", {"body": "/relay approve TASK 1"}, login=STRANGER)
        if edited["updated_at"] == edited["created_at"]:
            break
        world.api(path, "DELETE")  # the second turned over: try the next comment
    else:
        pytest.skip("never landed an edit within the second")
    world.worker.call("watch", "--once")
    assert runs(marker) == 0, "a comment carol never wrote approved a destructive TASK"


def test_deleted_evidence_and_a_rewritten_history_never_run_a_task_twice(
    world: World, job: int, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Issue bullet "What ran, stays ran": deleting comments or refs makes a task stall
    visibly, never run twice. She deletes the claim, the RESULT and the claim ref before the
    controller's next pass (so it never saw the claim and hands the baton back itself), and
    force-pushes the branch to before the log's commit: a runner that starts with nothing
    (an Actions node, `fetch-depth: 0`) finds no trace and runs the task again."""
    eve = mallory(world, monkeypatch)
    marker = tmp_path / "RAN"
    world.controller.call("task", str(job), "--step", appends(marker))
    world.worker.call("watch", "--once")
    assert runs(marker) == 1
    for comment in world.comments(job):
        if comment["body"].startswith(("### Claim", "### RESULT")):
            world.api(f"/issues/comments/{comment['id']}", "DELETE", login=STRANGER)
    world.api(f"/git/refs/relay/claims/{job}/1", "DELETE", login=STRANGER)
    as_login(world, STRANGER, "fetch", "-q", "origin", cwd=eve.clone)
    logged = git("log", "-1", "--format=%H", "origin/main", "--", log_path(job, 1), cwd=eve.clone)
    assert logged.strip()
    as_login(world, STRANGER, "push", "-qf", "origin", f"{logged.strip()}^:main", cwd=eve.clone)
    world.controller.call("watch", "--once", "--verbose")  # the controller's own account
    assert world.labels(job) == {"awaiting:worker"}
    # the Actions runner: a fresh clone, the node key from its environment, the pin
    fresh = world.clone("runner")
    keys = NodeState.for_clone(fresh).root / "keys"
    keys.mkdir(parents=True, mode=0o700, exist_ok=True)
    key = NodeState.for_clone(world.worker.clone).signing_key_path(WORKER)
    shutil.copy(key, keys / key.name)
    (keys / key.name).chmod(0o600)
    runner = Node(WORKER, fresh, world.worker.token, monkeypatch)
    pin = fingerprint(public_key(world.controller))
    runner.run("watch", "--once", "--node", WORKER, env=runner.env(RELAY_TRUST=pin))
    assert runs(marker) == 1, "the task ran a second time"


def test_an_admin_admits_a_key_not_a_request_a_pusher_swapped_in(
    world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue bullet "Membership by invitation": a new machine is a member once a trusted
    node signs it in. `relay nodes approve NAME` (as the quick start types it) admits
    whatever request file the branch holds under NAME when it runs: she replaces the real
    machine's request with one signed by her own key, naming her account, by a plain push."""
    from datetime import UTC, datetime

    from relay.protocol import Account
    from relay.protocol.roster import (
        ROSTER_PATH,
        JoinRequest,
        parse_chain,
        request_path,
        sign_request,
    )
    from relay.protocol.signatures import public_key_of

    newbie = Node("newbie", world.clone("newbie"), world.worker.token, monkeypatch)
    newbie.ok("join", "--node", "newbie", "--scheduler", "none")
    real = public_key(newbie)
    eve = mallory(world, monkeypatch)
    me = world.api(f"/collaborators/{STRANGER}/permission")["user"]
    key = bytes(range(32))
    forged = JoinRequest(
        name="newbie",
        repository=world.repo,
        accounts=(Account(id=me["id"], login=STRANGER),),
        key=public_key_of(key),
        os="Linux",
        at=datetime.now(UTC),
    )
    as_login(world, STRANGER, "pull", "-q", "--ff-only", cwd=eve.clone)
    (eve.clone / request_path("newbie")).write_text(sign_request(forged, private_key=key))
    git("commit", "-qam", "relay: newbie joins (asks the roster's admins)", cwd=eve.clone)
    as_login(world, STRANGER, "push", "-q", "origin", "HEAD:main", cwd=eve.clone)
    refused = world.controller.run("nodes", "approve", "newbie")  # a name alone: no terminal
    assert refused.returncode != 0 and "--fingerprint" in refused.stderr
    said = newbie.ok("nodes", "key", "--node", "newbie").strip()  # read out on newbie
    assert said == fingerprint(real)
    swapped = world.controller.run("nodes", "approve", "newbie", "--fingerprint", said)
    assert swapped.returncode != 0 and "do not admit it" in swapped.stderr
    admitted = parse_chain(world.remote_file(ROSTER_PATH))[-1].member("newbie")
    assert admitted is None, "the admin admitted her key and her account as newbie"


def test_an_outsiders_needs_human_is_named_and_not_followed(
    world: World, job: int, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """A label change by an account that is neither a node nor an instruction account is
    named in the thread and not followed: her `needs:human` on a job nobody escalated does
    not park it, and the controller's next TASK runs."""
    mallory(world, monkeypatch)
    world.api(f"/issues/{job}/labels", "POST", {"labels": ["needs:human"]}, login=STRANGER)
    for _ in range(2):
        world.controller.call("watch", "--once")
    named = [
        c["body"] for c in world.comments(job) if f"`{STRANGER}` added `needs:human`" in c["body"]
    ]
    assert len(named) == 1
    marker = tmp_path / "RAN"
    world.controller.call("task", str(job), "--step", appends(marker))
    assert "needs:human" not in world.labels(job)
    world.worker.call("watch", "--once")
    assert runs(marker) == 1
    # a person the controller obeys parks it: that stands
    world.controller.call("watch", "--once")
    world.api(f"/issues/{job}/labels", "POST", {"labels": ["needs:human"]})
    done = world.controller.run("task", str(job), "--step", "true")
    assert done.returncode != 0 and "needs:human" in world.labels(job)


def test_a_job_an_outsider_closes_is_opened_again_and_she_is_named(
    world: World, job: int, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """The threat table gives triage "close issues": her closing the job must not stall it
    in silence. The controller opens it again and names her once; the TASK then runs."""
    mallory(world, monkeypatch)
    marker = tmp_path / "RAN"
    world.controller.call("task", str(job), "--step", appends(marker))
    world.controller.call("watch", "--once")  # its watcher has read the job
    world.api(f"/issues/{job}", "PATCH", {"state": "closed"}, login=STRANGER)
    world.controller.call("watch", "--once")
    assert world.issue(job)["state"] == "open"
    world.api(f"/issues/{job}", "PATCH", {"state": "closed"}, login=STRANGER)  # again
    for node in (world.controller, world.worker):
        node.call("watch", "--once")
    said = [c["body"] for c in world.comments(job) if f"`{STRANGER}` closed this job" in c["body"]]
    assert len(said) == 1 and world.issue(job)["state"] == "open"
    assert runs(marker) == 1
    # one of the job's own people closing it decides: it stays closed
    world.api(f"/issues/{job}", "PATCH", {"state": "closed"})
    world.controller.call("watch", "--once")
    assert world.issue(job)["state"] == "closed"


def test_state_files_are_private_after_a_pass(world: World, job: int) -> None:
    """Issue, smaller breaks: state, lock and cache files are 0600 in a 0700 directory."""
    world.controller.call("task", str(job), "--step", "git --version")
    world.worker.call("watch", "--once")
    root = NodeState.for_clone(world.worker.clone).root
    loose = [
        f"{p.relative_to(root)} {p.stat().st_mode & 0o777:o}"
        for p in [root, *root.rglob("*")]
        if not p.is_symlink()
        and p.stat().st_mode & 0o077
        and "worktree" not in p.relative_to(root).parts  # the repository's files, in a 0700 root
    ]
    assert not loose, loose


def test_c1_controls_in_a_title_reach_no_terminal(world: World) -> None:
    """Issue, smaller breaks: every C0/C1 control and bidi character is shown escaped in
    CLI output. An 8-bit CSI (U+009B) is a C1 control."""
    job = world.open_job(title="Build \x9b2J\x9b31mfails \u2066x\u2069 \x1b]0;t\x07")
    world.controller.call("task", str(job), "--step", "git --version")
    world.worker.call("watch", "--once")
    out = world.controller.ok("status") + world.controller.call("result", str(job))
    raw = [hex(ord(ch)) for ch in out if ch in "\x9b\x1b\x07\u2066\u2069"]
    assert not raw, raw


@pytest.mark.parametrize("name", [".", ".."])
def test_the_hub_refuses_dot_names_as_github_does(blank: World, name: str) -> None:
    """Issue, smaller breaks: the hub refuses the names `.` and `..` with 422."""
    import urllib.error

    from relay.commands.demo import OWNER, api

    with pytest.raises(urllib.error.HTTPError) as refused:
        api(f"{blank.hub.url}/user/repos", blank.tokens(OWNER), "POST", {"name": name})
    assert refused.value.code == 422


def test_the_hub_answers_over_deep_json_with_400(blank: World) -> None:
    """Issue, smaller breaks: over-deep JSON is GitHub's 400, not a 500."""
    import urllib.error
    import urllib.request

    from relay.commands.demo import OWNER

    deep = '{"title": "t", "labels": ' + "[" * 5000 + "]" * 5000 + "}"
    url = f"{blank.hub.url}/repos/{blank.repo}/issues"
    headers = {"Authorization": f"token {blank.tokens(OWNER)}"}
    request = urllib.request.Request(url, data=deep.encode(), method="POST", headers=headers)
    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(request, timeout=10)
    assert refused.value.code == 400
