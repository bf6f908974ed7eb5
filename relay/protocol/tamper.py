"""What a collaborator can do to a job without a key, undone: the rules that keep a job
where relay left it.

Ground rules: pure, like :mod:`relay.protocol.decide`, which calls them. A body older than
the newest a node has seen is refused (nothing goes backwards); a task a controller saw
claimed is never handed back (nothing runs twice); a label moved by someone who is neither
a node nor an instruction account is named and not followed (`resolved` without relay's
closure, `working` on a TASK nobody claimed, `needs:human` taken off by someone the
controller does not obey); and what the branch says that a node does not follow (its
roster, the API URL) is said once in each job that binds the node.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from dataclasses import replace
from datetime import datetime

from relay.protocol.actions import Action, Ignore, PostNotice, ReopenJob
from relay.protocol.baton import State
from relay.protocol.body import STRIKE_LIMIT
from relay.protocol.labels import BATONS, Label
from relay.protocol.master import Master
from relay.protocol.snapshot import Issue, LabelEvent, Snapshot
from relay.protocol.thread import Thread, party_ids


def rolled_back(thread: Thread, snapshot: Snapshot, node: str) -> list[Action]:
    """A job body older than the newest this node has seen (an earlier signed body put
    back: it would rewind the state, the strikes and the task count): nothing is done on
    it, and the thread is told once, with how the controller repairs it."""
    seen = snapshot.local.revision_seen(thread.issue.number)
    if thread.job.revision >= seen:
        return []
    number = thread.issue.number
    reason = (
        f"the job body is revision {thread.job.revision}, older than revision {seen} this"
        " node has seen (put back by someone?)"
    )
    actions: list[Action] = [Ignore(issue=number, comment_id=None, reason=reason)]
    key = f"rollback:{seen}"
    if (number, key) not in snapshot.local.notices:
        body = (
            f"**relay:** `{node}` does not act on this job: {reason}. Nothing goes backwards;"
            f" the controller `{thread.job.controller}` writes the body again from its own"
            f" record with `relay job repair {number}`."
        )
        notice = PostNotice(issue=number, key=key, reason=reason, body=body, name_editor="body")
        actions.append(notice)
    return actions


def trust_notices(thread: Thread, snapshot: Snapshot, node: str) -> list[PostNotice]:
    """What the branch says that this node does not follow (a roster revision it refused,
    a hand-edited node table, another API URL), said once in each job that binds it."""
    number = thread.issue.number
    told = []
    for note in snapshot.trust_notes:
        key = "trust:" + hashlib.sha256(f"{node}:{note}".encode()).hexdigest()[:16]
        if (number, key) in snapshot.local.notices:
            continue
        body = (
            f"**relay:** `{node}` does not follow what the repository says here: {note}."
            " Only a roster revision signed by a key the nodes already trust changes whom"
            " they obey (`relay nodes` lists it)."
        )
        told.append(PostNotice(issue=number, key=key, reason=note, body=body))
    return told


def claim_vanished(thread: Thread, snapshot: Snapshot, task: int) -> list[Action]:
    """The controller saw TASK ``task`` claimed, and now its claim (and any answer) is gone:
    deleted. It is never handed to the worker again (a worker without local records would
    run it twice); the job stalls visibly until a new TASK is posted."""
    number = thread.issue.number
    reason = f"TASK {task} was claimed, and its claim is gone (deleted?); it is not handed back"
    actions: list[Action] = [Ignore(issue=number, comment_id=None, reason=reason)]
    key = f"vanished:{task}"
    if (number, key) not in snapshot.local.notices:
        body = (
            f"**relay:** TASK {task} was claimed by `{thread.job.worker}` (this node saw the"
            " claim), but the claim and any answer are gone from the thread. A task that was"
            " claimed is never handed out again, so nothing runs twice: post a new TASK to go"
            f" on (`relay task {number} ...`)."
        )
        actions.append(PostNotice(issue=number, key=key, reason=reason, body=body))
    return actions


def outsider_may_have(thread: Thread, snapshot: Snapshot, node: str) -> bool:
    """Whether a label on the job may be an outsider's that relay must not follow: a
    `working` on a TASK nobody claimed (seen by the worker), or `needs:human` gone after a
    third strike (seen by the controller). The label events say who moved it."""
    task = thread.last_task
    at_worker = (State.WORKING, State.AWAITING_WORKER)
    if node == thread.job.worker and thread.state in at_worker:
        # about to run a TASK: the baton must be where a node or instruction account put
        # it (an outsider's `awaiting:worker` over a task whose claim and answer she
        # deleted would have a worker without local records run it twice)
        local = (thread.issue.number, task) in snapshot.local.claims
        return task > 0 and not thread.taken(task) and not local
    struck = any(h.strikes >= STRIKE_LIMIT for h in thread.job.hypotheses)
    if node == thread.job.controller and thread.state == State.AWAITING_CONTROLLER:
        return struck
    if node == thread.job.controller and thread.state == State.PARKED:
        return not struck  # parked with no third strike: who put `needs:human` there?
    return False


def parked_by_outsider(
    thread: Thread, events: tuple[LabelEvent, ...], master: Master
) -> LabelEvent | None:
    """The event that put `needs:human` on a job no strike escalated, when the account that
    did it is neither a node of the job nor an instruction account: then the job is not
    parked (her label would stall it, and the controller could post nothing)."""
    if thread.state != State.PARKED or any(
        h.strikes >= STRIKE_LIMIT for h in thread.job.hypotheses
    ):
        return None
    newest = _newest_in(events, thread.issue.number, Label.NEEDS_HUMAN.value, "labeled")
    if newest is None:
        return None
    return None if newest.actor.id in party_ids(thread.job, master) else newest


def handed_by_party(thread: Thread, snapshot: Snapshot, party: set[int]) -> bool:
    """Whether the newest baton a job's account put on since the newest TASK was posted
    (in its second or later: times are whole seconds, ids in order) is `awaiting:worker`:
    the TASK was handed to the worker and no account of the job moved the baton since, so
    an outsider's taking that label off and putting it back (her event is then the newest)
    changes nothing. A TASK taken back by its controller (`awaiting:controller` after the
    hand-over) or claimed (`working`) stays so, whatever she puts on after it."""
    entry = thread.task_entry(thread.last_task)
    if entry is None:
        return False
    second = entry.comment.created_at.replace(microsecond=0)
    moves = [
        e
        for e in snapshot.label_events
        if e.issue == thread.issue.number
        and e.action == "labeled"
        and e.label in {b.value for b in BATONS}
        and e.actor.id in party
        and e.at.replace(microsecond=0) >= second
    ]
    newest = max(moves, key=lambda e: (e.at, e.id), default=None)
    return newest is not None and newest.label == Label.AWAITING_WORKER.value


def _newest(snapshot: Snapshot, number: int, label: str, action: str) -> LabelEvent | None:
    return _newest_in(snapshot.label_events, number, label, action)


def _newest_in(
    events: tuple[LabelEvent, ...], number: int, label: str, action: str
) -> LabelEvent | None:
    """The newest event that added (or removed) ``label`` on issue ``number``."""
    found = [e for e in events if e.issue == number and e.label == label and e.action == action]
    return max(found, key=lambda e: (e.at, e.id)) if found else None


def unparked_by_outsider(
    thread: Thread, events: tuple[LabelEvent, ...], master: Master
) -> LabelEvent | None:
    """The event that took `needs:human` off a job parked by its strikes, when the account
    that did it is not one of the controller's instruction accounts (a person the job's
    controller obeys is who decides to go on): then the job stays parked."""
    if not any(h.strikes >= STRIKE_LIMIT for h in thread.job.hypotheses):
        return None
    newest = _newest_in(events, thread.issue.number, Label.NEEDS_HUMAN.value, "unlabeled")
    if newest is None:
        return None
    row = master.node(thread.job.controller)
    return None if row is not None and row.trusts(newest.actor.id) else newest


def as_relay_left_it(thread: Thread, snapshot: Snapshot, node: str) -> tuple[Thread, list[Action]]:
    """The thread with the labels relay does not follow undone for deciding, and what the
    thread should be told once: a `resolved` flag with no closure of relay's (it would
    stall the job in silence), a `working` an outsider put on a TASK nobody claimed (it
    would spend the TASK as half-done), `needs:human` taken off by someone the controller
    does not obey (as if a person had decided)."""
    number, labels = thread.issue.number, thread.issue.labels
    open_issue = thread.issue.state == "open"
    flagged = Label.RESOLVED.value in labels and thread.closure is None and open_issue
    said: list[Action] = []
    if flagged:  # read_thread already decides as if the label were not there
        reason = "the `resolved` label is on the job but relay's closure is not"
        told: list[Action] = [Ignore(issue=number, comment_id=None, reason=reason)]
        key = "resolved-flag"
        if node == thread.job.controller and (number, key) not in snapshot.local.notices:
            body = (
                f"**relay:** {reason}, so relay does not stop for it: only `relay resolve"
                f" {number}` on the controller resolves a job. Remove the label, or resolve"
                " the job."
            )
            told.append(PostNotice(issue=number, key=key, reason=reason, body=body))
        said = told
    if not outsider_may_have(thread, snapshot, node):
        return thread, said
    party = party_ids(thread.job, snapshot.master)
    # a baton an outsider put on the worker's side: read as the state before her move
    undo = {
        State.AWAITING_WORKER: (Label.AWAITING_WORKER, State.AWAITING_CONTROLLER, "the job"),
        State.WORKING: (Label.WORKING, State.AWAITING_WORKER, "a TASK nobody claimed"),
    }
    if thread.state in undo:
        label, before, where = undo[thread.state]
        put = _newest(snapshot, number, label.value, "labeled")
        if put is None or put.actor.id in party:
            return thread, said
        if thread.state is State.AWAITING_WORKER and handed_by_party(thread, snapshot, party):
            return thread, said  # hers is newest, but the job's last move was the hand-over
        why = f"outsider {put.actor.login[:60]} put `{label.value}` on {where}; not followed"
        ignore = Ignore(issue=number, comment_id=None, reason=why)
        return replace(thread, state=before), [*said, ignore]
    parked = parked_by_outsider(thread, snapshot.label_events, snapshot.master)
    if parked is not None:
        who = parked.actor.login[:60]
        reason = f"{who} put `needs:human` on the job, which no strike escalated; not followed"
        notes: list[Action] = [Ignore(issue=number, comment_id=None, reason=reason)]
        key = f"parked-by:{parked.id}"
        if (number, key) not in snapshot.local.notices:
            body = (
                f"**relay:** `{who}` added `needs:human`, but `{who}` is neither a node of this"
                " job nor one of its instruction accounts, and no third strike escalated it:"
                " relay does not park the job for it. The controller's next TASK takes the"
                " label off."
            )
            notes.append(PostNotice(issue=number, key=key, reason=reason, body=body))
        return replace(thread, state=State.AWAITING_CONTROLLER), [*said, *notes]
    took = unparked_by_outsider(thread, snapshot.label_events, snapshot.master)
    if took is None:
        return thread, said
    who = took.actor.login[:60]
    reason = f"{who} took `needs:human` off, and the controller does not obey {who}"
    told = [Ignore(issue=number, comment_id=None, reason=reason)]
    key = f"unparked:{took.id}"
    if (number, key) not in snapshot.local.notices:
        body = (
            f"**relay:** `{who}` removed `needs:human`, but only one of the instruction accounts"
            f" of `{thread.job.controller}` decides that a parked job goes on: relay keeps it"
            " parked. Such a person removes the label again (add it back first)."
        )
        told.append(PostNotice(issue=number, key=key, reason=reason, body=body))
    return replace(thread, state=State.PARKED), [*said, *told]


def tampered_notice(issue: Issue, reason: str, snapshot: Snapshot, node: str) -> list[Action]:
    """A job of this node's whose body no longer verifies (changed by someone else, or an
    old one put back): said once in the thread by its controller, with the way out. The
    body's digest keys the notice, so each tampering is said once."""
    from relay.protocol.thread import tampered_with

    master, number = snapshot.master, issue.number
    if not tampered_with(issue.body, node, author=issue.author.id, master=master, issue=number):
        return []
    key = "tampered-body:" + hashlib.sha256(issue.body.encode()).hexdigest()[:16]
    if (number, key) in snapshot.local.notices:
        return []
    body = (
        f"**relay:** `{node}` does not act on this job: {reason}. Someone other than the"
        f" controller changed the issue body; nothing is done on it until `{node}` writes it"
        f" again from its own record: `relay job repair {number}`."
    )
    return [PostNotice(issue=number, key=key, reason=reason, body=body, name_editor="body")]


