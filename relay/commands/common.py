"""What the verb modules share: the common flags, opening the node, running async code."""

from __future__ import annotations

import argparse
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

from relay.commands.repos import add_repo_flag

if TYPE_CHECKING:  # loaded when a verb runs, not when its parser is built
    from relay.edges.github import GitHubClient
    from relay.node.context import NodeContext
    from relay.protocol import Issue
    from relay.protocol.planners import Plan

T = TypeVar("T")


def add_common(p: argparse.ArgumentParser, *, node: bool = True) -> None:
    """The flags every verb that acts as a node takes."""
    p.add_argument(
        "--repo-dir", type=Path, default=None, help="the clone to act in (default: here)"
    )
    add_repo_flag(p, any_clone=not node)
    if node:
        p.add_argument("--node", default=None, help="this node's name (default: the joined one)")
    p.add_argument("--api", default=None, help="API base URL (default: RELAY_API_URL or master)")
    p.add_argument("--json", action="store_true", help="machine-readable output")


def context(args: argparse.Namespace, *, need_node: bool = True, pull: bool = False) -> NodeContext:
    """Open the node the flags name; ``pull`` first fetches (so a node that joined since is
    known: the spine is read at the remote's tip) and fast-forwards the person's clone
    when that is safe; their commits and edits never block a verb, nor are rebased."""
    if pull:  # before the node's modules load: the fetch is the verb's first request
        from relay.edges.git import Clone

        Clone.open_local((args.repo_dir or Path.cwd()).resolve()).refresh()
    from relay.node.context import open_node

    return open_node(
        repo_dir=args.repo_dir,
        node=getattr(args, "node", None),
        api=args.api,
        need_node=need_node,
    )


def run_async(make: Callable[[], Awaitable[T]]) -> T:
    """Run one coroutine to completion from a synchronous verb."""
    import asyncio

    async def main() -> T:
        return await make()

    return asyncio.run(main())


async def with_issue(
    ctx: NodeContext, number: int, body: Callable[[GitHubClient, Issue], Awaitable[T]]
) -> T:
    """Open the API, load one issue with its comments, and hand both to ``body``."""
    from relay.node.context import client
    from relay.node.observe import load_issue

    async with client(ctx) as gh:
        issue = await load_issue(gh, number)
        return await body(gh, issue)


def refuse_rolled_back(ctx: NodeContext, issue: Issue) -> None:
    """Refuse to act on a job body older than the newest this node has seen (an earlier
    signed body put back): a verb planned on it would reuse a task number or undo strikes."""
    from relay.errors import ConfigError
    from relay.protocol import parse_body
    from relay.protocol.wire import MessageRejected

    seen = ctx.state.seen()[0].get(issue.number, 0)
    try:
        revision = parse_body(issue.body).revision
    except MessageRejected:
        return  # the planner says why it is no job
    if revision < seen:
        raise ConfigError(
            f"the body of #{issue.number} is revision {revision}, older than revision {seen}"
            " this node has seen (put back by someone?)",
            hint=f"write it again from this node's record: `relay job repair {issue.number}`",
        )


def plan_on_issue(
    args: argparse.Namespace, make: Callable[[Issue, NodeContext, int], Plan]
) -> Plan:
    """Pull, load the issue ``args.issue``, plan purely with ``make`` (given the issue, the
    node and the caller's numeric account id), carry the plan out; the plan."""
    ctx = context(args, pull=True)  # the fetch first: the planner's modules load after it
    from relay.node.apply import apply_plan

    async def body(gh: GitHubClient, issue: Issue) -> Plan:
        refuse_rolled_back(ctx, issue)
        plan = make(issue, ctx, (await gh.current_user()).id)
        await apply_plan(gh, plan, sign=ctx.sign, ctx=ctx)
        return plan

    return run_async(lambda: with_issue(ctx, args.issue, body))
