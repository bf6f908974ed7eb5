"""Repository webhooks: ``/repos/{o}/{r}/hooks`` and their deliveries, as GitHub makes them.

Ground rules: a delivery never slows the API. The payload is rendered at once, inside the
request that changed something (after its transaction committed, from
:attr:`Store.listeners`), so it shows the state of that moment with the very renderers the
REST API uses; sending it is queued. Each hook has one queue and one sender task, so its
deliveries arrive in order; a slow or dead receiver only delays that hook's own queue.
Every POST has a short timeout and is never retried, as on GitHub ("no automatic
redelivery"); the outcome is kept as the hook's ``last_response``.

The REST endpoints are in ``api_hooks``. Delivered: ``issues`` (opened, edited, labeled,
unlabeled, closed, reopened, locked, unlocked) and ``issue_comment`` (created, edited,
deleted), and ``ping`` when a hook is created; an ``edited`` payload's ``changes`` holds
what the edit replaced.
Headers: ``X-GitHub-Event``, ``X-GitHub-Delivery`` (a UUID), ``X-GitHub-Hook-ID``,
``X-GitHub-Hook-Installation-Target-Type`` and ``-ID`` (the repository),
``X-Hub-Signature-256`` and ``X-Hub-Signature`` (when the hook has a secret), ``User-Agent:
GitHub-Hookshot/…``. The secret is never shown back (``********``), as GitHub does.

GitHub docs: "Repository webhooks" (REST), "Webhook events and payloads", "Validating
webhook deliveries".
"""

from __future__ import annotations

import asyncio
import functools
import hashlib
import hmac
import json
import logging
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any
from urllib.parse import urlencode

from aiohttp import web

from relay.hub import render
from relay.hub.store import JournalEntry, Store
from relay.hub.web import (
    SERVING,
    Role,
    hub_of,
)

if TYPE_CHECKING:
    import aiohttp

    from relay.hub.api_repos import RepoAccess

log = logging.getLogger("relay.hub.hooks")

SCHEMA = """
CREATE TABLE IF NOT EXISTS hooks (
  id INTEGER PRIMARY KEY AUTOINCREMENT, repo_id INTEGER NOT NULL, url TEXT NOT NULL,
  content_type TEXT NOT NULL, secret TEXT, insecure_ssl TEXT NOT NULL, events TEXT NOT NULL,
  active INTEGER NOT NULL, created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL,
  last_code INTEGER, last_status TEXT NOT NULL DEFAULT 'unused', last_message TEXT);
"""
DELIVERED = {
    "issues": frozenset(
        {"opened", "edited", "labeled", "unlabeled", "closed", "reopened", "locked", "unlocked"}
    ),
    "issue_comment": frozenset({"created", "edited", "deleted"}),
}
DELIVERY_TIMEOUT = 10.0  # GitHub gives a receiver 10 s
USER_AGENT = "GitHub-Hookshot/relay-hub"
MASK = "********"
ZEN = "Keep it logically awesome."


@dataclass(frozen=True)
class Delivery:
    """One rendered delivery waiting in its hook's queue."""

    hook_id: int
    url: str
    content_type: str
    secret: str | None
    event: str
    payload: dict[str, Any]
    target_id: int = 0  # the repository the hook belongs to
    guid: str = field(default_factory=lambda: str(uuid.uuid4()))

    def body(self) -> bytes:
        """The bytes sent (and signed): JSON, or ``payload=`` form encoding."""
        text = json.dumps(self.payload, separators=(",", ":"))
        if self.content_type == "form":
            return urlencode({"payload": text}).encode()
        return text.encode()

    def headers(self, body: bytes) -> dict[str, str]:
        """GitHub's delivery headers, signatures included when the hook has a secret."""
        kind = "json" if self.content_type == "json" else "x-www-form-urlencoded"
        out = {
            "User-Agent": USER_AGENT,
            "Content-Type": f"application/{kind}",
            "X-GitHub-Event": self.event,
            "X-GitHub-Delivery": self.guid,
            "X-GitHub-Hook-ID": str(self.hook_id),
            "X-GitHub-Hook-Installation-Target-Type": "repository",
            "X-GitHub-Hook-Installation-Target-ID": str(self.target_id),
        }
        if self.secret:
            key = self.secret.encode()
            out["X-Hub-Signature-256"] = "sha256=" + hmac.new(key, body, hashlib.sha256).hexdigest()
            out["X-Hub-Signature"] = "sha1=" + hmac.new(key, body, hashlib.sha1).hexdigest()
        return out


