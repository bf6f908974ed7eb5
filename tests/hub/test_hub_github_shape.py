"""What other clients meet on GitHub and now on the hub: JSON 404s for every API path it
does not serve, ETags and Locations on writes, GitHub's default labels and repository
fields, repositories by id, renames with GitHub's redirects (API and git), the
repository-wide comment list's sort, the token's scopes, and the Enterprise ``/api/v3``."""

from __future__ import annotations

import http.client
import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
from hubcalls import get_text, git, git_url, push_commit

from relay.hub.web import PAGE_PATHS, canonical_path

# the labels GitHub gives every new repository, as its API lists them (name, colour, description)
GITHUB_DEFAULT_LABELS = (
    ("bug", "d73a4a", "Something isn't working"),
    ("documentation", "0075ca", "Improvements or additions to documentation"),
    ("duplicate", "cfd3d7", "This issue or pull request already exists"),
    ("enhancement", "a2eeef", "New feature or request"),
    ("good first issue", "7057ff", "Good for newcomers"),
    ("help wanted", "008672", "Extra attention is needed"),
    ("invalid", "e4e669", "This doesn't seem right"),
    ("question", "d876e3", "Further information is requested"),
    ("wontfix", "ffffff", "This will not be worked on"),
)
MERGE_FIELDS = {
    "allow_squash_merge": True, "allow_merge_commit": True, "allow_rebase_merge": True,
    "allow_auto_merge": False, "delete_branch_on_merge": False, "allow_update_branch": False,
    "use_squash_pr_title_as_default": False, "squash_merge_commit_title": "COMMIT_OR_PR_TITLE",
    "squash_merge_commit_message": "COMMIT_MESSAGES", "merge_commit_title": "MERGE_MESSAGE",
    "merge_commit_message": "PR_TITLE",
}  # fmt: skip


@pytest.mark.parametrize(
    "path",
    ["/orgs/x/hooks", "/search/issues?q=a", "/repositories/1/nope", "/gists", "/api/v3/nope"],
)
def test_an_api_path_the_hub_does_not_serve_is_githubs_json_404(
    api: Any, alice: str, path: str
) -> None:
    got = api(alice, "GET", path)
    assert got.status == 404 and got.headers["content-type"].startswith("application/json")
    assert got.body == {
        "message": "Not Found", "documentation_url": "https://docs.github.com/rest",
        "status": "404",
    }  # fmt: skip
    assert int(got.headers["x-ratelimit-remaining"]) < int(got.headers["x-ratelimit-limit"])
    assert got.headers["x-ratelimit-resource"] == ("search" if "/search/" in path else "core")


def test_a_page_the_hub_does_not_serve_keeps_its_html_404(hub: Any) -> None:
    status, kind, _ = get_text(hub.url, "/alice/nothing-here/pulls")
    assert status == 404 and kind.startswith("text/html")


def test_write_answers_carry_an_etag_and_201s_a_location(
    api: Any, alice: str, bob: str, unique: str
) -> None:
    made = api(alice, "POST", "/user/repos", {"name": f"shape-{unique}"})
    assert made.status == 201 and made.headers["location"] == made.body["url"]
    assert re.fullmatch(r'"[0-9a-f]{32}"', made.headers["etag"])  # a strong tag, as GitHub's
    r = f"/repos/alice/shape-{unique}"
    issue = api(alice, "POST", f"{r}/issues", {"title": "t"})
    edited = api(alice, "PATCH", f"{r}/issues/{issue.body['number']}", {"body": "b"})
    assert edited.status == 200
    # GitHub's tag names the representation: the write's equals what a GET then answers,
    # and a client may revalidate with it at once
    again = api(alice, "GET", f"{r}/issues/{issue.body['number']}")
    assert again.body == edited.body  # (a read's tag is weak, W/"...", as GitHub's)
    assert again.headers["etag"].removeprefix("W/") == edited.headers["etag"]
    fresh = api(alice, "GET", f"{r}/issues/{issue.body['number']}",
                headers={"If-None-Match": edited.headers["etag"]})  # fmt: skip
    assert fresh.status == 304
    reaction = api(alice, "POST", f"{r}/issues/{issue.body['number']}/reactions", {"content": "+1"})
    assert reaction.status == 201
    assert reaction.headers["location"] == (f"{issue.body['url']}/reactions/{reaction.body['id']}")
    again = api(alice, "POST", f"{r}/issues/{issue.body['number']}/reactions", {"content": "+1"})
    assert again.status == 200 and "location" not in again.headers
    invited = api(alice, "PUT", f"{r}/collaborators/bob", {})
    assert invited.status == 201 and invited.headers["location"] == invited.body["url"]
    assert api(bob, "GET", r).status == 200  # the hub's default: added at once


