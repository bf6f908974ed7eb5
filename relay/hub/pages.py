"""The web pages at github.com's paths, for people: the issue list, an issue's thread,
files and folders of the hosted git, raw files, and signing in.

Every ``html_url`` the API hands out opens here (``/<owner>/<repo>/issues/<n>``, its
``#issuecomment-<id>`` anchors, ``/<owner>/<repo>``), and so does a RESULT's log link
(``/<owner>/<repo>/blob/<sha>/docs/loop/relay/<n>/logs/result-001.log``). Pages read the
store and the git the API and git host use, with the API's access rules: a private
repository is a 404 to whoever may not read it. A browser signs in with a hub token at
``/login``; the token then rides in an HttpOnly cookie (``user_session``, as GitHub's),
and API-style ``Authorization`` headers work too.

Pages are neither charged to the API's rate limit nor faulted (GitHub's web pages are not
its API); each carries a Content-Security-Policy that runs no script at all, beside the
sanitising of every markdown body, and an ETag, so a refresh of an unchanged thread is a
304. The HTML is built in :mod:`relay.hub.views`.
"""

from __future__ import annotations

import hashlib
import sys
import traceback
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any
from urllib.parse import quote

from aiohttp import web

from relay.hub import views
from relay.hub.api_comments import EVENT_ACTIONS
from relay.hub.api_issues import reaction_counts
from relay.hub.api_labels import labels_of
from relay.hub.api_refs import bare_of
from relay.hub.api_repos import RepoAccess, repo_access
from relay.hub.git import Bare
from relay.hub.web import ApiError, Hub, Moved, hub_of

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]

SESSION_COOKIE = "user_session"
CSS = Path(__file__).with_name("relay.css").read_bytes()
CSS_ETAG = f'"{hashlib.md5(CSS, usedforsecurity=False).hexdigest()}"'
RAW_CSP = "default-src 'none'; style-src 'unsafe-inline'; sandbox"
_SECURITY = {
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "deny",
    "Referrer-Policy": "same-origin",
    "Cache-Control": "no-cache",
}


class PageError(Exception):
    """A page that cannot be shown: status and what to say."""

    def __init__(self, status: int, title: str, text: str) -> None:
        super().__init__(title)
        self.status, self.title, self.text = status, title, text


def missing() -> PageError:
    """GitHub's 404 page, for anything missing or hidden."""
    return PageError(404, "Page not found", "There is nothing here, or you may not see it.")


async def unserved(request: web.Request) -> web.StreamResponse:
    """A path outside the API that no page serves (``/OWNER/REPO/pulls``): the 404 page."""
    raise missing()


def chrome(request: web.Request, acc: RepoAccess | None = None, tab: str = "") -> views.Chrome:
    """The frame's facts for this request."""
    who: dict[str, Any] | None = request.get("viewer")
    login = who["login"] if who else None
    if acc is None:
        return views.Chrome(login, request.path_qs)
    open_n = (
        hub_of(request)
        .store.db.execute(
            "SELECT COUNT(*) FROM issues WHERE repo_id = ? AND state = 'open'", (acc.id,)
        )
        .fetchone()[0]
    )
    return views.Chrome(
        login,
        request.path_qs,
        owner=acc.owner["login"],
        repo=acc.row["name"],
        private=bool(acc.row["private"]),
        open_issues=open_n if acc.row["has_issues"] else None,
        tab=tab,
        default_branch=acc.row["default_branch"],
    )


def _body_edited(store: Any, issue: dict[str, Any]) -> int:
    """When an issue's body was last edited (its creation time when never)."""
    row = store.db.execute(
        "SELECT MAX(created_at) FROM journal WHERE issue_id = ? AND kind = 'issues'"
        " AND action = 'edited' AND instr(detail, '\"body\"') > 0",
        (issue["id"],),
    ).fetchone()
    return int(row[0]) if row and row[0] is not None else int(issue["created_at"])


def page(p: views.Page) -> web.Response:
    """The HTML answer with its policy."""
    resp = web.Response(status=p.status, text=p.body, content_type="text/html", charset="utf-8")
    resp.headers["Content-Security-Policy"] = p.csp
    return resp


def access(request: web.Request) -> RepoAccess:
    """The repository of the path as the visitor may see it, or the 404 page."""
    try:
        return repo_access(request)
    except Moved as moved:  # a renamed repository's pages move with it, as on github.com
        rest = request.path.split("/", 3)[3:]
        where = "/".join(["", moved.full, *rest])
        query = f"?{request.query_string}" if request.query_string else ""
        raise web.HTTPMovedPermanently(where + query) from None
    except ApiError:
        raise missing() from None


