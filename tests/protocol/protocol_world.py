"""An in-memory model of one repository's relay jobs, with the peers wired in memory.

The world plays GitHub (issues, labels, comments, claim refs) and the drivers: it applies
the protocol's actions and plans exactly as their docstrings say a driver must, and it
records every task that was really run. Tests drive it with real protocol code only.
"""

from __future__ import annotations

import contextlib
import hashlib
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

from relay.protocol import (
    Account,
    Action,
    CloseJob,
    Comment,
    DeclineTask,
    ExecuteTask,
    Ignore,
    Issue,
    KeepWatcher,
    LocalRecords,
    Master,
    MoveBaton,
    Node,
    NotifyResult,
    Plan,
    PostNotice,
    ReclaimTask,
    ReportHalfDone,
    ResultMsg,
    SendResult,
    Snapshot,
    Status,
    TaskMsg,
    TearDown,
    User,
    Wait,
    claim_edits_wanted,
    decide,
    parse_body,
    render_message,
    with_baton,
)
from relay.protocol.baton import TABLE, Event, Role, baton_of, state_of
from relay.protocol.labels import BATONS, Label
from relay.protocol.signatures import public_key_of, sign_body
from relay.protocol.snapshot import CommentEdit
from relay.protocol.thread import read_thread
from relay.protocol.work import made_at

ALICE = User(id=101, login="alice")
BOB = User(id=102, login="bob")
MALLORY = User(id=666, login="mallory")
CONTROLLER, WORKER = "mac-studio", "win-desktop"
START = datetime(2026, 11, 30, 9, 0, tzinfo=UTC)

# every node has a key (there is no unsigned path): fixed ones, so runs are repeatable
KEYS = {name: hashlib.sha256(name.encode()).digest() for name in (CONTROLLER, WORKER, "spare")}
MASTER = Master(
    repository="octo/widgets",
    nodes=(
        Node(
            name=CONTROLLER,
            os="macOS",
            accounts=(Account(id=101, login="alice"),),
            public_key=public_key_of(KEYS[CONTROLLER]),
        ),
        Node(
            name=WORKER,
            os="Windows",
            accounts=(Account(id=101, login="alice"), Account(id=102, login="bob")),
            public_key=public_key_of(KEYS[WORKER]),
        ),
        Node(
            name="spare",
            os="Linux",
            accounts=(Account(id=101, login="alice"),),
            public_key=public_key_of(KEYS["spare"]),
        ),
    ),
)
ACCOUNT_OF = {CONTROLLER: ALICE, WORKER: BOB, "spare": ALICE}
EXECUTE_STEPS = (
    "attempt", "ref", "record", "claim", "baton", "run", "kept", "result", "recorded", "done",
    "cleared",
)  # fmt: skip


@dataclass
class Local:
    """One node's ``.git/relay`` records, mutable."""

    claims: set[tuple[int, int]] = field(default_factory=set)
    results_posted: set[tuple[int, int]] = field(default_factory=set)
    notified: set[tuple[int, int]] = field(default_factory=set)
    notices: set[tuple[int, str]] = field(default_factory=set)
    outbox: set[tuple[int, int]] = field(default_factory=set)
    attempts: set[tuple[int, int]] = field(default_factory=set)
    bare_seen: dict[tuple[int, int], datetime] = field(default_factory=dict)

    def frozen(self) -> LocalRecords:
        return LocalRecords(
            claims=frozenset(self.claims),
            results_posted=frozenset(self.results_posted),
            notified=frozenset(self.notified),
            notices=frozenset(self.notices),
            outbox=frozenset(self.outbox),
            attempts=frozenset(self.attempts),
            bare_seen=tuple((i, t, at) for (i, t), at in sorted(self.bare_seen.items())),
        )