def test_a_new_repository_has_githubs_nine_default_labels(
    api: Any, alice: str, unique: str
) -> None:
    r = f"/repos/alice/labels-{unique}"
    api(alice, "POST", "/user/repos", {"name": f"labels-{unique}"})
    listed = api(alice, "GET", f"{r}/labels").body
    assert [(x["name"], x["color"], x["description"], x["default"]) for x in listed] == [
        (*label, True) for label in GITHUB_DEFAULT_LABELS
    ]
    mine = api(alice, "POST", f"{r}/labels", {"name": "relay:job", "color": "0e8a16"}).body
    assert mine["default"] is False


def test_the_repository_has_githubs_merge_settings_and_patch_sets_them(
    api: Any, alice: str, bob: str, unique: str
) -> None:
    r = f"/repos/alice/merge-{unique}"
    made = api(alice, "POST", "/user/repos", {"name": f"merge-{unique}", "private": True}).body
    assert {k: made[k] for k in MERGE_FIELDS} == MERGE_FIELDS
    assert made["temp_clone_token"] and "organization" not in made
    changed = api(
        alice, "PATCH", r, {"allow_merge_commit": False, "merge_commit_title": "PR_TITLE"}
    )
    assert changed.status == 200
    assert (changed.body["allow_merge_commit"], changed.body["merge_commit_title"]) == (
        False, "PR_TITLE",
    )  # fmt: skip
    assert api(alice, "GET", r).body["allow_squash_merge"] is True
    bad = api(alice, "PATCH", r, {"merge_commit_title": "WHATEVER"})
    assert bad.status == 422 and bad.body["errors"][0]["field"] == "merge_commit_title"
    bad = api(alice, "PATCH", r, {"allow_rebase_merge": "no"})
    assert bad.status == 422 and bad.body["errors"][0]["field"] == "allow_rebase_merge"


def test_a_repository_is_served_by_its_id(api: Any, alice: str, bob: str, unique: str) -> None:
    made = api(alice, "POST", "/user/repos", {"name": f"byid-{unique}", "private": True}).body
    by_id = f"/repositories/{made['id']}"
    assert api(alice, "GET", by_id).body["full_name"] == f"alice/byid-{unique}"
    patched = api(alice, "PATCH", by_id, {"description": "by id"})
    assert patched.status == 200 and patched.body["description"] == "by id"
    issue = api(alice, "POST", f"{by_id}/issues", {"title": "through the id"})
    assert issue.status == 201 and issue.body["url"].endswith(
        f"/repos/alice/byid-{unique}/issues/1"
    )
    assert [i["title"] for i in api(alice, "GET", f"{by_id}/issues").body] == ["through the id"]
    assert api(bob, "GET", by_id).status == 404  # hidden by id as by name
    refused = api(alice, "GET", f"{by_id}/issues/99")
    assert refused.body["documentation_url"].endswith("issues/issues#get-an-issue")


def test_refs_with_a_trailing_slash_lists_every_ref(
    hub: Any, api: Any, alice: str, unique: str, tmp_path: Path
) -> None:
    api(alice, "POST", "/user/repos", {"name": f"refs-{unique}"})
    full = f"alice/refs-{unique}"
    sha = push_commit(hub.url, alice, full, tmp_path)
    api(alice, "POST", f"/repos/{full}/git/refs", {"ref": "refs/relay/claims/1", "sha": sha})
    slash = api(alice, "GET", f"/repos/{full}/git/refs/")
    assert slash.status == 200
    assert [x["ref"] for x in slash.body] == ["refs/heads/main", "refs/relay/claims/1"]
    assert slash.body == api(alice, "GET", f"/repos/{full}/git/refs").body


