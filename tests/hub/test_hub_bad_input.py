"""Bad input gets GitHub's JSON 4xx, never a traceback: labels that differ only in case,
wrongly typed fields, numbers beyond SQLite's range — each sent to a real hub process."""

from __future__ import annotations

from typing import Any

import github
import pytest

HUGE = "9" * 23  # beyond SQLite's 64-bit INTEGER


def assert_github_error(answer: Any, status: int) -> None:
    """A JSON error body as GitHub sends it, with its status also as a string."""
    assert answer.status == status, answer.body
    assert answer.headers["content-type"].startswith("application/json")
    assert answer.body["status"] == str(status)
    assert answer.body["documentation_url"].startswith("https://docs.github.com")


@pytest.fixture
def issue_path(api: Any, alice: str, unique: str) -> str:
    """A fresh repository of alice's with one issue; its API path."""
    assert api(alice, "POST", "/user/repos", {"name": f"bad-{unique}"}).status == 201
    base = f"/repos/alice/bad-{unique}"
    assert api(alice, "POST", f"{base}/issues", {"title": "one"}).status == 201
    return f"{base}/issues/1"


@pytest.mark.parametrize(
    ("method", "suffix", "body"),
    [
        ("POST", "/labels", {"labels": ["Dup", "dup"]}),
        ("PUT", "/labels", {"labels": ["Dup", "dup"]}),
        ("POST", "/labels", ["Dup", {"name": "DUP"}]),
        ("PATCH", "", {"labels": ["Dup", "dup"]}),
    ],
)
def test_labels_differing_in_case_are_one_label(
    api: Any, alice: str, issue_path: str, method: str, suffix: str, body: Any
) -> None:
    answer = api(alice, method, issue_path + suffix, body)
    assert answer.status == 200, answer.body
    labels = answer.body if isinstance(answer.body, list) else answer.body["labels"]
    assert [lab["name"] for lab in labels] == ["Dup"]
    events = api(alice, "GET", f"{issue_path}/events").body
    assert [e["event"] for e in events] == ["labeled"]


def test_create_issue_with_labels_differing_in_case(api: Any, alice: str, unique: str) -> None:
    assert api(alice, "POST", "/user/repos", {"name": f"dupc-{unique}"}).status == 201
    body = {"title": "t", "labels": ["Dup", "dup", "DUP"]}
    created = api(alice, "POST", f"/repos/alice/dupc-{unique}/issues", body)
    assert created.status == 201, created.body
    assert [lab["name"] for lab in created.body["labels"]] == ["Dup"]


@pytest.mark.parametrize(
    ("method", "suffix", "body", "field"),
    [
        ("PATCH", "/issues/1", {"state_reason": []}, "state_reason"),
        ("PATCH", "/issues/1", {"state": {"open": True}}, "state"),
        ("PUT", "/collaborators/bob", {"permission": []}, "permission"),
        ("POST", "/labels", {"name": "x", "description": ["a"]}, "description"),
        ("PATCH", "/labels/kept", {"description": {"a": 1}}, "description"),
        ("POST", "/issues/comments/{comment}/reactions", {"content": ["eyes"]}, "content"),
        ("PATCH", "", {"has_issues": "no"}, "has_issues"),
    ],
)
def test_wrongly_typed_fields_are_422_validation_failed(
    api: Any,
    alice: str,
    bob: str,
    issue_path: str,
    method: str,
    suffix: str,
    body: Any,
    field: str,
) -> None:
    base = issue_path.removesuffix("/issues/1")
    assert api(alice, "POST", f"{base}/labels", {"name": "kept"}).status == 201
    comment = api(alice, "POST", f"{issue_path}/comments", {"body": "c"}).body["id"]
    answer = api(alice, method, base + suffix.format(comment=comment), body)
    assert_github_error(answer, 422)
    assert answer.body["message"] == "Validation Failed"
    assert [e["field"] for e in answer.body["errors"]] == [field]
    assert answer.body["errors"][0]["code"] == "invalid"


