"""The ways a node notices its turn, all ending in :func:`watchers.once.run_pass`.

``loop`` polls in the foreground; ``serve_webhook`` acts on deliveries within a second
and reconciles every few minutes (GitHub drops deliveries and never redelivers them);
``actions_pass`` is one pass inside a GitHub Actions run. Passes inside one process are
serialised with an asyncio lock, so an event arriving during a reconcile waits for it
instead of being dropped by the node's file lock.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from relay.cli import redacted
from relay.errors import Conflict, LocalUsageError, RemoteProtocolError, RemoteUnavailable
from relay.node import NodeContext, open_node
from relay.token import Token
from watchers.once import PassReport, TeardownHook, run_pass

if TYPE_CHECKING:
    from watchers.actions import ActionsContext

Printer = Callable[[PassReport], None]
# Seconds to wait before trying again when another process of this node holds its lock:
# the delivery was taken, so dropping the pass would lose the turn until a reconcile.
# A scheduled pass may be running a step (up to the step timeout), so keep trying for
# about ten minutes before leaving the turn to the reconciling pass.
BUSY_RETRIES = (0.5, 1.0, 2.0, 4.0, 8.0, 15.0, *(30.0,) * 19)


def print_report(report: PassReport) -> None:
    """Print a pass's lines (they carry no secrets) and flush, for scheduler logs."""
    for line in report.lines:
        print(line)
    if sys.stdout is not None:  # pythonw has none
        sys.stdout.flush()


async def loop(
    ctx: NodeContext,
    *,
    interval: float,
    on_teardown: TeardownHook | None = None,
    printer: Printer = print_report,
    passes: int | None = None,
) -> None:
    """Repeat the pass every ``interval`` seconds (``passes`` bounds it, for tests)."""
    done, failures = 0, 0
    while passes is None or done < passes:
        try:
            printer(await run_pass(ctx, on_teardown=on_teardown))
            failures = 0
        except (RemoteUnavailable, RemoteProtocolError, Conflict) as err:
            # the API or the remote is away for a while: say so and keep watching
            failures += 1
            print(f"relay: {redacted(str(err))} (retrying)", file=sys.stderr, flush=True)
        done += 1
        if passes is None or done < passes:
            await asyncio.sleep(interval * min(2**failures, 10) if failures else interval)


async def serve_webhook(
    ctx: NodeContext,
    *,
    host: str,
    port: int,
    secret: str,
    reconcile_interval: float = 180.0,
    printer: Printer = print_report,
    ready: Callable[[str], None] | None = None,
) -> None:
    """Receive webhooks until cancelled; each issue event runs the pass for that issue."""
    from watchers.webhook import WebhookEvent, build_app, start

    gate = asyncio.Lock()

    async def on_event(event: WebhookEvent) -> None:
        for delay in (*BUSY_RETRIES, None):
            async with gate:
                report = await run_pass(ctx, issue=event.issue_number)
            if report.outcome != "busy" or delay is None:
                break
            await asyncio.sleep(delay)  # outside the gate: other deliveries go on meanwhile
        printer(report)

    async def reconcile() -> None:
        async with gate:
            printer(await run_pass(ctx))

    app = build_app(
        secret=secret, on_event=on_event, reconcile=reconcile, reconcile_interval=reconcile_interval
    )
    try:
        runner, url = await start(app, host=host, port=port)
    except OSError as err:  # port in use, an address not on this machine, a bad name
        raise LocalUsageError(
            f"cannot listen on {host}:{port}: {err.strerror or err}",
            hint="choose another --listen HOST:PORT",
        ) from None
    print(f"relay watch: receiving webhooks at {url}", flush=True)
    if ready is not None:
        ready(url)
    try:
        await asyncio.Event().wait()
    finally:
        await runner.cleanup()


async def actions_pass(
    *, repo_dir: Path | None, node: str | None, event_path: str | None
) -> PassReport | None:
    """One pass for a GitHub Actions run; None (and no request sent) when the event does not
    concern this node. The step summary says which, either way."""
    import dataclasses
    import os

    from relay.observe import binds
    from watchers.actions import load_event, read_context, summary_line, write_step_summary

    actions = read_context(event_path=event_path)
    if not actions.concerns_relay:
        _skipped(actions, node or os.environ.get("RELAY_NODE") or "?")
        return None
    ctx = open_node(repo_dir=repo_dir, node=node, api=actions.api_url)
    if actions.issue_number is not None:
        issue = load_event(event_path or os.environ["GITHUB_EVENT_PATH"]).get("issue", {})
        if not binds(str(issue.get("body") or ""), ctx.node):
            why = f"#{actions.issue_number} is a job of other nodes"
            _skipped(dataclasses.replace(actions, concerns_relay=False, reason=why), ctx.node)
            return None
    # A node that is a GitHub App acts with its installation token (its moves wake other
    # workflows); otherwise with the token the workflow gave.
    token = None if ctx.app is not None else Token(actions.token, "GITHUB_TOKEN")
    report = await run_pass(ctx, issue=actions.issue_number, token=token)
    write_step_summary("\n".join([summary_line(actions, node=ctx.node), *report.lines]))
    return report


def _skipped(actions: ActionsContext, node: str) -> None:
    from watchers.actions import summary_line, write_step_summary

    print(f"relay watch: nothing to do ({actions.reason})")
    write_step_summary(summary_line(actions, node=node))
