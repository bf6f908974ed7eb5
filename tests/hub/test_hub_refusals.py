"""What GitHub refuses, the hub refuses: an App installation asking ``GET /user``, more
content than the secondary limit allows, an unknown API version, ref names git refuses,
long label descriptions, a label removed in the wrong case; and the conditional and
created-resource headers GitHub sends."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import time
from datetime import UTC, datetime
from email.utils import format_datetime
from typing import Any

from test_hub_conformance import installation_token

from relay.hub.middleware import SECONDARY_MESSAGE


def test_an_installation_token_may_not_ask_who_it_is(hub_factory: Any, http: Any) -> None:
    strict = hub_factory(app_user=False)
    owner = strict.token("owner")
    assert http(strict.url, owner, "POST", "/user/repos", {"name": "apps"}).status == 201
    _app, auth = installation_token(strict, "owner/apps")

    async def exchange() -> str:
        import aiohttp
        from gidgethub.aiohttp import GitHubAPI

        async with aiohttp.ClientSession() as session:
            return await auth.installation_token(GitHubAPI(session, "t", base_url=strict.url))

    token = asyncio.run(exchange())
    me = http(strict.url, token, "GET", "/user")
    assert (me.status, me.body["message"]) == (403, "Resource not accessible by integration")
    assert me.body["documentation_url"].endswith("#get-the-authenticated-user")
    assert http(strict.url, token, "GET", "/repos/owner/apps").status == 200  # the rest works
    assert http(strict.url, owner, "GET", "/user").status == 200


def test_githubs_secondary_limit_is_the_default(hub_factory: Any, http: Any) -> None:
    limited = hub_factory(content_limit="80/500")  # what `relay hub` does with no flag
    token, other = limited.token("busy"), limited.token("calm")
    assert http(limited.url, token, "POST", "/user/repos", {"name": "r"}).status == 201
    path = "/repos/busy/r/issues"
    statuses = [http(limited.url, token, "POST", path, {"title": f"{n}"}).status for n in range(79)]
    assert statuses == [201] * 79  # 80 with the repository
    over = http(limited.url, token, "POST", path, {"title": "one too many"})
    assert (over.status, over.body["message"]) == (403, SECONDARY_MESSAGE)
    assert 1 <= int(over.headers["retry-after"]) <= 60
    assert over.body["documentation_url"].endswith("#about-secondary-rate-limits")
    assert http(limited.url, token, "GET", path).status == 200  # reads are not content
    assert http(limited.url, other, "POST", "/user/repos", {"name": "r"}).status == 201


def test_the_hourly_secondary_limit_and_the_flag(hub_factory: Any, http: Any) -> None:
    limited = hub_factory(content_limit="0/3")
    token = limited.token("hourly")
    made = [http(limited.url, token, "POST", "/user/repos", {"name": f"r{n}"}) for n in range(4)]
    assert [a.status for a in made] == [201, 201, 201, 403]
    assert int(made[-1].headers["retry-after"]) > 60
    argv = [sys.executable, "-m", "relay.cli", "hub", "--port", "0", "--content-limit", "80"]
    bad = subprocess.run(argv, capture_output=True, text=True, timeout=60)
    assert bad.returncode == 2 and "--content-limit" in bad.stderr


def test_an_unknown_api_version_is_400(api: Any, alice: str) -> None:
    got = api(alice, "GET", "/user", headers={"X-GitHub-Api-Version": "v3"})
    assert got.status == 400 and '"v3", is not a supported version' in got.body["message"]
    assert "2022-11-28" in got.body["message"] and "2026-03-10" in got.body["message"]
    assert api(alice, "GET", "/user").headers["x-github-api-version-selected"] == "2022-11-28"


def test_ref_names_git_refuses_are_422(api: Any, alice: str, repo: Any, pushed: Any) -> None:
    sha = pushed(repo.full_name)
    refs = f"/repos/{repo.full_name}/git/refs"
    for name in (
        "refs/heads/a..b", "refs/heads/x.lock", "refs/heads/sp ace", "refs/heads/end/",
        "refs/heads/a@{b", "refs/heads/.hidden", "refs/heads/q?", "refs/heads/dot.",
    ):  # fmt: skip
        got = api(alice, "POST", refs, {"ref": name, "sha": sha})
        assert (got.status, got.body["message"]) == (422, f"{name} is not a valid ref name."), name
    assert api(alice, "POST", refs, {"ref": "refs/heads/ok-1.2/x", "sha": sha}).status == 201


def test_label_descriptions_stop_at_100_characters(api: Any, alice: str, repo: Any) -> None:
    labels = f"/repos/{repo.full_name}/labels"
    assert api(alice, "POST", labels, {"name": "ok", "description": "d" * 100}).status == 201
    long = api(alice, "POST", labels, {"name": "long", "description": "d" * 101})
    assert long.status == 422 and long.body["errors"][0]["field"] == "description"
    edit = api(alice, "PATCH", f"{labels}/ok", {"description": "e" * 101})
    assert edit.status == 422


def test_removing_a_label_from_an_issue_matches_its_case(api: Any, alice: str, repo: Any) -> None:
    issue = api(alice, "POST", f"/repos/{repo.full_name}/issues", {"title": "t",
                "labels": ["Flaky"]}).body  # fmt: skip
    base = f"/repos/{repo.full_name}/issues/{issue['number']}/labels"
    wrong = api(alice, "DELETE", f"{base}/flaky")
    assert (wrong.status, wrong.body["message"]) == (404, "Label does not exist")
    assert api(alice, "DELETE", f"{base}/Flaky").status == 200
    assert api(alice, "GET", base).body == []


def test_if_modified_since_is_answered_with_304(api: Any, alice: str, repo: Any) -> None:
    issue = api(alice, "POST", f"/repos/{repo.full_name}/issues", {"title": "t"})
    path = f"/repos/{repo.full_name}/issues/{issue.body['number']}"
    got = api(alice, "GET", path)
    stamp = got.headers["last-modified"]
    same = api(alice, "GET", path, headers={"If-Modified-Since": stamp})
    assert same.status == 304 and same.body is None
    earlier = format_datetime(datetime.fromtimestamp(time.time() - 3600, UTC), usegmt=True)
    assert api(alice, "GET", path, headers={"If-Modified-Since": earlier}).status == 200


def test_created_resources_say_where_they_are(
    api: Any, alice: str, repo: Any, hub: Any, tmp_path: Any
) -> None:
    base = f"/repos/{repo.full_name}"
    issue = api(alice, "POST", f"{base}/issues", {"title": "t"})
    comment = api(alice, "POST", f"{base}/issues/{issue.body['number']}/comments", {"body": "c"})
    label = api(alice, "POST", f"{base}/labels", {"name": "where"})
    hook = api(alice, "POST", f"{base}/hooks", {"config": {"url": "http://127.0.0.1:9/h"}})
    for made in (issue, comment, label, hook):
        assert made.status == 201 and made.headers["location"] == made.body["url"]


def test_hooks_are_paged(api: Any, alice: str, repo: Any) -> None:
    base = f"/repos/{repo.full_name}/hooks"
    for n in range(3):
        assert (
            api(alice, "POST", base, {"config": {"url": f"http://127.0.0.1:9/{n}"}}).status == 201
        )
    first = api(alice, "GET", f"{base}?per_page=2")
    assert len(first.body) == 2 and 'rel="next"' in first.headers["link"]
    second = api(alice, "GET", f"{base}?per_page=2&page=2")
    assert [h["config"]["url"] for h in second.body] == ["http://127.0.0.1:9/2"]


def test_a_lock_shows_on_the_issue_and_its_events(
    api: Any, alice: str, bob: str, repo: Any
) -> None:
    issue = api(alice, "POST", f"/repos/{repo.full_name}/issues", {"title": "t"}).body
    path = f"/repos/{repo.full_name}/issues/{issue['number']}"
    assert api(bob, "PUT", f"{path}/lock", {}).status == 403  # bob may only read
    bad = api(alice, "PUT", f"{path}/lock", {"lock_reason": "boring"})
    assert bad.status == 422
    assert api(alice, "PUT", f"{path}/lock", {"lock_reason": "spam"}).status == 204
    locked = api(alice, "GET", path).body
    assert (locked["locked"], locked["active_lock_reason"]) == (True, "spam")
    assert api(alice, "DELETE", f"{path}/lock").status == 204
    assert api(alice, "DELETE", f"{path}/lock").status == 404
    assert api(alice, "PATCH", path, {"title": "new"}).status == 200
    events = [(e["event"], e.get("lock_reason"), e.get("rename"))
              for e in api(alice, "GET", f"{path}/events").body]  # fmt: skip
    assert events == [
        ("locked", "spam", None), ("unlocked", None, None),
        ("renamed", None, {"from": "t", "to": "new"}),
    ]  # fmt: skip
