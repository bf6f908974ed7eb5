"""Branches and their classic protection: ``GET /repos/{o}/{r}/branches[/{branch}]`` and
``GET/PUT/DELETE .../branches/{branch}/protection``, in GitHub's shapes and statuses.

Branches are the hosted git's ``refs/heads/``; protection is kept and enforced as
:mod:`relay.hub.protection` says (the refs API asks ``api_refs.refused`` before it moves
a branch; a push meets git's ``proc-receive`` hook).
"""

from __future__ import annotations

import time
from typing import Any
from urllib.parse import quote

from aiohttp import web

from relay.hub import protection, render
from relay.hub.api_refs import bare_of
from relay.hub.api_repos import RepoAccess, repo_access
from relay.hub.git import Bare, git_env
from relay.hub.web import ApiError, Role, hub_of, no_content, paged, paging, read_object, reply

DOCS = "https://docs.github.com/rest/branches/branches"
PROTECTION_DOCS = "https://docs.github.com/rest/branches/branch-protection"


def _branch(request: web.Request) -> str:
    return request.match_info["branch"]


def _urls(acc: RepoAccess, branch: str) -> tuple[str, str]:
    """The branch's API URL and its protection's."""
    url = f"{acc.base}/repos/{acc.full}/branches/{quote(branch, safe='')}"
    return url, url + "/protection"


def _heads(bare: Bare) -> dict[str, str]:
    return {name.removeprefix("refs/heads/"): sha for name, sha in bare.refs("refs/heads/")}


async def list_branches(request: web.Request) -> web.Response:
    """``GET /repos/{o}/{r}/branches`` (``?protected=true|false``): short branches."""
    acc = repo_access(request)
    bare = bare_of(request, acc.id)
    guarded = protection.load(bare.path)
    wanted = request.query.get("protected")
    rows = []
    for name, sha in sorted(_heads(bare).items()):
        is_protected = name in guarded
        if wanted is not None and (wanted == "true") != is_protected:
            continue
        rows.append({
            "name": name,
            "commit": {"sha": sha, "url": f"{acc.base}/repos/{acc.full}/commits/{sha}"},
            "protected": is_protected,
        })  # fmt: skip
    page, per_page = paging(request)
    return paged(request, rows[(page - 1) * per_page : page * per_page], len(rows))


async def _commit(acc: RepoAccess, bare: Bare, sha: str) -> dict[str, Any]:
    """The commit object ``GET /branches/{b}`` embeds, read from the hosted git."""
    raw = (await bare.read("cat-file", "commit", sha)) or b""
    head, _, message = raw.decode("utf-8", "replace").partition("\n\n")
    fields: dict[str, list[str]] = {}
    for line in head.splitlines():
        key, _, value = line.partition(" ")
        fields.setdefault(key, []).append(value)
    api, web = f"{acc.base}/repos/{acc.full}", render.web_of(acc.base)

    def person(key: str) -> dict[str, str] | None:
        value = (fields.get(key) or [""])[0]
        name, _, rest = value.partition(" <")
        email, _, when = rest.partition("> ")
        stamp = when.split(" ")[0]
        if not stamp.isdigit():
            return None
        date = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(int(stamp)))
        return {"name": name, "email": email, "date": date}

    tree = (fields.get("tree") or [""])[0]
    return {
        "sha": sha, "node_id": render.node_id("Commit", int(sha[:8], 16)),
        "url": f"{api}/commits/{sha}",
        "html_url": f"{web}/{acc.full}/commit/{sha}",
        "comments_url": f"{api}/commits/{sha}/comments",
        "commit": {
            "url": f"{api}/git/commits/{sha}", "author": person("author"),
            "committer": person("committer"), "message": message.rstrip("\n"),
            "comment_count": 0, "tree": {"sha": tree, "url": f"{api}/git/trees/{tree}"},
        },
        "author": None, "committer": None,
        "parents": [
            {"sha": p, "url": f"{api}/commits/{p}", "html_url": f"{web}/{acc.full}/commit/{p}"}
            for p in fields.get("parent", [])
        ],
    }  # fmt: skip


