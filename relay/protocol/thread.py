"""Reading one job's thread: which comments are messages, and which are only data.

Ground rules, applied to every comment in order:

1. A comment with no relay block and no message-shaped heading is conversation: skipped.
2. A comment whose block is missing, malformed, of an unknown version, too large, for
   another issue, or whose markdown does not match its block is data (MessageRejected).
3. A TASK counts only when its author's numeric id is one of the worker's instruction
   accounts and its block names the job's controller; every other message only when its
   author is an instruction account of either node and its block names the node that
   sends that kind (the worker for RESULT, claim and half-done; the controller for the
   escalation and the closure).
4. A comment edited after posting (``updated_at != created_at``) is never obeyed, but
   when its block still names a message (read from the block alone) by the right
   author, it is remembered in :attr:`Thread.edited`: an edited TASK still takes up its
   number (the worker answers it with a ``blocked`` RESULT), and an edited RESULT or
   half-done report means "answered, content untrusted" to both nodes alike.
5. Of two messages of one kind for one task, the older counts; the newer is data.
6. Signatures (:mod:`relay.protocol.signatures`): a message counts only when its block
   verifies against the sending node's key in the roster, for this repository, issue,
   task and kind. A claim then counts whatever ``updated_at`` says (its node edits it
   for its heartbeat); any other message edited after posting is read by rule 4. An
   unsigned or badly signed block is data, and so is every message of a node with no key
   (there is no unsigned path); one whose markdown was changed around a good block is
   treated as edited (rule 4). The job body must verify against the controller's current
   key.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from relay.protocol.baton import State, state_of
from relay.protocol.body import JobBody, parse_body
from relay.protocol.master import Master
from relay.protocol.messages import (
    MESSAGE_TYPES,
    AnyMessage,
    ClaimMsg,
    ClosureMsg,
    HalfDoneMsg,
    Kind,
    ResultMsg,
    TaskMsg,
    model_from_payload,
    parse_message,
    task_digest,
)
from relay.protocol.signatures import NodeKeys, Verdict, parse_keys, unsigned, verify_payload
from relay.protocol.snapshot import Comment, Issue
from relay.protocol.wire import MARKER, MessageRejected, decode_block

_SHAPED = re.compile(
    r"^ {0,3}#{1,6}\s*(TASK|RESULT|Claim|Half-done|Needs a human|Resolved)\b",
    re.MULTILINE | re.IGNORECASE,
)
_WORKER_KINDS = {Kind.RESULT, Kind.CLAIM, Kind.HALF_DONE}


@dataclass(frozen=True)
class Entry:
    """A message that counts, with the comment that carried it."""

    message: AnyMessage
    comment: Comment


@dataclass
class Thread:
    """One job as read from its issue: the binding, the state and the messages that count."""

    issue: Issue
    job: JobBody
    state: State
    tasks: dict[int, Entry] = field(default_factory=dict)
    edited: dict[tuple[Kind, int], Entry] = field(default_factory=dict)
    results: dict[int, Entry] = field(default_factory=dict)
    half_done: dict[int, Entry] = field(default_factory=dict)
    claims: dict[int, Entry] = field(default_factory=dict)
    # the valid claims of a task after its first (another runner's, one stood down, or a
    # copy edited into another comment of the worker's): any of them may be the live one
    more_claims: dict[int, list[Entry]] = field(default_factory=dict)
    closure: Entry | None = None
    ignored: list[tuple[int, str]] = field(default_factory=list)
    # messages refused for who sent or signed them (not conversation, not edits): comment
    # id, author login, the reason — what the thread should be told once
    refused: list[tuple[int, str, str]] = field(default_factory=list)

    @property
    def last_task(self) -> int:
        """The highest task number used so far (0 before TASK 1): a TASK's, an edited one's,
        or one that any counted answer or claim names — so a TASK whose comment was made
        unreadable after it was answered never lets its number be used twice."""
        answered = [*self.results, *self.half_done, *self.claims]
        recorded = self.job.tasks  # the controller's own count, in the signed body
        return max([0, recorded, *self.tasks, *(n for _, n in self.edited), *answered])

    def task_entry(self, task: int) -> Entry | None:
        """The comment that posted ``task``: the counted TASK, else the edited one."""
        return self.tasks.get(task) or self.edited.get((Kind.TASK, task))

    def edited_answer(self, task: int) -> Entry | None:
        """An answer to ``task`` that was edited after posting (its content is untrusted)."""
        return self.edited.get((Kind.RESULT, task)) or self.edited.get((Kind.HALF_DONE, task))

    def answered(self, task: int) -> bool:
        """Whether an answer to ``task`` exists, counted or edited: both nodes agree on it."""
        return self.answer_entry(task) is not None or self.edited_answer(task) is not None

    def taken(self, task: int) -> bool:
        """Whether the worker claimed ``task`` (a claim comment, even an edited one)."""
        return task in self.claims or (Kind.CLAIM, task) in self.edited

    def answer_entry(self, task: int) -> Entry | None:
        """The RESULT (or else the half-done report) answering ``task``, if any."""
        return self.results.get(task) or self.half_done.get(task)

    def answer(self, task: int) -> ResultMsg | HalfDoneMsg | None:
        """The message answering ``task``, if any."""
        entry = self.answer_entry(task)
        if entry is None:
            return None
        assert isinstance(entry.message, ResultMsg | HalfDoneMsg)
        return entry.message

    def outstanding(self) -> int | None:
        """The newest TASK's number if it counts and the worker has not touched it yet.

        An edited newest TASK is never run, and a task that was answered (even by an
        edited answer) or claimed is the worker's business now: none holds up the next.
        """
        newest = self.last_task
        if newest in self.tasks and not self.answered(newest) and not self.taken(newest):
            return newest
        return None


class NotAJob(Exception):
    """An issue that is not a relay job at all (no block in its body): skipped quietly."""


def read_thread(issue: Issue, master: Master) -> Thread:
    """The thread of one issue.

    Raises NotAJob for an ordinary issue and MessageRejected for a body that looks like a
    job but cannot be trusted (malformed, or opened by a stranger).
    """
    if MARKER not in issue.body:
        raise NotAJob(issue.number)
    job = parse_body(issue.body)
    if issue.author.id not in party_ids(job, master):
        raise MessageRejected(f"job opened by {issue.author.login}, not an instruction account")
    refusal = body_refusal(issue.body, job, master, issue=issue.number)
    if refusal is not None:
        raise MessageRejected(refusal)
    thread = Thread(issue, job, state_of(issue.labels, closed=issue.state == "closed"))
    for comment in sorted(issue.comments, key=lambda c: (c.created_at, c.id)):
        _read_comment(thread, comment, master)
    _bind_answers(thread)
    if thread.state == State.RESOLVED and thread.closure is None and issue.state == "open":
        # only relay's closure resolves a job: a bare `resolved` label (anyone can add one)
        # must not stall it in silence; relay.protocol.tamper says so in the thread
        rest = tuple(name for name in issue.labels if name != "resolved")
        thread.state = state_of(rest, closed=False)
    return thread


def _bind_answers(thread: Thread) -> None:
    """A claim or RESULT that names the digest of another TASK than the one counted under
    its number answers nothing here (an old answer copied in after a number was reused)."""
    for slot in (thread.results, thread.claims):
        for number, entry in list(slot.items()):
            named = getattr(entry.message, "task_digest", None)
            posted = thread.tasks.get(number)
            if named is None or posted is None:
                continue
            assert isinstance(posted.message, TaskMsg)
            if task_digest(posted.message) != named:
                del slot[number]
                kind = entry.message.kind.value
                thread.ignored.append((entry.comment.id, f"{kind} for another TASK {number}"))


def binds(body: str, node: str, *, author: int, master: Master, issue: int) -> bool:
    """Whether an issue is a job that binds ``node`` and may be trusted at all: a well-formed
    job body naming the node, opened by an instruction account of the job's nodes, and
    signed by the controller's key once it has one. Anything else — a stray issue carrying
    relay's marker, a body someone else changed — is data: it keeps no watcher alive and
    causes no commit."""
    if MARKER not in body:
        return False
    try:
        job = parse_body(body)
        if node not in (job.controller, job.worker):
            return False
        trusted = author in party_ids(job, master)
        return trusted and body_refusal(body, job, master, issue=issue) is None
    except MessageRejected:
        return False


def tampered_with(body: str, node: str, *, author: int, master: Master, issue: int) -> bool:
    """Whether an issue is a job ``node`` controls, opened by an instruction account, whose
    body no longer verifies by the controller's key (someone else changed it, or put an old
    one back): nothing is done on it, but its controller says so and can repair it."""
    if MARKER not in body:
        return False
    try:
        job = parse_body(body)
    except MessageRejected:
        return False
    if job.controller != node or author not in party_ids(job, master):
        return False
    return body_refusal(body, job, master, issue=issue) is not None


def keys_of(master: Master, node: str) -> NodeKeys:
    """The keys the node table lists for ``node`` (none for an unknown node)."""
    row = master.node(node)
    return parse_keys(row.public_key) if row is not None else NodeKeys()


def body_refusal(body: str, job: JobBody, master: Master, *, issue: int) -> str | None:
    """Why a job body cannot be trusted (its controller has a key and the body does not
    verify against the current one, for this issue), or None."""
    keys = keys_of(master, job.controller)
    if keys.current is None:
        return f"the job body cannot be trusted: {job.controller} has no key in the roster"
    verdict = verify_payload(
        decode_block(body), repo=master.repository, public_keys=(keys.current,), issue=issue
    )
    if verdict is Verdict.VALID:
        return None
    what = "is not signed" if verdict is Verdict.MISSING else "does not verify"
    return f"the job body {what} by {job.controller}'s key (changed by someone else?)"


def party_ids(job: JobBody, master: Master) -> set[int]:
    """Numeric ids of the instruction accounts of the job's two nodes."""
    nodes = (master.node(job.controller), master.node(job.worker))
    return {a.id for n in nodes if n is not None for a in n.accounts}


