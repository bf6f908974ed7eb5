"""Apply: carry out what the protocol decided, and say what was done.

The one applier of every kind of decision: decide()'s actions for a pass
(:class:`Applier`), a planner's :class:`~relay.protocol.planners.Plan` for a verb
(:func:`apply_plan`), and a change to a spine file under ``docs/loop/``
(:func:`publish_edit`, one failure rule for all of them). This is the only place where a
decision awaits I/O. Each branch follows the contract written on its action type in
:mod:`relay.protocol.actions`; the lines returned are what `relay watch` prints for a
person (already free of secrets: they hold only issue numbers, task numbers, statuses and
reasons).
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import tempfile
from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Protocol

from relay.edges.git import Clone
from relay.edges.github import GitHubClient
from relay.errors import ConfigError
from relay.node.context import NodeContext
from relay.node.execute import (
    Boxer,
    TaskReport,
    execute,
    finish_draft,
    move_baton,
    on_result_env,
    reap,
    send_result,
)
from relay.protocol import (
    Action,
    CloseJob,
    DeclineTask,
    ExecuteTask,
    Ignore,
    KeepWatcher,
    MoveBaton,
    NotifyResult,
    PostNotice,
    ReclaimTask,
    ReopenJob,
    ReportHalfDone,
    SendResult,
    Snapshot,
    TearDown,
    Wait,
    render_message,
)
from relay.protocol.planners import Plan


class Applier:
    """Applies one pass's actions for one node; collects lines and task reports."""

    def __init__(
        self,
        gh: GitHubClient,
        ctx: NodeContext,
        snapshot: Snapshot,
        *,
        token: str,
        verbose: bool = False,
        boxer: Boxer | None = None,
    ) -> None:
        self.gh = gh
        self.ctx = ctx
        self.snapshot = snapshot
        self.token = token  # the one this pass acts with
        self.verbose = verbose
        self.boxer = boxer  # where a boxed TASK runs (none: such a TASK is refused)
        # the issues whose TASK another claim took first (its ref, or its baton event):
        # the pass reads them again, as it waits a bare ref out (her ref may be back)
        self.lost: list[int] = []
        self.ignored: dict[int, int] = {}
        self.lines: list[str] = []
        self.tasks: list[TaskReport] = []
        self.teardown = False

    async def apply(self, actions: Sequence[Action]) -> None:
        """Apply every action in order."""
        for action in actions:
            await self.one(action)

    async def one(self, action: Action) -> None:
        """Apply one action."""
        match action:
            case ExecuteTask():
                await self._execute(action)
            case DeclineTask() | ReportHalfDone():
                await self._answer(action)
            case NotifyResult():
                await self._notify(action)
            case MoveBaton():
                await self._move(action)
            case SendResult():
                await self._send(action)
            case CloseJob():
                await self._close(action)
            case ReopenJob():
                await self.gh.update_issue(action.issue, state="open")
                self.lines.append(f"#{action.issue}: opened again (closed by an outsider)")
            case Wait(bare=True):
                self.ctx.state.mark_bare(
                    issue=action.issue, task=action.task, now=datetime.now(UTC)
                )
                self.lines.append(
                    f"#{action.issue}: TASK {action.task} has a claim ref but no claim yet"
                    f" (another runner of this node?); taking it over after {action.until:%H:%M}"
                    " UTC if nobody claims it"
                )
            case ReclaimTask():
                await self._reclaim(action)
            case Wait():
                self.lines.append(
                    f"#{action.issue}: TASK {action.task} is claimed by a running pass;"
                    f" waiting until {action.until:%H:%M} UTC"
                )
            case KeepWatcher():
                self.lines.append(
                    f"no open job binds {self.ctx.node} yet; its watcher stays for the first one"
                    f" until {action.until:%Y-%m-%d %H:%M} UTC"
                )
            case PostNotice():
                await self._post_notice(action)
            case TearDown():
                self.teardown = True
            case Ignore():
                self._ignore(action)

    def _ignore(self, action: Ignore) -> None:
        """Say why a comment is data; comments are counted per issue unless verbose."""
        if self.verbose or action.comment_id is None:
            where = f" comment {action.comment_id}" if action.comment_id else ""
            self.lines.append(f"#{action.issue}{where}: ignored ({action.reason})")
            return
        self.ignored[action.issue] = self.ignored.get(action.issue, 0) + 1

    def ignored_lines(self) -> list[str]:
        """One line per issue counting the comments taken as data."""
        return [
            f"#{issue}: {n} comment{'s' if n > 1 else ''} ignored as data"
            " (run with --verbose to see why)"
            for issue, n in sorted(self.ignored.items())
        ]

    async def _execute(self, action: ExecuteTask) -> None:
        for said in reap(self.ctx):  # never two tasks in one working tree
            self.lines.append(f"#{action.issue}: before TASK {action.task.task}, {said}")
        self.lines.append(f"#{action.issue}: claiming TASK {action.task.task}")
        report = await execute(self.gh, self.ctx, action, token=self.token, boxer=self.boxer)
        if report is None:
            self.lines.append(f"#{action.issue}: TASK {action.task.task} was claimed elsewhere")
            self.lost.append(action.issue)
            return
        self.tasks.append(report)
        self.lines.append(
            f"#{action.issue}: RESULT {report.task} posted ({report.status.value},"
            f" {report.seconds:.1f}s)"
        )

    async def _answer(self, action: DeclineTask | ReportHalfDone) -> None:
        key = (action.issue, action.task)
        if key in self.snapshot.local.results_posted:
            return
        body = action.body
        if isinstance(action, DeclineTask) and action.edited_comment is not None:
            editor = await self.gh.last_editor(action.issue, action.edited_comment)
            if editor is not None:
                said = f"{action.result.summary} GitHub names `{editor[:60]}` as its last editor."
                body = render_message(action.result.model_copy(update={"summary": said}))
        if isinstance(action, ReportHalfDone):
            stopped = reap(self.ctx, issue=action.issue, task=action.task)
            if stopped:  # the report says what happened to the step that was still running
                known = "; ".join([action.known, *stopped])[:4000]
                body = render_message(action.report.model_copy(update={"known": known}))
        await self.gh.create_comment(action.issue, self.ctx.sign(body))
        now = datetime.now(UTC)
        if self.ctx.state.claim(issue=action.issue, task=action.task) is None:
            self.ctx.state.record_claim(
                issue=action.issue, task=action.task, node=self.ctx.node, now=now
            )
        outcome = "declined" if isinstance(action, DeclineTask) else "half-done"
        self.ctx.state.finish_claim(issue=action.issue, task=action.task, outcome=outcome, now=now)
        if action.expect != action.to:
            await move_baton(self.gh, action.issue, expect=action.expect, to=action.to)
        self.lines.append(f"#{action.issue}: TASK {action.task} answered as {outcome}")

    async def _post_notice(self, action: PostNotice) -> None:
        if (action.issue, action.key) in self.snapshot.local.notices:
            return
        body = action.body
        if action.name_editor is not None:
            comment = None if action.name_editor == "body" else int(action.name_editor)
            editor = await self.gh.last_editor(action.issue, comment)
            if editor is not None:
                body += f" GitHub names `{editor[:60]}` as the last editor."
        await self.gh.create_comment(action.issue, self.ctx.sign(body))
        self.ctx.state.mark_notice(issue=action.issue, key=action.key, now=datetime.now(UTC))
        self.lines.append(f"#{action.issue}: said in the thread: {action.reason}")

    async def _notify(self, action: NotifyResult) -> None:
        status = getattr(action.result, "status", None)
        word = status.value if status is not None else "half-done"
        summary = getattr(action.result, "summary", None) or getattr(action.result, "known", "")
        if action.body is not None:  # the body's "Current state"; the controller's account
            body = self.ctx.sign(action.body, issue=action.issue)
            await self.gh.update_issue(action.issue, body=body)
            remember_body(self.ctx, action.issue, action.body)
        if not action.trusted:
            self.lines.append(f"#{action.issue}: the answer was edited after posting; not trusted")
        self.lines.append(f"#{action.issue}: RESULT {action.task} is back: {word} — {summary}")
        hook = self.ctx.config.on_result if self.ctx.config else None
        if hook:
            code = await asyncio.to_thread(run_on_result, hook, action, word)
            self.lines.append(f"#{action.issue}: on-result hook exited {code}")
        self.ctx.state.mark_notified(issue=action.issue, task=action.task, now=datetime.now(UTC))

    async def _send(self, action: SendResult) -> None:
        body = self.ctx.state.outbox_body(issue=action.issue, task=action.task)
        if body is None:  # the pass that ran it died pushing the log: push it, then post
            body = await finish_draft(
                self.ctx, issue=action.issue, task=action.task, token=self.token
            )
        if body is None:
            return
        move = None if action.expect is None or action.to is None else (action.expect, action.to)
        await send_result(
            self.gh, self.ctx, issue=action.issue, task=action.task, body=body,
            post=action.post, move=move,
        )  # fmt: skip
        self.ctx.state.clear_outbox(issue=action.issue, task=action.task)
        said = "posted and handed back" if action.post else "handed back"
        self.lines.append(f"#{action.issue}: the kept RESULT {action.task} was {said}")

    async def _reclaim(self, action: ReclaimTask) -> None:
        """Say in the thread that the worker is gone (once), then take the baton back."""
        if (action.issue, action.key) not in self.snapshot.local.notices:
            await self.gh.create_comment(action.issue, self.ctx.sign(action.body))
            self.ctx.state.mark_notice(issue=action.issue, key=action.key, now=datetime.now(UTC))
        if await move_baton(self.gh, action.issue, expect=action.expect, to=action.to):
            self.lines.append(f"#{action.issue}: {action.reason}; the baton is back here")

    async def _move(self, action: MoveBaton) -> None:
        if not await move_baton(self.gh, action.issue, expect=action.expect, to=action.to):
            return
        self.lines.append(f"#{action.issue}: baton moved to {action.to.value} ({action.reason})")

    async def _close(self, action: CloseJob) -> None:
        from relay.protocol.baton import State
        from relay.protocol.planners import relabel

        now = await self.gh.get_issue(action.issue)
        labels = relabel(tuple(label.name for label in now.labels), State.RESOLVED)
        await self.gh.update_issue(
            action.issue, labels=list(labels), state="closed", state_reason="completed"
        )
        self.lines.append(f"#{action.issue}: closed as resolved")


