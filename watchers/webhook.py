"""The webhook receiver: GitHub (or the hub) tells the node at once that something moved.

Ground rules, in bedevere's order: verify the signature before reading anything else;
answer ``ping``; log the delivery id; drop a delivery id already seen (GitHub keeps the id
on a redelivery); answer 2xx at once and run the pass in the background, because GitHub
counts a delivery as failed after 10 s; a crash in a handler is logged, never fatal; any
other failure is a 500. GitHub does not redeliver dropped deliveries by itself, so a
reconciling full pass also runs every few minutes.

GitHub docs: "Validating webhook deliveries", "Best practices for using webhooks".
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
from collections import OrderedDict
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from relay.errors import ConfigError, LocalUsageError, RemoteProtocolError
from relay.watchers.once import Printer, print_report

if TYPE_CHECKING:
    from aiohttp import web

    from relay.node.context import NodeContext

log = logging.getLogger("relay.watchers.webhook")

ENV_SECRET = "RELAY_WEBHOOK_SECRET"
HANDLED_EVENTS = frozenset({"issues", "issue_comment"})
DEFAULT_RECONCILE_INTERVAL = 180.0
SEEN_DELIVERIES = 4096
# Relay payloads carry at most two 65,536-character bodies; leave room for JSON escaping.
MAX_BODY_BYTES = 4 * 1024 * 1024


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

    @classmethod
    def from_payload(cls, *, event: str, delivery_id: str, data: Any) -> WebhookEvent:
        """Extract the fields from GitHub's payload; RemoteProtocolError if it is no object."""
        if not isinstance(data, Mapping):
            raise RemoteProtocolError(f"delivery {delivery_id}: the payload is not a JSON object")
        issue, sender = _obj(data, "issue"), _obj(data, "sender")
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
            comment_id=_int(_obj(data, "comment"), "id"),
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


class DeliveryLog:
    """The most recent delivery ids, bounded, oldest forgotten first."""

    def __init__(self, capacity: int = SEEN_DELIVERIES) -> None:
        self._ids: OrderedDict[str, None] = OrderedDict()
        self._capacity = capacity

    def __len__(self) -> int:
        return len(self._ids)

    def first_time(self, delivery_id: str) -> bool:
        """Record the id; True unless it was already among the recent ones."""
        if delivery_id in self._ids:
            self._ids.move_to_end(delivery_id)
            return False
        self._ids[delivery_id] = None
        if len(self._ids) > self._capacity:
            self._ids.popitem(last=False)
        return True

    def forget(self, delivery_id: str) -> None:
        """Let a later redelivery of this id run again (its pass failed)."""
        self._ids.pop(delivery_id, None)


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


class Receiver:
    """The request handler and its background work; one per application."""

    def __init__(self, *, secret: str, on_event: OnEvent, reconcile: Reconcile) -> None:
        self.secret = secret
        self.on_event = on_event
        self.reconcile = reconcile
        self.deliveries = DeliveryLog()
        self.tasks: set[asyncio.Task[None]] = set()

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

        body = await request.read()
        if "x-hub-signature-256" not in request.headers:
            return web.Response(status=401, text="missing X-Hub-Signature-256")
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
        self._spawn(self._run_handler(parsed))
        return web.Response(status=202, text="accepted")

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
) -> web.Application:
    """The receiver as an aiohttp application: POST deliveries to `path` (by default any
    path, so the URL registered with `relay join --webhook` may have one of its own)."""
    from aiohttp import web

    if not secret:
        raise ConfigError("the webhook secret is empty", hint=f"set {ENV_SECRET}")
    if reconcile_interval <= 0:
        raise LocalUsageError(
            f"the reconcile interval must be positive, not {reconcile_interval}",
            hint="give the seconds between full passes, e.g. 180",
        )
    receiver = Receiver(secret=secret, on_event=on_event, reconcile=reconcile)
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


async def start(app: web.Application, *, host: str, port: int) -> tuple[web.AppRunner, str]:
    """Serve `app` on host:port (0 picks a free port); return the runner and the base URL."""
    from aiohttp import web

    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    await web.TCPSite(runner, host, port).start()
    bound_host, bound_port = runner.addresses[0][:2]
    return runner, f"http://{bound_host}:{bound_port}"


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
) -> None:
    """Receive webhooks until cancelled; each issue event runs the pass for that issue."""
    from relay.watchers.once import run_pass

    gate = asyncio.Lock()

    async def on_event(event: WebhookEvent) -> None:
        for delay in (*BUSY_RETRIES, None):
            async with gate:
                report = await run_pass(ctx, issue=event.issue_number, started_by="webhook")
            if report.outcome != "busy" or delay is None:
                break
            await asyncio.sleep(delay)  # outside the gate: other deliveries go on meanwhile
        printer(report)

    async def reconcile() -> None:
        async with gate:
            printer(await run_pass(ctx, started_by="webhook"))

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
