"""The hub's aiohttp application: the route table, the admin endpoints and ``build_app``.

Routes are one table so that what the hub serves can be read in one place; the admin
endpoints live under ``/_hub/`` and answer only admin tokens (see the package docstring).
"""

from __future__ import annotations

from pathlib import Path

from aiohttp import web

from relay.errors import LocalUsageError
from relay.hub import (
    api_branches,
    api_comments,
    api_contents,
    api_environments,
    api_git,
    api_graphql,
    api_hooks,
    api_invitations,
    api_issues,
    api_labels,
    api_orgs,
    api_refs,
    api_repos,
    apps,
    hooks,
    pages,
)
from relay.hub.faults import Faults, FaultSpec
from relay.hub.git import require_git
from relay.hub.middleware import ANSWERS, DOC_PAGES, VERSIONED, Answers, hub_middleware
from relay.hub.store import Store
from relay.hub.web import (
    API_ROOTS,
    CONTENT_PER_HOUR,
    CONTENT_PER_MINUTE,
    GHES_PREFIX,
    HUB,
    PAGE_PATHS,
    RATE_LIMIT,
    ApiError,
    Hub,
    canonical_path,
    hub_of,
    no_content,
    read_object,
    reply,
)

R = "/repos/{owner}/{repo}"
ISSUE = R + r"/issues/{number:\d+}"
COMMENT = R + r"/issues/comments/{comment_id:\d+}"

ROUTES = (
    ("GET", "/user", api_repos.get_user),
    ("GET", "/users/{login}", api_repos.get_other_user),
    ("POST", "/user/repos", api_repos.create_repo),
    ("GET", "/user/repos", api_repos.list_my_repos),
    ("GET", "/rate_limit", api_repos.rate_limit),
    ("GET", R, api_repos.get_repo),
    ("PATCH", R, api_repos.update_repo),
    ("GET", R + "/collaborators/{user}/permission", api_repos.get_permission),
    ("GET", R + "/collaborators", api_repos.list_collaborators),
    ("GET", R + "/collaborators/{user}", api_repos.check_collaborator),
    ("PUT", R + "/collaborators/{user}", api_repos.put_collaborator),
    ("DELETE", R + "/collaborators/{user}", api_repos.remove_collaborator),
    ("GET", R + "/labels", api_labels.list_labels),
    ("POST", R + "/labels", api_labels.create_label),
    ("GET", R + "/labels/{name:.+}", api_labels.get_label),
    ("PATCH", R + "/labels/{name:.+}", api_labels.update_label),
    ("DELETE", R + "/labels/{name:.+}", api_labels.delete_label),
    ("GET", R + "/issues", api_issues.list_issues),
    ("POST", R + "/issues", api_issues.create_issue),
    ("GET", R + "/issues/comments", api_comments.list_repo_comments),
    ("GET", R + r"/issues/events/{event_id:\d+}", api_comments.get_event),
    ("GET", COMMENT, api_comments.get_comment),
    ("PATCH", COMMENT, api_comments.update_comment),
    ("DELETE", COMMENT, api_comments.delete_comment),
    ("GET", COMMENT + "/reactions", api_comments.list_reactions),
    ("POST", COMMENT + "/reactions", api_comments.create_reaction),
    ("DELETE", COMMENT + r"/reactions/{reaction_id:\d+}", api_comments.delete_reaction),
    ("GET", ISSUE, api_issues.get_issue),
    ("PATCH", ISSUE, api_issues.update_issue),
    ("GET", ISSUE + "/labels", api_labels.list_issue_labels),
    ("POST", ISSUE + "/labels", api_labels.add_issue_labels),
    ("PUT", ISSUE + "/labels", api_labels.set_issue_labels),
    ("DELETE", ISSUE + "/labels", api_labels.clear_issue_labels),
    ("DELETE", ISSUE + "/labels/{name:.+}", api_labels.remove_issue_label),
    ("PUT", ISSUE + "/lock", api_issues.lock_issue),
    ("DELETE", ISSUE + "/lock", api_issues.unlock_issue),
    ("GET", ISSUE + "/comments", api_comments.list_comments),
    ("POST", ISSUE + "/comments", api_comments.create_comment),
    ("GET", ISSUE + "/events", api_comments.list_events),
    ("GET", ISSUE + "/reactions", api_comments.list_reactions),
    ("POST", ISSUE + "/reactions", api_comments.create_reaction),
    ("DELETE", ISSUE + r"/reactions/{reaction_id:\d+}", api_comments.delete_reaction),
    ("POST", R + "/git/refs", api_refs.create_ref),
    ("GET", R + "/git/ref/{ref:.+}", api_refs.get_ref),
    ("GET", R + "/git/refs", api_refs.list_refs),
    ("GET", R + "/git/refs/", api_refs.list_refs),  # GitHub lists every ref here too
    ("GET", R + "/git/refs/{ref:.+}", api_refs.get_refs),
    ("GET", R + "/git/matching-refs/{ref:.+}", api_refs.matching_refs),
    ("GET", R + "/git/matching-refs/", api_refs.matching_refs),  # an empty prefix: every ref
    ("PATCH", R + "/git/refs/{ref:.+}", api_refs.update_ref),
    ("DELETE", R + "/git/refs/{ref:.+}", api_refs.delete_ref),
)

