"""The foreground poll loop: `relay watch` runs :func:`watchers.once.run_pass` every few
seconds until stopped, and keeps watching while the API or the remote is away."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

from relay.commands.output import say
from relay.errors import Conflict, RemoteProtocolError, RemoteUnavailable
from relay.node.context import NodeContext
from relay.node.redaction import redacted
from relay.watchers.once import Printer, TeardownHook, print_report, run_pass


def stopped() -> bool:
    """Whether a signal stopped a task this process ran (see relay.node.execute.stopping)."""
    from relay.edges.steps import stop_requested

    return bool(stop_requested())


async def loop(
    ctx: NodeContext,
    *,
    interval: float,
    on_teardown: TeardownHook | None = None,
    printer: Printer = print_report,
    passes: int | None = None,
    stop: Callable[[], Awaitable[bool]] | None = None,
) -> None:
    """Repeat the pass every ``interval`` seconds (``passes`` bounds it, for tests) until
    ``stop``, asked after each pass, says the watching has ended."""
    done, failures = 0, 0
    while passes is None or done < passes:
        try:
            printer(await run_pass(ctx, on_teardown=on_teardown, started_by="loop"))
            failures = 0
            if stopped():  # Ctrl-C stopped a task, which was answered: the watch ends too
                return
            if stop is not None and await stop():
                return
        except (RemoteUnavailable, RemoteProtocolError, Conflict) as err:
            # the API or the remote is away for a while: say so and keep watching
            failures += 1
            say(f"relay: {redacted(str(err))} (retrying)")
        done += 1
        if passes is None or done < passes:
            await asyncio.sleep(interval * min(2**failures, 10) if failures else interval)
