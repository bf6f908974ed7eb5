"""The store's journal — the single place where mutations say what happened, which issue
events are read from and webhooks will subscribe to — on a real SQLite file."""

from __future__ import annotations

import asyncio
import sqlite3
from pathlib import Path

import pytest

from relay.hub.store import DB_NAME, FIRST_IDS, GROUPED, SCHEMA, JournalEntry, Store


def test_listeners_hear_each_entry_after_commit_and_never_on_rollback(tmp_path: Path) -> None:
    store = Store.open(tmp_path)
    heard: list[JournalEntry] = []
    store.listeners.append(heard.append)
    user = store.ensure_user("nia")
    with store.write():
        store.record("issues", "labeled", actor_id=user["id"], repo_id=1, label_name="x")
        assert heard == [], "listeners must wait for the commit"
    assert [(e.kind, e.action, e.label_name) for e in heard] == [("issues", "labeled", "x")]
    with pytest.raises(RuntimeError), store.write():
        store.record("issues", "closed", actor_id=user["id"], repo_id=1)
        raise RuntimeError("abort")
    assert len(heard) == 1
    rows = store.db.execute("SELECT action FROM journal").fetchall()
    assert [r[0] for r in rows] == ["labeled"]
    store.close()


def test_tokens_are_stored_hashed_and_survive_reopening(tmp_path: Path) -> None:
    store = Store.open(tmp_path)
    token = store.create_token("oz", admin=True)
    store.close()
    raw = (tmp_path / "hub.sqlite3").read_bytes()
    assert token.encode() not in raw
    again = Store.open(tmp_path)
    owner = again.token_owner(token)
    assert owner is not None and owner[0]["login"] == "oz" and owner[1] is True
    assert again.token_owner(token + "x") is None
    again.close()


def test_a_failed_write_in_a_shared_transaction_undoes_itself_alone(tmp_path: Path) -> None:
    """The writes of one turn share a transaction: the first opens it (and, failing, takes
    it back whole, as nothing else is in it yet), each later one is a savepoint in it. Any
    that fails leaves no row and no journal entry, the others are committed together, and
    a second connection sees them once the shared COMMIT is done."""
    store = Store.open(tmp_path)
    heard: list[JournalEntry] = []
    store.listeners.append(heard.append)
    user = store.ensure_user("nia")
    other = sqlite3.connect(tmp_path / "hub.sqlite3")

    def write(label: str, *, fail: bool = False) -> None:
        try:
            with store.write() as db:
                db.execute(
                    "INSERT INTO labels (repo_id, name, color) VALUES (1, ?, 'f00')", (label,)
                )
                store.record("label", "created", actor_id=user["id"], repo_id=1, label_name=label)
                if fail:
                    raise RuntimeError(label)
        except RuntimeError:
            pass

    def labels() -> list[str]:
        return [r[0] for r in other.execute("SELECT name FROM labels ORDER BY id")]

    async def turn(plan: list[tuple[str, bool]]) -> None:
        token = GROUPED.set(True)
        try:
            for label, fail in plan:
                write(label, fail=fail)
        finally:
            GROUPED.reset(token)
        assert labels() == seen, "nothing is visible before the shared COMMIT"
        await store.settled()

    seen: list[str] = []
    asyncio.run(turn([("a", True), ("b", False), ("c", True), ("d", False)]))
    seen = labels()
    assert seen == ["b", "d"]
    asyncio.run(turn([("e", False), ("f", True), ("g", False)]))
    assert labels() == ["b", "d", "e", "g"]
    assert [e.label_name for e in heard] == ["b", "d", "e", "g"]
    journal = store.db.execute("SELECT label_name FROM journal WHERE kind = 'label'")
    assert [r[0] for r in journal] == ["b", "d", "e", "g"]
    other.close()
    store.close()


