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

from relay.node import NodeContext, open_node
from relay.token import Token
from watchers.once import PassReport, TeardownHook, run_pass

Printer = Callable[[PassReport], None]


def print_report(report: PassReport) -> None:
    """Print a pass's lines (they carry no secrets) and flush, for scheduler logs."""
    for line in report.lines:
        print(line)
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
    done = 0
    while passes is None or done < passes:
        printer(await run_pass(ctx, on_teardown=on_teardown))
        done += 1
        if passes is None or done < passes:
            await asyncio.sleep(interval)


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
        async with gate:
            printer(await run_pass(ctx, issue=event.issue_number))

    async def reconcile() -> None:
        async with gate:
            printer(await run_pass(ctx))

    app = build_app(
        secret=secret, on_event=on_event, reconcile=reconcile, reconcile_interval=reconcile_interval
    )
    runner, url = await start(app, host=host, port=port)
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
    """One pass for a GitHub Actions run; None when the event does not concern relay."""
    from watchers.actions import read_context, summary_line, write_step_summary

    actions = read_context(event_path=event_path)
    if not actions.concerns_relay:
        print(f"relay watch: nothing to do ({actions.reason})")
        return None
    ctx = open_node(repo_dir=repo_dir, node=node, api=actions.api_url)
    token = Token(actions.token, "GITHUB_TOKEN")
    report = await run_pass(ctx, issue=actions.issue_number, token=token)
    write_step_summary("\n".join([summary_line(actions, node=ctx.node), *report.lines]))
    return report
