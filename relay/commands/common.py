"""What the verb modules share: the common flags, opening the node, running async code."""

from __future__ import annotations

import argparse
import asyncio
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, TypeVar

from relay.edges.git import Clone
from relay.edges.github import GitHubClient
from relay.node.context import NodeContext, client, open_node
from relay.node.observe import load_issue
from relay.protocol import Issue
from relay.protocol.planners import Plan

T = TypeVar("T")


def add_common(p: argparse.ArgumentParser, *, node: bool = True) -> None:
    """The flags every verb that acts as a node takes."""
    p.add_argument(
        "--repo-dir", type=Path, default=None, help="the clone to act in (default: here)"
    )
    if node:
        p.add_argument("--node", default=None, help="this node's name (default: the joined one)")
    p.add_argument("--api", default=None, help="API base URL (default: RELAY_API_URL or master)")
    p.add_argument("--json", action="store_true", help="machine-readable output")


def context(args: argparse.Namespace, *, need_node: bool = True, pull: bool = False) -> NodeContext:
    """Open the node the flags name; ``pull`` first for verbs that act (nodes pull before
    acting, so a node that joined since the last pull is known)."""
    if pull:
        from relay.edges.git import Clone

        Clone.open((args.repo_dir or Path.cwd()).resolve()).pull_rebase()
    return open_node(
        repo_dir=args.repo_dir,
        node=getattr(args, "node", None),
        api=args.api,
        need_node=need_node,
    )


def run_async(make: Callable[[], Awaitable[T]]) -> T:
    """Run one coroutine to completion from a synchronous verb."""

    async def main() -> T:
        return await make()

    return asyncio.run(main())


async def with_issue(
    ctx: NodeContext, number: int, body: Callable[[GitHubClient, Issue], Awaitable[T]]
) -> T:
    """Open the API, load one issue with its comments, and hand both to ``body``."""
    async with client(ctx) as gh:
        issue = await load_issue(gh, number)
        return await body(gh, issue)


async def carry_out(gh: GitHubClient, plan: Plan) -> int:
    """Apply a planner's Plan: comments, body, labels (the baton, last), then close.

    Returns the issue number (new when the plan opened a job).
    """
    if plan.issue is None:
        made = await gh.create_issue(
            title=plan.title or "", body=plan.body or "", labels=plan.labels or ()
        )
        return made.number
    for comment in plan.comments:
        await gh.create_comment(plan.issue, comment)
    if plan.body is not None:
        await gh.update_issue(plan.issue, body=plan.body)
    if plan.labels is not None or plan.close:
        fields: dict[str, Any] = {}
        if plan.labels is not None:
            fields["labels"] = list(plan.labels)
        if plan.close:
            fields.update(state="closed", state_reason="completed")
        await gh.update_issue(plan.issue, **fields)
    return plan.issue


def plan_on_issue(
    args: argparse.Namespace, make: Callable[[Issue, NodeContext, int], Plan]
) -> Plan:
    """Pull, load the issue ``args.issue``, plan purely with ``make`` (given the issue, the
    node and the caller's numeric account id), carry the plan out; the plan."""
    ctx = context(args, pull=True)

    async def body(gh: GitHubClient, issue: Issue) -> Plan:
        plan = make(issue, ctx, (await gh.current_user()).id)
        await carry_out(gh, plan)
        return plan

    return run_async(lambda: with_issue(ctx, args.issue, body))


def commit_and_push_or_undo(clone: Clone, paths: list[Path], message: str) -> bool:
    """Commit and push ``paths`` (undone when the push fails); False when nothing changed."""
    return clone.commit_and_push_or_undo(paths, message) is not None