def run_on_result(hook: str, action: NotifyResult, status: str) -> int:
    """Run the controller's on-result hook with the result as a JSON file."""
    with tempfile.TemporaryDirectory(prefix="relay-result-") as tmp:
        path = Path(tmp) / "result.json"
        path.write_text(json.dumps(action.result.model_dump(mode="json"), indent=2))
        env = on_result_env(action.issue, action.task, status, str(path))
        return subprocess.run(hook, shell=True, env=env, check=False).returncode


class Signer(Protocol):
    """How a node signs what it writes (:meth:`NodeContext.sign`)."""

    def __call__(self, body: str, *, issue: int | None = None) -> str: ...


def remember_body(
    ctx: NodeContext,
    issue: int,
    body: str,
    task: str | None = None,
    posted: datetime | None = None,
) -> None:
    """The controller keeps what it wrote (the body, the TASK and when it was posted) and
    the body's revision as seen: an older body put back later is refused, and `relay job
    repair` writes this one again."""
    from relay.protocol import parse_body
    from relay.protocol.wire import MessageRejected

    ctx.state.keep_job(issue, body=body, task=task, posted=posted)
    try:
        revision = parse_body(body).revision
    except MessageRejected:
        return
    ctx.state.record_seen({issue: revision}, set())


async def apply_plan(
    gh: GitHubClient, plan: Plan, *, sign: Signer, ctx: NodeContext | None = None
) -> int:
    """Apply a planner's Plan: comments, then body, labels (the baton) and close together.
    Every comment and body goes out through ``sign`` (the node's :meth:`NodeContext.sign`).
    A new job's body is signed for its issue, so it is written once more when the issue
    exists (its number is what the signature binds).

    Returns the issue number (new when the plan opened a job).
    """
    if plan.issue is None:
        body = plan.body or ""
        made = await gh.create_issue(title=plan.title or "", body=body, labels=plan.labels or ())
        signed = sign(body, issue=made.number)
        if signed != body:
            await gh.update_issue(made.number, body=signed)
        if ctx is not None:
            remember_body(ctx, made.number, body)
        return made.number
    posted: list[datetime] = []
    for comment in plan.comments:
        posted.append((await gh.create_comment(plan.issue, sign(comment))).created_at)
    # body, labels (the baton) and state in one PATCH: one write, and the baton never
    # moves before the body it goes with
    fields: dict[str, Any] = {}
    if plan.body is not None:
        fields["body"] = sign(plan.body, issue=plan.issue)
    if plan.labels is not None:
        fields["labels"] = list(plan.labels)
    if plan.close:
        fields.update(state="closed", state_reason="completed")
    if fields:
        await gh.update_issue(plan.issue, **fields)
    if ctx is not None and plan.body is not None:
        task = plan.comments[0] if plan.task is not None and plan.comments else None
        remember_body(ctx, plan.issue, plan.body, task, posted[0] if task else None)
    return plan.issue


