"""The GitHub client's wire behaviour against a scripted loopback server.

The server answers each request with the next scripted answer (the last one repeats), so
a test can say "503, 503, then 200" and check what the client sent, how long it decided to
wait (the sleep is injected: nothing really waits) and what error it raised. The same
client is run against the real hub in test_edges_github_hub.py.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web
from aiohttp.test_utils import TestServer

from relay.edges.github import GitHubClient, RetryPolicy, WireStats
from relay.errors import ConfigError, RemoteProtocolError, RemoteUnavailable

NOW = 1_900_000_000.0
USER = {"id": 1, "login": "octo", "type": "User"}
Answer = Callable[[web.Request], Awaitable[web.StreamResponse]]


def answer(status: int, body: Any = None, **headers: str) -> Answer:
    async def respond(request: web.Request) -> web.StreamResponse:
        text = json.dumps(body if body is not None else {"message": f"status {status}"})
        return web.Response(
            status=status, text=text, content_type="application/json", headers=headers
        )

    return respond


async def drop(request: web.Request) -> web.StreamResponse:
    """Close the connection without an answer."""
    assert request.transport is not None
    request.transport.close()
    raise asyncio.CancelledError


@dataclass
class Trace:
    sleeps: list[float] = field(default_factory=list)
    seen: list[dict[str, str]] = field(default_factory=list)
    stats: WireStats = field(default_factory=WireStats)


def run(
    answers: list[Answer],
    *calls: Callable[[GitHubClient], Awaitable[Any]],
    policy: RetryPolicy | None = None,
    cache: Path | None = None,
    trace: Trace | None = None,
) -> tuple[Any, Trace]:
    """Serve ``answers`` in order on loopback; run each call with a client of its own (as
    separate processes would) and return the last call's result."""
    trace = trace or Trace()
    queue = list(answers)

    async def handler(request: web.Request) -> web.StreamResponse:
        headers = {k.lower(): v for k, v in request.headers.items()}
        trace.seen.append({"path": request.path_qs, **headers})
        step = queue.pop(0) if len(queue) > 1 else queue[0]
        return await step(request)

    async def fake_sleep(seconds: float) -> None:
        trace.sleeps.append(seconds)

    async def one(url: str, call: Callable[[GitHubClient], Awaitable[Any]]) -> Any:
        client = GitHubClient(
            api_url=url,
            token="tok",
            repo="octo/relay",
            cache_path=cache,
            policy=policy or RetryPolicy(jitter=0.0),  # exact waits; jitter has its own test
            sleep=fake_sleep,
            clock=lambda: NOW,
        )
        async with client as gh:
            try:
                return await call(gh)
            finally:
                trace.stats = gh.stats

    async def main() -> Any:
        app = web.Application()
        app.router.add_route("*", "/{tail:.*}", handler)
        server = TestServer(app, host="127.0.0.1")
        await server.start_server()
        url = str(server.make_url("/")).rstrip("/")
        try:
            result = None
            for call in calls:
                result = await one(url, call)
            return result
        finally:
            await server.close()

    return asyncio.run(main()), trace


def user(gh: GitHubClient) -> Awaitable[Any]:
    return gh.current_user()


def test_5xx_is_retried_with_backoff_then_succeeds() -> None:
    got, trace = run([answer(503), answer(502), answer(200, USER)], user)
    assert got.login == "octo"
    assert trace.sleeps == [0.5, 1.0]
    assert (trace.stats.requests, trace.stats.retries) == (3, 2)
    assert trace.seen[0]["x-github-api-version"] == "2022-11-28"
    assert trace.seen[0]["authorization"] == "token tok"


def test_429_honours_retry_after() -> None:
    got, trace = run([answer(429, **{"Retry-After": "7"}), answer(200, USER)], user)
    assert got.id == 1 and trace.sleeps == [7.0]


def test_secondary_limit_403_without_retry_after_waits_a_minute() -> None:
    secondary = answer(403, {"message": "You have exceeded a secondary rate limit."})
    got, trace = run([secondary, answer(200, USER)], user)
    assert got.id == 1 and trace.sleeps == [60.0]


