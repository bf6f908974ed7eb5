"""`relay job open`: the calling node becomes the controller of a new job (one issue)."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from relay.commands.common import add_common, context, run_async
from relay.commands.output import Output
from relay.commands.repos import issue_number

if TYPE_CHECKING:  # loaded when the verb runs, after the fetch: not on its way to the wire
    from relay.edges.github import GitHubClient
    from relay.node.context import NodeContext


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
    rp = jobs.add_parser(
        "repair",
        help="write a job's body again from this controller's own record (after tampering)",
    )
    rp.add_argument("issue", type=issue_number, help="the job's issue: 12, #12 or its URL")
    add_common(rp)
    rp.set_defaults(func=run_repair)


def run_open(args: argparse.Namespace) -> Output:
    """Open the issue with its body and baton; print its number."""
    ctx = context(args, pull=True)
    from relay.node.apply import apply_plan
    from relay.node.context import client
    from relay.protocol import plan_open_job

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
            return await apply_plan(gh, plan, sign=ctx.sign, ctx=ctx)

    number = run_async(go)
    url = ctx.html_url(f"issues/{number}")
    return Output(
        lines=(f"opened job #{number}: {ctx.node} controls, {args.worker} works — {url}",),
        data={"issue": number},
    )


def run_repair(args: argparse.Namespace) -> Output:
    """The body this controller last wrote, one revision past any it has seen, signed again:
    what undoes an old body put back or a body edited by someone else (a TASK whose comment
    was deleted before anyone claimed it is posted again under a new number)."""
    from relay.errors import ConfigError
    from relay.protocol import parse_body
    from relay.protocol.body import render_body

    ctx = context(args, pull=True)
    from relay.node.context import client

    kept, _task = ctx.state.kept_job(args.issue)
    if kept is None:
        raise ConfigError(
            f"this node keeps no record of #{args.issue}",
            hint="run it on the job's controller, the node that opened it",
        )
    job = parse_body(kept)
    if job.controller != ctx.node:
        raise ConfigError(f"only {job.controller}, the controller of #{args.issue}, repairs it")
    seen = ctx.state.seen()[0].get(args.issue, 0)

    async def go() -> str:
        async with client(ctx) as gh:
            now = await gh.get_issue(args.issue)
            try:
                current = parse_body(now.body).revision
            except Exception:  # the body is not a job any more: the record stands alone
                current = 0
            fresh = job.model_copy(update={"revision": max(seen, current, job.revision) + 1})
            text = render_body(fresh)
            await gh.update_issue(args.issue, body=ctx.sign(text, issue=args.issue))
            from relay.node.apply import remember_body

            remember_body(ctx, args.issue, text)
            said = f"wrote the body again from {ctx.node}'s record (revision {fresh.revision})"
            again = await _repost(gh, ctx, args.issue, _task)
            return f"#{args.issue}: {said}" + (f"; {again}" if again else "")

    line = run_async(go)
    return Output(lines=(line,), data={"issue": args.issue})


async def _repost(gh: GitHubClient, ctx: NodeContext, number: int, kept: str | None) -> str | None:
    """Post the controller's kept TASK again under a new number when its comment is gone
    and it never ran; what was done, in words (None: nothing to do)."""
    from relay.node.apply import apply_plan
    from relay.node.observe import load_issue, to_label_events
    from relay.protocol import TaskMsg, parse_message, plan_task
    from relay.protocol.baton import State
    from relay.protocol.planners import relabel
    from relay.protocol.tamper import claimed_by_events, task_to_repost
    from relay.protocol.thread import read_thread

    if kept is None:
        return None
    old = parse_message(kept, issue=number)
    if not isinstance(old, TaskMsg):
        return None
    issue = await load_issue(gh, number)
    thread = read_thread(issue, ctx.master)
    claimed = ctx.state.seen()[1]
    if task_to_repost(thread, old.task, claimed) is None:
        return None
    # Nobody here saw it claimed, but the comments and refs that say so can be deleted: the
    # issue's events, which nobody can delete, say whether it may have run, and a task that
    # may have run is never handed out twice. (Not a log of its number in the history: a
    # pusher could put one on any branch, and an honest repost would never be made.)
    events = to_label_events(number, await gh.list_issue_events(number))
    posted = ctx.state.kept_task_posted(number)
    seen = claimed_by_events(thread, old.task, events, ctx.master, claimed, posted=posted)
    if seen is not None:
        return (
            f"TASK {old.task} is gone from the thread, but the issue's events say"
            f" {seen.actor.login} set `working` for it: it may have run, so it is not posted"
            " again (post a new TASK if it should run)"
        )
    if thread.state in (State.AWAITING_WORKER, State.WORKING):  # it waited on the lost TASK
        issue = issue.model_copy(
            update={"labels": relabel(issue.labels, State.AWAITING_CONTROLLER)}
        )
    plan = plan_task(
        issue,
        ctx.master,
        node=ctx.node,
        caller=(await gh.current_user()).id,
        steps=old.steps,
        objective=old.objective,
        capture=old.capture,
        scope=old.scope,
        authorized_by_human=old.authorized_by_human,
        fallback=old.fallback,
        checkout=old.checkout,
        shell=old.shell,
        verification=old.verification,
        artifacts=old.artifacts,
        commit=old.commit,
        boxed=old.boxed,
    )
    await apply_plan(gh, plan, sign=ctx.sign, ctx=ctx)
    return f"TASK {old.task} was gone from the thread: posted again as TASK {plan.task}"
