"""The heart of relay: ``decide(snapshot, node, now) -> actions``.

Ground rules: pure (time is passed in), total (garbage in a thread becomes Ignore
actions, never an exception), and idempotent (after a driver applies the actions, the
next decision on the new snapshot asks for nothing new). One job gives at most one
action besides Ignores. Whose turn it is comes from the labels; what to do comes from
the newest TASK and the messages that answer it (see :mod:`relay.protocol.thread`).
"""

from __future__ import annotations

from datetime import datetime, timedelta

from relay.errors import ConfigError, LocalUsageError
from relay.protocol.actions import (
    Action,
    CloseJob,
    DeclineTask,
    ExecuteTask,
    Ignore,
    MoveBaton,
    NotifyResult,
    ReportHalfDone,
    TearDown,
    Wait,
)
from relay.protocol.baton import State, baton_of
from relay.protocol.body import brief, restate
from relay.protocol.labels import Label
from relay.protocol.master import DESTRUCTIVE_CLASS, DestructiveRule, Scope
from relay.protocol.messages import ClaimMsg, HalfDoneMsg, ResultMsg, Status, TaskMsg
from relay.protocol.messages import render_message as render
from relay.protocol.snapshot import Snapshot
from relay.protocol.thread import NotAJob, Thread, read_thread
from relay.protocol.wire import MessageRejected

LEASE = timedelta(hours=2)
_WORKER_TURN = (State.AWAITING_WORKER, State.WORKING)


class NotInNodeTable(ConfigError):
    """The node deciding is not in the master section's node table."""

    code = "unknown-node"


def decide(snapshot: Snapshot, node: str, now: datetime) -> list[Action]:
    """What ``node`` should do now, given what one pass observed.

    Raises NotInNodeTable when ``node`` has not joined, LocalUsageError for a naive ``now``.
    """
    if now.tzinfo is None:
        raise LocalUsageError("decide needs an aware time", hint="pass datetime.now(UTC)")
    if snapshot.master.node(node) is None:
        raise NotInNodeTable(f"node {node!r} is not in the node table", hint="run `relay join`")
    actions: list[Action] = []
    bound = False
    for issue in sorted(snapshot.issues, key=lambda i: i.number):
        if issue.state != "open":
            continue
        try:
            thread = read_thread(issue, snapshot.master)
        except NotAJob:
            continue
        except MessageRejected as err:
            actions.append(Ignore(issue=issue.number, comment_id=None, reason=err.reason))
            continue
        if node not in (thread.job.controller, thread.job.worker):
            continue
        bound = True
        actions += [Ignore(issue=issue.number, comment_id=c, reason=r) for c, r in thread.ignored]
        actions += _turn(thread, snapshot, node, now)
    return actions if bound else [*actions, TearDown()]


def _turn(thread: Thread, snapshot: Snapshot, node: str, now: datetime) -> list[Action]:
    if thread.state == State.INCONSISTENT:
        reason = "the labels do not hold exactly one baton; a person must leave exactly one"
        return [Ignore(issue=thread.issue.number, comment_id=None, reason=reason)]
    if node == thread.job.worker:
        return _worker_turn(thread, snapshot, now)
    return _controller_turn(thread, snapshot)


def _worker_turn(thread: Thread, snapshot: Snapshot, now: datetime) -> list[Action]:
    number, task = thread.issue.number, thread.last_task
    if task == 0 or thread.state not in (*_WORKER_TURN, State.AWAITING_CONTROLLER):
        return []  # no TASK at all: whatever put the baton here, nothing is touched
    key = (number, task)
    if thread.answered(task) or key in snapshot.local.results_posted:
        reason = f"TASK {task} is answered but the baton was not passed back"
        return [_move(thread, Label.AWAITING_CONTROLLER, reason)] if _at_worker(thread) else []
    if key in snapshot.local.claims or thread.taken(task) or key in snapshot.claim_refs:
        return [_claimed(thread, snapshot, now)]
    if thread.state == State.WORKING:
        return [_half_done(thread, now, "the baton was `working` but no claim was found")]
    if thread.state != State.AWAITING_WORKER:
        return []
    entry = thread.tasks.get(task)
    if entry is None:  # only an edited TASK holds this number: answer it, never run it
        edited = thread.task_entry(task)
        assert edited is not None
        reason = f"TASK {task} was edited after it was posted; post a new TASK"
        return [_decline(thread, task, edited.comment.id, reason)]
    assert isinstance(entry.message, TaskMsg)
    refusal = scope_refusal(entry.message, snapshot.master.scope)
    if refusal is not None:
        return [_decline(thread, task, entry.comment.id, refusal)]
    if snapshot.unable is not None:  # answered blocked, so the controller is not left waiting
        return [_decline(thread, task, entry.comment.id, snapshot.unable)]
    return [_execute(thread, entry.message, entry.comment.id, now)]


def _at_worker(thread: Thread) -> bool:
    return thread.state in _WORKER_TURN


def _execute(thread: Thread, task: TaskMsg, comment_id: int, now: datetime) -> ExecuteTask:
    claim = ClaimMsg(
        issue=task.issue,
        node=thread.job.worker,
        task=task.task,
        claimed_at=now,
        lease_until=now + LEASE,
    )
    return ExecuteTask(
        issue=task.issue, comment_id=comment_id, task=task, claim=claim, claim_body=render(claim)
    )


