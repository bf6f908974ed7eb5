"""Git references: relay's atomic claim, stored in the repository's own git.

``POST /repos/{o}/{r}/git/refs`` fails with 422 "Reference already exists" (no ``errors``
array) when the ref exists, on GitHub and here alike. Once a repository's hosted git holds
an object (someone pushed to it), or always on a hub started with ``--strict-git``, its refs
ARE the bare repository's refs: a ref made here is what ``git ls-remote`` lists, a pushed
ref is listed here, a sha the repository lacks is 422 "Object does not exist", and git's
own ref lock (``git update-ref`` with the old value) picks exactly one of any number of
concurrent creators. A repository nobody pushed to on a lenient hub is API-only (a
transitional mode, see the package docstring): its refs live in SQLite at any 40-hex sha
until the first push, when those git can hold move into git.
"""

from __future__ import annotations

import re
from typing import Any

from aiohttp import web

from relay.hub import protection, render
from relay.hub.api_repos import RepoAccess, repo_access
from relay.hub.git import ZERO, Bare, bare_path, valid_ref_name
from relay.hub.web import (
    ApiError,
    Role,
    hub_of,
    no_content,
    not_found,
    read_object,
    reply,
    viewer,
)

_SHA = re.compile(r"^[0-9a-fA-F]{40}$")
BAD_NAME = "Reference name must start with 'refs/' and have at least two slashes."
DOCS = "https://docs.github.com/rest/git/refs"
EMPTY = "Git Repository is empty."


def refused(
    bare: Bare, name: str, *, old: str, new: str, admin: bool, pusher: Any = None, store: Any = None
) -> list[str]:
    """Why moving ``name`` from ``old`` to ``new`` breaks its branch's protection (none for
    a ref that is no protected branch); the API answers the first, as GitHub does."""
    if not name.startswith("refs/heads/"):
        return []
    settings = protection.load(bare.path).get(name.removeprefix("refs/heads/"))
    if settings is None:
        return []
    ff = ZERO not in (old, new) and bare.is_ancestor(old, new)
    allowed = True
    if settings.get("restrictions") and store is not None:
        from relay.hub.api_orgs import may_push

        allowed = may_push(store, pusher, settings["restrictions"])
    return protection.refusals(
        settings, old=old, new=new, admin=admin, fast_forward=ff, allowed=allowed
    )


def _guard(
    request: web.Request, bare: Bare, acc: RepoAccess, name: str, old: str, new: str, docs: str
) -> None:
    """422 with GitHub's reason when the branch's protection refuses this move."""
    who, store = request.get("viewer"), hub_of(request).store
    why = refused(
        bare, name, old=old, new=new, admin=acc.role >= Role.ADMIN, pusher=who, store=store
    )
    if why:
        raise ApiError(422, why[0], docs=docs)


def _check_sha(sha: object, docs: str) -> str:
    if not isinstance(sha, str) or not _SHA.match(sha):
        raise ApiError(422, "Object does not exist", docs=docs)
    return sha.lower()


def _path_ref(request: web.Request) -> str:
    return "refs/" + request.match_info.get("ref", "").removeprefix("refs/")


def bare_of(request: web.Request, repo_id: int) -> Bare:
    """The repository's bare git, created on first use for stores made by an older hub."""
    return Bare(bare_path(hub_of(request).data_dir, repo_id)).ensure()


def git_refs(request: web.Request, acc: RepoAccess) -> Bare | None:
    """The bare repository when the refs live in git; None for an API-only repository.
    409 "Git Repository is empty." when they live in git and nothing was pushed yet."""
    hub = hub_of(request)
    bare = bare_of(request, acc.id)
    if acc.id in hub.hosted:
        return bare
    if bare.has_objects():
        hub.hosted.add(acc.id)
        _adopt(request, acc.id, bare)
        return bare
    if hub.strict_git:
        raise ApiError(409, EMPTY, docs=DOCS)
    return None


