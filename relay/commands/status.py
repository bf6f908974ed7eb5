"""`relay status`: the open jobs with whose turn it is, then the nodes and this clone's watcher.

A watcher is reported as its OS scheduler answers for it now (the registered entry is
queried), not from this clone's own record; its last pass is the last one the scheduler
started, and a pass a person started is shown apart.
"""

from __future__ import annotations

import argparse
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from relay.commands.common import add_common, context, run_async
from relay.commands.early import OPEN_ISSUES  # the list as `list_issues(state="open")` asks
from relay.commands.output import Output

if TYPE_CHECKING:  # loaded when the verb runs, after its first requests are on their way
    from relay.node.context import NodeContext


def register(sub: Any) -> None:
    """Add `status`."""
    p: argparse.ArgumentParser = sub.add_parser("status", help="jobs, batons and nodes")
    add_common(p, node=False)
    p.set_defaults(func=run)


def age(then: datetime, now: datetime) -> str:
    """A short human age: 42s, 5m, 3h, 2d."""
    seconds = max(0, int((now - then).total_seconds()))
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= size:
            return f"{seconds // size}{unit}"
    return f"{seconds}s"


NO_ROSTER = "this clone trusts no roster yet — run `relay join`"


async def jobs(ctx: NodeContext) -> list[dict[str, Any]]:
    """Every open relay job with its binding, baton and newest task."""
    from relay.node.context import client
    from relay.node.observe import load_issue
    from relay.protocol.baton import State, baton_of, baton_problem
    from relay.protocol.thread import read_thread
    from relay.protocol.wire import MARKER, MessageRejected

    now = datetime.now(UTC)
    rows = []
    async with client(ctx) as gh:
        for found in await gh.list_issues(state="open"):
            if found.is_pull_request or MARKER not in found.body:
                continue
            try:
                thread = read_thread(await load_issue(gh, found.number), ctx.master)
            except MessageRejected as err:
                # with no roster trusted, no account is an instruction account here: that,
                # not the job, is what to mend
                why = err.reason if ctx.trust.revision is not None else NO_ROSTER
                rows.append({"issue": found.number, "title": found.title, "error": why})
                continue
            task = thread.last_task
            entry = thread.task_entry(task)  # an edited TASK still has its comment
            baton = baton_of(thread.state)
            inconsistent = thread.state == State.INCONSISTENT
            frozen = baton_problem(thread.issue.labels) if inconsistent else None
            rows.append(
                {
                    "issue": found.number,
                    "title": found.title,
                    "controller": thread.job.controller,
                    "worker": thread.job.worker,
                    "baton": baton.value if baton else None,
                    "task": task,
                    "task_age": age(entry.comment.created_at, now) if entry else None,
                    "parked": thread.state == State.PARKED,
                    "frozen": frozen,
                }
            )
    return rows


def job_line(row: dict[str, Any]) -> str:
    """One job for people."""
    from relay.protocol.wire import show_invisible

    if "error" in row:
        return f"#{row['issue']} {show_invisible(row['title'])}: unreadable ({row['error']})"
    age_of = f" ({row['task_age']} ago)" if row.get("task_age") else ""
    task = f"TASK {row['task']}{age_of}" if row["task"] else "no task yet"
    parked = ", PARKED on needs:human" if row.get("parked") else ""
    if row.get("frozen"):
        parked = f", FROZEN: {row['frozen']} (leave exactly one baton)"
    return (
        f"#{row['issue']} {show_invisible(row['title'])}: {row['controller']} -> {row['worker']},"
        f" baton {row['baton'] or '(none single)'}{parked}, {task}"
    )


def local_watchers(ctx: NodeContext) -> list[dict[str, Any]]:
    """Each node this clone watches for (registered or seen passing): what its scheduler
    says of its entry now, its last scheduled pass, and its last pass of any kind."""
    from relay.edges.local import SCHEDULER
    from relay.watchers.registration import records

    # oldest first: the newest wins; "?" was an older relay's name for a pass that failed
    # in a clone that had not joined, which is no node's
    passes = [p for p in ctx.state.passes() if p.node != "?"]
    last = {p.node: p for p in passes}
    scheduled = {p.node: p for p in passes if p.started_by == SCHEDULER}
    known = {r.node: r for r in records(ctx.state)}
    rows = []
    for node in sorted(set(last) | set(known)):
        record, beat, any_pass = known.get(node), scheduled.get(node), last.get(node)
        rows.append(
            {
                "node": node,
                "scheduler": record.scheduler if record else None,
                "active": bool(record and record.active),
                "interval": record.interval if record else None,
                "at_boot": bool(record and record.at_boot),
                "entry": asked(record) if record and record.active else None,
                "last_pass": beat.model_dump(mode="json") if beat else None,
                "last_any_pass": any_pass.model_dump(mode="json") if any_pass else None,
            }
        )
    return rows


