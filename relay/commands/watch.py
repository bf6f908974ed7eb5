"""`relay watch`: one pass (--once), a foreground loop, a webhook receiver, or an Actions run."""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from relay.commands.common import add_common, context, run_async
from relay.commands.output import Output
from relay.commands.repos import issue_number
from relay.errors import LocalUsageError, RelayError

if TYPE_CHECKING:
    from relay.edges.local import NodeState


def register(sub: Any) -> None:
    """Add `watch`."""
    p: argparse.ArgumentParser = sub.add_parser("watch", help="take this node's turns")
    p.add_argument("--once", action="store_true", help="run one pass and exit")
    p.add_argument(
        "--interval",
        type=_seconds,
        default=60.0,
        help="seconds between passes (at least 5; 1 against a hub on this machine; at most 86400)",
    )
    p.add_argument("--issue", type=issue_number, default=None, help="only look at this issue")
    p.add_argument("--webhook", action="store_true", help="receive webhooks instead of polling")
    p.add_argument("--listen", default="127.0.0.1:8787", help="HOST:PORT for --webhook")
    p.add_argument(
        "--reconcile", type=_seconds, default=180.0, help="seconds between full passes (webhook)"
    )
    p.add_argument("--event", default=None, help="a GitHub Actions event file (with --once)")
    p.add_argument("-v", "--verbose", action="store_true", help="say why each comment is data")
    p.add_argument("--log", type=Path, default=None, metavar="FILE", help="also append to FILE")
    p.add_argument("--scheduled", action="store_true", help=argparse.SUPPRESS)  # an OS entry
    p.add_argument("--nonce", default=None, help=argparse.SUPPRESS)  # the entry's own proof
    add_common(p)
    p.set_defaults(func=run)


def _seconds(text: str) -> float:
    """argparse type for a poll's seconds: a number of at most a day (the floor, which
    depends on the API polled, is checked once its URL is known: bounds.check_poll)."""
    import math

    from relay.commands.bounds import POLL_CEILING

    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not value <= POLL_CEILING:  # NaN and infinity too
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of at most {POLL_CEILING:g} s")
    return value


def listen_address(text: str) -> tuple[str, int]:
    """HOST:PORT as given to --listen (an IPv6 host in brackets: [::1]:8787)."""
    host, _, port = text.rpartition(":")
    host = host[1:-1] if host.startswith("[") and host.endswith("]") else host
    if not host or not port.isdigit() or not 0 <= int(port) <= 65535:
        raise LocalUsageError(
            f"--listen {text!r} is not HOST:PORT", hint="e.g. 127.0.0.1:8787 or [::1]:8787"
        )
    return host, int(port)


def run(args: argparse.Namespace) -> Output:
    """Dispatch; with --log, the lines (or the error) are appended to the log as well,
    since Task Scheduler keeps no output of the passes it starts."""
    try:
        result = dispatch(args)
    except RelayError as err:
        if args.log is not None:
            from relay.node.redaction import redacted
            from relay.watchers.scheduled_token import append_log

            append_log(args.log, [f"relay: {redacted(str(err))}"])
        raise
    if args.log is not None:
        from relay.watchers.scheduled_token import append_log

        append_log(args.log, list(result.lines) or ["nothing to do"])
    return result


def record_failure(args: argparse.Namespace, err: RelayError) -> None:
    """A pass that failed before it could start (no token, a moved clone) still leaves a
    heartbeat, so `relay doctor` reports the failure instead of "no pass yet" (a pass that
    started records its own ending)."""
    from datetime import UTC, datetime
    from pathlib import Path

    from relay.edges.local import NodeState, PassRecord
    from relay.node.redaction import redacted

    with contextlib.suppress(Exception):  # no clone, no state: nothing to record into
        state = NodeState.for_clone(args.repo_dir or Path.cwd())
        now = datetime.now(UTC)
        config = state.load_config()
        node = args.node or (config.node if config else None)
        if node is None:  # a clone that never joined has no node whose pass this was
            return
        outcome = f"error: {redacted(str(err))}"[:300]
        by = starter(args, state, node)
        state.log_pass(PassRecord(at=now, node=node, outcome=outcome, started_by=by))


def starter(args: argparse.Namespace, state: NodeState, node: str) -> str:
    """Who started a one-off pass: the OS scheduler's entry — its argv says --scheduled
    and presents the nonce of the registration in place (on every scheduler, Task
    Scheduler having no environment to set) — or a person, whatever flags they typed."""
    from relay.watchers.registration import started_by

    if not args.scheduled:
        return "person"
    return started_by(state, node, args.nonce)