@dataclass
class Deliveries:
    """The per-hook queues and their sender tasks; one per hub application."""

    store: Store
    timeout: float = DELIVERY_TIMEOUT
    queues: dict[int, asyncio.Queue[Delivery]] = field(default_factory=dict)
    senders: dict[int, asyncio.Task[None]] = field(default_factory=dict)
    session: aiohttp.ClientSession | None = None
    hooked: dict[int, list[dict[str, Any]]] = field(default_factory=dict)

    def hooks_of(self, repo_id: int) -> list[dict[str, Any]]:
        """A repository's hooks, kept between writes to them (every write to the store
        asks, and most repositories have none: no query for each)."""
        rows = self.hooked.get(repo_id)
        if rows is None:
            rows = self.hooked[repo_id] = hook_rows(self.store, repo_id)
        return rows

    def forget(self) -> None:
        """A hook was added, changed or deleted: read them again when next asked."""
        self.hooked.clear()

    def enqueue(self, delivery: Delivery) -> None:
        """Queue a delivery behind the hook's earlier ones (never waits)."""
        queue = self.queues.get(delivery.hook_id)
        if queue is None:
            queue = self.queues[delivery.hook_id] = asyncio.Queue()
            self.senders[delivery.hook_id] = asyncio.ensure_future(self._send_all(queue))
        queue.put_nowait(delivery)

    async def _send_all(self, queue: asyncio.Queue[Delivery]) -> None:
        while True:
            delivery = await queue.get()
            try:
                await self._send(delivery)
            finally:
                queue.task_done()

    async def _send(self, delivery: Delivery) -> None:
        import aiohttp

        if self.session is None:
            self.session = aiohttp.ClientSession()
        body = delivery.body()
        outcome: tuple[int | None, str, str]
        try:
            async with self.session.post(
                delivery.url,
                data=body,
                headers=delivery.headers(body),
                timeout=aiohttp.ClientTimeout(total=self.timeout),
                allow_redirects=False,
            ) as resp:
                await resp.read()
                ok = 200 <= resp.status < 300  # GitHub counts any other answer as failed
                word = "OK" if ok else "Invalid HTTP Response"
                outcome = (resp.status, "active" if ok else "failed", f"{word}: {resp.status}")
        except (aiohttp.ClientError, TimeoutError, OSError) as err:
            outcome = (None, "failed", f"delivery failed: {type(err).__name__}")
            log.info("hook %s: %s", delivery.hook_id, outcome[2])
        self.store.db.execute(
            "UPDATE hooks SET last_code = ?, last_status = ?, last_message = ? WHERE id = ?",
            (*outcome, delivery.hook_id),
        )
        self.forget()

    async def idle(self) -> None:
        """Wait until every queued delivery was attempted (for tests and shutdown)."""
        await asyncio.gather(*(q.join() for q in self.queues.values()))

    async def close(self) -> None:
        """Stop the senders and close the HTTP session."""
        for task in self.senders.values():
            task.cancel()
        await asyncio.gather(*self.senders.values(), return_exceptions=True)
        if self.session is not None:
            await self.session.close()


HOOKS: web.AppKey[Deliveries] = web.AppKey("hooks", Deliveries)


# --- rendering -------------------------------------------------------------------------------


def hook_rows(store: Store, repo_id: int) -> list[dict[str, Any]]:
    """The repository's hooks as rows, oldest first."""
    rows = store.db.execute("SELECT * FROM hooks WHERE repo_id = ? ORDER BY id", (repo_id,))
    return [dict(r) for r in rows]


def render_hook(base: str, full: str, row: dict[str, Any]) -> dict[str, Any]:
    """A repository webhook object; the secret shows as ``********``."""
    api = f"{base}/repos/{full}/hooks/{row['id']}"
    config: dict[str, Any] = {
        "content_type": row["content_type"], "insecure_ssl": row["insecure_ssl"],
        "url": row["url"],
    }  # fmt: skip
    if row["secret"]:
        config["secret"] = MASK
    return {
        "type": "Repository", "id": row["id"], "name": "web", "active": bool(row["active"]),
        "events": json.loads(row["events"]), "config": config,
        "updated_at": render.stamp(row["updated_at"]),
        "created_at": render.stamp(row["created_at"]),
        "url": api, "test_url": f"{api}/test", "ping_url": f"{api}/pings",
        "deliveries_url": f"{api}/deliveries",
        "last_response": {
            "code": row["last_code"], "status": row["last_status"], "message": row["last_message"],
        },
    }  # fmt: skip