def asked(record: Any) -> dict[str, Any]:
    """What the OS scheduler says of a registered entry now."""
    from relay.errors import RelayError
    from relay.watchers.registration import Seam

    try:
        found = Seam().of(record).verify(record.spec())
    except RelayError as err:
        return {"ok": False, "detail": err.message, "blocked": ""}
    return {"ok": found.ok, "detail": found.detail, "blocked": found.blocked}


def watcher_lines(rows: list[dict[str, Any]]) -> list[str]:
    """The local watchers for people: what runs them and how their last pass went."""
    if not rows:
        return ["no watcher in this clone has run a pass yet"]
    lines = ["watchers in this clone:"]
    now = datetime.now(UTC)
    for row in rows:
        if row["scheduler"] is None:
            how = "no scheduled entry"
        else:
            state = f"every {row['interval']}s" if row["active"] else "torn down"
            how = f"{row['scheduler']} entry, {state}"
        entry = row.get("entry")
        if entry is not None and not entry["ok"]:
            how += f" — MISSING, {row['scheduler']} says: {entry['detail']}"
        elif entry is not None and entry["blocked"]:
            how += f" — NOT RUNNING: {entry['blocked'].partition(': ')[0]}"
        elif entry is not None:
            how += f" ({entry['detail']})"
        beat, any_pass = row["last_pass"], row.get("last_any_pass")
        if beat is None:
            last = "no scheduled pass yet" if row["active"] else "no pass yet"
            beat = None if row["active"] else any_pass
        if beat is not None:
            at = datetime.fromisoformat(beat["at"])
            last = (
                f"last pass {at:%Y-%m-%d %H:%M:%S} UTC ({age(at, now)} ago), {beat['outcome']},"
                f" {beat['requests']} requests ({beat['not_modified']} answered 304)"
            )
        if row["active"] and any_pass and any_pass != row["last_pass"]:
            by = any_pass.get("started_by") or "an older relay"
            at = datetime.fromisoformat(any_pass["at"])
            last += f"; a pass started by {by} {age(at, now)} ago (not the watcher's)"
        lines.append(f"  {row['node']}: {how}; {last}")
    return lines


def _fetch(args: argparse.Namespace) -> str:
    """Fetch first, so the node table is the remote's tip, not the one of the last pull;
    what went wrong when it could not be fetched (empty when it was)."""
    from pathlib import Path

    from relay.edges.git import Clone
    from relay.errors import RemoteUnavailable

    try:
        Clone.open((args.repo_dir or Path.cwd()).resolve()).refresh()
    except RemoteUnavailable as exc:
        return f"the remote could not be reached ({str(exc).splitlines()[0][:120]})"
    return ""


def run(args: argparse.Namespace) -> Output:
    """List jobs, then nodes, then this clone's watchers and their last passes."""
    from relay.commands.early import start

    start(args, OPEN_ISSUES)  # the list travels while the clone is fetched and relay loads
    stale = _fetch(args)
    ctx = context(args, need_node=False)
    rows = run_async(lambda: jobs(ctx))
    lines = ["jobs:", *(f"  {job_line(r)}" for r in rows)] if rows else ["no open jobs"]
    lines.append(f"nodes (as last fetched: {stale}):" if stale else "nodes:")
    for node in ctx.master.nodes:
        lines.append(f"  {node.name} ({node.os or '?'}): watcher {node.scheduler}")
    revision = ctx.trust.revision
    lines.append(
        f"roster: revision {revision.revision}, signed by {revision.signed_by}"
        if revision is not None
        else "roster: none trusted in this clone (run `relay join`)"
    )
    lines += [f"  not followed: {note}" for note in ctx.trust.notes]
    beat = ctx.state.heartbeat()
    watchers = local_watchers(ctx)
    if ctx.config is None and not watchers:
        lines.append("this clone has not joined: run `relay join` to make it a node")
    else:
        lines += watcher_lines(watchers)
    data = {
        "jobs": rows,
        "nodes": [n.model_dump(mode="json") for n in ctx.master.nodes],
        "last_pass": beat.model_dump(mode="json") if beat else None,
        "watchers": watchers,
        "roster": {
            "revision": revision.revision if revision else None,
            "not_followed": list(ctx.trust.notes),
        },
    }
    return Output(lines=tuple(lines), data=data)
