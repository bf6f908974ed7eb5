"""GitHub's JSON shapes for the hub's rows: user, repository, label, issue, comment, reaction,
issue event and git ref. Pure functions of a row and the origin the client used.

Field lists follow GitHub's REST responses (the 2022-11-28 API version) so that clients
which read any of those fields find them; values the hub has no notion of are GitHub's
defaults for a plain personal repository (``null``, ``false``, ``0``, ``[]``).
"""

from __future__ import annotations

import base64
import binascii
import json
import secrets
import time
import zlib
from functools import lru_cache
from typing import Any
from urllib.parse import quote

REACTIONS = ("+1", "-1", "laugh", "hooray", "confused", "heart", "rocket", "eyes")
_REPO_URLS = (
    "forks", "teams", "hooks", "events", "tags", "languages", "stargazers", "contributors",
    "subscribers", "subscription", "merges", "downloads", "deployments",
)  # fmt: skip
_REPO_TEMPLATES = (
    ("issue_events", "issues/events", "number"), ("branches", "branches", "branch"),
    ("blobs", "git/blobs", "sha"), ("git_tags", "git/tags", "sha"),
    ("git_refs", "git/refs", "sha"), ("trees", "git/trees", "sha"),
    ("statuses", "statuses", "sha"), ("commits", "commits", "sha"),
    ("git_commits", "git/commits", "sha"), ("comments", "comments", "number"),
    ("issue_comment", "issues/comments", "number"), ("issues", "issues", "number"),
    ("pulls", "pulls", "number"), ("milestones", "milestones", "number"),
    ("labels", "labels", "name"), ("releases", "releases", "id"),
    ("collaborators", "collaborators", "collaborator"), ("keys", "keys", "key_id"),
    ("assignees", "assignees", "user"), ("notifications", "notifications", "id"),
)  # fmt: skip


def stamp(us: int | None) -> str | None:
    """Microseconds since the epoch as GitHub's ``YYYY-MM-DDTHH:MM:SSZ`` (or None)."""
    if us is None:
        return None
    return _second(us // 1_000_000)


@lru_cache(maxsize=4096)
def _second(seconds: int) -> str:
    """One second since the epoch as GitHub writes it (the writes of a second share it)."""
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(seconds))


GHES_PREFIX = "/api/v3"  # a GitHub Enterprise Server's REST API lives under it


def web_of(base: str) -> str:
    """Where people (and git) find what an API base serves: the same origin, without
    GitHub Enterprise Server's ``/api/v3`` (api.github.com's hub shape has none)."""
    return base.removesuffix(GHES_PREFIX)


def node_id(kind: str, ident: int) -> str:
    """An opaque, stable global id in the style of GitHub's legacy node ids."""
    return binascii.b2a_base64(f"0{len(kind)}:{kind}{ident}".encode(), newline=False).decode()


@lru_cache(maxsize=4096)
def user(base: str, ident: int, login: str, kind: str = "User") -> dict[str, Any]:
    """A simple-user object; cached, so callers must not mutate it (its JSON is kept too:
    :func:`encode`)."""
    made = _user(base, ident, login, kind)
    if len(_ENCODED) >= _ENCODED_KEPT:
        _ENCODED.clear()
    _ENCODED[id(made)] = (made, json.dumps(made).encode())
    return made


# A simple-user object's JSON, by the object's id (the object is held, so the id names it
# alone): half of a comment's bytes, encoded once rather than in every answer that embeds it.
_ENCODED: dict[int, tuple[dict[str, Any], bytes]] = {}
_ENCODED_KEPT = 8192
_MARK = f"\x00relay-user-{secrets.token_hex(16)}-"  # no text a client sends can hold it
_MARK_JSON = json.dumps(_MARK).encode()[:-1]  # as it starts in the encoded text


def encode(data: Any) -> bytes:
    """``json.dumps(data).encode()``, byte for byte, faster: each object made by :func:`user`
    under an object's ``user`` key (an object's, or a list's objects') is spliced in as kept."""
    items = data if isinstance(data, list) else [data]
    users: dict[int, tuple[str, bytes]] = {}  # by the object's id: its mark and its JSON
    swapped: list[Any] = []
    for item in items:
        kept = _ENCODED.get(id(item.get("user"))) if isinstance(item, dict) else None
        if kept is None or kept[0] is not item["user"]:
            swapped.append(item)
            continue
        mark = users.setdefault(id(kept[0]), (f"{_MARK}{len(users)}", kept[1]))[0]
        swapped.append({**item, "user": mark})
    if not users:
        return json.dumps(data).encode()
    text = json.dumps(swapped if isinstance(data, list) else swapped[0]).encode()
    if text.count(_MARK_JSON) != sum(a is not b for a, b in zip(items, swapped, strict=True)):
        return json.dumps(data).encode()  # some other text held the mark: nothing is spliced
    for n, (_, encoded) in enumerate(users.values()):  # a mark's JSON: _MARK_JSON, n, '"'
        text = text.replace(b'%s%d"' % (_MARK_JSON, n), encoded)
    return text


