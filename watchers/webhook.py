"""The webhook receiver: GitHub (or the hub) tells the node at once that something moved.

Ground rules, in bedevere's order: verify the signature before reading anything else
(a request with no ``X-Hub-Signature-256``, or one too large, is refused before its body
is read, and only a few bodies are read at once); answer ``ping``; log the delivery id;
drop a delivery id already seen (GitHub keeps the id on a redelivery); answer 2xx at once
and run the pass in the background, because GitHub counts a delivery as failed after
10 s; a crash in a handler is logged, never fatal; any other failure is a 500. GitHub
does not redeliver dropped deliveries by itself, so a reconciling full pass also runs
every few minutes.

The delivery id is not signed: one signed delivery sent again with fresh ids is a new
delivery each time. So passes are coalesced per issue (:class:`Coalescer`): at most one
runs for an issue at a time and at most one starts per ``issue_interval``; deliveries
that arrive meanwhile are folded into one follow-up pass, which reads the issue as it is
then, so nothing a delivery announced is missed.

GitHub docs: "Validating webhook deliveries", "Best practices for using webhooks".
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import re
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Mapping
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING, Any

from relay.errors import ConfigError, LocalUsageError, RemoteProtocolError
from relay.protocol.relevance import Delivery, Relevance
from relay.watchers.deliveries import DEFAULT_ISSUE_INTERVAL, Coalescer, DeliveryLog
from relay.watchers.once import Printer, print_report

if TYPE_CHECKING:
    from aiohttp import web

    from relay.node.context import NodeContext

log = logging.getLogger("relay.watchers.webhook")

ENV_SECRET = "RELAY_WEBHOOK_SECRET"
HANDLED_EVENTS = frozenset({"issues", "issue_comment"})
DEFAULT_RECONCILE_INTERVAL = 180.0
# Relay payloads carry at most two 65,536-character bodies; leave room for JSON escaping.
MAX_BODY_BYTES = 4 * 1024 * 1024
MAX_READING = 8  # bodies read at once; more: 503, so memory stays under 32 MiB
_SIGNATURE = re.compile(r"sha256=[0-9a-fA-F]{64}")


@dataclass(frozen=True)
class WebhookEvent:
    """What a pass needs to know of one delivery: which issue, who, what happened."""

    delivery_id: str
    event: str
    action: str | None
    repository: str | None
    issue_number: int | None
    is_pull_request: bool
    sender_id: int | None
    sender_login: str | None
    label: str | None
    comment_id: int | None
    # what the payload says of the issue and the comment, for :func:`concerns` (data)
    issue_body: str | None = None
    labels: tuple[str, ...] = ()
    comment_author_id: int | None = None
    comment_body: str | None = None

    @classmethod
    def from_payload(cls, *, event: str, delivery_id: str, data: Any) -> WebhookEvent:
        """Extract the fields from GitHub's payload; RemoteProtocolError if it is no object."""
        if not isinstance(data, Mapping):
            raise RemoteProtocolError(f"delivery {delivery_id}: the payload is not a JSON object")
        issue, sender = _obj(data, "issue"), _obj(data, "sender")
        comment = _obj(data, "comment")
        labels = issue.get("labels")
        return cls(
            delivery_id=delivery_id,
            event=event,
            action=_str(data, "action"),
            repository=_str(_obj(data, "repository"), "full_name"),
            issue_number=_int(issue, "number"),
            is_pull_request="pull_request" in issue,
            sender_id=_int(sender, "id"),
            sender_login=_str(sender, "login"),
            label=_str(_obj(data, "label"), "name"),
            comment_id=_int(comment, "id"),
            issue_body=_str(issue, "body"),
            labels=tuple(
                name
                for label in (labels if isinstance(labels, list) else [])
                if isinstance(label, Mapping) and (name := _str(label, "name")) is not None
            ),
            comment_author_id=_int(_obj(comment, "user"), "id"),
            comment_body=_str(comment, "body"),
        )

    def delivery(self) -> Delivery:
        """The delivery as the protocol's relevance rule reads it."""
        return Delivery(
            event=self.event,
            action=self.action,
            issue=self.issue_number,
            is_pull_request=self.is_pull_request,
            body=self.issue_body,
            labels=self.labels,
            sender=self.sender_id,
            label=self.label,
            comment_author=self.comment_author_id,
            comment_body=self.comment_body,
        )


