"""`relay strike ISSUE`: one failed round trip on a hypothesis; the third parks the job."""

from __future__ import annotations

import argparse
from typing import Any

from relay.commands.common import add_common, plan_on_issue
from relay.commands.output import Output
from relay.commands.repos import issue_number
from relay.protocol import plan_strike
from relay.protocol.labels import Label


def register(sub: Any) -> None:
    """Add `strike`."""
    p: argparse.ArgumentParser = sub.add_parser("strike", help="count a failed round trip")
    p.add_argument("issue", type=issue_number, help="the job's issue number")
    p.add_argument("--hypothesis", type=int, default=None, help="H number (default: newest)")
    add_common(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> Output:
    """Count the strike; on the third, escalate to needs:human."""
    plan = plan_on_issue(
        args,
        lambda issue, ctx, caller: plan_strike(
            issue, ctx.master, node=ctx.node, hypothesis=args.hypothesis, caller=caller
        ),
    )
    parked = plan.labels is not None and Label.NEEDS_HUMAN.value in plan.labels
    line = "parked on needs:human" if parked else "strike counted"
    return Output(lines=(f"#{args.issue}: {line}",), data={"issue": args.issue, "parked": parked})
