"""Node-local state in the clone's ``.git/relay/``: what this node remembers between passes.

Ground rules: everything here is private to one clone on one machine and never committed
(it lives inside ``.git``). Every file carries a schema version and is written by temp file
plus ``os.replace``, so a crash leaves the old file or the new one, never half of either.
Times are passed in by the caller (timezone-aware UTC), never read here.

Files: ``config.json`` (the node's settings), ``claims.json`` (tasks this node claimed and
how they ended), ``notified.json`` (results the controller hook has already seen),
``passes.jsonl`` (the pass log; its last line is the heartbeat), ``etag-cache.json`` (the
GitHub client's conditional-request cache), ``quiet.json`` (what an idle pass needs to
stand for the last full one: relay.watchers.quiet), ``token`` (optional, mode 0600) and
``locks/<node>.lock`` (one pass at a time per repository and node).
"""

from __future__ import annotations

import base64
import json
import os
import re
import secrets
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError

from relay.edges.files import private_dir, private_file, read_private, write_private, write_state
from relay.edges.statefile import SCHEMA_VERSION as SCHEMA_VERSION
from relay.edges.statefile import clone_root as clone_root
from relay.edges.statefile import git_dir as git_dir
from relay.edges.statefile import read_versioned as read_versioned
from relay.edges.statefile import write_versioned as write_versioned
from relay.errors import ConfigError

PASS_LOG_KEEP = 200  # lines of passes.jsonl kept; older passes are dropped


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="ignore")


class NodeConfig(_Frozen):
    """This node's settings, written by `relay join` and read by every pass."""

    node: str
    repo: str | None = None  # "owner/name"
    api_url: str = "https://api.github.com"
    executor: str | None = None
    on_result: str | None = None
    scheduler: str | None = None
    step_timeout: float = 600.0
    account_id: int | None = None  # the account this node acts as (its token's), from join


class ClaimRecord(_Frozen):
    """A task this node claimed; ``outcome`` stays None until a RESULT was posted."""

    issue: int
    task: int
    node: str
    claimed_at: datetime
    finished_at: datetime | None = None
    outcome: str | None = None
    group: int | None = None  # the running step's process group, so no step is orphaned
    nonce: str | None = None  # the claiming attempt's own, as the claim comment carries it


class AttemptRecord(_Frozen):
    """A claim this node began: its nonce, recorded before the claim ref is created, so a
    ref this node made is known as its own even when the answer to creating it was lost."""

    issue: int
    task: int
    nonce: str
    at: datetime


class BareRecord(_Frozen):
    """When this node first saw a claim ref with no claim comment (another runner's)."""

    issue: int
    task: int
    at: datetime


class NotifiedRecord(_Frozen):
    """A result the controller side has already handed to its hook or printed."""

    issue: int
    task: int
    at: datetime


class NoticeRecord(_Frozen):
    """A notice this node has posted in a thread (a frozen job), so it is posted once."""

    issue: int
    key: str
    at: datetime


class PassRecord(_Frozen):
    """One pass: when it ran, how it ended, and what it cost on the wire."""

    at: datetime
    node: str
    outcome: str
    requests: int = 0
    not_modified: int = 0
    writes: int = 0  # content-creating requests (GitHub's secondary limit counts them)
    seconds: float = 0.0
    # Who started it: "scheduler" (the OS entry), "person" (`relay watch --once`), "loop",
    # "webhook", "actions"; None from an older relay. Only the scheduler's passes are the
    # watcher's heartbeat: a person's pass must not hide a dead watcher.
    started_by: str | None = None


SCHEDULER = "scheduler"  # PassRecord.started_by of a pass the OS scheduler's entry started