def _obj(data: Mapping[str, Any], key: str) -> Mapping[str, Any]:
    value = data.get(key)
    return value if isinstance(value, Mapping) else {}


def _str(data: Mapping[str, Any], key: str) -> str | None:
    value = data.get(key)
    return value if isinstance(value, str) else None


def _int(data: Mapping[str, Any], key: str) -> int | None:
    value = data.get(key)
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def secret_from_env(environ: Mapping[str, str] | None = None) -> str:
    """The webhook secret from RELAY_WEBHOOK_SECRET, read when called."""
    secret = (os.environ if environ is None else environ).get(ENV_SECRET, "")
    if not secret:
        raise ConfigError(
            f"no webhook secret: {ENV_SECRET} is not set",
            hint="set it to the secret the repository's webhook was registered with",
        )
    return secret


OnEvent = Callable[[WebhookEvent], Awaitable[None]]
Reconcile = Callable[[], Awaitable[None]]
Concerns = Callable[[WebhookEvent], Relevance]
"""Whether a delivery calls for a pass, decided before any request (relay.protocol.relevance)."""


class Receiver:
    """The request handler and its background work; one per application."""

    def __init__(
        self,
        *,
        secret: str,
        on_event: OnEvent,
        reconcile: Reconcile,
        issue_interval: float = DEFAULT_ISSUE_INTERVAL,
        concerns: Concerns | None = None,
    ) -> None:
        self.secret = secret
        self.on_event = on_event
        self.reconcile = reconcile
        self.concerns = concerns
        self.deliveries = DeliveryLog()
        self.tasks: set[asyncio.Task[None]] = set()
        self.passes = Coalescer(self._run_handler, self._spawn, interval=issue_interval)
        self.reading = 0  # bodies being read now

    async def handle(self, request: web.Request) -> web.Response:
        """Answer one delivery; only a verified, new issue event reaches on_event."""
        from aiohttp import web

        try:
            return await self._dispatch(request)
        except web.HTTPException:
            raise  # aiohttp's own answers, e.g. 413 for a body over MAX_BODY_BYTES
        except Exception:
            log.exception("webhook delivery failed")
            return web.Response(status=500, text="internal error")

    async def _dispatch(self, request: web.Request) -> web.Response:
        from aiohttp import web
        from gidgethub import BadRequest, ValidationFailure, sansio

        refused = self._refused(request)
        if refused is not None:
            return refused
        self.reading += 1
        try:
            body = await request.read()
        finally:
            self.reading -= 1
        try:
            event = sansio.Event.from_http(request.headers, body, secret=self.secret)
        except ValidationFailure:
            return web.Response(status=403, text="signature does not match")
        except BadRequest as err:
            return web.Response(status=err.status_code, text=str(err))
        except KeyError as err:
            return web.Response(status=400, text=f"missing header {err}")
        if event.event == "ping":
            return web.Response(status=200, text="pong")
        log.info("delivery %s: %s", event.delivery_id, event.event)
        if not self.deliveries.first_time(event.delivery_id):
            log.info("delivery %s: already handled, dropped", event.delivery_id)
            return web.Response(status=200, text="duplicate delivery")
        if event.event not in HANDLED_EVENTS:
            return web.Response(status=202, text=f"{event.event}: nothing to do")
        try:
            parsed = WebhookEvent.from_payload(
                event=event.event, delivery_id=event.delivery_id, data=event.data
            )
        except RemoteProtocolError as err:
            return web.Response(status=400, text=str(err))
        if self.concerns is not None:
            relevance = self.concerns(parsed)
            if relevance.issue is None:
                log.info("delivery %s: ignored (%s)", event.delivery_id, relevance.why)
                return web.Response(status=202, text=f"ignored: {relevance.why}")
        if not self.passes.submit(parsed):
            return web.Response(status=202, text="accepted: folded into the pending pass")
        return web.Response(status=202, text="accepted")

    def _refused(self, request: web.Request) -> web.Response | None:
        """The answer to a request refused on its headers alone, before its body is read:
        unsigned (401), a signature of the wrong shape (403), too large (413), or too many
        bodies being read already (503)."""
        from aiohttp import web

        signature = request.headers.get("x-hub-signature-256")
        if signature is None:
            return web.Response(status=401, text="missing X-Hub-Signature-256")
        if not _SIGNATURE.fullmatch(signature):  # can match no body: not worth reading one
            return web.Response(status=403, text="signature does not match")
        if (request.content_length or 0) > MAX_BODY_BYTES:
            return web.Response(status=413, text=f"a delivery is at most {MAX_BODY_BYTES} bytes")
        if self.reading >= MAX_READING:
            return web.Response(status=503, text="busy", headers={"Retry-After": "1"})
        return None

    def _spawn(self, work: Awaitable[None]) -> None:
        task: asyncio.Task[None] = asyncio.ensure_future(work)
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)

    async def _run_handler(self, event: WebhookEvent) -> None:
        try:
            await self.on_event(event)
        except Exception:
            # A person may redeliver it from the hook's settings page once the cause is fixed.
            self.deliveries.forget(event.delivery_id)
            log.exception("delivery %s: the pass failed", event.delivery_id)

    async def reconcile_forever(self, interval: float) -> None:
        """A full pass now and every `interval` seconds; a failed pass waits for the next."""
        while True:
            try:
                await self.reconcile()
            except Exception:
                log.exception("reconciling pass failed")
            await asyncio.sleep(interval)

    async def drain(self) -> None:
        """Cancel the handlers still running (the server is going away)."""
        for task in list(self.tasks):
            task.cancel()
        await asyncio.gather(*self.tasks, return_exceptions=True)