def task_to_repost(thread: Thread, kept: int, claimed: set[tuple[int, int]]) -> str | None:
    """Why the controller's kept TASK ``kept`` is posted again by `relay job repair`, or
    None when it is not: only a TASK whose comment is gone, that nobody answered or
    claimed, and that this node never saw claimed (a task that was claimed may have run;
    it is never handed out twice)."""
    number = thread.issue.number
    if kept <= 0 or kept in thread.tasks or thread.answered(kept) or thread.taken(kept):
        return None
    if (number, kept) in claimed:
        return None
    return f"TASK {kept} is gone from the thread (deleted?) and never ran"


def claimed_unseen(thread: Thread, snapshot: Snapshot) -> LabelEvent | None:
    """Evidence in the issue's events (which nobody can delete) that the newest TASK was
    claimed though no claim of it is left: a job's account set `working` after the TASK
    was posted. Then the TASK may have run, and a worker without local records never runs
    it again. None: no such evidence."""
    entry = thread.task_entry(thread.last_task)
    return claimed_by_events(
        thread,
        thread.last_task,
        snapshot.label_events,
        snapshot.master,
        snapshot.local.claims,
        posted=entry.comment.created_at if entry is not None else None,
    )


def claimed_by_events(
    thread: Thread,
    task: int,
    label_events: Iterable[LabelEvent],
    master: Master,
    claimed: Iterable[tuple[int, int]],
    *,
    posted: datetime | None = None,
) -> LabelEvent | None:
    """The issue's events' evidence that TASK ``task`` was claimed, whatever comments and
    refs were deleted since; None when there is none. With ``posted`` (when its comment
    was posted): a job's account set `working` after it (in its own second, after the
    first pass of the baton then), whatever comments are left. Only a whole task cycle
    within one second is ambiguous, and then it refuses. Without it (the TASK's comment is
    gone): the job's accounts set `working` more often than the claims known for the TASKs
    before it account for (``claimed``: this node's records of its claims)."""
    number = thread.issue.number
    claims = claims_since(label_events, number, party_ids(thread.job, master), posted)
    known = known_claims(thread, task, claimed, posted=posted)
    return claims[-1] if len(claims) > len(known) else None