def _user(base: str, ident: int, login: str, kind: str) -> dict[str, Any]:
    api, web = f"{base}/users/{login}", web_of(base)
    return {
        "login": login, "id": ident, "node_id": node_id(kind, ident),
        "avatar_url": f"{web}/avatars/u/{ident}", "gravatar_id": "", "url": api,
        "html_url": f"{web}/{login}", "followers_url": f"{api}/followers",
        "following_url": f"{api}/following{{/other_user}}",
        "gists_url": f"{api}/gists{{/gist_id}}",
        "starred_url": f"{api}/starred{{/owner}}{{/repo}}",
        "subscriptions_url": f"{api}/subscriptions", "organizations_url": f"{api}/orgs",
        "repos_url": f"{api}/repos", "events_url": f"{api}/events{{/privacy}}",
        "received_events_url": f"{api}/received_events", "type": kind,
        "user_view_type": "public", "site_admin": False,
    }  # fmt: skip


def user_row(base: str, row: dict[str, Any]) -> dict[str, Any]:
    """A simple-user object from a users row."""
    return user(base, row["id"], row["login"], row["type"])


def public_user(base: str, row: dict[str, Any], *, public_repos: int) -> dict[str, Any]:
    """Anyone's profile, as ``GET /users/{login}`` shows it (GitHub's public user)."""
    extra = {
        "name": None, "company": None, "blog": "", "location": None, "email": None,
        "hireable": None, "bio": None, "twitter_username": None,
        "public_repos": public_repos, "public_gists": 0, "followers": 0, "following": 0,
        "created_at": stamp(row["created_at"]), "updated_at": stamp(row["created_at"]),
    }  # fmt: skip
    return {**user_row(base, row), **extra}


def private_user(
    base: str, row: dict[str, Any], *, public_repos: int, private_repos: int
) -> dict[str, Any]:
    """The authenticated user, as ``GET /user`` shows it: the public profile and what only
    its owner sees."""
    extra = {
        "notification_email": None, "private_gists": 0, "total_private_repos": private_repos,
        "owned_private_repos": private_repos, "disk_usage": 0, "collaborators": 0,
        "two_factor_authentication": False,
        "plan": {"name": "free", "space": 976562499, "private_repos": 10000,
                 "collaborators": 0},
    }  # fmt: skip
    return {**public_user(base, row, public_repos=public_repos), **extra}


def repo(
    base: str, row: dict[str, Any], owner: dict[str, Any], permissions: dict[str, bool] | None
) -> dict[str, Any]:
    """A full repository object."""
    full = f"{owner['login']}/{row['name']}"
    api = f"{base}/repos/{full}"
    web = web_of(base)
    host = web.split("://", 1)[-1]
    urls = {f"{k}_url": f"{api}/{k}" for k in _REPO_URLS}
    templated = {f"{k}_url": f"{api}/{p}{{/{v}}}" for k, p, v in _REPO_TEMPLATES}
    open_issues = row.get("open_issues", 0)
    out: dict[str, Any] = {
        "id": row["id"], "node_id": node_id("Repository", row["id"]), "name": row["name"],
        "full_name": full, "private": bool(row["private"]), "owner": user_row(base, owner),
        "html_url": f"{web}/{full}", "description": row["description"], "fork": False,
        "url": api, **urls, **templated,
        "archive_url": f"{api}/{{archive_format}}{{/ref}}",
        "compare_url": f"{api}/compare/{{base}}...{{head}}",
        "contents_url": f"{api}/contents/{{+path}}",
        "git_url": f"git://{host}/{full}.git", "ssh_url": f"git@{host}:{full}.git",
        "clone_url": f"{web}/{full}.git", "svn_url": f"{web}/{full}", "mirror_url": None,
        "homepage": None, "size": 0, "stargazers_count": 0, "watchers_count": 0,
        "language": None, "has_issues": bool(row.get("has_issues", 1)), "has_projects": True,
        "has_downloads": True,
        "has_wiki": True, "has_pages": False, "has_discussions": False, "forks_count": 0,
        "archived": False, "disabled": False, "open_issues_count": open_issues,
        "license": None, "allow_forking": True, "is_template": False,
        "web_commit_signoff_required": False, "topics": [],
        "visibility": "private" if row["private"] else "public", "forks": 0,
        "open_issues": open_issues, "watchers": 0, "default_branch": row["default_branch"],
        "created_at": stamp(row["created_at"]), "updated_at": stamp(row["updated_at"]),
        "pushed_at": stamp(row["updated_at"]), "network_count": 0, "subscribers_count": 0,
    }  # fmt: skip
    settings = json.loads(row.get("settings") or "{}")
    out.update({name: settings.get(name, default) for name, default in MERGE_SETTINGS.items()})
    out["temp_clone_token"] = _clone_token(row) if row["private"] and permissions else ""
    if owner.get("type") == "Organization":
        out["organization"] = user_row(base, owner)
    if permissions is not None:
        out["permissions"] = permissions
    return out