def test_a_renamed_repository_redirects_as_github_does(
    hub: Any, api: Any, alice: str, bob: str, unique: str, tmp_path: Path
) -> None:
    old, new = f"old-{unique}", f"new-{unique}"
    made = api(alice, "POST", "/user/repos", {"name": old}).body
    push_commit(hub.url, alice, f"alice/{old}", tmp_path)
    renamed = api(alice, "PATCH", f"/repos/alice/{old}", {"name": new})
    assert renamed.status == 200 and renamed.body["full_name"] == f"alice/{new}"
    base = f"{hub.url}/repositories/{made['id']}"

    status, headers, body = _unfollowed(
        hub.url, alice, "GET", f"/repos/alice/{old}/issues?state=all"
    )
    assert status == 301 and headers["location"] == f"{base}/issues?state=all"
    assert body["message"] == "Moved Permanently" and body["url"] == f"{base}/issues?state=all"
    status, headers, body = _unfollowed(hub.url, alice, "POST", f"/repos/alice/{old}/issues")
    assert status == 307 and headers["location"] == f"{base}/issues"
    assert body["message"] == "Temporary Redirect"
    status, headers, _ = _unfollowed(hub.url, alice, "GET", f"/api/v3/repos/alice/{old}")
    assert status == 301 and headers["location"] == f"{hub.url}/api/v3/repositories/{made['id']}"
    assert api(alice, "GET", f"/repos/alice/{old}").body["full_name"] == f"alice/{new}"  # followed
    assert api(alice, "GET", f"/repos/alice/{new}").status == 200

    # git: the old URL is redirected to the new one, as GitHub's git host does
    cloned = git("clone", "-q", git_url(hub.url, f"alice/{old}", alice), str(tmp_path / "c"))
    assert cloned.returncode == 0
    remote = git("ls-remote", git_url(hub.url, f"alice/{old}", alice)).stdout
    assert "refs/heads/main" in remote

    # its pages move with it
    status, headers, _ = _unfollowed(hub.url, alice, "GET", f"/alice/{old}/issues?state=open")
    assert status == 301 and headers["location"] == f"/alice/{new}/issues?state=open"

    # a name reused by a new repository is that repository's from then on
    api(alice, "POST", "/user/repos", {"name": old})
    assert api(alice, "GET", f"/repos/alice/{old}").body["id"] != made["id"]
    # a private repository's old name tells a stranger nothing
    api(alice, "POST", "/user/repos", {"name": f"secret-{unique}", "private": True})
    api(alice, "PATCH", f"/repos/alice/secret-{unique}", {"name": f"secret2-{unique}"})
    assert api(bob, "GET", f"/repos/alice/secret-{unique}").status == 404


def _unfollowed(url: str, token: str, method: str, path: str) -> tuple[int, dict[str, str], Any]:
    """One request whose redirect is not followed (urllib follows a GET's): status,
    lowercased headers, JSON body."""
    parts = urlsplit(url)
    conn = http.client.HTTPConnection(parts.hostname or "", parts.port, timeout=10)
    try:
        body = b"{}" if method != "GET" else None
        conn.request(method, path, body, {"Authorization": f"token {token}"})
        resp = conn.getresponse()
        raw = resp.read()
        data = json.loads(raw) if raw.startswith(b"{") else raw
        return resp.status, {k.lower(): v for k, v in resp.getheaders()}, data
    finally:
        conn.close()


def test_repository_comments_sort_and_direction_as_github_applies_them(
    api: Any, alice: str, unique: str
) -> None:
    r = f"/repos/alice/sort-{unique}"
    api(alice, "POST", "/user/repos", {"name": f"sort-{unique}"})
    one = api(alice, "POST", f"{r}/issues", {"title": "1"}).body["number"]
    ids = [
        api(alice, "POST", f"{r}/issues/{one}/comments", {"body": str(n)}).body["id"]
        for n in range(3)
    ]
    api(alice, "PATCH", f"{r}/issues/comments/{ids[0]}", {"body": "edited"})

    def order(query: str) -> list[int]:
        return [c["id"] for c in api(alice, "GET", f"{r}/issues/comments{query}").body]

    assert order("") == ids  # oldest first
    assert order("?direction=desc") == ids  # direction is ignored without sort
    assert order("?sort=created") == ids[::-1]  # with sort, newest first by default
    assert order("?sort=created&direction=asc") == ids
    assert order("?sort=updated&direction=desc")[0] == ids[0]  # the edited one
    assert api(alice, "GET", f"{r}/issues/comments?sort=size").status == 422
    per_issue = [
        c["id"]
        for c in api(alice, "GET", f"{r}/issues/{one}/comments?sort=created&direction=desc").body
    ]
    assert per_issue == ids  # the per-issue list has no sort