def _adopt(request: web.Request, repo_id: int, bare: Bare) -> None:
    """Move the refs an API-only repository kept in SQLite into its git, now that it has
    objects: those whose sha it holds become git refs (unless git has that ref already),
    the rest are dropped, as GitHub could never have held them."""
    store = hub_of(request).store
    kept = _sql_refs(request, repo_id, "refs/")
    if not kept:
        return
    for name, sha in kept:
        if bare.ref(name) is None:
            bare.update(name, sha, ZERO)
    with store.write() as db:
        db.execute("DELETE FROM refs WHERE repo_id = ?", (repo_id,))


def _sql_refs(request: web.Request, repo_id: int, prefix: str) -> list[tuple[str, str]]:
    rows = hub_of(request).store.db.execute(
        "SELECT ref, sha FROM refs WHERE repo_id = ? AND substr(ref, 1, ?) = ? ORDER BY ref",
        (repo_id, len(prefix), prefix),
    )
    return [(r[0], r[1]) for r in rows]


def _refs(request: web.Request, acc: RepoAccess, prefix: str) -> list[tuple[str, str]]:
    bare = git_refs(request, acc)
    return bare.refs(prefix) if bare is not None else _sql_refs(request, acc.id, prefix)


def _render(acc: RepoAccess, refs: list[tuple[str, str]]) -> list[dict[str, Any]]:
    return [render.ref(acc.base, acc.full, name, sha) for name, sha in refs]


def _record(request: web.Request, acc: RepoAccess, action: str, name: str) -> None:
    store = hub_of(request).store
    with store.write():
        store.record(action, "ref", actor_id=viewer(request)["id"], repo_id=acc.id, detail=name)


async def create_ref(request: web.Request) -> web.Response:
    """``POST /repos/{o}/{r}/git/refs`` ``{"ref": "refs/...", "sha"}``: 201 or 422."""
    docs = DOCS + "#create-a-reference"
    acc = repo_access(request, Role.PUSH)
    data = await read_object(request)
    name = data.get("ref")
    if not isinstance(name, str) or not name.startswith("refs/") or name.count("/") < 2:
        raise ApiError(422, BAD_NAME, docs=docs)
    if not valid_ref_name(name):
        raise ApiError(422, f"{name} is not a valid ref name.", docs=docs)
    sha = _check_sha(data.get("sha"), docs)
    bare = git_refs(request, acc)
    if bare is None:
        _create_sql(request, acc, name, sha, docs)
    else:
        if not bare.update(name, sha, ZERO):  # one process when it works; ask why when not
            missing = bare.object_type(sha) is None
            message = "Object does not exist" if missing else "Reference already exists"
            raise ApiError(422, message, docs=docs)
        _record(request, acc, "create", name)
    resp = reply(render.ref(acc.base, acc.full, name, sha), 201)
    resp.headers["Location"] = f"{acc.base}/repos/{acc.full}/git/{name}"
    return resp


def _create_sql(request: web.Request, acc: RepoAccess, name: str, sha: str, docs: str) -> None:
    store = hub_of(request).store
    with store.write() as db:
        exists = "SELECT 1 FROM refs WHERE repo_id = ? AND ref = ?"
        if db.execute(exists, (acc.id, name)).fetchone():
            raise ApiError(422, "Reference already exists", docs=docs)
        db.execute("INSERT INTO refs VALUES (?, ?, ?)", (acc.id, name, sha))
        me = viewer(request)["id"]
        store.record("create", "ref", actor_id=me, repo_id=acc.id, detail=name)


def _exact(request: web.Request, acc: RepoAccess, name: str) -> str | None:
    bare = git_refs(request, acc)
    if bare is not None:
        return bare.ref(name)
    return dict(_sql_refs(request, acc.id, name)).get(name)


async def get_ref(request: web.Request) -> web.Response:
    """``GET /repos/{o}/{r}/git/ref/{ref}`` (``heads/x``): the ref, or 404."""
    acc = repo_access(request)
    name = _path_ref(request)
    sha = _exact(request, acc, name)
    if sha is None:
        raise ApiError(404, "Not Found", docs=DOCS + "#get-a-reference")
    return reply(render.ref(acc.base, acc.full, name, sha))