def _claimed(thread: Thread, snapshot: Snapshot, now: datetime) -> Action:
    """A claimed task with no answer: wait out another process's live lease, else report."""
    number, task = thread.issue.number, thread.last_task
    facts: list[str] = []
    if (number, task) in snapshot.local.claims:
        facts.append("this node's local records hold the claim and no pass is running it")
    claim = thread.claims.get(task)
    if claim is not None:
        assert isinstance(claim.message, ClaimMsg)
        facts.append(f"claimed at {claim.message.claimed_at:%Y-%m-%d %H:%M} UTC")
        until = claim.message.lease_until
    else:
        posted = thread.task_entry(task)
        until = (posted.comment.created_at if posted else now) + LEASE
    if (number, task) in snapshot.claim_refs:
        facts.append(f"the claim ref refs/relay/claims/{number}/{task} exists")
    if (number, task) not in snapshot.local.claims and until > now:
        return Wait(issue=number, task=task, until=until)
    return _half_done(thread, now, "; ".join(facts) + "; no RESULT was posted")


def _half_done(thread: Thread, now: datetime, known: str) -> ReportHalfDone:
    number, task = thread.issue.number, thread.last_task
    report = HalfDoneMsg(
        issue=number, node=thread.job.worker, task=task, known=known, reported_at=now
    )
    baton = baton_of(thread.state) or Label.AWAITING_CONTROLLER
    return ReportHalfDone(
        issue=number, task=task, known=known, report=report, body=render(report), expect=baton
    )


def _decline(thread: Thread, task: int, comment_id: int, reason: str) -> DeclineTask:
    number = thread.issue.number
    result = ResultMsg(
        issue=number,
        node=thread.job.worker,
        task=task,
        status=Status.BLOCKED,
        summary=f"Not run: {reason}.",
    )
    return DeclineTask(
        issue=number,
        comment_id=comment_id,
        task=task,
        reason=reason,
        result=result,
        body=render(result),
    )


def _controller_turn(thread: Thread, snapshot: Snapshot) -> list[Action]:
    number = thread.issue.number
    if thread.closure is not None:
        return [CloseJob(issue=number)]
    if thread.state not in (State.AWAITING_CONTROLLER, State.PARKED):
        return []
    task = thread.outstanding()
    if task is not None and thread.state == State.AWAITING_CONTROLLER:
        reason = f"TASK {task} was posted but the baton was not passed to the worker"
        return [_move(thread, Label.AWAITING_WORKER, reason)]
    newest = thread.last_task
    if newest == 0 or (number, newest) in snapshot.local.notified:
        return []
    entry = thread.answer_entry(newest)
    if entry is not None:
        assert isinstance(entry.message, ResultMsg | HalfDoneMsg)
        return [_notify(thread, entry.message, entry.comment.id, trusted=True)]
    edited = thread.edited_answer(newest)
    if edited is not None:
        return [_notify(thread, _untrusted(thread, newest), edited.comment.id, trusted=False)]
    if thread.taken(newest):
        reason = (
            f"TASK {newest} was claimed but no RESULT can be read yet; wait for the"
            " worker's half-done report, or post a new TASK"
        )
        return [Ignore(issue=number, comment_id=None, reason=reason)]
    return []


def _untrusted(thread: Thread, task: int) -> ResultMsg:
    """The stand-in for an answer edited after posting: its content is never passed on."""
    summary = (
        f"The answer to TASK {task} was edited after it was posted, so relay does not trust"
        " its content; read the thread, and post a new TASK to run it again."
    )
    return ResultMsg(
        issue=thread.issue.number,
        node=thread.job.worker,
        task=task,
        status=Status.BLOCKED,
        summary=summary,
    )


def _notify(
    thread: Thread, result: ResultMsg | HalfDoneMsg, comment_id: int, *, trusted: bool
) -> NotifyResult:
    """Notify, with the body's "Current state" saying what came back."""
    parked = thread.state == State.PARKED
    turn = "parked on needs:human" if parked else f"{thread.job.controller}'s turn"
    if isinstance(result, ResultMsg):
        state = f"RESULT {result.task} came back {result.status.value}: {brief(result.summary)}"
    else:
        state = f"TASK {result.task} was half-done: {brief(result.known)}"
    body = restate(thread.job, f"{state} ({turn}).")
    return NotifyResult(
        issue=thread.issue.number,
        task=result.task,
        comment_id=comment_id,
        result=result,
        body=body if body != thread.issue.body else None,
        trusted=trusted,
    )


def _move(thread: Thread, to: Label, reason: str) -> MoveBaton:
    expect = baton_of(thread.state)
    assert expect is not None
    return MoveBaton(issue=thread.issue.number, expect=expect, to=to, reason=reason)


def scope_refusal(task: TaskMsg, scope: Scope) -> str | None:
    """Why the shared scope forbids running ``task``, or None when it may run."""
    if task.scope == DESTRUCTIVE_CLASS:
        if scope.destructive == DestructiveRule.FORBIDDEN:
            return "destructive steps are forbidden in this repository"
        if not task.authorized_by_human:
            return "a destructive task needs `authorized-by-human: yes`"
        return None
    if task.scope not in scope.allowed:
        allowed = ", ".join(scope.allowed) or "nothing"
        return f"scope class {task.scope!r} is not one workers may run ({allowed})"
    return None