def _read_comment(thread: Thread, comment: Comment, master: Master) -> None:
    if MARKER not in comment.body and not _SHAPED.search(comment.body):
        return
    try:
        message = _parse(comment, issue=thread.issue.number)
    except MessageRejected as err:
        thread.ignored.append((comment.id, err.reason))
        return
    reason = _refusal(thread, message, comment, master)
    if reason is not None:
        thread.ignored.append((comment.id, reason))
        thread.refused.append((comment.id, comment.author.login[:60], reason))
        return
    verdict = _verdict(thread, message, comment, master)
    matches = verdict is Verdict.VALID and _as_rendered(comment, message)
    # only a claim is ever edited by its node (its heartbeat): any other message edited
    # after posting is an edit, however well signed (a signed TASK copied over an approved
    # comment must not inherit its 👍, nor an old RESULT pass for a new answer)
    trusted = matches and (not comment.edited or message.kind == Kind.CLAIM)
    forged = verdict is not Verdict.VALID and not comment.edited
    if trusted:
        _keep(thread, message, comment)
    elif forged:
        why = "is not signed" if verdict is Verdict.MISSING else "does not verify"
        reason = f"{message.kind.value} {why} by {_sender(thread, message)}'s key"
        thread.ignored.append((comment.id, reason))
        thread.refused.append((comment.id, comment.author.login[:60], reason))
    else:
        task = getattr(message, "task", None)
        # an edit counts as "this message existed" only when its block is one its node
        # signed: a block made up and edited into someone's comment spends no TASK
        if isinstance(task, int) and verdict is Verdict.VALID:
            thread.edited.setdefault((message.kind, task), Entry(message, comment))
        thread.ignored.append((comment.id, "edited after it was posted"))