def known_claims(
    thread: Thread, task: int, claimed: Iterable[tuple[int, int]], *, posted: datetime | None
) -> set[int]:
    """The earlier TASKs whose claims account for `working` events ``claims_since`` counts
    for TASK ``task``: with ``posted``, those this node's own records (``claimed``) say it
    claimed that were posted within that same second; without it, every earlier TASK the
    thread shows taken, and those."""
    number = thread.issue.number
    second = posted.replace(microsecond=0) if posted is not None else None
    mine = {m for n, m in claimed if n == number and m < task}
    if second is None:
        known = {m for m in range(1, task) if thread.taken(m)} | mine
    else:  # every `working` since counts (a claim's comment can be deleted, or its signed
        # block moved into a later comment), but those of the earlier TASKs this node's own
        # records say it claimed, posted within that same second
        known = {
            m
            for m in mine
            if (entry := thread.task_entry(m)) is not None
            and entry.comment.created_at.replace(microsecond=0) == second
        }
    return known


def claims_since(
    label_events: Iterable[LabelEvent], number: int, party: set[int], posted: datetime | None
) -> list[LabelEvent]:
    """Every `working` an account of the job (``party``) set on issue ``number`` since a
    TASK was posted at ``posted`` (all of them without it), oldest first: each is a claim,
    of that TASK or of a later one. Within the second it was posted (times are whole
    seconds, ids in order) what came before the first pass of the baton then was an
    earlier TASK's (the first, not the last: a pass handed back within that second must
    not hide a claim)."""
    moves = sorted(
        (e for e in label_events if e.issue == number and e.action == "labeled"),
        key=lambda e: (e.at, e.id),
    )
    second = posted.replace(microsecond=0) if posted is not None else None
    handed = min(
        (
            e.id
            for e in moves
            if e.at.replace(microsecond=0) == second
            and e.label == Label.AWAITING_WORKER.value
            and e.actor.id in party
        ),
        default=None,
    )
    return [
        e
        for e in moves
        if e.label == Label.WORKING.value
        and e.actor.id in party
        and (
            second is None
            or e.at.replace(microsecond=0) > second
            or (e.at.replace(microsecond=0) == second and (handed is None or e.id > handed))
        )
    ]


