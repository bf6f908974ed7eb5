"""The hub's aiohttp application: the route table, the admin endpoints and ``build_app``.

Routes are one table so that what the hub serves can be read in one place; the admin
endpoints live under ``/_hub/`` and answer only admin tokens (see the package docstring).
"""

from __future__ import annotations

from pathlib import Path

from aiohttp import web

from relay.errors import LocalUsageError
from relay.hub import (
    api_comments,
    api_hooks,
    api_issues,
    api_labels,
    api_refs,
    api_repos,
    apps,
    hooks,
)
from relay.hub.faults import Faults, FaultSpec
from relay.hub.middleware import hub_middleware
from relay.hub.store import Store
from relay.hub.web import (
    HUB,
    RATE_LIMIT,
    ApiError,
    Hub,
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
    ("GET", "/rate_limit", api_repos.rate_limit),
    ("GET", R, api_repos.get_repo),
    ("PATCH", R, api_repos.update_repo),
    ("GET", R + "/collaborators/{user}/permission", api_repos.get_permission),
    ("PUT", R + "/collaborators/{user}", api_repos.put_collaborator),
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
    ("GET", ISSUE + "/comments", api_comments.list_comments),
    ("POST", ISSUE + "/comments", api_comments.create_comment),
    ("GET", ISSUE + "/events", api_comments.list_events),
    ("GET", ISSUE + "/reactions", api_comments.list_reactions),
    ("POST", ISSUE + "/reactions", api_comments.create_reaction),
    ("DELETE", ISSUE + r"/reactions/{reaction_id:\d+}", api_comments.delete_reaction),
    ("POST", R + "/git/refs", api_refs.create_ref),
    ("GET", R + "/git/ref/{ref:.+}", api_refs.get_ref),
    ("GET", R + "/git/refs", api_refs.list_refs),
    ("GET", R + "/git/refs/{ref:.+}", api_refs.get_refs),
    ("GET", R + "/git/matching-refs/{ref:.+}", api_refs.matching_refs),
    ("PATCH", R + "/git/refs/{ref:.+}", api_refs.update_ref),
    ("DELETE", R + "/git/refs/{ref:.+}", api_refs.delete_ref),
)


async def get_faults(request: web.Request) -> web.Response:
    """``GET /_hub/faults``: the current spec and how many faults it injected."""
    faults = hub_of(request).faults
    return reply({**faults.spec.describe(), "injected": faults.injected})


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


ADMIN_ROUTES = (
    ("GET", "/_hub/faults", get_faults),
    ("POST", "/_hub/faults", set_faults),
    ("DELETE", "/_hub/faults", clear_faults),
    ("GET", "/_hub/requests", get_requests),
    ("DELETE", "/_hub/requests", reset_requests),
    *apps.ADMIN_ROUTES,
)


def build_app(
    data_dir: Path, *, faults: FaultSpec | None = None, rate_limit: int = RATE_LIMIT
) -> web.Application:
    """The hub application over the store in ``data_dir`` (closed on cleanup);
    ``rate_limit`` is each user's hourly budget (GitHub's 5,000 unless a bench lifts it)."""
    store = Store.open(data_dir)
    middlewares = [hub_middleware, hooks.hooks_middleware]
    app = web.Application(middlewares=middlewares, client_max_size=8 * 1024 * 1024)
    app[HUB] = Hub(store=store, faults=Faults(faults or FaultSpec()), rate_limit=rate_limit)
    for method, path, handler in ROUTES + api_hooks.ROUTES + apps.ROUTES + ADMIN_ROUTES:
        app.router.add_route(method, path, handler)
        if method == "GET":  # HEAD answers what GET would, without the body (as GitHub)
            app.router.add_route("HEAD", path, handler)
    hooks.install(app, store)  # before close_store: the senders stop first
    apps.install(store)

    async def close_store(_app: web.Application) -> None:
        store.close()

    app.on_cleanup.append(close_store)
    return app
