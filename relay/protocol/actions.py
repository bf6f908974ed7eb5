"""What :func:`relay.protocol.decide.decide` asks a driver to do: frozen plain data.

Each action says what to do and carries everything needed to do it (rendered bodies,
the baton it expects and the one it leaves). Every action that moves the baton names the
:class:`~relay.protocol.baton.Event` it carries out, and its labels are the ones the
baton table gives for that event; no action has a default baton to fall back on.
Applying an action must be idempotent; the contract for each is in its docstring, and
PROTOCOL.md repeats it.
"""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import BaseModel, ConfigDict

from relay.protocol.baton import Event
from relay.protocol.labels import Label
from relay.protocol.messages import ClaimMsg, HalfDoneMsg, ResultMsg, TaskMsg


class _Action(BaseModel):
    model_config = ConfigDict(frozen=True)


class ExecuteTask(_Action):
    """Claim and run TASK ``task.task``.

    In order: create the claim ref ``refs/relay/claims/<issue>/<task>`` (if it already
    exists, stop: someone else has it); record the claim locally; post ``claim_body``;
    move the baton ``expect`` -> ``claimed``; check out, run,
    commit the log and push; post the RESULT; record it locally; move the baton
    ``claimed`` -> ``done``.
    """

    kind: Literal["execute-task"] = "execute-task"
    issue: int
    comment_id: int
    task: TaskMsg
    claim: ClaimMsg
    claim_body: str
    # the claim ref exists already and is this node's to take (its own earlier attempt, or
    # another runner's bare ref past its grace): no ref is created; ``takeover_notice``, when
    # set, is said in the thread first
    takeover: bool = False
    takeover_notice: str | None = None
    expect: Label
    claimed: Label
    done: Label
    event: Event = Event.CLAIM  # then Event.POST_RESULT from ``claimed`` to ``done``
    # once the baton is moved, the issue's events are read again: a `working` of the job's
    # accounts (``party``) since the TASK was ``posted`` other than this claim's (and the
    # ``known`` earlier TASKs' of that second) is another runner's claim, and this runner
    # runs nothing (``relay.protocol.tamper.claims_since``)
    posted: datetime | None = None
    party: frozenset[int] = frozenset()
    known: int = 0


class DeclineTask(_Action):
    """Answer a TASK that will not be run (outside the shared scope, or edited after it
    was posted) with a blocked RESULT, so the controller gets the baton and may post the
    next TASK.

    Skip if ``(issue, task)`` is already in the local ``results_posted``; else post
    ``body``, record it, and move the baton ``expect`` -> ``to``.
    """

    kind: Literal["decline-task"] = "decline-task"
    issue: int
    comment_id: int | None  # None: no comment of the TASK can be read
    task: int
    reason: str
    result: ResultMsg
    body: str
    # the TASK's comment was edited after it was posted: the RESULT names its last editor
    edited_comment: int | None = None
    expect: Label
    to: Label
    event: Event = Event.DECLINE


class ReportHalfDone(_Action):
    """Report a claim that never produced a RESULT; never re-run the task.

    Skip if ``(issue, task)`` is already in the local ``results_posted``; else post
    ``body``, record it, and move the baton ``expect`` -> ``to`` (if they differ).
    """

    kind: Literal["report-half-done"] = "report-half-done"
    issue: int
    task: int
    known: str
    report: HalfDoneMsg
    body: str
    expect: Label
    to: Label
    event: Event = Event.REPORT_HALF_DONE


class NotifyResult(_Action):
    """Record a returned result and hand it to the controller's hook (or print it).

    Skip if ``(issue, task)`` is in the local ``notified``. Else, in order: write
    ``body`` as the issue body when it is not None and differs (the job's "Current
    state" now says what came back; only the controller writes bodies); hand
    ``result`` to the hook; record ``(issue, task)`` in ``notified``. When ``trusted``
    is False the worker's RESULT was edited after it was posted: ``result`` is then a
    ``blocked`` stand-in written by the protocol that says so, never the edited text.
    """

    kind: Literal["notify-result"] = "notify-result"
    issue: int
    task: int
    comment_id: int
    result: ResultMsg | HalfDoneMsg
    body: str | None = None
    trusted: bool = True


