"""The worker's turn, from claim to RESULT: the one action that runs anything.

Order matters and is the contract of ``ExecuteTask``: the atomic claim ref first (the
loser of a race stops there), then the local record, the claim comment, the 👀 and the
baton; then the steps; then redaction before anything leaves the machine; then the log
is committed and pushed, the RESULT posted and the baton passed back as the last act.
"""

from __future__ import annotations

import asyncio
import os
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

from relay.errors import RelayError
from relay.github import GitHubClient
from relay.logs import cap_log, excerpt
from relay.node import NodeContext
from relay.protocol import ExecuteTask, ResultMsg, Status, TaskMsg, render_message, with_baton

if TYPE_CHECKING:
    from relay.redact import Redactor
    from relay.runner import RunOutcome

LOG_DIR = "docs/loop/relay"


@dataclass(frozen=True)
class TaskReport:
    """What one executed task produced, for the pass's own report."""

    issue: int
    task: int
    status: Status
    seconds: float
    log_url: str | None


def log_path(issue: int, task: int) -> Path:
    """Where a task's full log lives in the repository."""
    return Path(LOG_DIR) / str(issue) / "logs" / f"result-{task:03d}.log"


def claim_ref(issue: int, task: int) -> str:
    """The ref whose creation is the atomic claim of a task."""
    return f"refs/relay/claims/{issue}/{task}"


def redactor_for(ctx: NodeContext, token: str) -> Redactor:
    """This node's redactor: its own facts and secrets plus the master section's patterns."""
    from relay.redact import DEFAULT_ALLOWED, Redactor, gather_facts

    scope = ctx.master.scope
    extra = {f"scope-{n}": p for n, p in enumerate(scope.redact, start=1)}
    return Redactor(
        gather_facts(token=token),
        extra_patterns=extra,
        allowed=(*DEFAULT_ALLOWED, *scope.redact_allow),
    )


def task_text(task: TaskMsg) -> str:
    """The TASK as a file of quoted data for an agent command (--executor)."""
    return render_message(task)


def render_log(task: TaskMsg, outcome: RunOutcome, *, node: str) -> str:
    """The full log of a run, before redaction: a header, then each step's output."""
    lines = [f"relay TASK {task.task} of #{task.issue} on {node}", ""]
    for number, step in enumerate(outcome.steps, start=1):
        status = "timed out" if step.timed_out else f"exit {step.exit_code}"
        lines += [f"$ {step.command}", step.output.rstrip("\n")]
        if step.truncated_bytes:
            lines.append(f"[... {step.truncated_bytes} bytes of output cut ...]")
        lines += [f"[step {number}: {status} after {step.duration:.2f}s]", ""]
    return "\n".join(lines) + "\n"


def run_task(ctx: NodeContext, task: TaskMsg) -> RunOutcome:
    """Run the TASK's steps literally, or hand it to the node's agent command."""
    from relay.runner import run_executor, run_steps

    timeout = ctx.config.step_timeout if ctx.config else 600.0
    executor = ctx.config.executor if ctx.config else None
    if task.checkout:
        ctx.clone.checkout(task.checkout)
    if executor:
        return run_executor(executor, task_text=task_text(task), cwd=ctx.root, timeout=timeout)
    return run_steps(task.steps, cwd=ctx.root, timeout=timeout)


def summarise(task: TaskMsg, outcome: RunOutcome) -> tuple[Status, str, int | None]:
    """The RESULT's status, one-line summary and failed step."""
    from relay.runner import RunStatus

    count = len(task.steps)
    if outcome.status == RunStatus.DONE:
        return Status.DONE, f"All {count} step(s) succeeded.", None
    failed = outcome.failed_step
    step = outcome.steps[-1]
    why = "timed out" if step.timed_out else f"exited with {step.exit_code}"
    return Status.FAILED, f"Step {failed} of {count} {why}: `{step.command[:120]}`.", failed


