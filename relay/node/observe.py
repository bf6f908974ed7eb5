"""Observe: build the protocol's Snapshot from the API and the node's own records.

An idle pass costs one request, whatever the number of open jobs: the open-issue list
(conditional, so a 304 when nothing changed). The list carries every issue's body, labels,
``updated_at`` and comment count; only the jobs binding this node whose issue changed since
their comments were last read are read further, concurrently, and the others' comments
come from the thread cache (:mod:`relay.edges.github.threads`). decide() still sees the
full thread of every job binding the node on every pass. Before a pass acts, it re-reads
the threads it acts on (:func:`refresh`): a comment edited in place does not show in the
list, and nothing is done on a thread read from the cache alone. Issues that are not relay
jobs, or that bind other nodes, cost nothing more. Which further facts are read (claim
refs, whether a job ended) is the protocol's call, not this module's.
"""

from __future__ import annotations

import asyncio
from collections.abc import Collection, Iterable
from datetime import UTC, datetime, timedelta

from relay.edges.github import GitHubClient, models
from relay.edges.github.threads import ThreadCache, threads_owner
from relay.edges.local import NodeState
from relay.errors import ConfigError, RelayError
from relay.protocol import (
    Comment,
    Issue,
    LocalRecords,
    Master,
    RunLimits,
    Snapshot,
    User,
    WatcherFacts,
    approval_jobs,
    approvals_wanted,
    baton_events_wanted,
    claim_edits_wanted,
    claim_ref,
    claim_refs_wanted,
)
from relay.protocol.snapshot import CommentEdit, LabelEvent, Reaction
from relay.protocol.tamper import closer_is_outsider
from relay.protocol.thread import binds, tampered_with

SKEW_SECONDS = 5  # how far this machine's clock may run ahead of the API's


def to_user(user: models.User) -> User:
    """An API account as the protocol sees it: a number and a login."""
    return User(id=user.id, login=user.login)


def to_comment(comment: models.Comment) -> Comment:
    """An API comment as the protocol sees it."""
    return Comment(
        id=comment.id,
        author=to_user(comment.user),
        created_at=comment.created_at,
        updated_at=comment.updated_at,
        body=comment.body,
    )


def to_issue(issue: models.Issue, comments: Iterable[models.Comment]) -> Issue:
    """An API issue with its comments as the protocol sees it."""
    return Issue(
        number=issue.number,
        title=issue.title,
        state="closed" if issue.state == "closed" else "open",
        labels=tuple(label.name for label in issue.labels),
        author=to_user(issue.user),
        body=issue.body,
        comments=tuple(to_comment(c) for c in comments),
        closed_by=to_user(issue.closed_by) if issue.closed_by is not None else None,
    )


def local_records(state: NodeState) -> LocalRecords:
    """This node's memory of claims, answered tasks and notified results."""
    claims = state.claims()
    config = state.load_config()
    revisions, claimed = state.seen()
    return LocalRecords(
        revisions=tuple(sorted(revisions.items())),
        claimed_seen=frozenset(claimed),
        account=config.account_id if config is not None else None,
        claims=frozenset((c.issue, c.task) for c in claims),
        results_posted=frozenset((c.issue, c.task) for c in claims if c.outcome is not None),
        notified=frozenset(state.notified()),
        notices=frozenset(state.notices()),
        outbox=frozenset(state.outbox()),
        attempts=frozenset(state.attempts()),
        bare_seen=tuple(state.bare_seen()),
    )


async def load_issue(gh: GitHubClient, number: int) -> Issue:
    """One issue with all its comments (both asked at once). A 404 for an issue of a
    repository the token can see means the number is wrong, and is said so."""
    try:
        issue, comments = await asyncio.gather(gh.get_issue(number), gh.list_comments(number))
    except ConfigError as err:
        if not _answered_404(err):
            raise
        try:
            await gh.get_repo()
        except RelayError:
            raise err from err.__cause__  # the repository itself is out of sight
        raise ConfigError(
            f"no issue #{number} in {gh.repo}", hint="`relay status` lists its open jobs"
        ) from err
    return to_issue(issue, comments)


