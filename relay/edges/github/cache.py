"""The ETag cache that gidgethub consults, kept on disk between processes.

gidgethub sends ``If-None-Match`` only for URLs in its cache, and a watcher is a fresh
process every few minutes; so the cache is loaded when the client opens and written (temp
file plus ``os.replace``) when it closes. It is bounded: least recently used entries go
first, by count and by total size. A cache made for another API or token is not used,
because gidgethub keys entries by URL alone.
"""

from __future__ import annotations

import hashlib
import json
from collections import OrderedDict
from collections.abc import Iterator, MutableMapping
from pathlib import Path
from typing import Any

from relay.edges.files import write_state
from relay.edges.statefile import SCHEMA_VERSION, read_versioned

# gidgethub's cache value: (etag, last-modified, decoded body, next-page URL).
Entry = tuple[str | None, str | None, Any, str | None]

MAX_ENTRIES = 512
MAX_BYTES = 8 * 1024 * 1024


def cache_owner(*, api_url: str, token: str) -> str:
    """A short digest naming whose cache this is, without storing the token."""
    return hashlib.sha256(f"{api_url}\0{token}".encode()).hexdigest()[:24]


class EtagCache(MutableMapping[str, Entry]):
    """A least-recently-used mapping of URL to gidgethub's cache entry."""

    def __init__(self, *, max_entries: int = MAX_ENTRIES, max_bytes: int = MAX_BYTES) -> None:
        self._entries: OrderedDict[str, Entry] = OrderedDict()
        self.max_entries = max_entries
        self.max_bytes = max_bytes
        self.dirty = False

    def __getitem__(self, url: str) -> Entry:
        entry = self._entries[url]
        self._entries.move_to_end(url)
        return entry

    def __setitem__(self, url: str, entry: Entry) -> None:
        self._entries[url] = entry
        self._entries.move_to_end(url)
        while len(self._entries) > self.max_entries:
            self._entries.popitem(last=False)
        self.dirty = True

    def __delitem__(self, url: str) -> None:
        del self._entries[url]
        self.dirty = True

    def __iter__(self) -> Iterator[str]:
        return iter(self._entries)

    def __len__(self) -> int:
        return len(self._entries)

    @classmethod
    def load(cls, path: Path, *, owner: str, max_entries: int = MAX_ENTRIES) -> EtagCache:
        """The cache stored at ``path`` for ``owner``; empty if absent, foreign or unreadable."""
        cache = cls(max_entries=max_entries)
        try:
            doc = read_versioned(path)
        except Exception:  # a broken cache only costs full requests; never fail a pass on it
            return cache
        if doc is None or doc.get("owner") != owner:
            return cache
        for row in doc.get("entries", []):
            if isinstance(row, list) and len(row) == 5 and isinstance(row[0], str):
                cache._entries[row[0]] = (row[1], row[2], row[3], row[4])
        cache.dirty = False
        return cache

    def save(self, path: Path, *, owner: str) -> bool:
        """Write the newest entries that fit the size bound; False when nothing changed."""
        if not self.dirty:
            return False
        rows: list[str] = []
        size = 0
        for url in reversed(self._entries):  # newest first, so the oldest are dropped
            row = json.dumps([url, *self._entries[url]])
            size += len(row)
            if size > self.max_bytes:
                break
            rows.append(row)
        head = json.dumps({"schema": SCHEMA_VERSION, "owner": owner})[:-1]
        text = head + ', "entries": [' + ",\n".join(reversed(rows)) + "]}\n"
        write_state(path, text.encode())
        self.dirty = False
        return True