def build_app(
    *,
    secret: str,
    on_event: OnEvent,
    reconcile: Reconcile,
    reconcile_interval: float = DEFAULT_RECONCILE_INTERVAL,
    path: str = "/{tail:.*}",
    issue_interval: float = DEFAULT_ISSUE_INTERVAL,
    concerns: Concerns | None = None,
) -> web.Application:
    """The receiver as an aiohttp application: POST deliveries to `path` (by default any
    path, so the URL registered with `relay join --webhook` may have one of its own);
    at most one pass per issue starts every ``issue_interval`` seconds; with ``concerns``,
    only deliveries it says can concern the node start one."""
    from aiohttp import web

    if not secret:
        raise ConfigError("the webhook secret is empty", hint=f"set {ENV_SECRET}")
    if reconcile_interval <= 0:
        raise LocalUsageError(
            f"the reconcile interval must be positive, not {reconcile_interval}",
            hint="give the seconds between full passes, e.g. 180",
        )
    receiver = Receiver(
        secret=secret,
        on_event=on_event,
        reconcile=reconcile,
        issue_interval=issue_interval,
        concerns=concerns,
    )
    app = web.Application(client_max_size=MAX_BODY_BYTES)
    app.router.add_post(path, receiver.handle)

    async def background(_: web.Application) -> AsyncIterator[None]:
        loop_task = asyncio.ensure_future(receiver.reconcile_forever(reconcile_interval))
        yield
        loop_task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await loop_task
        await receiver.drain()

    app.cleanup_ctx.append(background)
    return app


SHUTDOWN_SECONDS = 3.0


async def start(app: web.Application, *, host: str, port: int) -> tuple[web.AppRunner, str]:
    """Serve `app` on host:port (0 picks a free port); return the runner and the base URL."""
    from aiohttp import web

    # a delivery is answered at once: an ending receiver waits a moment, not aiohttp's minute
    runner = web.AppRunner(app, access_log=None, shutdown_timeout=SHUTDOWN_SECONDS)
    await runner.setup()
    await web.TCPSite(runner, host, port).start()
    bound_host, bound_port = runner.addresses[0][:2]
    return runner, f"http://{bound_host}:{bound_port}"


class _Known:
    """The jobs the node bound when it last read them (its thread cache), read from disk
    only when the relevance rule asks (most deliveries are decided without them)."""

    def __init__(self, ctx: NodeContext) -> None:
        self.ctx = ctx
        self._numbers: set[int] | None = None

    def _load(self) -> set[int]:
        if self._numbers is None:
            from relay.edges.github.threads import ThreadCache, threads_owner

            owner = threads_owner(api_url=self.ctx.api_url, repo=self.ctx.repo)
            self._numbers = ThreadCache.load(self.ctx.state.threads_path, owner=owner).numbers()
        return self._numbers

    def __contains__(self, number: object) -> bool:
        return number in self._load()

    def __iter__(self) -> Iterator[int]:
        return iter(self._load())

    def __len__(self) -> int:
        return len(self._load())


