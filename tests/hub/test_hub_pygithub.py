"""Conformance through PyGithub, a client no one here wrote, against a real `relay hub`."""

from __future__ import annotations

import time
from datetime import UTC, datetime
from typing import Any

import github
import pytest


def test_repository_labels_issue_comments_reactions(repo: Any, api: Any, alice: str) -> None:
    assert (repo.private, repo.default_branch, repo.visibility) == (False, "main", "public")
    assert repo.permissions.admin and repo.permissions.push
    repo.create_label("awaiting:worker", "0e8a16", "the worker's turn")
    repo.create_label("flaky", "d73a4a")  # not one of GitHub's defaults the repository has
    issue = repo.create_issue("First job", body="objective", labels=["awaiting:worker", "flaky"])
    assert issue.number == 1 and issue.state == "open" and issue.user.login == "alice"
    assert sorted(lab.name for lab in issue.labels) == ["awaiting:worker", "flaky"]
    first = issue.create_comment("TASK 1")
    issue.create_comment("RESULT 1")
    assert [c.body for c in issue.get_comments()] == ["TASK 1", "RESULT 1"]
    assert first.html_url.endswith(f"/alice/{repo.name}/issues/1#issuecomment-{first.id}")
    assert first.create_reaction("eyes").content == "eyes"
    path = f"/repos/alice/{repo.name}/issues/comments/{first.id}/reactions"
    again = api(alice, "POST", path, {"content": "eyes"})
    assert again.status == 200 and again.body["content"] == "eyes"
    assert api(alice, "POST", path, {"content": "rocket"}).status == 201
    fetched = repo.get_issue(1)
    assert fetched.comments == 2
    assert fetched.get_comments()[0].raw_data["reactions"]["total_count"] == 2


def test_duplicate_label_is_422_already_exists(repo: Any) -> None:
    repo.create_label("flaky", "d73a4a")
    with pytest.raises(github.GithubException) as err:
        repo.create_label("FLAKY", "000000")
    assert err.value.status == 422
    assert err.value.data["errors"][0]["code"] == "already_exists"
    with pytest.raises(github.GithubException) as err:
        repo.create_label("Bug", "000000")  # one of GitHub's defaults: there already
    assert err.value.status == 422
    assert err.value.data["errors"][0]["code"] == "already_exists"


def test_label_name_over_50_characters_is_422(repo: Any) -> None:
    repo.create_label("x" * 50, "ededed")
    with pytest.raises(github.GithubException) as err:
        repo.create_label("y" * 51, "ededed")
    assert err.value.status == 422 and err.value.data["message"] == "Validation Failed"


def test_same_ref_twice_second_is_422_reference_already_exists(repo: Any, pushed: Any) -> None:
    sha = pushed(repo.full_name)
    made = repo.create_git_ref("refs/relay/claims/1/1", sha)
    assert (made.ref, made.object.sha) == ("refs/relay/claims/1/1", sha)
    with pytest.raises(github.GithubException) as err:
        repo.create_git_ref("refs/relay/claims/1/1", sha)
    assert err.value.status == 422
    assert err.value.data["message"] == "Reference already exists"
    assert "errors" not in err.value.data
    assert repo.get_git_ref("relay/claims/1/1").object.sha == sha
    repo.get_git_ref("relay/claims/1/1").delete()
    with pytest.raises(github.GithubException) as gone:
        repo.get_git_ref("relay/claims/1/1")
    assert gone.value.status == 404


def test_deleting_a_missing_ref_is_422(repo: Any, api: Any, alice: str) -> None:
    answer = api(alice, "DELETE", f"/repos/alice/{repo.name}/git/refs/heads/none")
    assert (answer.status, answer.body["message"]) == (422, "Reference does not exist")
    assert "errors" not in answer.body


def test_removing_an_absent_label_is_404(repo: Any) -> None:
    issue = repo.create_issue("t", labels=["keep"])
    with pytest.raises(github.GithubException) as err:
        issue.remove_from_labels("absent")
    assert err.value.status == 404 and err.value.data["message"] == "Label does not exist"
    issue.add_to_labels("second")
    issue.remove_from_labels("keep")
    assert [lab.name for lab in repo.get_issue(issue.number).labels] == ["second"]


def test_oversize_comment_is_422_unprocessable(repo: Any) -> None:
    issue = repo.create_issue("t")
    assert len(issue.create_comment("x" * 65536).body) == 65536
    with pytest.raises(github.GithubException) as err:
        issue.create_comment("x" * 65537)
    assert err.value.status == 422
    error = err.value.data["errors"][0]
    assert (error["code"], error["resource"]) == ("unprocessable", "IssueComment")
    assert "65536" in error["message"]


def test_page_through_250_comments_by_link(hub: Any, repo: Any, client: Any, alice: str) -> None:
    issue = repo.create_issue("many")
    posted = [issue.create_comment(f"c{i}").id for i in range(250)]
    hub.reset_requests()
    big_pages = client(hub.url, alice, per_page=100).get_repo(repo.full_name)
    seen = [c.id for c in big_pages.get_issue(issue.number).get_comments()]
    assert seen == posted
    path = f"/repos/alice/{repo.name}/issues/{issue.number}/comments"
    assert hub.count(method="GET", path=path, status=200) == 3
    assert issue.get_comments().totalCount == 250


