"""Tokens of any length and scheme, HEAD, ref URLs that resolve and request ids — what
GitHub clients meet on api.github.com, checked against a real hub process."""

from __future__ import annotations

import asyncio
import base64
import subprocess
import sys
from typing import Any

import aiohttp
import github
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from gidgethub.aiohttp import GitHubAPI

from relay.edges.github.appauth import AppAuth
from relay.edges.github.client import GitHubClient


def long_token(hub: Any, login: str) -> str:
    argv = [sys.executable, "-m", "relay.cli", "hub", "token", login, "--long"]
    out = subprocess.run([*argv, "--data", str(hub.data_dir)], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    return out.stdout.strip()


def relay_client_login_and_issue(
    url: str, token: str, repo: str, app: Any = None
) -> tuple[str, str]:
    """relay's own client: who am I (an App: its bot, from GET /app), and the title of a
    new issue."""

    async def main() -> tuple[str, str]:
        async with GitHubClient(api_url=url, token=token, repo=repo, app=app) as gh:
            me = await gh.current_user()
            issue = await gh.create_issue(title="long token", body="works")
            return me.login, (await gh.get_issue(issue.number)).title

    return asyncio.run(main())


def test_a_long_user_token_works_with_pygithub_and_relay(hub: Any, client: Any) -> None:
    token = long_token(hub, "longuser")
    assert len(token) == 93 and token.startswith("github_pat_")
    repo = client(hub.url, token).get_user().create_repo("long")
    assert repo.owner.login == "longuser"
    assert relay_client_login_and_issue(hub.url, token, repo.full_name) == (
        "longuser", "long token",
    )  # fmt: skip


def _key_pair() -> tuple[str, str]:
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    private = key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    ).decode()
    public = key.public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    return private, public.decode()


def test_an_installation_token_is_long_and_works(fresh_hub: Any, client: Any) -> None:
    owner = fresh_hub.token("appowner")
    client(fresh_hub.url, owner).get_user().create_repo("apps")
    private, public = _key_pair()
    body = {"slug": "longapp", "public_key": public, "repositories": ["appowner/apps"]}
    made = fresh_hub.admin("POST", "/_hub/apps", body)
    auth = AppAuth(app_id=str(made["app_id"]), installation_id=made["installation_id"],
                   private_key=private)  # fmt: skip

    async def exchange() -> str:
        async with aiohttp.ClientSession() as session:
            api = GitHubAPI(session, "test", base_url=fresh_hub.url)
            return str(await auth.installation_token(api))

    token = asyncio.run(exchange())
    assert token.startswith(f"ghs_{made['app_id']}_") and len(token) > 200
    assert client(fresh_hub.url, token).get_repo("appowner/apps").create_issue("bot").number == 1
    login, title = relay_client_login_and_issue(fresh_hub.url, token, "appowner/apps", auth)
    assert (login, title) == ("longapp[bot]", "long token")


def test_basic_needs_a_login_and_the_token(hub: Any, http: Any, alice: str) -> None:
    assert http(hub.url, alice, "GET", "/user").status == 200  # the token is now cached
    raw = http(hub.url, "", "GET", "/user", headers={"Authorization": f"Basic {alice}"})
    assert raw.status == 401 and raw.body["message"] == "Bad credentials"
    pair = base64.b64encode(f"alice:{alice}".encode()).decode()
    basic = http(hub.url, "", "GET", "/user", headers={"Authorization": f"Basic {pair}"})
    assert basic.status == 200 and basic.body["login"] == "alice"
    other = http(hub.url, "", "GET", "/user", headers={"Authorization": f"Digest {alice}"})
    assert other.status == 401


def test_head_answers_like_get_without_a_body(api: Any, alice: str, repo: Any) -> None:
    path = f"/repos/{repo.full_name}"
    got, head = api(alice, "GET", path), api(alice, "HEAD", path)
    assert head.status == 200 and head.body is None
    assert head.headers["etag"] == got.headers["etag"]
    assert "x-ratelimit-remaining" in head.headers
    cached = api(alice, "HEAD", path, headers={"If-None-Match": got.headers["etag"]})
    assert cached.status == 304


def test_a_refs_url_and_location_resolve(api: Any, alice: str, repo: Any, pushed: Any) -> None:
    base = f"/repos/{repo.full_name}/git"
    sha = pushed(repo.full_name)
    api(alice, "DELETE", f"{base}/refs/heads/main")  # only the refs made here remain
    for name in ("refs/heads/x", "refs/heads/y", "refs/relay/claims/1"):
        made = api(alice, "POST", f"{base}/refs", {"ref": name, "sha": sha})
        assert made.status == 201
        assert made.headers["location"] == made.body["url"]
        again = api(alice, "GET", made.body["url"].removeprefix(_origin(made.body["url"])))
        assert again.status == 200 and again.body == made.body
    listed = api(alice, "GET", f"{base}/refs").body
    assert [r["ref"] for r in listed] == ["refs/heads/x", "refs/heads/y", "refs/relay/claims/1"]
    heads = api(alice, "GET", f"{base}/refs/heads").body
    assert [r["ref"] for r in heads] == ["refs/heads/x", "refs/heads/y"]
    assert api(alice, "GET", f"{base}/refs/heads/nope").status == 404
    assert repo.get_git_ref("heads/x").object.sha == sha


def _origin(url: str) -> str:
    scheme, rest = url.split("://", 1)
    return f"{scheme}://{rest.split('/', 1)[0]}"


def test_every_answer_has_a_request_id(api: Any, alice: str, gh: github.Github) -> None:
    ids = {api(alice, "GET", "/user").headers["x-github-request-id"] for _ in range(3)}
    ids.add(api(alice, "GET", "/repos/alice/absent").headers["x-github-request-id"])
    assert len(ids) == 4
    assert gh.get_user().login == "alice"