def _answered_404(err: RelayError) -> bool:
    """Whether the API's answer under ``err`` was a 404."""
    import gidgethub

    cause = err.__cause__
    return isinstance(cause, gidgethub.HTTPException) and int(cause.status_code) == 404


def thread_cache(gh: GitHubClient, state: NodeState) -> ThreadCache:
    """This node's thread cache for the client's API and repository."""
    owner = threads_owner(api_url=gh.api_url, repo=gh.repo or "")
    return ThreadCache.load(state.threads_path, owner=owner)


async def observe(
    gh: GitHubClient,
    *,
    master: Master,
    state: NodeState,
    node: str,
    only: int | None = None,
    limits: RunLimits | None = None,
    watcher: WatcherFacts | None = None,
    read_now: set[int] | None = None,
    trust_notes: tuple[str, ...] = (),
) -> Snapshot:
    """What this node sees now: its open jobs (or just issue ``only``), its records, and
    the facts decide() asks for (the claim refs it names; whether a job ended). The jobs
    whose comments were read now, not taken from the cache, are added to ``read_now``."""
    cache = thread_cache(gh, state)
    known: dict[int, list[models.Comment] | None] = {}
    if only is not None:  # one issue, most likely changed (a webhook said so): both at once
        one, comments = await asyncio.gather(gh.get_issue(only), gh.list_comments(only))
        found = [one]
        cache.put(one, comments)
    else:
        found = await gh.list_issues(state="open")
    bound = [
        i
        for i in found
        if not i.is_pull_request
        and (
            binds(i.body, node, author=i.user.id, master=master, issue=i.number)
            or tampered_with(i.body, node, author=i.user.id, master=master, issue=i.number)
        )
    ]
    if only is None:  # a job this node bound last pass and no longer open: who closed it?
        gone = sorted(cache.numbers() - {i.number for i in bound})
        closed = await asyncio.gather(*(gh.get_issue(n) for n in gone[:20]))
        bound += [i for i in closed if i.state == "closed"]
    known = {i.number: cache.comments(i) for i in bound}
    changed = [i for i in bound if known[i.number] is None]
    for issue, comments in zip(
        changed, await asyncio.gather(*(gh.list_comments(i.number) for i in changed)), strict=True
    ):
        cache.put(issue, comments)
        known[issue.number] = comments
    if read_now is not None:
        read_now.update(i.number for i in changed)
        read_now.update(i.number for i in bound if i.number == only)
    if only is None:  # a job an outsider closed is opened again: look at it next pass too
        closers = {i.number: i.closed_by.id for i in bound if i.closed_by is not None}
        open_or_reopened = [
            i.number
            for i in bound
            if i.state != "closed" or closer_is_outsider(closers.get(i.number), master)
        ]
        cache.keep(set(open_or_reopened))
    cache.save(state.threads_path)
    snapshot = Snapshot(
        master=master,
        issues=tuple(to_issue(i, known[i.number] or ()) for i in bound),
        partial=only is not None,
        local=local_records(state),
        limits=limits or RunLimits(),
        watcher=watcher,
        trust_notes=trust_notes,
    )
    return await with_claim_refs(gh, snapshot, node)