def signed_claim(thread: Thread, comment: Comment, master: Master, task: int) -> ClaimMsg | None:
    """The claim of TASK ``task`` that ``comment`` (one version of a comment's body: its
    author the version's editor) holds, signed by the job's worker and written by one of
    its accounts; None when it holds none. A claim's edit history is read with it: only
    the worker's own signed words are its beats."""
    worker = master.node(thread.job.worker)
    if worker is None or not worker.trusts(comment.author.id):
        return None
    try:
        message = _parse(comment, issue=thread.issue.number)
    except MessageRejected:
        return None
    if not isinstance(message, ClaimMsg) or message.task != task:
        return None
    if _refusal(thread, message, comment, master) is not None:
        return None
    return message if _verdict(thread, message, comment, master) is Verdict.VALID else None


def _sender(thread: Thread, message: AnyMessage) -> str:
    """The node that sends this kind of message in this job."""
    if message.kind == Kind.TASK or message.kind not in _WORKER_KINDS:
        return thread.job.controller
    return thread.job.worker


def _verdict(thread: Thread, message: AnyMessage, comment: Comment, master: Master) -> Verdict:
    """The signature check against the sender's keys: a sender with no key in the roster
    signs nothing, so its messages are data (there is no unsigned path)."""
    keys = keys_of(master, _sender(thread, message))
    if keys.current is None and not keys.retired:
        return Verdict.MISSING
    valid = keys.valid_at(comment.created_at)
    payload = decode_block(comment.body)
    return verify_payload(payload, repo=master.repository, public_keys=valid)