def test_a_classic_token_says_its_scopes_and_a_fine_grained_one_none(
    hub: Any, api: Any, alice: str, http: Any
) -> None:
    got = api(alice, "GET", "/repos/alice/nothing")
    scopes = got.headers["x-oauth-scopes"].split(", ")
    assert {"repo", "admin:org", "workflow"} <= set(scopes)
    assert got.headers["x-accepted-oauth-scopes"] == "repo"
    assert api(alice, "GET", "/user").headers["x-accepted-oauth-scopes"] == "user"
    long = subprocess.run(
        [sys.executable, "-m", "relay.cli", "hub", "token", "carol", "--long", "--data",
         str(hub.data_dir)], capture_output=True, text=True, check=True,
    ).stdout.strip()  # fmt: skip
    fine = http(hub.url, long, "GET", "/user")
    assert fine.status == 200 and "x-oauth-scopes" not in fine.headers


def test_the_enterprise_prefix_serves_the_same_api_with_its_urls(
    hub: Any, api: Any, alice: str, unique: str
) -> None:
    r = f"/api/v3/repos/alice/ghes-{unique}"
    made = api(alice, "POST", "/api/v3/user/repos", {"name": f"ghes-{unique}"})
    assert made.status == 201 and made.headers["location"] == f"{hub.url}{r}"
    assert made.body["html_url"] == f"{hub.url}/alice/ghes-{unique}"
    assert made.body["clone_url"] == f"{hub.url}/alice/ghes-{unique}.git"
    assert made.body["owner"]["url"] == f"{hub.url}/api/v3/users/alice"
    for n in range(3):
        api(alice, "POST", f"{r}/issues", {"title": f"i{n}"})
    page = api(alice, "GET", f"{r}/issues?per_page=1")
    assert f'<{hub.url}{r}/issues?per_page=1&page=2>; rel="next"' in page.headers["link"]
    assert page.body[0]["url"] == f"{hub.url}{r}/issues/3"
    assert page.body[0]["html_url"] == f"{hub.url}/alice/ghes-{unique}/issues/3"
    same = api(alice, "GET", f"/repos/alice/ghes-{unique}/issues?per_page=1").body[0]
    assert same["url"] == f"{hub.url}/repos/alice/ghes-{unique}/issues/3"
    assert {k: v for k, v in same.items() if "url" not in k and k not in ("user", "reactions")} == {
        k: v for k, v in page.body[0].items() if "url" not in k and k not in ("user", "reactions")
    }
    missing = api(alice, "GET", f"{r}/issues/99")
    assert missing.body["documentation_url"].endswith("issues/issues#get-an-issue")
    root = api(alice, "GET", "/api/v3/")
    assert root.body["current_user_url"] == f"{hub.url}/api/v3/user"
    assert root.body["current_user_authorizations_html_url"].startswith(f"{hub.url}/settings/")


def test_every_api_route_names_its_operations_documentation_page(tmp_path: Path) -> None:
    from relay.hub.app import build_app
    from relay.hub.middleware import DOC_PAGES

    app = build_app(tmp_path / "data")
    pages = app[DOC_PAGES]
    missing = set()
    for route in app.router.routes():
        path = route.resource.canonical if route.resource is not None else ""
        skip = ("/_hub/", "/graphql", "/api/graphql", "/{owner}/{repo}.git")
        if route.method == "HEAD" or path.startswith(skip) or path in app[PAGE_PATHS]:
            continue
        page = pages.get((route.method, canonical_path(path)))
        if page is None or not page.startswith("https://docs.github.com/rest/") or "#" not in page:
            missing.add((route.method, path))
    assert missing == set()


