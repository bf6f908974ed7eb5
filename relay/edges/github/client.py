"""``GitHubClient``: exactly the GitHub calls relay makes, typed, and nothing else.

Each method names its endpoint (docs.github.com/rest, sections Users, Repositories,
Issues, Labels, Comments, Reactions, Git references). Lists follow every page. Three
"errors" are answers for relay: creating a label that exists (``False``), removing a label
the issue does not carry (``False``), and creating a ref that exists (``False``: another
worker claimed first; told apart from other 422s by GitHub's message, GITHUB-FACTS #20).
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import AsyncIterator, Collection, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any
from urllib.parse import quote

import gidgethub

from relay.edges.github.models import (
    BranchPattern,
    Comment,
    ContentEdit,
    Environment,
    Issue,
    IssueEvent,
    Label,
    Permission,
    Reaction,
    Ref,
    Repo,
    User,
)
from relay.edges.github.session import DECLINED, ApiSession, iso
from relay.errors import LocalUsageError, RemoteProtocolError

REF_EXISTS = "reference already exists"
LOOK_BACK = timedelta(minutes=15)  # how far back a lost POST's comment is looked for
# a comment and then the issue's labels, in one request (GitHub runs a mutation's fields in
# order): what a baton move that goes with a comment costs
RELABEL = (
    "mutation($issue:ID!,$body:String!,$labels:[ID!]){"
    "addComment(input:{subjectId:$issue,body:$body}){commentEdge{node{url}}}"
    "updateIssue(input:{id:$issue,labelIds:$labels}){issue{number}}}"
)


# a comment's REST id at the end of its url (GitHub's html_url: ``.../issues/7#issuecomment-N``)
_COMMENT_ANCHOR = re.compile(r"#issuecomment-([0-9]+)$")


def _comment_id(node: Any) -> int | None:
    """The REST id of an ``IssueComment`` read over GraphQL, from its ``url`` (None: none
    there). Not its ``databaseId``: an Int, which GitHub's comment ids outgrew in 2024
    (past 2**31 it is an error and null); nor ``fullDatabaseId``, which older Enterprise
    Servers lack (asking for it fails the whole query there). Every version has ``url``."""
    url = node.get("url") if isinstance(node, dict) else None
    found = _COMMENT_ANCHOR.search(url) if isinstance(url, str) else None
    return int(found[1]) if found else None


def _already_exists(exc: gidgethub.HTTPException) -> bool:
    errors = getattr(exc, "errors", None) or []
    return int(exc.status_code) == 422 and any(
        isinstance(e, dict) and e.get("code") == "already_exists" for e in errors
    )


def _name_taken(exc: gidgethub.HTTPException) -> bool:
    errors = getattr(exc, "errors", None) or []
    return int(exc.status_code) == 422 and any(
        isinstance(e, dict) and "already exists" in str(e.get("message", "")) for e in errors
    )


def _ref_exists(exc: gidgethub.HTTPException) -> bool:
    text = str(exc.args[0]) if exc.args else ""
    return int(exc.status_code) == 422 and REF_EXISTS in text.lower()


def _forbidden(exc: gidgethub.HTTPException) -> bool:
    """A 403 that refuses (not one that rate-limits)."""
    from relay.edges.github.transport import is_rate_limited

    text = str(exc.args[0]) if exc.args else ""
    return int(exc.status_code) == 403 and not is_rate_limited(403, exc.headers, text)


def _unreadable(exc: gidgethub.HTTPException) -> bool:
    """A refusal to let this token read (403, not a rate limit) or a 404."""
    return _forbidden(exc) or int(exc.status_code) == 404


def _absent(exc: gidgethub.HTTPException) -> bool:
    text = str(exc.args[0]).lower() if exc.args else ""
    return int(exc.status_code) == 404 or (int(exc.status_code) == 422 and "does not exist" in text)


def _no_graphql(exc: gidgethub.HTTPException) -> bool:
    """A GraphQL endpoint that is missing or refuses the request as such (not a token's
    refusal, not a rate limit): nothing was done, and REST can do it."""
    return int(exc.status_code) in (400, 404, 410, 422)


def _ref_path(ref: str) -> str:
    if not ref.startswith("refs/"):
        raise LocalUsageError(f"git ref {ref!r} must be fully qualified (refs/...)")
    return quote(ref.removeprefix("refs/"), safe="/")


def _name(text: str) -> str:
    return quote(text, safe="")


# A comment's versions as the edit-history reads ask for them (a page of
# ``userContentEdits``, without their text: her versions' text is never downloaded), how
# many pages of them a read goes back, and how many versions' text one request asks for.
_VERSIONS = (
    "{pageInfo{hasNextPage endCursor} nodes{id editedAt editor{login"
    " ... on User{databaseId} ... on Bot{databaseId}}}}"
)
_HISTORY_PAGES = 10
_TEXTS_PER_REQUEST = 50


def _versions(comment_id: int, nodes: list[Any]) -> list[tuple[str, ContentEdit]]:
    """One page of a comment's versions, as relay reads them (an account the API names
    without an id, a deleted one, is none), each with its node id; no text yet."""
    out: list[tuple[str, ContentEdit]] = []
    for version in nodes:
        if not version:
            continue
        editor = version.get("editor")
        who = None
        if isinstance(editor, dict) and editor.get("databaseId") is not None:
            who = User(id=editor["databaseId"], login=editor["login"])
        edit = ContentEdit(comment_id=comment_id, editor=who, edited_at=version["editedAt"])
        out.append((str(version["id"]), edit))
    return out


class GitHubClient(ApiSession):
    """The API as relay uses it: ``async with GitHubClient(api_url=..., token=...) as gh``."""

    # --- account and repository ---

    async def current_user(self) -> User:
        """The account this session acts as: ``GET /user`` for a person's token; for a GitHub
        App (``app=``), its bot ``<slug>[bot]`` — GitHub answers ``GET /user`` with 403 for an
        installation token, so the App says its slug (``GET /app``, with its JWT) and
        ``GET /users/<slug>[bot]`` gives the bot's id."""
        if self.app is not None:
            return await self.get_user(f"{await self.app_slug()}[bot]")
        return self._one(User, await self._get("/user", "the token's account"), "/user")

    async def token_user(self) -> User | None:
        """``GET /user`` for whatever token this is; None when GitHub answers 403, as it
        does for an installation token (a workflow's GITHUB_TOKEN). Other failures raise."""
        what = "the token's account"
        data = await self._get("/user", what, allow=_forbidden)
        return None if data is DECLINED else self._one(User, data, "/user")

    async def app_slug(self) -> str:
        """The slug of the App this session's JWT signs for (``GET /app``)."""
        if self.app is None:
            raise LocalUsageError("this session is not a GitHub App's (no RELAY_APP_ID)")
        what = "the GitHub App (GET /app)"
        with self._errors(what):
            data = await self._wire.getitem("/app", jwt=self.app.jwt())
        slug = data.get("slug") if isinstance(data, dict) else None
        if not isinstance(slug, str) or not slug:
            raise RemoteProtocolError(f"the API at {self.api_url} sent no slug for {what}")
        return slug

    async def get_user(self, login: str) -> User:
        """Anyone's account by login (``GET /users/{login}``)."""
        what = f"the account {login}"
        return self._one(User, await self._get(f"/users/{_name(login)}", what), what)

    async def get_repo(self) -> Repo:
        """The bound repository: visibility, default branch (``GET /repos/{o}/{r}``)."""
        what = f"repository {self.repo}"
        return self._one(Repo, await self._get(self._repo_path, what), what)

    async def create_own_repo(self, name: str, *, private: bool, readme: bool) -> Repo | None:
        """``POST /user/repos``: a repository of the token's account (``readme``: with a first
        commit, GitHub's ``auto_init``); None when the account already has one of that name
        (GitHub's 422 ``name already exists``)."""
        body = {"name": name, "private": private, "auto_init": readme}
        what = f"creating repository {name}"
        made = await self._send("POST", "/user/repos", what, data=body, allow=_name_taken)
        return None if made is DECLINED else self._one(Repo, made, what)

    async def list_own_repos(self) -> list[Repo]:
        """``GET /user/repos``: what the token's account owns or collaborates on."""
        what = "the account's repositories"
        return self._many(Repo, await self._get_all("/user/repos", what), what)

    async def branch_protected(self, branch: str) -> bool | None:
        """Whether ``branch`` is protected (``GET /repos/{o}/{r}/branches/{b}``: needs only
        read access, unlike the protection itself); None when there is no such branch."""
        what = f"branch {branch}"
        data = await self._get(f"{self._repo_path}/branches/{_name(branch)}", what, allow=_absent)
        if data is DECLINED or not isinstance(data, dict):
            return None
        return bool(data.get("protected"))

    async def collaborator_permission(self, login: str) -> Permission:
        """``login``'s permission on the repository: admin, write, read or none."""
        path = f"{self._repo_path}/collaborators/{_name(login)}/permission"
        what = f"the permission of {login}"
        return self._one(Permission, await self._get(path, what), what)

    async def environment(self, name: str) -> Environment | None:
        """A deployment environment (``GET /repos/{o}/{r}/environments/{name}``); None when
        the token may not read it: GitHub's 403 without the Actions read permission, or a
        404 (an environment a job names exists once the job has run)."""
        what = f"environment {name}"
        path = f"{self._repo_path}/environments/{_name(name)}"
        data = await self._get(path, what, allow=_unreadable)
        return None if data is DECLINED else self._one(Environment, data, what)

    async def branch_patterns(self, environment: str) -> list[BranchPattern] | None:
        """The name patterns of an environment's custom deployment branch policies; None
        when the token may not read them."""
        what = f"the deployment branch policies of environment {environment}"
        path = f"{self._repo_path}/environments/{_name(environment)}/deployment-branch-policies"
        items: list[Any] = []
        while True:  # {total_count, branch_policies}: a page of an object, not a list
            page = len(items) // 100 + 1
            data = await self._get(f"{path}?per_page=100&page={page}", what, allow=_unreadable)
            if data is DECLINED or not isinstance(data, dict):
                return None
            got = data.get("branch_policies") or []
            items += got
            if len(got) < 100 or len(items) >= int(data.get("total_count") or 0):
                return self._many(BranchPattern, items, what)

    # --- labels ---

    async def list_labels(self) -> list[Label]:
        """Every label of the repository."""
        data = await self._get_all(f"{self._repo_path}/labels", "the labels")
        return self._many(Label, data, "the labels")

    async def create_label(self, name: str, *, color: str, description: str = "") -> bool:
        """Create a repository label; False when it already exists (left as it is)."""
        body = {"name": name, "color": color.lstrip("#"), "description": description}
        path = f"{self._repo_path}/labels"
        made = await self._send("POST", path, f"label {name!r}", body, allow=_already_exists)
        return made is not DECLINED

    async def update_label(
        self,
        name: str,
        *,
        color: str | None = None,
        description: str | None = None,
        new_name: str | None = None,
    ) -> Label:
        """Change a label's colour, description or name."""
        fields = {"color": color and color.lstrip("#"), "description": description}
        body = {k: v for k, v in {**fields, "new_name": new_name}.items() if v is not None}
        path = f"{self._repo_path}/labels/{_name(name)}"
        what = f"label {name!r}"
        return self._one(Label, await self._send("PATCH", path, what, body), what)

    # --- issues ---

    async def list_issues(
        self,
        *,
        state: str = "open",
        labels: Sequence[str] = (),
        since: datetime | None = None,
        include_pulls: bool = False,
    ) -> list[Issue]:
        """Issues by state, labels (all must match) and last update, every page; the most
        recently updated first. Any issue that joins the list (opened, reopened, relabelled,
        commented) was just updated, so it lands on the first page: an unchanged first page
        (a 304) means no page after it grew, and one request covers up to 100 issues."""
        data = await self._get_all(
            f"{self._repo_path}/issues",
            "the issues",
            changes_first_page=True,
            state=state,
            labels=",".join(labels) or None,
            since=iso(since) if since else None,
            sort="updated",
            direction="desc",
        )
        issues = self._many(Issue, data, "the issues")
        return issues if include_pulls else [i for i in issues if not i.is_pull_request]

    async def get_issue(self, number: int) -> Issue:
        what = f"issue #{number}"
        path = f"{self._repo_path}/issues/{number}"
        return self._one(Issue, await self._get(path, what), what)

    async def create_issue(self, *, title: str, body: str, labels: Sequence[str] = ()) -> Issue:
        """Open an issue with its labels set in the same request."""
        data = {"title": title, "body": body, "labels": list(labels)}
        made = await self._send("POST", f"{self._repo_path}/issues", "a new issue", data)
        return self._one(Issue, made, "the new issue")

    async def update_issue(
        self,
        number: int,
        *,
        title: str | None = None,
        body: str | None = None,
        state: str | None = None,
        state_reason: str | None = None,
        labels: Sequence[str] | None = None,
    ) -> Issue:
        """Change only the given fields (``labels`` replaces them all)."""
        fields: dict[str, Any] = {
            "title": title,
            "body": body,
            "state": state,
            "state_reason": state_reason,
            "labels": None if labels is None else list(labels),
        }
        data = {k: v for k, v in fields.items() if v is not None}
        what = f"issue #{number}"
        path = f"{self._repo_path}/issues/{number}"
        return self._one(Issue, await self._send("PATCH", path, what, data), what)

    async def add_labels(self, number: int, labels: Sequence[str]) -> list[Label]:
        """Add labels to an issue; returns all its labels now."""
        what = f"the labels of issue #{number}"
        path = f"{self._repo_path}/issues/{number}/labels"
        data = await self._send("POST", path, what, {"labels": list(labels)})
        return self._many(Label, data, what)

    async def remove_label(self, number: int, label: str) -> bool:
        """Remove one label from an issue; False when the issue did not carry it."""
        path = f"{self._repo_path}/issues/{number}/labels/{_name(label)}"
        what = f"label {label!r} on issue #{number}"
        return await self._send("DELETE", path, what, allow=_absent) is not DECLINED

    async def set_labels(self, number: int, labels: Sequence[str]) -> list[Label]:
        """Replace all of an issue's labels."""
        what = f"the labels of issue #{number}"
        path = f"{self._repo_path}/issues/{number}/labels"
        data = await self._send("PUT", path, what, {"labels": list(labels)})
        return self._many(Label, data, what)

    async def list_issue_events(self, number: int) -> list[IssueEvent]:
        """The issue's events (labeled, unlabeled, closed...) with who did them."""
        what = f"the events of issue #{number}"
        data = await self._get_all(f"{self._repo_path}/issues/{number}/events", what)
        return self._many(IssueEvent, data, what)

    # --- comments and reactions ---

    async def list_comments(self, number: int, *, since: datetime | None = None) -> list[Comment]:
        """An issue's comments, oldest first; ``since`` keeps those updated after it."""
        what = f"the comments of issue #{number}"
        path = f"{self._repo_path}/issues/{number}/comments"
        data = await self._get_all(path, what, since=iso(since) if since else None)
        return self._many(Comment, data, what)

    async def create_comment(self, number: int, body: str) -> Comment:
        """Post a comment, once: when the answer to the POST is lost, the newest comments
        are searched for the same body before it is sent again."""
        what = f"a comment on issue #{number}"
        path = f"{self._repo_path}/issues/{number}/comments"
        started = datetime.fromtimestamp(self._clock(), UTC)

        async def posted() -> Any:
            return await self._posted_comment(number, body, started)

        made = await self._send("POST", path, what, {"body": body}, probe=posted)
        return self._one(Comment, made, what)

    async def _posted_comment(self, number: int, body: str, started: datetime) -> Any:
        """The newest comment on the issue with ``body``, posted since ``started`` (what a
        POST whose answer was lost may have created), or None."""
        what = f"the comments of issue #{number}"
        path = f"{self._repo_path}/issues/{number}/comments"
        recent = await self._get_all(path, what, since=iso(started - LOOK_BACK))
        wanted = body.replace("\r\n", "\n")
        same = [
            c
            for c in recent
            if isinstance(c, dict) and str(c.get("body", "")).replace("\r\n", "\n") == wanted
        ]
        return same[-1] if same else None

    async def comment_and_relabel(
        self, number: int, body: str, *, issue_id: str, label_ids: Sequence[str]
    ) -> tuple[int | None, bool]:
        """Post ``body`` on the issue, then set its labels to ``label_ids``: one request, a
        GraphQL mutation whose two fields GitHub runs in order (one content-creating
        request where REST needs two). The comment's id (None: it was not posted) and
        whether the labels were set. A lost answer is looked for as :meth:`create_comment`
        looks: a comment found is the answer, the labels then unknown (False)."""
        what = f"a comment on issue #{number}"
        started = datetime.fromtimestamp(self._clock(), UTC)
        variables = {"issue": issue_id, "body": body, "labels": list(label_ids)}

        async def posted() -> Any:
            found = await self._posted_comment(number, body, started)
            if found is None:
                return None
            node = {"url": found.get("html_url")}
            return {"data": {"addComment": {"commentEdge": {"node": node}}, "updateIssue": None}}

        payload = {"query": RELABEL, "variables": variables}
        answer = await self._send(
            "POST", self.graphql_url, what, payload, probe=posted, allow=_no_graphql
        )
        if answer is DECLINED:  # no GraphQL here (nothing was done): the caller uses REST
            return None, False
        data = answer.get("data") if isinstance(answer, dict) else None
        data = data if isinstance(data, dict) else {}
        edge = (data.get("addComment") or {}).get("commentEdge") or {}
        made = _comment_id(edge.get("node"))
        if made is None and edge.get("node"):  # posted, but its id unread: look, never post twice
            found = await self._posted_comment(number, body, started)
            made = found.get("id") if isinstance(found, dict) else None
        moved = bool((data.get("updateIssue") or {}).get("issue"))
        return (made if isinstance(made, int) else None), moved

    async def label_node_id(self, name: str) -> str | None:
        """GraphQL's id of the repository's label ``name`` (None: no such label)."""
        what = f"label {name!r}"
        path = f"{self._repo_path}/labels/{_name(name)}"
        found = await self._get(path, what, allow=_absent)
        if found is DECLINED:
            return None
        return self._one(Label, found, what).node_id or None

    async def update_comment(self, comment_id: int, body: str) -> Comment:
        what = f"comment {comment_id}"
        path = f"{self._repo_path}/issues/comments/{comment_id}"
        return self._one(Comment, await self._send("PATCH", path, what, {"body": body}), what)

    async def create_reaction(self, comment_id: int, content: str) -> Reaction:
        """React to a comment (e.g. ``eyes``); reacting twice returns the first reaction."""
        what = f"a reaction on comment {comment_id}"
        path = f"{self._repo_path}/issues/comments/{comment_id}/reactions"
        made = await self._send("POST", path, what, {"content": content})
        return self._one(Reaction, made, what)

    async def list_reactions(self, comment_id: int) -> list[Reaction]:
        """Every reaction on a comment (to find a person's 👍 approving a TASK)."""
        path = f"{self._repo_path}/issues/comments/{comment_id}/reactions"
        what = f"the reactions on comment {comment_id}"
        return self._many(Reaction, await self._get_all(path, what), what)

    # --- git refs: the atomic claim ---

    async def create_ref(self, ref: str, sha: str) -> bool:
        """Create ``ref`` at ``sha``; False when it already exists (someone claimed first)."""
        data = {"ref": ref, "sha": sha}
        path = f"{self._repo_path}/git/refs"

        async def created() -> Any:  # a lost answer: the ref at our sha is our own creation
            found = await self._get(
                f"{self._repo_path}/git/ref/{_ref_path(ref)}", f"git ref {ref}", allow=_absent
            )
            target = found.get("object", {}) if isinstance(found, dict) else {}
            return found if isinstance(target, dict) and target.get("sha") == sha else None

        made = await self._send(
            "POST", path, f"git ref {ref}", data, allow=_ref_exists, probe=created
        )
        return made is not DECLINED

    async def get_ref(self, ref: str) -> Ref | None:
        """The ref and the sha it points at, or None when it does not exist."""
        what = f"git ref {ref}"
        path = f"{self._repo_path}/git/ref/{_ref_path(ref)}"
        data = await self._get(path, what, allow=_absent)
        return None if data is DECLINED else self._one(Ref, data, what)

    async def delete_ref(self, ref: str) -> bool:
        """Delete ``ref``; False when it did not exist."""
        path = f"{self._repo_path}/git/refs/{_ref_path(ref)}"
        return await self._send("DELETE", path, f"git ref {ref}", allow=_absent) is not DECLINED

    # --- GraphQL: who last edited (REST does not say) ---

    @property
    def graphql_url(self) -> str:
        """GitHub's GraphQL endpoint beside this REST API: ``/graphql`` on api.github.com
        and the hub, ``/api/graphql`` on a GitHub Enterprise Server (``/api/v3``)."""
        base = self.api_url.rstrip("/")
        if base.endswith("/api/v3"):
            return base.removesuffix("/v3") + "/graphql"
        return base + "/graphql"

    async def last_editor(self, issue: int, comment_id: int | None = None) -> str | None:
        """The login GitHub names as the last editor of an issue's body (or of one of its
        comments), for telling the thread who changed it; None when GitHub names nobody
        or cannot be asked (a missing GraphQL endpoint never stops a pass)."""
        owner, _, name = (self.repo or "").partition("/")
        try:
            if comment_id is None:
                query = (
                    "query($owner:String!,$name:String!,$number:Int!){repository(owner:$owner,"
                    "name:$name){issue(number:$number){editor{login}}}}"
                )
                data = await self._wire.graphql(
                    query, endpoint=self.graphql_url, owner=owner, name=name, number=issue
                )
                edited = ((data.get("repository") or {}).get("issue") or {}).get("editor")
            else:
                rest = await self._wire.getitem(f"{self._repo_path}/issues/comments/{comment_id}")
                query = "query($id:ID!){node(id:$id){... on IssueComment{editor{login}}}}"
                data = await self._wire.graphql(
                    query, endpoint=self.graphql_url, id=rest.get("node_id", "")
                )
                edited = (data.get("node") or {}).get("editor")
        except (gidgethub.GitHubException, ValueError, AttributeError, TypeError):
            return None
        login = edited.get("login") if isinstance(edited, dict) else None
        return login if isinstance(login, str) and login else None

    async def comment_edits(
        self,
        issue: int,
        accounts: frozenset[int] = frozenset(),
        comments: Collection[int] | None = None,
    ) -> tuple[list[ContentEdit], frozenset[int]] | None:
        """The edit histories (GraphQL's ``userContentEdits``: who wrote each version, when,
        and, for the versions ``accounts`` wrote, its text) of the issue's ``comments``
        (their REST ids; None: every comment), and the ids of the comments whose whole
        history that is. Each comment's newest hundred versions, and further back, a
        hundred a page up to ``_HISTORY_PAGES`` pages, until one of ``accounts`` wrote one
        (its worker's: someone else's hundred edits must not hide its last beat). One light
        listing of the issue's comments names them (ids and urls), then one read each,
        without text, then the text of the versions ``accounts`` wrote, by their ids: her
        versions' text, however large, is never downloaded, and a comment whose history
        cannot be read is left unread (its claim lives by its last edit) without the
        others. None when GraphQL cannot be asked."""
        listing = (
            "query($owner:String!,$name:String!,$number:Int!,$after:String){repository("
            "owner:$owner,name:$name){issue(number:$number){comments(first:100,after:$after)"
            "{pageInfo{hasNextPage endCursor} nodes{id url}}}}}"
        )
        named: dict[int, str] = {}
        try:
            async for nodes in self._comment_pages(listing, issue, pages=200):
                for node in nodes:
                    if not node:
                        continue
                    comment_id = _comment_id(node)
                    if comment_id is None:
                        return None  # no id to name its edits by: as good as no answer
                    if comments is None or comment_id in comments:
                        named[comment_id] = str(node["id"])
            read = await asyncio.gather(
                *(self._history(comment_id, node, accounts) for comment_id, node in named.items())
            )
        except (gidgethub.GitHubException, ValueError, KeyError, TypeError):
            return None
        edits = [edit for found, _ in read for edit in found]
        return edits, frozenset(c for c, (_, whole) in zip(named, read, strict=True) if whole)

    async def _history(
        self, comment_id: int, node: str, accounts: frozenset[int]
    ) -> tuple[list[ContentEdit], bool]:
        """One comment's versions, newest first, back until one of ``accounts`` wrote one
        or ``_HISTORY_PAGES`` pages were read, with the text of the versions ``accounts``
        wrote, and whether that is its whole history; none, and not whole, when GitHub
        will not give it all (this comment is then unread: its claim lives by its last
        edit; the others stand)."""
        query = (
            "query($id:ID!,$after:String){node(id:$id){... on IssueComment{"
            "userContentEdits(first:100,after:$after)" + _VERSIONS + "}}}"
        )
        found: list[tuple[str, ContentEdit]] = []
        after: str | None = None
        whole = False
        try:
            for _ in range(_HISTORY_PAGES):
                answer = await self._wire.graphql(
                    query, endpoint=self.graphql_url, id=node, after=after
                )
                history = answer["node"]["userContentEdits"] or {"nodes": [], "pageInfo": {}}
                page = _versions(comment_id, history["nodes"])
                found += page
                info = history["pageInfo"]
                if not info.get("hasNextPage"):
                    whole = True
                    break
                if any(e.editor is not None and e.editor.id in accounts for _, e in page):
                    break  # (read in part)
                after = info.get("endCursor")
            keys = [k for k, e in found if e.editor is not None and e.editor.id in accounts]
            texts = await self._version_texts(keys)
        except (gidgethub.GitHubException, ValueError, LookupError, TypeError):
            return [], False
        edits = [e.model_copy(update={"body": texts[k]}) if k in texts else e for k, e in found]
        return edits, whole

    async def _version_texts(self, keys: Sequence[str]) -> dict[str, str | None]:
        """The text (``diff``) of the versions whose node ids are ``keys``, a batch a
        request: None for a version whose text was removed from the history. A version
        the answer does not name is no answer (KeyError), never a removed text."""
        query = "query($ids:[ID!]!){nodes(ids:$ids){... on UserContentEdit{id diff}}}"
        texts: dict[str, str | None] = {}
        for at in range(0, len(keys), _TEXTS_PER_REQUEST):
            batch = list(keys[at : at + _TEXTS_PER_REQUEST])
            answer = await self._wire.graphql(query, endpoint=self.graphql_url, ids=batch)
            for asked, version in zip(batch, answer["nodes"], strict=True):
                if not isinstance(version, dict) or version.get("id") != asked:
                    raise KeyError(asked)
                diff = version.get("diff")
                texts[asked] = diff if isinstance(diff, str) else None
        return texts

    async def _comment_pages(self, query: str, issue: int, *, pages: int) -> AsyncIterator[Any]:
        """Each page of the issue's comments as ``query`` reads them (``$owner``, ``$name``,
        ``$number``, and ``$after`` its cursor), up to ``pages`` pages: past that, ValueError
        (the reader's answer would be a part taken for the whole)."""
        owner, _, name = (self.repo or "").partition("/")
        after: str | None = None
        for _ in range(pages):
            data = await self._wire.graphql(
                query, endpoint=self.graphql_url, owner=owner, name=name, number=issue,
                after=after,
            )  # fmt: skip
            page = data["repository"]["issue"]["comments"]
            yield page["nodes"]
            if not page["pageInfo"]["hasNextPage"]:
                return
            after = page["pageInfo"]["endCursor"]
        raise ValueError(f"issue {issue} has more comments than {pages} pages")

    async def ever_edited(self, issue: int) -> frozenset[int] | None:
        """The ids of the issue's comments GitHub records as ever edited (GraphQL's
        ``lastEditedAt``): REST's timestamps are whole seconds, so an edit made within the
        second a comment was posted looks unedited there. None when GraphQL cannot be
        asked (the caller then has only REST's timestamps)."""
        query = (
            "query($owner:String!,$name:String!,$number:Int!,$after:String){repository("
            "owner:$owner,name:$name){issue(number:$number){comments(first:100,after:$after)"
            "{pageInfo{hasNextPage endCursor} nodes{url lastEditedAt}}}}}"
        )
        edited: set[int] = set()
        try:
            async for nodes in self._comment_pages(query, issue, pages=100):
                ids = [_comment_id(n) for n in nodes if n and n.get("lastEditedAt")]
                if None in ids:
                    return None  # an edited comment it cannot name: as good as no answer
                edited |= {i for i in ids if i is not None}
        except (gidgethub.GitHubException, ValueError, KeyError, TypeError):
            return None
        return frozenset(edited)
        return None
