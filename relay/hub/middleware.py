"""The one middleware every request passes: authenticate, inject faults, answer, make a GET
conditional, charge the rate limit, stamp headers, count.

One function rather than a chain, because the hub's per-request overhead matters (an idle
relay pass is a burst of 304s). Order follows GitHub: a bad token is 401 before anything;
a 304 for a matching ``If-None-Match`` is not charged, and neither is ``/rate_limit``.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import hashlib
import itertools
import re
import sys
import time
import traceback
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from email.utils import parsedate_to_datetime
from functools import lru_cache

from aiohttp import web
from multidict import CIMultiDict

from relay.hub.faults import AFTER_FAULTS, Fault
from relay.hub.store import GROUPED
from relay.hub.web import (
    API_ROOTS,
    DOCS,
    GRAPHQL_KEY,
    GRAPHQL_PATHS,
    HUB,
    PAGE_PATHS,
    SEARCH_KEY,
    SEARCH_PATH,
    SERVING,
    ApiError,
    Hub,
    RateWindow,
    api_path,
    route_path,
)

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]

LIMITS_DOCS = "https://docs.github.com/rest/using-the-rest-api/rate-limits-for-the-rest-api"
SECONDARY_DOCS = LIMITS_DOCS + "#about-secondary-rate-limits"
GRAPHQL_DOCS = "https://docs.github.com/graphql"
SECONDARY_MESSAGE = (
    "You have exceeded a secondary rate limit. Please wait a few minutes before you try"
    " again. If you reach out to GitHub Support for help, please include the request ID."
)
_FAULT_ANSWERS = {
    Fault.E500: (500, "Server Error"),
    Fault.E502: (502, "Server Error"),
    Fault.E502_AFTER: (502, "Server Error"),
    Fault.E503: (503, "Service Unavailable"),
    Fault.E429: (429, SECONDARY_MESSAGE),
    Fault.SECONDARY: (403, SECONDARY_MESSAGE),
}
_STATIC_HEADERS = {
    "Cache-Control": "private, max-age=60, s-maxage=60",
    "Vary": "Accept, Authorization, Cookie, X-GitHub-OTP",
    "X-GitHub-Media-Type": "github.v3; format=json",
}
# The scopes a classic token of the hub's holds: everything the hub serves, which is what
# `gh auth status` looks for (repo and read:org, or an org scope that includes it); an
# admin token is also a site administrator's, as on GitHub Enterprise Server.
CLASSIC_SCOPES = "admin:org, admin:repo_hook, delete_repo, gist, repo, user, workflow"
ADMIN_SCOPES = CLASSIC_SCOPES + ", site_admin"
CREDENTIALS_KEPT = 4096  # Authorization headers kept with their caller (then all forgotten)
CLASSIC_PREFIXES = ("ghp_", "gho_")  # fine-grained and App tokens have permissions, no scopes
ADMIN_PREFIX = "/_hub/"
FREE_PATH = "/rate_limit"
APP_PREFIX = "/app/"  # GitHub App endpoints authenticate with the App's JWT (relay/hub/apps.py)
_REQUEST_IDS = itertools.count(0x1000)
API_VERSIONS = ("2022-11-28", "2026-03-10")  # the versions GitHub serves, oldest first
GIT_PATH = re.compile(r"^/[^/]+/[^/]+\.git/")  # git, not the API
MUTATIONS = frozenset({"POST", "PATCH", "PUT", "DELETE"})
DOC_PAGES: web.AppKey[dict[tuple[str, str], str]] = web.AppKey("doc_pages", dict)
VERSIONED: web.AppKey[frozenset[object]] = web.AppKey("versioned", frozenset)
"""The GET handlers whose answer is a function of the store, the request's path and query,
its origin, and its headers named in ``_VARY`` alone: each such answer is kept, with the
store's version it was made at, in ``ANSWERS``, so that while no write has moved the version
the same request is answered from there, a 304 or the same bytes, without rendering."""


@dataclass
class Answers:
    """The versioned GETs' last answers, by :func:`_answer_key`; bounded in count and bytes
    (past either, all are forgotten and the next of each is rendered again)."""

    kept: dict[str, tuple[int, str, bytes, CIMultiDict[str]]] = field(default_factory=dict)
    size: int = 0
    max_count: int = 4096
    max_bytes: int = 32 * 1024 * 1024

    def keep(self, key: str, version: int, etag: str, resp: web.Response) -> None:
        body = resp.body
        if not isinstance(body, bytes):
            return
        if len(self.kept) >= self.max_count or self.size + len(body) > self.max_bytes:
            self.kept.clear()
            self.size = 0
        old = self.kept.get(key)
        self.size += len(body) - (len(old[2]) if old else 0)
        self.kept[key] = (version, etag, body, CIMultiDict(resp.headers))


ANSWERS: web.AppKey[Answers] = web.AppKey("answers", Answers)
_VARY = ("Authorization", "Cookie", "Accept", "X-GitHub-Api-Version")


def _credential(scheme: str, value: str) -> str | None:
    """The token a header carries: ``token T``/``Bearer T`` or Basic ``login:T`` (as git
    and some clients send a PAT); None for any other scheme or a malformed Basic value."""
    scheme = scheme.lower()
    if scheme in ("token", "bearer"):
        return value or None
    if scheme != "basic":
        return None
    try:
        decoded = base64.b64decode(value, validate=True).decode()
    except (binascii.Error, UnicodeDecodeError):
        return None
    _, colon, secret = decoded.partition(":")
    return secret or None if colon else None


def _rate_key(user: dict[str, object]) -> str:
    """All of a user's tokens share one budget; an App's bot stands for its installation."""
    kind = "installation" if user.get("type") == "Bot" else "user"
    return f"{kind}:{user['id']}"


def authenticate(request: web.Request, hub: Hub) -> str:
    """Set ``viewer``/``admin``/``rate_key`` on the request and return the rate key.
    401 "Bad credentials" for an unknown token, whatever its length or scheme."""
    sent = request.headers.get("Authorization", "")
    known = hub.credentials.get(sent)  # a header seen before names the same caller again
    if known is not None:
        request["viewer"], request["admin"] = known[0]
        if known[1]:
            request["scopes"] = known[1]
        key = request["rate_key"] = known[2]
        return key
    header = sent.strip()
    if not header:
        request["viewer"], request["admin"] = None, False
        key = request["rate_key"] = f"ip:{request.remote}"
        return key
    scheme, _, raw = header.partition(" ")
    token = _credential(scheme, raw.strip())
    owner = hub.tokens.get(token) if token else None
    if owner is None and token:
        owner = hub.store.token_owner(token)
        if owner is not None:
            hub.tokens[token] = owner
    if (
        owner is None
        and token
        and scheme.lower() == "bearer"
        and (api_path(request.path) + "/").startswith(APP_PREFIX)
    ):
        request["viewer"], request["admin"], request["jwt"] = None, False, token  # apps.py checks
        key = request["rate_key"] = f"jwt:{token[-24:]}"
        return key
    if owner is None:  # GraphQL's 401 points at the GraphQL docs, as GitHub's does
        graphql = api_path(request.path) in GRAPHQL_PATHS
        raise ApiError(401, "Bad credentials", docs=GRAPHQL_DOCS if graphql else DOCS)
    request["viewer"], request["admin"] = owner
    scopes = ""
    if token and token.startswith(CLASSIC_PREFIXES):  # GitHub tells only these their scopes
        scopes = request["scopes"] = ADMIN_SCOPES if owner[1] else CLASSIC_SCOPES
    key = request["rate_key"] = _rate_key(owner[0])
    if len(hub.credentials) >= CREDENTIALS_KEPT:
        hub.credentials.clear()
    hub.credentials[sent] = (owner, scopes, key)
    return key


@lru_cache(maxsize=4096)
def accepted_scopes(path: str) -> str:
    """``X-Accepted-OAuth-Scopes``: the scopes GitHub checks for an operation on ``path``
    (an api.github.com path), by the kind of thing it names."""
    parts = path.split("/")
    if parts[1:2] == ["repos"] and parts[4:5] == ["hooks"]:
        return "admin:repo_hook, read:repo_hook, repo, write:repo_hook"
    if parts[1:2] in (["repos"], ["repositories"]) or parts[1:3] == ["user", "repos"]:
        return "repo"
    if parts[1:2] in (["orgs"], ["admin"]) or parts[1:3] == ["user", "orgs"]:
        return "admin:org, read:org, repo, user, write:org"
    if parts[1:2] in (["user"], ["users"]):
        return "user" if len(parts) <= 3 else "repo, user"
    return ""


_MD5 = hashlib.md5(usedforsecurity=False)  # copied for each ETag: OpenSSL looks MD5 up once


def _md5(body: object) -> str:
    digest = _MD5.copy()
    digest.update(body if isinstance(body, bytes) else b"")
    return digest.hexdigest()


def _etag(body: object) -> str:
    return f'W/"{_md5(body)}"'


def _strong_etag(body: object) -> str:
    return f'"{_md5(body)}"'


def _answer_key(request: web.Request) -> str:
    """What, besides the store, a versioned GET's answer depends on: the origin its URLs
    are rendered with, the path and query, the credentials and the headers of ``_VARY``."""
    headers = request.headers
    return "\n".join(
        [request.scheme, request.host, request.path_qs, *[headers.get(n, "") for n in _VARY]]
    )


def _matches(header: str | None, etag: str, *, star: bool = True) -> bool:
    """Whether ``If-None-Match`` names ``etag`` (weakly) or, with ``star``, is ``*``."""
    if not header:
        return False
    tags = (etag.removeprefix("W/"), "*") if star else (etag.removeprefix("W/"),)
    return any(tag.strip().removeprefix("W/") in tags for tag in header.split(","))


def _unmodified(request: web.Request, resp: web.StreamResponse) -> bool:
    """Whether ``If-Modified-Since`` is no earlier than the answer's ``Last-Modified`` (only
    when no ``If-None-Match`` was sent: that one decides, as in HTTP)."""
    since, modified = request.headers.get("If-Modified-Since"), resp.headers.get("Last-Modified")
    if not since or not modified or "If-None-Match" in request.headers:
        return False
    try:
        return parsedate_to_datetime(since) >= parsedate_to_datetime(modified)
    except (TypeError, ValueError):
        return False


# The first segments of api.github.com's paths (and GitHub Enterprise Server's ``admin``,
# ``manage``, ``setup``): GitHub reserves them as account names, so a path under one is the
# API's, answered with its JSON 404 and rate-limit headers when the hub does not serve it,
# never with a web page's HTML (``/orgs/x`` is no repository page).
GITHUB_API_ROOTS = frozenset({
    "admin", "advisories", "app", "app-manifests", "applications", "apps", "assignments",
    "authorizations", "classrooms", "codes_of_conduct", "credentials", "emojis", "enterprise",
    "enterprises", "events", "feeds", "gists", "gitignore", "installation", "issues",
    "licenses", "manage", "markdown", "marketplace_listing", "meta", "networks",
    "notifications", "octocat", "organizations", "orgs", "projects", "rate_limit",
    "reactions", "repos", "repositories", "scim", "search", "setup", "teams", "user", "users",
    "versions", "zen",
})  # fmt: skip


def _root(request: web.Request) -> str:
    return request.path.split("/")[1] if request.path.startswith("/") else ""


def _page_path(request: web.Request) -> bool:
    """Whether a path no route serves is a browser's (outside the API's roots), to be
    answered with the pages' HTML 404 rather than the API's JSON."""
    root = _root(request)
    api = root in request.app[API_ROOTS] or root in GITHUB_API_ROOTS
    return request.method in ("GET", "HEAD") and not api


async def _unserved(request: web.Request) -> web.StreamResponse:
    """An API path the hub does not serve: GitHub's JSON 404."""
    raise ApiError(404, "Not Found")