def _labels(rows: list[dict[str, Any]]) -> tuple[views.Label, ...]:
    return tuple(views.Label(r["name"], r["color"], r["description"]) for r in rows)


# --- issues -------------------------------------------------------------------------------


async def issues(request: web.Request) -> web.Response:
    """``GET /<owner>/<repo>/issues``: the list, filtered by ``q`` or ``state``/``labels``."""
    acc = access(request)
    if not acc.row["has_issues"]:
        raise missing()
    query = request.query
    filt = views.parse_filter(query.get("q"), query.get("state"), query.get("labels"))
    where: list[str] = ["repo_id = ?"]
    args: list[object] = [acc.id]
    if filt.state != "all":
        where.append("state = ?")
        args.append(filt.state)
    for name in filt.labels:
        where.append(
            "EXISTS (SELECT 1 FROM issue_labels il JOIN labels l ON l.id = il.label_id"
            " WHERE il.issue_id = issues.id AND l.name = ?)"
        )
        args.append(name)
    for word in filt.words:
        where.append("instr(lower(title), lower(?)) > 0")
        args.append(word)
    db = hub_of(request).store.db
    sql = " AND ".join(where)
    total = db.execute(f"SELECT COUNT(*) FROM issues WHERE {sql}", args).fetchone()[0]
    try:
        page_n = min(max(int(query.get("page", "1")), 1), 10_000)
    except ValueError:
        page_n = 1
    rows = [
        dict(r)
        for r in db.execute(
            f"SELECT * FROM issues WHERE {sql} ORDER BY updated_at DESC, id DESC LIMIT ? OFFSET ?",
            (*args, views.PER_PAGE, (page_n - 1) * views.PER_PAGE),
        )
    ]
    # the tabs count open and closed under the same labels and words, as GitHub's do
    base_sql = " AND ".join(w for w in where if w != "state = ?")
    base_args = [a for w, a in zip(where, args, strict=True) if w != "state = ?"]
    counts = dict(
        db.execute(
            f"SELECT state, COUNT(*) FROM issues WHERE {base_sql} GROUP BY state", base_args
        ).fetchall()
    )
    store = hub_of(request).store
    labels = labels_of(store, [r["id"] for r in rows])
    items = [
        views.IssueRow(
            number=r["number"],
            title=r["title"],
            state=r["state"],
            state_reason=r["state_reason"],
            author=store.user(r["user_id"])["login"],
            created_us=r["created_at"],
            updated_us=r["updated_at"],
            closed_us=r["closed_at"],
            comments=r["comments"],
            labels=_labels(labels[r["id"]]),
        )
        for r in rows
    ]
    repo_labels = [
        dict(r)
        for r in db.execute(
            "SELECT * FROM labels WHERE repo_id = ? ORDER BY name COLLATE NOCASE", (acc.id,)
        )
    ]
    return page(
        views.issue_list(
            chrome(request, acc, "issues"),
            items,
            filt=filt,
            counts=(counts.get("open", 0), counts.get("closed", 0)),
            repo_labels=_labels(repo_labels),
            page=page_n,
            total=total,
        )
    )