HOT_PATHS = (ISSUE + "/comments", ISSUE, R + "/issues")
"""Registered before every other route: aiohttp tries a path's candidates in the order
they were added, and a relay node's requests are nearly all these (no other route can
match their paths, so the order changes only how soon the match is found)."""

VERSIONED_GETS = frozenset(
    {
        api_repos.get_repo, api_repos.get_permission, api_labels.list_labels,
        api_labels.get_label, api_labels.list_issue_labels, api_issues.list_issues,
        api_issues.get_issue, api_comments.list_repo_comments, api_comments.get_event,
        api_comments.get_comment, api_comments.list_comments, api_comments.list_events,
        api_comments.list_reactions,
    }
)  # fmt: skip
"""The GETs whose answer reads the store alone (not git, not the clock, not a window): each
answer is kept with the store's version, so until a write moves the version the same GET is
answered (304 or 200) without rendering. Any other GET renders, and hashes for its ETag."""


async def get_faults(request: web.Request) -> web.Response:
    """``GET /_hub/faults``: the current spec and how many faults it injected."""
    faults = hub_of(request).faults
    return reply(
        {
            **faults.spec.describe(),
            "injected": faults.injected,
            "injected_by_kind": dict(faults.by_kind),
        }
    )


async def set_faults(request: web.Request) -> web.Response:
    """``POST /_hub/faults`` ``{"spec": "503=0.2,seed=7"}``: replace the faults."""
    spec = (await read_object(request)).get("spec", "")
    try:
        parsed = FaultSpec.parse(str(spec))
    except LocalUsageError as err:
        raise ApiError(422, str(err)) from None
    hub_of(request).faults.set(parsed)
    return await get_faults(request)


async def clear_faults(request: web.Request) -> web.Response:
    """``DELETE /_hub/faults``: no more faults."""
    hub_of(request).faults.set(FaultSpec())
    return no_content()


async def get_requests(request: web.Request) -> web.Response:
    """``GET /_hub/requests``: answered requests by method, path and status."""
    counts = hub_of(request).counts
    rows = [
        {"method": m, "path": p, "status": s, "count": n} for (m, p, s), n in sorted(counts.items())
    ]
    return reply({"total": sum(counts.values()), "requests": rows})


async def reset_requests(request: web.Request) -> web.Response:
    """``DELETE /_hub/requests``: start counting afresh."""
    hub_of(request).counts.clear()
    return no_content()


_REST = (
    ROUTES + api_branches.ROUTES + api_hooks.ROUTES + api_environments.ROUTES + apps.ROUTES
    + api_invitations.ROUTES + api_orgs.ROUTES + api_contents.ROUTES
)  # fmt: skip
REST_ROUTES = _REST + tuple(
    (method, r"/repositories/{repository_id:\d+}" + path.removeprefix(R), handler)
    for method, path, handler in _REST
    if path.startswith(R)
)
"""The REST API's routes, served at the root (api.github.com's shape) and again under
``/api/v3`` (GitHub Enterprise Server's shape)."""
ENTERPRISE_ROUTES = (
    ("GET", GHES_PREFIX, api_repos.root),
    ("GET", GHES_PREFIX + "/", api_repos.root),
    *((method, GHES_PREFIX + path, handler) for method, path, handler in REST_ROUTES),
)
ALL_ROUTES = REST_ROUTES + ENTERPRISE_ROUTES + api_git.ROUTES + api_graphql.ROUTES
"""Every public route: the REST API's (in both shapes), git's and GraphQL's (the
conformance test checks each is listed in its table)."""

