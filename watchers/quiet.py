"""The idle pass at the cost of a shell command: the lock, one conditional GET, nothing to do.

Most passes find nothing to do: the issue list answers 304 and the decision is the one the
last pass made. A full pass (:mod:`relay.watchers.once`) loads the API client, the
protocol's models and the clone's git to find that out; this module finds it out with the
standard library. A full pass that was idle, asked for nothing but the issue list, and left
every input as it found it, leaves a marker (``quiet.json`` in the node's state): a digest
of everything it read besides the API (the node's state files, the clone's refs and spine
files, the ``RELAY_*`` variables, the node, API, repository, token and relay's version),
the list's URL and ETag, the lines it printed, and how long its decision holds without
anything changing (the protocol's time rules: a lease that lapses, a watcher's grace).

``relay watch --once`` then tries :func:`quiet_pass` first: the same inputs, within that
time, under the node's pass lock, and the list with the stored ETag answered 304 — the
pass is the marker's, and is logged as any pass is. Anything else (a 200, an error, a
changed input, a scheduler's pass on Windows, a GitHub App's token) is left to the full
pass, with the same request sent the same way: the list's 200 is handed to it
(:mod:`relay.edges.github.primed`) rather than asked for twice, and an error is asked
again so that it is reported and retried exactly as always.

The request is GitHub's as the full client sends it (gidgethub over aiohttp): the same
user agent, accept, authorization, API version and conditional headers, over http or
https (whose TLS context is made for the connection, with the system's trust store).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import stat
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import quote, urlencode, urljoin

from relay import __version__
from relay.edges.statefile import SCHEMA_VERSION, clone_root, git_dir, read_versioned
from relay.watchers.report import PassReport

if TYPE_CHECKING:
    import argparse

    from relay.node.context import NodeContext

MARKER = "quiet.json"
# state the pass writes every time or that is checked otherwise (the ETag cache, through
# the list's entry): not inputs of the decision
NOT_INPUTS = frozenset({"passes.jsonl", "etag-cache.json", MARKER, "locks"})
WORK_TREES = frozenset({"worktree", "worktrees"})  # relay's checkouts of the project
BIG_FILE = 1 << 20  # bytes: a state file bigger than this is digested by its stat
# what the master section and the roster are read from when the remote has neither
SPINE_FILES = ("docs/loop/LOOP.md", "docs/loop/relay/roster.json")
PASS_LOG_KEEP = 200  # as relay.edges.local
NONCE_FLAG = "--nonce"  # as relay.schedulers.entry
HORIZONS = (3600.0, 600.0, 60.0)  # seconds a quiet decision is tested to hold for


# --- what a pass reads besides the API ---


def inputs_digest(root: Path, state: Path) -> str | None:
    """A digest of everything a pass reads besides the API and the clock, or None when the
    clone keeps its refs in a way this does not read (a linked worktree, reftable), or
    when anything cannot be read as a plain file: then every pass is a full one. The fast
    path is a shortcut, never a failure: what a pusher can put in relay's work tree (a link
    to /dev/zero, a socket, a FIFO, a file of gigabytes) is never read."""
    try:
        return _digest(root, state)
    except (OSError, ValueError):
        return None


def _digest(root: Path, state: Path) -> str | None:
    git = state.parent
    if (git / "commondir").exists() or (git / "reftable").exists():
        return None
    digest = hashlib.sha256()

    def add(name: str, path: Path) -> None:
        try:
            facts = path.lstat()
        except (FileNotFoundError, NotADirectoryError):
            digest.update(f"{name}\0absent\0".encode())
            return
        if not stat.S_ISREG(facts.st_mode):  # a link, socket, FIFO or device: never opened
            digest.update(f"{name}\0{facts.st_mode}\0{facts.st_mtime_ns}\0".encode())
            return
        if facts.st_size > BIG_FILE:  # what relay keeps is small; a big file is named by its stat
            seen = (facts.st_size, facts.st_mtime_ns, facts.st_ino, facts.st_ctime_ns)
            digest.update(f"{name}\0big\0{seen}\0".encode())
            return
        data = path.read_bytes()
        digest.update(f"{name}\0{len(data)}\0".encode())
        digest.update(data)

    for path in _files(state):
        relative = path.relative_to(state)
        if relative.parts[0] not in NOT_INPUTS:
            add(f"state/{relative.as_posix()}", path)
    add("HEAD", git / "HEAD")
    add("packed-refs", git / "packed-refs")
    for path in _files(git / "refs" / "remotes") + _files(git / "refs" / "heads"):
        add(path.relative_to(git).as_posix(), path)
    for name in SPINE_FILES:
        add(name, root / name)
    env = sorted((k, v) for k, v in os.environ.items() if k.startswith("RELAY_"))
    digest.update(json.dumps(env).encode())
    return digest.hexdigest()


def _files(top: Path) -> list[Path]:
    """Every file under ``top``, sorted (none when it is absent), leaving out the work
    trees relay checks out there (a folder holding ``.git``): a project's files and build
    caches are no input of a pass's decision, and a pusher writes them."""
    found = []
    for folder, dirs, names in os.walk(top, followlinks=False):
        if ".git" in names or ".git" in dirs:
            dirs[:] = []
            continue
        dirs[:] = [d for d in dirs if d not in WORK_TREES]
        found += [Path(folder) / name for name in names]
    return sorted(found)


