"""`relay result ISSUE [--wait]`: the newest answer on a job, as the controller reads it."""

from __future__ import annotations

import argparse
import time
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

from relay.commands.bounds import number
from relay.commands.common import add_common, context, run_async
from relay.commands.output import Output
from relay.commands.repos import issue_number
from relay.errors import Interrupted, LocalUsageError, RemoteProtocolError, RemoteUnavailable

if TYPE_CHECKING:  # loaded when the verb runs, after its first requests are on their way
    from relay.node.context import NodeContext
    from relay.protocol import HalfDoneMsg, ResultMsg
    from relay.protocol.thread import Thread


def register(sub: Any) -> None:
    """Add `result`."""
    p: argparse.ArgumentParser = sub.add_parser("result", help="show a job's newest result")
    p.add_argument("issue", type=issue_number, help="the job's issue: 12, #12 or its URL")
    p.add_argument("--wait", action="store_true", help="wait for the outstanding task's result")
    p.add_argument(
        "--timeout",
        type=number(0, unit="s", above=True),
        default=None,
        help="seconds to wait at most (default: as long as the TASK may take — each step to"
        " its timeout, once the worker claims it — plus time for the watcher to pick it up)",
    )
    p.add_argument("--poll", type=number(0.1, unit="s"), default=2.0, help="seconds between looks")
    add_common(p, node=False)
    p.set_defaults(func=run)


async def newest(ctx: NodeContext, number: int) -> tuple[int, ResultMsg | HalfDoneMsg | None]:
    """The newest task number and its answer, if any."""
    task, answer, _thread = await look(ctx, number)
    return task, answer


async def look(ctx: NodeContext, number: int) -> tuple[int, ResultMsg | HalfDoneMsg | None, Thread]:
    """The newest task number, its answer if any, and the thread they were read from."""
    from relay.node.context import client
    from relay.node.observe import load_issue
    from relay.protocol.thread import NotAJob, read_thread

    async with client(ctx) as gh:
        try:
            thread = read_thread(await load_issue(gh, number), ctx.master)
        except NotAJob:
            raise LocalUsageError(
                f"#{number} is not a relay job", hint="see `relay status` for the open jobs"
            ) from None
    task = thread.last_task
    if task and thread.answer(task) is None and thread.edited_answer(task) is not None:
        raise RemoteProtocolError(
            f"the answer to TASK {task} on #{number} was edited after it was posted;"
            " relay does not trust its content",
            hint="read the issue thread, then post a new TASK",
        )
    return task, thread.answer(task) if task else None, thread


PICK_UP = 900.0  # seconds a watcher may take to claim a TASK (three default intervals)
ANSWER_MARGIN = 120.0  # seconds past a claim's lease for the RESULT to be posted
QUIET_SECONDS = 3.0  # a wait shorter than this prints nothing but its answer


def wait_deadline(thread: Thread, task: int, since: datetime) -> datetime:
    """Until when `result --wait` waits by default: once claimed, the claim's lease (long
    enough for every step to run to its timeout) and a little more; before that, PICK_UP
    from the TASK's posting, the time a running watcher takes to claim it."""
    from relay.protocol.messages import ClaimMsg

    claim = thread.claims.get(task)
    if claim is not None and isinstance(claim.message, ClaimMsg):
        return claim.message.lease_until + timedelta(seconds=ANSWER_MARGIN)
    entry = thread.task_entry(task)
    posted = entry.comment.created_at if entry is not None else since
    if posted.tzinfo is None:
        posted = posted.replace(tzinfo=UTC)
    return max(posted, since) + timedelta(seconds=PICK_UP)


def waiting_for(thread: Thread, task: int, now: datetime) -> tuple[str, str]:
    """What the wait is for, in words: (phase, line). Pure, for the progress line."""
    from relay.node.progress import duration
    from relay.protocol.labels import batons_in
    from relay.protocol.messages import ClaimMsg

    worker = thread.job.worker
    baton = next((b.value for b in batons_in(thread.issue.labels)), "")
    claim = thread.claims.get(task)
    if claim is not None and isinstance(claim.message, ClaimMsg):
        ran = duration((now - claim.message.claimed_at).total_seconds())
        return "claimed", (
            f"#{thread.issue.number}: {worker} claimed TASK {task}; its steps have run for"
            f" {ran} (baton {baton or 'none'})"
        )
    entry = thread.task_entry(task)
    posted = entry.comment.created_at if entry is not None else None
    since = f", posted {duration((now - posted).total_seconds())} ago" if posted else ""
    return "unclaimed", (
        f"#{thread.issue.number}: waiting for {worker} to claim TASK {task}"
        f" (baton {baton or 'none'}{since})"
    )


async def wait_for(ctx: NodeContext, args: argparse.Namespace) -> tuple[int, Any]:
    """Look until the newest task has an answer or the timeout passes, saying what the
    wait is for on standard error."""
    import asyncio

    from relay.node.progress import Progress, duration

    progress = Progress()
    started, since = time.monotonic(), datetime.now(UTC)
    try:
        while True:
            task, answer, thread = await look(ctx, args.issue)
            args.waiting_for = task
            if answer is not None or not args.wait or task == 0:
                return task, answer
            now, waited = datetime.now(UTC), time.monotonic() - started
            over = (
                waited > args.timeout
                if args.timeout is not None
                else now > wait_deadline(thread, task, since)
            )
            if over:
                hint = "is the worker's watcher running? see `relay status`"
                if thread.taken(task):
                    hint = "the worker claimed it and went quiet; see `relay status`"
                raise RemoteUnavailable(
                    f"no result for TASK {task} on #{args.issue} after {waited:.0f}s", hint=hint
                )
            if waited >= QUIET_SECONDS:  # a short wait says nothing
                phase, line = waiting_for(thread, task, now)
                progress.say(phase, f"{line}; waited {duration(waited)}")
            await asyncio.sleep(args.poll)
    finally:
        progress.close()


def run(args: argparse.Namespace) -> Output:
    """Print the newest RESULT (or half-done report), or say that none has come."""
    from relay.commands.early import issue_paths, start

    start(args, *issue_paths(args.issue))  # they travel while relay loads
    ctx = context(args, need_node=False)
    try:
        task, answer = run_async(lambda: wait_for(ctx, args))
    except KeyboardInterrupt:  # Ctrl-C while waiting: only the wait ends
        if not args.wait:
            raise
        task = getattr(args, "waiting_for", 0)
        what = f"the RESULT of TASK {task} on #{args.issue}" if task else f"#{args.issue}"
        raise Interrupted(
            f"stopped waiting for {what}; nothing was changed",
            hint=f"`relay result {args.issue} --wait` waits again",
        ) from None
    if task == 0:
        raise LocalUsageError(f"#{args.issue} has no task yet", hint="post one with `relay task`")
    if answer is None:
        return Output(
            lines=(f"#{args.issue}: TASK {task} has no result yet",),
            data={"issue": args.issue, "task": task, "result": None},
            exit_status=1,
        )
    from relay.protocol import ResultMsg

    data = answer.model_dump(mode="json")
    if isinstance(answer, ResultMsg):
        lines = [f"#{args.issue} RESULT {task}: {answer.status.value} — {answer.summary}"]
        lines += [f"log: {answer.log_url}"] if answer.log_url else []
        lines += answer.excerpt.splitlines()
    else:
        lines = [f"#{args.issue} TASK {task} half-done: {answer.known}"]
    return Output(lines=tuple(lines), data={"issue": args.issue, "task": task, "result": data})
