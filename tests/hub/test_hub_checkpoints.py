"""A serving hub writes its log back in a thread of its own, never inside a request's
commit: SQLite's automatic checkpoint (which syncs the file) is off on its connection, a
background connection writes the log back while writes go on, and closing leaves no log."""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path

from relay.hub.store import DB_NAME, Store


def written_back(path: Path) -> int:
    """The tokens the database file itself holds, read without the write-ahead log (an
    immutable read): what checkpoints have written back, and nothing else."""
    main = sqlite3.connect(f"file:{path}?mode=ro&immutable=1", uri=True)
    try:
        return int(main.execute("SELECT COUNT(*) FROM tokens").fetchone()[0])
    except sqlite3.DatabaseError:  # not even the table written back yet, or a checkpoint
        return 0  # writing pages while this immutable read looks (a torn read: look again)
    finally:
        main.close()


def test_the_log_is_written_back_in_the_background_and_at_close(tmp_path: Path) -> None:
    store = Store.open(tmp_path)
    path = tmp_path / DB_NAME
    wal = path.with_name(DB_NAME + "-wal")
    assert store.db.execute("PRAGMA wal_autocheckpoint").fetchone()[0] > 0, "SQLite's default"
    store.checkpoint_in_background(every=0.05)
    assert store.db.execute("PRAGMA wal_autocheckpoint").fetchone()[0] == 0
    for n in range(300):  # about 1,000 pages: SQLite's own checkpoint would have run
        store.create_token(f"user{n % 7}")
    made = int(store.db.execute("SELECT COUNT(*) FROM tokens").fetchone()[0])
    deadline = time.monotonic() + 10
    while written_back(path) < made and time.monotonic() < deadline:
        time.sleep(0.05)
    assert written_back(path) == made == 300, "the background connection wrote the log back"
    assert store.user_by_login("user3") is not None
    store.close()
    assert not wal.exists() or wal.stat().st_size == 0, "closing writes the log back"
    again = Store.open(tmp_path)  # nothing was lost
    try:
        assert again.user_by_login("user6") is not None
    finally:
        again.close()
