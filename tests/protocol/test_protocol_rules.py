"""The rules that used to live in the edges, now decide()'s: the claim's lease from the
node's run limits, the first-job grace of a new watcher, which claim refs a pass reads, and
the status a RESULT reports. Each is a microsecond test on a snapshot."""

from __future__ import annotations

from datetime import timedelta

from protocol_world import ALICE, CONTROLLER, MALLORY, WORKER, World

from relay.protocol import (
    ExecuteTask,
    KeepWatcher,
    RunLimits,
    Status,
    TearDown,
    WatcherFacts,
    claim_ref,
    claim_refs_wanted,
    decide,
    lease_until,
    log_path,
    plan_open_job,
    plan_task,
    result_status,
    wants_ended_check,
)
from relay.protocol.decide import FIRST_JOB_GRACE
from relay.protocol.work import LEASE, LEASE_MARGIN


def open_job(world: World, *, steps: tuple[str, ...] = ("python -V",)) -> int:
    plan = plan_open_job(
        world.master, controller=CONTROLLER, worker=WORKER, title="t", objective="o"
    )
    number = world.open_issue(plan)
    tasked = plan_task(
        world.issues[number], world.master, node=CONTROLLER, caller=ALICE.id, steps=steps
    )
    world.run_plan(tasked, CONTROLLER)
    return number


def test_the_lease_covers_every_step_at_the_nodes_timeout() -> None:
    world = World()
    open_job(world, steps=("a", "b", "c"))
    limits = RunLimits(step_timeout=3600)
    snapshot = world.snapshot(WORKER).model_copy(update={"limits": limits})
    [action] = decide(snapshot, WORKER, world.now)
    assert isinstance(action, ExecuteTask)
    assert action.claim.lease_until == world.now + timedelta(hours=3) + LEASE_MARGIN


def test_short_steps_keep_the_shortest_lease_and_an_agent_runs_once() -> None:
    now = World().now
    assert lease_until(now, steps=2, limits=RunLimits(step_timeout=5)) == now + LEASE
    agent = RunLimits(step_timeout=3 * 3600, executor=True)
    assert lease_until(now, steps=9, limits=agent) == now + timedelta(hours=3) + LEASE_MARGIN


def test_a_new_watcher_waits_for_its_first_job_then_goes() -> None:
    world = World()
    fresh = WatcherFacts(registered_at=world.now - timedelta(hours=1))
    snapshot = world.snapshot(WORKER).model_copy(update={"watcher": fresh})
    assert wants_ended_check(snapshot, WORKER, world.now)
    [keep] = decide(snapshot, WORKER, world.now)
    assert keep == KeepWatcher(until=fresh.registered_at + FIRST_JOB_GRACE)
    nothing_ended = snapshot.model_copy(
        update={"watcher": fresh.model_copy(update={"closed_since": ()})}
    )
    assert not wants_ended_check(nothing_ended, WORKER, world.now)
    assert decide(nothing_ended, WORKER, world.now) == [keep]
    # a job of this node's closed since: the first job came and went
    number = open_job(world)
    closed = world.issues[number].model_copy(update={"state": "closed"})
    stranger = closed.model_copy(update={"author": MALLORY})  # a stray one: not a job of ours
    for seen, action in (((stranger,), keep), ((closed,), TearDown())):
        ended = snapshot.model_copy(
            update={"watcher": fresh.model_copy(update={"closed_since": seen})}
        )
        assert decide(ended, WORKER, world.now) == [action]
    later = world.now + FIRST_JOB_GRACE
    assert not wants_ended_check(snapshot, WORKER, later)
    assert decide(snapshot, WORKER, later) == [TearDown()]


def test_no_watcher_or_a_bound_job_needs_no_ended_check() -> None:
    world = World()
    assert decide(world.snapshot(WORKER), WORKER, world.now) == [TearDown()]
    assert not wants_ended_check(world.snapshot(WORKER), WORKER, world.now)
    open_job(world)
    fresh = WatcherFacts(registered_at=world.now)
    snapshot = world.snapshot(WORKER).model_copy(update={"watcher": fresh})
    assert not wants_ended_check(snapshot, WORKER, world.now)
    assert not any(
        isinstance(a, KeepWatcher | TearDown) for a in decide(snapshot, WORKER, world.now)
    )


def test_a_pass_that_saw_one_issue_never_tears_down() -> None:
    world = World()
    snapshot = world.snapshot(WORKER).model_copy(update={"partial": True})
    assert decide(snapshot, WORKER, world.now) == []
    fresh = WatcherFacts(registered_at=world.now)
    watched = snapshot.model_copy(update={"watcher": fresh})
    assert decide(watched, WORKER, world.now) == [] and not wants_ended_check(
        watched, WORKER, world.now
    )


def test_a_pass_reads_the_claim_ref_of_the_task_it_is_about_to_take_only() -> None:
    world = World()
    number = open_job(world)
    assert claim_refs_wanted(world.snapshot(WORKER), WORKER) == {(number, 1)}
    assert claim_refs_wanted(world.snapshot(CONTROLLER), CONTROLLER) == frozenset()
    world.pass_of(WORKER)  # claimed and answered
    assert claim_refs_wanted(world.snapshot(WORKER), WORKER) == frozenset()
    assert claim_ref(number, 1) == f"refs/relay/claims/{number}/1"
    assert log_path(number, 7) == f"docs/loop/relay/{number}/logs/result-007.log"


def test_a_run_whose_log_was_not_pushed_is_partial() -> None:
    assert result_status(Status.DONE, log_pushed=False) == Status.PARTIAL
    assert result_status(Status.DONE, log_pushed=True) == Status.DONE
    assert result_status(Status.DONE, log_pushed=None) == Status.DONE
    assert result_status(Status.FAILED, log_pushed=False) == Status.FAILED


def test_the_summary_says_which_step_failed_and_why() -> None:
    from relay.protocol import TaskMsg
    from relay.protocol.work import StepEnd, run_summary

    task = TaskMsg(issue=1, node=CONTROLLER, task=1, objective="o", steps=("a", "b", "c"))
    assert run_summary(task, checkout_failed=False, failed=None) == (
        Status.DONE,
        "All 3 step(s) succeeded.",
        None,
    )
    status, summary, step = run_summary(
        task, checkout_failed=False, failed=StepEnd(number=2, command="b", exit_code=3)
    )
    assert (status, step) == (Status.FAILED, 2) and summary == "Step 2 of 3 exited with 3: `b`."
    late = StepEnd(number=3, command="c" * 200, timed_out=True)
    assert "timed out" in run_summary(task, checkout_failed=False, failed=late)[1]
    branch = task.model_copy(update={"checkout": "feature/x"})
    assert run_summary(branch, checkout_failed=True, failed=None) == (
        Status.FAILED,
        "Branch `feature/x` could not be checked out; no step ran.",
        None,
    )