async def thread(request: web.Request) -> web.Response:
    """``GET /<owner>/<repo>/issues/<n>``: the thread."""
    acc = access(request)
    if not acc.row["has_issues"]:
        raise missing()
    number = int(request.match_info["number"])
    store = hub_of(request).store
    db = store.db
    found = db.execute(
        "SELECT * FROM issues WHERE repo_id = ? AND number = ?", (acc.id, min(number, 2**62))
    ).fetchone()
    if found is None:
        raise missing()
    issue = dict(found)
    comments = [
        dict(r)
        for r in db.execute("SELECT * FROM comments WHERE issue_id = ? ORDER BY id", (issue["id"],))
    ]
    events = db.execute(
        f"SELECT * FROM journal WHERE issue_id = ? AND kind = 'issues'"
        f" AND action IN {EVENT_ACTIONS!r} ORDER BY id",
        (issue["id"],),
    ).fetchall()
    on_issue = reaction_counts(store, "issue", [issue["id"]]).get(issue["id"], {})
    on_comments = reaction_counts(store, "comment", [c["id"] for c in comments])

    def post(row: dict[str, Any], ident: int, reactions: dict[str, int]) -> views.Post:
        author = store.user(row["user_id"])
        return views.Post(
            ident=ident, author=author["login"],
            association=acc.association(request, author["id"]),
            created_us=row["created_at"], updated_us=row["updated_at"], body=row["body"],
            reactions=reactions,
        )  # fmt: skip

    data = views.Thread(
        number=issue["number"],
        title=issue["title"],
        state=issue["state"],
        state_reason=issue["state_reason"],
        locked=bool(issue["locked"]),
        labels=_labels(labels_of(store, [issue["id"]])[issue["id"]]),
        # the body counts as edited only when the body itself was (the issue's updated_at
        # moves with every comment and label), as GitHub marks it
        opened=post({**issue, "updated_at": _body_edited(store, issue)}, 0, on_issue),
        comments=tuple(post(c, c["id"], on_comments.get(c["id"], {})) for c in comments),
        events=tuple(
            views.Event(
                ident=e["id"],
                actor=store.user(e["actor_id"])["login"],
                action=e["action"],
                created_us=e["created_at"],
                label=views.Label(e["label_name"], e["label_color"] or "ededed")
                if e["label_name"] is not None
                else None,
                detail=e["detail"],
            )
            for e in events
        ),
        closed_us=issue["closed_at"],
    )
    return page(views.thread_page(chrome(request, acc, "issues"), data))


VERSIONED_PAGES = frozenset({issues, thread})
"""The pages made from the store alone (its rows; not git, not the clock), for the visitor
the request's credentials name: each is kept with the store's version, and until a write
moves it the same request is answered (304 or 200) without rendering."""


# --- files --------------------------------------------------------------------------------


async def _locate(request: web.Request, bare: Bare) -> tuple[str, str, str]:
    """``(ref, commit, path)`` from ``<ref>/<path>``; a ref may hold slashes (a branch
    ``feature/x``), so the shortest prefix naming a commit wins, as refs cannot nest."""
    tail = request.match_info.get("tail", "").strip("/")
    parts = [part for part in tail.split("/") if part] if tail else []
    if not parts or "\0" in tail:  # git cannot name a NUL: nothing is there
        raise missing()
    for i in range(1, min(len(parts), 8) + 1):
        ref = "/".join(parts[:i])
        commit = await bare.resolve(ref)
        if commit is not None:
            path = "/".join(parts[i:])
            if ".." in path.split("/"):
                raise missing()
            return ref, commit, path
    raise missing()


async def repo_home(request: web.Request) -> web.Response:
    """``GET /<owner>/<repo>``: its default branch's top folder (and README)."""
    acc = access(request)
    bare = bare_of(request, acc.id)
    ref = acc.row["default_branch"]
    commit = await bare.resolve(ref)
    if commit is None:
        o, r = acc.owner["login"], acc.row["name"]
        text = f"Nothing has been pushed yet. Push to {request.scheme}://{request.host}/{o}/{r}.git"
        p = views.message_page(chrome(request, acc, "code"), 200, "This repository is empty", text)
        return page(p)
    return await _tree(request, acc, bare, ref, commit, "")


async def tree(request: web.Request) -> web.Response:
    """``GET /<owner>/<repo>/tree/<ref>/<path>``: a folder."""
    acc = access(request)
    bare = bare_of(request, acc.id)
    ref, commit, path = await _locate(request, bare)
    return await _tree(request, acc, bare, ref, commit, path)


async def _tree(
    request: web.Request, acc: RepoAccess, bare: Bare, ref: str, commit: str, path: str
) -> web.Response:
    entries = await bare.tree(commit, path)
    if entries is None:
        if await bare.kind(commit, path) == "blob":  # GitHub sends a file's tree URL on
            raise web.HTTPFound(_url(acc, "blob", ref, path))
        raise missing()
    readme = None
    names = {name.lower(): name for kind, name, _ in entries if kind == "blob"}
    if "readme.md" in names:
        full = f"{path}/{names['readme.md']}" if path else names["readme.md"]
        data = await bare.file(commit, full)
        readme = data.decode("utf-8", "replace") if data is not None else None
    return page(
        views.tree_page(
            chrome(request, acc, "code"),
            ref=ref,
            commit=commit,
            path=path,
            entries=entries,
            readme=readme,
        )
    )