def _as_rendered(comment: Comment, message: AnyMessage) -> bool:
    """Whether the markdown is exactly what relay renders for the block (not edited by hand)."""
    from relay.protocol.messages import render_message

    return unsigned(comment.body.replace("\r\n", "\n")) == render_message(message)


def _parse(comment: Comment, *, issue: int) -> AnyMessage:
    """The message a comment carries; an edited one is read from its block alone, since
    its markdown may have been changed by hand (it is never obeyed either way)."""
    if not comment.edited:
        return parse_message(comment.body, issue=issue)
    message = model_from_payload(decode_block(comment.body), dict(MESSAGE_TYPES))
    assert isinstance(message, AnyMessage)
    if message.issue != issue:
        raise MessageRejected(f"the block belongs to issue {message.issue}, not {issue}")
    return message


def _refusal(thread: Thread, message: AnyMessage, comment: Comment, master: Master) -> str | None:
    """Why a well-formed message does not count, or None when it does."""
    job = thread.job
    login = comment.author.login[:60]
    if message.kind == Kind.TASK:
        worker = master.node(job.worker)
        if worker is None or not worker.trusts(comment.author.id):
            return f"TASK from {login}, who gives {job.worker} no instructions"
        sender = job.controller
    else:
        if comment.author.id not in party_ids(job, master):
            return f"{message.kind.value} from {login}, not an instruction account"
        sender = job.worker if message.kind in _WORKER_KINDS else job.controller
    if message.node != sender:
        return f"{message.kind.value} signed by {message.node}; only {sender} sends it here"
    return None


def _keep(thread: Thread, message: AnyMessage, comment: Comment) -> None:
    entry = Entry(message, comment)
    if isinstance(message, ClosureMsg):
        if thread.closure is None:
            thread.closure = entry
        return
    slots: dict[type, dict[int, Entry]] = {
        TaskMsg: thread.tasks,
        ResultMsg: thread.results,
        HalfDoneMsg: thread.half_done,
        ClaimMsg: thread.claims,
    }
    slot = slots.get(type(message))
    if slot is None:
        return
    task: int = message.task  # type: ignore[union-attr]
    if task in slot:
        thread.ignored.append((comment.id, f"a second {message.kind.value} for task {task}"))
        if slot is thread.claims:
            thread.more_claims.setdefault(task, []).append(entry)
    else:
        slot[task] = entry
