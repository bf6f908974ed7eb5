"""Observe: build the protocol's Snapshot from the API and the node's own records.

One pass costs one request for the open-issue list plus one per job that binds this
node; with the ETag cache on disk an idle pass is answered by 304s only. Issues that are
not relay jobs, or that bind other nodes, cost nothing more. Which further facts are read
(claim refs, whether a job ended) is the protocol's call, not this module's.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime, timedelta

from relay.edges.github import GitHubClient, models
from relay.edges.local import NodeState
from relay.protocol import (
    Comment,
    Issue,
    LocalRecords,
    Master,
    RunLimits,
    Snapshot,
    User,
    WatcherFacts,
    approvals_wanted,
    claim_ref,
    claim_refs_wanted,
)
from relay.protocol.snapshot import Reaction
from relay.protocol.thread import binds

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
    )


def local_records(state: NodeState) -> LocalRecords:
    """This node's memory of claims, answered tasks and notified results."""
    claims = state.claims()
    return LocalRecords(
        claims=frozenset((c.issue, c.task) for c in claims),
        results_posted=frozenset((c.issue, c.task) for c in claims if c.outcome is not None),
        notified=frozenset(state.notified()),
        notices=frozenset(state.notices()),
        outbox=frozenset(state.outbox()),
    )


async def load_issue(gh: GitHubClient, number: int) -> Issue:
    """One issue with all its comments."""
    issue = await gh.get_issue(number)
    return to_issue(issue, await gh.list_comments(number))


async def observe(
    gh: GitHubClient,
    *,
    master: Master,
    state: NodeState,
    node: str,
    only: int | None = None,
    limits: RunLimits | None = None,
    watcher: WatcherFacts | None = None,
) -> Snapshot:
    """What this node sees now: its open jobs (or just issue ``only``), its records, and
    the facts decide() asks for (the claim refs it names; whether a job ended)."""
    if only is not None:
        found = [await gh.get_issue(only)]
    else:
        found = await gh.list_issues(state="open")
    issues = []
    for issue in found:
        if issue.is_pull_request or not binds(
            issue.body, node, author=issue.user.id, master=master
        ):
            continue
        issues.append(to_issue(issue, await gh.list_comments(issue.number)))
    snapshot = Snapshot(
        master=master,
        issues=tuple(issues),
        partial=only is not None,
        local=local_records(state),
        limits=limits or RunLimits(),
        watcher=watcher,
    )
    refs = set()
    for key in sorted(claim_refs_wanted(snapshot, node)):
        if await gh.get_ref(claim_ref(*key)) is not None:
            refs.add(key)
    reactions = []
    for comment_id in sorted(approvals_wanted(snapshot, node)):
        reactions += [
            Reaction(comment_id=comment_id, user=to_user(r.user), content=r.content)
            for r in await gh.list_reactions(comment_id)
            if r.user is not None
        ]
    return snapshot.model_copy(
        update={"claim_refs": frozenset(refs), "reactions": tuple(reactions)}
    )


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
