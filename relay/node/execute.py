"""The worker's turn, from claim to RESULT: the one action that runs anything.

Order matters and is the contract of ``ExecuteTask``: the atomic claim ref first (the
loser of a race stops there), then the local record, the claim comment and the baton;
then the steps; then redaction before anything leaves the machine; then the log is
committed and pushed, the RESULT posted and the baton passed back as the last act.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import subprocess
from collections.abc import Callable, Iterator, Mapping
from contextlib import AbstractContextManager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple, Protocol

from relay.edges.github import GitHubClient
from relay.errors import ConfigError, RelayError
from relay.node.artifacts import Found, bring_back, find_artifacts
from relay.node.context import NodeContext
from relay.node.redaction import redactor_for
from relay.protocol import (
    Artifact,
    ClaimMsg,
    ExecuteTask,
    Label,
    ResultMsg,
    RunLimits,
    Status,
    TaskMsg,
    claim_ref,
    log_path,
    render_message,
    result_status,
    with_baton,
)
from relay.protocol.labels import batons_in
from relay.protocol.logs import cap_log, excerpt
from relay.protocol.messages import task_digest

if TYPE_CHECKING:
    from relay.edges.relay_tree import RelayTree
    from relay.edges.steps import RunOutcome


@dataclass(frozen=True)
class TaskReport:
    """What one executed task produced, for the pass's own report."""

    issue: int
    task: int
    status: Status
    seconds: float
    log_url: str | None


HEARTBEAT_ENV = "RELAY_HEARTBEAT_SECONDS"  # seconds between heartbeats (default 300)


def run_limits(ctx: NodeContext) -> RunLimits:
    """The node's run limits from its config (the defaults when it has none); the
    heartbeat interval may be set by RELAY_HEARTBEAT_SECONDS."""
    beat = _heartbeat_seconds()
    if ctx.config is None:
        return RunLimits(heartbeat=beat)
    return RunLimits(
        step_timeout=ctx.config.step_timeout, executor=bool(ctx.config.executor), heartbeat=beat
    )


def _heartbeat_seconds() -> float:
    from relay.protocol.work import DEFAULT_HEARTBEAT

    raw = os.environ.get(HEARTBEAT_ENV, "")
    try:
        value = float(raw)
    except ValueError:
        return DEFAULT_HEARTBEAT
    return value if value > 0 else DEFAULT_HEARTBEAT


def task_text(ctx: NodeContext, task: TaskMsg) -> str:
    """The file an agent command (--executor) reads: the master section's watcher
    instructions for this node, then the TASK as quoted data."""
    from relay.protocol.agent import agent_prompt

    return agent_prompt(ctx.master, node=ctx.node, task=task)


class TaskBox(Protocol):
    """Where a boxed TASK's steps run: a clone of its commit behind a boundary."""

    @property
    def tree(self) -> Path: ...
    @property
    def level(self) -> str: ...
    @property
    def namespaces(self) -> bool: ...
    @property
    def env(self) -> Mapping[str, str]: ...
    def wrap(self, command: str) -> str: ...


# makes the box of a commit of the clone at a root (the watcher hands in the loop's own)
Boxer = Callable[[Path, str], AbstractContextManager[TaskBox]]


@dataclass(frozen=True)
class TaskRun:
    """What running a TASK gave: the steps' outcome, or why its branch could not be
    checked out (then no step ran)."""

    outcome: RunOutcome
    checkout_error: str | None = None
    found: tuple[Found, ...] = ()  # the artifacts the TASK named, read before leaving
    unmatched: tuple[str, ...] = ()  # its artifact globs that matched no file
    problems: tuple[str, ...] = ()  # what went wrong reading them, said in the RESULT
    executor: bool = False  # the node's agent command ran the TASK, not its steps
    refused: str | None = None  # why no step ran: the branch is not at the TASK's commit
    commit: str | None = None  # the TASK's commit, once the steps ran there
    notes: tuple[str, ...] = ()  # what the RESULT says of where they ran (the box's level)


def render_log(task: TaskMsg, run: TaskRun, *, node: str) -> str:
    """The full log of a run, before redaction: a header, then each step's output."""
    lines = [f"relay TASK {task.task} of #{task.issue} on {node}", ""]
    if run.checkout_error is not None or run.refused is not None:
        said = run.refused or run.checkout_error or ""
        lines += [f"$ git checkout {task.checkout}", said, "[no step ran]", ""]
    for number, step in enumerate(run.outcome.steps, start=1):
        status = "timed out" if step.timed_out else f"exit {step.exit_code}"
        if step.stopped:
            status = f"stopped by {stop_word()} ({status})"
        lines += [f"$ {step.command}", step.output.rstrip("\n")]
        if step.truncated_bytes:
            lines.append(f"[... {step.truncated_bytes} bytes of output cut ...]")
        lines += [f"[step {number}: {status} after {step.duration:.2f}s]", ""]
    ran = len(run.outcome.steps)
    if run.outcome.status == "stopped" and not run.executor and ran < len(task.steps):
        never = ", ".join(str(n) for n in range(ran + 1, len(task.steps) + 1))
        lines += [f"[relay was stopped: never ran step {never}]", ""]
    return "\n".join(lines) + "\n"


