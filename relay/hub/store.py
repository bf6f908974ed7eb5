"""The hub's SQLite store: schema, one-writer transactions, users, tokens, repositories.

The server uses one connection from the event-loop thread and never awaits inside a
write, so writes are serialised by construction. ``relay hub token`` may write from
another process at the same time: WAL plus ``BEGIN IMMEDIATE`` and a busy timeout cover it.
Every mutation calls :meth:`Store.record`, the single place where "what happened" is kept
(issue events are read from it; webhooks subscribe to :attr:`Store.listeners`). API
requests served in the same turn of the event loop share one transaction and its COMMIT,
each answered once it is committed (:meth:`Store.write`, :meth:`Store.settled`): durable
as any COMMIT of SQLite's in WAL mode with ``synchronous = NORMAL`` is, through the death
of the process (not of the machine's power).
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import contextvars
import hashlib
import secrets
import sqlite3
import string
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

from relay.errors import LocalUsageError

SCHEMA_VERSION = 1
DB_NAME = "hub.sqlite3"
CHECKPOINT_SECONDS = 1.0  # how often a serving hub writes its log back (checkpoint_in_background)
# Where the ids of comments and issues start: github.com's passed 2**31 in 2024, past
# GraphQL's Int (``databaseId`` of such a comment is an error and null there), so the
# hub's do too, or a client that reads them as Int would work here and fail on GitHub.
# Apart from each other, so that a comment's id taken for an issue's names nothing.
FIRST_IDS = {"comments": 2_400_000_001, "issues": 2_600_000_001}

SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS users (
  id INTEGER PRIMARY KEY AUTOINCREMENT, login TEXT NOT NULL UNIQUE COLLATE NOCASE,
  type TEXT NOT NULL DEFAULT 'User', created_at INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS tokens (
  digest TEXT PRIMARY KEY, user_id INTEGER NOT NULL, admin INTEGER NOT NULL,
  created_at INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS repos (
  id INTEGER PRIMARY KEY AUTOINCREMENT, owner_id INTEGER NOT NULL,
  name TEXT NOT NULL COLLATE NOCASE, private INTEGER NOT NULL, description TEXT,
  default_branch TEXT NOT NULL, next_number INTEGER NOT NULL DEFAULT 1,
  created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL, has_issues INTEGER NOT NULL DEFAULT 1,
  UNIQUE (owner_id, name));
CREATE TABLE IF NOT EXISTS collaborators (
  repo_id INTEGER NOT NULL, user_id INTEGER NOT NULL, permission TEXT NOT NULL,
  PRIMARY KEY (repo_id, user_id));
CREATE TABLE IF NOT EXISTS labels (
  id INTEGER PRIMARY KEY AUTOINCREMENT, repo_id INTEGER NOT NULL,
  name TEXT NOT NULL COLLATE NOCASE, color TEXT NOT NULL, description TEXT,
  UNIQUE (repo_id, name));
CREATE TABLE IF NOT EXISTS issues (
  id INTEGER PRIMARY KEY AUTOINCREMENT, repo_id INTEGER NOT NULL, number INTEGER NOT NULL,
  title TEXT NOT NULL, body TEXT, user_id INTEGER NOT NULL, state TEXT NOT NULL,
  state_reason TEXT, closed_by INTEGER, comments INTEGER NOT NULL DEFAULT 0,
  created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL, closed_at INTEGER,
  locked INTEGER NOT NULL DEFAULT 0, lock_reason TEXT, UNIQUE (repo_id, number));
CREATE INDEX IF NOT EXISTS issues_updated ON issues (repo_id, updated_at);
CREATE TABLE IF NOT EXISTS issue_labels (
  issue_id INTEGER NOT NULL, label_id INTEGER NOT NULL, PRIMARY KEY (issue_id, label_id));
CREATE TABLE IF NOT EXISTS comments (
  id INTEGER PRIMARY KEY AUTOINCREMENT, repo_id INTEGER NOT NULL, issue_id INTEGER NOT NULL,
  user_id INTEGER NOT NULL, body TEXT NOT NULL, created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL);
CREATE INDEX IF NOT EXISTS comments_issue ON comments (issue_id, id);
CREATE TABLE IF NOT EXISTS reactions (
  id INTEGER PRIMARY KEY AUTOINCREMENT, subject TEXT NOT NULL, subject_id INTEGER NOT NULL,
  user_id INTEGER NOT NULL, content TEXT NOT NULL, created_at INTEGER NOT NULL,
  UNIQUE (subject, subject_id, user_id, content));
CREATE TABLE IF NOT EXISTS refs (
  repo_id INTEGER NOT NULL, ref TEXT NOT NULL, sha TEXT NOT NULL, PRIMARY KEY (repo_id, ref));
CREATE TABLE IF NOT EXISTS journal (
  id INTEGER PRIMARY KEY AUTOINCREMENT, repo_id INTEGER, kind TEXT NOT NULL,
  action TEXT NOT NULL, actor_id INTEGER NOT NULL, issue_id INTEGER, comment_id INTEGER,
  label_name TEXT, label_color TEXT, detail TEXT, created_at INTEGER NOT NULL);
CREATE INDEX IF NOT EXISTS journal_issue ON journal (issue_id, id);
CREATE TABLE IF NOT EXISTS repo_redirects (
  owner_id INTEGER NOT NULL, name TEXT NOT NULL COLLATE NOCASE, repo_id INTEGER NOT NULL,
  PRIMARY KEY (owner_id, name));
"""

