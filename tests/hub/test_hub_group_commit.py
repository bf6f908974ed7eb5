"""Concurrent writes share one COMMIT, and none is answered before it is committed.

The hub commits the writes of the requests it serves in one turn of its event loop
together (relay/hub/store.py); the answers must be exactly those of one transaction per
write: distinct ids in the order the comments were made, the issue's count moved by each,
and every answered comment already visible to another connection to the store (the
durability a separate transaction gave), while a token made by another process meanwhile
still works.
"""

from __future__ import annotations

import asyncio
import sqlite3
from typing import Any

import aiohttp

from relay.hub.store import DB_NAME
from tests.conftest import HubProcess

CLIENTS = 8
PER_CLIENT = 6


async def _post_all(hub: HubProcess, token: str, path: str) -> list[tuple[int, dict[str, Any]]]:
    """CLIENTS clients posting PER_CLIENT comments each, each answer checked against a
    second connection to the store as soon as it arrives."""
    db = sqlite3.connect(hub.data_dir / DB_NAME)
    headers = {"Authorization": f"token {token}"}
    answers: list[tuple[int, dict[str, Any]]] = []

    async def client(session: aiohttp.ClientSession, n: int) -> None:
        for i in range(PER_CLIENT):
            body = {"body": f"client {n} comment {i}"}
            async with session.post(f"{hub.url}{path}", json=body, headers=headers) as resp:
                data = await resp.json()
                assert resp.status == 201, data
                assert resp.headers["ETag"].startswith('"')
                seen = db.execute("SELECT body FROM comments WHERE id = ?", (data["id"],))
                assert seen.fetchone() == (body["body"],), "answered before it was committed"
                answers.append((n, data))

    connector = aiohttp.TCPConnector(limit=CLIENTS)
    async with aiohttp.ClientSession(connector=connector) as session:
        await asyncio.gather(*(client(session, n) for n in range(CLIENTS)))
    db.close()
    return answers


def test_concurrent_comments_are_committed_before_their_answers(
    hub: HubProcess, api: Any, alice: str, unique: str
) -> None:
    api(alice, "POST", "/user/repos", {"name": unique})
    issue = api(alice, "POST", f"/repos/alice/{unique}/issues", {"title": "many at once"}).body
    path = f"/repos/alice/{unique}/issues/{issue['number']}/comments"
    answers = asyncio.run(_post_all(hub, alice, path))
    ids = [data["id"] for _, data in answers]
    assert len(set(ids)) == CLIENTS * PER_CLIENT
    for n in range(CLIENTS):  # each client's comments in the order it made them
        mine = [data for who, data in answers if who == n]
        assert [d["body"] for d in mine] == [f"client {n} comment {i}" for i in range(PER_CLIENT)]
        assert [d["id"] for d in mine] == sorted(d["id"] for d in mine)
    fresh = hub.token("group-commit-late")  # another process writes beside the hub
    assert api(fresh, "GET", "/user").body["login"] == "group-commit-late"
    listed = api(alice, "GET", f"{path}?per_page=100").body
    assert [c["id"] for c in listed] == sorted(ids)
    after = api(alice, "GET", f"/repos/alice/{unique}/issues/{issue['number']}").body
    assert after["comments"] == CLIENTS * PER_CLIENT


async def _mixed(hub: HubProcess, token: str, repo: str, number: int) -> list[int]:
    """Each client comments, creates the same label as every other, and comments again:
    the refused creations (422 inside a shared transaction) must undo only themselves."""
    headers = {"Authorization": f"token {token}"}
    statuses: list[int] = []

    async def client(session: aiohttp.ClientSession, n: int) -> None:
        for what in ("comment", "label", "comment"):
            path, body = (
                (f"{repo}/issues/{number}/comments", {"body": f"{n} {what}"})
                if what == "comment"
                else (f"{repo}/labels", {"name": "same-for-all", "color": "ededed"})
            )
            async with session.post(f"{hub.url}{path}", json=body, headers=headers) as resp:
                await resp.read()
                if what == "label":
                    statuses.append(resp.status)
                assert resp.status in ((201, 422) if what == "label" else (201,))

    connector = aiohttp.TCPConnector(limit=CLIENTS)
    async with aiohttp.ClientSession(connector=connector) as session:
        await asyncio.gather(*(client(session, n) for n in range(CLIENTS)))
    return statuses


def test_a_refused_write_in_a_shared_commit_undoes_only_itself(
    hub: HubProcess, api: Any, alice: str, unique: str
) -> None:
    api(alice, "POST", "/user/repos", {"name": unique})
    repo = f"/repos/alice/{unique}"
    issue = api(alice, "POST", f"{repo}/issues", {"title": "mixed"}).body
    statuses = asyncio.run(_mixed(hub, alice, repo, issue["number"]))
    assert sorted(statuses) == [201] + [422] * (CLIENTS - 1)
    labels = [lab["name"] for lab in api(alice, "GET", f"{repo}/labels").body]
    assert labels.count("same-for-all") == 1
    comments = api(alice, "GET", f"{repo}/issues/{issue['number']}/comments?per_page=100").body
    assert sorted(c["body"] for c in comments) == sorted(
        f"{n} comment" for n in range(CLIENTS) for _ in range(2)
    )
    assert api(alice, "GET", f"{repo}/issues/{issue['number']}").body["comments"] == 2 * CLIENTS