class PassLock:
    """One pass at a time per repository and node: a non-blocking OS file lock (filelock).
    The lock file is 0600 in directories (from ``top`` down) only this account may enter:
    another local account that could open it could hold it, and stop every pass."""

    def __init__(self, path: Path, *, top: Path | None = None) -> None:
        from filelock import FileLock

        private_file(path, top=top)
        self.path = path
        self._lock = FileLock(path, timeout=0, mode=0o600, is_singleton=False)

    def acquire(self) -> bool:
        """Take the lock without waiting; False means another pass is running."""
        from filelock import Timeout

        try:
            self._lock.acquire(timeout=0, blocking=False)
        except Timeout:
            return False
        return True

    @property
    def held(self) -> bool:
        """Whether this object holds the lock now."""
        return bool(self._lock.is_locked)

    def release(self) -> None:
        """Release the lock if held; the file stays so others keep locking the same inode."""
        if self._lock.is_locked:
            self._lock.release()

    def busy_message(self, node: str) -> str:
        """The one-line explanation drivers print when ``acquire`` returned False."""
        return (
            f"another relay pass is running for node {node} in this clone"
            f" (lock {self.path}); this pass did nothing"
        )


class NodeState:
    """The ``.git/relay/`` directory of one clone, read and written one file at a time."""

    def __init__(self, root: Path) -> None:
        self.root = root

    @classmethod
    def for_clone(cls, clone: Path) -> NodeState:
        """The state directory of the clone containing ``clone``."""
        return cls(git_dir(clone_root(clone)) / "relay")

    @property
    def config_path(self) -> Path:
        return self.root / "config.json"

    @property
    def etag_cache_path(self) -> Path:
        return self.root / "etag-cache.json"

    @property
    def threads_path(self) -> Path:
        """The job threads last read (relay.edges.github.threads)."""
        return self.root / "threads.json"

    @property
    def token_path(self) -> Path:
        return self.root / "token"

    @property
    def pass_log_path(self) -> Path:
        return self.root / "passes.jsonl"

    @property
    def roster_path(self) -> Path:
        """The newest roster revision this node accepted (relay.node.trust)."""
        return self.root / "roster.json"

    def accepted_roster(self) -> dict[str, Any] | None:
        """The accepted roster revision as JSON data, None before the first."""
        doc = read_versioned(self.roster_path)
        found = None if doc is None else doc.get("accepted")
        return found if isinstance(found, dict) else None

    def save_roster(self, revision: dict[str, Any]) -> None:
        """Keep the newest roster revision this node accepted (0600)."""
        write_versioned(self.roster_path, {"accepted": revision})

    def signing_key_path(self, node: str) -> Path:
        """Where ``node``'s Ed25519 private key lives (readable by this user only)."""
        safe = re.sub(r"[^A-Za-z0-9._-]", "_", node) or "_"
        return self.root / "keys" / f"{safe}.ed25519"

    def signing_key(self, node: str) -> bytes | None:
        """``node``'s private key (32 raw bytes), None before `relay join` made one;
        ConfigError when the file is readable by others or is not a key."""
        path = self.signing_key_path(node)
        text = read_private(path, what="signing key file")
        if text is None:
            return None
        try:
            raw = base64.b64decode(text, validate=True)
        except ValueError:
            raw = b""
        if len(raw) != 32:
            raise ConfigError(
                f"signing key file {path} does not hold a key",
                hint="run `relay join --rotate-key` to make a new one",
            )
        return raw

    def new_signing_key(self, node: str) -> bytes:
        """Make and keep a new private key for ``node`` (mode 0600); its 32 raw bytes."""
        from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
        from cryptography.hazmat.primitives.serialization import (
            Encoding,
            NoEncryption,
            PrivateFormat,
        )

        key = Ed25519PrivateKey.generate()
        raw = key.private_bytes(Encoding.Raw, PrivateFormat.Raw, NoEncryption())
        path = self.signing_key_path(node)
        private_dir(path.parent, top=self.root)
        write_private(path, base64.b64encode(raw) + b"\n")
        return raw

    def next_signing_key(self, node: str) -> bytes:
        """A new private key for ``node``, kept beside the current one (0600) until the
        roster revision naming it is published (:meth:`promote_next_signing_key`)."""
        path = self.signing_key_path(node).with_suffix(".next")
        found = read_private(path, what="signing key file")
        if found is not None:
            raw = base64.b64decode(found, validate=False)
            if len(raw) == 32:
                return raw
        from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
        from cryptography.hazmat.primitives.serialization import (
            Encoding,
            NoEncryption,
            PrivateFormat,
        )

        raw = Ed25519PrivateKey.generate().private_bytes(
            Encoding.Raw, PrivateFormat.Raw, NoEncryption()
        )
        write_private(path, base64.b64encode(raw) + b"\n")
        return raw

    def promote_next_signing_key(self, node: str) -> None:
        """The new key becomes this node's key (its roster revision is published)."""
        path = self.signing_key_path(node)
        os.replace(path.with_suffix(".next"), path)

    def drop_next_signing_key(self, node: str) -> None:
        """Forget a new key whose roster revision could not be published."""
        self.signing_key_path(node).with_suffix(".next").unlink(missing_ok=True)

    def lock(self, node: str) -> PassLock:
        """The pass lock of ``node`` in this clone (not yet acquired)."""
        safe = re.sub(r"[^A-Za-z0-9._-]", "_", node) or "_"
        return PassLock(self.root / "locks" / f"{safe}.lock", top=self.root)

    @contextmanager
    def pass_lock(self, node: str) -> Iterator[PassLock]:
        """Try the pass lock for the block; check ``.held`` (False: another pass runs)."""
        lock = self.lock(node)
        lock.acquire()
        try:
            yield lock
        finally:
            lock.release()

    def load_config(self) -> NodeConfig | None:
        """The node's settings, or None before `relay join`."""
        doc = read_versioned(self.config_path)
        if doc is None:
            return None
        config: NodeConfig = self._parse(NodeConfig, doc.get("config"), self.config_path)
        return config

    def save_config(self, config: NodeConfig) -> None:
        write_versioned(self.config_path, {"config": config.model_dump(mode="json")})

    def save_token(self, token: str) -> None:
        """Store a token readable by this user only (0600; an owner-only ACL on Windows)."""
        write_private(self.token_path, token.strip().encode() + b"\n")

    def _parse(self, model: type[Any], raw: Any, path: Path) -> Any:
        try:
            return model.model_validate(raw)
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(p) for p in first["loc"])
            raise ConfigError(f"node state file {path} is invalid at {where!r}; delete it") from exc

    # --- claims: what this node took on, so a later pass can report a half-done task ---

    @property
    def claims_path(self) -> Path:
        return self.root / "claims.json"

    def claims(self) -> list[ClaimRecord]:
        """Every claim this node remembers, oldest first."""
        doc = read_versioned(self.claims_path)
        raw = [] if doc is None else doc.get("claims", [])
        return [self._parse(ClaimRecord, item, self.claims_path) for item in raw]

    def claim(self, *, issue: int, task: int) -> ClaimRecord | None:
        """The claim of (issue, task), if this node made one."""
        return next((c for c in self.claims() if (c.issue, c.task) == (issue, task)), None)

    def record_claim(
        self, *, issue: int, task: int, node: str, now: datetime, nonce: str | None = None
    ) -> ClaimRecord:
        """Remember a claim; claiming the same (issue, task) again keeps the first record.
        The attempt that led to it is done with."""
        existing = self.claim(issue=issue, task=task)
        if existing is not None:
            return existing
        record = ClaimRecord(issue=issue, task=task, node=node, claimed_at=now, nonce=nonce)
        self._save_claims([*self.claims(), record])
        self.clear_attempt(issue=issue, task=task)
        return record

    def drop_claim(self, *, issue: int, task: int) -> None:
        """Forget a claim this node made and stood down from (another runner claimed the
        task as well and may be running it: this node must not report it half-done)."""
        claims = self.claims()
        kept = [c for c in claims if (c.issue, c.task) != (issue, task)]
        if kept != claims:
            self._save_claims(kept)

    def finish_claim(self, *, issue: int, task: int, outcome: str, now: datetime) -> ClaimRecord:
        """Record how a claimed task ended; ConfigError if it was never claimed here."""
        claims = self.claims()
        for index, item in enumerate(claims):
            if (item.issue, item.task) == (issue, task):
                claims[index] = item.model_copy(update={"outcome": outcome, "finished_at": now})
                self._save_claims(claims)
                return claims[index]
        raise ConfigError(f"no local claim for issue {issue} task {task}; nothing to finish")

    def set_claim_group(self, *, issue: int, task: int, group: int | None) -> None:
        """Remember the process group of the step a claimed task is running now."""
        claims = self.claims()
        for index, item in enumerate(claims):
            if (item.issue, item.task) == (issue, task):
                claims[index] = item.model_copy(update={"group": group})
                self._save_claims(claims)
                return

    def prune_claims(self, *, open_issues: set[int]) -> int:
        """Forget finished claims of issues that are no longer open; return how many."""
        claims = self.claims()
        kept = [c for c in claims if c.issue in open_issues or c.outcome is None]
        if len(kept) != len(claims):
            self._save_claims(kept)
        return len(claims) - len(kept)

    def _save_claims(self, claims: list[ClaimRecord]) -> None:
        write_versioned(self.claims_path, {"claims": [c.model_dump(mode="json") for c in claims]})

    # --- claim attempts and bare claim refs: a claim is known as this node's own ---

    @property
    def attempts_path(self) -> Path:
        return self.root / "attempts.json"

    def _attempts_doc(self) -> tuple[list[AttemptRecord], list[BareRecord]]:
        doc = read_versioned(self.attempts_path) or {}
        path = self.attempts_path
        attempts = [self._parse(AttemptRecord, a, path) for a in doc.get("attempts", [])]
        bare = [self._parse(BareRecord, b, path) for b in doc.get("bare", [])]
        return attempts, bare

    def _save_attempts(self, attempts: list[AttemptRecord], bare: list[BareRecord]) -> None:
        write_versioned(
            self.attempts_path,
            {
                "attempts": [a.model_dump(mode="json") for a in attempts],
                "bare": [b.model_dump(mode="json") for b in bare],
            },
        )

    def attempts(self) -> dict[tuple[int, int], str]:
        """The claims this node began and never recorded: (issue, task) -> nonce."""
        return {(a.issue, a.task): a.nonce for a in self._attempts_doc()[0]}

    def record_attempt(self, *, issue: int, task: int, now: datetime) -> str:
        """Begin a claim: a fresh nonce, kept before the claim ref is created (the one of an
        earlier attempt at the same task when there was one, so its ref stays ours)."""
        attempts, bare = self._attempts_doc()
        for a in attempts:
            if (a.issue, a.task) == (issue, task):
                return a.nonce
        nonce = secrets.token_hex(8)
        attempts.append(AttemptRecord(issue=issue, task=task, nonce=nonce, at=now))
        self._save_attempts(attempts, [b for b in bare if (b.issue, b.task) != (issue, task)])
        return nonce

    def clear_attempt(self, *, issue: int, task: int) -> None:
        """Forget an attempt (claimed, or lost to another runner) and any bare sighting."""
        attempts, bare = self._attempts_doc()
        kept = [a for a in attempts if (a.issue, a.task) != (issue, task)]
        still = [b for b in bare if (b.issue, b.task) != (issue, task)]
        if (kept, still) != (attempts, bare):
            self._save_attempts(kept, still)

    def bare_seen(self) -> list[tuple[int, int, datetime]]:
        """Claim refs first seen bare (no claim comment): (issue, task, when)."""
        return [(b.issue, b.task, b.at) for b in self._attempts_doc()[1]]

    def mark_bare(self, *, issue: int, task: int, now: datetime) -> None:
        """Remember when a bare claim ref was first seen (a later sighting keeps the first)."""
        attempts, bare = self._attempts_doc()
        if any((b.issue, b.task) == (issue, task) for b in bare):
            return
        self._save_attempts(attempts, [*bare, BareRecord(issue=issue, task=task, at=now)])

    # --- notified: results the controller hook has already seen ---

    @property
    def notified_path(self) -> Path:
        return self.root / "notified.json"

    def notified(self) -> set[tuple[int, int]]:
        """The (issue, task) pairs whose results were already handed on."""
        doc = read_versioned(self.notified_path)
        raw = [] if doc is None else doc.get("notified", [])
        records = [self._parse(NotifiedRecord, item, self.notified_path) for item in raw]
        return {(r.issue, r.task) for r in records}

    def mark_notified(self, *, issue: int, task: int, now: datetime) -> bool:
        """Remember that (issue, task) was handed on; False if it already was."""
        if (issue, task) in self.notified():
            return False
        doc = read_versioned(self.notified_path)
        raw: list[Any] = [] if doc is None else list(doc.get("notified", []))
        raw.append(NotifiedRecord(issue=issue, task=task, at=now).model_dump(mode="json"))
        write_versioned(self.notified_path, {"notified": raw})
        return True

    # --- the result outbox: a composed RESULT kept until it is posted and handed back ---

    def _outbox_path(self, issue: int, task: int) -> Path:
        return self.root / "outbox" / f"{issue}-{task}.md"

    def save_outbox(self, *, issue: int, task: int, body: str) -> None:
        """Keep the RESULT of a finished run before anything is posted (0600: it is the
        redacted text the thread will show, but it is this node's to send)."""
        write_state(self._outbox_path(issue, task), body.encode("utf-8"), top=self.root)

    def _draft_path(self, issue: int, task: int) -> Path:
        return self.root / "outbox" / f"{issue}-{task}.draft.json"

    def save_draft(self, *, issue: int, task: int, draft: str) -> None:
        """Keep a finished run's RESULT and redacted log before the log is pushed (0600)."""
        write_state(self._draft_path(issue, task), draft.encode("utf-8"), top=self.root)

    def draft(self, *, issue: int, task: int) -> str | None:
        """The kept draft of (issue, task), None when there is none."""
        path = self._draft_path(issue, task)
        return path.read_text(encoding="utf-8") if path.is_file() else None

    def outbox(self) -> set[tuple[int, int]]:
        """The (issue, task) pairs whose RESULT waits to be pushed, posted or handed back."""
        folder = self.root / "outbox"
        found = set()
        for path in folder.glob("*") if folder.is_dir() else ():
            name = path.name.removesuffix(".draft.json").removesuffix(".md")
            issue, _, task = name.partition("-")
            if issue.isdigit() and task.isdigit():
                found.add((int(issue), int(task)))
        return found

    def outbox_body(self, *, issue: int, task: int) -> str | None:
        """The kept RESULT of (issue, task), None when there is none."""
        path = self._outbox_path(issue, task)
        return path.read_text(encoding="utf-8") if path.is_file() else None

    def clear_outbox(self, *, issue: int, task: int) -> None:
        """Forget a RESULT that is posted and handed back (and its draft)."""
        self._outbox_path(issue, task).unlink(missing_ok=True)
        self._draft_path(issue, task).unlink(missing_ok=True)

    # --- high water: what this node has seen, so nothing goes backwards ---

    @property
    def seen_path(self) -> Path:
        return self.root / "seen.json"

    def seen(self) -> tuple[dict[int, int], set[tuple[int, int]]]:
        """The newest body revision seen per job, and the tasks seen claimed."""
        doc = read_versioned(self.seen_path) or {}
        revisions = {int(k): int(v) for k, v in dict(doc.get("revisions", {})).items()}
        claimed = {(int(i), int(t)) for i, t in doc.get("claimed", [])}
        return revisions, claimed

    def record_seen(self, revisions: Mapping[int, int], claimed: set[tuple[int, int]]) -> None:
        """Raise the high-water marks (never lower them); written only when they moved."""
        old_revisions, old_claimed = self.seen()
        merged = dict(old_revisions)
        for issue, revision in revisions.items():
            merged[issue] = max(revision, merged.get(issue, 0))
        every = old_claimed | claimed
        if merged == old_revisions and every == old_claimed:
            return
        body = {
            "revisions": {str(k): v for k, v in sorted(merged.items())},
            "claimed": sorted([i, t] for i, t in every),
        }
        write_versioned(self.seen_path, body)

    # --- the controller's own record of each job: the body it last wrote, the last TASK ---

    def _job_path(self, issue: int) -> Path:
        return self.root / "jobs" / f"{issue}.json"

    def keep_job(
        self,
        issue: int,
        *,
        body: str | None = None,
        task: str | None = None,
        posted: datetime | None = None,
    ) -> None:
        """Remember the (unsigned) body this controller last wrote for ``issue``, and the
        last TASK it posted with when GitHub says it was posted: what `relay job repair`
        writes again, and whether the issue's events say it was claimed since (0600)."""
        doc = read_versioned(self._job_path(issue)) or {}
        kept = {"body": doc.get("body"), "task": doc.get("task"), "posted": doc.get("posted")}
        kept.update({k: v for k, v in (("body", body), ("task", task)) if v is not None})
        if task is not None:
            kept["posted"] = posted.isoformat() if posted is not None else None
        write_versioned(self._job_path(issue), kept)

    def kept_task_posted(self, issue: int) -> datetime | None:
        """When the last TASK this controller posted for ``issue`` was posted (None: not
        known, as for one posted by an earlier relay)."""
        posted = (read_versioned(self._job_path(issue)) or {}).get("posted")
        try:
            return datetime.fromisoformat(posted) if isinstance(posted, str) else None
        except ValueError:
            return None

    def kept_job(self, issue: int) -> tuple[str | None, str | None]:
        """The body and the last TASK this controller wrote for ``issue`` (None: none)."""
        doc = read_versioned(self._job_path(issue)) or {}
        body, task = doc.get("body"), doc.get("task")
        return (body if isinstance(body, str) else None, task if isinstance(task, str) else None)

    # --- notices: what this node has said once in a thread ---

    @property
    def notices_path(self) -> Path:
        return self.root / "notices.json"

    def notices(self) -> set[tuple[int, str]]:
        """The (issue, key) pairs of notices already posted."""
        doc = read_versioned(self.notices_path)
        raw = [] if doc is None else doc.get("notices", [])
        records = [self._parse(NoticeRecord, item, self.notices_path) for item in raw]
        return {(r.issue, r.key) for r in records}

    def mark_notice(self, *, issue: int, key: str, now: datetime) -> bool:
        """Remember that the notice ``key`` was posted on ``issue``; False if it already was."""
        if (issue, key) in self.notices():
            return False
        doc = read_versioned(self.notices_path)
        raw: list[Any] = [] if doc is None else list(doc.get("notices", []))
        raw.append(NoticeRecord(issue=issue, key=key, at=now).model_dump(mode="json"))
        write_versioned(self.notices_path, {"notices": raw})
        return True

    # --- the pass log; its last line is the heartbeat ---

    def log_pass(self, record: PassRecord) -> None:
        """Append a pass, keeping the newest PASS_LOG_KEEP lines (rewritten atomically)."""
        lines = self._pass_lines()[-(PASS_LOG_KEEP - 1) :]
        lines.append(json.dumps({"schema": SCHEMA_VERSION, **record.model_dump(mode="json")}))
        write_state(self.pass_log_path, ("\n".join(lines) + "\n").encode())

    def passes(self) -> list[PassRecord]:
        """The remembered passes, oldest first; unreadable lines are skipped."""
        records = []
        for line in self._pass_lines():
            try:
                records.append(PassRecord.model_validate_json(line))
            except ValidationError:
                continue
        return records

    def heartbeat(self) -> PassRecord | None:
        """The newest pass, or None if this node never ran one."""
        passes = self.passes()
        return passes[-1] if passes else None

    def _pass_lines(self) -> list[str]:
        try:
            text = self.pass_log_path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return []
        return [line for line in text.splitlines() if line.strip()]


# The webhook secret a node made (`relay join --webhook`), kept beside its other state.
ENV_SECRET = "RELAY_WEBHOOK_SECRET"
SECRET_FILE = "webhook-secret"


def secret_path(state: NodeState) -> Path:
    """Where the node keeps the secret it made (inside .git, never committed)."""
    return state.root / SECRET_FILE


def webhook_secret(
    state: NodeState, environ: Mapping[str, str] | None = None, *, create: bool = False
) -> tuple[str, str]:
    """The secret and where it came from: the variable, the state file, or (``create``) a new
    random one saved in the state file. ConfigError when there is none and none may be made."""
    env = os.environ if environ is None else environ
    if env.get(ENV_SECRET, ""):
        return env[ENV_SECRET], ENV_SECRET
    path = secret_path(state)
    found = read_private(path, what="webhook secret file", empty_ok=True)
    if found is not None:
        return found, f"the secret file {path}"
    if not create:
        raise ConfigError(
            f"no webhook secret: {ENV_SECRET} is not set and {path} does not exist",
            hint="run `relay join --webhook URL` on this clone, or set the variable",
        )
    made = secrets.token_hex(32)
    write_private(path, made.encode() + b"\n")
    return made, f"a new secret saved in {path}"