def test_relay_hub_env_gh_refuses_a_plain_http_hub_in_one_line(hub: Any) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "relay.cli", "hub", "env", "gh", "alice", "--data",
         str(hub.data_dir)], capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert done.returncode != 0 and done.stdout == ""
    said = done.stderr.strip().splitlines()
    assert said[0].startswith(f"relay: the hub at {hub.url} serves plain HTTP")
    assert any("relay hub --tls" in line for line in said)


def test_protection_restrictions_decide_who_may_push_to_an_org_branch(
    hub: Any, api: Any, alice: str, unique: str, tmp_path: Path
) -> None:
    org = f"rorg-{unique}"
    made = api(hub.admin_token, "POST", "/admin/organizations", {"login": org, "admin": "alice"})
    assert made.status == 201 and made.headers["location"] == made.body["url"]
    member, outsider = hub.token(f"m-{unique}"), hub.token(f"o-{unique}")
    o = f"/orgs/{org}"
    api(alice, "POST", f"{o}/teams", {"name": "pushers"})
    invited = api(alice, "PUT", f"{o}/teams/pushers/memberships/m-{unique}", {"role": "member"})
    assert invited.body["state"] == "pending"  # an outsider is invited to the organisation
    joined = api(member, "PATCH", f"/user/memberships/orgs/{org}", {"state": "active"})
    assert joined.status == 200 and joined.body["state"] == "active"
    api(alice, "POST", f"{o}/repos", {"name": "guarded"})
    full = f"{org}/guarded"
    api(alice, "PUT", f"{o}/teams/pushers/repos/{full}", {"permission": "push"})
    api(alice, "PUT", f"/repos/{full}/collaborators/o-{unique}", {"permission": "push"})
    first = push_commit(hub.url, alice, full, tmp_path / "a")
    rules = {"required_status_checks": None, "enforce_admins": False,
             "required_pull_request_reviews": None,
             "restrictions": {"users": [], "teams": ["pushers"]}}  # fmt: skip
    put = api(alice, "PUT", f"/repos/{full}/branches/main/protection", rules)
    assert put.status == 200, put.body

    clone = tmp_path / "clone"
    git("clone", "-q", git_url(hub.url, full, outsider), str(clone))
    (clone / "more").write_text("x\n")
    git("add", "more", cwd=clone)
    git("commit", "-qm", "more", cwd=clone)
    second = git("rev-parse", "HEAD", cwd=clone).stdout.strip()
    refused = git("push", git_url(hub.url, full, outsider), "HEAD:main", cwd=clone, check=False)
    assert refused.returncode != 0
    assert "GH006: Protected branch update failed for refs/heads/main." in refused.stderr
    assert "You're not authorized to push to this branch." in refused.stderr
    moved = api(outsider, "PATCH", f"/repos/{full}/git/refs/heads/main", {"sha": second})
    assert moved.status == 422 and moved.body["message"].startswith("You're not authorized")
    assert api(alice, "GET", f"/repos/{full}/git/ref/heads/main").body["object"]["sha"] == first

    pushed = git("push", git_url(hub.url, full, member), "HEAD:main", cwd=clone, check=False)
    assert pushed.returncode == 0, pushed.stderr  # a member of the named team
    assert api(alice, "GET", f"/repos/{full}/git/ref/heads/main").body["object"]["sha"] == second