def stop_word() -> str:
    """What stopped this process, in a person's words: "Ctrl-C" or the signal's name."""
    import signal

    from relay.edges.steps import stop_requested

    signum = stop_requested()
    if signum == signal.SIGINT:
        return "Ctrl-C"
    try:
        return signal.Signals(signum).name
    except ValueError:
        return "a stop"


def run_task(ctx: NodeContext, task: TaskMsg, *, boxer: Boxer | None = None) -> TaskRun:
    """Run the TASK in relay's own worktree (never the person's), at the branch it names or
    else at the commit the claim points at, its steps literally or through the node's
    agent command. A TASK that names a commit runs only when its branch is there (else
    no step runs, and the RESULT says why); a boxed one runs its steps literally in the
    node's judged box, a clone of that commit: never beside the node's clone."""
    from relay.edges.relay_tree import RelayTree
    from relay.edges.steps import RunOutcome, RunStatus

    tree = RelayTree(ctx.clone)
    try:
        try:
            if task.checkout:
                tip = _branch_tip(tree, task.checkout)
                if task.commit is not None and tip != task.commit:
                    said = (
                        f"branch `{task.checkout}` is at {tip[:12]}, not at {task.commit[:12]},"
                        " the commit this TASK names (pushed over since it was posted?)"
                    )
                    return TaskRun(RunOutcome(RunStatus.FAILED, ()), refused=said)
                if task.boxed:
                    return _run_boxed(ctx, task, tip, boxer)
                where = tree.on_branch(task.checkout, tip)
            else:
                where = tree.check_out(ctx.clone.remote_sha())
        except RelayError as err:
            return TaskRun(RunOutcome(RunStatus.FAILED, ()), checkout_error=str(err))
        outcome = _run_here(ctx, task, where)
        executor = bool(ctx.config and ctx.config.executor)
        try:
            found, unmatched = find_artifacts(where, task.artifacts)
        except Exception as err:  # the steps ran: nothing here may lose their RESULT
            said = f"The artifacts could not be read: {_one_line(err)}."
            return TaskRun(outcome, problems=(said,), executor=executor, commit=task.commit)
        return TaskRun(
            outcome, found=found, unmatched=unmatched, executor=executor, commit=task.commit
        )
    finally:
        tree.release()


def _branch_tip(tree: RelayTree, branch: str) -> str:
    """The commit ``branch`` is at as the remote has it (else as this clone has it)."""
    tip = tree.remote_tip(branch)
    if tip is None:
        try:
            tip = tree.clone.local("rev-parse", "--verify", "-q", f"refs/heads/{branch}").strip()
        except Exception:
            raise ConfigError(
                f"cannot check out branch {branch!r}: not found locally or on origin"
            ) from None
    return tip


def _run_boxed(ctx: NodeContext, task: TaskMsg, commit: str, boxer: Boxer | None) -> TaskRun:
    """A boxed TASK's steps, run literally (never by the node's agent command) in a box of
    ``commit`` that ``boxer`` makes (the loop's judged box: the node's clone, its git
    directory, relay's secrets and the real HOME hidden, no credential in the
    environment), as a loop's own gates run a candidate; its artifacts are read before
    the box goes. No boxer, or a box that cannot be made: no step runs."""
    from relay.edges.steps import RunOutcome, RunStatus

    if boxer is None:
        said = "this relay cannot make the box a boxed TASK runs in (a pass of `relay watch` can)"
        return TaskRun(RunOutcome(RunStatus.FAILED, ()), refused=said)
    made = False
    try:
        with boxer(ctx.root, commit) as box:
            made = True
            note = f"The steps ran in a judged box of {commit[:12]} ({box.level})."
            if not box.namespaces:
                note += " This machine cannot make namespaces: the box held the environment only."
            outcome = _run_here(ctx, task, box.tree, env=box.env, wrap=box.wrap)
            try:
                found, unmatched = find_artifacts(box.tree, task.artifacts)
            except Exception as err:  # the steps ran: nothing here may lose their RESULT
                said = f"The artifacts could not be read: {_one_line(err)}."
                return TaskRun(outcome, problems=(said,), commit=commit, notes=(note,))
            return TaskRun(outcome, found=found, unmatched=unmatched, commit=commit, notes=(note,))
    except (RelayError, OSError, subprocess.SubprocessError) as err:
        if made:
            raise
        said = f"the box for {commit[:12]} could not be made: {_one_line(err)}"
        return TaskRun(RunOutcome(RunStatus.FAILED, ()), checkout_error=said)


