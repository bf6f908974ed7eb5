"""The job threads a node last read, kept between passes so an idle pass costs one request.

The open-issue list carries each issue's ``updated_at`` and ``comments`` count, and a new
comment, a deleted one, a label, a body edit, a close or a reopen changes one of them. An
issue whose pair is as it was when its comments were last read has the comments read then,
so the pass reuses them instead of asking again. What the pair does not show is a comment
edited in place (GitHub does not promise that an edit touches the issue); a pass that is
about to act therefore re-reads the threads it acts on first (``relay.node.observe.
refresh``), so nothing is ever done on a stale thread — only an idle pass trusts the cache.

Stored as versioned JSON (``.git/relay/threads.json``), written atomically, for one API and
one repository; a cache for another, or an unreadable one, is ignored (it only costs
requests). Entries of issues no longer open and binding are dropped at each full pass.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from relay.edges.files import write_state
from relay.edges.github.models import Comment, Issue
from relay.edges.local import SCHEMA_VERSION, read_versioned


def threads_owner(*, api_url: str, repo: str) -> str:
    """Whose threads these are: one API, one repository."""
    return hashlib.sha256(f"{api_url.rstrip('/')}\0{repo}".encode()).hexdigest()[:24]


def _stamp(issue: Issue) -> list[Any]:
    return [issue.updated_at.isoformat(), issue.comments]


class ThreadCache:
    """Issue number -> (the issue's ``updated_at`` and count when read, its comments)."""

    def __init__(self, owner: str) -> None:
        self.owner = owner
        self._entries: dict[int, tuple[list[Any], list[dict[str, Any]]]] = {}
        self.dirty = False

    @classmethod
    def load(cls, path: Path, *, owner: str) -> ThreadCache:
        """The cache at ``path`` for ``owner``; empty when absent, foreign or unreadable."""
        cache = cls(owner)
        try:
            doc = read_versioned(path)
        except Exception:  # a broken cache only costs requests; never fail a pass on it
            return cache
        if doc is None or doc.get("owner") != owner or not isinstance(doc.get("issues"), dict):
            return cache
        for number, entry in doc["issues"].items():
            if (
                str(number).isdigit()
                and isinstance(entry, dict)
                and isinstance(entry.get("stamp"), list)
                and isinstance(entry.get("comments"), list)
            ):
                cache._entries[int(number)] = (entry["stamp"], entry["comments"])
        return cache

    def comments(self, issue: Issue) -> list[Comment] | None:
        """The comments last read for ``issue`` if it has not changed since, else None."""
        entry = self._entries.get(issue.number)
        if entry is None or entry[0] != _stamp(issue):
            return None
        try:
            return [Comment.model_validate(c) for c in entry[1]]
        except ValueError:
            return None

    def put(self, issue: Issue, comments: list[Comment]) -> None:
        """Remember ``issue``'s comments as read now — unless the two answers disagree (a
        comment landed between them): then forget it, so the next pass reads it afresh
        instead of trusting a stamp that promises comments the cache lacks."""
        if len(comments) != issue.comments:
            if self._entries.pop(issue.number, None) is not None:
                self.dirty = True
            return
        dumped = [c.model_dump(mode="json") for c in comments]
        entry = (_stamp(issue), dumped)
        if self._entries.get(issue.number) != entry:
            self._entries[issue.number] = entry
            self.dirty = True

    def numbers(self) -> set[int]:
        """The issues whose threads are kept (those that bound this node last pass)."""
        return set(self._entries)

    def keep(self, numbers: set[int]) -> None:
        """Forget every issue but ``numbers`` (those open and binding this node now)."""
        gone = set(self._entries) - numbers
        for number in gone:
            del self._entries[number]
        self.dirty = self.dirty or bool(gone)

    def save(self, path: Path) -> bool:
        """Write the cache when it changed; False when there was nothing to write."""
        if not self.dirty:
            return False
        issues = {
            str(n): {"stamp": stamp, "comments": comments}
            for n, (stamp, comments) in sorted(self._entries.items())
        }
        doc = {"schema": SCHEMA_VERSION, "owner": self.owner, "issues": issues}
        write_state(path, json.dumps(doc, separators=(",", ":")).encode())
        self.dirty = False
        return True