MERGE_SETTINGS: dict[str, bool | str] = {
    "allow_squash_merge": True, "allow_merge_commit": True, "allow_rebase_merge": True,
    "allow_auto_merge": False, "delete_branch_on_merge": False, "allow_update_branch": False,
    "use_squash_pr_title_as_default": False, "squash_merge_commit_title": "COMMIT_OR_PR_TITLE",
    "squash_merge_commit_message": "COMMIT_MESSAGES", "merge_commit_title": "MERGE_MESSAGE",
    "merge_commit_message": "PR_TITLE",
}  # fmt: skip
"""A repository's pull-request settings and GitHub's defaults for a new one (``PATCH``
sets them; the hub has no pull requests, so they change nothing else)."""


def _clone_token(row: dict[str, Any]) -> str:
    """A stand-in for the short-lived token GitHub gives readers of a private repository."""
    seed = f"{row['id']}:{row['created_at']}".encode()
    return base64.b32encode(zlib.crc32(seed).to_bytes(4, "big") * 5).decode().rstrip("=")


def label(base: str, full: str, row: dict[str, Any]) -> dict[str, Any]:
    """A label object."""
    return {
        "id": row["id"],
        "node_id": node_id("Label", row["id"]),
        "url": f"{base}/repos/{full}/labels/{quote(row['name'], safe='')}",
        "name": row["name"],
        "color": row["color"],
        "default": bool(row.get("is_default")),
        "description": row["description"],
        "archived_at": None,
        "archived_by": None,
    }


def reaction_summary(url: str, counts: dict[str, int] | None) -> dict[str, Any]:
    """The ``reactions`` rollup GitHub embeds in issues and comments."""
    counts = counts or {}
    out: dict[str, Any] = {"url": url, "total_count": sum(counts.values())}
    for content in REACTIONS:
        out[content] = counts.get(content, 0)
    return out


def issue(
    base: str,
    full: str,
    row: dict[str, Any],
    *,
    labels: list[dict[str, Any]],
    author: dict[str, Any],
    association: str,
    reactions: dict[str, int] | None,
    closed_by: dict[str, Any] | None = None,
    single: bool = False,
) -> dict[str, Any]:
    """An issue object (``closed_by`` only on a single-issue answer, as GitHub does)."""
    number = row["number"]
    api = f"{base}/repos/{full}/issues/{number}"
    out = {
        "url": api, "repository_url": f"{base}/repos/{full}",
        "labels_url": f"{api}/labels{{/name}}", "comments_url": f"{api}/comments",
        "events_url": f"{api}/events", "html_url": f"{web_of(base)}/{full}/issues/{number}",
        "id": row["id"], "node_id": node_id("Issue", row["id"]), "number": number,
        "title": row["title"], "user": user_row(base, author),
        "labels": [label(base, full, lab) for lab in labels], "state": row["state"],
        "locked": bool(row.get("locked")), "assignee": None, "assignees": [], "milestone": None,
        "comments": row["comments"], "created_at": stamp(row["created_at"]),
        "updated_at": stamp(row["updated_at"]), "closed_at": stamp(row["closed_at"]),
        "author_association": association, "type": None,
        "active_lock_reason": row.get("lock_reason"),
        "sub_issues_summary": {"total": 0, "completed": 0, "percent_completed": 0},
        "body": row["body"], "reactions": reaction_summary(f"{api}/reactions", reactions),
        "timeline_url": f"{api}/timeline", "performed_via_github_app": None,
        "state_reason": row["state_reason"],
    }  # fmt: skip
    if single:
        out["closed_by"] = None if closed_by is None else user_row(base, closed_by)
    return out


def comment(
    base: str,
    full: str,
    row: dict[str, Any],
    *,
    number: int,
    author: dict[str, Any],
    association: str,
    reactions: dict[str, int] | None,
) -> dict[str, Any]:
    """An issue-comment object."""
    ident = row["id"]
    api = f"{base}/repos/{full}/issues/comments/{ident}"
    return {
        "url": api, "html_url": f"{web_of(base)}/{full}/issues/{number}#issuecomment-{ident}",
        "issue_url": f"{base}/repos/{full}/issues/{number}", "id": ident,
        "node_id": node_id("IssueComment", ident), "user": user_row(base, author),
        "created_at": stamp(row["created_at"]), "updated_at": stamp(row["updated_at"]),
        "author_association": association, "body": row["body"],
        "reactions": reaction_summary(f"{api}/reactions", reactions),
        "performed_via_github_app": None,
    }  # fmt: skip