def marker_key(*, node: str, api_url: str, repo: str, token: str, digest: str) -> str:
    """What a marker is good for: this node, API, repository and token, these inputs, and
    this relay (another version may decide otherwise)."""
    from relay.edges.github.cache import cache_owner

    owner = cache_owner(api_url=api_url.rstrip("/"), token=token)
    facts = [__version__, node, api_url, repo, owner, digest]
    return hashlib.sha256(json.dumps(facts).encode()).hexdigest()


def issues_url(api_url: str, repo: str) -> str:
    """The open-issue list's first page as the full client asks for it (and keys its ETag
    cache by): ``GitHubClient.list_issues(state="open")`` through gidgethub's URL rules."""
    owner, _, name = repo.partition("/")
    path = f"/repos/{quote(owner, safe='')}/{quote(name, safe='')}/issues"
    query = {"state": "open", "sort": "updated", "direction": "desc", "per_page": 100}
    return urljoin(api_url.removesuffix("/") + "/", f"{path}?{urlencode(query)}".lstrip("/"))


# --- the marker, left by a full pass ---


def remember(
    ctx: NodeContext,
    report: PassReport,
    *,
    before: str | None,
    until: datetime | None,
    token: str,
    eligible: bool,
) -> None:
    """After a full pass: leave the marker when the pass was one :func:`quiet_pass` can
    stand for, else remove any marker (it describes a world that has moved)."""
    path = ctx.state.root / MARKER
    fit = (
        eligible
        and until is not None
        and before is not None
        and report.outcome == "idle"
        and report.requests == 1
        and not report.teardown
        and not report.tasks
        and not ctx.trust.said
        and ctx.app is None
    )
    url = issues_url(ctx.api_url, ctx.repo)
    entry = _cache_entry(ctx.state.root / "etag-cache.json", url, token=token, api_url=ctx.api_url)
    if not fit or entry is None or before != inputs_digest(ctx.root, ctx.state.root):
        path.unlink(missing_ok=True)
        return
    assert until is not None and before is not None
    from relay.edges.statefile import write_versioned

    key = marker_key(node=ctx.node, api_url=ctx.api_url, repo=ctx.repo, token=token, digest=before)
    write_versioned(
        path,
        {
            "key": key,
            "url": url,
            "etag": entry[0],
            "last_modified": entry[1],
            "cache": _stat(ctx.state.root / "etag-cache.json"),
            "until": until.isoformat(),
            "lines": report.lines,
        },
    )