def _stamp(resp: web.StreamResponse, win: RateWindow | None) -> None:
    headers = resp.headers
    headers.update(_STATIC_HEADERS)
    headers.setdefault("X-GitHub-Api-Version-Selected", API_VERSIONS[0])
    n = next(_REQUEST_IDS)
    request_id = f"{n >> 16:04X}:{n & 0xFFFF:04X}:{n:06X}:{n:07X}:00000000"
    if win is None:
        headers["x-github-request-id"] = request_id
        return
    headers.update(
        {
            "x-github-request-id": request_id,
            "x-ratelimit-limit": str(win.limit),
            "x-ratelimit-remaining": str(win.limit - win.used),
            "x-ratelimit-used": str(win.used),
            "x-ratelimit-reset": str(win.reset),
            "x-ratelimit-resource": win.resource,
        }
    )


def _docs_page(request: web.Request, err: ApiError) -> ApiError:
    """Point a default ``documentation_url`` at the endpoint's own page, as GitHub does."""
    if err.docs == DOCS:
        path = route_path(request)
        method = "GET" if request.method == "HEAD" else request.method
        err.docs = request.app[DOC_PAGES].get((method, path), DOCS)
    return err


async def _answer(request: web.Request, handler: Handler) -> web.StreamResponse:
    try:
        return await handler(request)
    except ApiError as err:
        return _docs_page(request, err).response()
    except web.HTTPException as exc:  # unknown route or method: GitHub says 404
        status = 404 if exc.status in (404, 405) else exc.status
        return ApiError(status, "Not Found" if status == 404 else exc.reason).response()