async def with_claim_refs(gh: GitHubClient, snapshot: Snapshot, node: str) -> Snapshot:
    """The snapshot with the facts decide() asks for — the claim refs it names and the
    reactions on the TASKs waiting for a person's approval — one request each, concurrently."""
    wanted = sorted(claim_refs_wanted(snapshot, node))
    asked = sorted(approvals_wanted(snapshot, node))
    moved = sorted(baton_events_wanted(snapshot, node, datetime.now(UTC)))
    waiting = sorted(approval_jobs(snapshot, node))
    beaten = claim_edits_wanted(snapshot, node, datetime.now(UTC))
    found, reacted, evented, edits, histories = await asyncio.gather(
        asyncio.gather(*(gh.get_ref(claim_ref(*key)) for key in wanted)),
        asyncio.gather(*(gh.list_reactions(comment_id) for comment_id in asked)),
        asyncio.gather(*(gh.list_issue_events(number) for number in moved)),
        asyncio.gather(*(gh.ever_edited(number) for number in waiting)),
        asyncio.gather(*(gh.comment_edits(number, *beaten[number]) for number in beaten)),
    )
    ever_edited = frozenset(i for known in edits if known is not None for i in known)
    comment_edits = tuple(
        CommentEdit(
            comment_id=e.comment_id,
            editor=None if e.editor is None else to_user(e.editor),
            at=e.edited_at,
            body=e.body,
        )
        for read in histories
        if read is not None
        for e in read[0]
    )
    edits_read = frozenset(i for read in histories if read is not None for i in read[1])
    refs = frozenset(key for key, ref in zip(wanted, found, strict=True) if ref is not None)
    reactions = tuple(
        Reaction(
            comment_id=comment_id,
            user=to_user(r.user),
            content=r.content,
            created_at=r.created_at,
        )
        for comment_id, listed in zip(asked, reacted, strict=True)
        for r in listed
        if r.user is not None
    )
    events = tuple(
        event
        for number, listed in zip(moved, evented, strict=True)
        for event in to_label_events(number, listed)
    )
    update = {
        "claim_refs": refs,
        "reactions": reactions,
        "label_events": events,
        "ever_edited": ever_edited,
        "comment_edits": comment_edits,
        "edits_read": edits_read,
    }
    return snapshot.model_copy(update=update)


def to_label_events(number: int, listed: Iterable[models.IssueEvent]) -> list[LabelEvent]:
    """An issue's label events as the protocol reads them (who added or removed which)."""
    return [
        LabelEvent(
            id=e.id,
            issue=number,
            actor=to_user(e.actor),
            action="labeled" if e.event == "labeled" else "unlabeled",
            label=e.label.name,
            at=e.created_at,
        )
        for e in listed
        if e.event in ("labeled", "unlabeled") and e.actor is not None and e.label is not None
    ]


async def refresh(
    gh: GitHubClient, snapshot: Snapshot, *, state: NodeState, node: str, numbers: Collection[int]
) -> Snapshot:
    """The snapshot with the issues ``numbers`` read afresh (issue and comments, all at
    once): what a pass does before it acts on them. The claim refs are read again when a
    thread turned out to differ from the one decided on."""
    wanted = [i for i in snapshot.issues if i.number in numbers]
    if not wanted:
        return snapshot
    read = await asyncio.gather(
        *(asyncio.gather(gh.get_issue(i.number), gh.list_comments(i.number)) for i in wanted)
    )
    cache = thread_cache(gh, state)
    fresh: dict[int, Issue] = {}
    for issue, comments in read:
        cache.put(issue, comments)
        fresh[issue.number] = to_issue(issue, comments)
    cache.save(state.threads_path)
    issues = tuple(fresh.get(i.number, i) for i in snapshot.issues)
    if issues == snapshot.issues:
        return snapshot
    return await with_claim_refs(gh, snapshot.model_copy(update={"issues": issues}), node)


async def closed_since(gh: GitHubClient, *, since: datetime) -> tuple[Issue, ...]:
    """The issues closed since ``since`` (less a few seconds of clock skew between this
    machine and the API), as the teardown rule reads them: one request, asked only when
    decide() wants it (:func:`relay.protocol.wants_ended_check`)."""
    start = since.replace(microsecond=0) - timedelta(seconds=SKEW_SECONDS)
    closed = await gh.list_issues(state="closed", since=start)
    return tuple(
        to_issue(i, ())
        for i in closed
        if not i.is_pull_request and i.closed_at is not None and i.closed_at >= start
    )