def _url(acc: RepoAccess, kind: str, ref: str, path: str) -> str:
    return (
        f"/{quote(acc.owner['login'])}/{quote(acc.row['name'])}/{kind}/{quote(ref)}/{quote(path)}"
    )


async def blob(request: web.Request) -> web.Response:
    """``GET /<owner>/<repo>/blob/<ref>/<path>``: a file, as its page (the RESULT's log
    link lands here)."""
    acc = access(request)
    bare = bare_of(request, acc.id)
    ref, commit, path = await _locate(request, bare)
    data = await bare.file(commit, path)
    if data is None:
        if path == "" or await bare.kind(commit, path) == "tree":
            raise web.HTTPFound(_url(acc, "tree", ref, path).rstrip("/"))
        raise missing()
    return page(
        views.blob_page(chrome(request, acc, "code"), ref=ref, commit=commit, path=path, data=data)
    )


async def raw(request: web.Request) -> web.Response:
    """``GET /<owner>/<repo>/raw/<ref>/<path>``: the file's bytes, as plain text when it is
    text; sandboxed, so a file can never act as a page of the hub."""
    acc = access(request)
    bare = bare_of(request, acc.id)
    _ref, commit, path = await _locate(request, bare)
    data = await bare.file(commit, path)
    if data is None:
        raise missing()
    binary = b"\0" in data[:8000]
    resp = web.Response(
        body=data,
        content_type="application/octet-stream" if binary else "text/plain",
        charset=None if binary else "utf-8",
    )
    resp.headers["Content-Security-Policy"] = RAW_CSP
    return resp


# --- the frame, signing in ----------------------------------------------------------------


async def stylesheet(request: web.Request) -> web.Response:
    """``GET /-/relay.css``: the pages' one stylesheet (light and dark)."""
    resp = web.Response(body=CSS, content_type="text/css", charset="utf-8")
    resp.headers["ETag"] = CSS_ETAG
    resp.headers["Cache-Control"] = "public, max-age=3600"
    return resp


def _visible_repos(request: web.Request, owner: str | None = None) -> list[Any]:
    """The repositories the visitor may see (of ``owner`` only, when given)."""
    who: dict[str, Any] | None = request.get("viewer")
    uid = who["id"] if who else -1
    rows = (
        hub_of(request)
        .store.db.execute(
            "SELECT u.login, r.name, r.private, (SELECT COUNT(*) FROM issues i"
            " WHERE i.repo_id = r.id AND i.state = 'open') FROM repos r"
            " JOIN users u ON u.id = r.owner_id WHERE (r.private = 0 OR r.owner_id = ?"
            " OR EXISTS (SELECT 1 FROM collaborators c WHERE c.repo_id = r.id AND c.user_id = ?))"
            " AND (? IS NULL OR u.login = ?) ORDER BY r.updated_at DESC LIMIT 100",
            (uid, uid, owner, owner),
        )
        .fetchall()
    )
    return [(r[0], r[1], bool(r[2]), r[3]) for r in rows]


async def home(request: web.Request) -> web.Response:
    """``GET /``: the repositories the visitor may see."""
    return page(views.home_page(chrome(request), _visible_repos(request)))


async def user(request: web.Request) -> web.Response:
    """``GET /<login>``: an account's page (every user's ``html_url``) — its repositories
    that the visitor may see."""
    login = request.match_info["login"]
    found = (
        hub_of(request)
        .store.db.execute("SELECT login FROM users WHERE login = ? COLLATE NOCASE", (login,))
        .fetchone()
    )
    if found is None:
        raise missing()
    repos = _visible_repos(request, found[0])
    return page(views.home_page(chrome(request), repos, title=found[0]))


def _return_to(value: str | None) -> str:
    """Only a path of this hub (never ``//elsewhere``)."""
    if not value or not value.startswith("/") or value.startswith("//") or "\\" in value:
        return "/"
    return value


async def login(request: web.Request) -> web.Response:
    """``GET /login``: the sign-in form."""
    return page(views.login_page(chrome(request), _return_to(request.query.get("return_to"))))


async def session(request: web.Request) -> web.Response:
    """``POST /session``: a valid token becomes the session cookie; back where the
    visitor came from."""
    form = await request.post()
    token = str(form.get("token", "")).strip()
    back = _return_to(str(form.get("return_to", "")))
    hub = hub_of(request)
    if not token or hub.store.token_owner(token) is None:
        return page(views.login_page(chrome(request), back, "Incorrect token."))
    resp = web.HTTPSeeOther(back)
    resp.set_cookie(SESSION_COOKIE, token, httponly=True, samesite="Strict", path="/")
    raise resp