class SendResult(_Action):
    """Finish a task whose run ended and whose RESULT was kept in the node's outbox, but
    not posted or not handed back (the API was away, the pass was killed): when ``post``,
    post the kept RESULT unless the newest comments already hold it; record it among the
    answered tasks; forget the kept copy; then, when ``expect`` is set, move the baton
    ``expect`` -> ``to``. Never runs anything again."""

    kind: Literal["send-result"] = "send-result"
    issue: int
    task: int
    post: bool
    expect: Label | None = None
    to: Label | None = None
    event: Event = Event.POST_RESULT


class MoveBaton(_Action):
    """Finish a turn that stopped before its last act: if the baton is still ``expect``,
    replace the labels with ``labels.with_baton(current, to)``; otherwise do nothing.
    ``event`` is the event whose last act (the move) was missing."""

    kind: Literal["move-baton"] = "move-baton"
    issue: int
    expect: Label
    to: Label
    event: Event
    reason: str


class CloseJob(_Action):
    """Finish a resolve that stopped early: labels become the non-relay ones plus
    ``resolved``, and the issue is closed. Doing it again changes nothing."""

    kind: Literal["close-job"] = "close-job"
    issue: int
    event: Event = Event.RESOLVE


class ReopenJob(_Action):
    """Open again a job someone who may not decide it closed (no closure of relay's): its
    controller's account reopens the issue, so the job does not stall in silence."""

    kind: Literal["reopen-job"] = "reopen-job"
    issue: int


class KeepWatcher(_Action):
    """No open job binds this node yet, but its watcher is new: keep it for the first job
    until ``until`` (then a pass with still no job tears it down)."""

    kind: Literal["keep-watcher"] = "keep-watcher"
    until: datetime


class PostNotice(_Action):
    """Tell the people reading the thread something they must act on — a job frozen by
    zero or several batons, a TASK waiting for a person's approval — once: post ``body``
    (no machine block: it instructs nobody), then record ``key`` among the node's notices.
    Skip when ``key`` is already recorded."""

    kind: Literal["post-notice"] = "post-notice"
    issue: int
    key: str
    reason: str
    body: str
    # whose edit the notice is about: "body" (the issue's) or a comment's id; the driver
    # asks GitHub who last edited it and names that account in the notice
    name_editor: Literal["body"] | int | None = None


class Wait(_Action):
    """Nothing to do yet: another process of this node holds a live claim. ``bare``: the
    claim is only a claim ref (no claim comment yet); the driver records when it first saw
    it so, past a short grace, the node can take it over."""

    kind: Literal["wait"] = "wait"
    issue: int
    task: int
    until: datetime
    bare: bool = False


class ReclaimTask(_Action):
    """The worker's claim on TASK ``task`` lapsed with no answer (its heartbeat stopped):
    the controller says so in the thread (``body``, once under ``key``), then takes the
    baton back ``expect`` -> ``to`` so a new TASK can be posted."""

    kind: Literal["reclaim-task"] = "reclaim-task"
    issue: int
    task: int
    key: str
    reason: str
    body: str
    expect: Label
    to: Label


class TearDown(_Action):
    """No open job binds this node: remove its watcher (idempotent)."""

    kind: Literal["tear-down"] = "tear-down"


class Ignore(_Action):
    """A comment (or the issue itself when ``comment_id`` is None) that is only data:
    log it with the reason, change nothing."""

    kind: Literal["ignore"] = "ignore"
    issue: int
    comment_id: int | None
    reason: str


Action = (
    ExecuteTask
    | DeclineTask
    | ReportHalfDone
    | NotifyResult
    | MoveBaton
    | SendResult
    | CloseJob
    | ReopenJob
    | Wait
    | ReclaimTask
    | KeepWatcher
    | PostNotice
    | TearDown
    | Ignore
)
