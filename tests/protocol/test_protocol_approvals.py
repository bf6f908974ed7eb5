"""A person's approval of a destructive TASK, on snapshots: who may approve, how, and that
nothing runs before."""

from __future__ import annotations

from datetime import timedelta

import pytest
from protocol_world import ALICE, BOB, CONTROLLER, MASTER, WORKER, World

from relay.errors import LocalUsageError
from relay.protocol import (
    Account,
    DeclineTask,
    DestructiveRule,
    ExecuteTask,
    Plan,
    PostNotice,
    TaskMsg,
    User,
    approval_jobs,
    approvals_wanted,
    decide,
    plan_open_job,
    plan_task,
    render_message,
)
from relay.protocol.labels import Label
from relay.protocol.snapshot import Reaction
from relay.protocol.work import RunLimits

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
    assert approval_jobs(snapshot, WORKER) == {number}  # its edits are asked of GraphQL
    assert approval_jobs(snapshot, CONTROLLER) == frozenset()
    for who, runs in ((BOB, True), (ROBOT, False), (CAROL, True)):
        reacted = snapshot.model_copy(
            update={
                "reactions": (
                    Reaction(comment_id=task_comment, user=who, content="+1", created_at=world.now),
                )
            }
        )
        executes = any(isinstance(a, ExecuteTask) for a in decide(reacted, WORKER, world.now))
        assert executes is runs, who
    before = Reaction(comment_id=task_comment, user=CAROL, content="+1",
                      created_at=world.now - timedelta(hours=1))  # fmt: skip
    early = snapshot.model_copy(update={"reactions": (before,)})
    assert not any(isinstance(a, ExecuteTask) for a in decide(early, WORKER, world.now))
    down = snapshot.model_copy(
        update={
            "reactions": (
                Reaction(comment_id=task_comment, user=CAROL, content="-1", created_at=world.now),
            )
        }
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


def bypassed_task(
    world: World, *steps: str, authorized: bool = False, shell: str | None = None
) -> int:
    """A build TASK the controller signed and posted itself, past `relay task`'s checks."""
    plan = plan_open_job(
        world.master, controller=CONTROLLER, worker=WORKER, title="t", objective="o"
    )
    number = world.open_issue(plan)
    task = TaskMsg(
        issue=number,
        node=CONTROLLER,
        task=1,
        objective="Build it.",
        steps=steps,
        scope="build",
        authorized_by_human=authorized,
        shell=shell,
    )
    world.post(number, ALICE, world.signed(CONTROLLER, render_message(task)))
    world.set_labels(number, (Label.AWAITING_WORKER.value,))
    return number


def test_a_build_task_that_deletes_recursively_is_declined_without_a_persons_word() -> None:
    world = world_with_people()
    bypassed_task(world, "make", "rm -rf ~/.config")
    [decline] = [a for a in world.pass_of(WORKER) if isinstance(a, DeclineTask)]
    assert "step 2 is destructive (recursive removal (rm -r))" in decline.reason
    assert "authorized-by-human: yes" in decline.reason and world.runs == []


def test_a_build_task_that_force_pushes_waits_for_a_person_like_a_destructive_one() -> None:
    world = world_with_people()
    number = bypassed_task(world, "git push --force origin main", authorized=True)
    comment = world.issues[number].comments[-1].id
    assert approvals_wanted(world.snapshot(WORKER), WORKER) == {comment}
    first = world.pass_of(WORKER)
    assert [a.kind for a in first] == ["ignore", "post-notice"] and world.runs == []
    world.post(number, ALICE, "/relay approve TASK 1")  # the account that posted it
    assert not any(isinstance(a, ExecuteTask) for a in world.pass_of(WORKER))
    world.post(number, CAROL, "/relay approve TASK 1")
    assert any(isinstance(a, ExecuteTask) for a in world.pass_of(WORKER)) and world.runs


def test_with_an_agent_executor_the_steps_are_still_what_is_judged() -> None:
    world = world_with_people()
    bypassed_task(world, "Remove-Item -Recurse -Force C:\\Users", shell="powershell")
    snapshot = world.snapshot(WORKER).model_copy(update={"limits": RunLimits(executor=True)})
    [decline] = [a for a in decide(snapshot, WORKER, world.now) if isinstance(a, DeclineTask)]
    assert "Remove-Item -Recurse" in decline.reason


def test_where_destructive_steps_are_forbidden_a_destructive_build_task_is_declined() -> None:
    world = world_with_people()
    scope = world.master.scope.model_copy(update={"destructive": DestructiveRule.FORBIDDEN})
    world.master = world.master.model_copy(update={"scope": scope})
    bypassed_task(world, "cmd /c rd /s /q C:\\x", authorized=True, shell="cmd")
    [decline] = [a for a in world.pass_of(WORKER) if isinstance(a, DeclineTask)]
    assert decline.reason == (
        "destructive steps are forbidden in this repository (step 1: recursive removal (rd /s))"
    )


def test_the_shared_scopes_own_destructive_commands_are_destructive_too() -> None:
    world = world_with_people()
    scope = world.master.scope.model_copy(update={"destructive_commands": ("./deploy.sh",)})
    world.master = world.master.model_copy(update={"scope": scope})
    bypassed_task(world, "make", "./deploy.sh --prod")
    [decline] = [a for a in world.pass_of(WORKER) if isinstance(a, DeclineTask)]
    assert "step 2 is destructive (listed as destructive in the shared scope" in decline.reason
    assert world.runs == []


def test_harmless_build_steps_run_at_once_as_before() -> None:
    world = world_with_people()
    bypassed_task(world, "rm -f build/out.o", "git reset --hard", "echo 'rm -rf /'")
    assert any(isinstance(a, ExecuteTask) for a in world.pass_of(WORKER)) and world.runs


def test_relay_task_refuses_a_destructive_build_task_without_the_flag() -> None:
    world = world_with_people()
    plan = plan_open_job(
        world.master, controller=CONTROLLER, worker=WORKER, title="t", objective="o"
    )
    number = world.open_issue(plan)
    steps = ("make", "sudo rm -rf /opt/app")

    def task(authorized: bool) -> Plan:
        return plan_task(
            world.issues[number],
            world.master,
            node=CONTROLLER,
            caller=ALICE.id,
            steps=steps,
            scope="build",
            authorized_by_human=authorized,
        )

    with pytest.raises(LocalUsageError) as refused:
        task(False)
    assert "step 2 is destructive (recursive removal (rm -r))" in refused.value.message
    assert refused.value.hint is not None and "--authorized-by-human" in refused.value.hint
    tasked = task(True)
    world.run_plan(tasked, CONTROLLER)
    assert [a.kind for a in world.pass_of(WORKER)] == ["ignore", "post-notice"]


def test_only_a_job_closed_by_an_outsider_is_read_again() -> None:
    from relay.protocol.tamper import closer_is_outsider

    assert closer_is_outsider(999_999, MASTER)
    assert not closer_is_outsider(ALICE.id, MASTER)  # an instruction account of a node
    assert not closer_is_outsider(None, MASTER)