def repository_object(request: web.Request, acc: RepoAccess) -> dict[str, Any]:
    """The ``repository`` of a payload: the REST object without the caller's permissions."""
    from relay.hub.api_repos import repo_object

    return repo_object(request, acc, permissions=False)


def delivery_access(request: web.Request, repo_id: int) -> RepoAccess:
    """The repository as the deliveries show it (the receiver is no API caller)."""
    from relay.hub.api_repos import RepoAccess
    from relay.hub.web import origin

    store = hub_of(request).store
    row = dict(store.db.execute("SELECT * FROM repos WHERE id = ?", (repo_id,)).fetchone())
    return RepoAccess(row, store.user(row["owner_id"]), Role.ADMIN, origin(request))


def _wants(row: dict[str, Any], event: str) -> bool:
    events = json.loads(row["events"])
    return bool(row["active"]) and (event in events or "*" in events)


# --- the journal listener --------------------------------------------------------------------


def _issue_payload(
    request: web.Request, acc: RepoAccess, entry: JournalEntry, snapshot: dict[str, Any] | None
) -> dict[str, Any]:
    from relay.hub.api_comments import render_comments
    from relay.hub.api_issues import render_issues
    from relay.hub.api_labels import find_label

    store = hub_of(request).store
    issue = dict(
        store.db.execute("SELECT * FROM issues WHERE id = ?", (entry.issue_id,)).fetchone()
    )
    payload: dict[str, Any] = {
        "action": entry.action,
        "issue": render_issues(request, acc, [issue])[0],
    }
    if entry.action == "edited":  # what the edit replaced, as GitHub's payload says
        payload["changes"] = json.loads(entry.detail) if entry.detail else {}
    if entry.kind == "issue_comment":
        row = store.db.execute(
            "SELECT c.*, i.number FROM comments c JOIN issues i ON i.id = c.issue_id"
            " WHERE c.id = ?",
            (entry.comment_id,),
        ).fetchone()
        payload["comment"] = render_comments(request, acc, [dict(row)])[0] if row else snapshot
    if entry.label_name is not None:
        found = find_label(store, acc.id, entry.label_name)
        lab = found or {"id": 0, "name": entry.label_name, "color": entry.label_color}
        payload["label"] = render.label(acc.base, acc.full, {"description": None, **lab})
    payload["repository"] = repository_object(request, acc)
    payload["sender"] = render.user_row(acc.base, store.user(entry.actor_id))
    return payload


def on_entry(entry: JournalEntry) -> None:
    """Store listener: render and queue the deliveries this journal entry causes."""
    request = SERVING.get()
    actions = DELIVERED.get(entry.kind)
    if request is None or actions is None or entry.action not in actions or entry.repo_id is None:
        return
    deliveries = request.app[HOOKS]
    rows = [r for r in deliveries.hooks_of(entry.repo_id) if _wants(r, entry.kind)]
    if not rows:
        return
    acc = delivery_access(request, entry.repo_id)
    payload = _issue_payload(request, acc, entry, request.get("hook_snapshot"))
    for row in rows:
        delivery = Delivery(
            row["id"], row["url"], row["content_type"], row["secret"], entry.kind, payload,
            target_id=entry.repo_id,
        )  # fmt: skip
        deliveries.store.after_commit(functools.partial(deliveries.enqueue, delivery))


def snapshot_comment(request: web.Request, row: dict[str, Any]) -> None:
    """A deleted comment's payload must show it as it was: render it (when a hook of its
    repository wants comments) before it goes."""
    from relay.hub.api_comments import render_comments

    if any(_wants(r, "issue_comment") for r in request.app[HOOKS].hooks_of(row["repo_id"])):
        request["hook_snapshot"] = render_comments(
            request, delivery_access(request, row["repo_id"]), [dict(row)]
        )[0]


def install(app: web.Application, store: Store) -> None:
    """Create the table, listen to the journal, and stop the senders on cleanup."""
    store.db.executescript(SCHEMA)
    deliveries = app[HOOKS] = Deliveries(store)
    store.listeners.append(on_entry)

    async def lifetime(_app: web.Application) -> AsyncIterator[None]:
        yield
        await deliveries.close()

    app.cleanup_ctx.append(lifetime)