def _cache_entry(path: Path, url: str, *, token: str, api_url: str) -> tuple[str, Any] | None:
    """The ETag (and Last-Modified) the ETag cache holds for the list, when it holds one for
    a list that fits one page; None otherwise."""
    from relay.edges.github.cache import EtagCache, cache_owner

    cache = EtagCache.load(path, owner=cache_owner(api_url=api_url.rstrip("/"), token=token))
    entry = cache._entries.get(url)
    if entry is None or entry[0] is None or entry[3] is not None:
        return None
    return entry[0], entry[1]


def _stat(path: Path) -> list[int]:
    try:
        found = path.stat()
    except OSError:
        return []
    return [found.st_size, found.st_mtime_ns]


# --- the idle pass ---


def quiet_pass(args: argparse.Namespace) -> PassReport | None:
    """The pass ``relay watch --once`` asks for, when the marker stands for it and the list
    answers 304; None when a full pass must run (it then finds what this found)."""
    if args.issue is not None or args.verbose or os.environ.get("RELAY_APP_ID", "").strip():
        return None
    try:
        import fcntl
    except ImportError:  # Windows: the lock is filelock's msvcrt one; the full pass takes it
        return None
    started = time.monotonic()
    try:
        root = clone_root(args.repo_dir or Path.cwd())
        state = git_dir(root) / "relay"
        marker = read_versioned(state / MARKER)
        config = (read_versioned(state / "config.json") or {}).get("config") or {}
    except Exception:  # anything unusual is the full pass's to say
        return None
    if marker is None or not isinstance(config, dict):
        return None
    node = _node_of(args, config)
    repo = config.get("repo")
    if not node or not repo:
        return None
    try:
        fd = _open_lock(state, node)
    except OSError:
        return None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:  # another pass runs: the full pass says so
            return None
        try:
            return _under_lock(args, root, state, marker, config, node, repo, started)
        except Exception:
            return None
    finally:
        os.close(fd)  # releases the lock


def lock_free(args: argparse.Namespace) -> bool:
    """Whether the node's pass lock could be taken now (taken and let go at once): a full
    pass that would find it busy asks for nothing, so nothing is sent for it early. False
    whenever that cannot be told the cheap way (no fcntl, no node, a lock file not a file)."""
    try:
        import fcntl
    except ImportError:
        return False
    try:
        state = git_dir(clone_root(args.repo_dir or Path.cwd())) / "relay"
        config = (read_versioned(state / "config.json") or {}).get("config") or {}
        node = _node_of(args, config)
    except Exception:
        return False
    if not node:
        return False
    try:
        fd = _open_lock(state, node)
    except FileNotFoundError:  # no pass ever ran for the node here: none holds its lock
        return state.is_dir()
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        return False
    finally:
        os.close(fd)  # releases the lock, if it was taken
    return True


def _node_of(args: argparse.Namespace, config: dict[str, Any]) -> str | None:
    """The node a pass runs as: --node, else the clone's joined node, else RELAY_NODE."""
    node = args.node or config.get("node") or os.environ.get("RELAY_NODE")
    return str(node) if node else None


def _open_lock(state: Path, node: str) -> int:
    """The node's pass lock file, opened (never through a link); OSError when it cannot be."""
    safe = re.sub(r"[^A-Za-z0-9._-]", "_", node) or "_"
    return os.open(state / "locks" / f"{safe}.lock", os.O_RDWR | getattr(os, "O_NOFOLLOW", 0))


