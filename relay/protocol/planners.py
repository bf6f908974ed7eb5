"""Pure planners for the CLI verbs that change a job: open, task, hypothesis, strike, resolve.

Each takes what the verb observed and returns a :class:`Plan` (what to post, the body to
write, the labels to set last), or raises a LocalUsageError subclass whose one-line
message says what to do instead. The baton rules come from :mod:`relay.protocol.baton`.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime

from pydantic import BaseModel, ConfigDict

from relay.errors import LocalUsageError
from relay.protocol.approvals import destructive_step
from relay.protocol.baton import Event, IllegalTransition, Role, State, labels_for, transition
from relay.protocol.body import (
    STRIKE_LIMIT,
    Hypothesis,
    JobBody,
    Outcome,
    brief,
    render_body,
)
from relay.protocol.decide import scope_refusal
from relay.protocol.labels import Label
from relay.protocol.master import DESTRUCTIVE_CLASS, Master, build
from relay.protocol.messages import ClosureMsg, EscalationMsg, TaskMsg, render_message
from relay.protocol.snapshot import Issue, LabelEvent
from relay.protocol.thread import NotAJob, Thread, party_ids, read_thread
from relay.protocol.wire import MessageRejected

MAX_TITLE = 256  # GitHub's limit for an issue title


class NotController(LocalUsageError):
    """Only the job's controller may do this."""

    code = "not-controller"


class TaskOutstanding(LocalUsageError):
    """The job already has a TASK that nothing answers."""

    code = "task-outstanding"


class UntrustedAccount(LocalUsageError):
    """The calling account is not one the protocol would obey for this message."""

    code = "untrusted-account"


class NotAJobIssue(LocalUsageError):
    """The issue is not a relay job this node can act on."""

    code = "not-a-job"


class Plan(BaseModel):
    """What a verb must do, in this order: post ``comments``, write ``body``, set
    ``labels`` (the whole set, replacing the old one), then close the issue if ``close``.
    ``issue`` is None only when opening a job (create it with ``title``, ``body``, ``labels``).
    """

    model_config = ConfigDict(frozen=True)

    issue: int | None
    title: str | None = None
    comments: tuple[str, ...] = ()
    body: str | None = None
    labels: tuple[str, ...] | None = None
    close: bool = False
    task: int | None = None


def relabel(labels: tuple[str, ...], state: State) -> tuple[str, ...]:
    """``labels`` with the relay labels replaced by those of ``state``."""
    ours = {label.value for label in Label}
    kept = [name for name in labels if name not in ours]
    return (*kept, *sorted(label.value for label in labels_for(state)))


def _controller_thread(issue: Issue, master: Master, node: str) -> Thread:
    try:
        thread = read_thread(issue, master)
    except MessageRejected as err:
        raise NotAJobIssue(f"issue #{issue.number} is not a relay job: {err.reason}") from None
    except NotAJob:
        raise NotAJobIssue(
            f"issue #{issue.number} is not a relay job", hint="open one with `relay job open`"
        ) from None
    if thread.job.controller != node:
        raise NotController(
            f"only {thread.job.controller}, the controller of #{issue.number}, may do this",
            hint=f"run it on {thread.job.controller}",
        )
    return thread


def _check_caller(thread: Thread, master: Master, caller: int | None, *, task: bool) -> None:
    """Refuse a caller whose message the protocol would ignore.

    A TASK counts only from an account in the worker's row; the other controller
    messages (escalation, closure) and body writes only from an account of either node.
    ``None`` means the driver did not say, and skips the check.
    """
    if caller is None:
        return
    worker = thread.job.worker
    row = master.node(worker)
    if task and (row is None or not row.trusts(caller)):
        raise UntrustedAccount(
            f"account {caller} gives {worker} no instructions, so {worker} would ignore this TASK",
            hint=f"add the account to {worker}'s row in docs/loop/LOOP.md",
        )
    if not task and caller not in party_ids(thread.job, master):
        controller = thread.job.controller
        raise UntrustedAccount(
            f"account {caller} is no instruction account of {controller} or {worker}",
            hint=f"add it to {controller}'s row in docs/loop/LOOP.md",
        )


def plan_open_job(
    master: Master,
    *,
    controller: str,
    worker: str,
    title: str,
    objective: str,
    kind: str = "diagnostics",
    worker_may_join: bool = False,
) -> Plan:
    """Open a job: the caller is the controller and holds the baton (no task yet). Only a
    kind of job the master section lists as delegable may be opened. ``worker_may_join``:
    the worker need not be in the node table yet (`relay init`'s first job, opened before
    any other machine joined; its TASKs wait until it has)."""
    if kind not in master.scope.delegable:
        delegable = ", ".join(master.scope.delegable) or "none"
        raise LocalUsageError(
            f"jobs of kind {kind!r} are not delegable in this repository (delegable: {delegable})",
            hint="pass --kind with one of them, or add it to Delegable jobs in LOOP.md",
        )
    for name in (controller, worker):
        if master.node(name) is None and not (worker_may_join and name == worker):
            raise LocalUsageError(
                f"node {name!r} is not in the node table", hint="run `relay join` on it"
            )
    if not title.strip():
        raise LocalUsageError("a job needs a title", hint="pass --title")
    if "\n" in title or "\r" in title:
        raise LocalUsageError("--title must be a single line", hint="pass the title on one line")
    if len(title.strip()) > MAX_TITLE:
        raise LocalUsageError(
            f"--title is longer than {MAX_TITLE} characters (GitHub's limit for an issue title)",
            hint="shorten the title; the objective holds the detail",
        )
    job = build(
        JobBody,
        controller=controller,
        worker=worker,
        kind=kind,
        objective=objective.strip(),
        revision=1,
    )
    state = transition(State.NEW, Event.OPEN, Role.CONTROLLER)
    return Plan(issue=None, title=title.strip(), body=render_body(job), labels=relabel((), state))


