"""HTTP helpers the hub's handlers share: GitHub-shaped errors, JSON, paging, access checks.

Everything here answers the way GitHub answers: errors are ``{"message",
"documentation_url"}`` (plus ``errors`` for 422), lists page through ``per_page``/``page`` with
a ``Link`` header, and a repository the caller may not see is a 404, never a 403.
"""

from __future__ import annotations

import contextvars
import json
import time
from collections import deque
from dataclasses import dataclass, field
from datetime import UTC, datetime
from enum import IntEnum
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from aiohttp import web

from relay.errors import RelayError
from relay.hub import render

if TYPE_CHECKING:
    from relay.hub.faults import Faults
    from relay.hub.store import Store

DOCS = "https://docs.github.com/rest"
MAX_BODY = 65536
MAX_LABEL = 50
MAX_LABEL_DESCRIPTION = 100
RATE_LIMIT = 5000
CONTENT_PER_MINUTE = 80  # GitHub's secondary limit on content-creating requests, per user
CONTENT_PER_HOUR = 500
ANONYMOUS_LIMIT = 60
MAX_ID = 2**63 - 1  # SQLite's INTEGER range: a larger id in a path names nothing (404)
MAX_PAGE = 10**9  # a page past every list is an empty list, never an overflow
ISSUES_DOCS = "https://docs.github.com/v3/issues/"
GRAPHQL_PATHS = frozenset({"/graphql", "/api/graphql"})  # api.github.com's and GHES's
GHES_PREFIX = "/api/v3"  # GitHub Enterprise Server's REST API root (the hub serves both)
GRAPHQL_KEY = "graphql:"  # a rate key's prefix for its GraphQL budget
SEARCH_KEY = "search:"  # and for its search budget (30 a minute, 10 without a token)
SEARCH_PATH = "/search/"


class Role(IntEnum):
    """Repository roles, ordered so that a higher role includes the lower ones."""

    NONE = 0
    PULL = 1
    TRIAGE = 2
    PUSH = 3
    MAINTAIN = 4
    ADMIN = 5


ROLE_NAMES = {
    "pull": Role.PULL,
    "triage": Role.TRIAGE,
    "push": Role.PUSH,
    "maintain": Role.MAINTAIN,
    "admin": Role.ADMIN,
}


