"""A conditional GET is a 304 exactly when the body would be byte-identical to the last 200's.

The hub answers a 304 from the ETag it kept for a request while no write has moved the
store's version (relay/hub/middleware.py), so the property is checked over a real hub with
random writes of every kind interleaved with conditional GETs of every versioned route, by
two users, with rounds of no write at all between them (where the kept ETags answer), a
token made by another process, and a restart.
"""

from __future__ import annotations

import json
import random
import urllib.error
import urllib.request
from collections.abc import Iterator
from typing import Any

import pytest

from tests.conftest import HubProcess, start_hub

REPO = "/repos/alice/props"
ISSUES = (1, 2)
LABELS = ("stage-a", "stage-b", "stage-c")
REACTIONS = ("+1", "heart", "eyes")
READS = (
    REPO,
    f"{REPO}/labels",
    f"{REPO}/labels/stage-a",
    f"{REPO}/issues",
    f"{REPO}/issues?state=all&labels=stage-a",
    f"{REPO}/issues/comments",
    f"{REPO}/collaborators/bob/permission",
    f"{REPO}/collaborators/carol/permission",
    f"{REPO}/issues/1",
    f"{REPO}/issues/2",
    f"{REPO}/issues/1/comments",
    f"{REPO}/issues/1/comments?per_page=2&page=1",
    f"{REPO}/issues/1/comments?per_page=2&page=2",
    f"{REPO}/issues/2/comments",
    f"{REPO}/issues/1/labels",
    f"{REPO}/issues/1/events",
    f"{REPO}/issues/1/reactions",
    "/alice/props/issues",  # the web pages made from the store alone: kept as the API's
    "/alice/props/issues?q=is%3Aopen+label%3Astage-a",
    "/alice/props/issues/1",
    "/alice/props/issues/2",
)

BOB_READS = (
    REPO, f"{REPO}/issues/1", f"{REPO}/collaborators/bob/permission", "/alice/props/issues/1"
)  # fmt: skip


def send(
    url: str,
    token: str,
    method: str,
    path: str,
    body: Any = None,
    headers: dict[str, str] | None = None,
) -> tuple[int, dict[str, str], bytes]:
    """One raw request: status, lower-cased headers and the body's exact bytes."""
    data = None if body is None else json.dumps(body).encode()
    sent = {"Authorization": f"token {token}", **(headers or {})}
    req = urllib.request.Request(f"{url}{path}", data, sent, method=method)
    try:
        with urllib.request.urlopen(req, timeout=10) as resp:
            status, head, raw = resp.status, dict(resp.headers), resp.read()
    except urllib.error.HTTPError as err:
        status, head, raw = err.code, dict(err.headers), err.read()
    return status, {k.lower(): v for k, v in head.items()}, raw


@pytest.fixture(scope="module")
def own_hub(tmp_path_factory: pytest.TempPathFactory) -> Iterator[HubProcess]:
    """A hub of this module's own: the test restarts it."""
    proc = start_hub(tmp_path_factory.mktemp("etags") / "data")
    yield proc
    proc.stop()


