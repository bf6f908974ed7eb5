"""Git references: relay's atomic claim.

``POST /repos/{o}/{r}/git/refs`` fails with 422 "Reference already exists" (no ``errors``
array) when the ref exists, on GitHub and here alike; because the server has one writer,
exactly one of any number of concurrent creators wins. The hub keeps no git objects, so a
ref points at whatever 40-hex sha the client names.
"""

from __future__ import annotations

import re

from aiohttp import web

from relay.hub import render
from relay.hub.api_repos import repo_access
from relay.hub.web import (
    ApiError,
    Role,
    hub_of,
    no_content,
    not_found,
    one_row,
    read_object,
    reply,
    viewer,
)

_SHA = re.compile(r"^[0-9a-fA-F]{40}$")
BAD_NAME = "Reference name must start with 'refs/' and have at least two slashes."


def _check_sha(sha: object) -> str:
    if not isinstance(sha, str) or not _SHA.match(sha):
        raise ApiError(422, "Object does not exist")
    return sha.lower()


def _path_ref(request: web.Request) -> str:
    return "refs/" + request.match_info["ref"].removeprefix("refs/")


async def create_ref(request: web.Request) -> web.Response:
    """``POST /repos/{o}/{r}/git/refs`` ``{"ref": "refs/...", "sha"}``: 201 or 422."""
    acc = repo_access(request, Role.PUSH)
    data = await read_object(request)
    name = data.get("ref")
    if not isinstance(name, str) or not name.startswith("refs/") or name.count("/") < 2:
        raise ApiError(422, BAD_NAME)
    sha, store = _check_sha(data.get("sha")), hub_of(request).store
    with store.write() as db:
        exists = "SELECT 1 FROM refs WHERE repo_id = ? AND ref = ?"
        if db.execute(exists, (acc.id, name)).fetchone():
            raise ApiError(422, "Reference already exists")
        db.execute("INSERT INTO refs VALUES (?, ?, ?)", (acc.id, name, sha))
        me = viewer(request)["id"]
        store.record("create", "ref", actor_id=me, repo_id=acc.id, detail=name)
    resp = reply(render.ref(acc.base, acc.full, name, sha), 201)
    resp.headers["Location"] = f"{acc.base}/repos/{acc.full}/git/{name}"
    return resp


async def get_ref(request: web.Request) -> web.Response:
    """``GET /repos/{o}/{r}/git/ref/{ref}`` (``heads/x``): the ref, or 404."""
    acc = repo_access(request)
    name = _path_ref(request)
    row = one_row(request, "SELECT sha FROM refs WHERE repo_id = ? AND ref = ?", (acc.id, name))
    return reply(render.ref(acc.base, acc.full, name, row["sha"]))


def _refs_with_prefix(request: web.Request, repo_id: int, prefix: str) -> list[tuple[str, str]]:
    rows = hub_of(request).store.db.execute(
        "SELECT ref, sha FROM refs WHERE repo_id = ? AND substr(ref, 1, ?) = ? ORDER BY ref",
        (repo_id, len(prefix), prefix),
    )
    return [(r[0], r[1]) for r in rows]


async def list_refs(request: web.Request) -> web.Response:
    """``GET /repos/{o}/{r}/git/refs``: every ref of the repository."""
    acc = repo_access(request)
    refs = _refs_with_prefix(request, acc.id, "refs/")
    return reply([render.ref(acc.base, acc.full, name, sha) for name, sha in refs])


async def get_refs(request: web.Request) -> web.Response:
    """``GET /repos/{o}/{r}/git/refs/{ref}`` (where a ref's ``url`` points): the ref when
    the name is exact, else the list of refs under it as a prefix, else 404."""
    acc = repo_access(request)
    name = _path_ref(request)
    refs = _refs_with_prefix(request, acc.id, name)
    exact = [sha for ref, sha in refs if ref == name]
    if exact:
        return reply(render.ref(acc.base, acc.full, name, exact[0]))
    under = [(ref, sha) for ref, sha in refs if ref.startswith(name.rstrip("/") + "/")]
    if not under:
        raise not_found()
    return reply([render.ref(acc.base, acc.full, ref, sha) for ref, sha in under])


async def matching_refs(request: web.Request) -> web.Response:
    """``GET /repos/{o}/{r}/git/matching-refs/{ref}``: every ref starting with the prefix."""
    acc = repo_access(request)
    prefix = _path_ref(request)
    rows = hub_of(request).store.db.execute(
        "SELECT ref, sha FROM refs WHERE repo_id = ? AND substr(ref, 1, ?) = ? ORDER BY ref",
        (acc.id, len(prefix), prefix),
    )
    return reply([render.ref(acc.base, acc.full, r[0], r[1]) for r in rows])


async def update_ref(request: web.Request) -> web.Response:
    """``PATCH /repos/{o}/{r}/git/refs/{ref}`` ``{"sha", "force"}`` (a lease refresh)."""
    acc = repo_access(request, Role.PUSH)
    name = _path_ref(request)
    sha, store = _check_sha((await read_object(request)).get("sha")), hub_of(request).store
    with store.write() as db:
        update = "UPDATE refs SET sha = ? WHERE repo_id = ? AND ref = ?"
        if not db.execute(update, (sha, acc.id, name)).rowcount:
            raise ApiError(422, "Reference does not exist")
        me = viewer(request)["id"]
        store.record("push", "ref", actor_id=me, repo_id=acc.id, detail=name)
    return reply(render.ref(acc.base, acc.full, name, sha))


async def delete_ref(request: web.Request) -> web.Response:
    """``DELETE /repos/{o}/{r}/git/refs/{ref}``: 204, or 422 "Reference does not exist"."""
    acc = repo_access(request, Role.PUSH)
    name = _path_ref(request)
    store = hub_of(request).store
    with store.write() as db:
        delete = "DELETE FROM refs WHERE repo_id = ? AND ref = ?"
        if not db.execute(delete, (acc.id, name)).rowcount:
            raise ApiError(422, "Reference does not exist")
        me = viewer(request)["id"]
        store.record("delete", "ref", actor_id=me, repo_id=acc.id, detail=name)
    return no_content()
