"""What one pass observed: the master section, the open jobs, this node's own records.

A driver builds a :class:`Snapshot` from GitHub's JSON and the node's local state, then
hands it to :func:`relay.protocol.decide.decide`. Nothing here is trusted yet: authors
are just numbers and logins, bodies are just text.
"""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from relay.protocol.master import Master
from relay.protocol.work import RunLimits

TaskKey = tuple[int, int]  # (issue, task)


class User(BaseModel):
    """An author as GitHub reports it (``user.id``, ``user.login``)."""

    model_config = ConfigDict(frozen=True)

    id: int
    login: str


class Comment(BaseModel):
    """One issue comment as listed by the API."""

    model_config = ConfigDict(frozen=True)

    id: int
    author: User
    created_at: datetime
    updated_at: datetime
    body: str = ""

    @property
    def edited(self) -> bool:
        """Whether the comment changed after it was posted (then it is data only)."""
        return self.updated_at != self.created_at


class Issue(BaseModel):
    """One issue with its labels, body and comments (oldest first, as GitHub lists them)."""

    model_config = ConfigDict(frozen=True)

    number: int = Field(gt=0)
    title: str = ""
    state: Literal["open", "closed"] = "open"
    labels: tuple[str, ...] = ()
    author: User
    body: str = ""
    comments: tuple[Comment, ...] = ()
    closed_by: User | None = None  # read only for a job that left the open list


class Reaction(BaseModel):
    """A reaction on a comment, as GitHub lists it (read only where a rule needs one)."""

    model_config = ConfigDict(frozen=True)

    comment_id: int
    user: User
    content: str
    created_at: datetime | None = None  # a reaction older than its comment approves nothing


class LabelEvent(BaseModel):
    """Who added or removed a label on an issue, as the issue's events list it (read only
    where a rule needs to name who moved a baton)."""

    model_config = ConfigDict(frozen=True)

    id: int
    issue: int
    actor: User
    action: Literal["labeled", "unlabeled"]
    label: str
    at: datetime


class CommentEdit(BaseModel):
    """One version of a comment's body as GitHub's edit history lists it (GraphQL's
    ``userContentEdits``: who wrote it and when; the posting is one once the body was
    edited). Read only for the claims whose life their comment's last edit lengthens
    (:func:`relay.protocol.decide.claim_edits_wanted`)."""

    model_config = ConfigDict(frozen=True)

    comment_id: int
    editor: User | None = None  # None: a deleted account
    at: datetime
    body: str | None = None  # the body this version left (GitHub's ``diff``), when given


class LocalRecords(BaseModel):
    """This node's own memory, kept in the clone's ``.git/relay/``.

    ``claims``: tasks this node claimed. ``results_posted``: tasks this node answered
    (RESULT, decline or half-done report), recorded after the post succeeded.
    ``notified``: results already handed to the controller's hook or printed.
    ``notices``: (issue, key) of what this node has already said once in a thread.
    ``outbox``: tasks whose RESULT was composed and kept, and is not yet posted and handed
    back (a pass that failed after the run).
    """

    model_config = ConfigDict(frozen=True)

    claims: frozenset[TaskKey] = frozenset()
    results_posted: frozenset[TaskKey] = frozenset()
    notified: frozenset[TaskKey] = frozenset()
    notices: frozenset[tuple[int, str]] = frozenset()
    outbox: frozenset[TaskKey] = frozenset()
    attempts: frozenset[TaskKey] = frozenset()
    bare_seen: tuple[tuple[int, int, datetime], ...] = ()
    account: int | None = None  # the account this node acts as, recorded at join
    # the newest body revision this node has seen of each job: an older body is refused
    revisions: tuple[tuple[int, int], ...] = ()
    # tasks this node has seen claimed: a controller never hands such a task back to the
    # worker, even when its claim and answer are later deleted
    claimed_seen: frozenset[TaskKey] = frozenset()

    def revision_seen(self, issue: int) -> int:
        """The newest body revision of ``issue`` this node has seen (0: none)."""
        return max((r for i, r in self.revisions if i == issue), default=0)

    def bare_since(self, key: TaskKey) -> datetime | None:
        """When this node first saw the claim ref of ``key`` bare, if it did."""
        return next((at for i, t, at in self.bare_seen if (i, t) == key), None)


class WatcherFacts(BaseModel):
    """This node's registered watcher, as the teardown rule needs it: when it was
    registered, and the issues closed since then (None: not asked; the pass asks only when
    :func:`relay.protocol.decide.wants_ended_check` says the rule needs them)."""

    model_config = ConfigDict(frozen=True)

    registered_at: datetime
    closed_since: tuple[Issue, ...] | None = None


class Snapshot(BaseModel):
    """Everything a pass needs to decide. ``claim_refs`` lists the claim refs seen, if read;
    ``unable`` says why this node cannot run a task now (its clone could not be brought up
    to date), None when it can; ``limits`` are the node's run limits (they set a claim's
    lease); ``watcher`` is the node's registered watcher, None when it has none;
    ``partial`` says the pass looked at one issue only (an event for it), so no teardown
    follows from what it did not see."""

    model_config = ConfigDict(frozen=True)

    master: Master
    issues: tuple[Issue, ...] = ()
    local: LocalRecords = LocalRecords()
    claim_refs: frozenset[TaskKey] = frozenset()
    unable: str | None = Field(default=None, max_length=1000)
    limits: RunLimits = RunLimits()
    watcher: WatcherFacts | None = None
    partial: bool = False  # only one issue was observed: silence about others means nothing
    reactions: tuple[Reaction, ...] = ()  # on the comments approvals_wanted() names
    # comments GitHub's GraphQL records as ever edited, on the jobs approvals_wanted() names
    # (REST's whole-second timestamps miss an edit within the second of posting)
    ever_edited: frozenset[int] = frozenset()
    # the account this pass acts as, when the driver had to find out (an Actions run with
    # the workflow's token); None: the node's own account, trusted by construction
    acting: User | None = None
    # the label events of the issues baton_events_wanted() names
    label_events: tuple[LabelEvent, ...] = ()
    # the edit histories of the comments claim_edits_wanted() names (each
    # comment's newest versions, back to one its worker's accounts wrote if the reader
    # found one), and the comments whose whole history that is
    comment_edits: tuple[CommentEdit, ...] = ()
    edits_read: frozenset[int] = frozenset()
    # what the branch says that this node does not follow (a roster revision it refused, a
    # hand-edited node table, another API URL): said once in every job that binds it
    trust_notes: tuple[str, ...] = ()
    # tasks whose log is committed in the repository's history (read for the tasks the
    # worker is about to run): a task that ran is never run again, whatever was deleted
    ran: frozenset[TaskKey] = frozenset()
