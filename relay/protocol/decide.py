"""The heart of relay: ``decide(snapshot, node, now) -> actions``.

Ground rules: pure (time is passed in), total (garbage in a thread becomes Ignore
actions, never an exception), and idempotent (after a driver applies the actions, the
next decision on the new snapshot asks for nothing new). One job gives at most one
action besides Ignores. Whose turn it is comes from the labels; what to do comes from
the newest TASK and the messages that answer it (see :mod:`relay.protocol.thread`).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta
from functools import lru_cache
from typing import NamedTuple

from relay.errors import ConfigError, LocalUsageError
from relay.protocol.actions import (
    Action,
    CloseJob,
    DeclineTask,
    ExecuteTask,
    Ignore,
    KeepWatcher,
    MoveBaton,
    NotifyResult,
    PostNotice,
    ReclaimTask,
    ReportHalfDone,
    SendResult,
    TearDown,
    Wait,
)
from relay.protocol.approvals import approval, approval_notice, needs_approval, node_accounts
from relay.protocol.baton import (
    Event,
    IllegalTransition,
    Role,
    State,
    baton_problem,
    move,
    transition,
)
from relay.protocol.body import brief, restate
from relay.protocol.destructive import task_destructive
from relay.protocol.labels import Label, batons_in
from relay.protocol.master import DESTRUCTIVE_CLASS, DestructiveRule, Master, Node, Scope
from relay.protocol.messages import (
    MAX_STEPS,
    ClaimMsg,
    HalfDoneMsg,
    ResultMsg,
    Status,
    TaskMsg,
    render_message,
    task_digest,
)
from relay.protocol.signatures import unsigned
from relay.protocol.snapshot import (
    Comment,
    CommentEdit,
    Issue,
    Snapshot,
    TaskKey,
    WatcherFacts,
)
from relay.protocol.tamper import (
    as_relay_left_it,
    claim_vanished,
    claimed_unseen,
    closed_by_outsider,
    known_claims,
    outsider_may_have,
    rolled_back,
    tampered_notice,
    trust_notices,
)
from relay.protocol.thread import (
    Entry,
    NotAJob,
    Thread,
    binds,
    party_ids,
    read_thread,
    signed_claim,
)
from relay.protocol.wire import MessageRejected
from relay.protocol.work import (
    BARE_GRACE,
    BARE_SETTLE,
    DEFAULT_HEARTBEAT,
    MISSED_BEATS,
    alive_until,
    beat_window,
    claim_lapses,
    claim_window,
    lapses,
    lease_until,
)

_WORKER_TURN = (State.AWAITING_WORKER, State.WORKING)
# How long a fresh watcher waits for its node's first job before a pass tears it down.
FIRST_JOB_GRACE = timedelta(hours=24)
# How long past a claim's lapse the controller waits before taking the baton back.
RECLAIM_GRACE = timedelta(minutes=2)


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
    for issue, thread in _threads(snapshot):
        if isinstance(thread, MessageRejected):
            actions.append(Ignore(issue=issue.number, comment_id=None, reason=thread.reason))
            actions += tampered_notice(issue, thread.reason, snapshot, node)
            continue
        if node not in (thread.job.controller, thread.job.worker):
            continue
        bound = True
        rewound = rolled_back(thread, snapshot, node)
        if rewound:
            actions += rewound
            continue
        actions += [Ignore(issue=issue.number, comment_id=c, reason=r) for c, r in thread.ignored]
        untrusted = _untrusted_account(thread, snapshot, node)
        if untrusted:
            actions += untrusted
            continue
        thread, undone = as_relay_left_it(thread, snapshot, node)
        try:
            turn = _turn(thread, snapshot, node, now)
        except IllegalTransition as err:  # a state people made that no row allows: say so
            turn = [Ignore(issue=issue.number, comment_id=None, reason=err.message)]
        actions += undone
        actions += turn
        actions += _telling(thread, snapshot, node)  # notices aside the one act a job
        actions += trust_notices(thread, snapshot, node)
        moved = any(isinstance(a, MoveBaton) or _is_frozen_notice(a) for a in turn)
        if moved or any(a.kind == "ignore" and "outsider" in a.reason for a in undone):
            actions += _outsider_moves(thread, snapshot, node)
    actions += _closed(snapshot, node)
    if bound or snapshot.partial:  # a pass that saw one issue cannot know nothing binds
        return actions
    return [*actions, _unbound(snapshot, node, now)]


def _telling(thread: Thread, snapshot: Snapshot, node: str) -> list[PostNotice]:
    """What the people reading a thread should be told once: a message
    refused for who sent or signed it (once per author), a TASK number skipped, and a TASK
    that was not run because a newer one came. The worker tells what concerns TASKs, the
    controller the rest."""
    number, job = thread.issue.number, thread.job
    said = {key for n, key in snapshot.local.notices if n == number}
    told: list[PostNotice] = []
    for _, login, reason in thread.refused:
        speaker = job.worker if reason.lower().startswith("task") else job.controller
        key = f"refused:{login.lower()}"
        if node != speaker or key in said:
            continue
        said.add(key)
        body = (
            f"**relay:** relay does not act on comments by `{login}` in this job: {reason}."
            " Only the instruction accounts of the job's nodes (the node table in LOOP.md)"
            " give relay messages, each signed by its node. If that account should, add it"
            f" with `relay join --accounts`; otherwise there is nothing to do."
        )
        told.append(PostNotice(issue=number, key=key, reason=reason, body=body))
    if node != job.worker:
        return told
    named = {*thread.tasks, *(n for _, n in thread.edited), *thread.results,
             *thread.half_done, *thread.claims}  # fmt: skip
    newest = thread.last_task
    if newest in thread.tasks and newest > 1:
        gap = [n for n in range(1, newest) if n not in named]
        key = f"skipped:{newest}"
        if gap and key not in said:
            missing = ", ".join(str(n) for n in gap[:10])
            reason = f"TASK {newest} follows no readable TASK {missing}"
            body = (
                f"**relay:** TASK {newest} is the newest, but no readable comment holds TASK"
                f" {missing}: it was never posted, or deleted. Only the newest TASK runs."
            )
            told.append(PostNotice(issue=number, key=key, reason=reason, body=body))
    for late in sorted(thread.tasks):
        key = f"late:{late}"
        if late >= newest or thread.answered(late) or thread.taken(late) or key in said:
            continue
        reason = f"TASK {late} was not run: TASK {newest} is newer"
        body = (
            f"**relay:** TASK {late} was not run and will not be: TASK {newest} is newer,"
            " and a worker runs only the newest TASK. Post it again if it is still wanted."
        )
        told.append(PostNotice(issue=number, key=key, reason=reason, body=body))
    return told


def high_water(snapshot: Snapshot, node: str) -> tuple[dict[int, int], set[TaskKey]]:
    """What a pass must remember of what it saw: each bound job's body revision, and the
    tasks it saw claimed (so nothing goes backwards and nothing claimed is handed back)."""
    revisions: dict[int, int] = {}
    claimed: set[TaskKey] = set()
    for thread in bound_threads(snapshot, node):
        number = thread.issue.number
        if thread.job.revision >= snapshot.local.revision_seen(number):
            revisions[number] = thread.job.revision
        claimed.update((number, n) for n in range(1, thread.last_task + 1) if thread.taken(n))
    return revisions, claimed


def _is_frozen_notice(action: Action) -> bool:
    return isinstance(action, PostNotice) and action.key.startswith("frozen:")


def baton_events_wanted(snapshot: Snapshot, node: str, now: datetime) -> frozenset[int]:
    """The issues whose label events a pass must read: those where this node is about to
    put a baton right (a repair move, or a frozen job to report), so the thread can name
    who moved it when that was neither node nor an instruction account. One request each,
    only then."""
    wanted = set()
    for thread in bound_threads(snapshot, node):
        try:
            turn = _turn(thread, snapshot, node, now)
        except IllegalTransition:
            continue
        if any(isinstance(a, MoveBaton) or _is_frozen_notice(a) for a in turn) or outsider_may_have(
            thread, snapshot, node
        ):
            wanted.add(thread.issue.number)
    return frozenset(wanted)


def _outsider_moves(thread: Thread, snapshot: Snapshot, node: str) -> list[Action]:
    """A notice naming who moved the baton, when it was neither a node of the job nor an
    instruction account (the newest such baton label event), once per event."""
    from relay.protocol.labels import BATONS

    number = thread.issue.number
    trusted = party_ids(thread.job, snapshot.master)
    moves = [
        e
        for e in snapshot.label_events
        if e.issue == number and e.label in BATONS and e.actor.id not in trusted
    ]
    if not moves:
        return []
    newest = max(moves, key=lambda e: (e.at, e.id))
    key = f"outsider:{newest.id}"
    if (number, key) in snapshot.local.notices:
        return []
    who = newest.actor.login[:60]
    same = [e for e in moves if e.actor.id == newest.actor.id and e.at == newest.at]
    parts = [
        f"{verb} the baton label {', '.join(f'`{e.label}`' for e in same if e.action == act)}"
        for act, verb in (("labeled", "added"), ("unlabeled", "removed"))
        if any(e.action == act for e in same)
    ]
    what = " and ".join(parts)
    reason = f"{who} {what.replace('`', '')}"
    body = (
        f"**relay:** `{who}` {what} at {newest.at:%Y-%m-%d %H:%M} UTC, but `{who}` is"
        " neither a node of this job nor one of its instruction accounts, so relay does not"
        " follow that move and puts the baton where the thread says it belongs. Whose turn"
        " it is comes from the TASKs and RESULTs; to change it, post a TASK or ask the"
        " job's controller."
    )
    return [PostNotice(issue=number, key=key, reason=reason, body=body)]


def _untrusted_account(thread: Thread, snapshot: Snapshot, node: str) -> list[Action]:
    """The pass acts as an account that is not an instruction account of this job's nodes
    (an Actions run with the workflow's own token): whatever it posted, the other node
    would take for data, and the job would wait out a lease for nothing. So it does
    nothing, and says once in the thread why and how to fix it."""
    acting = snapshot.acting
    if acting is None or acting.id in party_ids(thread.job, snapshot.master):
        return []
    number = thread.issue.number
    reason = f"this pass acts as {acting.login}, which is not an instruction account of the job"
    ignore = Ignore(issue=number, comment_id=None, reason=reason)
    key = f"untrusted-account:{acting.id}"
    head = f"**relay:** the `{node}` node ran here as `{acting.login[:60]}`,"
    # the thread is the memory, not only this node's records: an Actions runner starts
    # with no local state on every run, and must still say it once
    told = any(c.author.id == acting.id and c.body.startswith(head) for c in thread.issue.comments)
    if (number, key) in snapshot.local.notices or told:
        return [ignore]
    body = (
        f"{head} an account that is"
        " not an instruction account of this job's nodes, so anything it posted would be"
        f" taken for data and the job would stall. It did nothing. To fix it, act as an"
        f" account the node table lists for `{node}`: give the workflow a GitHub App (or a"
        f" person's token) in `RELAY_TOKEN`, or add `{acting.login[:60]}` to the node's"
        f" accounts with `relay join --node {node} --accounts ...`."
    )
    return [ignore, PostNotice(issue=number, key=key, reason=reason, body=body)]


def _closed(snapshot: Snapshot, node: str) -> list[Action]:
    """The jobs that left the open list since the last pass (observe reads them once):
    one closed by someone who may not decide it is opened again."""
    actions: list[Action] = []
    for issue in snapshot.issues:
        if issue.state != "closed":
            continue
        try:
            thread = read_thread(issue, snapshot.master)
        except (NotAJob, MessageRejected):
            continue
        actions += closed_by_outsider(thread, snapshot, node)
    return actions


def _threads(snapshot: Snapshot) -> tuple[tuple[Issue, Thread | MessageRejected], ...]:
    """Every open job of the snapshot, in issue order, read (or the reason it cannot be).
    Read once per snapshot: a pass asks several rules of the same snapshot, and reading a
    thread checks every signature in it."""
    return _read_all(snapshot.issues, snapshot.master)


@lru_cache(maxsize=4)
def _read_all(
    issues: tuple[Issue, ...], master: Master
) -> tuple[tuple[Issue, Thread | MessageRejected], ...]:
    read: list[tuple[Issue, Thread | MessageRejected]] = []
    for issue in sorted(issues, key=lambda i: i.number):
        if issue.state != "open":
            continue
        try:
            read.append((issue, read_thread(issue, master)))
        except NotAJob:
            continue
        except MessageRejected as err:
            read.append((issue, err))
    return tuple(read)


def bound_threads(snapshot: Snapshot, node: str) -> list[Thread]:
    """The readable open jobs that bind ``node``: the one loop every rule here walks."""
    return [
        thread
        for _, thread in _threads(snapshot)
        if isinstance(thread, Thread) and node in (thread.job.controller, thread.job.worker)
    ]


def _unbound(snapshot: Snapshot, node: str, now: datetime) -> Action:
    """No open job binds the node: tear its watcher down, unless the watcher is new and
    waits for its first job (the usual order: join, then the controller opens a job). The
    wait ends once a job that bound the node has ended, or after FIRST_JOB_GRACE."""
    watcher = snapshot.watcher
    if watcher is not None and not _job_ended(snapshot, watcher, node):
        until = watcher.registered_at + FIRST_JOB_GRACE
        if now < until:
            return KeepWatcher(until=until)
    return TearDown()


def _job_ended(snapshot: Snapshot, watcher: WatcherFacts, node: str) -> bool:
    """Whether a job that bound the node was closed since its watcher was registered: one
    of the issues closed since then (a fact the pass fetched) is a job of the node's, by
    the same test as an open one (well formed, opened by an instruction account, signed)."""
    return any(
        binds(issue.body, node, author=issue.author.id, master=snapshot.master, issue=issue.number)
        for issue in watcher.closed_since or ()
    )


def wants_ended_check(snapshot: Snapshot, node: str, now: datetime) -> bool:
    """Whether the teardown rule needs to know if a bound job ended since the watcher was
    registered (one more request): only when nothing binds the node and the watcher is
    still within its first-job grace."""
    watcher = snapshot.watcher
    if watcher is None or watcher.closed_since is not None or snapshot.partial:
        return False
    if now >= watcher.registered_at + FIRST_JOB_GRACE:
        return False
    return not bound_threads(snapshot, node)


def claim_refs_wanted(snapshot: Snapshot, node: str) -> frozenset[TaskKey]:
    """The claim refs a pass must read before deciding: those of tasks this node (as the
    worker) is about to take. Another runner of the same node (two Actions runs) may hold
    the ref without having commented yet, or may have died in between; decide() then waits
    out its lease instead of claiming again on every pass. One request each, only then."""
    keys = set()
    for thread in bound_threads(snapshot, node):
        if thread.state not in _WORKER_TURN or thread.job.worker != node:
            continue
        task = thread.last_task
        if task and not thread.answered(task) and not thread.taken(task):
            keys.add((thread.issue.number, task))
    return frozenset(keys)


def _turn(thread: Thread, snapshot: Snapshot, node: str, now: datetime) -> list[Action]:
    if thread.state == State.INCONSISTENT:
        return _frozen(thread, snapshot, node)
    if node == thread.job.worker:
        return _worker_turn(thread, snapshot, now)
    return _controller_turn(thread, snapshot, now)


def _frozen(thread: Thread, snapshot: Snapshot, node: str) -> list[Action]:
    """Zero or several batons: nobody may act. One node says so in the thread, once per
    label state — the worker when only worker batons are on, else the controller."""
    number = thread.issue.number
    problem = baton_problem(thread.issue.labels) or "an unreadable baton"
    reason = f"frozen: the labels hold {problem}; a person must leave exactly one baton"
    ignore = Ignore(issue=number, comment_id=None, reason=reason)
    worker_batons = {Label.AWAITING_WORKER.value, Label.WORKING.value}
    batons = {b.value for b in batons_in(thread.issue.labels)}
    speaker = thread.job.worker if batons and batons <= worker_batons else thread.job.controller
    key = "frozen:" + ",".join(sorted(batons))
    if node != speaker or (number, key) in snapshot.local.notices:
        return [ignore]
    body = frozen_notice(problem)
    return [ignore, PostNotice(issue=number, key=key, reason=reason, body=body)]


def frozen_notice(problem: str) -> str:
    """The comment a person reads on a frozen job: what is wrong and what to do."""
    batons = ", ".join(f"`{b.value}`" for b in (Label.AWAITING_WORKER, Label.WORKING))
    return (
        f"**relay:** this job is frozen: its labels hold {problem}. Exactly one of"
        f" {batons} and `{Label.AWAITING_CONTROLLER.value}` must be on an open job, and"
        " nobody acts until it is. Leave the one whose turn it is (see the newest TASK"
        " or RESULT below), and relay carries on."
    )


def _worker_turn(thread: Thread, snapshot: Snapshot, now: datetime) -> list[Action]:
    number, task = thread.issue.number, thread.last_task
    if task == 0 or thread.state not in (*_WORKER_TURN, State.AWAITING_CONTROLLER):
        return []  # no TASK at all: whatever put the baton here, nothing is touched
    key = (number, task)
    if key in snapshot.local.outbox:  # the run ended; only its answer is left to finish
        return [_send_result(thread, task)]
    if thread.answered(task) or key in snapshot.local.results_posted:
        reason = f"TASK {task} is answered but the baton was not passed back"
        return [_move(thread, Event.POST_RESULT, Role.WORKER, reason)] if _at_worker(thread) else []
    if key in snapshot.local.claims or thread.taken(task) or _claimed_unread(thread, snapshot):
        return [_claimed(thread, snapshot, now)]
    takeover: str | None = None
    if key in snapshot.claim_refs:  # a claim ref and nothing else: whose, and since when?
        bare = _bare_claim(thread, snapshot, now)
        if isinstance(bare, Wait):
            return [bare]
        takeover = bare
    if thread.state == State.WORKING:
        return [_half_done(thread, now, "the baton was `working` but no claim was found")]
    if thread.state != State.AWAITING_WORKER:
        return []
    entry = thread.tasks.get(task)
    if entry is None:  # only an edited TASK holds this number: answer it, never run it
        edited = thread.task_entry(task)
        if edited is None:  # no comment of it counts: edited into garbage, or refused
            return _unreadable(thread, snapshot, task)
        reason = f"TASK {task} was edited after it was posted; post a new TASK"
        declined = _decline(thread, task, edited.comment.id, reason)
        return [declined.model_copy(update={"edited_comment": edited.comment.id})]
    assert isinstance(entry.message, TaskMsg)
    refusal = kind_refusal(thread, snapshot.master.scope) or scope_refusal(
        entry.message, snapshot.master.scope
    )
    if refusal is not None:
        return [_decline(thread, task, entry.comment.id, refusal)]
    if snapshot.unable is not None:  # answered blocked, so the controller is not left waiting
        return [_decline(thread, task, entry.comment.id, snapshot.unable)]
    if key in snapshot.ran:  # its claim and answer were deleted; the repository remembers
        reason = (
            f"TASK {task} already ran on {thread.job.worker} (its log is committed), and its"
            " claim or answer was deleted; it is not run twice: post a new TASK"
        )
        return [_decline(thread, task, entry.comment.id, reason)]
    took = claimed_unseen(thread, snapshot)
    if took is not None:  # the issue's events say it was claimed; claim and answer are gone
        reason = (
            f"TASK {task} was claimed before (`{took.actor.login[:60]}` set `working` at"
            f" {took.at:%Y-%m-%d %H:%M:%S} UTC), and its claim and answer are gone (deleted?);"
            " it may have run, so it is not run again: post a new TASK"
        )
        return [_decline(thread, task, entry.comment.id, reason)]
    approved = approval(
        thread,
        entry,
        snapshot.master,
        snapshot.reactions,
        nodes_own=_nodes_own(snapshot),
        ever_edited=snapshot.ever_edited,
    )
    needed = needs_approval(entry.message, snapshot.master.scope)
    if needed and approved is None:
        return _awaiting_approval(thread, snapshot, entry.message)
    return [
        _execute(
            thread,
            entry.message,
            entry.comment.id,
            snapshot,
            now,
            takeover=takeover,
            approved_by=approved if needed else None,
        )
    ]


OWN_ATTEMPT = "own-attempt"  # the takeover of a claim ref this node's own attempt created


def _bare_claim(thread: Thread, snapshot: Snapshot, now: datetime) -> Wait | str:
    """A claim ref with no claim comment and no local claim. When this node's own attempt
    made it (a lost answer, or a pass killed between the ref and the record) it is this
    node's: take it at once, quietly. Else another runner of this node made it and may be
    about to comment: wait a short grace from when it was first seen, then say so in the
    thread and take it over."""
    number, task = thread.issue.number, thread.last_task
    key = (number, task)
    if key in snapshot.local.attempts:
        return OWN_ATTEMPT
    # until the TASK is BARE_GRACE old and this runner has seen the ref bare for
    # BARE_SETTLE (a runner that made it posts its claim within seconds): a runner with no
    # records (an Actions runner starts with none each time) waits that out within its pass,
    # so a ref a pusher made is not waited on anew by every pass, the TASK never run
    entry = thread.task_entry(task)
    local = snapshot.local.bare_since(key)
    until = (local or now) + BARE_SETTLE
    if entry is not None:
        until = max(until, entry.comment.created_at + BARE_GRACE)
    if local is not None:  # (seen bare for the whole grace: taken over, however young)
        until = min(until, local + BARE_GRACE)
    if now < until:
        return Wait(issue=number, task=task, until=until, bare=True)
    return (
        f"**relay:** the claim ref `refs/relay/claims/{number}/{task}` of TASK {task} has no"
        f" claim: another runner of `{thread.job.worker}` made it and posted none (it was"
        " most likely stopped), or someone who can push made it. This runner takes the task"
        " over; its RESULT follows."
    )


def _nodes_own(snapshot: Snapshot) -> frozenset[int]:
    """Accounts known to be nodes' own: those that posted node messages in any job the
    pass sees, the one this node acts as (from join), and the one the pass acts as."""
    threads = [t for _, t in _threads(snapshot) if isinstance(t, Thread)]
    known = {snapshot.local.account, snapshot.acting.id if snapshot.acting else None}
    return node_accounts(threads) | {a for a in known if a is not None}


def _awaiting_approval(thread: Thread, snapshot: Snapshot, message: TaskMsg) -> list[Action]:
    """Nothing runs until a person approves; the thread says so once."""
    number, task = thread.issue.number, message.task
    reason = f"TASK {task} waits for a person's approval (`/relay approve TASK {task}` or 👍)"
    waiting: list[Action] = [Ignore(issue=number, comment_id=None, reason=reason)]
    key = f"approval:{task}"
    if (number, key) not in snapshot.local.notices:
        body = approval_notice(task, task_digest(message))
        waiting.append(PostNotice(issue=number, key=key, reason=reason, body=body))
    return waiting


def approvals_wanted(snapshot: Snapshot, node: str) -> frozenset[int]:
    """The TASK comments whose reactions a pass must read: the outstanding TASKs this node
    (as the worker) is about to take that wait for a person's approval. One request each."""
    return frozenset(comment for _, comment in _awaiting_approval_tasks(snapshot, node))


def approval_jobs(snapshot: Snapshot, node: str) -> frozenset[int]:
    """The jobs of :func:`approvals_wanted`'s TASKs: whose comments GitHub must say were
    ever edited (an approval edited within its second looks unedited to REST)."""
    return frozenset(issue for issue, _ in _awaiting_approval_tasks(snapshot, node))


def _awaiting_approval_tasks(snapshot: Snapshot, node: str) -> list[tuple[int, int]]:
    """(issue, TASK comment id) of each outstanding TASK this node is about to take that
    waits for a person's approval."""
    wanted, scope = [], snapshot.master.scope
    for thread in bound_threads(snapshot, node):
        entry = thread.tasks.get(thread.last_task)
        if thread.state != State.AWAITING_WORKER or thread.job.worker != node or entry is None:
            continue
        if isinstance(entry.message, TaskMsg) and needs_approval(entry.message, scope):
            wanted.append((thread.issue.number, entry.comment.id))
    return wanted


def _send_result(thread: Thread, task: int) -> SendResult:
    number = thread.issue.number
    if not _at_worker(thread):  # the baton is already back: post if need be, and forget
        return SendResult(issue=number, task=task, post=not thread.answered(task))
    expect, to = move(thread.state, Event.POST_RESULT, Role.WORKER)
    return SendResult(issue=number, task=task, post=not thread.answered(task), expect=expect, to=to)


def _unreadable(thread: Thread, snapshot: Snapshot, task: int) -> list[Action]:
    """The body says TASK ``task`` was posted, but no comment of it counts. When an
    instruction account's comment was made unreadable (edited into garbage), answer it
    blocked so the controller can post a new TASK; when the TASK came from an account the
    worker does not (or no longer) trust(s), it is data and gets no answer."""
    worker = snapshot.master.node(thread.job.worker)
    ignored = {comment_id for comment_id, _ in thread.ignored}
    broken = [
        c
        for c in thread.issue.comments
        if c.id in ignored and worker is not None and worker.trusts(c.author.id)
    ]
    reason = f"TASK {task} cannot be read (changed after it was posted); post a new TASK"
    if not broken:
        return [Ignore(issue=thread.issue.number, comment_id=None, reason=reason)]
    declined = _decline(thread, task, None, reason)
    if len(broken) == 1:  # the one comment made unreadable: the RESULT names its editor
        declined = declined.model_copy(update={"edited_comment": broken[0].id})
    return [declined]


def _at_worker(thread: Thread) -> bool:
    return thread.state in _WORKER_TURN


def _execute(
    thread: Thread,
    task: TaskMsg,
    comment_id: int,
    snapshot: Snapshot,
    now: datetime,
    *,
    takeover: str | None = None,
    approved_by: str | None = None,
) -> ExecuteTask:
    """Claim and run; the lease covers every step at the node's own timeout, and the
    heartbeat keeps the claim alive for a few intervals at a time within it. The claim
    names the TASK's digest, and the person whose approval it acts on."""
    until = lease_until(now, steps=len(task.steps), limits=snapshot.limits)
    claim = ClaimMsg(
        issue=task.issue,
        node=thread.job.worker,
        task=task.task,
        claimed_at=now,
        lease_until=until,
        alive_until=min(until, alive_until(now, snapshot.limits)),
        alive_for=beat_window(snapshot.limits),
        task_digest=task_digest(task),
        approved_by=approved_by if approved_by and "[" not in approved_by else None,
    )
    expect, claimed = move(thread.state, Event.CLAIM, Role.WORKER)
    _, done = move(claimed_state(), Event.POST_RESULT, Role.WORKER)
    entry = thread.task_entry(task.task)
    posted = entry.comment.created_at if entry is not None else None
    known = known_claims(thread, task.task, snapshot.local.claims, posted=posted)
    return ExecuteTask(
        issue=task.issue,
        comment_id=comment_id,
        task=task,
        claim=claim,
        claim_body=render_message(claim),
        takeover=takeover is not None,
        takeover_notice=None if takeover in (None, OWN_ATTEMPT) else takeover,
        expect=expect,
        claimed=claimed,
        done=done,
        posted=posted,
        party=frozenset(party_ids(thread.job, snapshot.master)),
        known=len(known),
    )


def claimed_state() -> State:
    """The state a claim leaves a job in, from the table (the worker's RESULT starts there)."""
    return transition(State.AWAITING_WORKER, Event.CLAIM, Role.WORKER)


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
        until = _lapses(thread, task, snapshot)
    else:
        until = _unread_lapses(thread, task, snapshot, now)
    if (number, task) in snapshot.claim_refs:
        facts.append(f"the claim ref refs/relay/claims/{number}/{task} exists")
    if (number, task) not in snapshot.local.claims and until > now:
        return Wait(issue=number, task=task, until=until)
    return _half_done(thread, now, "; ".join(facts) + "; no RESULT was posted")


def _claimed_unread(thread: Thread, snapshot: Snapshot) -> bool:
    """Whether the newest TASK was claimed though no claim of it reads: the comments'
    histories hold a claim of it its worker signed and wrote (her edit garbled the claim
    comment; whatever the baton reads as, her `working` put back over it too), or the
    baton is `working` and the issue's events say a job account set `working` after the
    TASK was posted (she deleted the comment). Then a runner waits the claim out as any
    claim, never takes its ref over as a bare one (the task may be running)."""
    if thread.state not in _WORKER_TURN:
        return False
    if _worker_claims(thread, thread.last_task, snapshot):
        return True
    return thread.state == State.WORKING and claimed_unseen(thread, snapshot) is not None


def _unread_lapses(thread: Thread, task: int, snapshot: Snapshot, now: datetime) -> datetime:
    """When a claim that no comment holds now ends, as a runner of its worker reads it:
    the latest its worker's claims in the comments' histories say, else the longest
    lease this node gives the TASK (its steps at their timeouts; a TASK whose text she
    garbled, the longest any TASK can be given), from the newest `working` a job account
    set after it (or from its posting)."""
    latest = _worker_claims_end(thread, task, snapshot)
    if latest is not None:
        return latest
    entry = thread.task_entry(task)
    took = claimed_unseen(thread, snapshot)
    start = took.at if took is not None else (entry.comment.created_at if entry else now)
    message = entry.message if entry is not None else None
    steps = len(message.steps) if isinstance(message, TaskMsg) else MAX_STEPS
    return lease_until(start, steps=steps, limits=snapshot.limits)


def _lapses(thread: Thread, task: int, snapshot: Snapshot) -> datetime:
    """When TASK ``task``'s claim ends if nothing more is heard: the latest of every valid
    claim of it in the thread (:func:`claim_entry_lapses`), not the first one's alone, and
    of every claim of it its worker signed and wrote in any comment's history read. A
    signed claim copied into an older comment of the worker's reads as the task's first
    claim, and a stood-down runner's claim put back in place of its notice does too:
    nobody beats either, and the claim that is running must still count, even where she
    garbled its comment's text (its history holds its beats)."""
    beats = _worker_claims(thread, task, snapshot)
    ends = [lapses(claim) for _, claim in beats]
    window = max((_beat_window(claim, at) for at, claim in beats), default=None)
    entries = [e for e in _claim_entries(thread, task) if isinstance(e.message, ClaimMsg)]
    # no claim of the worker's anywhere but copies she wrote last (she deleted the running
    # claim): the copies say nothing of when it ends
    alone = not _worker_claims(thread, task, snapshot, evidence=True) and all(
        _hers_last(thread, e, snapshot) for e in entries
    )
    ends += [
        claim_entry_lapses(thread, entry, snapshot, window=window, alone=alone) for entry in entries
    ]
    return max(ends)


def _task_posted(thread: Thread, task: int) -> datetime | None:
    """When TASK ``task``'s comment was posted, as the thread counts it (never an edited
    copy she may have put in a later comment); None when no such comment reads."""
    entry = thread.tasks.get(task)
    return None if entry is None else entry.comment.created_at


def _hers_last(thread: Thread, entry: Entry, snapshot: Snapshot) -> bool:
    """Whether the newest version of ``entry``'s comment, in the edit histories read, was
    written by someone other than the worker's accounts (a claim she edited in)."""
    worker = snapshot.master.node(thread.job.worker)
    return worker is not None and _hers_last_at(entry.comment.id, snapshot, worker)


def _hers_last_at(comment_id: int, snapshot: Snapshot, worker: Node) -> bool:
    versions = [v for v in snapshot.comment_edits if v.comment_id == comment_id]
    if not versions:
        return False
    newest = max(versions, key=lambda v: v.at)
    return newest.editor is None or not worker.trusts(newest.editor.id)


def _claim_entries(thread: Thread, task: int) -> list[Entry]:
    """Every comment that holds a valid claim of TASK ``task``, the first one first."""
    first = thread.claims.get(task)
    return [] if first is None else [first, *thread.more_claims.get(task, ())]


def _worker_claims(
    thread: Thread, task: int, snapshot: Snapshot, *, evidence: bool = False
) -> list[tuple[datetime, ClaimMsg]]:
    """Every version of the issue's comments, in the histories read, that its worker's
    accounts wrote and that holds a claim of TASK ``task`` the worker signed: when each was
    written, and the claim (alive a window from then: :func:`_beaten`). A version of
    theirs whose text was removed from the history is a beat too (:func:`_textless_beat`):
    her garble of the running claim's comment and removal of its beats' text leave them
    beats. ``evidence``: only what shows the worker claimed the TASK, not a textless
    posting of a comment she wrote last (the TASK's, a notice: a copy she put there)."""
    worker = snapshot.master.node(thread.job.worker)
    if worker is None or not snapshot.comment_edits:
        return []
    comments = {c.id: c for c in thread.issue.comments}
    found: list[tuple[datetime, ClaimMsg]] = []
    textless = []
    # each comment's own claims: its versions' of the worker's with text, and its text now
    own: dict[int, list[ClaimMsg]] = {}
    for entry in _claim_entries(thread, task):
        if isinstance(entry.message, ClaimMsg):
            own.setdefault(entry.comment.id, []).append(entry.message)
    retracted = _not_claim_comments(thread, task, snapshot, worker)
    for version in snapshot.comment_edits:
        comment = comments.get(version.comment_id)
        editor = version.editor
        if comment is None or editor is None or not worker.trusts(editor.id):
            continue
        if comment.id in retracted:
            continue
        if version.body is None:
            textless.append((comment, version.at))
            continue
        as_written = comment.model_copy(
            update={"author": editor, "body": version.body, "updated_at": version.at}
        )
        claim = signed_claim(thread, as_written, snapshot.master, task)
        if claim is not None:
            found.append((version.at, _beaten(claim, version.at)))
            own.setdefault(comment.id, []).append(claim)
    known = [c for claims in own.values() for c in claims]
    # no comment posted before the TASK holds a beat of its claim (an earlier TASK's claim
    # comment, its text removed, holds that claim's beats, however late its runner beat)
    since = _task_posted(thread, task)
    textless = [(c, at) for c, at in textless if since is None or c.created_at >= since]
    # the window the worker's beats with text give, for an older relay's claims (no
    # ``alive_for``), never the one such a claim's text grew to
    given = max((_beat_window(c, at) for at, c in found), default=None)
    for comment, at in textless:
        if evidence and _is_posting(comment, at) and _hers_last_at(comment.id, snapshot, worker):
            continue
        mine = own.get(comment.id)
        # the comment's own claim where it has one, else the one it was posted as, else
        # (an edit: a worker's account edits only its claim comments) the longest known
        claim = _posted_with(comment, mine or known, own=bool(mine))
        if claim is None and not _is_posting(comment, at) and known:
            claim = max(known, key=claim_window)
        if claim is None:
            continue
        beat = _textless_beat(comment, claim, at, given=given)
        if beat is not None and not mine:
            # her garble left the comment no claim of its own: the claim it was made with
            # is not known, only one of the TASK (another runner's, maybe, of a shorter
            # window): never shorter than a beat by default
            floor = min(claim.lease_until, beat[0] + _DEFAULT_WINDOW)
            if beat[1].alive_until is not None and beat[1].alive_until < floor:
                beat = (beat[0], beat[1].model_copy(update={"alive_until": floor}))
        if beat is not None:
            found.append(beat)
    return found


def _not_claim_comments(
    thread: Thread, task: int, snapshot: Snapshot, worker: Node
) -> frozenset[int]:
    """The comments whose newest version of the worker's accounts with text is no claim of
    TASK ``task`` the worker signed: a stood-down runner's claim it turned into a notice, a
    RESULT, a notice, a TASK. Their older versions (a claim its runner retracted, or one
    she edited in) are no beats of the TASK's claim."""
    comments = {c.id: c for c in thread.issue.comments}
    newest: dict[int, CommentEdit] = {}
    for version in snapshot.comment_edits:
        editor = version.editor
        if version.body is None or editor is None or not worker.trusts(editor.id):
            continue
        known = newest.get(version.comment_id)
        if known is None or version.at > known.at:
            newest[version.comment_id] = version
    out = set()
    for comment_id, version in newest.items():
        comment = comments.get(comment_id)
        if comment is None or version.editor is None or version.body is None:
            continue
        as_written = comment.model_copy(
            update={"author": version.editor, "body": version.body, "updated_at": version.at}
        )
        if signed_claim(thread, as_written, snapshot.master, task) is None:
            out.add(comment_id)
    return frozenset(out)


# A beat's window where nothing the worker signed says one (an older relay's claim whose
# beats' text is gone): the default heartbeat's, whatever the reading node's setting.
_DEFAULT_WINDOW = timedelta(seconds=DEFAULT_HEARTBEAT * MISSED_BEATS)


def _beaten(claim: ClaimMsg, at: datetime) -> ClaimMsg:
    """``claim`` as a beat its worker wrote at ``at`` (GitHub's time) keeps it: alive its
    window from then, if that is later than its text says (a claim an older relay posted
    long after its pass decided it)."""
    if claim.alive_until is None:
        return claim
    window = claim_window(claim) if claim.alive_for is not None else _DEFAULT_WINDOW
    alive = max(claim.alive_until, min(claim.lease_until, at + window))
    return claim.model_copy(update={"alive_until": alive})


def _is_posting(comment: Comment, at: datetime) -> bool:
    """Whether a version written at ``at`` is ``comment``'s posting (not an edit)."""
    return abs(at - comment.created_at) <= timedelta(seconds=1)


def _textless_beat(
    comment: Comment, claim: ClaimMsg, at: datetime, *, given: timedelta | None
) -> tuple[datetime, ClaimMsg] | None:
    """A version of the worker's accounts in ``comment`` whose text is gone, written at
    ``at``, as a beat of ``claim``: an edit at its time (a worker's account edits only
    its claim comments), the posting only in a comment posted as ``claim`` was made, at
    its ``claimed_at`` (a notice she triggered minutes after the claim and edited the
    claim into is no beat); alive the window the claim signed, else what the worker's
    beats with text say (``given``), else the default (a claim with no heartbeat lives
    to its lease whatever is heard). None: no beat."""
    if _is_posting(comment, at):
        if _posted_with(comment, (claim,)) is None:
            return None
        at = min(at, claim.claimed_at)
    if claim.alive_until is None:
        return at, claim
    if claim.alive_for is not None:
        window = claim_window(claim)
    else:
        window = given if given is not None else _DEFAULT_WINDOW
    return at, claim.model_copy(update={"alive_until": min(claim.lease_until, at + window)})


def _posted_with(
    comment: Comment, claims: Sequence[ClaimMsg], *, own: bool = True
) -> ClaimMsg | None:
    """The claim among ``claims`` that ``comment`` was posted as (within
    ``_CLAIM_POSTED`` of its ``claimed_at``: a claim comment is posted as its claim is
    made, :func:`relay.node.execute.claim`); None when it was posted at no such time (a
    notice posted later, which she edited a claim into: its versions with their text
    removed are no beats). Of the comment's ``own`` claims the nearest; of others' (her
    garble left the comment none), the longest window: a running task is never taken away
    on a shorter one another runner of the worker signed as it claimed at once."""
    near = [c for c in claims if abs(comment.created_at - c.claimed_at) <= _CLAIM_POSTED]
    if own:
        return min(
            near,
            key=lambda c: (abs(comment.created_at - c.claimed_at), -claim_window(c)),
            default=None,
        )
    return max(near, key=claim_window, default=None)


# How long after its claim was made a claim comment may be posted (the claim's time is the
# worker's clock, the comment's GitHub's; a post waited out a rate limit).
_CLAIM_POSTED = timedelta(minutes=10)


def _worker_claims_end(thread: Thread, task: int, snapshot: Snapshot) -> datetime | None:
    """When the latest of the worker's claims of TASK ``task`` in the histories read says
    it ends; None when they hold none."""
    beats = _worker_claims(thread, task, snapshot)
    return max((lapses(claim) for _, claim in beats), default=None)


def _beat_window(claim: ClaimMsg, at: datetime) -> timedelta:
    """How long a beat of the worker's keeps its claim alive, as one it wrote at ``at``
    says (the window it signed at the claim, or, from an older relay, its ``alive_until``
    less when GitHub says it was written), and half a minute for the time the write took:
    the window a version whose text is gone is given."""
    if claim.alive_for is not None:
        return claim_window(claim) + _WRITE_SLACK
    until = claim.alive_until if claim.alive_until is not None else claim.lease_until
    return until - at + _WRITE_SLACK


_WRITE_SLACK = timedelta(seconds=30)


def claim_entry_lapses(
    thread: Thread,
    entry: Entry,
    snapshot: Snapshot,
    *,
    window: timedelta | None = None,
    alone: bool = False,
) -> datetime:
    """When the claim in ``entry``'s comment ends if nothing more is heard.

    Without the comment's edit history, every edit counts as a beat
    (:func:`relay.protocol.work.claim_lapses`): a text put back by someone else says less
    than the edit that put it there. With it (read where the claim lives on by its last
    edit alone, :func:`claim_edits_wanted`), the claim ends when the newest version its
    worker's own accounts wrote, a claim of the TASK signed by the worker, says: her
    versions, and a job account's versions that hold no such claim (a notice), are no
    beats, and a worker's beats do not lengthen the window either. A version of the
    worker's whose text is gone (its body removed from the history) is a beat as
    :func:`_textless_beat` says, of the window the comment's claim signed (``alive_for``),
    or, for an older relay's claim, ``window`` (what the worker's beats with text say) or
    the default, never the one its text grew to; a version with text is a beat at its
    GitHub time too (:func:`_beaten`). A history read in part
    that holds no such version bounds the worker's last one by its oldest version listed
    (GitHub lists a hundred a page; the reader goes back ten pages for a version of the
    worker's, more edits than GitHub lets one account make in an hour)."""
    claim = entry.message
    assert isinstance(claim, ClaimMsg)
    comment = entry.comment
    versions = sorted(
        (e for e in snapshot.comment_edits if e.comment_id == comment.id),
        key=lambda e: e.at,
        reverse=True,
    )
    whole = comment.id in snapshot.edits_read
    since = _task_posted(thread, claim.task)
    if not versions:  # not read, or never edited: its text is as its author posted it
        return claim_lapses(claim, comment.updated_at)
    worker = snapshot.master.node(thread.job.worker)
    for version in versions:
        if version.editor is None or worker is None or not worker.trusts(version.editor.id):
            continue
        if version.body is None:  # its text is gone: a beat (:func:`_textless_beat`)
            if alone and _is_posting(comment, version.at):
                continue  # (the posting of a comment she made a copy of: no evidence)
            if since is not None and comment.created_at < since:
                continue  # (a comment posted before the TASK: no beat of it)
            given = window if claim.alive_for is None else None
            textless = _textless_beat(comment, claim, version.at, given=given)
            if textless is None:
                continue  # (a notice she edited the claim into: its posting is no beat)
            return max(lapses(claim), lapses(textless[1]))
        as_written = comment.model_copy(
            update={"author": version.editor, "body": version.body, "updated_at": version.at}
        )
        beat = signed_claim(thread, as_written, snapshot.master, claim.task)
        if beat is not None:
            return lapses(_beaten(beat, version.at))
    if whole:  # no version of the worker's holds this claim: the text's own word alone,
        # unless no comment's history holds one of the worker's (she deleted the running
        # claim and copied its text here): then it may be running, to its lease
        return claim.lease_until if alone else lapses(claim)
    return claim_lapses(claim, versions[-1].at)


class HistoryWanted(NamedTuple):
    """What a pass reads of an issue's edit histories: its worker's accounts (the reader
    goes back through a long history for a version of theirs) and the comments (REST ids)
    whose histories can hold one of the worker's claims of the newest TASK."""

    accounts: frozenset[int]
    comments: frozenset[int]


def claim_edits_wanted(snapshot: Snapshot, node: str, now: datetime) -> dict[int, HistoryWanted]:
    """The issues whose comments' edit histories a pass must read: those where the claim
    of the newest TASK, unanswered, would have lapsed by its own text and lives on only by
    its comment's last edit. Then who wrote what decides when the claim lapsed
    (:func:`claim_entry_lapses`). Only when it lapsed: an honest worker's beats keep its
    text's ``alive_until`` ahead of the clock, so none is asked for. Only the comments the
    worker's accounts posted (no other holds a version of theirs: a worker edits its own
    claim comment alone) and those that hold a claim of the TASK now, whoever posted them
    (whether a version of the worker's put it there is what their history says): the
    comments she posted, whatever her edits of them, are never read."""
    wanted: dict[int, HistoryWanted] = {}
    for thread in bound_threads(snapshot, node):
        task = thread.last_task
        if not task or thread.answered(task):
            continue
        entries = _claim_entries(thread, task)
        worker = snapshot.master.node(thread.job.worker)
        # (none reads while the baton is `working`: its comment garbled or deleted; or while
        # it is `awaiting:worker`, which she can set, and a comment the worker's accounts
        # posted after the TASK was edited since: its claim, garbled)
        unread = not entries and (
            thread.state == State.WORKING
            or (thread.state == State.AWAITING_WORKER and _edited_since_task(thread, task, worker))
        )
        # every claim that reads has lapsed by its text: a pass may act on it now, and the
        # running claim may be one she garbled (its beats are in its comment's history)
        lapsing = (
            bool(entries)
            and thread.state in _WORKER_TURN
            and all(isinstance(e.message, ClaimMsg) and lapses(e.message) <= now for e in entries)
        )
        if (
            unread
            or lapsing
            or any(
                isinstance(e.message, ClaimMsg)
                and lapses(e.message) <= now < claim_lapses(e.message, e.comment.updated_at)
                for e in entries
            )
        ):
            if worker is None:
                continue  # no account of its, and no claim it signed, to read
            comments = frozenset(
                {c.id for c in thread.issue.comments if worker.trusts(c.author.id)}
                | {e.comment.id for e in entries}
            )
            accounts = frozenset(a.id for a in worker.accounts)
            wanted[thread.issue.number] = HistoryWanted(accounts, comments)
    return wanted


def _edited_since_task(thread: Thread, task: int, worker: Node | None) -> bool:
    """Whether a comment the worker's accounts posted after TASK ``task``'s was edited since
    it was posted: where a claim of the worker's may have been, garbled by someone else
    (a worker that has not claimed yet has posted nothing there, so no history is read
    while an honest TASK waits for its worker)."""
    if worker is None:
        return False
    entry = thread.task_entry(task)  # (she may have garbled the TASK too: every comment then)
    posted = entry.comment.created_at if entry is not None else None
    return any(
        c.edited and (posted is None or c.created_at >= posted) and worker.trusts(c.author.id)
        for c in thread.issue.comments
    )


def _half_done(thread: Thread, now: datetime, known: str) -> ReportHalfDone:
    number, task = thread.issue.number, thread.last_task
    report = HalfDoneMsg(
        issue=number, node=thread.job.worker, task=task, known=known, reported_at=now
    )
    expect, to = move(thread.state, Event.REPORT_HALF_DONE, Role.WORKER)
    return ReportHalfDone(
        issue=number,
        task=task,
        known=known,
        report=report,
        body=render_message(report),
        expect=expect,
        to=to,
    )


def _decline(thread: Thread, task: int, comment_id: int | None, reason: str) -> DeclineTask:
    number = thread.issue.number
    result = ResultMsg(
        issue=number,
        node=thread.job.worker,
        task=task,
        status=Status.BLOCKED,
        summary=f"Not run: {reason}.",
    )
    expect, to = move(thread.state, Event.DECLINE, Role.WORKER)
    return DeclineTask(
        issue=number,
        comment_id=comment_id,
        task=task,
        reason=reason,
        result=result,
        body=render_message(result),
        expect=expect,
        to=to,
    )


def _controller_turn(thread: Thread, snapshot: Snapshot, now: datetime) -> list[Action]:
    number = thread.issue.number
    if thread.closure is not None:
        transition(thread.state, Event.RESOLVE, Role.CONTROLLER)  # only from a row of the table
        return [CloseJob(issue=number)]
    if thread.state in _WORKER_TURN:
        return _lapsed(thread, snapshot, now)
    if thread.state not in (State.AWAITING_CONTROLLER, State.PARKED):
        return []
    task = thread.outstanding()
    if task is not None and (number, task) in snapshot.local.claimed_seen:
        return claim_vanished(thread, snapshot, task)
    if task is not None and thread.state == State.AWAITING_CONTROLLER:
        reason = f"TASK {task} was posted but the baton was not passed to the worker"
        return [_move(thread, Event.POST_TASK, Role.CONTROLLER, reason)]
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


def _lapsed(thread: Thread, snapshot: Snapshot, now: datetime) -> list[Action]:
    """The worker's turn, seen by the controller: nothing to do while the worker's claim
    is alive; once it lapsed unanswered (the heartbeat stopped: the machine is off, the
    watcher gone), say so and take the baton back, so a new TASK can be posted."""
    task = thread.last_task
    claim = thread.claims.get(task)
    if thread.answered(task) or (claim is None and thread.state not in _WORKER_TURN):
        return []
    if claim is None:  # its claim garbled: it ends when the worker's last said
        latest = _worker_claims_end(thread, task, snapshot)
        if latest is None:  # (no claim of the worker's in any history read: nothing to judge)
            return []
        lapsed = latest
    else:
        lapsed = _lapses(thread, task, snapshot)
    if now < lapsed + RECLAIM_GRACE:
        return []
    worker = thread.job.worker
    reason = f"{worker}'s claim on TASK {task} lapsed at {lapsed:%Y-%m-%d %H:%M} UTC unanswered"
    body = (
        f"**relay:** `{worker}` claimed TASK {task} but has given no sign of life since"
        f" {lapsed:%Y-%m-%d %H:%M} UTC and posted no RESULT: it looks gone (the machine is"
        f" off or its watcher stopped). The baton is back with `{thread.job.controller}`;"
        f" post a new TASK to go on (`relay task {thread.issue.number} ...`). If `{worker}`"
        " comes back, it answers only the newest TASK."
    )
    expect, to = move(thread.state, Event.RECLAIM, Role.CONTROLLER)
    return [
        ReclaimTask(
            issue=thread.issue.number,
            task=task,
            key=f"reclaim:{task}",
            reason=reason,
            body=body,
            expect=expect,
            to=to,
        )
    ]


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
        body=body if body != unsigned(thread.issue.body) else None,
        trusted=trusted,
    )