def test_primary_limit_waits_until_the_reset() -> None:
    spent = answer(
        403,
        {"message": "API rate limit exceeded"},
        **{"x-ratelimit-remaining": "0", "x-ratelimit-reset": str(int(NOW) + 30)},
    )
    got, trace = run([spent, answer(200, USER)], user)
    assert got.id == 1 and trace.sleeps == [31.0]


def test_a_reset_beyond_the_wait_bound_fails_at_once_with_the_reset_time() -> None:
    spent = answer(
        403,
        {"message": "API rate limit exceeded"},
        **{"x-ratelimit-remaining": "0", "x-ratelimit-reset": str(int(NOW) + 3600)},
    )
    with pytest.raises(RemoteUnavailable) as err:
        run([spent], user)
    text = str(err.value)
    reset = datetime.fromtimestamp(NOW + 3600, tz=UTC)
    assert "rate-limited relay (API rate limit exceeded)" in text
    assert text.endswith(f"it resets at {reset:%H:%M:%S} UTC (in 60 min)")


def test_total_wait_is_bounded() -> None:
    slow = answer(429, **{"Retry-After": "100"})
    trace = Trace()
    with pytest.raises(RemoteUnavailable, match="retry in 100 s"):
        run([slow], user, trace=trace)
    assert trace.sleeps == [100.0, 100.0], "a third 100 s wait would pass the 240 s bound"
    assert trace.stats.requests == 3


def test_a_repeated_secondary_limit_waits_longer_each_time() -> None:
    secondary = answer(403, {"message": "You have exceeded a secondary rate limit."})
    got, trace = run([secondary, secondary, answer(200, USER)], user)
    assert got.id == 1 and trace.sleeps == [60.0, 120.0]


def test_backoff_after_5xx_is_jittered_within_a_quarter() -> None:
    policy = RetryPolicy()
    assert policy.backoff(3, 0.0) == 2.0 and policy.backoff(3, 1.0) == 1.5
    waits = set()
    for _ in range(5):
        _, trace = run([answer(503), answer(503), answer(200, USER)], user, policy=policy)
        assert all(0.375 <= a <= 0.5 for a in trace.sleeps[:1]), trace.sleeps
        assert 0.75 <= trace.sleeps[1] <= 1.0
        waits.add(tuple(trace.sleeps))
    assert len(waits) > 1, "clients that failed together do not all wait the same"


def test_persistent_5xx_gives_up_after_the_attempts() -> None:
    trace = Trace()
    with pytest.raises(
        RemoteUnavailable, match=r"kept failing on the token's account \(HTTP 500\)"
    ):
        run([answer(500)], user, trace=trace)
    assert trace.stats.requests == 5
    assert trace.sleeps == [0.5, 1.0, 2.0, 4.0]


def test_dropped_connections_are_retried() -> None:
    # aiohttp itself re-sends an idempotent request once after a drop; relay retries after
    # that, with its backoff, and for POSTs too.
    got, trace = run([drop, drop, answer(200, USER)], user)
    assert got.id == 1
    assert len(trace.seen) == 3 and trace.sleeps == [0.5]
    comment = {
        "id": 5,
        "body": "hi",
        "user": USER,
        "created_at": "2026-11-30T09:00:00Z",
        "updated_at": "2026-11-30T09:00:00Z",
    }
    # before the POST is sent again, the newest comments are read: none is it, so it is sent
    script = [drop, answer(200, []), answer(201, comment)]
    made, trace = run(script, lambda gh: gh.create_comment(3, "hi"))
    assert made.id == 5 and trace.sleeps == [0.5] and trace.stats.requests == 3
    assert "/issues/3/comments?since=" in trace.seen[1]["path"]
    assert trace.stats.lost_answers == 1 and trace.stats.found_after_loss == 0


