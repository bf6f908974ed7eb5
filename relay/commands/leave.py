"""`relay leave`: tear this node's watcher down now, on demand.

The scheduler column becomes ``none (torn down <date>)`` (committed and pushed first),
then the entry is removed from the OS scheduler. The node keeps its row in the table:
jobs that still bind it wait until someone runs `relay watch`, or `relay join` again.
A LaunchDaemon (`relay join --at-boot`) belongs to root: leave removes it through sudo,
which asks for the password — the one teardown a scheduled pass cannot do by itself.
"""

from __future__ import annotations

import argparse
from typing import Any

from relay.commands.common import add_common, context, run_async
from relay.commands.output import Output
from relay.errors import RelayError
from relay.node.context import NodeContext


def register(sub: Any) -> None:
    """Add `leave`."""
    p: argparse.ArgumentParser = sub.add_parser("leave", help="remove this node's watcher")
    add_common(p)
    p.set_defaults(func=run)


async def still_bound(ctx: NodeContext) -> list[str]:
    """What people should know about jobs that still bind the node (best effort)."""
    from relay.watchers.registration import bound_jobs

    try:
        jobs = await bound_jobs(ctx)
    except RelayError as err:
        return [f"could not check the open jobs ({err.message})"]
    if not jobs:
        return []
    numbers = ", ".join(f"#{n}" for n in jobs)
    return [f"still bound to {numbers}: they wait until you run `relay watch` or `relay join`"]


def run(args: argparse.Namespace) -> Output:
    """Tear the watcher down without looking for new jobs first: the user asked."""
    from relay.watchers.registration import tear_down

    ctx = context(args)
    done = run_async(lambda: tear_down(ctx, recheck=False))
    lines = list(done.lines) or [f"{ctx.node} has no watcher registered in this clone"]
    lines += run_async(lambda: still_bound(ctx))
    return Output(lines=tuple(lines), data={"node": ctx.node, "torn_down": done.removed})