def test_collaborators_are_listed_checked_and_removed_as_on_github(
    hub: Any, api: Any, alice: str, bob: str, unique: str
) -> None:
    """``GET .../collaborators`` (the owner first), ``GET .../collaborators/{u}`` (204 or
    404), both for push access only, and ``DELETE`` by an admin or by the collaborator."""
    r = f"/repos/alice/collab-{unique}"
    assert api(alice, "POST", "/user/repos", {"name": f"collab-{unique}"}).status == 201
    carol = hub.token(f"carol-{unique}")
    assert api(alice, "PUT", f"{r}/collaborators/bob", {"permission": "push"}).status == 201
    assert api(alice, "PUT", f"{r}/collaborators/carol-{unique}", {"permission": "triage"}).status
    listed = api(alice, "GET", f"{r}/collaborators")
    assert listed.status == 200
    assert [(c["login"], c["role_name"]) for c in listed.body] == [
        ("alice", "admin"), ("bob", "write"), (f"carol-{unique}", "triage"),
    ]  # fmt: skip
    assert listed.body[1]["permissions"] == {
        "admin": False, "maintain": False, "push": True, "triage": True, "pull": True,
    }  # fmt: skip
    pushers = api(alice, "GET", f"{r}/collaborators?permission=push").body
    assert [c["login"] for c in pushers] == ["alice", "bob"]
    assert api(bob, "GET", f"{r}/collaborators/bob").status == 204  # a write collaborator
    assert api(bob, "GET", f"{r}/collaborators/alice").status == 204
    nobody = api(alice, "GET", f"{r}/collaborators/nobody-{unique}")
    assert nobody.status == 404 and nobody.body["message"] == "Not Found"
    for path in (f"{r}/collaborators", f"{r}/collaborators/bob"):
        refused = api(carol, "GET", path)  # triage is not push
        assert refused.status == 403
        assert refused.body["message"] == "Must have push access to view repository collaborators."
    assert api(bob, "DELETE", f"{r}/collaborators/carol-{unique}").status == 403  # not admin
    assert api(carol, "DELETE", f"{r}/collaborators/carol-{unique}").status == 204  # leaves
    assert api(alice, "DELETE", f"{r}/collaborators/bob").status == 204
    assert api(alice, "GET", f"{r}/collaborators/bob").status == 404
    assert [c["login"] for c in api(alice, "GET", f"{r}/collaborators").body] == ["alice"]
    assert api(bob, "POST", f"{r}/labels", {"name": "x"}).status == 403  # no longer writes


def test_the_default_invitation_is_a_real_one_accepted_at_once(
    hub: Any, api: Any, alice: str, unique: str
) -> None:
    """Without ``--invitations`` the 201's invitation is a real invitation (its own ids, in
    sequence whatever else happens between), accepted at once: none stays pending, and a
    second PUT for a collaborator answers 204 and changes the role."""
    r = f"/repos/alice/inv-{unique}"
    assert api(alice, "POST", "/user/repos", {"name": f"inv-{unique}"}).status == 201
    first_user, second_user = hub.token(f"i1-{unique}"), hub.token(f"i2-{unique}")
    first = api(alice, "PUT", f"{r}/collaborators/i1-{unique}", {"permission": "pull"})
    assert first.status == 201 and first.headers["location"] == first.body["url"]
    assert first.body["permissions"] == "read" and first.body["invitee"]["login"] == f"i1-{unique}"
    api(alice, "POST", f"{r}/issues", {"title": "meanwhile"})  # other writes in between
    second = api(alice, "PUT", f"{r}/collaborators/i2-{unique}", {"permission": "push"})
    assert second.status == 201 and second.body["id"] == first.body["id"] + 1
    assert first.body["url"].endswith(f"/user/repository_invitations/{first.body['id']}")
    assert api(alice, "GET", f"{r}/invitations").body == []
    assert api(first_user, "GET", "/user/repository_invitations").body == []
    assert api(second_user, "POST", f"{r}/labels", {"name": f"l-{unique}"}).status == 201
    again = api(alice, "PUT", f"{r}/collaborators/i1-{unique}", {"permission": "push"})
    assert again.status == 204
    assert api(first_user, "POST", f"{r}/labels", {"name": f"m-{unique}"}).status == 201


def test_an_organisation_gets_no_token(hub: Any, api: Any, alice: str, unique: str) -> None:
    """GitHub's organisations cannot sign in: `relay hub token ORG` refuses in one line and
    makes nothing, so no token can act as the organisation."""
    org = f"notok-{unique}"
    made = api(hub.admin_token, "POST", "/admin/organizations", {"login": org, "admin": "alice"})
    assert made.status == 201
    argv = [sys.executable, "-m", "relay.cli", "hub", "token", org, "--data", str(hub.data_dir)]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=60)
    assert done.returncode != 0 and done.stdout == ""
    said = done.stderr.strip().splitlines()
    assert len(said) == 1 and said[0].startswith(
        f"relay: {org} is an organisation, which cannot sign in or hold a token, as on GitHub"
    )
    assert api(hub.admin_token, "GET", f"/orgs/{org}").body["type"] == "Organization"


