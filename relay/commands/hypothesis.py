"""`relay hypothesis ISSUE TEXT --outcome O`: record what the controller is testing."""

from __future__ import annotations

import argparse
from typing import Any

from relay.commands.common import add_common, plan_on_issue
from relay.commands.output import Output
from relay.commands.repos import issue_number
from relay.protocol import Outcome, plan_hypothesis


def register(sub: Any) -> None:
    """Add `hypothesis`."""
    p: argparse.ArgumentParser = sub.add_parser("hypothesis", help="record a hypothesis")
    p.add_argument("issue", type=issue_number, help="the job's issue number")
    p.add_argument("text", help="the hypothesis, in one sentence")
    p.add_argument(
        "--outcome",
        choices=[o.value for o in Outcome],
        default=Outcome.UNTESTED.value,
        help="what testing it showed so far",
    )
    add_common(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> Output:
    """Write the hypothesis (or its new outcome) into the issue body."""
    outcome = Outcome(args.outcome)
    plan_on_issue(
        args,
        lambda issue, ctx, caller: plan_hypothesis(
            issue, ctx.master, node=ctx.node, text=args.text, outcome=outcome, caller=caller
        ),
    )
    return Output(
        lines=(f"#{args.issue}: hypothesis recorded ({args.outcome})",),
        data={"issue": args.issue, "outcome": args.outcome},
    )
