"""The contents API, read-only, from the hosted git: ``GET /repos/{o}/{r}/readme`` and
``GET /repos/{o}/{r}/contents/{path}`` (a file, or a folder's entries), at the default
branch unless ``ref`` names another, in GitHub's shapes (``gh repo view`` reads the
README here)."""

from __future__ import annotations

import base64
from typing import Any
from urllib.parse import quote

from aiohttp import web

from relay.hub import render
from relay.hub.api_refs import bare_of
from relay.hub.api_repos import RepoAccess, repo_access
from relay.hub.git import Bare
from relay.hub.web import ApiError, reply

DOCS = "https://docs.github.com/rest/repos/contents"
# the names GitHub prefers for a repository's README, in order; then any README.*
README_NAMES = ("README.md", "README", "README.markdown", "README.rst", "README.txt")


async def _commit(request: web.Request, acc: RepoAccess) -> tuple[Bare, str, str]:
    """The bare git, the commit and the ref name to read at (``ref``, else the default
    branch); GitHub's 404 when there is none."""
    bare = bare_of(request, acc.id)
    ref = request.query.get("ref") or str(acc.row["default_branch"])
    commit = await bare.resolve(ref)
    if commit is None:
        raise ApiError(404, f"No commit found for the ref {ref}", docs=DOCS)
    return bare, commit, ref


async def _entries(bare: Bare, commit: str, path: str) -> list[tuple[str, str, str, int]]:
    """``(type, sha, name, size)`` of a folder's entries, as git lists them."""
    spec = f"{commit}:{path}" if path else f"{commit}^{{tree}}"
    out = await bare.read("ls-tree", "-l", "-z", spec) or b""
    rows = []
    for record in out.decode("utf-8", "replace").split("\0"):
        head, _, name = record.partition("\t")
        parts = head.split()
        if len(parts) == 4 and name:
            rows.append((parts[1], parts[2], name, int(parts[3]) if parts[3].isdigit() else 0))
    return rows


def _item(acc: RepoAccess, ref: str, path: str, kind: str, sha: str, size: int) -> dict[str, Any]:
    """A contents entry (without ``content``): its URLs and ``_links``."""
    web_base = render.web_of(acc.base)
    quoted = quote(path)
    url = f"{acc.base}/repos/{acc.full}/contents/{quoted}?ref={quote(ref)}"
    git_url = f"{acc.base}/repos/{acc.full}/git/{'trees' if kind == 'dir' else 'blobs'}/{sha}"
    html = f"{web_base}/{acc.full}/{'tree' if kind == 'dir' else 'blob'}/{quote(ref)}/{quoted}"
    download = f"{web_base}/{acc.full}/raw/{quote(ref)}/{quoted}" if kind == "file" else None
    return {
        "name": path.rsplit("/", 1)[-1], "path": path, "sha": sha, "size": size, "url": url,
        "html_url": html, "git_url": git_url, "download_url": download, "type": kind,
        "_links": {"self": url, "git": git_url, "html": html},
    }  # fmt: skip


async def _file(
    acc: RepoAccess, bare: Bare, commit: str, ref: str, path: str
) -> dict[str, Any] | None:
    """The file's contents object (base64, in lines of 60 as GitHub sends), or None."""
    data = await bare.file(commit, path)
    sha = await bare.read("rev-parse", f"{commit}:{path}")
    if data is None or sha is None:
        return None
    encoded = base64.b64encode(data).decode()
    lines = "".join(encoded[i : i + 60] + "\n" for i in range(0, len(encoded), 60))
    item = _item(acc, ref, path, "file", sha.decode().strip(), len(data))
    return {**item, "content": lines, "encoding": "base64"}


async def get_readme(request: web.Request) -> web.Response:
    """``GET /repos/{o}/{r}/readme``: the README at the root (404 when there is none)."""
    acc = repo_access(request)
    bare, commit, ref = await _commit(request, acc)
    names = [name for kind, _, name, _ in await _entries(bare, commit, "") if kind == "blob"]
    by_lower = {n.lower(): n for n in names}
    chosen = next((by_lower[n.lower()] for n in README_NAMES if n.lower() in by_lower), None)
    chosen = chosen or next((n for n in sorted(names) if n.lower().startswith("readme.")), None)
    found = await _file(acc, bare, commit, ref, chosen) if chosen else None
    if found is None:
        raise ApiError(404, "Not Found", docs=DOCS + "#get-a-repository-readme")
    return reply(found)


async def get_contents(request: web.Request) -> web.Response:
    """``GET /repos/{o}/{r}/contents/{path}``: a file's contents object, or a folder's
    entries (folders and files, by name); 404 for a path that is not there."""
    acc = repo_access(request)
    bare, commit, ref = await _commit(request, acc)
    path = request.match_info.get("path", "").strip("/")
    kind = await bare.kind(commit, path)
    if kind == "blob":
        found = await _file(acc, bare, commit, ref, path)
        if found is not None:
            return reply(found)
    elif kind == "tree":
        entries = await _entries(bare, commit, path)
        listed = [
            _item(acc, ref, f"{path}/{name}" if path else name,
                  "dir" if git_kind == "tree" else "file", sha, size if git_kind == "blob" else 0)
            for git_kind, sha, name, size in sorted(entries, key=lambda e: e[2])
        ]  # fmt: skip
        return reply(listed)
    raise ApiError(404, "Not Found", docs=DOCS + "#get-repository-content")


ROUTES = (
    ("GET", "/repos/{owner}/{repo}/readme", get_readme),
    ("GET", "/repos/{owner}/{repo}/contents/{path:.+}", get_contents),
    ("GET", "/repos/{owner}/{repo}/contents/", get_contents),
)
DOC_PAGES: dict[object, str] = {
    get_readme: "repos/contents#get-a-repository-readme",
    get_contents: "repos/contents#get-repository-content",
}
