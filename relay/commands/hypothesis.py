"""`relay hypothesis ISSUE TEXT --outcome O`: record what the controller is testing."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from relay.commands.common import add_common, plan_on_issue
from relay.commands.output import Output
from relay.commands.repos import issue_number

if TYPE_CHECKING:  # loaded when the verb runs, after the fetch: not on its way to the wire
    from relay.node.context import NodeContext
    from relay.protocol import Issue
    from relay.protocol.planners import Plan

# relay.protocol.Outcome's values (a test holds them equal): the parser is built without
# loading the protocol's models
OUTCOMES = ("untested", "confirmed", "refuted", "inconclusive")


def register(sub: Any) -> None:
    """Add `hypothesis`."""
    p: argparse.ArgumentParser = sub.add_parser("hypothesis", help="record a hypothesis")
    p.add_argument("issue", type=issue_number, help="the job's issue: 12, #12 or its URL")
    p.add_argument("text", help="the hypothesis, in one sentence")
    p.add_argument(
        "--outcome",
        choices=OUTCOMES,
        default=OUTCOMES[0],
        help="what testing it showed so far",
    )
    add_common(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> Output:
    """Write the hypothesis (or its new outcome) into the issue body."""

    def plan(issue: Issue, ctx: NodeContext, caller: int) -> Plan:
        from relay.protocol import Outcome, plan_hypothesis

        return plan_hypothesis(
            issue,
            ctx.master,
            node=ctx.node,
            text=args.text,
            outcome=Outcome(args.outcome),
            caller=caller,
        )

    plan_on_issue(args, plan)
    return Output(
        lines=(f"#{args.issue}: hypothesis recorded ({args.outcome})",),
        data={"issue": args.issue, "outcome": args.outcome},
    )