def test_a_repository_description_must_be_text(api: Any, alice: str, unique: str) -> None:
    body = {"name": f"desc-{unique}", "description": {"a": 1}}
    answer = api(alice, "POST", "/user/repos", body)
    assert_github_error(answer, 422)
    assert answer.body["errors"][0]["field"] == "description"
    assert api(alice, "GET", f"/repos/alice/desc-{unique}").status == 404


def test_pygithub_sees_a_422_for_a_list_description(gh: github.Github, repo: Any) -> None:
    with pytest.raises(github.GithubException) as err:
        # PyGithub's typed method refuses a list itself; its requester sends what it is given
        body = {"name": "typed", "color": "00ff00", "description": ["not", "text"]}
        gh.requester.requestJsonAndCheck("POST", f"{repo.url}/labels", input=body)
    assert err.value.status == 422
    assert err.value.data["errors"][0]["field"] == "description"


@pytest.mark.parametrize(
    "suffix",
    [
        f"/issues/{HUGE}",
        f"/issues/{HUGE}/comments",
        f"/issues/{HUGE}/labels",
        f"/issues/comments/{HUGE}",
        f"/issues/comments/{HUGE}/reactions",
        f"/issues/events/{HUGE}",
        f"/hooks/{HUGE}",
    ],
)
def test_ids_beyond_sqlite_are_404(api: Any, alice: str, issue_path: str, suffix: str) -> None:
    base = issue_path.removesuffix("/issues/1")
    assert_github_error(api(alice, "GET", base + suffix), 404)


def test_a_huge_page_is_an_empty_page(api: Any, alice: str, issue_path: str) -> None:
    base = issue_path.removesuffix("/issues/1")
    for path in (f"{base}/issues", f"{issue_path}/comments", f"{base}/labels"):
        answer = api(alice, "GET", f"{path}?page=1{'0' * 20}&per_page=1{'0' * 20}")
        assert answer.status == 200 and answer.body == []
        assert 'rel="first"' in answer.headers["link"]


def test_every_write_route_survives_wrong_types(api: Any, alice: str, issue_path: str) -> None:
    """Not one wrongly typed body may reach a 5xx, whichever field or route it hits."""
    base = issue_path.removesuffix("/issues/1")
    comment = api(alice, "POST", f"{issue_path}/comments", {"body": "c"}).body["id"]
    routes = [
        ("POST", "/issues", ("title", "body", "labels")),
        ("PATCH", "/issues/1", ("title", "body", "state", "state_reason", "labels")),
        ("POST", "/labels", ("name", "color", "description")),
        ("POST", "/issues/1/labels", ("labels",)),
        ("POST", "/issues/1/comments", ("body",)),
        ("PATCH", f"/issues/comments/{comment}", ("body",)),
        ("POST", "/git/refs", ("ref", "sha")),
        ("PATCH", "", ("has_issues", "private", "description")),
        ("POST", "/hooks", ("config", "events", "active")),
    ]
    seen = []
    for method, suffix, fields in routes:
        for name in fields:
            for value in ([], {}, [[1]], {"x": [1]}, 1.5):
                answer = api(alice, method, base + suffix, {name: value})
                seen.append((method, suffix, name, answer.status))
                assert answer.status < 500, (method, suffix, name, value, answer.body)
    assert any(status == 422 for *_, status in seen)


def test_an_issue_title_over_256_characters_is_refused_as_github_does(
    api: Any, alice: str, issue_path: str
) -> None:
    base = issue_path.rsplit("/", 1)[0]
    assert api(alice, "POST", base, {"title": "t" * 256}).status == 201
    for method, path in (("POST", base), ("PATCH", issue_path)):
        answer = api(alice, method, path, {"title": "t" * 257})
        assert_github_error(answer, 422)
        (error,) = answer.body["errors"]
        assert error["field"] == "title" and "too long" in error["message"], error
    assert api(alice, "GET", issue_path).body["title"] == "one"