GROUPED: contextvars.ContextVar[bool] = contextvars.ContextVar("grouped", default=False)
"""Set while an API request is served: its writes may share a transaction (and its
COMMIT) with the writes of the other requests served in the same turn of the event loop;
the request is answered only after :meth:`Store.settled`."""

_TOKEN_ALPHABET = string.ascii_letters + string.digits
_JOURNAL_COLUMNS = ("repo_id", "issue_id", "comment_id", "label_name", "label_color", "detail")


@lru_cache(maxsize=64)
def _journal_insert(given: tuple[str, ...]) -> str | None:
    """The journal's INSERT naming only the columns given (the others are NULL), or None
    for a name it has no column for: SQLite binds a None through its slow path of
    adapters, and a comment's entry would bind three."""
    if not set(given) <= set(_JOURNAL_COLUMNS):
        return None
    columns = ", ".join((*given, "kind", "action", "actor_id", "created_at"))
    marks = ", ".join("?" * (len(given) + 4))
    return f"INSERT INTO journal ({columns}) VALUES ({marks})"


_JOURNAL_INSERT = (
    "INSERT INTO journal (repo_id, issue_id, comment_id, label_name, label_color,"
    " detail, kind, action, actor_id, created_at) VALUES (?,?,?,?,?,?,?,?,?,?)"
)


def now_us() -> int:
    """Wall-clock time in integer microseconds (rendered to seconds, as GitHub does)."""
    return time.time_ns() // 1000


def random_text(n: int) -> str:
    """``n`` random letters and digits."""
    return "".join(secrets.choice(_TOKEN_ALPHABET) for _ in range(n))


def fine_grained_pat() -> str:
    """A token shaped like GitHub's fine-grained PAT: ``github_pat_`` + 22 + ``_`` + 59."""
    return f"github_pat_{random_text(22)}_{random_text(59)}"


def digest(token: str) -> str:
    """Tokens are stored hashed, so a copied database does not leak them."""
    return hashlib.sha256(token.encode()).hexdigest()


@dataclass(frozen=True)
class JournalEntry:
    """One thing that happened, as recorded by a mutation (the future webhook payload)."""

    id: int
    repo_id: int | None
    kind: str
    action: str
    actor_id: int
    issue_id: int | None = None
    comment_id: int | None = None
    label_name: str | None = None
    label_color: str | None = None
    detail: str | None = None