def _run_here(
    ctx: NodeContext,
    task: TaskMsg,
    where: Path,
    *,
    env: Mapping[str, str] | None = None,
    wrap: Callable[[str], str] | None = None,
) -> RunOutcome:
    """The TASK's steps in ``where`` (each as ``wrap`` makes it, in ``env``: a box's), or,
    unwrapped, through the node's agent command when it has one."""
    from relay.edges.steps import run_executor, run_steps

    limits = run_limits(ctx)
    timeout = limits.step_timeout
    executor = ctx.config.executor if ctx.config and wrap is None else None

    from relay.node.progress import StepTicker

    # says a long step runs, through the node's one door to terminals and logs
    redactor = next(iter(ctx.redactors.values()), None) or redactor_for(ctx, "")
    ticker = StepTicker(task.issue, task.task, tuple(task.steps), redact=redactor.redact)

    def started(group: int) -> None:  # kept with the claim: a killed pass leaves no orphan
        ticker.started()
        ctx.state.set_claim_group(issue=task.issue, task=task.task, group=group)

    with ticker:
        if executor:
            text = task_text(ctx, task)
            return run_executor(
                executor, task_text=text, cwd=where, timeout=timeout, on_start=started
            )
        return run_steps(
            task.steps, cwd=where, timeout=timeout, on_start=started, shell=task.shell,
            env=env, wrap=wrap,
        )  # fmt: skip


def reap(ctx: NodeContext, *, issue: int | None = None, task: int | None = None) -> list[str]:
    """Stop the steps that a killed pass left running: of one claim (``issue``, ``task``),
    or of every claim this node holds. What it did, in words, one item a step."""
    from relay.edges.steps import group_alive, kill_group

    said = []
    for claim in ctx.state.claims():
        if issue is not None and (claim.issue, claim.task) != (issue, task):
            continue
        if claim.group is not None and group_alive(claim.group):
            kill_group(claim.group)
            said.append(
                f"the step of TASK {claim.task} on #{claim.issue} was still running"
                f" (process group {claim.group}) and was stopped"
            )
        if claim.group is not None:
            ctx.state.set_claim_group(issue=claim.issue, task=claim.task, group=None)
    return said


def summarise(task: TaskMsg, run: TaskRun) -> tuple[Status, str, int | None]:
    """The RESULT's status, one-line summary and failed step (the protocol's rule, given
    how the run ended)."""
    from relay.edges.steps import RunStatus
    from relay.protocol.work import StepEnd, run_summary, stopped_summary

    outcome, failed = run.outcome, None
    if run.refused is not None:
        return run_summary(task, checkout_failed=False, failed=None, refused=run.refused)
    if run.checkout_error is None and outcome.status == RunStatus.STOPPED:
        last = outcome.steps[-1] if outcome.steps else None
        cut = None
        if last is not None and last.stopped:
            cut = StepEnd(number=len(outcome.steps), command=last.command)
        return stopped_summary(
            task, ran=len(outcome.steps), interrupted=cut, by=stop_word(), executor=run.executor
        )
    if run.checkout_error is None and outcome.status != RunStatus.DONE:
        step = outcome.steps[-1] if outcome.steps else None
        failed = StepEnd(
            number=outcome.failed_step or max(len(outcome.steps), 1),
            command=step.command if step else "(no step ran)",
            timed_out=step.timed_out if step else False,
            exit_code=step.exit_code if step else None,
        )
    return run_summary(task, checkout_failed=run.checkout_error is not None, failed=failed)


def publish_log(
    ctx: NodeContext, issue: int, task: int, text: str, files: tuple[tuple[str, bytes], ...] = ()
) -> str:
    """Commit and push the redacted log from relay's own worktree to the data branch, with
    the artifacts' ``files`` (repository path, content) in the same commit; return the
    log's permalink at the pushed commit (or at the tip that has it already; an
    artifact's is the same with its own path)."""
    from relay.edges.relay_tree import RelayTree

    path = log_path(issue, task)
    message = f"relay: log of TASK {task} on #{issue} ({ctx.node})"
    home = ctx.clone.current_branch()
    branch = ctx.master.data_branch or home
    if branch is None:
        raise ConfigError(f"the clone at {ctx.root} is on a detached HEAD; check out a branch")
    tree = RelayTree(ctx.clone)
    blobs = {Path(name): data for name, data in files}
    edits = {Path(path): lambda _old: text}
    pushed = tree.publish(edits, message, branch=branch, base=home, files=blobs)
    sha = pushed.sha if pushed is not None else tree.tree().head_sha()  # the same log is in
    ctx.clone.fast_forward(branch)
    return ctx.html_url(f"blob/{sha}/{path}")


@dataclass(frozen=True)
class Claimed:
    """A claim this node holds: the message as posted, and the comment carrying it (which
    the heartbeat edits)."""

    message: ClaimMsg
    comment_id: int