def test_a_repository_may_be_renamed_to_another_case_of_its_name(
    api: Any, alice: str, unique: str
) -> None:
    """GitHub allows a rename that only changes case (its own name is not "taken"), while a
    name another repository of the owner has is still refused."""
    low = f"case-{unique}"
    assert api(alice, "POST", "/user/repos", {"name": low}).status == 201
    assert api(alice, "POST", "/user/repos", {"name": f"other-{unique}"}).status == 201
    upper = low.upper()
    renamed = api(alice, "PATCH", f"/repos/alice/{low}", {"name": upper})
    assert renamed.status == 200 and renamed.body["name"] == upper
    assert api(alice, "GET", f"/repos/alice/{low}").body["full_name"] == f"alice/{upper}"
    clash = api(alice, "PATCH", f"/repos/alice/{upper}", {"name": f"OTHER-{unique}"})
    assert clash.status == 422
    assert clash.body["errors"][0]["message"] == "name already exists on this account"


def test_an_org_membership_is_pending_until_accepted_and_concealed(
    hub: Any, api: Any, alice: str, unique: str
) -> None:
    """GitHub's organisation invitations: a pending member reads nothing of the
    organisation's private repositories until they accept; outsiders see no members."""
    org = f"pend-{unique}"
    assert api(hub.admin_token, "POST", "/admin/organizations",
               {"login": org, "admin": "alice"}).status == 201  # fmt: skip
    assert api(alice, "POST", f"/orgs/{org}/repos", {"name": "inner", "private": True}).status
    dan, eve = hub.token(f"dan-{unique}"), hub.token(f"eve-{unique}")
    invited = api(alice, "PUT", f"/orgs/{org}/memberships/dan-{unique}", {"role": "member"})
    assert invited.status == 200 and invited.body["state"] == "pending"
    assert api(dan, "GET", f"/repos/{org}/inner").status == 404  # pending: nothing yet
    assert api(dan, "GET", f"/user/memberships/orgs/{org}").body["state"] == "pending"
    assert api(eve, "GET", f"/user/memberships/orgs/{org}").status == 404
    refused = api(dan, "PATCH", f"/user/memberships/orgs/{org}", {"state": "pending"})
    assert refused.status == 422
    assert api(dan, "PATCH", f"/user/memberships/orgs/{org}", {"state": "active"}).status == 200
    assert api(dan, "GET", f"/repos/{org}/inner").status == 200
    assert [m["login"] for m in api(dan, "GET", f"/orgs/{org}/members").body] == [
        "alice", f"dan-{unique}",
    ]  # fmt: skip
    assert api(eve, "GET", f"/orgs/{org}/members").body == []  # concealed from outsiders
    assert api(eve, "GET", f"/orgs/{org}/memberships/dan-{unique}").status == 404
    again = api(alice, "PUT", f"/orgs/{org}/memberships/dan-{unique}", {"role": "admin"})
    assert (again.body["state"], again.body["role"]) == ("active", "admin")  # a role change


def test_search_paths_count_against_githubs_search_budget(hub: Any, api: Any) -> None:
    """``/search/...`` has its own budget (``x-ratelimit-resource: search``, 30 a minute),
    apart from core's, and ``/rate_limit`` reports it."""
    token = hub.token("searcher")
    core = api(token, "GET", "/rate_limit").body["resources"]["core"]["used"]
    first = api(token, "GET", "/search/issues?q=a")
    assert first.headers["x-ratelimit-resource"] == "search"
    assert first.headers["x-ratelimit-limit"] == "30"
    used = int(first.headers["x-ratelimit-used"])
    second = api(token, "GET", "/search/issues?q=b")
    assert int(second.headers["x-ratelimit-used"]) == used + 1
    assert int(second.headers["x-ratelimit-reset"]) - int(first.headers["x-ratelimit-reset"]) <= 1
    resources = api(token, "GET", "/rate_limit").body["resources"]
    assert resources["search"]["used"] == used + 1 and resources["search"]["limit"] == 30
    assert resources["core"]["used"] == core  # search is apart from core
