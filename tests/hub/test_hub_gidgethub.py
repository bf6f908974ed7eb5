"""Conformance through gidgethub (async, with its ETag cache) against a real `relay hub`."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

import aiohttp
import gidgethub
import gidgethub.aiohttp
import pytest

Session = Callable[[gidgethub.aiohttp.GitHubAPI], Awaitable[Any]]


def run(url: str, token: str, body: Session, *, cache: dict[Any, Any] | None = None) -> Any:
    """Run ``body(gh)`` with a gidgethub client on the hub."""

    async def main() -> Any:
        async with aiohttp.ClientSession() as session:
            gh = gidgethub.aiohttp.GitHubAPI(
                session, "relay-tests", oauth_token=token, cache=cache, base_url=url
            )
            return await body(gh)

    return asyncio.run(main())


def test_repeated_get_through_the_cache_is_a_free_304(hub: Any, alice: str, unique: str) -> None:
    cache: dict[Any, Any] = {}
    path = f"/repos/alice/cached-{unique}/issues/1"

    async def body(gh: gidgethub.aiohttp.GitHubAPI) -> tuple[Any, ...]:
        await gh.post("/user/repos", data={"name": f"cached-{unique}"})
        await gh.post(f"/repos/alice/cached-{unique}/issues", data={"title": "watched"})
        first = await gh.getitem(path)
        before = (await gh.getitem("/rate_limit"))["resources"]["core"]["remaining"]
        second = await gh.getitem(path)
        third = await gh.getitem(path)
        after = (await gh.getitem("/rate_limit"))["resources"]["core"]["remaining"]
        return first, second, third, before, after

    hub.reset_requests()
    first, second, third, before, after = run(hub.url, alice, body, cache=cache)
    assert first == second == third and first["title"] == "watched"
    assert after == before, "a 304 must not count against the rate limit"
    assert hub.count(method="GET", path=path, status=200) == 1
    assert hub.count(method="GET", path=path, status=304) == 2


def test_304_keeps_x_ratelimit_remaining(api: Any, alice: str, repo: Any) -> None:
    path = f"/repos/alice/{repo.name}"
    full = api(alice, "GET", path)
    etag = full.headers["etag"]
    again = api(alice, "GET", path, headers={"If-None-Match": etag})
    assert again.status == 304 and again.headers["etag"] == etag
    assert again.headers["x-ratelimit-remaining"] == full.headers["x-ratelimit-remaining"]
    changed = api(alice, "GET", path, headers={"If-None-Match": 'W/"other"'})
    assert changed.status == 200
    assert (
        int(changed.headers["x-ratelimit-remaining"])
        == int(full.headers["x-ratelimit-remaining"]) - 1
    )
    for name in ("limit", "remaining", "used", "reset", "resource"):
        assert f"x-ratelimit-{name}" in again.headers


def test_an_etag_changes_when_the_issue_changes(hub: Any, alice: str, repo: Any) -> None:
    cache: dict[Any, Any] = {}
    path = f"/repos/alice/{repo.name}/issues"

    async def body(gh: gidgethub.aiohttp.GitHubAPI) -> tuple[list[Any], list[Any]]:
        await gh.post(path, data={"title": "one"})
        first = [i async for i in gh.getiter(path)]
        await gh.post(f"{path}/1/comments", data={"body": "news"})
        second = [i async for i in gh.getiter(path)]
        return first, second

    first, second = run(hub.url, alice, body, cache=cache)
    assert (first[0]["comments"], second[0]["comments"]) == (0, 1)


def test_getiter_follows_link_through_250_comments(hub: Any, alice: str, unique: str) -> None:
    base = f"/repos/alice/iter-{unique}"

    async def body(gh: gidgethub.aiohttp.GitHubAPI) -> list[Any]:
        await gh.post("/user/repos", data={"name": f"iter-{unique}"})
        await gh.post(f"{base}/issues", data={"title": "long thread"})
        for start in range(0, 250, 25):
            posts = [
                gh.post(f"{base}/issues/1/comments", data={"body": f"c{n}"})
                for n in range(start, start + 25)
            ]
            await asyncio.gather(*posts)
        return [c async for c in gh.getiter(f"{base}/issues/1/comments?per_page=100")]

    comments = run(hub.url, alice, body)
    ids = [c["id"] for c in comments]
    assert len(ids) == 250 and ids == sorted(set(ids))


def test_error_shapes_map_to_gidgethub_exceptions(
    hub: Any, alice: str, unique: str, api: Any, pushed: Any
) -> None:
    base = f"/repos/alice/errs-{unique}"
    assert api(alice, "POST", "/user/repos", {"name": f"errs-{unique}"}).status == 201
    sha = pushed(f"alice/errs-{unique}")

    async def body(gh: gidgethub.aiohttp.GitHubAPI) -> list[Exception]:
        await gh.post(f"{base}/issues", data={"title": "t"})
        ref = {"ref": "refs/relay/claims/1/1", "sha": sha}
        await gh.post(f"{base}/git/refs", data=ref)
        caught = []
        for call in (
            gh.post(f"{base}/git/refs", data=ref),
            gh.post(f"{base}/issues/1/comments", data={"body": "x" * 70000}),
            gh.post(f"{base}/labels", data={"name": "n" * 51}),
            gh.getitem(f"{base}/issues/99"),
        ):
            with pytest.raises(gidgethub.HTTPException) as err:
                await call
            caught.append(err.value)
        return caught

    exists, too_long, long_label, missing = run(hub.url, alice, body)
    assert isinstance(exists, gidgethub.InvalidField) and exists.errors is None
    assert str(exists) == "Reference already exists"
    assert isinstance(too_long, gidgethub.ValidationError)
    assert "65536" in str(too_long)
    assert isinstance(long_label, gidgethub.InvalidField)
    assert isinstance(missing, gidgethub.BadRequest) and missing.status_code == 404


def test_bearer_and_token_schemes_and_bad_tokens(http: Any, hub: Any, alice: str) -> None:
    as_token = http(hub.url, alice, "GET", "/user")
    as_bearer = http(hub.url, "", "GET", "/user", headers={"Authorization": f"Bearer {alice}"})
    assert as_token.body["login"] == as_bearer.body["login"] == "alice"
    for bad in ("x", "ghs_" + "y" * 500, alice + "z"):
        answer = http(hub.url, bad, "GET", "/user")
        assert answer.status == 401 and answer.body["message"] == "Bad credentials"
        assert answer.body["documentation_url"]