async def claim(gh: GitHubClient, ctx: NodeContext, action: ExecuteTask) -> Claimed | None:
    """Take the task: attempt nonce, claim ref, local record, claim comment, baton. None:
    another runner claimed it first. (No 👀 on the TASK: the claim comment and the baton
    say the same, and a round trip stays within six writes: the claim comment and its baton
    move are one request, as are the RESULT and its move.)

    The nonce is kept before the ref is created, so a ref this node made is its own even
    when the answer was lost or the pass was killed before the record (the next pass takes
    it over, ``action.takeover``). The clone is fresh: the pass pulled just before applying
    any action that changes something (watchers/once.py), so the claim points at a commit
    the remote has."""
    from relay.protocol.work import made_at

    issue, number = action.issue, action.task.task
    sha = ctx.clone.remote_sha()  # relay's tree runs and publishes there: local work stays
    if action.takeover and not _takeover_open(ctx, issue, number):
        return None  # taken over already: the same action applied twice does nothing more
    nonce = ctx.state.record_attempt(issue=issue, task=number, now=datetime.now(UTC))
    if not action.takeover and not await gh.create_ref(claim_ref(issue, number), sha):
        ctx.state.clear_attempt(issue=issue, task=number)
        return None
    if action.takeover_notice is not None:
        await gh.create_comment(issue, ctx.sign(action.takeover_notice))
    ctx.state.record_claim(
        issue=issue, task=number, node=ctx.node, now=datetime.now(UTC), nonce=nonce
    )
    message = made_at(action.claim.model_copy(update={"nonce": nonce}), datetime.now(UTC))
    body = ctx.sign(render_message(message))
    posted = await comment_then_move(
        gh, issue, body, expect=action.expect, to=action.claimed, own=True
    )
    if await _claimed_twice(gh, action, posted.moves):
        ctx.state.drop_claim(issue=issue, task=number)
        notice = (
            f"**relay:** TASK {number} was claimed by two runners of `{action.claim.node}` at"
            " once (its claim ref was deleted between them, or made by someone else): this"
            " runner runs nothing, and this comment was its claim. If no RESULT follows, the"
            " TASK is reported half-done when the other claim lapses; post a new TASK then."
        )
        # its claim withdrawn in place (an edit, not a new comment): the thread counts a
        # TASK's first claim, and the other runner's, which it may be running, is the one
        await gh.update_comment(posted.id, ctx.sign(notice))
        return None
    return Claimed(message, posted.id)


async def _claimed_twice(gh: GitHubClient, action: ExecuteTask, moves: int) -> bool:
    """Whether the issue's events, read once this claim's own `working` is among them,
    hold another claim of the TASK since it was posted: another runner of this node that
    saw the TASK unclaimed too (the claim ref, the only lock before, can be deleted by
    anyone who can push). Events cannot be deleted, and each claim moves the baton as its
    own event, so of two runners the later to read sees both, and at most one runs.
    ``moves``: the events this claim may have made itself (two where an answer was lost;
    then another runner's one event, at that very moment, is not told apart). Where the
    events cannot be read at all, the task runs, as the claim ref let it."""
    from relay.node.observe import to_label_events
    from relay.protocol.tamper import claims_since

    if action.posted is None:  # (no TASK comment read: decide never runs one)
        return False
    for wait in (2.0, 5.0, 0.0):  # (the client retries each read too)
        try:
            listed = await gh.list_issue_events(action.issue)
            break
        except RelayError:
            if not wait:  # GitHub cannot say: the claim ref held, and the task runs (a
                return False  # claim left unrun would answer an honest TASK half-done)
            await asyncio.sleep(wait)
    events = to_label_events(action.issue, listed)
    claims = claims_since(events, action.issue, set(action.party), action.posted)
    return len(claims) > action.known + moves


def _takeover_open(ctx: NodeContext, issue: int, task: int) -> bool:
    """Whether a claim ref is still this node's to take over: its own attempt's, or a bare
    ref (another runner's, or one a pusher made) whose grace is over, unless this node's
    records hold a claim of the task already (the same takeover applied twice)."""
    key = (issue, task)
    return key in ctx.state.attempts() or ctx.state.claim(issue=issue, task=task) is None


async def heartbeat(
    gh: GitHubClient, ctx: NodeContext, held: Claimed, *, limits: RunLimits
) -> None:
    """While the steps run: push the claim's ``alive_until`` forward every interval (an
    edit of the signed claim comment), so a controller can tell a long task from a dead
    worker. A beat that fails is tried again at the next interval."""
    from relay.protocol.work import alive_until

    while True:
        await asyncio.sleep(limits.heartbeat)
        now = datetime.now(UTC)
        alive = min(held.message.lease_until, alive_until(now, limits))
        beat = held.message.model_copy(update={"alive_until": alive})
        with contextlib.suppress(RelayError):
            await gh.update_comment(held.comment_id, ctx.sign(render_message(beat)))