_text = json.encoder.encode_basestring_ascii  # a string as JSON writes it, quotes and all


@lru_cache(maxsize=1024)
def _comment_urls(base: str, full: str) -> tuple[str, str, str]:
    """A repository's comment URLs up to their ids, as JSON strings without the closing
    quote (ids and numbers are digits, which JSON writes as they are)."""
    return (
        _text(f"{base}/repos/{full}/issues/comments/")[:-1],
        _text(f"{web_of(base)}/{full}/issues/")[:-1],
        _text(f"{base}/repos/{full}/issues/")[:-1],
    )


def _tally(counts: dict[str, int]) -> str:
    """A reactions rollup's counts as JSON writes them (after its ``url``)."""
    each = ", ".join(f'"{c}": {int(counts.get(c, 0))}' for c in REACTIONS)
    return f'"total_count": {sum(counts.values())}, {each}'


_NO_REACTIONS = _tally({})


def _user_json(base: str, author: dict[str, Any]) -> bytes:
    made = user_row(base, author)
    kept = _ENCODED.get(id(made))
    return kept[1] if kept is not None and kept[0] is made else json.dumps(made).encode()


def comment_json(
    base: str,
    full: str,
    row: dict[str, Any],
    *,
    number: int,
    author: dict[str, Any],
    association: str,
    reactions: dict[str, int] | None,
) -> bytes:
    """``json.dumps(comment(...)).encode()``, byte for byte, written straight from the row:
    the answer to every write of a comment, made without the object, its keys escaped again
    or the author's JSON encoded again."""
    api, html, issues = _comment_urls(base, full)
    ident = int(row["id"])
    created, updated = stamp(row["created_at"]), stamp(row["updated_at"])
    counts = reactions or {}
    tally = _NO_REACTIONS if not counts else _tally(counts)
    head = (
        f'{{"url": {api}{ident}", "html_url": {html}{int(number)}#issuecomment-{ident}",'
        f' "issue_url": {issues}{int(number)}", "id": {ident},'
        f' "node_id": "{node_id("IssueComment", ident)}", "user": '
    )
    tail = (
        f', "created_at": {"null" if created is None else _text(created)},'
        f' "updated_at": {"null" if updated is None else _text(updated)},'
        f' "author_association": {_text(association)}, "body": {_text(row["body"])},'
        f' "reactions": {{"url": {api}{ident}/reactions",'
        f' {tally}}}, "performed_via_github_app": null}}'
    )
    return b"".join((head.encode(), _user_json(base, author), tail.encode()))


def reaction(base: str, row: dict[str, Any], author: dict[str, Any]) -> dict[str, Any]:
    """A reaction object."""
    return {
        "id": row["id"],
        "node_id": node_id("Reaction", row["id"]),
        "user": user_row(base, author),
        "content": row["content"],
        "created_at": stamp(row["created_at"]),
    }


def event(base: str, full: str, row: dict[str, Any], actor: dict[str, Any]) -> dict[str, Any]:
    """An issue event (``labeled``, ``unlabeled``, ``closed``, ``reopened``)."""
    out: dict[str, Any] = {
        "id": row["id"], "node_id": node_id("IssueEvent", row["id"]),
        "url": f"{base}/repos/{full}/issues/events/{row['id']}",
        "actor": user_row(base, actor), "event": row["action"], "commit_id": None,
        "commit_url": None, "created_at": stamp(row["created_at"]),
        "performed_via_github_app": None,
    }  # fmt: skip
    if row["label_name"] is not None:
        out["label"] = {"name": row["label_name"], "color": row["label_color"]}
    if row["action"] in ("closed", "reopened"):
        out["state_reason"] = "reopened" if row["action"] == "reopened" else row["detail"]
    if row["action"] == "renamed":
        out["rename"] = json.loads(row["detail"])
    if row["action"] == "locked":
        out["lock_reason"] = row["detail"]
    return out


def ref(base: str, full: str, name: str, sha: str) -> dict[str, Any]:
    """A git reference object."""
    return {
        "ref": name,
        "node_id": node_id("Ref", zlib.crc32(f"{full}:{name}".encode())),
        "url": f"{base}/repos/{full}/git/{name}",
        "object": {
            "sha": sha,
            "type": "commit",
            "url": f"{base}/repos/{full}/git/commits/{sha}",
        },
    }