def plan_task(
    issue: Issue,
    master: Master,
    *,
    node: str,
    caller: int,
    steps: tuple[str, ...],
    objective: str | None = None,
    capture: str = "",
    scope: str = "diagnostics",
    authorized_by_human: bool = False,
    fallback: str = "",
    checkout: str | None = None,
    shell: str | None = None,
    verification: bool = False,
    artifacts: tuple[str, ...] = (),
    commit: str | None = None,
    boxed: bool = False,
    label_events: tuple[LabelEvent, ...] = (),
) -> Plan:
    """Post TASK n+1, say so in the body, and pass the baton to the worker.

    ``caller`` is the numeric id of the account the verb posts as; ``label_events``, the
    job's, read when a strike parked it (a `needs:human` removed by someone the controller
    does not obey leaves it parked). Raises NotController, UntrustedAccount,
    IllegalTransition (baton elsewhere), TaskOutstanding, InvalidValue.
    """
    thread = _controller_thread(issue, master, node)
    _check_caller(thread, master, caller, task=True)
    from relay.protocol.tamper import parked_by_outsider, unparked_by_outsider

    if unparked_by_outsider(thread, label_events, master) is not None:
        raise IllegalTransition(State.PARKED, Event.POST_TASK, Role.CONTROLLER)
    if parked_by_outsider(thread, label_events, master) is not None:  # her label: not parked
        thread = replace(thread, state=State.AWAITING_CONTROLLER)
    target = transition(thread.state, Event.POST_TASK, Role.CONTROLLER)
    pending = thread.outstanding()
    if pending is not None:
        raise TaskOutstanding(
            f"TASK {pending} on #{issue.number} has no result yet",
            hint="wait for it, or run `relay watch --once` to pass the baton on",
        )
    task = build(
        TaskMsg,
        issue=issue.number,
        node=node,
        task=thread.last_task + 1,  # counts the body's own record (JobBody.tasks)
        objective=objective or thread.job.objective,
        steps=tuple(steps),
        capture=capture,
        scope=scope,
        authorized_by_human=authorized_by_human,
        fallback=fallback,
        checkout=checkout,
        shell=shell,
        verification=verification,
        artifacts=artifacts,
        commit=commit,
        boxed=boxed,
    )
    refusal = scope_refusal(task, master.scope)
    if refusal is not None:
        destructive = task.scope == DESTRUCTIVE_CLASS or destructive_step(task, master.scope)
        hint = (
            "add --authorized-by-human once a person has authorised it"
            if destructive and not authorized_by_human
            else None
        )
        raise LocalUsageError(f"the worker would refuse this task: {refusal}", hint=hint)
    worker = thread.job.worker
    state = f"TASK {task.task} posted: {brief(task.objective)}, waiting for {worker}."
    return Plan(
        issue=issue.number,
        comments=(render_message(task),),
        body=_rebody(thread.job, state=brief(state, 1000), tasks=task.task),
        labels=relabel(issue.labels, target),
        task=task.task,
    )


def plan_hypothesis(
    issue: Issue,
    master: Master,
    *,
    node: str,
    text: str,
    outcome: Outcome,
    caller: int | None = None,
) -> Plan:
    """Record a hypothesis (or a new outcome for one already recorded) in the body.

    Raises NotController, UntrustedAccount, IllegalTransition, InvalidValue.
    """
    thread = _controller_thread(issue, master, node)
    _check_caller(thread, master, caller, task=False)
    transition(thread.state, Event.RECORD_HYPOTHESIS, Role.CONTROLLER)
    hypotheses = list(thread.job.hypotheses)
    same = next((h for h in hypotheses if h.text == text.strip()), None)
    if same is not None:
        hypotheses[same.number - 1] = same.model_copy(update={"outcome": outcome})
    else:
        number = len(hypotheses) + 1
        hypotheses.append(build(Hypothesis, number=number, text=text.strip(), outcome=outcome))
    return Plan(issue=issue.number, body=_rebody(thread.job, hypotheses=tuple(hypotheses)))


def _rebody(job: JobBody, **changes: object) -> str:
    """The body with ``changes``, one revision on."""
    fields = {**job.model_dump(), **changes, "revision": job.revision + 1}
    return render_body(build(JobBody, **fields))