def test_a_request_that_only_read_is_answered_when_the_first_write_after_it_fails(
    tmp_path: Path,
) -> None:
    """A request that means to write opens the shared transaction before it reads
    (``Store.join``): should it write nothing and wait, and the first write after it fail,
    the transaction is taken back and goes on, so the waiter is answered and the next
    write is committed."""
    store = Store.open(tmp_path)
    user = store.ensure_user("nia")

    def write(label: str, *, fail: bool) -> None:
        try:
            with store.write() as db:
                db.execute(
                    "INSERT INTO labels (repo_id, name, color) VALUES (1, ?, 'f00')", (label,)
                )
                store.record("label", "created", actor_id=user["id"], repo_id=1, label_name=label)
                if fail:
                    raise RuntimeError(label)
        except RuntimeError:
            pass

    async def reader() -> None:
        store.join()
        store.db.execute("SELECT COUNT(*) FROM labels").fetchone()
        await store.settled()

    async def turn() -> None:
        token = GROUPED.set(True)
        try:
            waiting = asyncio.ensure_future(reader())
            await asyncio.sleep(0)  # it joins, reads and waits
            assert store.db.in_transaction
            write("a", fail=True)
            assert store.db.in_transaction, "the transaction goes on for the one waiting"
            write("b", fail=False)
        finally:
            GROUPED.reset(token)
        await store.settled()
        await asyncio.wait_for(waiting, 5)

    asyncio.run(turn())
    other = sqlite3.connect(tmp_path / "hub.sqlite3")
    assert [r[0] for r in other.execute("SELECT name FROM labels")] == ["b"]
    other.close()
    store.close()


def test_the_journal_keeps_the_same_row_whether_a_none_is_given_or_left_out(
    tmp_path: Path,
) -> None:
    """``Store.record`` names only the columns it is given a value for (a None would take
    SQLite's slow path of adapters): the rows, and the entries the listeners hear, are the
    same whichever way a caller says nothing."""
    store = Store.open(tmp_path)
    heard: list[JournalEntry] = []
    store.listeners.append(heard.append)
    user = store.ensure_user("nia")
    with store.write():
        store.record("issues", "labeled", actor_id=user["id"], repo_id=1, label_name="x")
        store.record(
            "issues", "labeled", actor_id=user["id"], repo_id=1, label_name="x", detail=None
        )
        store.record("issues", "labeled", actor_id=user["id"], label_name="x", repo_id=1)
    rows = store.db.execute(
        "SELECT repo_id, kind, action, actor_id, issue_id, comment_id, label_name, label_color,"
        " detail FROM journal"
    ).fetchall()
    assert len(rows) == 3 and len({tuple(r) for r in rows}) == 1
    assert tuple(rows[0]) == (1, "issues", "labeled", user["id"], None, None, "x", None, None)
    assert len({(e.repo_id, e.label_name, e.detail, e.issue_id) for e in heard}) == 1
    store.close()


def _insert(db: sqlite3.Connection, table: str) -> int:
    """One bare row in ``issues`` or ``comments``; its id."""
    if table == "issues":
        sql = "INSERT INTO issues (repo_id, number, title, user_id, state, created_at, updated_at)"
        sql += " VALUES (1, (SELECT COUNT(*) + 1 FROM issues), 't', 1, 'open', 0, 0)"
    else:
        sql = "INSERT INTO comments (repo_id, issue_id, user_id, body, created_at, updated_at)"
        sql += " VALUES (1, 1, 1, 'b', 0, 0)"
    cur = db.execute(sql)
    assert cur.lastrowid is not None
    return cur.lastrowid


def test_comment_and_issue_ids_start_past_2_31_as_on_github(tmp_path: Path) -> None:
    """github.com's comment and issue ids passed 2**31 (GraphQL's Int) in 2024: a new store's
    do too, apart from each other. A store an older hub made keeps the small ids it gave,
    and gives big ones from then on."""
    store = Store.open(tmp_path / "new")
    with store.write() as db:
        comment, issue = _insert(db, "comments"), _insert(db, "issues")
    assert comment == FIRST_IDS["comments"] > 2**31 and issue == FIRST_IDS["issues"] > 2**31
    store.close()
    again = Store.open(tmp_path / "new")  # reopening moves nothing
    with again.write() as db:
        assert _insert(db, "comments") == comment + 1
    again.close()

    old = sqlite3.connect(tmp_path / "old.sqlite3", isolation_level=None)
    old.executescript(SCHEMA)
    small = [_insert(old, "comments"), _insert(old, "issues")]
    old.close()
    (tmp_path / "old").mkdir()
    (tmp_path / "old.sqlite3").rename(tmp_path / "old" / DB_NAME)
    kept = Store.open(tmp_path / "old")
    assert small == [1, 1]
    assert [r[0] for r in kept.db.execute("SELECT id FROM comments")] == [1]
    with kept.write() as db:
        assert [_insert(db, "comments"), _insert(db, "issues")] == [
            FIRST_IDS["comments"], FIRST_IDS["issues"],
        ]  # fmt: skip
    kept.close()