def _under_lock(
    args: argparse.Namespace,
    root: Path,
    state: Path,
    marker: dict[str, Any],
    config: dict[str, Any],
    node: str,
    repo: str,
    started: float,
) -> PassReport | None:
    from relay.edges.github.credentials import api_base_url, find_token

    api_url = api_base_url(
        args.api or os.environ.get("RELAY_API_URL") or config.get("api_url")
        or "https://api.github.com"
    )  # fmt: skip
    now = datetime.now(UTC)
    if now >= datetime.fromisoformat(marker["until"]):
        return None
    token = find_token(api_url=api_url, token_file=state / "token").value
    digest = inputs_digest(root, state)
    if digest is None:
        return None
    key = marker_key(node=node, api_url=api_url, repo=repo, token=token, digest=digest)
    url = issues_url(api_url, repo)
    if key != marker["key"] or url != marker["url"]:
        return None
    etag, modified = marker["etag"], marker["last_modified"]
    cache = state / "etag-cache.json"
    moved = _stat(cache) != marker["cache"]  # another command used the API since
    if moved and _cache_entry(cache, url, token=token, api_url=api_url) != (etag, modified):
        return None
    status, headers, body = conditional_get(url, token=token, etag=etag, last_modified=modified)
    if status != 304:
        if status == 200:  # there is news: the full pass takes this answer as its own
            from relay.edges.github.primed import prime

            prime(url, (status, headers, body))
        return None
    by = started_by(state, node, args.nonce) if args.scheduled else "person"
    seconds = time.monotonic() - started
    report = PassReport(
        node=node,
        lines=list(marker["lines"]),
        requests=1,
        not_modified=1,
        seconds=seconds,
        started_by=by,
    )
    log_pass(state, report, at=datetime.now(UTC))
    return report


ASKED: list[str] = []  # the list's URL, once this process's idle check has asked for it


def conditional_get(
    url: str, *, token: str, etag: str | None, last_modified: str | None
) -> tuple[int, dict[str, str], bytes]:
    """GET ``url`` as the full client does (gidgethub's headers, the API version, the
    conditional ones); the status, headers (lower-cased) and body (decoded as aiohttp
    would). An https URL gets a TLS context made now, for this connection."""
    from relay.edges.github.primed import get, request_headers

    ASKED.append(url)
    agent = f"relay/{__version__}"
    headers = request_headers(token, etag=etag, last_modified=last_modified, agent=agent)
    return get(url, headers)


def started_by(state: Path, node: str, nonce: str | None) -> str:
    """``relay.watchers.registration.started_by`` on the record as stored: the scheduler
    only when it presents the nonce of ``node``'s registration in place."""
    import hmac

    doc = read_versioned(state / "watcher.json") or {}
    record = doc.get("watchers", {}).get(node)
    if not nonce or not isinstance(record, dict) or not record.get("active"):
        return "person"
    argv = list(record.get("entry", {}).get("argv", []))
    expected = next((argv[at + 1] for at, w in enumerate(argv[:-1]) if w == NONCE_FLAG), None)
    if expected is None or not hmac.compare_digest(nonce.encode(), str(expected).encode()):
        return "person"
    return "scheduler"


def log_pass(state: Path, report: PassReport, *, at: datetime) -> None:
    """Append the pass to the pass log as ``NodeState.log_pass`` writes a PassRecord."""
    from relay.edges.files import write_state

    path = state / "passes.jsonl"
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        text = ""
    lines = [line for line in text.splitlines() if line.strip()][-(PASS_LOG_KEEP - 1) :]
    record = {
        "schema": SCHEMA_VERSION,
        "at": at.isoformat().replace("+00:00", "Z"),
        "node": report.node,
        "outcome": report.outcome,
        "requests": report.requests,
        "not_modified": report.not_modified,
        "writes": report.writes,
        "seconds": round(report.seconds, 3),
        "started_by": report.started_by,
    }
    lines.append(json.dumps(record))
    write_state(path, ("\n".join(lines) + "\n").encode())


def holds_until(decide_at: Any, now: datetime) -> datetime | None:
    """How long a quiet decision holds: ``decide_at(moment)`` says whether the decision at
    that moment is the one made now. The protocol's time rules are thresholds (a lease
    lapses, a grace ends), each changing the decision once; so a decision that is the same
    an hour (or ten minutes, or a minute) on is the same all the while."""
    from datetime import timedelta

    for seconds in HORIZONS:
        later = now + timedelta(seconds=seconds)
        if decide_at(later):
            return later
    return None
