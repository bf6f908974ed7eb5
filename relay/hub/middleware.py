"""The one middleware every request passes: authenticate, inject faults, answer, make a GET
conditional, charge the rate limit, stamp headers, count.

One function rather than a chain, because the hub's per-request overhead matters (an idle
relay pass is a burst of 304s). Order follows GitHub: a bad token is 401 before anything;
a 304 for a matching ``If-None-Match`` is not charged, and neither is ``/rate_limit``.
"""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import Awaitable, Callable

from aiohttp import web

from relay.hub.faults import Fault
from relay.hub.web import HUB, ApiError, Hub, RateWindow

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]

SECONDARY_MESSAGE = (
    "You have exceeded a secondary rate limit. Please wait a few minutes before you try"
    " again. If you reach out to GitHub Support for help, please include the request ID."
)
_FAULT_ANSWERS = {
    Fault.E500: (500, "Server Error"),
    Fault.E502: (502, "Server Error"),
    Fault.E503: (503, "Service Unavailable"),
    Fault.E429: (429, SECONDARY_MESSAGE),
    Fault.SECONDARY: (403, SECONDARY_MESSAGE),
}
_STATIC_HEADERS = {
    "Cache-Control": "private, max-age=60, s-maxage=60",
    "Vary": "Accept, Authorization, Cookie, X-GitHub-OTP",
    "X-GitHub-Media-Type": "github.v3; format=json",
    "X-GitHub-Api-Version-Selected": "2022-11-28",
}
ADMIN_PREFIX = "/_hub/"
FREE_PATH = "/rate_limit"
APP_PREFIX = "/app/"  # GitHub App endpoints authenticate with the App's JWT (relay/hub/apps.py)


def authenticate(request: web.Request, hub: Hub) -> str:
    """Set ``viewer``/``admin``/``rate_key`` on the request and return the rate key.
    401 "Bad credentials" for an unknown token, whatever its length."""
    header = request.headers.get("Authorization", "").strip()
    if not header:
        request["viewer"], request["admin"] = None, False
        key = request["rate_key"] = f"ip:{request.remote}"
        return key
    scheme, _, token = header.partition(" ")
    token = token.strip()
    owner = hub.tokens.get(token) if token else None
    if owner is None and token and scheme.lower() in ("token", "bearer"):
        owner = hub.store.token_owner(token)
        if owner is not None:
            hub.tokens[token] = owner
    if owner is None and scheme.lower() == "bearer" and request.path.startswith(APP_PREFIX):
        request["viewer"], request["admin"], request["jwt"] = None, False, token  # apps.py checks
        key = request["rate_key"] = f"jwt:{token[-24:]}"
        return key
    if owner is None:
        raise ApiError(401, "Bad credentials")
    request["viewer"], request["admin"] = owner
    key = request["rate_key"] = f"token:{token}"
    return key


def _etag(body: object) -> str:
    data = body if isinstance(body, bytes) else b""
    return f'W/"{hashlib.md5(data, usedforsecurity=False).hexdigest()}"'


def _matches(header: str | None, etag: str) -> bool:
    if not header:
        return False
    bare = etag.removeprefix("W/")
    return any(tag.strip().removeprefix("W/") in (bare, "*") for tag in header.split(","))


def _stamp(resp: web.StreamResponse, win: RateWindow | None) -> None:
    headers = resp.headers
    headers.update(_STATIC_HEADERS)
    if win is not None:
        headers["x-ratelimit-limit"] = str(win.limit)
        headers["x-ratelimit-remaining"] = str(win.limit - win.used)
        headers["x-ratelimit-used"] = str(win.used)
        headers["x-ratelimit-reset"] = str(win.reset)
        headers["x-ratelimit-resource"] = "core"


async def _answer(request: web.Request, handler: Handler) -> web.StreamResponse:
    try:
        return await handler(request)
    except ApiError as err:
        return err.response()
    except web.HTTPException as exc:  # unknown route or method: GitHub says 404
        status = 404 if exc.status in (404, 405) else exc.status
        return ApiError(status, "Not Found" if status == 404 else exc.reason).response()


def _fault_answer(fault: Fault, retry_after: int) -> web.Response:
    status, message = _FAULT_ANSWERS[fault]
    limited = fault in (Fault.E429, Fault.SECONDARY)
    headers = {"Retry-After": str(retry_after)} if limited else {}
    return ApiError(status, message, headers=headers).response()


def _exhausted(request: web.Request) -> web.Response:
    """GitHub's primary-limit 403 (``x-ratelimit-remaining`` will read 0)."""
    who = request.get("viewer")
    name = f"user ID {who['id']}" if who else f"{request.remote}"
    return ApiError(403, f"API rate limit exceeded for {name}.").response()


async def _drop(request: web.Request) -> web.StreamResponse:
    """Close the connection without an answer."""
    transport = request.transport
    if transport is not None:
        transport.close()
    raise asyncio.CancelledError


@web.middleware
async def hub_middleware(request: web.Request, handler: Handler) -> web.StreamResponse:
    """Serve one request the way api.github.com would (see the module docstring)."""
    hub = request.app[HUB]
    if request.path.startswith(ADMIN_PREFIX):
        return await _admin(request, handler, hub)
    faults = hub.faults
    fault = faults.draw() if faults.active else None
    if faults.active and (delay := faults.delay(fault)):
        await asyncio.sleep(delay)
    if fault is Fault.DROP:
        hub.count(request.method, request.path, 0)
        return await _drop(request)
    win: RateWindow | None = None
    try:
        win = hub.window(authenticate(request, hub))
        if fault is not None and fault is not Fault.SLOW:
            resp: web.StreamResponse = _fault_answer(fault, faults.spec.retry_after)
        elif win.used >= win.limit and request.path != FREE_PATH:
            resp = _exhausted(request)
        else:
            resp = await _conditional(request, handler, win)
    except ApiError as err:
        resp = err.response()
    _stamp(resp, win)
    hub.count(request.method, request.path, resp.status)
    return resp


async def _conditional(
    request: web.Request, handler: Handler, win: RateWindow
) -> web.StreamResponse:
    """Answer; a GET whose ``If-None-Match`` matches gets an uncharged 304."""
    resp = await _answer(request, handler)
    if request.method == "GET" and resp.status == 200 and isinstance(resp, web.Response):
        etag = _etag(resp.body)
        if _matches(request.headers.get("If-None-Match"), etag):
            return web.Response(status=304, headers={"ETag": etag})
        resp.headers["ETag"] = etag
    if request.path != FREE_PATH:
        win.used += 1
    return resp


async def _admin(request: web.Request, handler: Handler, hub: Hub) -> web.StreamResponse:
    """Admin endpoints: only an admin token sees them; everyone else gets 404."""
    try:
        authenticate(request, hub)
        if not request["admin"]:
            raise ApiError(404, "Not Found")
    except ApiError as err:
        return err.response()
    return await _answer(request, handler)