def closer_is_outsider(closer: int | None, master: Master) -> bool:
    """Whether the account (id) that closed a job is no node's and no instruction
    account's: then the job will be opened again, so a pass keeps reading it."""
    return closer is not None and all(
        closer not in {a.id for a in n.accounts} for n in master.nodes
    )


def closed_by_outsider(thread: Thread, snapshot: Snapshot, node: str) -> list[Action]:
    """A job closed with no closure of relay's, by an account that is neither a node of the
    job nor an instruction account (a collaborator with triage access): its controller opens
    it again and names her once; the job does not stall in silence. Closed by one of the
    job's own people, it stays closed (a person decided)."""
    closer = thread.issue.closed_by
    if node != thread.job.controller or thread.closure is not None or closer is None:
        return []
    if closer.id in party_ids(thread.job, snapshot.master):
        return []
    number, who = thread.issue.number, closer.login[:60]
    reason = f"{who} closed the job, and {who} may not decide it; opened again"
    actions: list[Action] = [ReopenJob(issue=number)]
    key = f"closed-by:{closer.id}:{thread.job.revision}"
    if (number, key) not in snapshot.local.notices:
        body = (
            f"**relay:** `{who}` closed this job, but `{who}` is neither a node of it nor one"
            f" of its instruction accounts, so `{node}` opened it again. Only `relay resolve"
            f" {number}` on the controller (or one of its people closing it) ends a job."
        )
        actions.append(PostNotice(issue=number, key=key, reason=reason, body=body))
    return actions
