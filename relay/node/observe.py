"""Observe: build the protocol's Snapshot from the API and the node's own records.

One pass costs one request for the open-issue list plus one per job that binds this
node; with the ETag cache on disk an idle pass is answered by 304s only. Issues that are
not relay jobs, or that bind other nodes, cost nothing more.
"""

from __future__ import annotations

from collections.abc import Iterable

from relay.edges import github as gh_models
from relay.edges.github import GitHubClient
from relay.edges.local import NodeState
from relay.protocol import Comment, Issue, LocalRecords, Master, Snapshot, User, parse_body
from relay.protocol.labels import Label
from relay.protocol.wire import MARKER, MessageRejected


def binds(body: str, node: str) -> bool:
    """Whether an issue body is a relay job with ``node`` as controller or worker."""
    if MARKER not in body:
        return False
    try:
        job = parse_body(body)
    except MessageRejected:
        return True  # malformed: let decide() report it as data for this node
    return node in (job.controller, job.worker)


def to_user(user: gh_models.User) -> User:
    """An API account as the protocol sees it: a number and a login."""
    return User(id=user.id, login=user.login)


def to_comment(comment: gh_models.Comment) -> Comment:
    """An API comment as the protocol sees it."""
    return Comment(
        id=comment.id,
        author=to_user(comment.user),
        created_at=comment.created_at,
        updated_at=comment.updated_at,
        body=comment.body,
    )


def to_issue(issue: gh_models.Issue, comments: Iterable[gh_models.Comment]) -> Issue:
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
) -> Snapshot:
    """What this node sees now: its open jobs (or just issue ``only``) and its records."""
    if only is not None:
        found = [await gh.get_issue(only)]
    else:
        found = await gh.list_issues(state="open")
    issues = []
    for issue in found:
        if issue.is_pull_request or not binds(issue.body, node):
            continue
        issues.append(to_issue(issue, await gh.list_comments(issue.number)))
    refs = await claim_refs(gh, issues, master=master, node=node)
    return Snapshot(
        master=master, issues=tuple(issues), local=local_records(state), claim_refs=refs
    )


async def claim_refs(
    gh: GitHubClient, issues: Iterable[Issue], *, master: Master, node: str
) -> frozenset[tuple[int, int]]:
    """The claim refs of tasks this node is about to take (one request each, only then).

    Another runner of the same node (two Actions runs) may hold the ref without having
    commented yet, or may have died in between; decide() waits out its lease instead of
    trying to claim again on every pass.
    """
    from relay.protocol.thread import NotAJob, read_thread

    keys = set()
    for issue in issues:
        if not {Label.AWAITING_WORKER.value, Label.WORKING.value} & set(issue.labels):
            continue
        try:
            thread = read_thread(issue, master)
        except (NotAJob, MessageRejected):
            continue
        task = thread.last_task
        answered = thread.answered(task) if task else False
        if thread.job.worker != node or not task or answered or thread.taken(task):
            continue
        if await gh.get_ref(f"refs/relay/claims/{issue.number}/{task}") is not None:
            keys.add((issue.number, task))
    return frozenset(keys)
