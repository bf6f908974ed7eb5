"""Trust rooted in the nodes, against a real hub: a collaborator with push access who is
in no row of the roster (mallory) tries each break the trust issue lists. Nothing she does
makes a node run anything, nothing is lost, and the node says what it did not follow."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from test_relay_approvals import PERSON, people_world
from worlds import CONTROLLER, OWNER, STRANGER, WORKER, Node, World, data_of, git

from relay.edges.local import NodeState
from relay.protocol import JobBody, TaskMsg, render_body, render_message
from relay.protocol.roster import ROSTER_PATH, fingerprint, parse_chain
from relay.protocol.signatures import public_key_of, sign_body

PY = Path(sys.executable).as_posix()


def appends(marker: Path) -> str:
    """A step that adds a line to ``marker`` each time it runs."""
    return f"\"{PY}\" -c \"open({str(marker)!r}, 'a').write('ran\\n')\""


def mallory(world: World, monkeypatch: pytest.MonkeyPatch) -> Node:
    """A collaborator with push access, with a clone of her own."""
    token = world.tokens(STRANGER)
    world.api(f"/collaborators/{STRANGER}", "PUT", {"permission": "push"})
    clone = world.clone("mallory", STRANGER)
    return Node("evil", clone, token, monkeypatch)


def as_login(world: World, login: str, *args: str, cwd: Path) -> None:
    """git as ``login`` (its token in the environment, nothing written to the clone)."""
    env = {**os.environ, **world.git_auth(login)}
    subprocess.run(["git", *args], cwd=cwd, env=env, check=True, capture_output=True)


def push_edit(world: World, node: Node, path: str, edit: object, message: str) -> None:
    """``node``'s person edits a file of main by hand and pushes it."""
    as_login(world, STRANGER, "pull", "-q", "--ff-only", cwd=node.clone)
    target = node.clone / path
    target.write_text(edit(target.read_text()))  # type: ignore[operator]
    git("commit", "-qam", message, cwd=node.clone)
    as_login(world, STRANGER, "push", "-q", "origin", "HEAD:main", cwd=node.clone)


def add_me(world: World) -> Callable[[str], str]:
    """Her hand edit of LOOP.md: her account added to the worker's row."""
    me = world.api(f"/collaborators/{STRANGER}/permission")["user"]

    def edit(text: str) -> str:
        row = next(line for line in text.splitlines() if line.startswith(f"| {WORKER} |"))
        cells = row.split("|")
        cells[3] = f" octo (1), {STRANGER} ({me['id']}) "
        return text.replace(row, "|".join(cells))

    return edit


def point_elsewhere(world: World, eve: Node) -> None:
    """Her push: LOOP.md's API base URL pointed at a server that is not the hub."""
    push_edit(
        world,
        eve,
        "docs/loop/LOOP.md",
        lambda text: text.replace(world.hub.url, "http://127.0.0.1:9"),
        "point relay elsewhere",
    )


def runs(marker: Path) -> int:
    return len(marker.read_text().splitlines()) if marker.exists() else 0


def test_init_gives_the_first_node_a_key_and_a_signed_roster(world: World) -> None:
    chain = parse_chain(world.remote_file(ROSTER_PATH))
    key = NodeState.for_clone(world.controller.clone).signing_key(CONTROLLER)
    assert key is not None
    first = chain[0].member(CONTROLLER)
    assert first is not None and first.admin and first.current_key == public_key_of(key)
    listed = data_of(world.worker.ok("nodes", "--json"))
    assert listed["revision"] == len(chain) == 2  # revision 2 admitted the worker
    shown = {m["name"]: m["fingerprint"] for m in listed["members"]}
    assert shown[CONTROLLER] == fingerprint(public_key(world.controller))


def public_key(node: Node) -> str:
    key = NodeState.for_clone(node.clone).signing_key(node.name)
    assert key is not None
    return public_key_of(key)


