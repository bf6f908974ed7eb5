"""`relay result ISSUE [--wait]`: the newest answer on a job, as the controller reads it."""

from __future__ import annotations

import argparse
import asyncio
import time
from typing import Any

from relay.commands.common import add_common, context, run_async
from relay.commands.output import Output
from relay.errors import LocalUsageError, RemoteProtocolError, RemoteUnavailable
from relay.node.context import NodeContext, client
from relay.node.observe import load_issue
from relay.protocol import HalfDoneMsg, ResultMsg
from relay.protocol.thread import NotAJob, read_thread


def register(sub: Any) -> None:
    """Add `result`."""
    p: argparse.ArgumentParser = sub.add_parser("result", help="show a job's newest result")
    p.add_argument("issue", type=int, help="the job's issue number")
    p.add_argument("--wait", action="store_true", help="wait for the outstanding task's result")
    p.add_argument("--timeout", type=float, default=600.0, help="seconds to wait at most")
    p.add_argument("--poll", type=float, default=2.0, help="seconds between looks")
    add_common(p, node=False)
    p.set_defaults(func=run)


async def newest(ctx: NodeContext, number: int) -> tuple[int, ResultMsg | HalfDoneMsg | None]:
    """The newest task number and its answer, if any."""
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
    return task, thread.answer(task) if task else None


async def wait_for(ctx: NodeContext, args: argparse.Namespace) -> tuple[int, Any]:
    """Look until the newest task has an answer or the timeout passes."""
    deadline = time.monotonic() + args.timeout
    while True:
        task, answer = await newest(ctx, args.issue)
        if answer is not None or not args.wait:
            return task, answer
        if time.monotonic() > deadline:
            raise RemoteUnavailable(
                f"no result for TASK {task} on #{args.issue} after {args.timeout:.0f}s",
                hint="is the worker's watcher running? see `relay status`",
            )
        await asyncio.sleep(args.poll)


def run(args: argparse.Namespace) -> Output:
    """Print the newest RESULT (or half-done report), or say that none has come."""
    ctx = context(args, need_node=False)
    task, answer = run_async(lambda: wait_for(ctx, args))
    if task == 0:
        raise LocalUsageError(f"#{args.issue} has no task yet", hint="post one with `relay task`")
    if answer is None:
        return Output(
            lines=(f"#{args.issue}: TASK {task} has no result yet",),
            data={"issue": args.issue, "task": task, "result": None},
            exit_status=1,
        )
    data = answer.model_dump(mode="json")
    if isinstance(answer, ResultMsg):
        lines = [f"#{args.issue} RESULT {task}: {answer.status.value} — {answer.summary}"]
        lines += [f"log: {answer.log_url}"] if answer.log_url else []
        lines += answer.excerpt.splitlines()
    else:
        lines = [f"#{args.issue} TASK {task} half-done: {answer.known}"]
    return Output(lines=tuple(lines), data={"issue": args.issue, "task": task, "result": data})
