"""`relay task ISSUE --step CMD ...`: the controller posts TASK n and passes the baton."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from relay.commands.common import add_common, context, refuse_rolled_back, run_async, with_issue
from relay.commands.output import Output
from relay.commands.repos import issue_number

if TYPE_CHECKING:  # loaded when the verb runs, after the fetch: not on its way to the wire
    from relay.edges.github import GitHubClient
    from relay.protocol import Issue
    from relay.protocol.planners import Plan
    from relay.protocol.snapshot import LabelEvent


def register(sub: Any) -> None:
    """Add `task`."""
    p: argparse.ArgumentParser = sub.add_parser("task", help="post the next TASK of a job")
    p.add_argument("issue", type=issue_number, help="the job's issue: 12, #12 or its URL")
    p.add_argument("--step", action="append", required=True, help="a command (repeatable)")
    p.add_argument("--objective", default=None, help="this task's objective (default: job's)")
    p.add_argument("--capture", default="", help="what the worker must capture")
    p.add_argument("--scope", default="diagnostics", help="command class (default: diagnostics)")
    p.add_argument(
        "--authorized-by-human",
        action="store_true",
        help="a person authorised it (needed for --scope destructive and for any step that"
        " deletes, overwrites or reconfigures outside the work tree); a person then approves",
    )
    p.add_argument("--fallback", default="", help="what to do when a step fails")
    p.add_argument("--checkout", default=None, help="branch the worker checks out first")
    p.add_argument(
        "--shell",
        choices=("sh", "bash", "cmd", "powershell", "pwsh"),
        default=None,
        help="the shell each step runs in on the worker (default: the worker's platform shell)",
    )
    p.add_argument(
        "--artifact",
        action="append",
        default=[],
        metavar="PATH",
        help="a file or glob in the worker's clone to bring back with the RESULT (repeatable)",
    )
    p.add_argument(
        "--commit",
        default=None,
        metavar="SHA",
        help="the commit --checkout's branch must be at: the worker refuses any other tip",
    )
    p.add_argument(
        "--boxed",
        action="store_true",
        help="run the steps in the worker's judged box (a clone of --commit behind the"
        " maker's boundary), never in its clone: for code nobody on the worker vouches for",
    )
    p.add_argument(
        "--verification",
        action="store_true",
        help="this TASK is the job's stopping condition: its passing RESULT lets it resolve",
    )
    add_common(p)
    p.set_defaults(func=run)


async def parked_events(gh: GitHubClient, issue: Issue) -> tuple[LabelEvent, ...]:
    """The job's label events when a strike parked it (who took `needs:human` off decides
    whether it may go on); none otherwise (one request saved)."""
    from relay.node.observe import to_label_events
    from relay.protocol import parse_body
    from relay.protocol.body import STRIKE_LIMIT
    from relay.protocol.wire import MessageRejected

    try:
        job = parse_body(issue.body)
    except MessageRejected:
        return ()
    struck = any(h.strikes >= STRIKE_LIMIT for h in job.hypotheses)
    if not struck and "needs:human" not in issue.labels:  # who parked it matters only then
        return ()
    return tuple(to_label_events(issue.number, await gh.list_issue_events(issue.number)))


def run(args: argparse.Namespace) -> Output:
    """Plan the TASK purely (as the calling account), then post it; the baton moves last."""
    ctx = context(args, pull=True)
    from relay.node.apply import apply_plan
    from relay.protocol import plan_task

    async def body(gh: GitHubClient, issue: Issue) -> Plan:
        refuse_rolled_back(ctx, issue)
        caller = (await gh.current_user()).id
        events = await parked_events(gh, issue)
        plan = plan_task(
            issue,
            ctx.master,
            node=ctx.node,
            caller=caller,
            steps=tuple(args.step),
            objective=args.objective,
            capture=args.capture,
            scope=args.scope,
            authorized_by_human=args.authorized_by_human,
            fallback=args.fallback,
            checkout=args.checkout,
            shell=args.shell,
            verification=args.verification,
            artifacts=tuple(args.artifact),
            commit=args.commit,
            boxed=args.boxed,
            label_events=events,
        )
        await apply_plan(gh, plan, sign=ctx.sign, ctx=ctx)
        return plan

    number = run_async(lambda: with_issue(ctx, args.issue, body)).task
    assert number is not None
    return Output(
        lines=(f"posted TASK {number} on #{args.issue}; the baton is with the worker",),
        data={"issue": args.issue, "task": number},
    )