class World:
    """The hub, two users' tokens, and the last 200 each (user, path) was answered."""

    def __init__(self, hub: HubProcess, rng: random.Random) -> None:
        self.hub, self.rng = hub, rng
        self.alice, self.bob = hub.token("alice"), hub.token("bob")
        self.last: dict[tuple[str, str], tuple[str, bytes]] = {}
        self.comments: list[int] = []
        self.not_modified = self.changed = self.same_body_200 = 0

    def write(self, method: str, path: str, body: Any = None, *, token: str = "") -> Any:
        status, _, raw = send(self.hub.url, token or self.alice, method, path, body)
        assert status < 300 or (status == 404 and "/labels/" in path), (method, path, raw[:200])
        return json.loads(raw) if raw else None

    def check(self, token: str, path: str) -> None:
        """A conditional GET with the last 200's ETag: a 304 only when an unconditional GET
        now answers the very same bytes with the same ETag, a 200 only when they differ."""
        url, last = self.hub.url, self.last.get((token, path))
        headers = {"If-None-Match": last[0]} if last else {}
        status, head, raw = send(url, token, "GET", path, headers=headers)
        if status == 304:
            assert last is not None
            status, head, raw = send(url, token, "GET", path)
            assert status == 200 and raw == last[1], f"304 for {path}, but the body changed"
            assert head["etag"] == last[0]
            self.not_modified += 1
            return
        if status != 200:
            self.last.pop((token, path), None)
            return
        assert last is None or raw != last[1], f"200 for {path} with the same bytes"
        self.changed += last is not None
        self.last[(token, path)] = (head["etag"], raw)

    def read_all(self) -> None:
        for path in READS:
            self.check(self.alice, path)
        for path in BOB_READS:  # what depends on who asks
            self.check(self.bob, path)

    def random_write(self) -> None:
        """One write of a kind drawn at random (some change nothing a GET shows)."""
        rng = self.rng
        issue, label, reaction = (
            f"{REPO}/issues/{rng.choice(ISSUES)}",
            rng.choice(LABELS),
            rng.choice(REACTIONS),
        )
        moves: list[tuple[str, str, Any]] = [
            ("POST", f"{issue}/comments", {"body": rng_text(rng)}),
            ("POST", f"{issue}/labels", [label]),
            ("PUT", f"{issue}/labels", rng.sample(LABELS, 2)),
            ("DELETE", f"{issue}/labels/{label}", None),
            ("PATCH", issue, {"title": rng_text(rng)}),
            ("PATCH", issue, {"state": rng.choice(("open", "closed"))}),
            ("PATCH", f"{REPO}/labels/{label}", {"color": rng.choice(("ff0000", "00ff00"))}),
            ("PATCH", REPO, {"description": rng.choice(("one", "two", None))}),
            ("PUT", f"{REPO}/collaborators/bob", {"permission": rng.choice(("pull", "push"))}),
            ("POST", f"{issue}/reactions", {"content": reaction}),
            ("POST", "/user/repos", {"name": f"other{rng.randrange(10**6)}"}),
        ]  # fmt: skip
        if self.comments:
            comment = f"{REPO}/issues/comments/{rng.choice(self.comments)}"
            moves += [
                ("PATCH", comment, {"body": rng_text(rng)}),
                ("POST", f"{comment}/reactions", {"content": reaction}),
                ("DELETE", comment, None),
            ]
        method, path, body = rng.choice(moves)
        token = self.bob if path.endswith("/reactions") and rng.random() < 0.5 else self.alice
        answer = self.write(method, path, body, token=token)
        if path.endswith("/comments") and method == "POST":
            self.comments.append(answer["id"])
        elif method == "DELETE" and "/issues/comments/" in path:
            self.comments.remove(int(path.rsplit("/", 1)[1]))


def rng_text(rng: random.Random) -> str:
    """Text from a small alphabet, so that an edit often writes what was already there."""
    return rng.choice(("same", "other", "third"))


def test_a_304_is_given_exactly_when_the_body_is_unchanged(own_hub: HubProcess) -> None:
    world = World(own_hub, random.Random(29))
    world.write("POST", "/user/repos", {"name": "props"})
    for label in LABELS:
        world.write("POST", f"{REPO}/labels", {"name": label, "color": "ededed"})
    for _ in ISSUES:
        world.write("POST", f"{REPO}/issues", {"title": "a job"})
    world.read_all()
    for step in range(30):
        for _ in range(world.rng.randrange(3)):  # 0 writes: the kept ETags answer
            world.random_write()
        if step == 12:
            own_hub.token("carol")  # another process writes the store
        if step == 20:
            own_hub.restart()
        world.read_all()
    assert world.not_modified > 100 and world.changed > 30, vars(world)