async def execute(
    gh: GitHubClient,
    ctx: NodeContext,
    action: ExecuteTask,
    *,
    token: str,
    boxer: Boxer | None = None,
) -> TaskReport | None:
    """Claim, run, redact, publish, answer; None when another process claimed it first.

    ``token`` is the one this pass acts with, masked wherever it might show; ``boxer``
    makes the box a boxed TASK runs in (none: such a TASK runs nothing)."""
    started = datetime.now(UTC)
    # from the claim on, Ctrl-C stops the TASK, never the pass that must answer it
    with stopping(f"TASK {action.task.task} on #{action.issue}") as leave:
        held = await claim(gh, ctx, action)
        if held is None:
            return None
        return await _run_and_answer(
            gh, ctx, action, held, started=started, token=token, leave=leave, boxer=boxer
        )


async def _run_and_answer(
    gh: GitHubClient,
    ctx: NodeContext,
    action: ExecuteTask,
    held: Claimed,
    *,
    started: datetime,
    token: str,
    leave: Leave | None = None,
    boxer: Boxer | None = None,
) -> TaskReport:
    """Run the claimed TASK and answer it (a run stopped on the node is answered too)."""
    task = action.task
    leave = leave or Leave()
    leave.hold()  # a third Ctrl-C waits until the log so far is kept
    beating = asyncio.create_task(heartbeat(gh, ctx, held, limits=run_limits(ctx)))
    try:
        run = await asyncio.to_thread(run_task, ctx, task, boxer=boxer)
    finally:
        beating.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await beating
    draft = safe_draft(ctx, task, run, token=token)
    # kept before the log is pushed: a pass killed from here on is finished by the next
    ctx.state.save_draft(issue=action.issue, task=task.task, draft=_draft_json(draft))
    leave.release()  # leaves now if a third Ctrl-C came while the draft was made
    try:
        result = await publish_draft(ctx, draft, token=token)
        body = ctx.sign(render_message(result))
    except Exception as err:  # the steps ran: their RESULT is still posted, saying so
        result = _unpublished(ctx, draft.result, err, token=token)
        body = ctx.sign(render_message(result))
    # kept before anything is posted: a failure from here on is finished by a later pass
    ctx.state.save_outbox(issue=action.issue, task=task.task, body=body)
    # composed by this pass a moment ago: it cannot be among the comments yet (a POST whose
    # answer is lost is looked for by the client itself), so it is posted without a search
    await send_result(
        gh, ctx, issue=action.issue, task=task.task, body=body, post=True, fresh=True,
        move=(action.claimed, action.done),
    )  # fmt: skip
    ctx.state.clear_outbox(issue=action.issue, task=task.task)
    seconds = (datetime.now(UTC) - started).total_seconds()
    return TaskReport(action.issue, task.task, result.status, seconds, result.log_url)


class Leave:
    """When a third Ctrl-C may leave: at once, except while a claimed TASK's steps run and
    their draft is not yet kept (leaving then would lose the log so far and answer the
    TASK as half-done); a third signal in that span leaves as soon as the draft is kept."""

    def __init__(self, what: str = "") -> None:
        self.what = what
        self.holding = False
        self.asked = 0  # the signal that asked to leave while holding (0: none)

    def hold(self) -> None:
        self.holding = True

    def now(self, signum: int) -> None:
        """A third signal: leave at once, or once the draft is kept (said on stderr)."""
        if self.holding:
            if not self.asked:
                self.asked = signum
                _tell(
                    f"relay: leaving as soon as the log so far of {self.what} is kept;"
                    " the next pass posts its RESULT"
                )
            return
        _leave(signum)

    def release(self) -> None:
        """The draft is kept: a leave asked meanwhile happens now."""
        self.holding = False
        if self.asked:
            _tell(f"relay: left before posting the RESULT of {self.what}; the next pass posts it")
            _leave(self.asked)


def _leave(signum: int) -> None:
    import signal

    if signum == signal.SIGINT:
        raise KeyboardInterrupt
    raise SystemExit(128 + signum)


