"""The planners behind `relay job open`, `task`, `hypothesis`, `strike` and `resolve`."""

from __future__ import annotations

import pytest
from protocol_world import ALICE, CONTROLLER, MASTER, WORKER, World

from relay.errors import LocalUsageError
from relay.protocol import (
    IllegalTransition,
    NotController,
    Outcome,
    TaskOutstanding,
    parse_body,
    parse_message,
    plan_hypothesis,
    plan_open_job,
    plan_resolve,
    plan_strike,
    plan_task,
)
from relay.protocol.labels import Label
from relay.protocol.master import InvalidValue
from relay.protocol.planners import NotAJobIssue, handover_entry


def opened(world: World) -> int:
    plan = plan_open_job(MASTER, controller=CONTROLLER, worker=WORKER, title=" T ", objective="O")
    assert plan.title == "T" and plan.labels == (Label.AWAITING_CONTROLLER.value,)
    return world.open_issue(plan)


def test_open_job_binds_the_two_nodes_in_the_body() -> None:
    world = World()
    job = parse_body(world.issues[opened(world)].body)
    assert (job.controller, job.worker, job.objective) == (CONTROLLER, WORKER, "O")


@pytest.mark.parametrize(
    ("controller", "worker", "title", "match"),
    [
        ("ghost", WORKER, "t", "not in the node table"),
        (CONTROLLER, CONTROLLER, "t", "different nodes"),
        (CONTROLLER, WORKER, "  ", "title"),
    ],
)
def test_open_job_refuses_bad_bindings(
    controller: str, worker: str, title: str, match: str
) -> None:
    with pytest.raises(LocalUsageError, match=match):
        plan_open_job(MASTER, controller=controller, worker=worker, title=title, objective="o")


def test_task_numbers_rise_by_one_and_the_baton_moves_last() -> None:
    world = World()
    number = opened(world)
    issue = world.issues[number].model_copy(update={"labels": ("bug", "awaiting:controller")})
    plan = plan_task(
        issue, MASTER, node=CONTROLLER, caller=ALICE.id, steps=("make test",), checkout="fix/1"
    )
    assert plan.labels == ("bug", Label.AWAITING_WORKER.value) and plan.task == 1
    message = parse_message(plan.comments[0], issue=number)
    assert message.kind == "task" and message.objective == "O"  # type: ignore[union-attr]
    world.issues[number] = issue
    world.run_plan(plan, CONTROLLER)
    world.pass_of(WORKER)
    world.pass_of(CONTROLLER)
    assert (
        plan_task(
            world.issues[number], MASTER, node=CONTROLLER, caller=ALICE.id, steps=("ls",)
        ).task
        == 2
    )


def test_task_by_a_node_that_is_not_the_controller_is_refused() -> None:
    world = World()
    number = opened(world)
    with pytest.raises(NotController, match=f"run it on {CONTROLLER}"):
        plan_task(world.issues[number], MASTER, node=WORKER, caller=ALICE.id, steps=("ls",))


def test_task_while_the_baton_is_at_the_worker_is_refused() -> None:
    world = World()
    number = opened(world)
    world.run_plan(
        plan_task(world.issues[number], MASTER, node=CONTROLLER, caller=ALICE.id, steps=("ls",)),
        CONTROLLER,
    )
    with pytest.raises(IllegalTransition) as caught:
        plan_task(world.issues[number], MASTER, node=CONTROLLER, caller=ALICE.id, steps=("ls",))
    assert "controller" in str(caught.value) and "post a TASK" in str(caught.value)
    assert "`awaiting:worker`" in str(caught.value)


def test_task_with_one_outstanding_is_refused() -> None:
    world = World()
    number = opened(world)
    world.run_plan(
        plan_task(world.issues[number], MASTER, node=CONTROLLER, caller=ALICE.id, steps=("ls",)),
        CONTROLLER,
    )
    world.set_labels(number, (Label.AWAITING_CONTROLLER.value,))
    with pytest.raises(TaskOutstanding, match="TASK 1"):
        plan_task(world.issues[number], MASTER, node=CONTROLLER, caller=ALICE.id, steps=("ls",))


@pytest.mark.parametrize(
    ("kwargs", "error"),
    [
        ({"steps": ()}, InvalidValue),
        ({"steps": ("two\nlines",)}, InvalidValue),
        ({"steps": ("ls",), "scope": "deploy"}, LocalUsageError),
        ({"steps": ("ls",), "scope": "destructive"}, LocalUsageError),
        ({"steps": ("ls",), "checkout": "bad branch"}, InvalidValue),
    ],
)
def test_task_refuses_bad_values(kwargs: dict[str, object], error: type[Exception]) -> None:
    world = World()
    number = opened(world)
    with pytest.raises(error):
        plan_task(world.issues[number], MASTER, node=CONTROLLER, caller=ALICE.id, **kwargs)  # type: ignore[arg-type]


def test_task_on_an_ordinary_issue_is_refused() -> None:
    world = World()
    number = opened(world)
    issue = world.issues[number].model_copy(update={"body": "just words"})
    with pytest.raises(NotAJobIssue, match="relay job open"):
        plan_task(issue, MASTER, node=CONTROLLER, caller=ALICE.id, steps=("ls",))