_DOCS_ROOT = "https://docs.github.com/rest/"
_DOC_PAGE: dict[object, str] = {
    api_repos.get_user: "users/users#get-the-authenticated-user",
    api_repos.get_other_user: "users/users#get-a-user",
    api_repos.create_repo: "repos/repos#create-a-repository-for-the-authenticated-user",
    api_repos.list_my_repos: "repos/repos#list-repositories-for-the-authenticated-user",
    api_repos.rate_limit: "rate-limit/rate-limit#get-rate-limit-status-for-the-authenticated-user",
    api_repos.root: "meta/meta#github-api-root",
    api_repos.get_repo: "repos/repos#get-a-repository",
    api_repos.update_repo: "repos/repos#update-a-repository",
    api_repos.get_permission: "collaborators/collaborators#get-repository-permissions-for-a-user",
    api_repos.list_collaborators: "collaborators/collaborators#list-repository-collaborators",
    api_repos.check_collaborator: (
        "collaborators/collaborators#check-if-a-user-is-a-repository-collaborator"
    ),
    api_repos.put_collaborator: "collaborators/collaborators#add-a-repository-collaborator",
    api_repos.remove_collaborator: "collaborators/collaborators#remove-a-repository-collaborator",
    api_labels.list_labels: "issues/labels#list-labels-for-a-repository",
    api_labels.create_label: "issues/labels#create-a-label",
    api_labels.get_label: "issues/labels#get-a-label",
    api_labels.update_label: "issues/labels#update-a-label",
    api_labels.delete_label: "issues/labels#delete-a-label",
    api_labels.list_issue_labels: "issues/labels#list-labels-for-an-issue",
    api_labels.add_issue_labels: "issues/labels#add-labels-to-an-issue",
    api_labels.set_issue_labels: "issues/labels#set-labels-for-an-issue",
    api_labels.clear_issue_labels: "issues/labels#remove-all-labels-from-an-issue",
    api_labels.remove_issue_label: "issues/labels#remove-a-label-from-an-issue",
    api_issues.list_issues: "issues/issues#list-repository-issues",
    api_issues.create_issue: "issues/issues#create-an-issue",
    api_issues.get_issue: "issues/issues#get-an-issue",
    api_issues.update_issue: "issues/issues#update-an-issue",
    api_issues.lock_issue: "issues/issues#lock-an-issue",
    api_issues.unlock_issue: "issues/issues#unlock-an-issue",
    api_comments.list_repo_comments: "issues/comments#list-issue-comments-for-a-repository",
    api_comments.get_event: "issues/events#get-an-issue-event",
    api_comments.get_comment: "issues/comments#get-an-issue-comment",
    api_comments.update_comment: "issues/comments#update-an-issue-comment",
    api_comments.delete_comment: "issues/comments#delete-an-issue-comment",
    api_comments.list_comments: "issues/comments#list-issue-comments",
    api_comments.create_comment: "issues/comments#create-an-issue-comment",
    api_comments.list_events: "issues/events#list-issue-events",
    api_refs.create_ref: "git/refs#create-a-reference",
    api_refs.get_ref: "git/refs#get-a-reference",
    api_refs.list_refs: "git/refs#list-matching-references",
    api_refs.get_refs: "git/refs#get-a-reference",
    api_refs.matching_refs: "git/refs#list-matching-references",
    api_refs.update_ref: "git/refs#update-a-reference",
    api_refs.delete_ref: "git/refs#delete-a-reference",
    api_branches.list_branches: "branches/branches#list-branches",
    api_branches.get_branch: "branches/branches#get-a-branch",
    api_branches.get_protection: "branches/branch-protection#get-branch-protection",
    api_branches.put_protection: "branches/branch-protection#update-branch-protection",
    api_branches.delete_protection: "branches/branch-protection#delete-branch-protection",
    api_hooks.list_hooks: "repos/webhooks#list-repository-webhooks",
    api_hooks.create_hook: "repos/webhooks#create-a-repository-webhook",
    api_hooks.get_hook: "repos/webhooks#get-a-repository-webhook",
    api_hooks.update_hook: "repos/webhooks#update-a-repository-webhook",
    api_hooks.delete_hook: "repos/webhooks#delete-a-repository-webhook",
    **api_environments.DOC_PAGES,
    **api_invitations.DOC_PAGES,
    **api_orgs.DOC_PAGES,
    **api_contents.DOC_PAGES,
    apps.get_app: "apps/apps#get-the-authenticated-app",
    apps.create_access_token: "apps/apps#create-an-installation-access-token-for-an-app",
}
_REACTION_PAGES = {
    ("GET", "comments"): "reactions/reactions#list-reactions-for-an-issue-comment",
    ("POST", "comments"): "reactions/reactions#create-reaction-for-an-issue-comment",
    ("DELETE", "comments"): "reactions/reactions#delete-an-issue-comment-reaction",
    ("GET", "issues"): "reactions/reactions#list-reactions-for-an-issue",
    ("POST", "issues"): "reactions/reactions#create-reaction-for-an-issue",
    ("DELETE", "issues"): "reactions/reactions#delete-an-issue-reaction",
}