def publish_log(ctx: NodeContext, task: TaskMsg, text: str) -> str:
    """Commit and push the redacted log; return its permalink at the pushed commit."""
    path = log_path(task.issue, task.task)
    full = ctx.root / path
    full.parent.mkdir(parents=True, exist_ok=True)
    full.write_text(text, encoding="utf-8")
    message = f"relay: log of TASK {task.task} on #{task.issue} ({ctx.node})"
    pushed = ctx.clone.commit_and_push([full], message)  # None: the same log is already in
    sha = pushed.sha if pushed is not None else ctx.clone.head_sha()
    return ctx.html_url(f"blob/{sha}/{path.as_posix()}")


async def claim(
    gh: GitHubClient, ctx: NodeContext, action: ExecuteTask, labels: tuple[str, ...]
) -> bool:
    """Take the task: claim ref, local record, claim comment, 👀, baton. False: lost the race.

    The clone is fresh: the pass pulled just before applying any action that changes
    something (watchers/once.py), so the claim points at a commit the remote has."""
    sha = ctx.clone.head_sha()
    if not await gh.create_ref(claim_ref(action.issue, action.task.task), sha):
        return False
    ctx.state.record_claim(
        issue=action.issue, task=action.task.task, node=ctx.node, now=datetime.now(UTC)
    )
    await gh.create_comment(action.issue, action.claim_body)
    await gh.create_reaction(action.comment_id, "eyes")
    await gh.set_labels(action.issue, with_baton(labels, action.claimed))
    return True


async def execute(
    gh: GitHubClient, ctx: NodeContext, action: ExecuteTask, labels: tuple[str, ...]
) -> TaskReport | None:
    """Claim, run, redact, publish, answer; None when another process claimed it first."""
    started = datetime.now(UTC)
    if not await claim(gh, ctx, action, labels):
        return None
    task = action.task
    token = ctx.token().value
    outcome = await asyncio.to_thread(run_task, ctx, task)
    status, summary, failed = summarise(task, outcome)
    redacted, report = redactor_for(ctx, token).redact_with_report(
        render_log(task, outcome, node=ctx.node)
    )
    observations = []
    log_url: str | None = None
    if report.safe:
        try:
            log_url = await asyncio.to_thread(publish_log, ctx, task, cap_log(redacted))
        except RelayError as err:
            status = Status.PARTIAL if status == Status.DONE else status
            observations.append(f"The log could not be pushed: {err}")
        tail = "\n".join(excerpt(redacted, failed=status != Status.DONE))
    else:
        observations.append(f"The log was not published: {report.reason}.")
        tail = ""
    if report.counts:
        kinds = ", ".join(f"{k} ×{n}" for k, n in sorted(report.counts.items()))
        observations.append(f"Redacted before publishing: {kinds}.")
    result = ResultMsg(
        issue=action.issue,
        node=ctx.node,
        task=task.task,
        status=status,
        summary=summary,
        log_url=log_url,
        excerpt=tail,
        observations=" ".join(observations)[:4000],
        failed_step=failed,
    )
    await gh.create_comment(action.issue, render_message(result))
    ctx.state.finish_claim(
        issue=action.issue, task=task.task, outcome=status.value, now=datetime.now(UTC)
    )
    await gh.set_labels(action.issue, with_baton(with_baton(labels, action.claimed), action.done))
    seconds = (datetime.now(UTC) - started).total_seconds()
    return TaskReport(action.issue, task.task, status, seconds, log_url)


def on_result_env(issue: int, task: int, status: str, result_file: str) -> dict[str, str]:
    """The environment of a controller's on-result hook."""
    env = dict(os.environ)
    env.update(
        RELAY_ISSUE=str(issue),
        RELAY_TASK=str(task),
        RELAY_RESULT_STATUS=status,
        RELAY_RESULT_FILE=result_file,
    )
    return env