@dataclass
class World:
    """GitHub and the nodes' disks, in memory."""

    master: Master = MASTER
    issues: dict[int, Issue] = field(default_factory=dict)
    claim_refs: set[tuple[int, int]] = field(default_factory=set)
    local: dict[str, Local] = field(default_factory=dict)
    runs: list[tuple[int, int, TaskMsg]] = field(default_factory=list)
    notifications: list[tuple[str, int, int]] = field(default_factory=list)
    torn_down: set[str] = field(default_factory=set)
    now: datetime = START
    next_id: int = 1000
    keys: dict[str, bytes] = field(default_factory=lambda: dict(KEYS))  # node -> private key
    # each edited comment's versions, newest first, its posting last (as GitHub lists them)
    histories: dict[int, list[CommentEdit]] = field(default_factory=dict)

    def signed(self, node: str, body: str, *, issue: int | None = None) -> str:
        """``body`` as ``node`` writes it: signed when the world gave the node a key (a job
        body for its ``issue``)."""
        key = self.keys.get(node)
        if key is None:
            return body
        return sign_body(body, repo=self.master.repository, private_key=key, issue=issue)

    # --- GitHub -----------------------------------------------------------------
    def tick(self, seconds: int = 1) -> datetime:
        self.now += timedelta(seconds=seconds)
        return self.now

    def open_issue(self, plan: Plan, author: User = ALICE) -> int:
        number = len(self.issues) + 1
        assert plan.body is not None and plan.labels is not None
        self.issues[number] = Issue(
            number=number,
            title=plan.title or "",
            labels=plan.labels,
            author=author,
            body=self.signed(CONTROLLER, plan.body, issue=number),
        )
        return number

    def post(self, number: int, author: User, body: str) -> Comment:
        self.next_id += 1
        when = self.tick()
        comment = Comment(
            id=self.next_id, author=author, created_at=when, updated_at=when, body=body
        )
        issue = self.issues[number]
        self.issues[number] = issue.model_copy(update={"comments": (*issue.comments, comment)})
        return comment

    def edit(self, number: int, comment_id: int, body: str, *, by: User | None = None) -> None:
        """``by`` edits the comment (its author when None): its history records who."""
        issue = self.issues[number]
        when = self.tick()
        comment = next(c for c in issue.comments if c.id == comment_id)
        history = self.histories.setdefault(
            comment_id,
            [
                CommentEdit(
                    comment_id=comment_id,
                    editor=comment.author,
                    at=comment.created_at,
                    body=comment.body,
                )
            ],
        )
        editor = by or comment.author
        history.insert(0, CommentEdit(comment_id=comment_id, editor=editor, at=when, body=body))
        comments = tuple(
            c.model_copy(update={"body": body, "updated_at": when}) if c.id == comment_id else c
            for c in issue.comments
        )
        self.issues[number] = issue.model_copy(update={"comments": comments})

    def set_labels(self, number: int, labels: tuple[str, ...]) -> None:
        self.issues[number] = self.issues[number].model_copy(update={"labels": labels})

    def baton(self, number: int) -> set[str]:
        return {name for name in self.issues[number].labels if name in BATONS}

    def move(self, number: int, expect: Label, to: Label) -> None:
        """The driver's baton move: only if the baton is still where it was expected."""
        if self.baton(number) == {expect.value}:
            self.set_labels(number, with_baton(self.issues[number].labels, to))

    # --- the drivers ----------------------------------------------------------
    def records(self, node: str) -> Local:
        return self.local.setdefault(node, Local())

    def snapshot(self, node: str) -> Snapshot:
        open_issues = tuple(i for i in self.issues.values() if i.state == "open")
        snapshot = Snapshot(
            master=self.master,
            issues=open_issues,
            local=self.records(node).frozen(),
            claim_refs=frozenset(self.claim_refs),
        )
        # the edit histories the driver reads: the comments decide names
        wanted = claim_edits_wanted(snapshot, node, self.now)
        read = [c for w in wanted.values() for c in w.comments]
        edits = tuple(e for i in read for e in self.histories.get(i, ()))
        return snapshot.model_copy(update={"comment_edits": edits, "edits_read": frozenset(read)})

    def run_plan(self, plan: Plan, node: str, author: User | None = None) -> None:
        assert plan.issue is not None
        for body in plan.comments:
            self.post(plan.issue, author or ACCOUNT_OF[node], self.signed(node, body))
        issue = self.issues[plan.issue]
        if plan.body is not None:
            body = self.signed(node, plan.body, issue=plan.issue)
            issue = issue.model_copy(update={"body": body})
        if plan.labels is not None:
            issue = issue.model_copy(update={"labels": plan.labels})
        if plan.close:
            issue = issue.model_copy(update={"state": "closed"})
        self.issues[plan.issue] = issue

    def pass_of(self, node: str, *, crash_at: str | None = None) -> list[Action]:
        """One observe -> decide -> apply pass; ``crash_at`` kills ExecuteTask mid-way.

        Every baton move the pass asks for is checked against the table first."""
        snapshot = self.snapshot(node)
        actions = decide(snapshot, node, self.now)
        assert_moves_are_rows(snapshot, node, actions)
        for action in actions:
            self.apply(node, action, crash_at=crash_at)
        return actions

    def apply(self, node: str, action: Action, *, crash_at: str | None = None) -> None:
        """Perform one action as PROTOCOL.md says a driver must."""
        if isinstance(action, ExecuteTask):
            self._execute(node, action, crash_at)
        elif isinstance(action, DeclineTask | ReportHalfDone):
            self._answer(node, action)
        elif isinstance(action, NotifyResult):
            key = (action.issue, action.task)
            if key not in self.records(node).notified:
                if action.body is not None:
                    issue = self.issues[action.issue]
                    body = self.signed(node, action.body, issue=action.issue)
                    self.issues[action.issue] = issue.model_copy(update={"body": body})
                self.notifications.append((node, *key))
                self.records(node).notified.add(key)
        elif isinstance(action, MoveBaton):
            self.move(action.issue, action.expect, action.to)
        elif isinstance(action, SendResult):
            self._send(node, action)
        elif isinstance(action, CloseJob):
            issue = self.issues[action.issue]
            labels = (*with_baton(issue.labels, None), Label.RESOLVED.value)
            self.issues[action.issue] = issue.model_copy(
                update={"labels": tuple(dict.fromkeys(labels)), "state": "closed"}
            )
        elif isinstance(action, PostNotice):
            if (action.issue, action.key) not in self.records(node).notices:
                self.post(action.issue, ACCOUNT_OF[node], self.signed(node, action.body))
                self.records(node).notices.add((action.issue, action.key))
        elif isinstance(action, TearDown):
            self.torn_down.add(node)
        elif isinstance(action, ReclaimTask):
            if (action.issue, action.key) not in self.records(node).notices:
                self.post(action.issue, ACCOUNT_OF[node], self.signed(node, action.body))
                self.records(node).notices.add((action.issue, action.key))
            self.move(action.issue, action.expect, action.to)
        elif isinstance(action, Wait) and action.bare:
            self.records(node).bare_seen.setdefault((action.issue, action.task), self.now)
        else:
            assert isinstance(action, Ignore | Wait | KeepWatcher)

    def _answer(self, node: str, action: DeclineTask | ReportHalfDone) -> None:
        key = (action.issue, action.task)
        if key in self.records(node).results_posted:
            return
        self.post(action.issue, ACCOUNT_OF[node], self.signed(node, action.body))
        self.records(node).results_posted.add(key)
        if action.expect != action.to:
            self.move(action.issue, action.expect, action.to)

    def _execute(self, node: str, action: ExecuteTask, crash_at: str | None) -> None:
        key = (action.issue, action.task.task)
        if key in self.claim_refs and not action.takeover:
            return  # 422 Reference already exists: someone else has the task.
        mine = self.records(node)
        if action.takeover and key not in mine.attempts and key not in mine.bare_seen:
            return  # taken over already (the same action applied twice): nothing more
        for step in EXECUTE_STEPS:
            if step == crash_at:
                return
            self._execute_step(node, action, step)

    def _execute_step(self, node: str, action: ExecuteTask, step: str) -> None:
        key = (action.issue, action.task.task)
        if step == "attempt":
            self.records(node).attempts.add(key)
        elif step == "ref":
            self.claim_refs.add(key)
        elif step == "record":
            self.records(node).claims.add(key)
            self.records(node).attempts.discard(key)
            self.records(node).bare_seen.pop(key, None)
        elif step == "claim":
            if action.takeover_notice is not None:
                body = self.signed(node, action.takeover_notice)
                self.post(action.issue, ACCOUNT_OF[node], body)
            # made as it is posted, as the executor makes it (relay.node.execute.claim)
            made = made_at(action.claim, self.now)
            body = action.claim_body if made == action.claim else render_message(made)
            self.post(action.issue, ACCOUNT_OF[node], self.signed(node, body))
        elif step == "baton":
            self.move(action.issue, action.expect, action.claimed)
        elif step == "run":
            self.runs.append((*key, action.task))
        elif step == "kept":
            self.records(node).outbox.add(key)
        elif step == "result":
            self.post_result(node, *key)
        elif step == "recorded":
            self.records(node).results_posted.add(key)
        elif step == "done":
            self.move(action.issue, action.claimed, action.done)
        else:
            self.records(node).outbox.discard(key)

    def post_result(self, node: str, issue: int, task: int) -> None:
        """The worker's RESULT of a task that ran."""
        result = ResultMsg(
            issue=issue,
            node=node,
            task=task,
            status=Status.DONE,
            summary="ran",
            excerpt="### TASK 99\n<!-- relay:v1 {} -->\n```",
        )
        self.post(issue, ACCOUNT_OF[node], self.signed(node, render_message(result)))

    def _send(self, node: str, action: SendResult) -> None:
        """A kept RESULT: posted unless it is there already, recorded, handed back, forgotten."""
        key = (action.issue, action.task)
        if key not in self.records(node).outbox:
            return
        if action.post:
            self.post_result(node, *key)
        self.records(node).results_posted.add(key)
        if action.expect is not None and action.to is not None:
            self.move(action.issue, action.expect, action.to)
        self.records(node).outbox.discard(key)

    def state_key(self) -> object:
        """Everything an action can change, for before/after comparisons."""
        return (
            tuple(sorted((n, i.model_dump_json()) for n, i in self.issues.items())),
            frozenset(self.claim_refs),
            tuple(sorted((n, r.frozen().model_dump_json()) for n, r in self.local.items())),
            tuple(self.runs),
            tuple(self.notifications),
        )