@dataclass
class Store:
    """The hub's database; one instance per process, used from one thread."""

    path: Path
    db: sqlite3.Connection = field(init=False)
    listeners: list[Callable[[JournalEntry], None]] = field(default_factory=list)
    _pending: list[JournalEntry] = field(default_factory=list)
    _users: dict[int, dict[str, Any]] = field(default_factory=dict)
    _version: int = 0
    _data_version: int = -1
    _changes: int = -1
    _checkpoints: tuple[threading.Event, threading.Thread] | None = None
    _group: list[asyncio.Future[None]] | None = None  # a shared transaction's waiters
    _after: list[Callable[[], None]] = field(default_factory=list)
    _watched: int = 0
    _watched_data_version: int = -1
    _begun: int = 0  # write transactions begun by this connection (BEGIN IMMEDIATE)
    _watched_begun: int = -1  # the transaction ``watched`` last asked data_version in
    _loop: asyncio.AbstractEventLoop | None = None  # the shared transaction's event loop
    _flushing: asyncio.Handle | None = None  # its COMMIT, as scheduled on that loop
    _deferred: bool = False  # the COMMIT was put off once already
    _unwritten: bool = False  # the shared transaction has had no write yet
    _watched_at_begin: int = 0  # ``_watched`` when the open transaction began

    def __post_init__(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.db = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
        self.db.row_factory = sqlite3.Row
        self.db.execute("PRAGMA busy_timeout = 5000")
        self.db.execute("PRAGMA journal_mode = WAL")
        self.db.execute("PRAGMA synchronous = NORMAL")
        self.db.executescript(SCHEMA)  # idempotent; executescript commits on its own
        self._add_columns()
        with self.write():
            self.db.execute(
                "INSERT OR IGNORE INTO meta VALUES ('schema_version', ?)", (str(SCHEMA_VERSION),)
            )
            self._big_ids()

    def _big_ids(self) -> None:
        """Make the next comment and issue ids at least :data:`FIRST_IDS` (as on github.com):
        AUTOINCREMENT goes on from ``sqlite_sequence``. A store made by an older hub keeps
        the ids it gave; only those given from now on are big."""
        for table, first in FIRST_IDS.items():
            self.db.execute(
                "UPDATE sqlite_sequence SET seq = ? WHERE name = ? AND seq < ?",
                (first - 1, table, first - 1),
            )
            self.db.execute(
                "INSERT INTO sqlite_sequence (name, seq) SELECT ?, ?"
                " WHERE NOT EXISTS (SELECT 1 FROM sqlite_sequence WHERE name = ?)",
                (table, first - 1, table),
            )

    def _add_columns(self) -> None:
        """Bring a store made by an older hub up to date (columns added since)."""
        columns = {row[1] for row in self.db.execute("PRAGMA table_info(repos)")}
        if "has_issues" not in columns:
            self.db.execute("ALTER TABLE repos ADD COLUMN has_issues INTEGER NOT NULL DEFAULT 1")
        columns = {row[1] for row in self.db.execute("PRAGMA table_info(labels)")}
        if "is_default" not in columns:  # one of GitHub's default labels (``default``)
            self.db.execute("ALTER TABLE labels ADD COLUMN is_default INTEGER NOT NULL DEFAULT 0")
        columns = {row[1] for row in self.db.execute("PRAGMA table_info(repos)")}
        if "settings" not in columns:  # merge settings and the like, as a JSON object
            self.db.execute("ALTER TABLE repos ADD COLUMN settings TEXT NOT NULL DEFAULT '{}'")
        columns = {row[1] for row in self.db.execute("PRAGMA table_info(issues)")}
        if "locked" not in columns:
            self.db.execute("ALTER TABLE issues ADD COLUMN locked INTEGER NOT NULL DEFAULT 0")
            self.db.execute("ALTER TABLE issues ADD COLUMN lock_reason TEXT")

    @classmethod
    def open(cls, data_dir: Path) -> Store:
        """Open (creating if needed) the store under a data directory.

        Raises LocalUsageError, in one line, when the directory cannot hold it."""
        try:
            return cls(path=data_dir / DB_NAME)
        except (OSError, sqlite3.Error) as err:
            raise LocalUsageError(
                f"cannot open the hub's data in {data_dir}: {err}",
                hint="name a writable directory of the hub's own with --data",
            ) from None

    def close(self) -> None:
        """Close the connection (after the background checkpoints, if any, have stopped
        and the log is written back); the shared transaction, if open, is committed first."""
        self.flush()
        if self._checkpoints is not None:
            stop, thread = self._checkpoints
            stop.set()
            thread.join(timeout=30)
            self._checkpoints = None
            with contextlib.suppress(sqlite3.Error):
                self.db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        self.db.close()

    def checkpoint_in_background(self, every: float = CHECKPOINT_SECONDS) -> None:
        """Write the log back to the database from a thread of its own, every ``every``
        seconds, rather than inside a commit: SQLite's automatic checkpoint runs in the
        commit that fills the log (and syncs the file there), so one request in a few
        hundred paid for all of them, and a serving hub's commits cost half as much without
        it. The thread has a connection of its own; a PASSIVE checkpoint never waits for
        (nor blocks) a writer. Other processes' connections keep SQLite's default."""
        if self._checkpoints is not None:
            return
        self.db.execute("PRAGMA wal_autocheckpoint = 0")
        stop = threading.Event()

        def run() -> None:
            own = sqlite3.connect(self.path, isolation_level=None)
            try:
                own.execute("PRAGMA busy_timeout = 5000")
                own.execute("PRAGMA synchronous = NORMAL")
                while not stop.wait(every):
                    with contextlib.suppress(sqlite3.Error):
                        own.execute("PRAGMA wal_checkpoint(PASSIVE)")
            finally:
                own.close()

        thread = threading.Thread(target=run, name="hub-checkpoints", daemon=True)
        thread.start()
        self._checkpoints = (stop, thread)

    def write(self) -> _Write:
        """One write; journal listeners run after it, and what they defer with
        :meth:`after_commit` only once it is committed.

        Inside an API request (:data:`GROUPED`) the write joins a transaction the requests
        of this turn of the event loop share: one COMMIT for them all, made by the last of
        them to ask (:meth:`settled`) when nothing else is left to run, else at the loop's
        next turn (or the one after, for requests that arrived meanwhile); each request
        waits for it before it answers. Any other write commits on its own, as does the
        shared transaction first when one is open."""
        return _Write(self)

    def _begin(self) -> None:
        self.db.execute("BEGIN IMMEDIATE")
        self._begun += 1
        self._watched_at_begin = self._watched

    def join(self) -> None:
        """Open the shared transaction now, if none is, for a request that means to write
        (inside an API request, :data:`GROUPED`): what it reads before it writes is read in
        it, not each in a read transaction of its own (SQLite's locks, taken and released
        around every statement)."""
        if self._group is None and GROUPED.get():
            self._open_group()

    def _open_group(self) -> None:
        self._begin()
        self._group = []
        self._unwritten = True
        self._loop = asyncio.get_running_loop()
        self._flushing = self._loop.call_soon(self._flush_when_due)
        self._deferred = False

    def _group_write(self) -> tuple[int, bool]:
        """Join the shared transaction: where this write's journal entries start, and
        whether it is its first write. The first has it to itself, so undoing it is
        undoing the transaction; any later one is a savepoint in it."""
        if self._group is None:
            self._open_group()
        if self._unwritten:
            self._unwritten = False
            return len(self._pending), True
        self.db.execute("SAVEPOINT write")
        return len(self._pending), False

    @property
    def watched_committed(self) -> bool:
        """Whether what this connection reads of the tables given to :meth:`watch` is what
        is committed: outside a transaction, or in one that has not written them (nor seen
        another connection's commit since it began)."""
        return not self.db.in_transaction or self._watched == self._watched_at_begin

    def _group_done(self, mark: int, first: bool, failed: bool) -> None:
        """Release (or undo) a write's savepoint, or for the first write its transaction,
        and tell the listeners what it did."""
        if failed:
            if first:  # no other write is in it yet
                if self.db.in_transaction:
                    self.db.execute("ROLLBACK")
                self._watched_begun = -1
                if self._group:  # requests that only read wait on it: it goes on, empty
                    self._begin()
                    self._unwritten = True
                else:
                    self._group = None
            elif self.db.in_transaction:
                self.db.execute("ROLLBACK TO write")
                self.db.execute("RELEASE write")
            del self._pending[mark:]
            return
        if not first:
            self.db.execute("RELEASE write")
        self._bump()
        entries = self._pending[mark:]
        del self._pending[mark:]
        self._notify(entries)

    def _own_done(self, failed: bool) -> None:
        """End a write transaction of its own: rolled back, or committed before the
        listeners run."""
        if failed:
            self.db.execute("ROLLBACK")
            self._watched_begun = -1
            self._pending.clear()
            return
        self._bump()
        self.db.execute("COMMIT")
        self._watched_begun = -1
        self._changes = self.db.total_changes
        entries, self._pending = self._pending, []
        self._notify(entries)

    def _notify(self, entries: list[JournalEntry]) -> None:
        for entry in entries:
            for listener in self.listeners:
                listener(entry)

    def after_commit(self, action: Callable[[], None]) -> None:
        """Run ``action`` once the writes made so far are committed (now, if they are)."""
        if self._group is None:
            action()
        else:
            self._after.append(action)

    def _flush_when_due(self) -> None:
        """The scheduled COMMIT: put off once while requests that arrived meanwhile are
        being read, so that they join it (queued behind them; the last to write makes it,
        see :meth:`settled`), then made."""
        loop = self._loop
        if self._group is not None and not self._deferred and loop is not None:
            ready = getattr(loop, "_ready", None)
            if isinstance(ready, collections.deque) and ready:
                self._deferred = True
                loop.call_soon(self._queue_flush)
                return
        self._commit()

    def _queue_flush(self) -> None:
        if self._group is not None and self._loop is not None:
            self._flushing = self._loop.call_soon(self._flush_when_due)

    def flush(self) -> None:
        """Commit the shared transaction, if one is open, and wake the requests that wait
        for it (with the error, should the COMMIT fail: then none of its writes was kept)."""
        self._commit()

    def _commit(self) -> sqlite3.Error | None:
        """:meth:`flush`; the COMMIT's error, if it failed (every waiter is given it)."""
        waiters, self._group = self._group, None
        if waiters is None:
            return None
        self._watched_begun = -1  # what comes next is asked again
        after, self._after = self._after, []
        try:
            if not self.db.in_transaction:  # SQLite rolled it back on an error
                raise sqlite3.OperationalError("the shared write transaction was rolled back")
            self.db.execute("COMMIT")
        except sqlite3.Error as err:
            if self.db.in_transaction:
                self.db.execute("ROLLBACK")
            self._pending.clear()
            for waiter in waiters:  # every waiter raises it
                if not waiter.done():
                    waiter.set_exception(err)
            return err
        self._changes = self.db.total_changes
        for waiter in waiters:
            if not waiter.done():  # a request cancelled meanwhile (its client went) waits no more
                waiter.set_result(None)
        for action in after:
            action()
        return None

    async def settled(self) -> None:
        """Wait until the shared transaction, if one is open, is committed (raises the
        COMMIT's error if it failed): a request answers only what is durable.

        When nothing but the COMMIT is left to run (no other request is under way in this
        turn of the event loop, so none can join it), it is made at once: no waiting, and
        no turn of the loop spent on it (a lone client's every write)."""
        if self._group is None:
            return
        assert self._loop is not None and self._flushing is not None  # the loop the write saw
        if _alone(self._loop, self._flushing):
            self._flushing.cancel()
            err = self._commit()
            if err is not None:
                raise err
            return
        waiter = self._loop.create_future()  # each request waits on a future of its own,
        self._group.append(waiter)  # so that a cancelled one is alone
        await waiter

    def _bump(self) -> None:
        """Count one write of this connection's. The count lives in memory, not in the
        store: it keys answers kept in memory (lost with the process anyway), and a row
        bumped in every transaction was one more page in each commit's log."""
        self._version += 1

    @property
    def version(self) -> int:
        """How many write transactions the store has seen: an answer read from the store
        can change only when this does, so the hub keeps answers by it (no rendering, no
        hashing, until the next write); -1 while a transaction is open (keep nothing).

        Counted in memory: one for each of this connection's transactions, and one more
        whenever SQLite says another connection committed (``data_version``, e.g. ``relay
        hub token`` run beside a serving hub) or this one changed rows outside :meth:`write`
        (``total_changes``)."""
        if self.db.in_transaction:  # a write under way: its answer is not cached
            return -1
        if self.db.total_changes != self._changes:
            stray = self._changes != -1
            if stray:
                self._bump()
            self._changes = self.db.total_changes
            if stray:
                return self._version
        data_version = self.db.execute("PRAGMA data_version").fetchone()[0]
        if data_version != self._data_version:  # another connection committed
            if self._data_version != -1:
                self._bump()
            self._data_version = data_version
        return self._version

    def watch(self, tables: tuple[str, ...]) -> None:
        """Count every row this connection inserts, updates or deletes in ``tables`` (temporary
        triggers, so no other connection and no file sees them): :attr:`watched` moves with
        them, so that what is derived from those tables alone can be kept between requests
        that write elsewhere (a new comment leaves a repository's access as it was)."""

        def touched() -> None:
            self._watched += 1

        self.db.create_function("relay_touched", 0, touched)
        present = {r[0] for r in self.db.execute("SELECT name FROM sqlite_master")}
        for table in tables:
            if table not in present:
                continue
            for op in ("INSERT", "UPDATE", "DELETE"):
                self.db.execute(
                    f"CREATE TEMP TRIGGER IF NOT EXISTS relay_watch_{table}_{op.lower()}"
                    f" AFTER {op} ON main.{table} BEGIN SELECT relay_touched(); END"
                )

    @property
    def watched(self) -> int:
        """How often the tables given to :meth:`watch` have changed, as far as can be known:
        a row written by this connection, or any commit of another connection's (SQLite's
        ``data_version``; e.g. ``relay hub token`` beside a serving hub), moves it. Inside a
        write transaction of this connection's, asked once: no other connection can commit
        while it holds the write lock."""
        if self._watched_begun == self._begun and self.db.in_transaction:
            return self._watched
        if self.db.in_transaction:
            self._watched_begun = self._begun
        data_version = self.db.execute("PRAGMA data_version").fetchone()[0]
        if data_version != self._watched_data_version:
            self._watched_data_version = data_version
            self._watched += 1
        return self._watched

    def record(self, kind: str, action: str, *, actor_id: int, **where: Any) -> JournalEntry:
        """Append what a mutation did to the journal (inside its transaction)."""
        repo_id, issue_id, comment_id, label_name, label_color, detail = values = [
            where.get(c) for c in _JOURNAL_COLUMNS
        ]
        sql = _journal_insert(tuple(where)) if None not in where.values() else None
        if sql is None:  # a None given, or a name the journal has no column for
            sql, given = _JOURNAL_INSERT, values
        else:
            given = list(where.values())
        cur = self.db.execute(sql, (*given, kind, action, actor_id, now_us()))
        entry = JournalEntry(
            cur.lastrowid or 0, repo_id, kind, action, actor_id,
            issue_id, comment_id, label_name, label_color, detail,
        )  # fmt: skip
        self._pending.append(entry)
        return entry

    # --- users and tokens -------------------------------------------------------------

    def user(self, user_id: int) -> dict[str, Any]:
        """A user row as a dict, cached (logins never change in the hub)."""
        found = self._users.get(user_id)
        if found is None:
            row = self.db.execute("SELECT * FROM users WHERE id = ?", (user_id,)).fetchone()
            found = self._users[user_id] = dict(row)
        return found

    def user_by_login(self, login: str) -> dict[str, Any] | None:
        """The user with this login (case-insensitive), or None."""
        row = self.db.execute("SELECT id FROM users WHERE login = ?", (login,)).fetchone()
        return None if row is None else self.user(row["id"])

    def ensure_user(self, login: str) -> dict[str, Any]:
        """Create the user if new; return it."""
        with self.write() as db:
            db.execute(
                "INSERT OR IGNORE INTO users (login, created_at) VALUES (?, ?)", (login, now_us())
            )
        found = self.user_by_login(login)
        assert found is not None
        return found

    def create_token(self, login: str, *, admin: bool = False, long: bool = False) -> str:
        """Create the user if new and return a fresh token for it: a classic PAT's shape
        (40 characters) or, with ``long``, a fine-grained PAT's (93), so that clients are
        shown not to assume a length."""
        user = self.ensure_user(login)
        token = fine_grained_pat() if long else "ghp_" + random_text(36)
        with self.write() as db:
            db.execute(
                "INSERT INTO tokens VALUES (?, ?, ?, ?)",
                (digest(token), user["id"], int(admin), now_us()),
            )
        return token

    def token_owner(self, token: str) -> tuple[dict[str, Any], bool] | None:
        """The user a token belongs to and whether it is an admin token, or None."""
        row = self.db.execute(
            "SELECT user_id, admin FROM tokens WHERE digest = ?", (digest(token),)
        ).fetchone()
        return None if row is None else (self.user(row["user_id"]), bool(row["admin"]))


def _alone(loop: asyncio.AbstractEventLoop, handle: asyncio.Handle) -> bool:
    """Whether ``handle`` is all that ``loop`` has left to run: asyncio's queue of ready
    callbacks (not public, hence read with care: any other loop, or any doubt, says no)."""
    ready = getattr(loop, "_ready", None)
    return isinstance(ready, collections.deque) and len(ready) == 1 and ready[0] is handle


class _Write:
    """:meth:`Store.write`'s context: a class rather than a generator, since every API write
    passes it (a generator-made context manager costs several calls more per write)."""

    __slots__ = ("_first", "_mark", "_store")

    def __init__(self, store: Store) -> None:
        self._store = store
        self._mark = -1  # where the write's journal entries start; -1: its own transaction
        self._first = False  # the first write of the shared transaction

    def __enter__(self) -> sqlite3.Connection:
        store = self._store
        if GROUPED.get():
            self._mark, self._first = store._group_write()
        else:
            store.flush()
            store._begin()
        return store.db

    def __exit__(self, kind: type[BaseException] | None, *_: object) -> None:
        if self._mark < 0:
            self._store._own_done(kind is not None)
        else:
            self._store._group_done(self._mark, self._first, kind is not None)
