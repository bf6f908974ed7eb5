"""`relay resolve ISSUE --summary S`: close the job, with its summary in handover.md."""

from __future__ import annotations

import argparse
import asyncio
from datetime import UTC, datetime
from typing import Any

from relay.commands.common import add_common, carry_out, context, run_async, with_issue
from relay.github import GitHubClient
from relay.node import HANDOVER_PATH, NodeContext
from relay.protocol import Issue, plan_resolve
from relay.protocol.planners import handover_entry
from relay.result import Result


def register(sub: Any) -> None:
    """Add `resolve`."""
    p: argparse.ArgumentParser = sub.add_parser("resolve", help="resolve and close a job")
    p.add_argument("issue", type=int, help="the job's issue number")
    p.add_argument("--summary", required=True, help="what was found or done")
    add_common(p)
    p.set_defaults(func=run)


def write_handover(ctx: NodeContext, issue: Issue, summary: str, now: datetime) -> None:
    """Append the closure to docs/loop/handover.md, commit and push (retrying)."""
    ctx.clone.pull_rebase()
    path = ctx.root / HANDOVER_PATH
    path.parent.mkdir(parents=True, exist_ok=True)
    old = path.read_text(encoding="utf-8") if path.exists() else "# Handover\n"
    entry = handover_entry(issue=issue.number, title=issue.title, summary=summary, when=now)
    path.write_text(old.rstrip("\n") + "\n" + entry, encoding="utf-8")
    ctx.clone.commit_and_push([path], f"relay: #{issue.number} resolved ({ctx.node})")


def run(args: argparse.Namespace) -> Result:
    """Plan the closure purely, write the handover, then post, relabel and close."""
    ctx = context(args)
    now = datetime.now(UTC)

    async def body(gh: GitHubClient, issue: Issue) -> None:
        plan = plan_resolve(issue, ctx.master, node=ctx.node, summary=args.summary, now=now)
        await asyncio.to_thread(write_handover, ctx, issue, args.summary, now)
        await carry_out(gh, plan)

    run_async(lambda: with_issue(ctx, args.issue, body))
    return Result(lines=(f"#{args.issue}: resolved and closed",), data={"issue": args.issue})
