"""Faults on demand: seeded shares of 5xx, 429 and secondary 403 with Retry-After, dropped
connections and latency — each seen by a real client against a real hub process."""

from __future__ import annotations

import subprocess
import sys
import time
import urllib.error
from http.client import HTTPException
from typing import Any

import github
import pytest


def statuses(http: Any, hub: Any, token: str, n: int) -> list[int]:
    """The statuses of ``n`` sequential ``GET /user``."""
    return [http(hub.url, token, "GET", "/user").status for _ in range(n)]


def test_a_seeded_503_share_is_seen_and_repeats(fresh_hub: Any, http: Any) -> None:
    token = fresh_hub.token("carol")
    fresh_hub.set_faults("503=0.3,seed=7")
    first = statuses(http, fresh_hub, token, 60)
    injected = fresh_hub.admin("GET", "/_hub/faults")["injected"]
    fresh_hub.set_faults("503=0.3,seed=7")
    second = statuses(http, fresh_hub, token, 60)
    assert first == second, "the same seed must give the same faults"
    assert set(first) == {200, 503} and first.count(503) == injected
    assert 5 <= injected <= 35
    fresh_hub.clear_faults()
    assert statuses(http, fresh_hub, token, 5) == [200] * 5


def test_pygithub_sees_the_503(fresh_hub: Any, client: Any) -> None:
    gh = client(fresh_hub.url, fresh_hub.token("dave"))
    fresh_hub.set_faults("503=1,limit=1")
    with pytest.raises(github.GithubException) as err:
        _ = gh.get_user().login
    assert err.value.status == 503
    assert gh.get_user().login == "dave"


def test_429_and_secondary_403_carry_retry_after(fresh_hub: Any, http: Any) -> None:
    token = fresh_hub.token("erin")
    fresh_hub.set_faults("429=1,retry_after=7,limit=1")
    limited = http(fresh_hub.url, token, "GET", "/user")
    assert limited.status == 429 and limited.headers["retry-after"] == "7"
    assert "secondary rate limit" in limited.body["message"]
    fresh_hub.set_faults("secondary=1,retry_after=3,limit=1")
    secondary = http(fresh_hub.url, token, "POST", "/user/repos", {"name": "r"})
    assert secondary.status == 403 and secondary.headers["retry-after"] == "3"
    assert "secondary rate limit" in secondary.body["message"]
    assert secondary.headers["x-ratelimit-remaining"] != "0"
    assert http(fresh_hub.url, token, "POST", "/user/repos", {"name": "r"}).status == 201


def test_a_dropped_connection_and_added_latency(fresh_hub: Any, http: Any) -> None:
    token = fresh_hub.token("frank")
    fresh_hub.set_faults("drop=1,limit=1")
    with pytest.raises((urllib.error.URLError, HTTPException, ConnectionError)):
        http(fresh_hub.url, token, "GET", "/user")
    assert fresh_hub.count(path="/user", status=0) == 1
    fresh_hub.set_faults("latency=0.4")
    started = time.monotonic()
    assert http(fresh_hub.url, token, "GET", "/user").status == 200
    assert time.monotonic() - started >= 0.4


def test_faults_from_the_command_line(hub_factory: Any, http: Any) -> None:
    hub = hub_factory(faults="500=1,limit=2")
    token = hub.token("gina")
    assert statuses(http, hub, token, 3) == [500, 500, 200]


def test_admin_endpoints_are_hidden_from_ordinary_tokens(fresh_hub: Any, http: Any) -> None:
    token = fresh_hub.token("hank")
    for method, path in (
        ("GET", "/_hub/faults"),
        ("POST", "/_hub/faults"),
        ("GET", "/_hub/requests"),
    ):
        assert http(fresh_hub.url, token, method, path, {"spec": "500=1"}).status == 404
    assert statuses(http, fresh_hub, token, 2) == [200, 200]


def test_a_bad_fault_spec_is_refused(tmp_path: Any, fresh_hub: Any, http: Any) -> None:
    argv = [sys.executable, "-m", "relay.cli", "hub", "--port", "0", "--data", str(tmp_path)]
    out = subprocess.run(
        [*argv, "--faults", "503=2"],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert out.returncode == 2 and "fault" in out.stderr
    answer = http(fresh_hub.url, fresh_hub.admin_token, "POST", "/_hub/faults", {"spec": "x=1"})
    assert answer.status == 422


def test_an_exhausted_budget_is_403_with_remaining_zero(fresh_hub: Any, http: Any) -> None:
    def anonymous() -> Any:
        return http(fresh_hub.url, "", "GET", "/users/hub-admin", headers={"Authorization": ""})

    answers = [anonymous() for _ in range(61)]
    assert [a.status for a in answers] == [200] * 60 + [403]
    last = answers[-1]
    assert last.headers["x-ratelimit-remaining"] == "0"
    assert last.body["message"].startswith("API rate limit exceeded")
    free = http(fresh_hub.url, "", "GET", "/rate_limit", headers={"Authorization": ""})
    assert free.status == 200 and free.body["resources"]["core"]["remaining"] == 0
