"""`relay resolve ISSUE --summary S`: close the job, with its summary in handover.md.

The job's stopping condition is a passing verification TASK on the worker (`relay task
--verification`); without one, `--force REASON` resolves it and the closure says why.

When that was the controller's last open job, its own watcher is torn down (column
first, entry after) and a closing comment on the job says so.
"""

from __future__ import annotations

import argparse
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from relay.commands.common import (
    add_common,
    context,
    run_async,
    with_issue,
)
from relay.commands.output import Output
from relay.commands.repos import issue_number
from relay.errors import RelayError

if TYPE_CHECKING:  # loaded when the verb runs, after its first requests are on their way
    from relay.edges.github import GitHubClient
    from relay.node.context import NodeContext
    from relay.protocol import Issue


def register(sub: Any) -> None:
    """Add `resolve`."""
    p: argparse.ArgumentParser = sub.add_parser("resolve", help="resolve and close a job")
    p.add_argument("issue", type=issue_number, help="the job's issue: 12, #12 or its URL")
    p.add_argument("--summary", required=True, help="what was found or done")
    p.add_argument(
        "--force",
        default=None,
        metavar="REASON",
        help="resolve without a passing verification TASK, saying why in the closure",
    )
    add_common(p)
    p.set_defaults(func=run)


def write_handover(ctx: NodeContext, issue: Issue, summary: str, now: datetime) -> None:
    """Append the closure to docs/loop/handover.md, commit and push (retrying)."""
    from relay.node.apply import publish_edit
    from relay.node.context import HANDOVER_PATH
    from relay.protocol.planners import handover_entry

    entry = handover_entry(issue=issue.number, title=issue.title, summary=summary, when=now)

    def append(old: str | None) -> str:
        return (old or "# Handover\n").rstrip("\n") + "\n" + entry

    message = f"relay: #{issue.number} resolved ({ctx.node})"
    publish_edit(ctx.clone, HANDOVER_PATH, append, message, branch=ctx.master.data_branch)


def run(args: argparse.Namespace) -> Output:
    """Plan the closure purely, write the handover, then post, relabel and close."""
    from relay.commands.early import issue_paths, start

    start(args, *issue_paths(args.issue), top=("/user",))  # they travel while relay loads
    ctx = context(args)
    import asyncio

    from relay.node.apply import apply_plan
    from relay.protocol import plan_resolve

    now = datetime.now(UTC)

    async def body(gh: GitHubClient, issue: Issue) -> None:
        caller = (await gh.current_user()).id
        plan = plan_resolve(
            issue,
            ctx.master,
            node=ctx.node,
            summary=args.summary,
            now=now,
            caller=caller,
            force=args.force,
        )
        await asyncio.to_thread(write_handover, ctx, issue, args.summary, now)
        await apply_plan(gh, plan, sign=ctx.sign)

    run_async(lambda: with_issue(ctx, args.issue, body))
    said = run_async(lambda: close_watcher(ctx, args.issue))
    return Output(
        lines=(f"#{args.issue}: resolved and closed", *said),
        data={"issue": args.issue, "watcher_torn_down": bool(said)},
    )


def closing_note(node: str, scheduler: str) -> str:
    """The comment that tells people why the controller's watcher went away."""
    return (
        f"relay: this was the last open job of **{node}**, so its {scheduler} watcher is"
        f" removed. Run `relay join` on that machine to bring it back for a new job."
    )


async def close_watcher(ctx: NodeContext, issue: int) -> list[str]:
    """The controller's last open job is closed: tear its watcher down, say so on the job."""
    from relay.node.context import client
    from relay.watchers import registration

    record = registration.load(ctx.state, ctx.node)
    if record is None or not record.active or await registration.bound_jobs(ctx):
        return []
    try:
        done = await registration.tear_down(ctx)
    except RelayError as err:  # the job is resolved; only the watcher is left to remove
        return [f"the job is resolved, but its watcher stays: {err} (run `relay leave`)"]
    if done.removed and not done.reinstated:
        async with client(ctx) as gh:
            await gh.create_comment(issue, closing_note(ctx.node, record.scheduler))
    return list(done.lines)