@contextlib.contextmanager
def stopping(what: str) -> Iterator[Leave]:
    """While a claimed TASK runs and is answered: Ctrl-C or SIGTERM stops it instead of
    relay. The first passes the signal on to the running step (killed a few seconds later,
    steps.stop_grace) and runs no later step, so the RESULT says ``stopped``; the second
    kills the step at once (when none runs, it leaves as a third does); a third leaves
    (once the steps' draft is kept, which the next pass finishes: never before, or the log
    so far would be lost). Each is said on stderr in one line. Only the main thread can
    hold signals: elsewhere (a test's thread) nothing changes."""
    import signal
    import threading

    from relay.edges.steps import request_stop, steps_running, stop_grace

    leave = Leave(what)
    if threading.current_thread() is not threading.main_thread():
        yield leave
        return
    asked = [0]

    def stop(signum: int, _frame: object) -> None:
        asked[0] += 1
        key = "Ctrl-C" if signum == signal.SIGINT else signal.Signals(signum).name
        if asked[0] == 1:
            running = steps_running()
            request_stop(signum)
            now = (
                f"its running step gets {key} and is killed in {stop_grace():g}s if it"
                " has not ended"
                if running
                else "no further step runs"
            )
            again = "to kill the step at once" if running else "leaves now"
            _tell(
                f"relay: stopping {what}: {now}; the RESULT will say `stopped`"
                f" ({key} again {again})"
            )
        elif asked[0] == 2 and steps_running():
            request_stop(signum, force=True)
            _tell(f"relay: killed the step; posting the RESULT of {what} ({key} again leaves now)")
        else:  # a third, or a second when no step runs to be killed
            request_stop(signum, force=True)
            leave.now(signum)

    signals = [signal.SIGINT, signal.SIGTERM]
    old = {sig: signal.signal(sig, stop) for sig in signals}
    try:
        yield leave
    finally:
        for sig, handler in old.items():
            signal.signal(sig, handler)


def _tell(line: str) -> None:
    """One line on stderr, written from a signal handler: straight to the descriptor (the
    stream may be mid-write in this very thread), after clearing a progress line."""
    import sys

    err = sys.stderr
    if err is None:
        return
    tty = bool(getattr(err, "isatty", None) and err.isatty())
    data = ("\r\033[K" if tty else "") + line + "\n"
    with contextlib.suppress(OSError, ValueError):
        os.write(err.fileno(), data.encode("utf-8", "replace"))


def _draft_json(draft: Draft) -> str:
    import base64
    import json

    files = [[name, base64.b64encode(data).decode()] for name, data in draft.files]
    return json.dumps(
        {"result": draft.result.model_dump(mode="json"), "log": draft.log, "files": files}
    )


def load_draft(text: str) -> Draft:
    """A kept draft, as :func:`_draft_json` wrote it."""
    import base64
    import json

    doc = json.loads(text)
    files = tuple((str(n), base64.b64decode(d)) for n, d in doc.get("files", []))
    return Draft(ResultMsg.model_validate(doc["result"]), doc.get("log"), files)


async def finish_draft(ctx: NodeContext, *, issue: int, task: int, token: str) -> str | None:
    """The RESULT body of a run whose pass died before its RESULT was kept: the kept
    draft's log pushed now, the RESULT signed and kept. None when there is no draft."""
    text = ctx.state.draft(issue=issue, task=task)
    if text is None:
        return None
    result = await publish_draft(ctx, load_draft(text), token=token)
    body = ctx.sign(render_message(result))
    ctx.state.save_outbox(issue=issue, task=task, body=body)
    return body


async def send_result(
    gh: GitHubClient,
    ctx: NodeContext,
    *,
    issue: int,
    task: int,
    body: str,
    post: bool,
    fresh: bool = False,
    move: tuple[Label, Label] | None = None,
) -> None:
    """Post a kept RESULT — unless one of the newest comments already is it (a POST whose
    answer was lost, by a pass that died; not looked for when ``fresh``: this pass composed
    it) — and record the task as answered. ``move``: then move the baton from the first
    label to the second (with the comment, in one request, when it is posted here)."""
    if post and (fresh or not await _already_posted(gh, issue, body)):
        if move is not None:
            await comment_then_move(gh, issue, body, expect=move[0], to=move[1])
            move = None
        else:
            await gh.create_comment(issue, body)
    if move is not None:
        await move_baton(gh, issue, expect=move[0], to=move[1])
    status = _status_of(body)
    ctx.state.finish_claim(issue=issue, task=task, outcome=status, now=datetime.now(UTC))


async def _already_posted(gh: GitHubClient, issue: int, body: str) -> bool:
    from relay.protocol.signatures import unsigned

    newest = (await gh.list_comments(issue))[-20:]
    return any(unsigned(c.body) == unsigned(body) for c in newest)


def _status_of(body: str) -> str:
    from relay.protocol.wire import decode_block

    fields = decode_block(body).get("fields", {})
    return str(fields.get("status", "done")) if isinstance(fields, dict) else "done"


@dataclass(frozen=True)
class Draft:
    """A finished run's RESULT before its log is pushed: the message (no log link yet) and
    the redacted log to publish (None when it was withheld). Kept in the node's outbox
    before the push, so a pass killed while pushing loses nothing: the next one pushes
    the same log and posts the RESULT."""

    result: ResultMsg
    log: str | None
    files: tuple[tuple[str, bytes], ...] = ()  # artifacts to commit: (repository path, data)