def dispatch(args: argparse.Namespace) -> Output:
    """Dispatch to the watcher the flags ask for."""
    if args.once and args.event is None and not args.webhook:
        from relay.watchers.quiet import quiet_pass

        quick = quiet_pass(args)  # nothing changed since an idle pass: one request, a 304
        if quick is not None:
            return pass_result(quick)
        send_list_early(args)
    from relay.watchers import github_actions, poll, webhook
    from relay.watchers.once import run_pass
    from relay.watchers.scheduled_token import scheduled_token

    if args.event is not None:
        report = run_async(
            lambda: github_actions.actions_pass(
                repo_dir=args.repo_dir, node=args.node, event_path=args.event
            )
        )
        if report is None:
            return Output(data={"outcome": "not-relevant"})
        return pass_result(report)
    try:
        ctx = context(args)
        token = scheduled_token(ctx) if args.once and args.scheduled else None
    except RelayError as err:
        if args.once:
            record_failure(args, err)
        raise
    if args.webhook:
        from relay.commands.bounds import check_poll
        from relay.edges.local import webhook_secret

        check_poll("--reconcile", args.reconcile, ctx.api_url)
        host, port = listen_address(args.listen)
        secret, _source = webhook_secret(ctx.state)  # RELAY_WEBHOOK_SECRET, else the node's
        signum = run_async(
            lambda: webhook.serve_webhook(
                ctx, host=host, port=port, secret=secret, reconcile_interval=args.reconcile
            )
        )
        # 0, unless a TASK was stopped or a signal ended the receiver between tasks
        return Output(exit_status=stopped_status() or (128 + signum if signum else 0))
    if args.once:
        from relay.watchers.registration import on_teardown

        if not args.scheduled:  # a person watches: say which step runs, and for how long
            from relay.node.progress import Progress, install

            install(Progress())

        # A pass that finds no job binding its node removes the watcher this clone
        # registered (none registered: nothing happens), as a scheduled pass must.
        return pass_result(
            run_async(
                lambda: run_pass(
                    ctx,
                    issue=args.issue,
                    token=token,
                    on_teardown=on_teardown,
                    verbose=args.verbose,
                    started_by=starter(args, ctx.state, ctx.node),
                )
            )
        )
    from relay.commands.bounds import check_poll
    from relay.node.progress import Progress, install

    check_poll("--interval", args.interval, ctx.api_url)
    install(Progress())  # a long step says so; an idle loop says it is alive, now and then
    alive = Alive(ctx.node, args.interval)
    ended = until_unbound(ctx)
    run_async(lambda: poll.loop(ctx, interval=args.interval, printer=alive.printer, stop=ended))
    if poll.stopped():  # the exit status says so (cli.stopped_by)
        return Output(
            lines=(f"relay watch: {ctx.node} stopped (its running TASK was answered `stopped`)",),
            data={"node": ctx.node, "stopped": True},
            exit_status=stopped_status(),
        )
    # as a scheduled pass would: no job binds the node, so its scheduler entry goes too
    from relay.watchers.registration import on_teardown

    torn = run_async(lambda: on_teardown(ctx))
    return Output(
        lines=(
            f"no open job binds {ctx.node} any more: watching on this machine has ended"
            " (run `relay watch` again, or `relay join`, for a new job)",
            *torn,
        ),
        data={"node": ctx.node, "ended": True, "teardown": torn},
    )


def send_list_early(args: argparse.Namespace) -> None:
    """A full pass's first request is the open-issue list: send it as the pass starts, so it
    travels while the client, the models and the protocol load (relay.commands.early; the
    client takes the answer as its own). Not when the pass looks at one issue (it asks for
    that one), when the idle check asked for the list already (its 200 is the client's; an
    error is asked again by the client, as always), or when another pass holds the lock
    (this one then asks for nothing)."""
    from relay.watchers.quiet import ASKED, lock_free

    if args.issue is not None or ASKED or not lock_free(args):
        return
    from relay.commands.early import OPEN_ISSUES, start

    start(args, OPEN_ISSUES)


def until_unbound(ctx: Any) -> Callable[[], Awaitable[bool]]:
    """The foreground watch's end: after a pass, no open job binds the node any more (it
    had one while this watch ran). A watch started before its first job waits for it."""
    from relay.watchers.registration import bound_jobs

    seen = False

    async def ended() -> bool:
        nonlocal seen
        if await bound_jobs(ctx):
            seen = True
            return False
        return seen

    return ended


ALIVE_EVERY = 600.0  # seconds between two "still watching" lines of an idle loop


QUIET_WORTH_SAYING = 1.0  # seconds of quiet before the alive line speaks


class Alive:
    """The foreground loop's printer: each pass's lines as before, and while passes have
    nothing to do, a line saying the loop is alive (on a terminal it updates in place;
    in a log, one every ALIVE_EVERY seconds)."""

    def __init__(self, node: str, interval: float) -> None:
        import time

        from relay.node.progress import Progress

        self.node, self.interval = node, interval
        self.progress = Progress(every=ALIVE_EVERY)
        self.started = time.monotonic()
        self.passes = 0
        self.last_said = time.monotonic()

    def printer(self, report: Any) -> None:
        """Print one pass's report (watchers.once.print_report), or that all is quiet."""
        import time

        from relay.node.progress import duration
        from relay.watchers.once import print_report

        self.passes += 1
        if report.lines:
            self.progress.close()
            print_report(report)
            self.last_said = time.monotonic()
            return
        elapsed = time.monotonic() - self.last_said
        if elapsed < QUIET_WORTH_SAYING:  # "nothing to do for 0s" says nothing
            return
        now = time.strftime("%H:%M:%S")
        quiet = duration(elapsed)
        self.progress.say(
            "idle",
            f"relay watch: {self.node} alive, {self.passes} passes, nothing to do for {quiet}"
            f" (last pass {now}; every {self.interval:g}s)",
        )


def pass_result(report: Any) -> Output:
    """A pass's report as a verb's result."""
    data = dataclasses.asdict(report)
    data["tasks"] = [dataclasses.asdict(t) for t in report.tasks]
    lines = report.lines or [f"{report.node}: nothing to do"]
    return Output(lines=tuple(lines), data=data, exit_status=stopped_status())


def stopped_status() -> int:
    """The exit status of a watch whose running TASK was stopped by a signal and answered
    `stopped` (128 + the signal, as a shell reports it); 0 when none was (and none can
    have been when no step was ever loaded, as in an idle pass)."""
    steps = sys.modules.get("relay.edges.steps")
    signum = steps.stop_requested() if steps is not None else 0
    return 128 + signum if signum else 0