def test_refused_connection_says_is_the_hub_running() -> None:
    sleeps: list[float] = []

    async def fake_sleep(seconds: float) -> None:
        sleeps.append(seconds)

    async def main() -> None:
        async with GitHubClient(api_url="http://127.0.0.1:9", token="t", sleep=fake_sleep) as gh:
            await gh.current_user()

    with pytest.raises(RemoteUnavailable) as err:
        asyncio.run(main())
    assert str(err.value).startswith("cannot reach the API at http://127.0.0.1:9")
    assert "is `relay hub` running / is the URL right?" in str(err.value)
    assert len(sleeps) == 1 and 0.375 <= sleeps[0] <= 0.5, "tried twice, not five times"


def test_401_says_how_to_fix_the_token() -> None:
    with pytest.raises(ConfigError) as err:
        run([answer(401, {"message": "Bad credentials"})], user)
    assert str(err.value).endswith(
        "rejected the token; set RELAY_TOKEN to a valid token (embedded hub: relay hub token LOGIN)"
    )


def test_404_on_the_repo_says_the_token_has_no_access() -> None:
    with pytest.raises(ConfigError) as err:
        run([answer(404, {"message": "Not Found"})], lambda gh: gh.get_repo())
    assert str(err.value).startswith("the token has no access to octo/relay — ")


def test_404_on_an_issue_of_a_repo_in_sight_says_not_found() -> None:
    """The repository answers (one request more): the 404 was the issue's own."""
    seen = {"full_name": "octo/relay"}
    with pytest.raises(ConfigError) as err:
        run([answer(404, {"message": "Not Found"}), answer(200, seen)], lambda gh: gh.get_issue(7))
    assert "not found in octo/relay" in str(err.value), err.value


def test_ref_races_are_answers_other_422s_are_errors() -> None:
    exists = answer(422, {"message": "Reference already exists"})
    created, _ = run([exists], lambda gh: gh.create_ref("refs/relay/claims/1/1", "a" * 40))
    assert created is False
    flaky = answer(422, {"message": "Reference update failed"})
    with pytest.raises(RemoteProtocolError, match="Reference update failed"):
        run([flaky], lambda gh: gh.create_ref("refs/relay/claims/1/1", "a" * 40))


def test_etag_cache_survives_the_process(tmp_path: Path) -> None:
    cache = tmp_path / "etag-cache.json"
    fresh = answer(200, USER, ETag='"v1"')

    async def not_modified(request: web.Request) -> web.StreamResponse:
        assert request.headers.get("If-None-Match") == '"v1"'
        return web.Response(status=304, headers={"ETag": '"v1"'})

    trace = Trace()
    first, _ = run([fresh], user, cache=cache)
    assert cache.exists()
    second, trace = run([fresh, not_modified], user, user, cache=cache, trace=trace)
    assert second == first, "a 304 answers with the cached body"
    assert (trace.stats.requests, trace.stats.not_modified) == (1, 1)
    assert "tok" not in cache.read_text(), "the cache never stores the token"


def test_writes_to_github_are_one_second_apart_and_to_the_hub_not() -> None:
    from relay.edges.github.transport import is_github, write_interval

    assert is_github("https://api.github.com") and is_github("https://ghe.example/api/v3")
    assert not is_github("http://127.0.0.1:8080")
    assert write_interval("https://api.github.com", RetryPolicy()) == 1.0
    assert write_interval("http://127.0.0.1:8080", RetryPolicy()) == 0.0
    made = {"id": 1, "body": "x", "user": USER, "created_at": "2026-01-01T00:00:00Z",
            "updated_at": "2026-01-01T00:00:00Z"}  # fmt: skip

    async def three(gh: GitHubClient) -> Any:
        for _ in range(3):
            await gh.create_comment(1, "x")

    _, paced = run([answer(201, made)], three, policy=RetryPolicy(write_interval=1.0))
    assert paced.sleeps == [1.0, 1.0]  # the clock stands still: each later write waits 1 s
    _, loopback = run([answer(201, made)], three)
    assert loopback.sleeps == []


BIG = 2_500_000_123  # a comment id of github.com's since 2024: past 2**31, GraphQL's Int