def _fault_answer(fault: Fault, retry_after: int) -> web.Response:
    """The answer a fault gives in place of (or, for ``502_after``, over) the real one."""
    status, message = _FAULT_ANSWERS[fault]
    limited = fault in (Fault.E429, Fault.SECONDARY)
    headers = {"Retry-After": str(retry_after)} if limited else {}
    docs = SECONDARY_DOCS if limited else DOCS
    return ApiError(status, message, headers=headers, docs=docs).response()


def _exhausted(request: web.Request) -> web.Response:
    """GitHub's primary-limit 403 (``x-ratelimit-remaining`` will read 0)."""
    who = request.get("viewer")
    name = f"user ID {who['id']}" if who else f"{request.remote}"
    if api_path(request.path) in GRAPHQL_PATHS:  # GraphQL: a 200 with GitHub's error
        error = {"type": "RATE_LIMIT", "code": "graphql_rate_limit",
                 "message": f"API rate limit already exceeded for {name}."}  # fmt: skip
        return web.json_response({"errors": [error]})
    docs = LIMITS_DOCS + "#about-primary-rate-limits"
    return ApiError(403, f"API rate limit exceeded for {name}.", docs=docs).response()


async def _drop(request: web.Request) -> web.StreamResponse:
    """Close the connection without an answer."""
    transport = request.transport
    if transport is not None:
        transport.close()
    raise asyncio.CancelledError


