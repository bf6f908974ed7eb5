"""What the hub keeps between requests never shows: the same bytes, and no change missed.

The hub keeps what ``repo_access`` read (the repository's row, the caller's role) until a
row of a table it reads changes (relay/hub/api_repos.py, ``Store.watch``): a comment does
not drop it, but a new collaborator, a removed one, a renamed or newly private repository,
and a write by another connection to the store are seen by the very next request. A user
object's JSON is encoded once and spliced into answers (``render.encode``): the bytes are
``json.dumps``'s whatever the text around them. And the ``Last-Modified`` a write's answer
carries is the HTTP date ``email.utils`` would give.
"""

from __future__ import annotations

import json
import random
import sqlite3
import time
from datetime import datetime
from email.utils import format_datetime
from typing import Any

import pytest

from relay.hub import render
from relay.hub.store import DB_NAME
from relay.hub.web import http_date
from tests.conftest import HubProcess


@pytest.mark.parametrize("seed", range(3))
def test_http_date_is_what_email_utils_says(seed: int) -> None:
    rng = random.Random(seed)
    edges = [0, 951782400, 4102444799, 1709164800]  # the epoch, 29 Feb 2000 and 2024, 2099
    for ts in edges + [rng.randrange(0, 4102444800) for _ in range(2000)]:
        stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(ts))
        assert http_date(stamp) == format_datetime(datetime.fromisoformat(stamp), usegmt=True)


NASTY = ["", "plain", 'quote " and \\ backslash', "\x00nul", "é ü 日本 🎉", "\u2028", "</script>"]


@pytest.mark.parametrize("seed", range(4))
def test_encoded_answers_are_json_dumps_byte_for_byte(seed: int) -> None:
    rng = random.Random(seed)
    marks = [render._MARK, render._MARK + "0", json.dumps(render._MARK)]  # even the mark itself
    texts = NASTY + marks

    def comment(ident: int) -> dict[str, Any]:
        author = {"id": rng.randrange(1, 4), "login": rng.choice(["alice", "bob", "c-3"]),
                  "type": rng.choice(["User", "Bot"])}  # fmt: skip
        at = 1_700_000_000_000_000
        row = {"id": ident, "body": rng.choice(texts) * rng.randrange(1, 3),
               "created_at": at, "updated_at": at}  # fmt: skip
        base = rng.choice(["http://127.0.0.1:1", "https://h.example/api/v3"])
        return render.comment(base, "o/r", row, number=1, author=author,
                              association="NONE", reactions=None)  # fmt: skip

    for _ in range(200):
        one = comment(rng.randrange(1, 10**6))
        many = [comment(n) for n in range(rng.randrange(0, 6))]
        assert render._ENCODED[id(one["user"])][0] is one["user"], "its JSON is kept"
        odd = {"user": {"login": "not kept"}, "body": rng.choice(texts)}
        for data in (one, many, odd, [odd, one], rng.choice(texts), {"message": "x"}, [1, "a"]):
            assert render.encode(data) == json.dumps(data).encode()


@pytest.mark.parametrize("seed", range(3))
def test_a_comment_written_from_its_row_is_json_dumps_byte_for_byte(seed: int) -> None:
    """The answer to a comment's write is written straight from the row
    (``render.comment_json``): the bytes of the object ``render.comment`` makes, whatever
    the body, the origin, the repository's name, the ids and the reactions."""
    rng = random.Random(seed)
    texts = [*NASTY, render._MARK, '"}, "id": 1']
    for _ in range(300):
        author = {"id": rng.randrange(1, 4), "login": rng.choice(["alice", "bob", "c-3"]),
                  "type": rng.choice(["User", "Bot"])}  # fmt: skip
        at = rng.choice([0, 1_700_000_000_000_000, rng.randrange(0, 4_102_444_800_000_000)])
        row = {"id": rng.randrange(1, 2**62), "body": rng.choice(texts) * rng.randrange(1, 3),
               "created_at": at, "updated_at": at + rng.randrange(0, 10**9)}  # fmt: skip
        base = rng.choice(["http://127.0.0.1:1", "https://h.example/api/v3", 'http://"é\\'])
        full = rng.choice(["o/r", "a-b/c.d", 'ü/"'])
        reactions = rng.choice([None, {}, {"+1": 2, "heart": 1}, {"eyes": rng.randrange(9)}])
        kw: dict[str, Any] = {"number": rng.randrange(1, 10**6), "author": author,
                              "association": rng.choice(["NONE", "OWNER", "COLLABORATOR"]),
                              "reactions": reactions}  # fmt: skip
        made = json.dumps(render.comment(base, full, row, **kw)).encode()
        assert render.comment_json(base, full, row, **kw) == made


def test_access_follows_collaborators_privacy_and_names(
    hub: HubProcess, api: Any, alice: str, bob: str, unique: str
) -> None:
    repo = f"/repos/alice/{unique}"
    api(alice, "POST", "/user/repos", {"name": unique, "private": True})
    issue = api(alice, "POST", f"{repo}/issues", {"title": "kept"}).body
    comments = f"{repo}/issues/{issue['number']}/comments"
    assert api(bob, "GET", repo).status == 404
    assert api(bob, "GET", repo).status == 404  # kept as hidden: still hidden
    assert api(alice, "PUT", f"{repo}/collaborators/bob", {"permission": "push"}).status in (
        201,
        204,
    )
    assert api(bob, "GET", repo).status == 200  # seen at once, not after a while
    assert api(bob, "POST", comments, {"body": "as a collaborator"}).status == 201
    assert api(bob, "POST", comments, {"body": "and again"}).status == 201  # kept, still right
    answer = api(bob, "GET", comments).body
    assert [c["author_association"] for c in answer] == ["COLLABORATOR", "COLLABORATOR"]
    assert api(alice, "DELETE", f"{repo}/collaborators/bob").status == 204
    assert api(bob, "GET", repo).status == 404
    assert api(bob, "POST", comments, {"body": "no longer"}).status == 404

    assert api(alice, "PATCH", repo, {"private": False}).status == 200
    assert api(bob, "GET", repo).body["private"] is False
    assert api(alice, "PATCH", repo, {"name": f"{unique}-new"}).status == 200
    followed = api(bob, "GET", repo)  # the old name is GitHub's 301 at once, here followed
    assert followed.body["name"] == f"{unique}-new"
    assert api(bob, "GET", f"/repos/alice/{unique}-new").body["name"] == f"{unique}-new"
    assert api(alice, "POST", "/user/repos", {"name": unique}).status == 201  # the old name
    assert api(bob, "GET", repo).body["id"] != followed.body["id"]  # names the new one


def test_a_write_by_another_connection_is_seen_at_once(
    hub: HubProcess, api: Any, alice: str, bob: str, unique: str
) -> None:
    repo = f"/repos/alice/{unique}"
    api(alice, "POST", "/user/repos", {"name": unique})
    assert api(bob, "GET", repo).body["description"] is None
    db = sqlite3.connect(hub.data_dir / DB_NAME, timeout=10)
    with db:
        db.execute("UPDATE repos SET description = 'changed aside' WHERE name = ?", (unique,))
    db.close()
    assert api(bob, "GET", repo).body["description"] == "changed aside"
    db = sqlite3.connect(hub.data_dir / DB_NAME, timeout=10)
    with db:
        db.execute("UPDATE repos SET private = 1 WHERE name = ?", (unique,))
    db.close()
    assert api(bob, "GET", repo).status == 404