def plan_strike(
    issue: Issue,
    master: Master,
    *,
    node: str,
    hypothesis: int | None = None,
    caller: int | None = None,
) -> Plan:
    """One failed round trip on a hypothesis (default: the newest); the third parks the job,
    and so does every strike after a person unparked it (the count goes on past the limit).

    Raises NotController, UntrustedAccount, IllegalTransition, LocalUsageError (no such
    hypothesis).
    """
    thread = _controller_thread(issue, master, node)
    _check_caller(thread, master, caller, task=False)
    transition(thread.state, Event.STRIKE, Role.CONTROLLER)
    hypotheses = list(thread.job.hypotheses)
    if not hypotheses:
        raise LocalUsageError("no hypothesis to strike", hint="record one with `relay hypothesis`")
    number = hypotheses[-1].number if hypothesis is None else hypothesis
    if not 1 <= number <= len(hypotheses):
        raise LocalUsageError(f"no hypothesis H{number} on #{issue.number}")
    strikes = hypotheses[number - 1].strikes + 1
    hypotheses[number - 1] = hypotheses[number - 1].model_copy(update={"strikes": strikes})
    past = " (past the limit: parked again)" if strikes > STRIKE_LIMIT else ""
    body = _rebody(
        thread.job,
        hypotheses=tuple(hypotheses),
        state=f"H{number} has {strikes} of {STRIKE_LIMIT} strikes{past}.",
    )
    if strikes < STRIKE_LIMIT:
        return Plan(issue=issue.number, body=body)
    return _escalate(thread, master, body=body, number=number, strikes=strikes)


def _escalate(thread: Thread, master: Master, *, body: str, number: int, strikes: int) -> Plan:
    target = transition(thread.state, Event.ESCALATE, Role.CONTROLLER)
    nodes = (master.node(thread.job.controller), master.node(thread.job.worker))
    accounts = (a for n in nodes if n is not None for a in n.accounts)
    logins = dict.fromkeys(a.login for a in accounts if not a.login.endswith("[bot]"))
    message = EscalationMsg(
        issue=thread.issue.number,
        node=thread.job.controller,
        hypothesis=number,
        strikes=strikes,
        mentions=tuple(logins),
        reason=f"{strikes} round trips on H{number} failed; a person should decide what next.",
    )
    return Plan(
        issue=thread.issue.number,
        comments=(render_message(message),),
        body=body,
        labels=relabel(thread.issue.labels, target),
    )


def plan_resolve(
    issue: Issue,
    master: Master,
    *,
    node: str,
    summary: str,
    now: datetime,
    caller: int | None = None,
    force: str | None = None,
) -> Plan:
    """Close the job: closure comment, summary in the body, ``resolved`` label, closed.

    The job's stopping condition is a passing verification TASK on the worker: without
    one, only ``force`` (why not, said in the closure) resolves it.

    Raises NotController, UntrustedAccount, IllegalTransition (not the controller's
    turn), LocalUsageError.
    """
    thread = _controller_thread(issue, master, node)
    _check_caller(thread, master, caller, task=False)
    target = transition(thread.state, Event.RESOLVE, Role.CONTROLLER)
    if not summary.strip():
        raise LocalUsageError("a resolution needs a summary", hint="pass --summary")
    forced = (force or "").strip()
    if force is not None and not forced:
        raise LocalUsageError("--force needs a reason", hint='say why: --force "REASON"')
    unverified = verification_missing(thread)
    if unverified is not None and not forced:
        raise LocalUsageError(
            f"#{issue.number} cannot resolve yet: {unverified}",
            hint=f"post one: `relay task {issue.number} --verification --step CMD`,"
            ' or resolve anyway with --force "REASON"',
        )
    closure = build(
        ClosureMsg,
        issue=issue.number,
        node=node,
        summary=summary.strip(),
        resolved_at=now,
        forced=forced if unverified is not None else "",
    )
    return Plan(
        issue=issue.number,
        comments=(render_message(closure),),
        body=_rebody(thread.job, resolution=summary.strip(), state="Resolved."),
        labels=relabel(issue.labels, target),
        close=True,
    )


def verification_missing(thread: Thread) -> str | None:
    """Why the job's stopping condition is not met (None when it is): the newest
    verification TASK must have a ``done`` RESULT from the worker."""
    from relay.protocol.messages import ResultMsg, Status

    tasks = [n for n, e in thread.tasks.items() if getattr(e.message, "verification", False)]
    if not tasks:
        return "no verification TASK was posted"
    newest = max(tasks)
    answer = thread.answer(newest)
    if answer is None:
        return f"verification TASK {newest} has no result yet"
    if not isinstance(answer, ResultMsg) or answer.status != Status.DONE:
        how = answer.status.value if isinstance(answer, ResultMsg) else "half-done"
        return f"verification TASK {newest} did not pass (RESULT: {how})"
    return None


def handover_entry(*, issue: int, title: str, summary: str, when: datetime) -> str:
    """The section ``relay resolve`` appends to ``docs/loop/handover.md``."""
    return f"\n## #{issue} {' '.join(title.split())} ({when:%Y-%m-%d})\n\n{summary.strip()}\n"