Edit = Callable[[str | None], str]


def publish_edit(clone: Clone, path: Path, edit: Edit, message: str, *, branch: str | None) -> bool:
    """Publish a change to one spine file (see :func:`publish_edits`)."""
    return publish_edits(clone, {path: edit}, message, branch=branch)


def publish_edits(
    clone: Clone, edits: Mapping[Path, Edit], message: str, *, branch: str | None
) -> bool:
    """Publish changes to spine files in one commit on relay's data branch ``branch`` (the
    roster's this node trusts; None: the clone's own branch, never one LOOP.md names, which
    any pusher edits): in relay's own worktree, apply each edit to its file as the remote
    has it now (None when absent), commit and push; a push another node beat is applied
    again on the new tip. False when no edit changes anything. The branch is recorded in
    the clone's config, so its pulls fetch it too.

    The person's working tree is never touched: it is fast-forwarded afterwards when it is
    on that branch and the move leaves its edits alone. When the push fails nothing is
    left half-published (the commit lives only in relay's tree) and the error is raised."""
    from relay.edges.relay_tree import RelayTree

    home = clone.current_branch()
    target = branch or home
    if target is None:
        raise ConfigError(f"the clone at {clone.root} is on a detached HEAD; check out a branch")
    if branch != clone.data_branch():
        clone.record_data_branch(branch)
    pushed = RelayTree(clone).publish(edits, message, branch=target, base=home)
    if pushed is None:
        return False
    clone.fast_forward(target)
    return True