@web.middleware
async def hub_middleware(request: web.Request, handler: Handler) -> web.StreamResponse:
    """Serve one request the way api.github.com would (see the module docstring), the
    request reachable meanwhile from the store's listeners (:data:`SERVING`)."""
    serving = SERVING.set(request)
    try:
        return await _hub(request, handler)
    finally:
        SERVING.reset(serving)


async def _hub(request: web.Request, handler: Handler) -> web.StreamResponse:
    hub = request.app[HUB]
    if request.path.startswith(ADMIN_PREFIX):
        return await _admin(request, handler, hub)
    if GIT_PATH.match(request.path):
        return await _git(request, handler, hub)
    resource = request.match_info.route.resource
    if resource is not None and resource.canonical in request.app[PAGE_PATHS]:
        if _root(request) in GITHUB_API_ROOTS:  # /orgs/x looks like a repository page
            handler = _unserved
        else:
            from relay.hub.pages import serve

            return await serve(request, handler, hub)
    if resource is None and _page_path(request):  # e.g. /OWNER/REPO/pulls: a page, not JSON
        from relay.hub.pages import serve, unserved

        return await serve(request, unserved, hub)
    faults = hub.faults
    fault = faults.draw(request.method, request.path) if faults.active else None
    if faults.active and (delay := faults.delay(fault)):
        await asyncio.sleep(delay)
    if fault is Fault.DROP:
        hub.count(request.method, request.path, 0)
        return await _drop(request)
    win: RateWindow | None = None
    path = api_path(request.path)  # asked once: _serve and _conditional are given it
    try:
        key = authenticate(request, hub)
        graphql, search = path in GRAPHQL_PATHS, path.startswith(SEARCH_PATH)
        win = hub.window(GRAPHQL_KEY + key if graphql else SEARCH_KEY + key if search else key)
        request["rate_window"] = win
        grouped = GROUPED.set(True)  # this request's writes may share one COMMIT
        try:
            resp = await _serve(request, handler, win, fault, path)
        finally:
            GROUPED.reset(grouped)
        await hub.store.settled()  # answered only once what it read or wrote is committed
    except ApiError as err:
        resp = err.response()
        if win is None and err.status == 401:  # GitHub counts a bad token to the address
            win = hub.window(f"ip:{request.remote}")
            win.used += 1
    except Exception:  # a bug, not the client's fault: GitHub's JSON 500, logged once
        traceback.print_exc(file=sys.stderr)
        resp = ApiError(500, "Server Error").response()
    if fault is Fault.DROP_AFTER:  # the work is done and committed; the answer is lost
        hub.count(request.method, request.path, 0)
        return await _drop(request)
    if fault is Fault.E502_AFTER:
        resp = _fault_answer(fault, 0)
    _stamp(resp, win)
    if (scopes := request.get("scopes")) is not None:
        resp.headers["X-OAuth-Scopes"] = scopes
        resp.headers["X-Accepted-OAuth-Scopes"] = accepted_scopes(path)
    hub.count(request.method, request.path, resp.status)
    return resp


