"""Repository webhooks on the real hub process, delivered to a real receiver on loopback.

The receiver is an aiohttp server in a thread of the test; it records each delivery's
headers and raw body, and the signature is checked with gidgethub's own
``sansio.Event.from_http``, the way a GitHub App or relay's watcher checks it.
"""

from __future__ import annotations

import asyncio
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest
from aiohttp import web
from gidgethub import ValidationFailure, sansio
from multidict import CIMultiDict

SECRET = "hub hooks test secret"


@dataclass
class Received:
    """One delivery as the receiver saw it."""

    headers: CIMultiDict[str]
    body: bytes
    at: float

    @property
    def event(self) -> sansio.Event:
        return sansio.Event.from_http(self.headers, self.body, secret=SECRET)


@dataclass
class Receiver:
    """A real HTTP receiver on a free loopback port, served from a thread."""

    delay: float = 0.0
    got: list[Received] = field(default_factory=list)
    url: str = ""
    _cond: threading.Condition = field(default_factory=threading.Condition)
    _loop: asyncio.AbstractEventLoop | None = None
    _stop: asyncio.Event | None = None

    async def _handle(self, request: web.Request) -> web.Response:
        body = await request.read()
        if self.delay:
            await asyncio.sleep(self.delay)
        with self._cond:
            self.got.append(Received(CIMultiDict(request.headers), body, time.monotonic()))
            self._cond.notify_all()
        return web.Response(status=202)

    def _serve(self, ready: threading.Event) -> None:
        async def main() -> None:
            app = web.Application()
            app.router.add_post("/hook", self._handle)
            runner = web.AppRunner(app, access_log=None)
            await runner.setup()
            site = web.TCPSite(runner, "127.0.0.1", 0)
            await site.start()
            self.url = f"http://127.0.0.1:{runner.addresses[0][1]}/hook"
            self._loop, self._stop = asyncio.get_running_loop(), asyncio.Event()
            ready.set()
            await self._stop.wait()
            await runner.cleanup()

        asyncio.run(main())

    def start(self) -> Receiver:
        ready = threading.Event()
        self._thread = threading.Thread(target=self._serve, args=(ready,), daemon=True)
        self._thread.start()
        assert ready.wait(10)
        return self

    def stop(self) -> None:
        if self._loop is not None and self._stop is not None:
            self._loop.call_soon_threadsafe(self._stop.set)
            self._thread.join(10)

    def wait_for(self, count: int, timeout: float = 10.0) -> list[Received]:
        """The first ``count`` deliveries, waiting for them to arrive."""
        with self._cond:
            assert self._cond.wait_for(lambda: len(self.got) >= count, timeout), self.got
            return list(self.got[:count])


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    made = Receiver().start()
    yield made
    made.stop()


@pytest.fixture
def repo(api: Callable[..., Any], alice: str, unique: str) -> str:
    made = api(alice, "POST", "/user/repos", {"name": f"hooks-{unique}"})
    assert made.status == 201
    return f"/repos/{made.body['full_name']}"


def hook_body(url: str, events: list[str], **extra: Any) -> dict[str, Any]:
    config = {"url": url, "content_type": "json", "secret": SECRET}
    return {"name": "web", "config": config, "events": events, **extra}


def test_hooks_are_registered_listed_and_deleted_with_githubs_shapes(
    api: Callable[..., Any], alice: str, bob: str, repo: str, receiver: Receiver
) -> None:
    made = api(alice, "POST", f"{repo}/hooks", hook_body(receiver.url, ["issues"]))
    assert made.status == 201
    hook = made.body
    assert hook["config"] == {
        "url": receiver.url, "content_type": "json", "insecure_ssl": "0", "secret": "********"
    }  # fmt: skip
    assert (hook["type"], hook["name"], hook["active"], hook["events"]) == (
        "Repository", "web", True, ["issues"],
    )  # fmt: skip
    assert hook["url"].endswith(f"{repo}/hooks/{hook['id']}")
    listed = api(alice, "GET", f"{repo}/hooks").body
    one = api(alice, "GET", f"{repo}/hooks/{hook['id']}").body
    assert [h | {"last_response": None} for h in listed] == [one | {"last_response": None}]
    again = api(alice, "POST", f"{repo}/hooks", hook_body(receiver.url, ["issues"]))
    assert again.status == 422
    assert "already exists" in again.body["errors"][0]["message"]
    assert api(alice, "POST", f"{repo}/hooks", {"config": {}}).status == 422
    api(alice, "PUT", f"{repo}/collaborators/bob", {"permission": "push"})
    assert api(bob, "GET", f"{repo}/hooks").status == 404  # admin only, hidden otherwise
    changed = api(alice, "PATCH", f"{repo}/hooks/{hook['id']}", {"events": ["issue_comment"]})
    assert changed.body["events"] == ["issue_comment"]
    assert changed.body["config"]["secret"] == "********"
    assert api(alice, "DELETE", f"{repo}/hooks/{hook['id']}").status == 204
    assert api(alice, "GET", f"{repo}/hooks/{hook['id']}").status == 404


