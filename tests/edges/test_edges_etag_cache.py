"""The on-disk ETag cache: bounded, least recently used first, never another token's."""

from __future__ import annotations

import json
from pathlib import Path

from relay.edges.github.cache import EtagCache, cache_owner


def test_least_recently_used_entries_go_first() -> None:
    cache = EtagCache(max_entries=3)
    for i in range(3):
        cache[f"/u/{i}"] = (f'"e{i}"', None, {"i": i}, None)
    assert cache["/u/0"][0] == '"e0"'  # touching /u/0 makes /u/1 the oldest
    cache["/u/3"] = ('"e3"', None, {}, None)
    assert list(cache) == ["/u/2", "/u/0", "/u/3"]


def test_round_trip_and_the_size_bound(tmp_path: Path) -> None:
    path = tmp_path / "etag-cache.json"
    owner = cache_owner(api_url="http://127.0.0.1:1", token="t")
    cache = EtagCache(max_bytes=4000)
    for i in range(20):
        cache[f"/big/{i}"] = (f'"e{i}"', "Mon, 30 Nov 2026", "x" * 300, f"/big/{i}?page=2")
    assert cache.save(path, owner=owner) is True
    assert cache.save(path, owner=owner) is False, "nothing changed since"
    loaded = EtagCache.load(path, owner=owner)
    assert 5 < len(loaded) < 20, "only the newest entries that fit the bound are kept"
    assert "/big/19" in loaded and "/big/0" not in loaded
    assert loaded["/big/19"] == ('"e19"', "Mon, 30 Nov 2026", "x" * 300, "/big/19?page=2")
    assert json.loads(path.read_text())["schema"] == 1


def test_another_token_or_a_broken_file_starts_empty(tmp_path: Path) -> None:
    path = tmp_path / "etag-cache.json"
    cache = EtagCache()
    cache["/user"] = ('"e"', None, {"login": "a"}, None)
    cache.save(path, owner=cache_owner(api_url="http://h", token="alice"))
    assert len(EtagCache.load(path, owner=cache_owner(api_url="http://h", token="alice"))) == 1
    assert len(EtagCache.load(path, owner=cache_owner(api_url="http://h", token="bob"))) == 0
    path.write_text("{broken")
    assert len(EtagCache.load(path, owner="x")) == 0