class ApiError(RelayError):
    """An answer other than success, rendered as GitHub renders it."""

    code = "hub-api"

    def __init__(
        self,
        status: int,
        message: str,
        *,
        errors: list[dict[str, Any]] | None = None,
        headers: dict[str, str] | None = None,
        docs: str = DOCS,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.errors = errors
        self.headers = headers or {}
        self.docs = docs

    def response(self) -> web.Response:
        """The JSON error answer (GitHub now adds ``status`` as a string)."""
        body: dict[str, Any] = {"message": self.message, "documentation_url": self.docs}
        if self.errors is not None:
            body["errors"] = self.errors
        body["status"] = str(self.status)
        return web.Response(
            status=self.status,
            body=json.dumps(body).encode(),
            content_type="application/json",
            charset="utf-8",
            headers=self.headers,
        )


REDIRECT_DOCS = "https://docs.github.com/v3/#http-redirects"


class Moved(ApiError):
    """GitHub's redirect for a renamed repository: 301 for a read, 307 for a write, the
    new URL in ``Location`` and in the body's ``url``."""

    def __init__(self, status: int, url: str, full: str = "") -> None:
        message = "Moved Permanently" if status == 301 else "Temporary Redirect"
        super().__init__(status, message, headers={"Location": url}, docs=REDIRECT_DOCS)
        self.url, self.full = url, full  # full: the repository's new owner/name

    def response(self) -> web.Response:
        body = {"message": self.message, "url": self.url, "documentation_url": self.docs}
        return web.Response(
            status=self.status,
            body=json.dumps(body).encode(),
            content_type="application/json",
            charset="utf-8",
            headers=self.headers,
        )


def moved_to(request: web.Request, url: str, full: str = "") -> Moved:
    """The redirect a request for a repository's old name gets (307 keeps a write's method)."""
    return Moved(301 if request.method in ("GET", "HEAD") else 307, url, full)


def not_found() -> ApiError:
    """GitHub's 404 for anything missing or hidden."""
    return ApiError(404, "Not Found")


def invalid(resource: str, field_name: str, code: str, message: str | None = None) -> ApiError:
    """A 422 "Validation Failed" with one entry in ``errors``."""
    error: dict[str, Any] = {"resource": resource, "code": code, "field": field_name}
    if message is not None:
        error["message"] = message
    return ApiError(422, "Validation Failed", errors=[error])


def path_int(request: web.Request, key: str) -> int:
    """A numeric id from the path; one beyond SQLite's range names nothing, so 404."""
    value = int(request.match_info[key])
    if value > MAX_ID:
        raise not_found()
    return value


def check_text(resource: str, field_name: str, value: Any) -> str | None:
    """An optional string field (``description``…): 422 ``invalid`` for any other type."""
    if value is not None and not isinstance(value, str):
        raise invalid(resource, field_name, "invalid", f"{field_name} must be a string or null")
    return value


@dataclass
class RateWindow:
    """One caller's hourly budget."""

    reset: int
    limit: int
    used: int = 0
    resource: str = "core"  # GitHub's name for the budget: ``core``, or ``graphql``


@dataclass
class Hub:
    """What every handler reaches through ``request.app[HUB]``."""

    store: Store
    faults: Faults
    counts: dict[tuple[str, str, int], int] = field(default_factory=dict)
    windows: dict[str, RateWindow] = field(default_factory=dict)
    tokens: dict[str, tuple[dict[str, Any], bool]] = field(default_factory=dict)
    credentials: dict[str, tuple[tuple[dict[str, Any], bool], str, str]] = field(
        default_factory=dict
    )  # by Authorization header: the token's owner, its scopes ("": none said), the rate key
    rate_limit: int = RATE_LIMIT
    data_dir: Path = Path()
    strict_git: bool = False
    app_user: bool = False  # transitional: GET /user answers an App's token (GitHub: 403)
    hosted: set[int] = field(default_factory=set)
    content_limits: tuple[int, int] = (CONTENT_PER_MINUTE, CONTENT_PER_HOUR)
    content: dict[str, deque[float]] = field(default_factory=dict)
    content_window: int = 60  # the secondary limit's minute, in seconds (tests shorten it)
    invitations: bool = False  # a collaborator must accept (GitHub's way), not added at once
    access: dict[tuple[int | None, str, str], tuple[dict[str, Any], Role]] = field(
        default_factory=dict
    )  # repo_access's answers by (caller, owner, name), kept while ``access_at`` holds
    access_at: int = -1  # the store's ``watched`` count ``access`` was made at

    def content_wait(self, key: str, now: float) -> int:
        """Seconds until ``key`` may create content again (0: now, and it is counted);
        GitHub's secondary limit: so many content-creating requests a minute and an hour,
        0 meaning no limit."""
        per_minute, per_hour = self.content_limits
        if not per_minute and not per_hour:
            return 0
        seen = self.content.setdefault(key, deque())
        while seen and seen[0] <= now - 3600:
            seen.popleft()
        if per_hour and len(seen) >= per_hour:
            return max(int(seen[0] + 3600 - now) + 1, 1)
        if per_minute:
            minute = self.content_window
            recent = [t for t in seen if t > now - minute][-per_minute:]
            if len(recent) >= per_minute:
                return max(int(recent[0] + minute - now) + 1, 1)
        seen.append(now)
        return 0

    def count(self, method: str, path: str, status: int) -> None:
        """Count one answered request (status 0: connection dropped on purpose)."""
        key = (method, path, status)
        self.counts[key] = self.counts.get(key, 0) + 1

    def window(self, key: str) -> RateWindow:
        """The caller's current rate-limit window, rolled over each hour. The key names a
        user (all of a user's tokens share one budget, as on GitHub), an App installation
        or, for anonymous callers, an address (``ip:...``, 60 an hour); GraphQL's budget is
        apart from the REST one, under the same key behind ``graphql:``, and search's behind
        ``search:`` (30 a minute), as on GitHub."""
        now = int(time.time())
        win = self.windows.get(key)
        if win is None or win.reset <= now:
            search = key.startswith(SEARCH_KEY)
            anonymous = key.removeprefix(SEARCH_KEY).startswith(("ip:", "jwt:"))
            limit = ANONYMOUS_LIMIT if anonymous else self.rate_limit
            resource = "graphql" if key.startswith(GRAPHQL_KEY) else "core"
            if search:  # GitHub's search budget is by the minute
                limit, resource = (10 if anonymous else 30), "search"
            win = RateWindow(reset=now + (60 if search else 3600), limit=limit, resource=resource)
            self.windows[key] = win
        return win


HUB: web.AppKey[Hub] = web.AppKey("hub", Hub)
SERVING: contextvars.ContextVar[web.Request | None] = contextvars.ContextVar(
    "hub_request", default=None
)
"""The request being served (set by the hub's middleware): the store's listeners, which
render webhook payloads, reach it through this."""
PAGE_PATHS: web.AppKey[frozenset[str]] = web.AppKey("page_paths", frozenset)
"""The canonical paths of the web pages' routes (served by ``pages``, not as the API)."""
API_ROOTS: web.AppKey[frozenset[str]] = web.AppKey("api_roots", frozenset)
"""The first segments of the API's paths (``repos``, ``user``...): a path that matches no
route answers the API's JSON 404 under these, and the pages' HTML 404 anywhere else."""


def hub_of(request: web.Request) -> Hub:
    """The hub serving this request."""
    return request.app[HUB]


def one_row(request: web.Request, sql: str, args: tuple[Any, ...]) -> dict[str, Any]:
    """The row ``sql`` selects, or 404 (a path naming something the repository lacks)."""
    row = hub_of(request).store.db.execute(sql, args).fetchone()
    if row is None:
        raise not_found()
    return dict(row)


def origin(request: web.Request) -> str:
    """The API base URL the client used, so rendered URLs point back at this hub: its
    origin, with ``/api/v3`` when the client came as to a GitHub Enterprise Server."""
    root = f"{request.scheme}://{request.host}"
    return root + GHES_PREFIX if is_enterprise(request.path) else root


def is_enterprise(path: str) -> bool:
    """Whether a path is under GitHub Enterprise Server's ``/api/v3``."""
    return path == GHES_PREFIX or path.startswith(GHES_PREFIX + "/")


def api_path(path: str) -> str:
    """A path as api.github.com has it (``/api/v3/repos/o/r`` is ``/repos/o/r``)."""
    return (path[len(GHES_PREFIX) :] or "/") if is_enterprise(path) else path


def route_path(request: web.Request) -> str:
    """The canonical path of the route serving a request, as api.github.com's (one route
    table serves both shapes), ``/repositories/{id}...`` as its ``/repos/{owner}/{repo}...``
    twin; "" when no route matched."""
    resource = request.match_info.route.resource
    return canonical_path(resource.canonical) if resource is not None else ""


BY_ID = "/repositories/{repository_id}"  # GitHub's path to a repository by id


def canonical_path(path: str) -> str:
    """A route's path as api.github.com names its operation (see :func:`route_path`)."""
    path = api_path(path)
    if path == BY_ID or path.startswith(BY_ID + "/"):
        return "/repos/{owner}/{repo}" + path[len(BY_ID) :]
    return path


def viewer(request: web.Request) -> dict[str, Any]:
    """The authenticated user; 401 for anonymous callers of endpoints that need one."""
    user: dict[str, Any] | None = request.get("viewer")
    if user is None:
        raise ApiError(401, "Requires authentication")
    return user


def reply(data: Any, status: int = 200) -> web.Response:
    """A JSON answer (the middleware adds ETag and rate-limit headers); an object with an
    ``updated_at`` also says ``Last-Modified``, which ``If-Modified-Since`` then matches."""
    headers = {"Content-Type": JSON_TYPE}
    if isinstance(data, dict) and isinstance(data.get("updated_at"), str):
        headers["Last-Modified"] = http_date(data["updated_at"])
    return web.Response(status=status, body=render.encode(data), headers=headers)


JSON_TYPE = "application/json; charset=utf-8"
_DAYS = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")
_MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")


@lru_cache(maxsize=4096)
def http_date(stamp: str) -> str:
    """GitHub's ``YYYY-MM-DDTHH:MM:SSZ`` as an HTTP date (``Thu, 05 Dec 2024 08:36:11 GMT``),
    what ``email.utils.format_datetime(..., usegmt=True)`` says, for a fraction of its cost."""
    t = datetime.fromisoformat(stamp)  # ``...Z``; strptime costs 300x
    return (
        f"{_DAYS[t.weekday()]}, {t.day:02d} {_MONTHS[t.month - 1]} {t.year:04d}"
        f" {t.hour:02d}:{t.minute:02d}:{t.second:02d} GMT"
    )


def json_answer(body: bytes, updated_at: str | None, status: int = 200) -> web.Response:
    """:func:`reply` for an object already encoded (``updated_at``: its own)."""
    headers = {"Content-Type": JSON_TYPE}
    if updated_at is not None:
        headers["Last-Modified"] = http_date(updated_at)
    return web.Response(status=status, body=body, headers=headers)


def created(data: dict[str, Any]) -> web.Response:
    """201 with ``Location`` naming the new resource's API URL, as GitHub sends."""
    resp = reply(data, 201)
    resp.headers["Location"] = str(data["url"])
    return resp


def no_content() -> web.Response:
    """204."""
    return web.Response(status=204)


MAX_DEPTH = 64  # arrays and objects inside one another; a deeper body is refused


async def read_json(request: web.Request) -> Any:
    """The request body as JSON; 400 "Problems parsing JSON" as GitHub says it — also for
    a body nested so deep that parsing it exhausts the stack, or deeper than MAX_DEPTH,
    which every later encoding of it (stored, then served) would have to walk."""
    raw = await request.read()
    if not raw:
        return {}
    try:
        if raw[:1] == b"{" and raw[1:2] != b"\x00":  # UTF-8, as json.loads would find it
            data = json.loads(raw.decode("utf-8", "surrogatepass"))
        else:
            data = json.loads(raw)
    except (ValueError, RecursionError):
        raise ApiError(400, "Problems parsing JSON") from None
    if nesting(data) > MAX_DEPTH:
        raise ApiError(400, "Problems parsing JSON")
    return data


def nesting(value: Any) -> int:
    """How deep lists and dicts go inside ``value``, walked without recursion."""
    if isinstance(value, dict):
        for v in value.values():
            if isinstance(v, (list, dict)):
                break
        else:
            return 1  # a flat object, as most bodies are
    deepest, todo = 0, [(value, 1)]
    while todo:
        item, depth = todo.pop()
        if isinstance(item, dict):
            item = list(item.values())
        if isinstance(item, list):
            deepest = max(deepest, depth)
            todo.extend((child, depth + 1) for child in item if isinstance(child, (list, dict)))
    return deepest


async def read_object(request: web.Request) -> dict[str, Any]:
    """The request body, which must be a JSON object."""
    data = await read_json(request)
    if not isinstance(data, dict):
        raise ApiError(400, "Problems parsing JSON")
    return data


def paging(request: web.Request) -> tuple[int, int]:
    """``(page, per_page)`` from the query: per_page defaults to 30, at most 100."""
    try:
        per_page = int(request.query.get("per_page", 30))
        page = int(request.query.get("page", 1))
    except ValueError:
        raise ApiError(400, "Invalid pagination parameters") from None
    return min(max(page, 1), MAX_PAGE), min(max(per_page, 1), 100)


def paged(request: web.Request, items: list[Any], total: int) -> web.Response:
    """Answer one page of a list with the ``Link`` header GitHub sends."""
    page, per_page = paging(request)
    last = max((total + per_page - 1) // per_page, 1)
    links = []
    if page < last:
        links += [_link(request, page + 1, "next"), _link(request, last, "last")]
    if page > 1:
        links += [_link(request, 1, "first"), _link(request, page - 1, "prev")]
    resp = reply(items)
    if links:
        resp.headers["Link"] = ", ".join(links)
    return resp


def _link(request: web.Request, page: int, rel: str) -> str:
    url = request.rel_url.update_query(page=str(page))
    return f'<{request.scheme}://{request.host}{url.raw_path_qs}>; rel="{rel}"'


def parse_since(request: web.Request) -> int | None:
    """The ``since`` filter as microseconds, or None; 422 when it is not a timestamp."""
    raw = request.query.get("since")
    if not raw:
        return None
    try:
        stamp = datetime.fromisoformat(raw.replace("Z", "+00:00"))
    except ValueError:
        raise invalid("Issue", "since", "invalid") from None
    if stamp.tzinfo is None:
        stamp = stamp.replace(tzinfo=UTC)
    return int(stamp.timestamp() * 1_000_000)


def check_body(resource: str, body: Any) -> str | None:
    """A body must be a string of at most 65,536 characters (422 ``unprocessable``)."""
    if body is None:
        return None
    if not isinstance(body, str):
        raise invalid(resource, "body", "invalid", "body must be a string")
    if len(body) > MAX_BODY:
        raise invalid(
            resource,
            "data",
            "unprocessable",
            f"Body is too long (maximum is {MAX_BODY} characters)",
        )
    return body


def need(role: Role, wanted: Role) -> None:
    """403 when the caller can see the repository but may not do this."""
    if role < wanted:
        raise ApiError(403, "Must have push access to this repository.")
