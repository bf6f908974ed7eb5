"""The thread cache: comments reused only while the issue's updated_at and count stand."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

from relay.edges.github.models import Comment, Issue
from relay.edges.github.threads import ThreadCache, threads_owner

USER = {"id": 7, "login": "octo", "type": "User"}
T0 = datetime(2026, 1, 1, tzinfo=UTC)


def issue(number: int, *, comments: int, updated: datetime) -> Issue:
    return Issue.model_validate(
        {"id": number, "number": number, "title": "t", "body": "b", "state": "open",
         "user": USER, "created_at": T0, "updated_at": updated, "comments": comments}
    )  # fmt: skip


def comment(ident: int, body: str) -> Comment:
    return Comment.model_validate(
        {"id": ident, "body": body, "user": USER, "created_at": T0, "updated_at": T0}
    )


def test_comments_come_back_only_for_the_issue_as_it_was_read(tmp_path: Path) -> None:
    path = tmp_path / "threads.json"
    owner = threads_owner(api_url="http://127.0.0.1:1/", repo="octo/r")
    cache = ThreadCache.load(path, owner=owner)  # absent: empty
    one, two = issue(1, comments=1, updated=T0), issue(2, comments=0, updated=T0)
    assert cache.comments(one) is None
    cache.put(one, [comment(10, "### TASK 1")])
    cache.put(two, [])
    assert cache.save(path) and not cache.save(path)  # nothing new: no write

    again = ThreadCache.load(path, owner=owner)
    assert [c.body for c in again.comments(one) or []] == ["### TASK 1"]
    assert again.comments(two) == []
    later = T0 + timedelta(seconds=1)
    assert again.comments(issue(1, comments=1, updated=later)) is None  # relabelled, edited
    assert again.comments(issue(1, comments=2, updated=T0)) is None  # a new comment
    assert ThreadCache.load(path, owner="someone else").comments(one) is None

    again.keep({2})  # issue 1 closed or no longer binding
    again.save(path)
    assert set(json.loads(path.read_text())["issues"]) == {"2"}


def test_a_broken_cache_costs_requests_never_a_pass(tmp_path: Path) -> None:
    path = tmp_path / "threads.json"
    path.write_text("{not json")
    cache = ThreadCache.load(path, owner="o")
    assert cache.comments(issue(1, comments=0, updated=T0)) is None
    cache.put(issue(1, comments=0, updated=T0), [])
    assert cache.save(path)
    assert json.loads(path.read_text())["schema"] == 1


def test_answers_that_disagree_are_never_cached(tmp_path: Path) -> None:
    """The issue and its comments are asked at once; a comment landing between the two
    answers gives a stamp that promises a comment the list lacks. Caching that would hide
    the comment from every idle pass until the issue changed again."""
    cache = ThreadCache.load(tmp_path / "threads.json", owner="o")
    stamped = issue(1, comments=2, updated=T0)  # the issue already counts the new comment
    cache.put(stamped, [comment(10, "### TASK 1")])  # the list was read just before it
    assert cache.comments(stamped) is None
    cache.put(issue(1, comments=1, updated=T0), [comment(10, "### TASK 1")])
    assert cache.comments(issue(1, comments=1, updated=T0)) is not None
    cache.put(stamped, [comment(10, "### TASK 1")])  # disagree again: the old entry goes too
    assert cache.comments(issue(1, comments=1, updated=T0)) is None