def _move(thread: Thread, event: Event, role: Role, reason: str) -> MoveBaton:
    """Finish ``event``'s last act: the labels come from the table's row for it."""
    expect, to = move(thread.state, event, role)
    return MoveBaton(issue=thread.issue.number, expect=expect, to=to, event=event, reason=reason)


def kind_refusal(thread: Thread, scope: Scope) -> str | None:
    """Why this job's kind may not be delegated here (the master section's "Delegable
    jobs"), or None when it may."""
    if thread.job.kind in scope.delegable:
        return None
    delegable = ", ".join(scope.delegable) or "none"
    return (
        f"jobs of kind {thread.job.kind!r} are not delegable in this repository"
        f" (delegable jobs: {delegable})"
    )


def scope_refusal(task: TaskMsg, scope: Scope) -> str | None:
    """Why the shared scope forbids running ``task``, or None when it may run. A TASK is
    destructive by its scope or by what a step does, whatever scope it names."""
    labelled = task.scope == DESTRUCTIVE_CLASS
    found = task_destructive(task, scope.destructive_commands)
    if labelled or found:
        if scope.destructive == DestructiveRule.FORBIDDEN:
            step = f" (step {found[0]}: {found[1]})" if found else ""
            return f"destructive steps are forbidden in this repository{step}"
        if not task.authorized_by_human and found and not labelled:
            return (
                f"step {found[0]} is destructive ({found[1]}) whatever the task's scope, so the"
                " task needs `authorized-by-human: yes`, then a person's approval"
            )
        if not task.authorized_by_human:
            return "a destructive task needs `authorized-by-human: yes`, then a person's approval"
        if labelled:
            return None
    if task.scope not in scope.allowed:
        allowed = ", ".join(scope.allowed) or "nothing"
        return f"scope class {task.scope!r} is not one workers may run ({allowed})"
    return None
