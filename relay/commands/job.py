"""`relay job open`: the calling node becomes the controller of a new job (one issue)."""

from __future__ import annotations

import argparse
from typing import Any

from relay.commands.common import add_common, context, run_async
from relay.commands.output import Output
from relay.node.apply import apply_plan
from relay.node.context import client
from relay.protocol import plan_open_job


def register(sub: Any) -> None:
    """Add `job open`."""
    p: argparse.ArgumentParser = sub.add_parser("job", help="open a job (one issue)")
    jobs = p.add_subparsers(dest="job_verb", metavar="ACTION")
    jobs.required = True
    op = jobs.add_parser("open", help="open a job; this node becomes its controller")
    op.add_argument("--worker", required=True, help="the node that will run the tasks")
    op.add_argument("--title", required=True, help="the issue title")
    op.add_argument("--objective", required=True, help="what the job must find out or do")
    op.add_argument(
        "--kind",
        default="diagnostics",
        help="the kind of job (one the master section lists as delegable; default diagnostics)",
    )
    add_common(op)
    op.set_defaults(func=run_open)


def run_open(args: argparse.Namespace) -> Output:
    """Open the issue with its body and baton; print its number."""
    ctx = context(args, pull=True)
    plan = plan_open_job(
        ctx.master,
        controller=ctx.node,
        worker=args.worker,
        title=args.title,
        objective=args.objective,
        kind=args.kind,
    )

    async def go() -> int:
        async with client(ctx) as gh:
            return await apply_plan(gh, plan, sign=ctx.sign)

    number = run_async(go)
    url = ctx.html_url(f"issues/{number}")
    return Output(
        lines=(f"opened job #{number}: {ctx.node} controls, {args.worker} works — {url}",),
        data={"issue": number},
    )
