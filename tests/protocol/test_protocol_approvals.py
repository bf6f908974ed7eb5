"""A person's approval of a destructive TASK, on snapshots: who may approve, how, and that
nothing runs before."""

from __future__ import annotations

from protocol_world import ALICE, BOB, CONTROLLER, MASTER, WORKER, World

from relay.protocol import (
    Account,
    DestructiveRule,
    ExecuteTask,
    PostNotice,
    User,
    approvals_wanted,
    decide,
    plan_open_job,
    plan_task,
)
from relay.protocol.snapshot import Reaction

CAROL = User(id=103, login="carol")
ROBOT = User(id=104, login="ci[bot]")


def world_with_people() -> World:
    """The worker obeys alice (the controller's account), bob (its own), carol (a person)
    and a bot; destructive steps need a person's authorisation."""
    nodes = tuple(
        n.model_copy(
            update={
                "accounts": (
                    *n.accounts,
                    Account(id=CAROL.id, login=CAROL.login),
                    Account(id=ROBOT.id, login=ROBOT.login),
                )
            }
        )
        if n.name == WORKER
        else n
        for n in MASTER.nodes
    )
    scope = MASTER.scope.model_copy(update={"destructive": DestructiveRule.AUTHORIZED_BY_HUMAN})
    return World(master=MASTER.model_copy(update={"nodes": nodes, "scope": scope}))


def destructive_task(world: World) -> int:
    plan = plan_open_job(
        world.master, controller=CONTROLLER, worker=WORKER, title="t", objective="o"
    )
    number = world.open_issue(plan)
    tasked = plan_task(
        world.issues[number],
        world.master,
        node=CONTROLLER,
        caller=ALICE.id,
        steps=("rm -rf build",),
        scope="destructive",
        authorized_by_human=True,
    )
    world.run_plan(tasked, CONTROLLER)
    return number


def test_nothing_runs_before_a_person_approves_and_the_thread_says_so_once() -> None:
    world = world_with_people()
    destructive_task(world)
    first = world.pass_of(WORKER)
    assert [a.kind for a in first] == ["ignore", "post-notice"] and world.runs == []
    notice = first[1]
    assert isinstance(notice, PostNotice) and "/relay approve TASK 1" in notice.body
    assert [a.kind for a in world.pass_of(WORKER)] == ["ignore"]  # said once


def test_the_controllers_own_account_a_bot_or_another_task_number_do_not_approve() -> None:
    world = world_with_people()
    number = destructive_task(world)
    world.post(number, ALICE, "/relay approve TASK 1")  # the account that posted it
    world.post(number, ROBOT, "/relay approve TASK 1")
    world.post(number, CAROL, "/relay approve TASK 2")
    world.post(number, User(id=666, login="mallory"), "/relay approve TASK 1")
    assert not any(isinstance(a, ExecuteTask) for a in world.pass_of(WORKER))


def test_a_persons_comment_approves_the_task() -> None:
    world = world_with_people()
    number = destructive_task(world)
    world.post(number, CAROL, "/relay approve TASK 1")
    [run] = [a for a in world.pass_of(WORKER) if isinstance(a, ExecuteTask)]
    assert run.task.steps == ("rm -rf build",)


def test_a_persons_thumbs_up_on_the_task_approves_it_and_is_read_only_then() -> None:
    world = world_with_people()
    number = destructive_task(world)
    task_comment = world.issues[number].comments[-1].id
    snapshot = world.snapshot(WORKER)
    assert approvals_wanted(snapshot, WORKER) == {task_comment}
    assert approvals_wanted(snapshot, CONTROLLER) == frozenset()
    for who, runs in ((BOB, True), (ROBOT, False), (CAROL, True)):
        reacted = snapshot.model_copy(
            update={"reactions": (Reaction(comment_id=task_comment, user=who, content="+1"),)}
        )
        executes = any(isinstance(a, ExecuteTask) for a in decide(reacted, WORKER, world.now))
        assert executes is runs, who
    down = snapshot.model_copy(
        update={"reactions": (Reaction(comment_id=task_comment, user=CAROL, content="-1"),)}
    )
    assert not any(isinstance(a, ExecuteTask) for a in decide(down, WORKER, world.now))


def test_once_the_worker_account_has_posted_a_message_it_no_longer_approves() -> None:
    world = world_with_people()
    number = destructive_task(world)
    world.post(number, CAROL, "/relay approve TASK 1")
    world.pass_of(WORKER)  # runs; BOB posts the claim and the RESULT
    world.pass_of(CONTROLLER)
    tasked = plan_task(
        world.issues[number],
        world.master,
        node=CONTROLLER,
        caller=ALICE.id,
        steps=("rm -rf dist",),
        scope="destructive",
        authorized_by_human=True,
    )
    world.run_plan(tasked, CONTROLLER)
    world.post(number, BOB, "/relay approve TASK 2")
    assert not any(isinstance(a, ExecuteTask) for a in world.pass_of(WORKER))
