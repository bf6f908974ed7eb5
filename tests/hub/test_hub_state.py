"""State and safety: restarts keep everything, concurrent clients never share a number or
an id, exactly one concurrent claimant wins a ref, and the CLI's token output is clean."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from pathlib import Path
from typing import Any

import aiohttp
from hubcalls import push_commit


def test_state_survives_a_restart(fresh_hub: Any, client: Any, tmp_path: Path) -> None:
    token = fresh_hub.token("ivy")
    repo = client(fresh_hub.url, token).get_user().create_repo("kept", private=True)
    sha = push_commit(fresh_hub.url, token, "ivy/kept", tmp_path)
    repo.create_label("awaiting:worker", "0e8a16")
    issue = repo.create_issue("survives", body="body", labels=["awaiting:worker"])
    comment = issue.create_comment("TASK 1")
    repo.create_git_ref("refs/relay/claims/1/1", sha)
    fresh_hub.restart()
    again = client(fresh_hub.url, token).get_repo("ivy/kept")
    assert again.private
    kept = again.get_issue(1)
    assert (kept.title, kept.body, [lab.name for lab in kept.labels]) == (
        "survives", "body", ["awaiting:worker"],
    )  # fmt: skip
    assert [c.id for c in kept.get_comments()] == [comment.id]
    assert again.get_git_ref("relay/claims/1/1").object.sha == sha
    assert again.create_issue("next").number == 2
    assert kept.create_comment("later").id > comment.id


async def _post_all(url: str, token: str, jobs: list[tuple[str, dict[str, Any]]]) -> list[Any]:
    """Send all POSTs at once, each on its own connection; return (status, body) pairs."""
    headers = {"Authorization": f"token {token}"}

    async def one(path: str, data: dict[str, Any]) -> tuple[int, Any]:
        async with (
            aiohttp.ClientSession(headers=headers) as session,
            session.post(f"{url}{path}", json=data) as resp,
        ):
            return resp.status, await resp.json()

    return list(await asyncio.gather(*(one(path, data) for path, data in jobs)))


def test_concurrent_clients_never_share_numbers_or_ids(fresh_hub: Any, http: Any) -> None:
    token = fresh_hub.token("jack")
    assert http(fresh_hub.url, token, "POST", "/user/repos", {"name": "busy"}).status == 201
    base = "/repos/jack/busy"
    issues = asyncio.run(_post_all(fresh_hub.url, token, [(f"{base}/issues", {"title": "i"})] * 20))
    numbers = sorted(body["number"] for _, body in issues)
    assert numbers == list(range(1, 21))
    jobs = [(f"{base}/issues/{n % 4 + 1}/comments", {"body": f"c{n}"}) for n in range(80)]
    comments = asyncio.run(_post_all(fresh_hub.url, token, jobs))
    ids = [body["id"] for status, body in comments if status == 201]
    assert len(ids) == len(set(ids)) == 80
    counts = [http(fresh_hub.url, token, "GET", f"{base}/issues/{n}").body["comments"]
              for n in range(1, 5)]  # fmt: skip
    assert counts == [20, 20, 20, 20]


def test_exactly_one_concurrent_claimant_wins_the_ref(
    fresh_hub: Any, http: Any, tmp_path: Path
) -> None:
    token = fresh_hub.token("kim")
    http(fresh_hub.url, token, "POST", "/user/repos", {"name": "claims"})
    sha = push_commit(fresh_hub.url, token, "kim/claims", tmp_path)
    claim = {"ref": "refs/relay/claims/7/1", "sha": sha}
    answers = asyncio.run(
        _post_all(fresh_hub.url, token, [("/repos/kim/claims/git/refs", claim)] * 12)
    )
    assert sorted(status for status, _ in answers) == [201] + [422] * 11
    lost = [body["message"] for status, body in answers if status == 422]
    assert set(lost) == {"Reference already exists"}


def test_rate_limit_endpoint_is_free_and_matches_the_headers(fresh_hub: Any, http: Any) -> None:
    token = fresh_hub.token("lea")
    seen = http(fresh_hub.url, token, "GET", "/user")
    first = http(fresh_hub.url, token, "GET", "/rate_limit").body["resources"]["core"]
    second = http(fresh_hub.url, token, "GET", "/rate_limit").body["resources"]["core"]
    assert first == second
    assert first["remaining"] == int(seen.headers["x-ratelimit-remaining"]) == 4999
    assert (first["limit"], first["used"], first["resource"]) == (5000, 1, "core")
    assert seen.headers["x-ratelimit-reset"] == str(first["reset"])


def test_token_prints_only_the_token_and_creates_the_user(tmp_path: Any) -> None:
    argv = [sys.executable, "-m", "relay.cli", "hub", "token", "mo", "--data", str(tmp_path)]
    first = subprocess.run(argv, capture_output=True, text=True, check=True, timeout=60)
    second = subprocess.run(argv, capture_output=True, text=True, check=True, timeout=60)
    assert first.stdout.count("\n") == 1 and len(first.stdout.split()) == 1
    assert first.stdout != second.stdout, "every call mints a fresh token"
    assert (tmp_path / "hub.sqlite3").exists()


def test_help_all_documents_the_faults_and_admin_endpoints() -> None:
    """`relay hub --help` is what a person needs; the internals are in --help-all."""
    argv = [sys.executable, "-m", "relay.cli", "hub", "--help-all"]
    out = subprocess.run(argv, capture_output=True, text=True, check=True, timeout=60).stdout
    short = subprocess.run([*argv[:-1], "--help"], capture_output=True, text=True, timeout=60)
    for needle in ("--faults", "/_hub/faults", "/_hub/requests", "retry_after", "--admin"):
        assert needle in out
        assert needle not in short.stdout
    assert "--help-all" in short.stdout and "--data" in short.stdout
