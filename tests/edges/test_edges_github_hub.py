"""GitHubClient against a REAL `relay hub` process: every call relay makes, the 304s of an
idle pass from a fresh process, the error messages, and faults injected by the hub."""

from __future__ import annotations

import asyncio
import json
import urllib.request
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, TypeVar

import pytest

from relay.edges.github import GitHubClient, RetryPolicy
from relay.errors import ConfigError, RemoteUnavailable
from relay.node.execute import comment_then_move
from relay.protocol.labels import Label

T = TypeVar("T")
BATON = ("awaiting:worker", "working", "awaiting:controller")


def make_repo(url: str, token: str, name: str) -> None:
    """Create a repository on the hub for the test (setup, not the code under test)."""
    request = urllib.request.Request(
        f"{url}/user/repos",
        data=json.dumps({"name": name, "private": True}).encode(),
        method="POST",
        headers={"Authorization": f"token {token}", "Content-Type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=10) as response:
        assert response.status == 201


def with_client(
    hub: Any,
    token: str,
    repo: str | None,
    body: Callable[[GitHubClient], Awaitable[T]],
    *,
    cache: Path | None = None,
    sleeps: list[float] | None = None,
) -> tuple[T, GitHubClient]:
    """Run ``body`` with a client of its own, as one relay process would."""

    async def fake_sleep(seconds: float) -> None:
        if sleeps is not None:
            sleeps.append(seconds)

    async def main() -> tuple[T, GitHubClient]:
        client = GitHubClient(
            api_url=hub.url,
            token=token,
            repo=repo,
            cache_path=cache,
            sleep=fake_sleep,
            policy=RetryPolicy(jitter=0.0),
        )
        async with client as gh:
            return await body(gh), gh

    return asyncio.run(main())


@pytest.fixture
def owner(hub: Any, unique: str) -> tuple[str, str, str]:
    """A fresh account on the shared hub with a repository of its own."""
    login = f"owner-{unique}"
    token = hub.token(login)
    make_repo(hub.url, token, f"repo-{unique}")
    return login, token, f"{login}/repo-{unique}"


def test_account_repo_and_permission(hub: Any, owner: tuple[str, str, str]) -> None:
    login, token, repo = owner

    async def body(gh: GitHubClient) -> Any:
        return await gh.current_user(), await gh.get_repo(), await gh.collaborator_permission(login)

    (me, info, perm), _ = with_client(hub, token, repo, body)
    assert me.login == login and me.id > 0
    assert info.full_name == repo and info.private and info.owner.id == me.id
    assert perm.permission == "admin"


def test_missing_repo_and_wrong_token_say_what_to_do(hub: Any, owner: tuple[str, str, str]) -> None:
    login, token, _ = owner
    with pytest.raises(ConfigError, match=f"the token has no access to {login}/nope"):
        with_client(hub, token, f"{login}/nope", lambda gh: gh.get_repo())
    with pytest.raises(ConfigError) as err:
        with_client(hub, "not-a-token", None, lambda gh: gh.current_user())
    assert str(err.value) == (
        f"the API at {hub.url} rejected the token; set RELAY_TOKEN to a valid token"
        " (embedded hub: relay hub token LOGIN)"
    )


def test_labels_are_created_idempotently(hub: Any, owner: tuple[str, str, str]) -> None:
    _, token, repo = owner

    async def body(gh: GitHubClient) -> Any:
        first = [await gh.create_label(n, color="#0e8a16", description="baton") for n in BATON]
        again = await gh.create_label(BATON[0], color="ffffff")
        changed = await gh.update_label(BATON[1], color="fbca04", description="running")
        return first, again, changed, await gh.list_labels()

    (first, again, changed, labels), _ = with_client(hub, token, repo, body)
    assert first == [True, True, True] and again is False
    assert (changed.color, changed.description) == ("fbca04", "running")
    by_name = {label.name: label for label in labels}
    assert set(BATON) <= set(by_name) and by_name[BATON[0]].color == "0e8a16"


def test_issue_life_and_its_labels(hub: Any, owner: tuple[str, str, str]) -> None:
    login, token, repo = owner
    before = datetime.now(tz=UTC) - timedelta(seconds=5)

    async def body(gh: GitHubClient) -> Any:
        for name in (*BATON, "resolved"):
            await gh.create_label(name, color="cccccc")
        job = await gh.create_issue(title="job", body="objective", labels=[BATON[0]])
        other = await gh.create_issue(title="other", body="")
        listed = await gh.list_issues(labels=[BATON[0]])
        recent = await gh.list_issues(state="all", since=before)
        await gh.add_labels(job.number, [BATON[1]])
        removed = await gh.remove_label(job.number, BATON[0])
        absent = await gh.remove_label(job.number, BATON[0])
        now = await gh.set_labels(job.number, [BATON[2]])
        closed = await gh.update_issue(
            job.number, body="done", state="closed", state_reason="completed", labels=["resolved"]
        )
        events = await gh.list_issue_events(job.number)
        return job, other, listed, recent, removed, absent, now, closed, events

    job, other, listed, recent, removed, absent, now, closed, events = with_client(
        hub, token, repo, body
    )[0]
    assert job.label_names == {BATON[0]} and job.user.login == login and other.body == ""
    assert [i.number for i in listed] == [job.number]
    assert {i.number for i in recent} == {job.number, other.number}
    assert (removed, absent) == (True, False)
    assert [label.name for label in now] == [BATON[2]]
    assert (closed.state, closed.state_reason, closed.body) == ("closed", "completed", "done")
    assert closed.label_names == {"resolved"}
    labeled = [e for e in events if e.event == "labeled" and e.label is not None]
    assert labeled and all(e.actor is not None and e.actor.id == job.user.id for e in labeled)
    assert labeled[0].label is not None and labeled[0].label.name == BATON[0]


def test_comments_pages_reactions(hub: Any, owner: tuple[str, str, str]) -> None:
    _, token, repo = owner

    async def body(gh: GitHubClient) -> Any:
        job = await gh.create_issue(title="thread", body="")
        made = [await gh.create_comment(job.number, f"comment {i}") for i in range(105)]
        edited = await gh.update_comment(made[0].id, "comment 0, edited")
        eyes = await gh.create_reaction(made[1].id, "eyes")
        eyes_again = await gh.create_reaction(made[1].id, "eyes")
        everything = await gh.list_comments(job.number)
        since_edit = await gh.list_comments(job.number, since=edited.updated_at)
        future = datetime.now(tz=UTC) + timedelta(days=1)
        none_yet = await gh.list_comments(job.number, since=future)
        return made, edited, eyes, eyes_again, everything, since_edit, none_yet

    result, gh = with_client(hub, token, repo, body)
    made, edited, eyes, again, everything, since_edit, none_yet = result
    assert len(everything) == 105, "all pages are followed"
    assert [c.id for c in everything] == [c.id for c in made], "oldest first"
    assert everything[0].body == edited.body == "comment 0, edited"
    assert eyes.content == "eyes" and again.id == eyes.id
    assert made[0].id in {c.id for c in since_edit}, "an edited comment shows up again"
    assert none_yet == []
    pages = -(-len(since_edit) // 100)
    assert gh.stats.requests == 1 + 105 + 1 + 2 + 2 + pages + 1


def test_a_comment_id_past_2_31_comes_back_through_the_graphql_reads(
    hub: Any, owner: tuple[str, str, str]
) -> None:
    """github.com's comment ids passed 2**31, GraphQL's Int, in 2024 (``databaseId`` is then
    an error and null), and the hub's start past it: a claim posted with the ``addComment``
    mutation gets its id back (posted once, the baton moved in the same request), and
    ``ever_edited`` and ``comment_edits`` name it once it is edited."""
    _, token, repo = owner

    async def body(gh: GitHubClient) -> Any:
        for name in BATON:
            await gh.create_label(name, color="cccccc")
        job = await gh.create_issue(title="job", body="", labels=[BATON[0]])
        posted = await comment_then_move(
            gh, job.number, "claim", expect=Label.AWAITING_WORKER, to=Label.WORKING
        )
        unedited = await gh.ever_edited(job.number)
        await gh.update_comment(posted.id, "claim, edited")
        edited = await gh.ever_edited(job.number)
        history = await gh.comment_edits(job.number)
        listed = await gh.list_comments(job.number)
        other = await gh.create_comment(job.number, "another comment")
        for n in range(3):
            await gh.update_comment(other.id, f"another comment, edit {n}")
        asked = await gh.comment_edits(job.number, frozenset({job.user.id}), {posted.id})
        return posted, unedited, edited, history, listed, job, asked

    got, _ = with_client(hub, token, repo, body)
    posted, unedited, edited, history, comments, job, asked = got
    assert asked is not None and asked[1] == {posted.id}, "only the comment asked about"
    assert {e.comment_id for e in asked[0]} == {posted.id}
    # the text of the versions its accounts wrote, read by their ids: the newest first
    assert [e.body for e in asked[0]] == ["claim, edited", "claim"]
    assert [c.id for c in comments] == [posted.id] and posted.id > 2**31, "posted once"
    assert comments[0].html_url.endswith(f"#issuecomment-{posted.id}")
    assert posted.moves == 1, "the baton moved in the mutation that posted it"
    assert unedited == frozenset() and edited == frozenset({posted.id})
    assert history is not None
    edits, whole = history
    assert edits and {e.comment_id for e in edits} == {posted.id} and whole == {posted.id}
    assert all(e.editor is not None and e.editor.id == job.user.id for e in edits)


def test_a_lost_answer_to_the_claim_mutation_finds_its_big_id(fresh_hub: Any) -> None:
    """The hub posts the claim and its labels, then drops the connection: the retry finds
    the comment over REST, and its id (past 2**31) is the answer; nothing is posted twice."""
    token = fresh_hub.token("lossy")
    make_repo(fresh_hub.url, token, "r")

    async def body(gh: GitHubClient) -> Any:
        for name in BATON:
            await gh.create_label(name, color="cccccc")
        job = await gh.create_issue(title="t", body="", labels=[BATON[0]])
        working = await gh.label_node_id(BATON[1])
        assert job.node_id and working
        fresh_hub.set_faults("drop_after=1,limit=1")
        made = await gh.comment_and_relabel(
            job.number, "claim", issue_id=job.node_id, label_ids=[working]
        )
        fresh_hub.clear_faults()
        return made, await gh.list_comments(job.number)

    ((made, _), comments), gh = with_client(fresh_hub, token, "lossy/r", body)
    assert [c.id for c in comments] == [made] and made is not None and made > 2**31
    assert gh.stats.lost_answers == 1 and gh.stats.found_after_loss == 1


def test_claim_refs_are_compare_and_swap(hub: Any, owner: tuple[str, str, str]) -> None:
    _, token, repo = owner
    ref, sha = "refs/relay/claims/12/3", "1" * 40

    async def body(gh: GitHubClient) -> Any:
        won = await gh.create_ref(ref, sha)
        lost = await gh.create_ref(ref, "2" * 40)
        seen = await gh.get_ref(ref)
        gone = await gh.delete_ref(ref)
        return won, lost, seen, gone, await gh.delete_ref(ref), await gh.get_ref(ref)

    (won, lost, seen, gone, gone_again, missing), _ = with_client(hub, token, repo, body)
    assert (won, lost) == (True, False)
    assert seen is not None and (seen.ref, seen.target.sha) == (ref, sha)
    assert (gone, gone_again, missing) == (True, False, None)


def test_an_idle_repeat_from_a_fresh_process_is_all_304s(
    hub: Any, owner: tuple[str, str, str], tmp_path: Path
) -> None:
    _, token, repo = owner
    cache = tmp_path / "etag-cache.json"

    async def observe(gh: GitHubClient) -> Any:
        return (
            await gh.current_user(),
            await gh.list_issues(labels=[BATON[0]]),
            await gh.list_labels(),
        )

    with_client(hub, token, repo, lambda gh: gh.create_issue(title="idle", body=""))
    first, gh1 = with_client(hub, token, repo, observe, cache=cache)
    second, gh2 = with_client(hub, token, repo, observe, cache=cache)
    assert second == first
    assert gh1.stats.not_modified == 0
    assert gh2.stats.requests == 3 and gh2.stats.not_modified == 3


def test_hub_faults_are_retried(fresh_hub: Any) -> None:
    token = fresh_hub.token("faulty")
    make_repo(fresh_hub.url, token, "r")
    fresh_hub.set_faults("503=1,limit=2")
    sleeps: list[float] = []
    me, gh = with_client(fresh_hub, token, "faulty/r", lambda gh: gh.current_user(), sleeps=sleeps)
    assert me.login == "faulty" and sleeps == [0.5, 1.0] and gh.stats.requests == 3
    fresh_hub.set_faults("429=1,limit=1,retry_after=3")
    sleeps.clear()
    with_client(fresh_hub, token, "faulty/r", lambda gh: gh.get_repo(), sleeps=sleeps)
    assert sleeps == [3.0]
    fresh_hub.set_faults("secondary=1,limit=1,retry_after=2")
    sleeps.clear()
    with_client(fresh_hub, token, "faulty/r", lambda gh: gh.list_labels(), sleeps=sleeps)
    assert sleeps == [2.0]
    fresh_hub.set_faults("drop=1,limit=2")
    sleeps.clear()
    made, _ = with_client(
        fresh_hub, token, "faulty/r", lambda gh: gh.create_issue(title="t", body=""), sleeps=sleeps
    )
    assert made.title == "t" and sleeps, "a POST dropped by the hub is retried by relay"
    fresh_hub.clear_faults()


def test_a_stopped_hub_is_unreachable(fresh_hub: Any) -> None:
    token = fresh_hub.token("gone")
    url = fresh_hub.url
    fresh_hub.stop()
    with pytest.raises(RemoteUnavailable) as err:
        with_client(fresh_hub, token, None, lambda gh: gh.current_user())
    assert str(err.value).startswith(f"cannot reach the API at {url}")


def test_a_comment_past_a_full_cached_page_is_not_missed(
    hub: Any, owner: tuple[str, str, str], tmp_path: Path
) -> None:
    """GitHub's ETag covers a page's body, not its Link header: with exactly 100 comments
    cached, the 101st changes no cached page, and a plain cached walk would stop at 100."""
    _, token, repo = owner
    cache = tmp_path / "etag-cache.json"
    issue, _ = with_client(hub, token, repo, lambda gh: gh.create_issue(title="full", body=""))

    async def fill(gh: GitHubClient) -> None:
        for i in range(100):
            await gh.create_comment(issue.number, f"comment {i}")

    with_client(hub, token, repo, fill)
    first, _ = with_client(hub, token, repo, lambda gh: gh.list_comments(issue.number), cache=cache)
    assert len(first) == 100
    with_client(hub, token, repo, lambda gh: gh.create_comment(issue.number, "the 101st"))
    again, gh = with_client(
        hub, token, repo, lambda gh: gh.list_comments(issue.number), cache=cache
    )
    assert [c.body for c in again[-2:]] == ["comment 99", "the 101st"]
    assert gh.stats.not_modified >= 1, "page 1 was still answered from the cache"


def test_a_content_limit_is_waited_out_as_github_asks(hub_factory: Any) -> None:
    """The hub enforces a secondary limit (here 3 content-creating requests a "minute" the
    hub shortens to 8 s); the client's next write gets GitHub's 403 with Retry-After, waits
    that long for real, and then succeeds — it neither fails nor hammers the API."""
    limited = hub_factory(content_limit="3/0", extra=("--content-window", "8"))
    token = limited.token("busy")
    make_repo(limited.url, token, "busy")  # 1

    async def body(gh: GitHubClient) -> list[int]:
        made = await gh.create_issue(title="t", body="b")  # 2
        await gh.create_comment(made.number, "one")  # 3
        await gh.create_comment(made.number, "two")  # 4: over the limit, waited out
        return [c.id for c in await gh.list_comments(made.number)]

    async def main() -> tuple[list[int], Any]:
        client = GitHubClient(api_url=limited.url, token=token, repo="busy/busy")
        async with client as gh:
            return await body(gh), gh.stats

    ids, stats = asyncio.run(main())
    assert len(ids) == 2
    assert stats.retries >= 1 and 1 <= stats.waited <= 9
    assert limited.count(method="POST", status=403) >= 1


def test_a_lost_answer_to_a_comment_or_claim_is_found_not_written_twice(
    fresh_hub: Any, tmp_path: Path
) -> None:
    """The hub commits the write, then drops the connection (or answers 502): relay's retry
    first looks for what it wrote, and takes that as the answer — one comment, one claim."""
    from relay.commands.demo import git, git_auth, git_url

    token = fresh_hub.token("lossy")
    make_repo(fresh_hub.url, token, "r")
    git("init", "-q", "-b", "main", str(tmp_path / "c"), cwd=tmp_path)
    (tmp_path / "c" / "README").write_text("r\n")
    git("add", "README", cwd=tmp_path / "c")
    git("commit", "-q", "-m", "first", cwd=tmp_path / "c")
    url = git_url(fresh_hub.url, "lossy/r")
    git("push", "-q", url, "HEAD:main", cwd=tmp_path / "c", auth=git_auth(url, token))
    sha = git("rev-parse", "HEAD", cwd=tmp_path / "c").strip()
    issue, _ = with_client(
        fresh_hub, token, "lossy/r", lambda gh: gh.create_issue(title="t", body="")
    )
    ref = f"refs/relay/claims/{issue.number}/1"

    async def body(gh: GitHubClient) -> Any:
        fresh_hub.set_faults("drop_after=1,limit=1")
        comment = await gh.create_comment(issue.number, "RESULT once\r\nsigned")
        fresh_hub.set_faults("502_after=1,limit=1")
        claimed = await gh.create_ref(ref, sha)
        fresh_hub.clear_faults()
        again = await gh.create_ref(ref, sha)  # a second pass: the ref exists, not ours now
        return comment, claimed, again, await gh.list_comments(issue.number)

    (comment, claimed, again, comments), gh = with_client(fresh_hub, token, "lossy/r", body)
    assert [c.body for c in comments] == ["RESULT once\r\nsigned"], "posted exactly once"
    assert comment.id == comments[0].id
    assert claimed is True, "the claim whose answer was lost is this client's own"
    assert again is False
    assert gh.stats.lost_answers == 2 and gh.stats.found_after_loss == 2


def test_a_lost_answer_whose_write_did_not_happen_is_sent_again(fresh_hub: Any) -> None:
    token = fresh_hub.token("dropped")
    make_repo(fresh_hub.url, token, "r")
    issue, _ = with_client(
        fresh_hub, token, "dropped/r", lambda gh: gh.create_issue(title="t", body="")
    )

    async def body(gh: GitHubClient) -> Any:
        fresh_hub.set_faults("drop=1,limit=1")  # dropped before the write
        await gh.create_comment(issue.number, "said once")
        fresh_hub.clear_faults()
        return await gh.list_comments(issue.number)

    comments, gh = with_client(fresh_hub, token, "dropped/r", body)
    assert [c.body for c in comments] == ["said once"]
    assert gh.stats.lost_answers == 1 and gh.stats.found_after_loss == 0


def test_an_environment_and_every_page_of_its_branch_patterns(
    hub: Any, owner: tuple[str, str, str]
) -> None:
    """An environment the token may not see is None, not an error; its custom branch
    patterns are a paged object ({total_count, branch_policies}), read to the last page."""
    _, token, repo = owner
    envs = f"/repos/{repo}/environments/relay-node"
    assert with_client(hub, token, repo, lambda gh: gh.environment("relay-node"))[0] is None

    def call(method: str, path: str, body: Any) -> None:
        auth = {"Authorization": f"token {token}"}
        data = json.dumps(body).encode()
        request = urllib.request.Request(f"{hub.url}{path}", data, auth, method=method)
        with urllib.request.urlopen(request, timeout=10) as response:
            assert response.status == 200

    policy = {"protected_branches": False, "custom_branch_policies": True}
    call("PUT", envs, {"deployment_branch_policy": policy})
    for i in range(101):
        call("POST", f"{envs}/deployment-branch-policies", {"name": f"b{i}"})
    found, _ = with_client(hub, token, repo, lambda gh: gh.environment("relay-node"))
    assert found is not None and found.deployment_branch_policy is not None
    assert found.deployment_branch_policy.custom_branch_policies and found.reviewers == 0
    patterns, _ = with_client(hub, token, repo, lambda gh: gh.branch_patterns("relay-node"))
    assert patterns is not None and [p.name for p in patterns] == [f"b{i}" for i in range(101)]