def test_a_pushers_own_node_and_hand_edited_table_run_nothing(
    world: World, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    eve = mallory(world, monkeypatch)
    said = eve.ok("join", "--node", "evil", "--scheduler", "none")
    assert "asked to join" in said  # a request, not a membership
    push_edit(world, eve, "docs/loop/LOOP.md", add_me(world), "add me to the worker")
    # her own job: a body and a TASK signed by her node's key, the baton at the worker
    key = NodeState.for_clone(eve.clone).signing_key("evil")
    assert key is not None
    marker = tmp_path / "RAN"
    job = JobBody(controller="evil", worker=WORKER, objective="Mine.", tasks=1, revision=1)
    made = world.api("/issues", "POST", {"title": "t", "body": "x"}, login=STRANGER)
    number = made["number"]
    body = sign_body(render_body(job), repo=world.repo, private_key=key, issue=number)
    world.api(f"/issues/{number}", "PATCH", {"body": body}, login=STRANGER)
    task = TaskMsg(issue=number, node="evil", task=1, objective="x", steps=(appends(marker),))
    signed = sign_body(render_message(task), repo=world.repo, private_key=key)
    world.api(f"/issues/{number}/comments", "POST", {"body": signed}, login=STRANGER)
    world.api(f"/issues/{number}/labels", "PUT", {"labels": ["awaiting:worker"]})
    world.worker.ok("watch", "--once")
    assert runs(marker) == 0
    assert not any("### RESULT" in c["body"] for c in world.comments(number))
    doctor = data_of(world.worker.run("doctor", "--json").stdout)
    roster = next(c for c in doctor["checks"] if c["name"] == "roster")
    assert roster["status"] == "warn" and "not followed" in roster["detail"]
    assert "instruction accounts differ" in roster["detail"]


def test_joining_as_a_node_whose_key_the_clone_lacks_is_refused(
    world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    eve = mallory(world, monkeypatch)
    before = world.remote_head()
    done = eve.run("join", "--node", CONTROLLER, "--scheduler", "none")
    assert done.returncode == 2
    line = done.stderr.strip()
    assert len(line.splitlines()) == 1 and "key this clone does not hold" in line
    assert world.remote_head() == before
    chain = parse_chain(world.remote_file(ROSTER_PATH))
    assert chain[-1].member(CONTROLLER).current_key == public_key(world.controller)  # type: ignore[union-attr]


def test_an_api_url_pushed_into_loop_md_is_shown_never_followed(
    world: World, job: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    eve = mallory(world, monkeypatch)
    point_elsewhere(world, eve)
    world.controller.call("task", str(job), "--step", "git --version")
    report = data_of(world.worker.call("watch", "--once", "--json"))
    assert [t["status"] for t in report["tasks"]] == ["done"]  # it talked to its own hub
    status = data_of(world.worker.ok("status", "--json"))
    assert any("http://127.0.0.1:9" in n for n in status["roster"]["not_followed"])
    told = [c["body"] for c in world.comments(job) if "does not follow" in c["body"]]
    assert len(told) >= 1 and all("127.0.0.1:9" in t for t in told)
    world.worker.call("watch", "--once")
    again = [c["body"] for c in world.comments(job) if "does not follow" in c["body"]]
    assert len(again) == len(told)  # said once


def post_destructive(world: World, job: int, marker: Path) -> dict[str, object]:
    world.controller.call(
        "task", str(job), "--step", appends(marker), "--scope", "destructive",
        "--authorized-by-human",
    )  # fmt: skip
    return next(c for c in reversed(world.comments(job)) if c["body"].startswith("### TASK"))


def test_an_edited_comment_does_not_approve(
    blank: World, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    world = people_world(blank)
    mallory(world, monkeypatch)
    job = world.open_job()
    marker = tmp_path / "WIPED"
    post_destructive(world, job, marker)
    later = world.api(
        f"/issues/{job}/comments", "POST", {"body": "I'll look tomorrow"}, login=PERSON
    )
    time.sleep(1.1)  # she edits it later (GitHub's timestamps are whole seconds)
    path = f"/issues/comments/{later['id']}"
    world.api(path, "PATCH", {"body": "/relay approve TASK 1"}, login=STRANGER)
    world.worker.call("watch", "--once")
    assert runs(marker) == 0
    world.api(f"/issues/{job}/comments", "POST", {"body": "/relay approve TASK 1"}, login=PERSON)
    out = world.worker.call("watch", "--once")
    assert "RESULT 1 posted" in out and runs(marker) == 1
    claim = next(c for c in world.comments(job) if c["body"].startswith("### Claim"))
    assert f"Approved by @{PERSON}" in claim["body"]


def test_a_thumbs_up_does_not_move_with_its_comment(
    blank: World, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    world = people_world(blank)
    mallory(world, monkeypatch)
    job = world.open_job()
    first_marker, second_marker = tmp_path / "ONE", tmp_path / "TWO"
    first = post_destructive(world, job, first_marker)
    world.api(f"/issues/comments/{first['id']}/reactions", "POST", {"content": "+1"}, login=PERSON)
    world.worker.call("watch", "--once")
    assert runs(first_marker) == 1
    world.controller.call("watch", "--once")
    # a second on, as between any two real posts: REST's whole-second times see an edit
    # made within its comment's second as none, and a whole task cycle within one second
    # is read as the next TASK's claim
    time.sleep(1.1)
    second = post_destructive(world, job, second_marker)
    # the older, approved comment becomes TASK 2's exact, validly signed text
    world.api(f"/issues/comments/{first['id']}", "PATCH", {"body": second["body"]}, login=STRANGER)
    world.worker.call("watch", "--once")
    assert runs(second_marker) == 0
    bodies = [str(c["body"]) for c in world.comments(job)]
    assert not any(b.startswith("### RESULT 2") for b in bodies), [b[:300] for b in bodies]


def test_an_old_body_put_back_rewinds_nothing(
    world: World, job: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    mallory(world, monkeypatch)
    first = world.issue(job)["body"]
    world.controller.call("task", str(job), "--step", "git --version", "--verification")
    world.worker.call("watch", "--once")
    world.controller.call("watch", "--once")
    world.controller.call("hypothesis", str(job), "it is the cache")
    for _ in range(3):
        if "needs:human" in world.labels(job):
            break
        world.controller.call("strike", str(job))
    world.api(f"/issues/{job}", "PATCH", {"body": first}, login=STRANGER)  # revision 1 again
    out = world.controller.call("watch", "--once", "--verbose")
    assert "older than revision" in out
    said = [c["body"] for c in world.comments(job) if "does not act on this job" in c["body"]]
    assert said and "relay job repair" in said[0]
    assert f"GitHub names `{STRANGER}` as the last editor" in said[0]
    done = world.controller.invoke("task", str(job), "--step", "true")
    assert done.returncode != 0 and "older than revision" in done.stderr
    repaired = world.controller.call("job", "repair", str(job))
    assert "wrote the body again" in repaired
    out = world.controller.call("watch", "--once", "--verbose")
    assert "older than revision" not in out


def test_deleted_evidence_never_runs_a_task_twice(
    world: World, job: int, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    mallory(world, monkeypatch)
    marker = tmp_path / "RAN"
    world.controller.call("task", str(job), "--step", appends(marker))
    world.worker.call("watch", "--once")
    world.controller.call("watch", "--once")
    assert runs(marker) == 1
    for comment in world.comments(job):
        if comment["body"].startswith(("### Claim", "### RESULT")):
            world.api(f"/issues/comments/{comment['id']}", "DELETE", login=STRANGER)
    world.api(f"/git/refs/relay/claims/{job}/1", "DELETE", login=STRANGER)
    world.api(f"/issues/{job}/labels", "PUT", {"labels": ["awaiting:controller"]}, login=STRANGER)
    out = world.controller.call("watch", "--once", "--verbose")
    assert "claim is gone" in out and world.labels(job) == {"awaiting:controller"}
    # a worker with no local records (an Actions runner starts with nothing)
    world.api(f"/issues/{job}/labels", "PUT", {"labels": ["awaiting:worker"]}, login=STRANGER)
    state = NodeState.for_clone(world.worker.clone)
    for name in ("claims.json", "seen.json", "attempts.json", "notices.json", "threads.json"):
        (state.root / name).unlink(missing_ok=True)
    out = world.worker.call("watch", "--once", "--verbose")
    assert runs(marker) == 1, out  # her baton is not followed, and the thread says so
    assert any(f"`{STRANGER}`" in c["body"] for c in world.comments(job))
    # a baton a node's own account puts back: the repository's history says it ran
    world.api(f"/issues/{job}/labels", "PUT", {"labels": ["awaiting:controller"]})
    world.api(f"/issues/{job}/labels", "PUT", {"labels": ["awaiting:worker"]})
    out = world.worker.call("watch", "--once", "--verbose")
    assert runs(marker) == 1, out
    result = next(c for c in world.comments(job) if c["body"].startswith("### RESULT 1"))
    assert "already ran" in result["body"]


def earlier_relay(world: World) -> str:
    """The repository as an earlier relay left it: a history that never held a roster, and
    neither node keeps an accepted revision; its root commit."""
    c = world.controller
    as_login(world, OWNER, "pull", "-q", "--ff-only", cwd=c.clone)
    git("rm", "-q", ROSTER_PATH, cwd=c.clone)
    tree = git("write-tree", cwd=c.clone).strip()
    root = git("commit-tree", tree, "-m", "an earlier relay's spine", cwd=c.clone).strip()
    git("reset", "-q", "--hard", root, cwd=c.clone)
    as_login(world, OWNER, "push", "-q", "-f", "origin", "HEAD:main", cwd=c.clone)
    for ref in git("for-each-ref", "--format=%(refname)", cwd=world.bare).split():
        if ref != "refs/heads/main":
            git("update-ref", "-d", ref, cwd=world.bare)
    for node in (c, world.worker):
        as_login(world, OWNER, "fetch", "-q", "--prune", "origin", cwd=node.clone)
        git("reset", "-q", "--hard", "origin/main", cwd=node.clone)
        listed = git("worktree", "list", "--porcelain", cwd=node.clone).splitlines()
        for line in listed[1:]:
            if line.startswith("worktree "):
                git("worktree", "remove", "--force", line[len("worktree ") :], cwd=node.clone)
        held = git("for-each-ref", "--format=%(refname)", cwd=node.clone).split()
        for ref in held:
            if not ref.startswith(("refs/heads/main", "refs/remotes/origin/main")):
                git("update-ref", "-d", ref, cwd=node.clone)
        (NodeState.for_clone(node.clone).roster_path).unlink()
    return str(root)


def test_a_legacy_spine_is_migrated_to_a_signed_roster_by_relay_join(
    world: World, job: int
) -> None:
    """A clone set up by an earlier relay has no roster: its commands say to run `relay
    join` and migrate nothing (the node table is anyone's with push access); `relay join
    --trust` with the node's own key's fingerprint (a person checked the table and vouches
    for it) makes the table revision 1, signed by its node, said in one line, and the other
    node, which joined before, trusts that only pinned (`relay join --trust FINGERPRINT`)."""
    c = world.controller
    earlier_relay(world)  # a history that never held a roster (a deleted one is no
    # earlier relay's spine: see test_relay_trust_migrate_bypass)
    done = c.run("status")
    assert done.returncode == 0 and "has not accepted a roster yet" in done.stdout
    pushed = git("ls-tree", "-r", "--name-only", "main", cwd=world.bare).split()
    assert ROSTER_PATH not in pushed  # nothing migrated
    done = c.run("join", "--node", CONTROLLER, "--scheduler", "none")  # no one vouched
    own = fingerprint(public_key(c))
    assert done.returncode != 0 and "check LOOP.md's node table" in done.stderr
    assert own in done.stderr  # this node's own key's, for its person to vouch with
    done = c.run("join", "--node", CONTROLLER, "--scheduler", "none", "--trust", own)
    assert done.returncode == 0, done.stderr
    assert "migrated the node table to a signed roster" in done.stdout
    chain = parse_chain(world.remote_file(ROSTER_PATH))
    assert len(chain) == 1 and chain[0].signed_by == CONTROLLER
    done = world.worker.run("status")
    assert "trusted the roster" not in done.stderr  # only at join, or pinned
    assert json.loads(world.worker.run("nodes", "--json").stdout)["data"]["revision"] is None
    done = world.worker.run("join", "--node", WORKER, "--scheduler", "none")
    assert done.returncode != 0 and "relay join --trust" in done.stderr  # it joined before
    pin = fingerprint(public_key(world.controller))
    done = world.worker.run("join", "--node", WORKER, "--scheduler", "none", "--trust", pin)
    assert done.returncode == 0, done.stderr
    assert json.loads(world.worker.ok("nodes", "--json"))["data"]["revision"] == 1


def test_labels_moved_by_an_outsider_are_named_and_not_followed(
    world: World, job: int, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    mallory(world, monkeypatch)
    marker = tmp_path / "RAN"
    world.controller.call("task", str(job), "--step", appends(marker))
    # `working` on a TASK nobody claimed would have it reported half-done, unrun
    world.api(f"/issues/{job}/labels", "PUT", {"labels": ["working"]}, login=STRANGER)
    world.worker.call("watch", "--once")
    assert runs(marker) == 1
    assert not any(c["body"].startswith("### Half-done") for c in world.comments(job))
    # the claim took her `working` off and put it back: the issue's events, which nobody
    # can delete, hold the worker's own claim of the TASK
    her = world.api(f"/collaborators/{STRANGER}/permission", login=STRANGER)["user"]["id"]
    working = [
        e["actor"]["id"]
        for e in world.api(f"/issues/{job}/events")
        if e["event"] == "labeled" and e["label"]["name"] == "working"
    ]
    assert len(working) == 2 and working[0] == her and working[1] != her, working
    assert any(f"`{STRANGER}`" in c["body"] for c in world.comments(job))
    world.controller.call("watch", "--once")
    # `resolved` with no closure of relay's would stall the job in silence
    world.api(f"/issues/{job}/labels", "POST", {"labels": ["resolved"]}, login=STRANGER)
    for _ in range(2):
        world.controller.call("watch", "--once")
    said = [c["body"] for c in world.comments(job) if "relay's closure is not" in c["body"]]
    assert len(said) == 1  # said once
    time.sleep(1.1)  # (a whole task cycle within one second reads as the next's claim)
    world.controller.call("task", str(job), "--step", appends(marker))
    out = world.worker.call("watch", "--once", "--verbose")
    assert runs(marker) == 2, out + "\n".join(world.heads(job))


def test_only_the_controllers_person_unparks_a_job(
    world: World, job: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    mallory(world, monkeypatch)
    c = world.controller
    c.call("hypothesis", str(job), "it is the cache")
    for _ in range(3):
        c.call("strike", str(job))
    assert "needs:human" in world.labels(job)
    world.api(f"/issues/{job}/labels/needs:human", "DELETE", login=STRANGER)
    done = c.invoke("task", str(job), "--step", "true")
    assert done.returncode == 2 and "needs:human" in done.stderr
    c.call("watch", "--once")
    said = [b["body"] for b in world.comments(job) if "keeps it parked" in b["body"]]
    assert len(said) == 1 and f"`{STRANGER}`" in said[0]
    # the controller's own person decides: the label goes back on, and off again by octo
    world.api(f"/issues/{job}/labels", "POST", {"labels": ["needs:human"]})
    world.api(f"/issues/{job}/labels/needs:human", "DELETE")
    c.call("task", str(job), "--step", "true")


def test_a_body_changed_by_a_collaborator_is_said_once_and_repaired(
    world: World, job: int, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    mallory(world, monkeypatch)
    body = world.issue(job)["body"]
    world.api(
        f"/issues/{job}", "PATCH", {"body": body.replace("Find why.", "Leak.")}, login=STRANGER
    )
    for _ in range(2):
        world.controller.call("watch", "--once")
    said = [c["body"] for c in world.comments(job) if "changed the issue body" in c["body"]]
    assert len(said) == 1 and f"relay job repair {job}" in said[0]
    assert f"GitHub names `{STRANGER}` as the last editor" in said[0]
    assert "wrote the body again" in world.controller.call("job", "repair", str(job))
    assert "Find why." in world.issue(job)["body"]
    marker = tmp_path / "RAN"
    world.controller.call("task", str(job), "--step", appends(marker))
    world.worker.call("watch", "--once")
    assert runs(marker) == 1


def test_a_deleted_task_is_posted_again_by_repair_and_runs_once(
    world: World, job: int, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    mallory(world, monkeypatch)
    marker = tmp_path / "RAN"
    world.controller.call("task", str(job), "--step", appends(marker))
    task = next(c for c in world.comments(job) if c["body"].startswith("### TASK 1"))
    world.api(f"/issues/comments/{task['id']}", "DELETE", login=STRANGER)
    world.worker.call("watch", "--once")
    assert runs(marker) == 0
    repaired = world.controller.call("job", "repair", str(job))
    assert "TASK 1 was gone from the thread: posted again as TASK 2" in repaired
    world.worker.call("watch", "--once")
    assert runs(marker) == 1
    assert any(c["body"].startswith("### RESULT 2") for c in world.comments(job))
    again = world.controller.call("job", "repair", str(job))  # nothing is gone now
    assert "posted again" not in again
    world.worker.call("watch", "--once")
    assert runs(marker) == 1


def test_an_edited_task_is_answered_naming_who_edited_it(
    world: World, job: int, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    mallory(world, monkeypatch)
    marker = tmp_path / "RAN"
    world.controller.call("task", str(job), "--step", appends(marker))
    task = next(c for c in world.comments(job) if c["body"].startswith("### TASK 1"))
    edit = {"body": task["body"].replace("ran", "RAN")}
    world.api(f"/issues/comments/{task['id']}", "PATCH", edit, login=STRANGER)
    world.worker.call("watch", "--once")
    assert runs(marker) == 0
    result = next(c for c in world.comments(job) if c["body"].startswith("### RESULT 1"))
    assert "changed after it was posted" in result["body"], result["body"]
    assert f"GitHub names `{STRANGER}` as its last editor" in result["body"], result["body"]
    world.controller.call("watch", "--once", "--verbose")  # the signed RESULT still reads


def test_a_claimed_task_deleted_is_never_posted_again_by_repair(
    world: World, job: int, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    mallory(world, monkeypatch)
    marker = tmp_path / "RAN"
    world.controller.call("task", str(job), "--step", appends(marker))
    world.worker.call("watch", "--once")
    world.controller.call("watch", "--once")  # the controller sees the claim and the RESULT
    for comment in world.comments(job):
        if comment["body"].startswith(("### TASK", "### Claim", "### RESULT")):
            world.api(f"/issues/comments/{comment['id']}", "DELETE", login=STRANGER)
    repaired = world.controller.call("job", "repair", str(job))
    assert "posted again" not in repaired
    world.worker.call("watch", "--once")
    assert runs(marker) == 1


def test_a_fresh_clone_talks_to_the_signed_rosters_api_never_loop_mds(
    world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A runner starts with nothing saved: the roster it pins names the API; the URL a
    pusher wrote into LOOP.md is shown, never sent a token."""
    eve = mallory(world, monkeypatch)
    point_elsewhere(world, eve)
    fresh = world.clone("runner")
    pin = fingerprint(public_key(world.controller))
    runner = Node(WORKER, fresh, world.worker.token, monkeypatch)
    done = runner.run("status", "--json", env=runner.env(RELAY_TRUST=pin))
    assert done.returncode == 0, done.stdout  # it reached the hub, not 127.0.0.1:9
    notes = data_of(done.stdout)["roster"]["not_followed"]
    assert any("127.0.0.1:9" in n for n in notes)


def test_a_waiting_join_request_is_never_swapped_and_sign_lists_before_it_signs(
    world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    newbie = Node("newbie", world.clone("newbie"), world.worker.token, monkeypatch)
    newbie.ok("join", "--node", "newbie", "--scheduler", "none")
    eve = mallory(world, monkeypatch)
    before = world.remote_head()
    done = eve.run("join", "--node", "newbie", "--scheduler", "none")
    assert done.returncode == 2 and "is waiting already" in done.stderr
    assert world.remote_head() == before
    # her hand edit of the table is listed, not signed, until the admin says --yes
    push_edit(world, eve, "docs/loop/LOOP.md", add_me(world), "add me to the worker")
    head = world.remote_head()
    listed = world.controller.run("nodes", "sign")
    assert listed.returncode == 1 and "instruction accounts differ" in listed.stdout
    assert world.remote_head() == head


def test_sign_names_each_change_and_signs_only_the_change_set_it_listed(
    world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`relay nodes sign` names the accounts a hand edit adds (login and id) and a digest of
    the change set; `--yes DIGEST` refuses once LOOP.md has moved on since the listing (her
    second push, between the admin's reading and signing), and signs what it listed."""
    eve = mallory(world, monkeypatch)
    me = world.api(f"/collaborators/{STRANGER}/permission")["user"]
    push_edit(world, eve, "docs/loop/LOOP.md", add_me(world), "add a colleague to the worker")
    listed = world.controller.run("nodes", "sign", "--json")
    assert listed.returncode == 1, listed.stderr
    first = data_of(listed.stdout)
    said = " ".join(first["differences"])
    assert f"{WORKER}'s instruction accounts differ" in said
    assert f"{STRANGER} ({me['id']})" in said.partition("; removes")[0]  # among those added
    text = world.controller.run("nodes", "sign").stdout
    assert f"relay nodes sign --yes {first['digest']}" in text and STRANGER in text
    # her second push: octo out of the worker's row, after the admin read the listing
    push_edit(
        world,
        eve,
        "docs/loop/LOOP.md",
        lambda loop: loop.replace(f" octo (1), {STRANGER} (", f" {STRANGER} ("),
        "tidy the worker's row",
    )
    head = world.remote_head()
    refused = world.controller.run("nodes", "sign", "--yes", first["digest"])
    assert refused.returncode != 0 and "changed since change set" in refused.stderr
    assert world.remote_head() == head  # nothing signed
    again = data_of(world.controller.run("nodes", "sign", "--json").stdout)
    assert again["digest"] != first["digest"]
    assert "octo (1)" not in " ".join(again["differences"])
    signed = world.controller.ok("nodes", "sign", "--yes", again["digest"])
    assert f"change set {again['digest']}" in signed
    member = parse_chain(world.remote_file(ROSTER_PATH))[-1].member(WORKER)
    assert member is not None and [a.login for a in member.accounts] == [STRANGER]
    assert world.controller.ok("nodes", "sign", "--yes").startswith("the node table and scope")


def test_a_roster_planted_before_an_upgrade_is_not_trusted(
    world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An earlier relay ignored roster.json, so a pusher could plant one naming herself
    admin and every node with her key: a clone that joined before does not take it."""
    from datetime import UTC, datetime

    from relay.protocol import Account
    from relay.protocol.roster import Member, Revision, render_chain, sign_revision

    eve = mallory(world, monkeypatch)
    key = hashlib.sha256(b"eve").digest()
    her = public_key_of(key)
    me = world.api(f"/collaborators/{STRANGER}/permission")["user"]
    mine = Account(id=me["id"], login=STRANGER)
    forged = Revision(
        revision=1,
        repository=world.repo,
        members=(
            Member(name="evil", accounts=(mine,), keys=her, admin=True),
            Member(name=CONTROLLER, accounts=(mine,), keys=her),
            Member(name=WORKER, accounts=(mine,), keys=her),
        ),
        signed_by="evil",
        at=datetime.now(UTC),
    )
    text = render_chain((sign_revision(forged, private_key=key),))
    push_edit(world, eve, ROSTER_PATH, lambda _old: text, "a roster of my own")
    (NodeState.for_clone(world.worker.clone).roster_path).unlink()  # as after an upgrade
    done = world.worker.run("status", "--json")
    notes = data_of(done.stdout)["roster"]["not_followed"]
    assert any("has not accepted a roster yet" in n for n in notes), notes
    assert data_of(done.stdout)["roster"]["revision"] is None