def draft_result(ctx: NodeContext, task: TaskMsg, run: TaskRun, *, token: str) -> Draft:
    """The RESULT of a run with every word from the machine redacted, and its redacted
    log; nothing is published yet."""
    redactor = redactor_for(ctx, token)
    status, summary, failed = summarise(task, run)
    redacted, report = redactor.redact_with_report(render_log(task, run, node=ctx.node))
    observations = list(run.notes)
    left = _left_modified(ctx)
    if left:
        observations.append(
            f"The task left tracked files modified ({', '.join(left[:5])}) in relay's own"
            " worktree; they are dropped before the next task."
        )
    artifacts, files, unmatched = bring_back(ctx, task, run, redactor)
    observations += unmatched
    tail = ""
    if report.safe:
        tail = "\n".join(excerpt(redacted, failed=status != Status.DONE))
    else:
        observations.append(f"The log was not published: {report.reason}.")
    if report.counts:
        kinds = ", ".join(f"{k} ×{n}" for k, n in sorted(report.counts.items()))
        observations.append(f"Redacted before publishing: {kinds}.")
    result = ResultMsg(
        issue=task.issue,
        node=ctx.node,
        task=task.task,
        status=status,
        summary=redactor.redact(summary),
        excerpt=tail,
        observations=redactor.redact(" ".join(observations))[:4000],
        failed_step=failed,
        artifacts=artifacts,
        task_digest=task_digest(task),
        commit=run.commit if run.refused is None and run.checkout_error is None else None,
    )
    return Draft(result, sealed_log(ctx, task, cap_log(redacted)) if report.safe else None, files)


def sealed_log(ctx: NodeContext, task: TaskMsg, log: str) -> str:
    """``log`` ending with this node's signed seal of the task: the worker's memory that
    it ran, which no one else can write (:func:`relay.protocol.work.sealed_by`)."""
    from relay.protocol.work import seal_line

    body, line = seal_line(log, issue=task.issue, task=task.task, node=ctx.node)
    return body + ctx.sign(line).rstrip("\n") + "\n"


def safe_draft(ctx: NodeContext, task: TaskMsg, run: TaskRun, *, token: str) -> Draft:
    """:func:`draft_result`, or when composing it raised (an artifact, redaction, the log):
    a RESULT with no log that says in one line what went wrong, so the claim is answered."""
    try:
        return draft_result(ctx, task, run, token=token)
    except Exception as err:
        status, _, failed = summarise(task, run)
        bare = ResultMsg(
            issue=task.issue,
            node=ctx.node,
            task=task.task,
            status=Status.PARTIAL if status == Status.DONE else Status.FAILED,
            summary=f"The steps ran ({status.value}) but their RESULT could not be composed.",
            failed_step=failed,
        )
        return Draft(_unpublished(ctx, bare, err, token=token, what="composed"), None)


def _unpublished(
    ctx: NodeContext, result: ResultMsg, err: Exception, *, token: str, what: str = "published"
) -> ResultMsg:
    """``result`` without its log, saying why in one redacted line (the error's own words
    only when redaction itself works)."""
    said = f"The log and artifacts could not be {what}: {_one_line(err)}."
    try:
        said = redactor_for(ctx, token).redact(said)
    except Exception:
        said = f"The log and artifacts could not be {what} ({type(err).__name__})."
    status = Status.PARTIAL if result.status == Status.DONE else result.status
    kept = f"{result.observations[: 4000 - len(said) - 1]} {said}".strip()
    return result.model_copy(
        update={"status": status, "log_url": None, "artifacts": (), "observations": kept}
    )


def _one_line(err: BaseException) -> str:
    """An error as one short line: its type and its first line."""
    first = str(err).strip().splitlines()[0] if str(err).strip() else ""
    return f"{type(err).__name__}: {first[:300]}" if first else type(err).__name__


def _left_modified(ctx: NodeContext) -> list[str]:
    """Tracked files the run left modified in relay's worktree (none when it has none)."""
    from relay.edges.relay_tree import RelayTree

    tree = RelayTree(ctx.clone)
    if not (tree.path / ".git").is_file():
        return []
    return tree.tree().dirty_paths()


async def publish_draft(ctx: NodeContext, draft: Draft, *, token: str) -> ResultMsg:
    """Push the draft's log (again, if a killed pass pushed it already: the same log is
    not committed twice) and return the RESULT with its link — or saying why there is
    none."""
    result = draft.result
    if draft.log is None:
        return result
    said: list[str] = [result.observations] if result.observations else []
    log_url: str | None = None
    try:
        log_url = await asyncio.to_thread(
            publish_log, ctx, result.issue, result.task, draft.log, draft.files
        )
    except RelayError as err:
        said.append(redactor_for(ctx, token).redact(f"The log could not be pushed: {err}"))
    except OSError as err:  # a path that is a file, a full disk, permissions
        why = err.strerror or type(err).__name__
        said.append(f"The log could not be written ({why}); it is not published.")
    status = result_status(result.status, log_pushed=log_url is not None)
    update: dict[str, object] = {
        "log_url": log_url,
        "status": status,
        "observations": " ".join(said)[:4000],
    }
    if log_url is not None and draft.files:
        update["artifacts"] = _linked(result, draft, log_url)
    return result.model_copy(update=update)