async def get_branch(request: web.Request) -> web.Response:
    """``GET /repos/{o}/{r}/branches/{branch}``: 404 "Branch not found" when absent."""
    acc = repo_access(request)
    bare = bare_of(request, acc.id)
    branch = _branch(request)
    sha = _heads(bare).get(branch)
    if sha is None:
        raise ApiError(404, "Branch not found", docs=DOCS + "#get-a-branch")
    settings = protection.load(bare.path).get(branch)
    url, protection_url = _urls(acc, branch)
    return reply({
        "name": branch, "commit": await _commit(acc, bare, sha),
        "_links": {"self": url, "html": f"{render.web_of(acc.base)}/{acc.full}/tree/{branch}"},
        "protected": settings is not None, "protection": protection.summary(settings),
        "protection_url": protection_url,
    })  # fmt: skip


def _guarded(request: web.Request, role: Role, docs: str) -> tuple[RepoAccess, Bare, str]:
    """The repository (admin), its git and an existing branch's name."""
    acc = repo_access(request, role)
    bare = bare_of(request, acc.id)
    branch = _branch(request)
    if branch not in _heads(bare):
        raise ApiError(404, "Branch not found", docs=docs)
    return acc, bare, branch


async def get_protection(request: web.Request) -> web.Response:
    """``GET .../branches/{b}/protection``: 404 "Branch not protected" when it is not."""
    docs = PROTECTION_DOCS + "#get-branch-protection"
    acc, bare, branch = _guarded(request, Role.ADMIN, docs)
    settings = protection.load(bare.path).get(branch)
    if settings is None:
        raise ApiError(404, "Branch not protected", docs=docs)
    return reply(_rendered(request, acc, branch, settings))


async def put_protection(request: web.Request) -> web.Response:
    """``PUT .../branches/{b}/protection``: the four required keys, else 422."""
    docs = PROTECTION_DOCS + "#update-branch-protection"
    acc, bare, branch = _guarded(request, Role.ADMIN, docs)
    try:
        body = await read_object(request)
        org_owned = acc.owner["type"] == "Organization"
        settings = protection.normalise(body, org_owned=org_owned)
        if org_owned and body["restrictions"] is not None:  # users and teams of the org
            from relay.hub.api_orgs import restriction_names

            store = hub_of(request).store
            settings["restrictions"] = restriction_names(store, acc, body["restrictions"])
    except (protection.BadSettings, ValueError) as err:
        raise ApiError(422, str(err), docs=docs) from None
    branches = protection.load(bare.path)
    branches[branch] = settings
    protection.save(bare.path, branches, git_env())
    _record(request, acc, "protected", branch)
    return reply(_rendered(request, acc, branch, settings))


def _rendered(
    request: web.Request, acc: RepoAccess, branch: str, settings: dict[str, Any]
) -> dict[str, Any]:
    """The protection object, with the restrictions' users and teams when there are any."""
    url = _urls(acc, branch)[1]
    out = protection.render(url, settings)
    if settings.get("restrictions"):
        from relay.hub.api_orgs import render_restrictions

        names = settings["restrictions"]
        out["restrictions"] = render_restrictions(request, acc, url + "/restrictions", names)
    return out


async def delete_protection(request: web.Request) -> web.Response:
    """``DELETE .../branches/{b}/protection``: 204, or 404 "Branch not protected"."""
    docs = PROTECTION_DOCS + "#delete-branch-protection"
    acc, bare, branch = _guarded(request, Role.ADMIN, docs)
    branches = protection.load(bare.path)
    if branches.pop(branch, None) is None:
        raise ApiError(404, "Branch not protected", docs=docs)
    protection.save(bare.path, branches, git_env())
    _record(request, acc, "unprotected", branch)
    return no_content()


def _record(request: web.Request, acc: RepoAccess, action: str, branch: str) -> None:
    store = hub_of(request).store
    with store.write():
        me = request["viewer"]["id"]
        store.record(action, "branch_protection", actor_id=me, repo_id=acc.id, detail=branch)


B = "/repos/{owner}/{repo}/branches"
ROUTES = (  # a branch name may hold slashes; the protection routes are matched first
    ("GET", B, list_branches),
    ("GET", B + "/{branch:.+}/protection", get_protection),
    ("PUT", B + "/{branch:.+}/protection", put_protection),
    ("DELETE", B + "/{branch:.+}/protection", delete_protection),
    ("GET", B + "/{branch:.+}", get_branch),
)