def node_concerns(ctx: NodeContext, event: WebhookEvent) -> Relevance:
    """Whether a delivery can concern the node: the protocol's rule over the payload, the
    roster the node trusts now and the jobs it bound; no request."""
    from relay.protocol.relevance import pass_for

    return pass_for(event.delivery(), node=ctx.node, master=ctx.master, known=_Known(ctx))


# Seconds to wait before trying again when another process of this node holds its lock:
# the delivery was taken, so dropping the pass would lose the turn until a reconcile.
# A scheduled pass may be running a step (up to the step timeout), so keep trying for
# about ten minutes before leaving the turn to the reconciling pass.
BUSY_RETRIES = (0.5, 1.0, 2.0, 4.0, 8.0, 15.0, *(30.0,) * 19)


async def serve_webhook(
    ctx: NodeContext,
    *,
    host: str,
    port: int,
    secret: str,
    reconcile_interval: float = 180.0,
    printer: Printer = print_report,
    ready: Callable[[str], None] | None = None,
) -> int:
    """Receive webhooks until cancelled, until Ctrl-C or SIGTERM stopped a task a pass ran
    (which was answered `stopped`), or until one of them came between tasks; each issue
    event runs the pass for that issue. The signal that ended it (0: none did)."""
    from relay.watchers.once import run_pass
    from relay.watchers.poll import stopped

    gate = asyncio.Lock()
    ended = asyncio.Event()

    def end_if_stopped() -> None:
        if stopped():  # also when the stopped pass failed afterwards: the watch ends
            ended.set()

    async def on_event(event: WebhookEvent) -> None:
        try:
            for delay in (*BUSY_RETRIES, None):
                async with gate:
                    report = await run_pass(ctx, issue=event.issue_number, started_by="webhook")
                if report.outcome != "busy" or delay is None or stopped():
                    break
                await asyncio.sleep(delay)  # outside the gate: other deliveries go on meanwhile
            printer(report)
        finally:
            end_if_stopped()

    async def reconcile() -> None:
        try:
            async with gate:
                printer(await run_pass(ctx, started_by="webhook"))
        finally:
            end_if_stopped()

    app = build_app(
        secret=secret,
        on_event=on_event,
        reconcile=reconcile,
        reconcile_interval=reconcile_interval,
        concerns=partial(node_concerns, ctx),
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
    with ends_on_signals(ended) as signalled:
        try:
            await ended.wait()
        finally:
            await runner.cleanup()  # the passes under way are cancelled, their locks let go
    return signalled[0] if signalled else 0


@contextlib.contextmanager
def ends_on_signals(ended: asyncio.Event) -> Iterator[list[int]]:
    """While the receiver waits between tasks, SIGTERM (and Ctrl-C) end it through the
    event loop, as a cancellation: a pass under way stops at its next wait and lets go of
    its lock, and nothing is raised in the middle of the loop's own bookkeeping (where an
    exception can leave it waiting for ever). A TASK's steps have handlers of their own
    (relay.node.execute.stopping) that pass the signal on and answer `stopped`. A second
    signal while the receiver ends does what the one before this did (relay leaves)."""
    import signal
    import sys
    import threading

    signalled: list[int] = []
    if threading.current_thread() is not threading.main_thread():
        yield signalled
        return
    loop = asyncio.get_running_loop()
    signals = [signal.SIGINT, signal.SIGTERM]
    old = {sig: signal.getsignal(sig) for sig in signals}

    def end(signum: int, frame: Any) -> None:
        if signalled:  # again: as before this receiver ran
            before = old.get(signal.Signals(signum))
            if callable(before):
                before(signum, frame)
            raise SystemExit(128 + signum)
        signalled.append(signum)
        loop.call_soon_threadsafe(ended.set)
        key = "Ctrl-C" if signum == signal.SIGINT else signal.Signals(signum).name
        with contextlib.suppress(OSError, ValueError, AttributeError):
            said = f"relay: stopping the webhook receiver ({key} again leaves now)\n"
            os.write(sys.stderr.fileno(), said.encode())  # not print: the stream may be mid-write

    for sig in signals:
        signal.signal(sig, end)
    try:
        yield signalled
    finally:
        for sig, handler in old.items():
            signal.signal(sig, handler)