def test_a_claim_posted_but_its_id_unread_is_looked_for_not_posted_twice() -> None:
    """A mutation's answer that names no id for the comment it posted (as github.com's did
    for ``databaseId``, null past 2**31 beside an error): the comment is looked for over
    REST, and its id is the answer; it is not posted again."""
    mutated = answer(200, {
        "data": {"addComment": {"commentEdge": {"node": {"databaseId": None}}},
                 "updateIssue": {"issue": {"number": 7}}},
        "errors": [{"message": "Int cannot represent non 32-bit signed integer value"}],
    })  # fmt: skip
    stamp = "2030-03-17T17:46:40Z"
    listed = answer(200, [{
        "id": BIG, "body": "claim", "user": USER, "created_at": stamp, "updated_at": stamp,
        "html_url": f"https://github.com/octo/relay/issues/7#issuecomment-{BIG}",
    }])  # fmt: skip
    made, trace = run(
        [mutated, listed],
        lambda gh: gh.comment_and_relabel(7, "claim", issue_id="I_1", label_ids=["LA_1"]),
    )
    assert made == (BIG, True)
    assert [s["path"].partition("?")[0] for s in trace.seen] == [
        "/graphql", "/repos/octo/relay/issues/7/comments",
    ]  # fmt: skip


def test_comment_ids_past_2_31_are_read_off_their_urls() -> None:
    """``ever_edited`` and ``comment_edits`` name a comment by the id its ``url`` ends in,
    which every GitHub (and every Enterprise Server) gives, an issue's or a pull request's."""
    when = "2030-03-17T17:46:40Z"
    page = {"data": {"repository": {"issue": {"comments": {
        "pageInfo": {"hasNextPage": False, "endCursor": None},
        "nodes": [
            {"url": f"https://github.com/octo/relay/pull/7#issuecomment-{BIG}",
             "lastEditedAt": when,
             "userContentEdits": {"pageInfo": {"hasNextPage": False}, "nodes": [
                 {"editedAt": when, "editor": {"login": "octo", "databaseId": 1}}]}},
            {"url": "https://github.com/octo/relay/pull/7#issuecomment-5", "lastEditedAt": None,
             "userContentEdits": {"pageInfo": {"hasNextPage": False}, "nodes": []}},
        ],
    }}}}}  # fmt: skip
    edited, _ = run([answer(200, page)], lambda gh: gh.ever_edited(7))
    assert edited == frozenset({BIG})
    listed = {"data": {"repository": {"issue": {"comments": {
        "pageInfo": {"hasNextPage": False, "endCursor": None},
        "nodes": [{"id": f"IC_{n}", "url": f"https://github.com/octo/relay/pull/7#issuecomment-{n}"}
                  for n in (BIG, 5)],
    }}}}}  # fmt: skip
    versions = {"data": {"node": {"userContentEdits": {"pageInfo": {"hasNextPage": False},
        "nodes": [{"id": "UCE_1", "editedAt": when,
                   "editor": {"login": "octo", "databaseId": 1}}]}}}}  # fmt: skip
    texts = {"data": {"nodes": [{"id": "UCE_1", "diff": "claim"}]}}
    history, trace = run(
        [answer(200, listed), answer(200, versions), answer(200, texts)],
        lambda gh: gh.comment_edits(7, frozenset({1}), comments={BIG}),
    )
    assert history is not None
    edits, whole = history
    assert [(e.comment_id, e.editor and e.editor.login, e.body) for e in edits] == [
        (BIG, "octo", "claim")
    ]
    assert whole == frozenset({BIG}), "only the comment asked about is read"
    assert len(trace.seen) == 3
    nameless = {"data": {"repository": {"issue": {"comments": {
        "pageInfo": {"hasNextPage": False, "endCursor": None},
        "nodes": [{"url": "https://github.com/octo/relay/pull/7", "lastEditedAt": when}],
    }}}}}  # fmt: skip
    unknown, _ = run([answer(200, nameless)], lambda gh: gh.ever_edited(7))
    assert unknown is None, "an edited comment it cannot name: no answer, not a wrong one"