def doc_pages(app: web.Application) -> dict[tuple[str, str], str]:
    """``(method, canonical route path) -> docs page`` for the ``documentation_url`` of a
    4xx (a reaction handler serves issues and comments alike, so the path tells which)."""
    out: dict[tuple[str, str], str] = {}
    for route in app.router.routes():
        method, handler = route.method, route.handler
        if method == "HEAD":
            continue  # the middleware looks a HEAD up as its GET
        path = canonical_path(route.resource.canonical) if route.resource is not None else ""
        page = _DOC_PAGE.get(handler)
        if "/reactions" in path:
            kind = "comments" if "/comments/" in path else "issues"
            page = _REACTION_PAGES[(method, kind)]
        if page is not None:
            out[(method, path)] = _DOCS_ROOT + page  # under /api/v3 too: the same path
    return out


ADMIN_ROUTES = (
    ("GET", "/_hub/faults", get_faults),
    ("POST", "/_hub/faults", set_faults),
    ("DELETE", "/_hub/faults", clear_faults),
    ("GET", "/_hub/requests", get_requests),
    ("DELETE", "/_hub/requests", reset_requests),
    *apps.ADMIN_ROUTES,
)


def build_app(
    data_dir: Path,
    *,
    faults: FaultSpec | None = None,
    rate_limit: int = RATE_LIMIT,
    content_limits: tuple[int, int] = (CONTENT_PER_MINUTE, CONTENT_PER_HOUR),
    strict_git: bool = False,
    app_user: bool = False,
    content_window: int = 60,
    invitations: bool = False,
) -> web.Application:
    """The hub application over the store in ``data_dir`` (closed on cleanup);
    ``rate_limit`` is each user's hourly budget (GitHub's 5,000 unless a bench lifts it),
    ``content_limits`` the secondary limit per minute and per hour (0: none; its minute
    lasts ``content_window`` seconds, shorter only in tests), and
    ``strict_git`` makes every repository's refs its git's, even before the first push, and
    ``app_user`` lets ``GET /user`` answer an App installation (GitHub refuses it)."""
    store = Store.open(data_dir)
    store.checkpoint_in_background()  # no request pays for writing the log back
    middlewares = [hub_middleware]  # one layer: webhooks find the request through SERVING
    app = web.Application(middlewares=middlewares, client_max_size=8 * 1024 * 1024)
    require_git()
    app[HUB] = Hub(
        store=store,
        faults=Faults(faults or FaultSpec()),
        rate_limit=rate_limit,
        data_dir=data_dir,
        strict_git=strict_git,
        app_user=app_user,
        content_limits=content_limits,
        content_window=content_window,
        invitations=invitations,
    )
    page_paths = set()
    every = ALL_ROUTES + ADMIN_ROUTES + pages.ROUTES
    for method, path, handler in sorted(every, key=lambda route: route[1] not in HOT_PATHS):
        route = app.router.add_route(method, path, handler)
        if method == "GET":  # HEAD answers what GET would, without the body (as GitHub)
            app.router.add_route("HEAD", path, handler)
        if (method, path, handler) in pages.ROUTES and route.resource is not None:
            page_paths.add(route.resource.canonical)
    app[PAGE_PATHS] = frozenset(page_paths)
    api = ALL_ROUTES + ADMIN_ROUTES
    app[API_ROOTS] = frozenset(path.split("/")[1] for _, path, _ in api)
    app[DOC_PAGES] = doc_pages(app)
    app[VERSIONED] = VERSIONED_GETS
    app[ANSWERS] = Answers()
    hooks.install(app, store)  # before close_store: the senders stop first
    apps.install(store)
    api_environments.install(store)
    api_invitations.install(store)
    api_orgs.install(store)
    store.watch(api_repos.ACCESS_TABLES)  # once every table exists: repo_access keeps answers

    async def close_store(_app: web.Application) -> None:
        store.close()

    app.on_cleanup.append(close_store)
    return app