async def list_refs(request: web.Request) -> web.Response:
    """``GET /repos/{o}/{r}/git/refs``: every ref of the repository."""
    acc = repo_access(request)
    return reply(_render(acc, _refs(request, acc, "refs/")))


async def get_refs(request: web.Request) -> web.Response:
    """``GET /repos/{o}/{r}/git/refs/{ref}`` (where a ref's ``url`` points): the ref when
    the name is exact, else the list of refs under it as a prefix, else 404."""
    acc = repo_access(request)
    name = _path_ref(request)
    refs = _refs(request, acc, name)
    exact = [sha for ref, sha in refs if ref == name]
    if exact:
        return reply(render.ref(acc.base, acc.full, name, exact[0]))
    under = [(ref, sha) for ref, sha in refs if ref.startswith(name.rstrip("/") + "/")]
    if not under:
        raise not_found()
    return reply(_render(acc, under))


async def matching_refs(request: web.Request) -> web.Response:
    """``GET /repos/{o}/{r}/git/matching-refs/{ref}``: every ref starting with the prefix."""
    acc = repo_access(request)
    return reply(_render(acc, _refs(request, acc, _path_ref(request))))


async def update_ref(request: web.Request) -> web.Response:
    """``PATCH /repos/{o}/{r}/git/refs/{ref}`` ``{"sha", "force"}`` (a lease refresh); in
    git, a move that is not a fast-forward needs ``force``, as on GitHub."""
    docs = DOCS + "#update-a-reference"
    acc = repo_access(request, Role.PUSH)
    name = _path_ref(request)
    data = await read_object(request)
    sha = _check_sha(data.get("sha"), docs)
    bare = git_refs(request, acc)
    if bare is None:
        store = hub_of(request).store
        with store.write() as db:
            update = "UPDATE refs SET sha = ? WHERE repo_id = ? AND ref = ?"
            if not db.execute(update, (sha, acc.id, name)).rowcount:
                raise ApiError(422, "Reference does not exist", docs=docs)
            me = viewer(request)["id"]
            store.record("push", "ref", actor_id=me, repo_id=acc.id, detail=name)
        return reply(render.ref(acc.base, acc.full, name, sha))
    old = bare.ref(name)
    if old is None:
        raise ApiError(422, "Reference does not exist", docs=docs)
    if old != sha:  # a lease refresh at the same sha changes nothing in git
        if bare.object_type(sha) is None:
            raise ApiError(422, "Object does not exist", docs=docs)
        if data.get("force") is not True and not bare.is_ancestor(old, sha):
            raise ApiError(422, "Update is not a fast forward", docs=docs)
        _guard(request, bare, acc, name, old, sha, docs)
        if not bare.update(name, sha, old):
            raise ApiError(422, "Reference cannot be updated", docs=docs)
    _record(request, acc, "push", name)
    return reply(render.ref(acc.base, acc.full, name, sha))


async def delete_ref(request: web.Request) -> web.Response:
    """``DELETE /repos/{o}/{r}/git/refs/{ref}``: 204, or 422 "Reference does not exist"."""
    docs = DOCS + "#delete-a-reference"
    acc = repo_access(request, Role.PUSH)
    name = _path_ref(request)
    bare = git_refs(request, acc)
    if bare is None:
        store = hub_of(request).store
        with store.write() as db:
            delete = "DELETE FROM refs WHERE repo_id = ? AND ref = ?"
            if not db.execute(delete, (acc.id, name)).rowcount:
                raise ApiError(422, "Reference does not exist", docs=docs)
            me = viewer(request)["id"]
            store.record("delete", "ref", actor_id=me, repo_id=acc.id, detail=name)
        return no_content()
    old = bare.ref(name)
    if old is not None:
        _guard(request, bare, acc, name, old, ZERO, docs)
    if old is None or not bare.update(name, ZERO, old):
        raise ApiError(422, "Reference does not exist", docs=docs)
    _record(request, acc, "delete", name)
    return no_content()
