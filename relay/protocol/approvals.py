"""A person's approval of a destructive TASK: ``authorized-by-human: yes`` is a claim the
controller makes; only a person can make it true.

Ground rules: a TASK that says ``authorized-by-human: yes`` runs only once an approver has
approved *that* TASK in the thread, after it was posted — a comment ``/relay approve TASK
n [DIGEST]`` never edited after it was posted (the digest, when given, must be the TASK's),
or a 👍 reaction given after the TASK was posted on a TASK comment never edited (a
reaction stays on a comment whatever the comment is edited into). An approver is one of
the worker's instruction accounts that is a person: not a bot (``…[bot]``), not the
account that posted the TASK, and not a node's own account, which would be approving
itself: one that posted any node's message in a job the pass sees, the account this node
acts as (recorded at join), or the one the pass found it acts as. Reactions are a fact
the pass reads only for the TASKs :func:`approvals_wanted` names.

A TASK is destructive by its scope (``destructive``) or by what one of its steps does
(:func:`destructive_step`), whatever scope the controller typed: either way it needs
``authorized-by-human: yes`` and then a person's approval.
"""

from __future__ import annotations

import re

from relay.protocol.destructive import task_destructive
from relay.protocol.master import DESTRUCTIVE_CLASS, Master, Scope
from relay.protocol.messages import TaskMsg, task_digest
from relay.protocol.snapshot import Comment, Reaction
from relay.protocol.thread import Entry, Thread

APPROVE_RE = re.compile(
    r"^\s*/relay\s+approve\s+TASK\s+(\d+)(?:\s+([0-9a-f]{12,64}))?\s*$", re.IGNORECASE
)
THUMBS_UP = "+1"


def approver_ids(
    thread: Thread, master: Master, *, posted_by: int, nodes_own: frozenset[int] = frozenset()
) -> frozenset[int]:
    """The accounts whose approval counts for a TASK posted by account ``posted_by``;
    ``nodes_own``: accounts known to be nodes' own, never a person's."""
    worker = master.node(thread.job.worker)
    if worker is None:
        return frozenset()
    nodes = {posted_by} | {e.comment.author.id for e in _messages(thread)} | nodes_own
    people = (a for a in worker.accounts if not a.login.endswith("[bot]"))
    return frozenset(a.id for a in people if a.id not in nodes)


def _messages(thread: Thread) -> list[Entry]:
    """Every message that counts in the thread: their authors are the nodes' accounts."""
    kept = [*thread.tasks.values(), *thread.results.values(), *thread.half_done.values()]
    return [*kept, *thread.claims.values(), *([thread.closure] if thread.closure else [])]


def node_accounts(threads: list[Thread]) -> frozenset[int]:
    """The accounts that posted a node's message in any of ``threads``."""
    return frozenset(e.comment.author.id for t in threads for e in _messages(t))


def approval(
    thread: Thread,
    entry: Entry,
    master: Master,
    reactions: tuple[Reaction, ...],
    *,
    nodes_own: frozenset[int] = frozenset(),
    ever_edited: frozenset[int] = frozenset(),
) -> str | None:
    """The login of the person who approved the TASK in ``entry``, or None. A comment in
    ``ever_edited`` (GitHub's record) counts as edited whatever its timestamps say."""
    assert isinstance(entry.message, TaskMsg)
    task, posted = entry.message.task, entry.comment
    if posted.edited or posted.id in ever_edited:  # a 👍 stays on a comment whatever it is
        return None
    people = approver_ids(thread, master, posted_by=posted.author.id, nodes_own=nodes_own)
    for reaction in reactions:
        mine = reaction.comment_id == posted.id and reaction.content == THUMBS_UP
        after = reaction.created_at is not None and reaction.created_at >= posted.created_at
        if mine and after and reaction.user.id in people:
            return reaction.user.login
    digest = task_digest(entry.message)
    for comment in _after(thread, posted):
        match = APPROVE_RE.match(comment.body)
        edited = comment.edited or comment.id in ever_edited
        if not match or edited or comment.author.id not in people:
            continue  # an approval edited in after the fact is no person's word
        named = (match.group(2) or "").lower()
        if int(match.group(1)) == task and (not named or digest.startswith(named)):
            return comment.author.login
    return None


def _after(thread: Thread, posted: Comment) -> list[Comment]:
    ordered = sorted(thread.issue.comments, key=lambda c: (c.created_at, c.id))
    index = next((i for i, c in enumerate(ordered) if c.id == posted.id), len(ordered))
    return ordered[index + 1 :]


def destructive_step(task: TaskMsg, scope: Scope) -> tuple[int, str] | None:
    """The first step of ``task`` that is destructive by what it does (its number and why),
    whatever scope the controller chose: :mod:`relay.protocol.destructive`, with the
    shared scope's own destructive commands."""
    return task_destructive(task, scope.destructive_commands)


def needs_approval(task: TaskMsg, scope: Scope) -> bool:
    """Whether a TASK waits for a person: it claims a person's authorisation (then a person
    must give it), or it is destructive by its scope or by what a step does."""
    if task.authorized_by_human or task.scope == DESTRUCTIVE_CLASS:
        return True
    return destructive_step(task, scope) is not None


def approval_notice(task: int, digest: str = "") -> str:
    """What the thread says while a TASK waits for a person: the approval names the
    TASK's digest, so it binds to exactly the TASK the person read."""
    command = f"/relay approve TASK {task} {digest[:12]}".rstrip()
    return (
        f"**relay:** TASK {task} says `authorized-by-human: yes` or holds a destructive step,"
        " so it runs only once a person approves it: one of the worker's instruction accounts"
        f" other than the one that posted it comments `{command}` here (a comment edited"
        " afterwards does not count), or reacts 👍 on the TASK (only on a TASK comment never"
        " edited). Until then the worker waits."
    )
