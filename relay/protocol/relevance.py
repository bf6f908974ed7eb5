"""Whether a webhook delivery can concern a node, from the delivery's own payload alone.

A node's webhook receiver hears every issue event of the repository. Before it spends a
request, it asks :func:`pass_for` whether the event can concern it: the issue must be a job
whose body names the node (or one it bound before), and a turn-taking event by one of the
job's own accounts must not leave the baton with the other side. Everything read here is
data GitHub sent (the issue's body and labels, who acted, the comment's author and its
block), so it only ever saves a pass: an ignored delivery makes the node do nothing, never
something else, and the reconciling full pass every few minutes still reads every job. An
attacker who can write a body or a comment can at most delay a node until that pass; she
can make it run nothing and skip no check that pass makes (the pass reads the issue afresh
and trusts only what verifies).
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from typing import NamedTuple

from relay.protocol.body import parse_body
from relay.protocol.labels import Label, batons_in
from relay.protocol.master import Master
from relay.protocol.thread import party_ids
from relay.protocol.wire import MARKER, MessageRejected, decode_block

# The baton and whose move it waits for. ``working``: a worker claimed the task and is at
# it; nothing an event says is for either side to do now (a stalled claim is found by time,
# in the periodic pass).
_TURN: dict[Label, str | None] = {
    Label.AWAITING_WORKER: "worker",
    Label.WORKING: None,
    Label.AWAITING_CONTROLLER: "controller",
}
# Events whose meaning is a turn taken: a new message, a baton moved, the body rewritten.
_TURN_ACTIONS = {("issue_comment", "created"), ("issues", "labeled"), ("issues", "unlabeled"),
                 ("issues", "edited")}  # fmt: skip


@dataclass(frozen=True)
class Delivery:
    """What one ``issues`` or ``issue_comment`` delivery says, as GitHub sent it."""

    event: str
    action: str | None
    issue: int | None
    is_pull_request: bool = False
    body: str | None = None  # the issue's body
    labels: tuple[str, ...] = ()  # the issue's labels as the payload lists them
    sender: int | None = None  # the account that acted
    label: str | None = None  # the label added or removed (issues labeled / unlabeled)
    comment_author: int | None = None
    comment_body: str | None = None


class Relevance(NamedTuple):
    """The issue to run a pass for (None: ignore the delivery), and why, for the log."""

    issue: int | None
    why: str


def pass_for(
    delivery: Delivery, *, node: str, master: Master, known: Collection[int] = ()
) -> Relevance:
    """Whether ``delivery`` calls for a pass of ``node`` over its issue. ``known``: the jobs
    the node bound when it last read them (its thread cache), which are passed whatever
    their body says now (a body someone changed is the controller's to notice)."""
    number = delivery.issue
    if number is None:
        return Relevance(None, "names no issue")
    if delivery.is_pull_request:
        return Relevance(None, "a pull request, not a job")
    role = _role(delivery.body or "", node)
    if role is None:
        if number in known:
            return Relevance(number, "a job this node bound, its body changed")
        return Relevance(None, "not a job of this node")
    if (delivery.event, delivery.action) not in _TURN_ACTIONS:
        return Relevance(number, f"{delivery.event} {delivery.action}")
    job = parse_body(delivery.body or "")
    parties = party_ids(job, master)
    if delivery.event == "issue_comment":
        if delivery.comment_author not in parties:
            return Relevance(None, "a comment by an account neither node takes instructions from")
        if _sent_by(delivery.comment_body or "") == node:
            return Relevance(None, "this node's own message")
    elif delivery.sender not in parties:
        return Relevance(number, "changed by an account outside the job")
    elif delivery.action in ("labeled", "unlabeled") and delivery.label not in _TURN:
        return Relevance(number, f"flag {delivery.action}")
    elif delivery.action == "edited":
        # the body is the controller's to write and a TASK's to carry: no side acts on an
        # edit by the job's own accounts (the baton it moved with is delivered on its own)
        return Relevance(None, "the body rewritten by the job's own account")
    elif delivery.action == "unlabeled":
        # a baton moves by replacing the labels: the one it moved to is delivered too
        return Relevance(None, "a baton taken off by the job's own account")
    batons = (
        {Label(delivery.label)}
        if delivery.action == "labeled" and delivery.label in _TURN
        else batons_in(delivery.labels)
    )
    if len(batons) == 1:
        turn = _TURN[next(iter(batons))]
        if turn != role:
            return Relevance(None, f"the baton waits for {turn or 'the running task'}")
    return Relevance(number, "a turn on this node's job")


def _role(body: str, node: str) -> str | None:
    """``node``'s side in the job ``body`` describes, if it is one (signature unchecked:
    a body that only claims to name the node costs it a pass, nothing more)."""
    if MARKER not in body:
        return None
    try:
        job = parse_body(body)
    except MessageRejected:
        return None
    if node == job.controller:
        return "controller"
    return "worker" if node == job.worker else None


def _sent_by(comment: str) -> str | None:
    """The node a message's block names as its sender (unverified), if any."""
    if MARKER not in comment:
        return None
    try:
        sender = decode_block(comment).get("node")
    except MessageRejected:
        return None
    return sender if isinstance(sender, str) else None