async def _serve(
    request: web.Request, handler: Handler, win: RateWindow, fault: Fault | None, path: str
) -> web.StreamResponse:
    """A fault that strikes before the handler, the primary-limit 403, or the answer
    (``path``: the request's as api.github.com has it)."""
    if fault is not None and fault is not Fault.SLOW and fault not in AFTER_FAULTS:
        return _fault_answer(fault, request.app[HUB].faults.spec.retry_after)
    if win.used >= win.limit and path != FREE_PATH:
        return _exhausted(request)
    version = request.headers.get("X-GitHub-Api-Version")
    if version is not None and version not in API_VERSIONS:
        return _unknown_version(version)
    content = path not in GRAPHQL_PATHS  # GraphQL: its mutations only (api_graphql)
    if request.method in MUTATIONS and content and not path.startswith(APP_PREFIX):
        wait = request.app[HUB].content_wait(request["rate_key"], time.monotonic())
        if wait:
            win.used += 1
            headers = {"Retry-After": str(wait)}
            return ApiError(403, SECONDARY_MESSAGE, headers=headers, docs=SECONDARY_DOCS).response()
    if request.method in MUTATIONS:  # what it reads first is read in the shared transaction
        request.app[HUB].store.join()
    resp = await _conditional(request, handler, win, path)
    resp.headers["X-GitHub-Api-Version-Selected"] = version or API_VERSIONS[0]
    return resp


