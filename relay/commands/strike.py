"""`relay strike ISSUE`: one failed round trip on a hypothesis; the third parks the job."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # loaded when the verb runs, after the fetch: not on its way to the wire
    from relay.node.context import NodeContext
    from relay.protocol import Issue
    from relay.protocol.planners import Plan

from relay.commands.common import add_common, plan_on_issue
from relay.commands.output import Output
from relay.commands.repos import issue_number


def register(sub: Any) -> None:
    """Add `strike`."""
    p: argparse.ArgumentParser = sub.add_parser("strike", help="count a failed round trip")
    p.add_argument("issue", type=issue_number, help="the job's issue: 12, #12 or its URL")
    p.add_argument("--hypothesis", type=int, default=None, help="H number (default: newest)")
    add_common(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> Output:
    """Count the strike; on the third, escalate to needs:human."""

    def plan(issue: Issue, ctx: NodeContext, caller: int) -> Plan:
        from relay.protocol import plan_strike

        return plan_strike(
            issue, ctx.master, node=ctx.node, hypothesis=args.hypothesis, caller=caller
        )

    done = plan_on_issue(args, plan)
    from relay.protocol.labels import Label

    parked = done.labels is not None and Label.NEEDS_HUMAN.value in done.labels
    line = "parked on needs:human" if parked else "strike counted"
    return Output(lines=(f"#{args.issue}: {line}",), data={"issue": args.issue, "parked": parked})