async def logout(request: web.Request) -> web.Response:
    """``POST /logout``: forget the session cookie."""
    resp = web.HTTPSeeOther(_return_to(request.query.get("return_to")))
    resp.del_cookie(SESSION_COOKIE, path="/")
    raise resp


P = "/{owner}/{repo}"
ROUTES: tuple[tuple[str, str, Handler], ...] = (
    ("GET", "/", home),
    ("GET", "/-/relay.css", stylesheet),
    ("GET", "/login", login),
    ("POST", "/session", session),
    ("POST", "/logout", logout),
    ("GET", r"/{login:[A-Za-z0-9][A-Za-z0-9-]{0,38}(\[bot\])?}", user),
    ("GET", P, repo_home),
    ("GET", P + "/issues", issues),
    ("GET", P + r"/issues/{number:\d{1,18}}", thread),
    ("GET", P + "/tree/{tail:.+}", tree),
    ("GET", P + "/blob/{tail:.+}", blob),
    ("GET", P + "/raw/{tail:.+}", raw),
)
"""The pages' routes, added after the API's so that an API path always wins."""


def sign_in(request: web.Request, hub: Hub) -> None:
    """The visitor: the token of an ``Authorization`` header (as API clients send) or of
    the session cookie; an unknown token is an anonymous visitor (the page says sign in),
    never an error."""
    from relay.hub.middleware import authenticate

    try:
        authenticate(request, hub)
    except ApiError:
        request["viewer"], request["admin"] = None, False
    token = request.cookies.get(SESSION_COOKIE)
    if request.get("viewer") is None and token:
        owner = hub.store.token_owner(token)
        if owner is not None:
            request["viewer"], request["admin"] = owner


async def serve(request: web.Request, handler: Handler, hub: Hub) -> web.StreamResponse:
    """Answer one page request: sign in, render, make it conditional, stamp the headers.
    A page of :data:`VERSIONED_PAGES` kept for the store's current version is answered from
    what was kept (a 304, or the same bytes) without rendering, as the API's GETs are."""
    from relay.hub.middleware import ANSWERS, _answer_key

    sign_in(request, hub)
    get = request.method in ("GET", "HEAD")
    key, version = "", -1
    seen: tuple[int, str, bytes, Any] | None = None
    if get and request.match_info.handler in VERSIONED_PAGES:
        version = hub.store.version  # read before the page is made
        key = "page\n" + _answer_key(request)
        seen = request.app[ANSWERS].kept.get(key)
        if seen is not None and (seen[0] != version or version < 0):
            seen = None
    if seen is not None:
        resp: web.StreamResponse = web.Response(body=seen[2], headers=seen[3])
    else:
        resp, rendered = await _render(request, handler)
        if not rendered:
            key = ""  # an error page or a redirect is made again each time
    if get and resp.status == 200 and isinstance(resp, web.Response):
        etag = seen[1] if seen is not None else resp.headers.get("ETag") or _etag(resp.body)
        resp.headers["ETag"] = etag
        if seen is None and key and version >= 0 and "Set-Cookie" not in resp.headers:
            request.app[ANSWERS].keep(key, version, etag, resp)
        if etag in [t.strip() for t in request.headers.get("If-None-Match", "").split(",")]:
            resp = web.Response(status=304, headers={"ETag": etag})
    for name, value in _SECURITY.items():
        resp.headers.setdefault(name, value)
    hub.count(request.method, request.path, resp.status)
    return resp


async def _render(request: web.Request, handler: Handler) -> tuple[web.StreamResponse, bool]:
    """The page the handler makes, and whether it made it (False: an error page, or a
    redirect, stands in its place)."""
    try:
        return await handler(request), True
    except PageError as err:
        return page(views.message_page(chrome(request), err.status, err.title, err.text)), False
    except web.HTTPException as exc:
        if exc.status >= 400:
            raise
        return exc, False  # a redirect
    except Exception:
        traceback.print_exc(file=sys.stderr)
        failed = views.message_page(chrome(request), 500, "Server Error", "Something broke.")
        return page(failed), False


def _etag(body: object) -> str:
    data = body if isinstance(body, bytes) else b""
    return f'W/"{hashlib.md5(data, usedforsecurity=False).hexdigest()}"'