def _unknown_version(version: str) -> web.Response:
    """GitHub's 400 for an ``X-GitHub-Api-Version`` it does not serve."""
    known = ", ".join(f'"{v}"' for v in API_VERSIONS[:-1])
    message = (
        f'The version you specified in the "X-GitHub-Api-Version" request header, "{version}",'
        f" is not a supported version. The following versions are currently supported:"
        f' {known} and "{API_VERSIONS[-1]}" (most recent).'
    )
    return ApiError(
        400, message, docs="https://docs.github.com/rest/about-the-rest-api/api-versions"
    ).response()


async def _git(request: web.Request, handler: Handler, hub: Hub) -> web.StreamResponse:
    """Smart-HTTP git: the same tokens, never charged to the API budget or faulted; a bad
    credential is git's 401 challenge, not the API's JSON."""
    from relay.hub.api_git import challenge

    try:
        authenticate(request, hub)
    except ApiError:
        resp: web.StreamResponse = challenge()
    else:
        try:
            resp = await handler(request)
        except Exception:
            traceback.print_exc(file=sys.stderr)
            resp = web.Response(status=500, text="Server Error\n")
    hub.count(request.method, request.path, resp.status)
    return resp


async def _conditional(
    request: web.Request, handler: Handler, win: RateWindow, path: str
) -> web.StreamResponse:
    """Answer; a GET whose ``If-None-Match`` matches gets an uncharged 304. A versioned GET
    kept for the store's current version is answered from what was kept, without rendering:
    no write has happened since, so the bytes would be the same. An ETag is always the hash
    of the bytes a 200 carries, so a 304 is given exactly when the body is unchanged."""
    get = request.method in ("GET", "HEAD")
    key, version = "", -1
    seen: tuple[int, str, bytes, CIMultiDict[str]] | None = None
    if get and request.match_info.handler in request.app[VERSIONED]:
        version = request.app[HUB].store.version  # read before the answer is made
        key = _answer_key(request)
        seen = request.app[ANSWERS].kept.get(key)
        if seen is not None and (seen[0] != version or version < 0):
            seen = None
    if seen is not None:
        if _matches(request.headers.get("If-None-Match"), seen[1], star=False):
            return web.Response(status=304, headers={"ETag": seen[1]})
        resp: web.StreamResponse = web.Response(body=seen[2], headers=seen[3])
    else:
        resp = await _answer(request, handler)
    if get and resp.status == 200 and isinstance(resp, web.Response):
        if seen is not None:
            etag = seen[1]
        else:
            etag = _etag(resp.body)
            if key and version >= 0:
                request.app[ANSWERS].keep(key, version, etag, resp)
        if _matches(request.headers.get("If-None-Match"), etag):
            return web.Response(status=304, headers={"ETag": etag})
        resp.headers["ETag"] = etag
        if _unmodified(request, resp):
            return web.Response(
                status=304, headers={"ETag": etag, "Last-Modified": resp.headers["Last-Modified"]}
            )
    elif resp.status in (200, 201) and isinstance(resp, web.Response) and resp.body:
        resp.headers["ETag"] = _strong_etag(resp.body)  # a write's answer: GitHub's is strong
    if path != FREE_PATH:
        win.used += request.get("cost", 1)  # a GraphQL query's cost is its own
    return resp


async def _admin(request: web.Request, handler: Handler, hub: Hub) -> web.StreamResponse:
    """Admin endpoints: only an admin token sees them; everyone else gets 404."""
    try:
        authenticate(request, hub)
        if not request["admin"]:
            raise ApiError(404, "Not Found")
    except ApiError as err:
        return err.response()
    try:
        return await _answer(request, handler)
    except Exception:
        traceback.print_exc(file=sys.stderr)
        return ApiError(500, "Server Error").response()