def test_hypotheses_are_added_then_updated() -> None:
    world = World()
    number = opened(world)
    plan = plan_hypothesis(
        world.issues[number], MASTER, node=CONTROLLER, text="disk full", outcome=Outcome.UNTESTED
    )
    world.run_plan(plan, CONTROLLER)
    plan = plan_hypothesis(
        world.issues[number], MASTER, node=CONTROLLER, text="disk full", outcome=Outcome.REFUTED
    )
    world.run_plan(plan, CONTROLLER)
    plan = plan_hypothesis(
        world.issues[number], MASTER, node=CONTROLLER, text="bad PATH", outcome=Outcome.UNTESTED
    )
    world.run_plan(plan, CONTROLLER)
    job = parse_body(world.issues[number].body)
    assert [(h.number, h.text, h.outcome) for h in job.hypotheses] == [
        (1, "disk full", Outcome.REFUTED),
        (2, "bad PATH", Outcome.UNTESTED),
    ]
    assert (job.controller, job.worker) == (CONTROLLER, WORKER)


def test_the_third_strike_parks_the_job_and_mentions_the_accounts() -> None:
    world = World()
    number = opened(world)
    with pytest.raises(LocalUsageError, match="relay hypothesis"):
        plan_strike(world.issues[number], MASTER, node=CONTROLLER)
    world.run_plan(
        plan_hypothesis(
            world.issues[number], MASTER, node=CONTROLLER, text="h", outcome=Outcome.UNTESTED
        ),
        CONTROLLER,
    )
    for _ in range(2):
        plan = plan_strike(world.issues[number], MASTER, node=CONTROLLER)
        assert plan.comments == () and plan.labels is None
        world.run_plan(plan, CONTROLLER)
    plan = plan_strike(world.issues[number], MASTER, node=CONTROLLER)
    world.run_plan(plan, CONTROLLER)
    assert set(world.issues[number].labels) == {"awaiting:controller", "needs:human"}
    escalation = parse_message(plan.comments[0], issue=number)
    assert escalation.mentions == ("alice", "bob")  # type: ignore[union-attr]
    assert "@alice @bob" in plan.comments[0]
    with pytest.raises(IllegalTransition):
        plan_strike(world.issues[number], MASTER, node=CONTROLLER)
    with pytest.raises(IllegalTransition):
        plan_task(world.issues[number], MASTER, node=CONTROLLER, caller=ALICE.id, steps=("ls",))
    with pytest.raises(LocalUsageError, match="H7"):
        world.set_labels(number, ("awaiting:controller",))
        plan_strike(world.issues[number], MASTER, node=CONTROLLER, hypothesis=7)


def test_resolve_closes_with_a_summary_and_only_from_the_controller() -> None:
    world = World()
    number = opened(world)
    with pytest.raises(NotController):
        plan_resolve(world.issues[number], MASTER, node=WORKER, summary="s", now=world.now)
    with pytest.raises(LocalUsageError, match="--summary"):
        plan_resolve(world.issues[number], MASTER, node=CONTROLLER, summary=" ", now=world.now)
    plan = plan_resolve(
        world.issues[number],
        MASTER,
        node=CONTROLLER,
        summary="PATH fixed",
        now=world.now,
        force="t",
    )
    world.run_plan(plan, CONTROLLER)
    issue = world.issues[number]
    assert issue.state == "closed" and issue.labels == ("resolved",)
    assert parse_body(issue.body).resolution == "PATH fixed"
    entry = handover_entry(issue=number, title="Flaky\nbuild", summary="PATH fixed", when=world.now)
    assert entry == f"\n## #{number} Flaky build (2026-11-30)\n\nPATH fixed\n"


def test_a_fourth_strike_after_unparking_parks_again_and_the_job_stays_readable() -> None:
    world = World()
    number = opened(world)
    world.run_plan(
        plan_hypothesis(
            world.issues[number], MASTER, node=CONTROLLER, text="h", outcome=Outcome.UNTESTED
        ),
        CONTROLLER,
    )
    for _ in range(3):
        world.run_plan(plan_strike(world.issues[number], MASTER, node=CONTROLLER), CONTROLLER)
    assert "needs:human" in world.issues[number].labels
    world.set_labels(number, ("awaiting:controller",))  # a person unparks it
    fourth = plan_strike(world.issues[number], MASTER, node=CONTROLLER)
    world.run_plan(fourth, CONTROLLER)
    job = parse_body(world.issues[number].body)  # still readable
    assert job.hypotheses[0].strikes == 4 and "past the limit" in job.state
    assert set(world.issues[number].labels) == {"awaiting:controller", "needs:human"}
    assert parse_message(fourth.comments[0], issue=number).strikes == 4  # type: ignore[union-attr]


def test_resolve_needs_the_newest_verification_task_passed_or_a_reason() -> None:
    world = World()
    number = opened(world)

    def resolve(force: str | None = None) -> None:
        world.run_plan(
            plan_resolve(
                world.issues[number], MASTER, node=CONTROLLER, summary="s", now=world.now,
                force=force,
            ),
            CONTROLLER,
        )  # fmt: skip

    def round_trip(verification: bool) -> None:
        plan = plan_task(world.issues[number], MASTER, node=CONTROLLER, caller=ALICE.id,
                         steps=("make test",), verification=verification)  # fmt: skip
        world.run_plan(plan, CONTROLLER)
        world.pass_of(WORKER)  # runs it and answers done
        world.pass_of(CONTROLLER)

    with pytest.raises(LocalUsageError, match="no verification TASK was posted"):
        resolve()
    with pytest.raises(LocalUsageError, match="--force needs a reason"):
        resolve(" ")
    round_trip(verification=False)
    with pytest.raises(LocalUsageError, match="no verification TASK"):
        resolve()
    round_trip(verification=True)
    round_trip(verification=False)  # a later plain TASK does not undo the verification
    resolve()
    closure = world.issues[number].comments[-1].body
    assert "Resolved without" not in closure and "tear their watchers down" in closure
