"""The store's journal — the single place where mutations say what happened, which issue
events are read from and webhooks will subscribe to — on a real SQLite file."""

from __future__ import annotations

from pathlib import Path

import pytest

from relay.hub.store import JournalEntry, Store


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