def test_ping_on_registration_is_signed_and_verifies_with_gidgethub(
    api: Callable[..., Any], alice: str, repo: str, receiver: Receiver
) -> None:
    hook = api(alice, "POST", f"{repo}/hooks", hook_body(receiver.url, ["issues"])).body
    (ping,) = receiver.wait_for(1)
    event = ping.event
    assert event.event == "ping"
    uuid.UUID(event.delivery_id)
    assert ping.headers["User-Agent"].startswith("GitHub-Hookshot/")
    assert ping.headers["Content-Type"] == "application/json"
    assert ping.headers["X-GitHub-Hook-ID"] == str(hook["id"])
    assert event.data["hook_id"] == hook["id"]
    assert event.data["hook"]["config"]["secret"] == "********"
    assert event.data["zen"]
    assert event.data["repository"]["full_name"] == repo.removeprefix("/repos/")
    assert event.data["sender"]["login"] == "alice"
    with pytest.raises(ValidationFailure):
        sansio.Event.from_http(ping.headers, ping.body, secret="another secret")
    # the receiver has the ping before the hub has read its answer: wait for the record
    for _ in range(100):
        shown = api(alice, "GET", f"{repo}/hooks/{hook['id']}").body["last_response"]
        if shown["code"] is not None:
            break
        time.sleep(0.05)
    assert (shown["code"], shown["status"]) == (202, "active")


def test_issue_and_comment_events_arrive_in_order_with_the_rest_apis_objects(
    api: Callable[..., Any], alice: str, repo: str, receiver: Receiver
) -> None:
    api(alice, "POST", f"{repo}/hooks", hook_body(receiver.url, ["issues", "issue_comment"]))
    receiver.wait_for(1)  # the ping
    issue = api(alice, "POST", f"{repo}/issues", {"title": "t", "labels": ["awaiting:worker"]})
    n = issue.body["number"]
    api(alice, "PATCH", f"{repo}/issues/{n}", {"title": "t2"})
    api(alice, "POST", f"{repo}/issues/{n}/labels", {"labels": ["working"]})
    api(alice, "DELETE", f"{repo}/issues/{n}/labels/awaiting:worker")
    api(alice, "PATCH", f"{repo}/issues/{n}", {"state": "closed"})
    api(alice, "PATCH", f"{repo}/issues/{n}", {"state": "open"})
    made = api(alice, "POST", f"{repo}/issues/{n}/comments", {"body": "first"}).body
    api(alice, "PATCH", f"{repo}/issues/comments/{made['id']}", {"body": "second"})
    before = api(alice, "GET", f"{repo}/issues/comments/{made['id']}").body
    api(alice, "DELETE", f"{repo}/issues/comments/{made['id']}")
    got = [r.event for r in receiver.wait_for(11)[1:]]
    assert [(e.event, e.data["action"]) for e in got] == [
        ("issues", "opened"), ("issues", "labeled"), ("issues", "edited"),
        ("issues", "labeled"), ("issues", "unlabeled"), ("issues", "closed"),
        ("issues", "reopened"), ("issue_comment", "created"), ("issue_comment", "edited"),
        ("issue_comment", "deleted"),
    ]  # fmt: skip
    assert len({e.delivery_id for e in got}) == len(got)
    assert got[1].data["label"] == api(alice, "GET", f"{repo}/labels/awaiting:worker").body
    assert got[3].data["label"]["name"] == "working"
    assert got[8].data["comment"] == before
    assert got[9].data["comment"] == before  # as it was, though it is gone now
    now = api(alice, "GET", f"{repo}/issues/{n}").body
    assert got[9].data["issue"] == {k: v for k, v in now.items() if k != "closed_by"}
    repository = api(alice, "GET", repo).body
    assert got[9].data["repository"] == {k: v for k, v in repository.items() if k != "permissions"}
    assert got[9].data["sender"] == now["user"]  # a simple user, as the issue's author is
    profile = api(alice, "GET", "/users/alice").body  # GitHub's public user: a superset
    assert {k: profile[k] for k in now["user"]} == now["user"] and "followers" in profile


def test_a_hook_gets_only_its_events_and_form_payloads_verify_too(
    api: Callable[..., Any], alice: str, repo: str, receiver: Receiver
) -> None:
    body = hook_body(receiver.url, ["issue_comment"])
    body["config"]["content_type"] = "form"
    api(alice, "POST", f"{repo}/hooks", body)
    n = api(alice, "POST", f"{repo}/issues", {"title": "quiet"}).body["number"]
    api(alice, "POST", f"{repo}/issues/{n}/comments", {"body": "loud"})
    ping, comment = receiver.wait_for(2)
    assert ping.event.event == "ping"
    assert comment.headers["Content-Type"] == "application/x-www-form-urlencoded"
    assert (comment.event.event, comment.event.data["comment"]["body"]) == ("issue_comment", "loud")
    time.sleep(0.3)
    assert len(receiver.got) == 2  # no `issues` delivery for the issue itself


def test_a_slow_or_dead_receiver_never_slows_the_api(
    api: Callable[..., Any], alice: str, repo: str, receiver: Receiver
) -> None:
    receiver.delay = 0.8
    dead = Receiver().start()
    dead.stop()  # its port is closed now: every delivery to it fails
    api(alice, "POST", f"{repo}/hooks", hook_body(dead.url, ["issues"]))
    api(alice, "POST", f"{repo}/hooks", hook_body(receiver.url, ["issues"]))
    started = time.monotonic()
    numbers = [api(alice, "POST", f"{repo}/issues", {"title": f"i{i}"}).body for i in range(3)]
    assert time.monotonic() - started < 1.0  # three deliveries would take 2.4 s
    got = receiver.wait_for(4)[1:]
    assert [r.event.data["issue"]["number"] for r in got] == [i["number"] for i in numbers]
    hooks = api(alice, "GET", f"{repo}/hooks").body
    assert [h["last_response"]["status"] for h in hooks] == ["failed", "active"]