def moves_of(action: Action) -> list[tuple[Event, Label, Label]]:
    """The baton moves an action makes: (event, expected baton, baton left)."""
    if isinstance(action, ExecuteTask):
        return [
            (Event.CLAIM, action.expect, action.claimed),
            (Event.POST_RESULT, action.claimed, action.done),
        ]
    if isinstance(action, DeclineTask | ReportHalfDone | MoveBaton):
        return [(action.event, action.expect, action.to)]
    if isinstance(action, ReclaimTask):
        return [(Event.RECLAIM, action.expect, action.to)]
    if isinstance(action, SendResult) and action.expect is not None and action.to is not None:
        return [(action.event, action.expect, action.to)]
    return []


def assert_moves_are_rows(snapshot: Snapshot, node: str, actions: list[Action]) -> None:
    """Every move any action makes is a row of the baton table, taken by the acting node's
    role in that job, from the state the job is in (or the one its previous move left)."""
    for action in actions:
        number = getattr(action, "issue", None)
        issue = next((i for i in snapshot.issues if i.number == number), None)
        if issue is None:
            continue
        job = parse_body(issue.body)
        role = Role.WORKER if node == job.worker else Role.CONTROLLER
        state = state_of(issue.labels, closed=issue.state == "closed")
        with contextlib.suppress(Exception):  # the state decide() reads the job in (a bare
            state = read_thread(issue, snapshot.master).state  # `resolved` is not followed)
        if isinstance(action, CloseJob):
            assert (state, Event.RESOLVE, role) in TABLE, (state, action)
        for event, expect, to in moves_of(action):
            assert (state, event, role) in TABLE, (state, event, role)
            target = TABLE[(state, event, role)]
            assert (baton_of(state), baton_of(target)) == (expect, to), (state, event, action)
            state = target