def test_since_and_labels_filters(repo: Any) -> None:
    a = repo.create_issue("a", labels=["x"])
    b = repo.create_issue("b", labels=["x", "y"])
    repo.create_issue("c", labels=["y"])
    assert [i.number for i in repo.get_issues(labels=["x", "y"])] == [b.number]
    assert sorted(i.number for i in repo.get_issues(labels=["x"])) == [a.number, b.number]
    time.sleep(1.05)
    mark = datetime.now(UTC).replace(microsecond=0)
    time.sleep(1.05)
    a.create_comment("moves updated_at")
    assert [i.number for i in repo.get_issues(since=mark)] == [a.number]
    assert a.get_comments(since=mark).totalCount == 1


def test_sort_direction_and_state(repo: Any) -> None:
    for title in ("one", "two", "three"):
        repo.create_issue(title)
    repo.get_issue(2).edit(state="closed", state_reason="not_planned")
    assert [i.number for i in repo.get_issues()] == [3, 1]
    assert [i.number for i in repo.get_issues(state="all", direction="asc")] == [1, 2, 3]
    closed = repo.get_issue(2)
    assert (closed.state, closed.state_reason, closed.closed_by.login) == (
        "closed",
        "not_planned",
        "alice",
    )
    assert closed.closed_at is not None


def test_issue_events_carry_actor_and_label(repo: Any) -> None:
    issue = repo.create_issue("baton", labels=["awaiting:worker"])
    issue.remove_from_labels("awaiting:worker")
    issue.add_to_labels("working")
    issue.edit(state="closed")
    issue.edit(state="open")
    events = [
        (e.event, e.actor.login, e.label.name if e.label else None) for e in issue.get_events()
    ]
    assert events == [
        ("labeled", "alice", "awaiting:worker"),
        ("unlabeled", "alice", "awaiting:worker"),
        ("labeled", "alice", "working"),
        ("closed", "alice", None),
        ("reopened", "alice", None),
    ]


def test_bad_token_is_401(hub: Any, client: Any) -> None:
    with pytest.raises(github.BadCredentialsException) as err:
        _ = client(hub.url, "not-a-token-" + "z" * 300).get_user().login
    assert err.value.status == 401


def test_private_repo_of_another_user_is_404_until_collaborator(
    hub: Any, gh: github.Github, bob: str, unique: str, client: Any
) -> None:
    secret = gh.get_user().create_repo(f"secret-{unique}", private=True)
    assert secret.private and secret.visibility == "private"
    as_bob = client(hub.url, bob)
    with pytest.raises(github.UnknownObjectException):
        as_bob.get_repo(secret.full_name)
    secret.add_to_collaborators("bob", "push")
    assert secret.get_collaborator_permission("bob") == "write"
    seen = as_bob.get_repo(secret.full_name)
    assert seen.permissions.push and not seen.permissions.admin
    issue = seen.create_issue("from bob", labels=["granted"])
    assert [lab.name for lab in issue.labels] == ["granted"]
    assert issue.raw_data["author_association"] == "COLLABORATOR"


def test_reader_cannot_label_until_granted_write(
    hub: Any, repo: Any, bob: str, client: Any
) -> None:
    as_bob = client(hub.url, bob).get_repo(repo.full_name)
    assert repo.get_collaborator_permission("bob") == "read"
    with pytest.raises(github.GithubException) as err:
        as_bob.create_label("nope", "ededed")
    assert err.value.status == 403
    repo.add_to_collaborators("bob", "push")
    assert as_bob.create_label("yes", "ededed").name == "yes"


def test_a_label_change_moves_updated_at(repo: Any) -> None:
    issue = repo.create_issue("baton", labels=["awaiting:worker"])
    time.sleep(1.05)
    mark = datetime.now(UTC).replace(microsecond=0)
    assert [i.number for i in repo.get_issues(since=mark)] == []
    time.sleep(1.05)
    issue.set_labels("working")
    assert [i.number for i in repo.get_issues(since=mark)] == [issue.number]
    assert repo.get_issue(issue.number).updated_at > issue.updated_at


def test_anonymous_callers_see_public_repos_only(
    hub: Any, http: Any, repo: Any, gh: github.Github, unique: str
) -> None:
    def anonymous(method: str, path: str, body: Any = None) -> Any:
        return http(hub.url, "", method, path, body, headers={"Authorization": ""})

    gh.get_user().create_repo(f"hidden-{unique}", private=True)
    seen = anonymous("GET", f"/repos/alice/{repo.name}")
    assert seen.status == 200 and "permissions" not in seen.body
    assert seen.headers["x-ratelimit-limit"] == "60"
    assert anonymous("GET", f"/repos/alice/hidden-{unique}").status == 404
    refused = anonymous("POST", f"/repos/alice/{repo.name}/issues", {"title": "t"})
    assert (refused.status, refused.body["message"]) == (401, "Requires authentication")