def _linked(result: ResultMsg, draft: Draft, log_url: str) -> tuple[Artifact, ...]:
    """The RESULT's artifacts with the permalinks of those committed (the log's commit)."""
    from relay.protocol.work import artifact_path

    committed = {name for name, _ in draft.files}
    head = log_url[: log_url.index(log_path(result.issue, result.task))]
    return tuple(
        a.model_copy(update={"url": head + artifact_path(result.issue, result.task, a.path)})
        if artifact_path(result.issue, result.task, a.path) in committed
        else a
        for a in result.artifacts
    )


async def compose_result(ctx: NodeContext, task: TaskMsg, run: TaskRun, *, token: str) -> ResultMsg:
    """The RESULT of a run: the log redacted and pushed, and every word of the comment
    that came from the machine (commands, errors, paths) redacted as well."""
    return await publish_draft(ctx, draft_result(ctx, task, run, token=token), token=token)


class Posted(NamedTuple):
    """A comment posted with its baton move: its id, and how many writes may have put the
    baton on (each an event of this node's: two where a mutation's answer was lost and the
    move was made again)."""

    id: int
    moves: int


async def comment_then_move(
    gh: GitHubClient, number: int, body: str, *, expect: Label, to: Label, own: bool = False
) -> Posted:
    """Post ``body``, then move the baton from ``expect`` to ``to`` (as :func:`move_baton`):
    one content-creating request where GitHub's GraphQL takes both, the comment first and
    the labels after it in the same mutation; else the two REST writes. ``own``: see
    :func:`move_baton`.

    Whatever the GraphQL answer leaves undone is done over REST: a comment it did not post
    is posted (never twice: a lost answer is looked for), a baton it did not move is moved."""
    issue = await gh.get_issue(number)
    labels = tuple(label.name for label in issue.labels)
    # (a claim over a `working` someone put there already goes label by label: see own)
    if expect in batons_in(labels) and issue.node_id and not (own and to in batons_in(labels)):
        ids = {label.name: label.node_id for label in issue.labels}
        wanted = with_baton(labels, to)
        for name in wanted:
            if not ids.get(name):
                ids[name] = await gh.label_node_id(name) or ""
        if all(ids.get(name) for name in wanted):
            made, moved = await gh.comment_and_relabel(
                number, body, issue_id=issue.node_id, label_ids=[ids[n] for n in wanted]
            )
            if made is not None:
                if not moved:  # (the mutation may have moved it all the same)
                    await move_baton(gh, number, expect=expect, to=to, own=own)
                return Posted(made, 1 if moved else 2)
    posted = await gh.create_comment(number, body)
    await move_baton(gh, number, expect=expect, to=to, own=own)
    return Posted(posted.id, 1)


async def move_baton(
    gh: GitHubClient, number: int, *, expect: Label, to: Label, own: bool = False
) -> bool:
    """Move the baton from ``expect`` to ``to`` on the labels as they are now (a person may
    have added one while a task ran); False, changing nothing, when it is not at ``expect``.
    ``own``: the move must be this node's own event in the issue's history (a claim: the
    events are what proves a task was claimed once its comments are deleted), so it is
    made wherever the baton is (someone took it away since the pass read it), and a baton
    at ``to`` already (someone put it there, or a move whose answer was lost) is taken off
    and put back by this node; extra events of a claim after its TASK was posted count
    for no other TASK (``relay.protocol.tamper.claimed_by_events``)."""
    issue = await gh.get_issue(number)
    labels = tuple(label.name for label in issue.labels)
    if own and to in batons_in(labels):  # off, then on: the event is this node's
        rest = tuple(name for name in labels if name != to)
        await gh.set_labels(number, rest)
        await gh.set_labels(number, with_baton(rest, to))
        return True
    if expect not in batons_in(labels) and not own:
        return False
    await gh.set_labels(number, with_baton(labels, to))
    return True


def on_result_env(issue: int, task: int, status: str, result_file: str) -> dict[str, str]:
    """The environment of a controller's on-result hook: relay's own (the hook runs on the
    host, as relay does), its PATH without the fenced clone's folders or a relative entry,
    so a bare name in the hook is never a program a maker kept there."""
    from relay.edges.ownpath import own_path

    env = dict(os.environ)
    env.update(
        PATH=own_path(os.environ.get("PATH", "")),
        RELAY_ISSUE=str(issue),
        RELAY_TASK=str(task),
        RELAY_RESULT_STATUS=status,
        RELAY_RESULT_FILE=result_file,
    )
    return env
