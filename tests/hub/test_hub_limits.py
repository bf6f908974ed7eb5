"""Budgets, gone features and late faults, against real hub processes: the rate limit is
per user across all of its tokens, a repository with issues turned off answers 410, faults
that strike after the write committed, and an unexpected error is GitHub's JSON 500."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
import urllib.error
from collections.abc import Iterator
from http.client import HTTPException
from pathlib import Path
from typing import Any

import github
import pytest
from hubcalls import push_commit
from worlds import stop_process

RATE_HEADERS = ("x-ratelimit-limit", "x-ratelimit-remaining", "x-ratelimit-used")


@pytest.fixture
def small_budget(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    """A hub started with ``--rate-limit 5``: (base URL, data dir)."""
    data = tmp_path / "budget"
    argv = [sys.executable, "-m", "relay.cli", "hub", "--port", "0", "--rate-limit", "5"]
    proc = subprocess.Popen([*argv, "--data", str(data)], stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    line = proc.stdout.readline()
    try:
        assert "http://" in line, line
        yield line[line.index("http://") :].split()[0], data
    finally:
        stop_process(proc)
        proc.stdout.close()


def mint(data: Path, login: str) -> str:
    argv = [sys.executable, "-m", "relay.cli", "hub", "token", login, "--data", str(data)]
    return subprocess.run(argv, capture_output=True, text=True, check=True).stdout.strip()


def test_the_budget_is_per_user_across_its_tokens(small_budget: Any, http: Any) -> None:
    url, data = small_budget
    first, second, other = mint(data, "ann"), mint(data, "ann"), mint(data, "ben")
    seen = [http(url, t, "GET", "/user") for t in (first, first, first, second, second)]
    assert [a.status for a in seen] == [200] * 5
    assert [a.headers["x-ratelimit-remaining"] for a in seen] == ["4", "3", "2", "1", "0"]
    assert {a.headers["x-ratelimit-limit"] for a in seen} == {"5"}
    for token in (first, second):
        over = http(url, token, "GET", "/user")
        assert over.status == 403 and over.headers["x-ratelimit-remaining"] == "0"
        assert over.body["message"] == f"API rate limit exceeded for user ID {seen[0].body['id']}."
    fresh = http(url, other, "GET", "/user")
    assert fresh.status == 200 and fresh.headers["x-ratelimit-remaining"] == "4"
    core = http(url, second, "GET", "/rate_limit").body["resources"]["core"]
    assert (core["limit"], core["used"], core["remaining"]) == (5, 5, 0)


def test_a_bad_rate_limit_is_refused(tmp_path: Path) -> None:
    argv = [sys.executable, "-m", "relay.cli", "hub", "--port", "0", "--rate-limit", "0"]
    out = subprocess.run([*argv, "--data", str(tmp_path)], capture_output=True, text=True)
    assert out.returncode == 2 and "--rate-limit" in out.stderr
    assert "Traceback" not in out.stderr


def test_issues_turned_off_answer_410(gh: github.Github, repo: Any, api: Any, alice: str) -> None:
    issue = repo.create_issue("before")
    repo.edit(has_issues=False)
    assert gh.get_repo(repo.full_name).has_issues is False
    base = f"/repos/{repo.full_name}"
    for method, path, body in (
        ("GET", "/issues", None),
        ("POST", "/issues", {"title": "t"}),
        ("GET", f"/issues/{issue.number}", None),
        ("POST", f"/issues/{issue.number}/comments", {"body": "c"}),
        ("POST", f"/issues/{issue.number}/labels", {"labels": ["x"]}),
    ):
        gone = api(alice, method, base + path, body)
        assert gone.status == 410, (method, path, gone.body)
        assert gone.body["message"] == "Issues are disabled for this repo"
        assert gone.body["documentation_url"] == "https://docs.github.com/v3/issues/"
    with pytest.raises(github.GithubException) as err:
        repo.get_issue(issue.number)
    assert err.value.status == 410
    assert api(alice, "GET", f"{base}/labels").status == 200
    repo.edit(has_issues=True)
    assert repo.get_issue(issue.number).title == "before"


def test_only_an_admin_may_turn_issues_off(repo: Any, api: Any, bob: str) -> None:
    answer = api(bob, "PATCH", f"/repos/{repo.full_name}", {"has_issues": False})
    assert answer.status == 403
    assert repo.has_issues is True


def test_a_dropped_answer_after_the_write_duplicates_a_retried_comment(
    fresh_hub: Any, http: Any, client: Any
) -> None:
    token = fresh_hub.token("late")
    repo = client(fresh_hub.url, token).get_user().create_repo("late")
    issue = repo.create_issue("retry me")
    path = f"/repos/late/late/issues/{issue.number}/comments"
    fresh_hub.set_faults("drop_after=1,limit=1")
    with pytest.raises((urllib.error.URLError, HTTPException, ConnectionError)):
        http(fresh_hub.url, token, "POST", path, {"body": "once"})
    assert http(fresh_hub.url, token, "POST", path, {"body": "once"}).status == 201  # the retry
    bodies = [c["body"] for c in http(fresh_hub.url, token, "GET", path).body]
    assert bodies == ["once", "once"], "the lost answer's comment was created all the same"
    assert fresh_hub.count(method="POST", path=path, status=0) == 1


def test_a_502_after_the_claim_makes_the_retry_lose_it(
    fresh_hub: Any, http: Any, client: Any, tmp_path: Path
) -> None:
    token = fresh_hub.token("claimer")
    client(fresh_hub.url, token).get_user().create_repo("claims")
    sha = push_commit(fresh_hub.url, token, "claimer/claims", tmp_path)
    claim = {"ref": "refs/relay/claims/1", "sha": sha}
    fresh_hub.set_faults("502_after=1,limit=1")
    first = http(fresh_hub.url, token, "POST", "/repos/claimer/claims/git/refs", claim)
    assert first.status == 502 and first.body["message"] == "Server Error"
    assert all(h in first.headers for h in RATE_HEADERS)
    retry = http(fresh_hub.url, token, "POST", "/repos/claimer/claims/git/refs", claim)
    assert retry.status == 422 and retry.body["message"] == "Reference already exists"
    held = http(fresh_hub.url, token, "GET", "/repos/claimer/claims/git/ref/relay/claims/1")
    assert held.status == 200 and held.body["object"]["sha"] == sha
    assert fresh_hub.admin("GET", "/_hub/faults")["shares"] == {"502_after": 1.0}


def test_an_unexpected_error_is_a_json_500_logged_once(
    fresh_hub: Any, http: Any, client: Any
) -> None:
    token = fresh_hub.token("broken")
    issue = client(fresh_hub.url, token).get_user().create_repo("broken").create_issue("x")
    comment = issue.create_comment("c")
    with sqlite3.connect(fresh_hub.data_dir / "hub.sqlite3") as db:  # break the store itself
        db.execute("DROP TABLE reactions")
    path = f"/repos/broken/broken/issues/comments/{comment.id}/reactions"
    answer = http(fresh_hub.url, token, "GET", path)
    assert answer.status == 500
    assert answer.body["message"] == "Server Error" and answer.body["status"] == "500"
    assert all(h in answer.headers for h in RATE_HEADERS)
    assert http(fresh_hub.url, token, "GET", "/user").status == 200, "the hub keeps serving"
    fresh_hub.stop()
    log = fresh_hub.log.read_text()
    assert log.count("Traceback") == 1 and "no such table: reactions" in log


def test_a_bad_token_is_answered_401_with_the_rate_limit_headers(hub: Any) -> None:
    """Every answer carries x-ratelimit-*; a bad token is counted against the address."""
    import urllib.request

    request = urllib.request.Request(
        f"{hub.url}/user", headers={"Authorization": "token not-a-token"}
    )
    with pytest.raises(urllib.error.HTTPError) as caught:
        urllib.request.urlopen(request, timeout=10)
    answer = caught.value
    assert answer.code == 401
    assert json.loads(answer.read())["message"] == "Bad credentials"
    for name in ("limit", "remaining", "used", "reset", "resource"):
        assert answer.headers.get(f"x-ratelimit-{name}") is not None, name
    assert int(answer.headers["x-ratelimit-limit"]) == 60
