"""The hub hosts the repositories' git: clone, push and ls-remote over smart HTTP with the
API's tokens and access rules, and the refs API reads and writes those very refs."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from hubcalls import get_text, git, git_url, push_commit


def ls_remote(url: str) -> dict[str, str]:
    """``{ref: sha}`` as ``git ls-remote`` lists it."""
    out = git("ls-remote", url).stdout
    return {name: sha for sha, name in (line.split("\t") for line in out.splitlines())}


def test_clone_push_and_ls_remote_with_a_token(
    hub: Any, alice: str, api: Any, unique: str, tmp_path: Path
) -> None:
    full = f"alice/git-{unique}"
    assert api(alice, "POST", "/user/repos", {"name": f"git-{unique}"}).status == 201
    sha = push_commit(hub.url, alice, full, tmp_path)
    url = git_url(hub.url, full, alice)
    assert ls_remote(url) == {"HEAD": sha, "refs/heads/main": sha}
    git("clone", "-q", url, str(tmp_path / "copy"))
    assert (tmp_path / "copy" / "README").read_text().startswith(full)
    assert git("rev-parse", "HEAD", cwd=tmp_path / "copy").stdout.strip() == sha
    assert ls_remote(git_url(hub.url, full)) == {"HEAD": sha, "refs/heads/main": sha}  # public
    head = api(alice, "GET", f"/repos/{full}/git/ref/heads/main").body
    assert head["object"]["sha"] == sha


def test_a_claim_made_through_the_api_is_a_git_ref(
    api: Any, alice: str, hub: Any, repo: Any, pushed: Any
) -> None:
    sha = pushed(repo.full_name)
    claim = {"ref": "refs/relay/claims/4/1", "sha": sha}
    made = api(alice, "POST", f"/repos/{repo.full_name}/git/refs", claim)
    assert made.status == 201 and made.body["object"]["sha"] == sha
    assert ls_remote(git_url(hub.url, repo.full_name, alice))["refs/relay/claims/4/1"] == sha
    again = api(alice, "POST", f"/repos/{repo.full_name}/git/refs", claim)
    assert (again.status, again.body["message"]) == (422, "Reference already exists")
    gone = api(alice, "DELETE", f"/repos/{repo.full_name}/git/refs/relay/claims/4/1")
    assert gone.status == 204
    assert "refs/relay/claims/4/1" not in ls_remote(git_url(hub.url, repo.full_name, alice))


def test_a_pushed_ref_is_seen_by_the_api(
    api: Any, alice: str, hub: Any, repo: Any, pushed: Any, tmp_path: Path
) -> None:
    pushed(repo.full_name)
    sha = push_commit(hub.url, alice, repo.full_name, tmp_path, branch="topic")
    got = api(alice, "GET", f"/repos/{repo.full_name}/git/ref/heads/topic")
    assert got.status == 200 and got.body["object"]["sha"] == sha
    listed = api(alice, "GET", f"/repos/{repo.full_name}/git/matching-refs/heads/").body
    assert [r["ref"] for r in listed] == ["refs/heads/main", "refs/heads/topic"]


def test_a_sha_the_repository_lacks_is_422(api: Any, alice: str, repo: Any, pushed: Any) -> None:
    sha = pushed(repo.full_name)
    base = f"/repos/{repo.full_name}/git/refs"
    missing = api(alice, "POST", base, {"ref": "refs/relay/claims/1", "sha": "a" * 40})
    assert (missing.status, missing.body["message"]) == (422, "Object does not exist")
    assert missing.body["documentation_url"].endswith("/git/refs#create-a-reference")
    assert api(alice, "POST", base, {"ref": "refs/heads/b", "sha": sha}).status == 201
    moved = api(alice, "PATCH", f"{base}/heads/b", {"sha": "b" * 40, "force": True})
    assert (moved.status, moved.body["message"]) == (422, "Object does not exist")


def test_a_move_that_is_not_a_fast_forward_needs_force(
    api: Any, alice: str, hub: Any, repo: Any, pushed: Any, tmp_path: Path
) -> None:
    first = pushed(repo.full_name)
    other = push_commit(hub.url, alice, repo.full_name, tmp_path, branch="other")  # unrelated
    base = f"/repos/{repo.full_name}/git/refs"
    refused = api(alice, "PATCH", f"{base}/heads/main", {"sha": other})
    assert (refused.status, refused.body["message"]) == (422, "Update is not a fast forward")
    forced = api(alice, "PATCH", f"{base}/heads/main", {"sha": other, "force": True})
    assert forced.status == 200 and forced.body["object"]["sha"] == other
    assert ls_remote(git_url(hub.url, repo.full_name, alice))["refs/heads/main"] == other
    assert first != other


def test_git_follows_the_apis_access_rules(
    hub: Any, alice: str, bob: str, api: Any, unique: str, tmp_path: Path
) -> None:
    name = f"secret-{unique}"
    assert api(alice, "POST", "/user/repos", {"name": name, "private": True}).status == 201
    full = f"alice/{name}"
    push_commit(hub.url, alice, full, tmp_path)
    anonymous = git("ls-remote", git_url(hub.url, full), check=False)
    assert anonymous.returncode != 0 and "could not read Username" in anonymous.stderr
    hidden = git("ls-remote", git_url(hub.url, full, bob), check=False)
    assert hidden.returncode != 0 and "Repository not found" in hidden.stderr
    bad = git("ls-remote", git_url(hub.url, full, "ghp_" + "x" * 36), check=False)
    assert bad.returncode != 0 and "Authentication failed" in bad.stderr
    public = f"open-{unique}"
    assert api(alice, "POST", "/user/repos", {"name": public}).status == 201
    push_commit(hub.url, alice, f"alice/{public}", tmp_path)
    clone = tmp_path / "bobs"
    git("clone", "-q", git_url(hub.url, f"alice/{public}", bob), str(clone))  # bob may read
    git("commit", "-q", "--allow-empty", "-m", "bob's", cwd=clone)
    refused = git("push", "-q", "origin", "HEAD:refs/heads/bob", cwd=clone, check=False)
    assert refused.returncode != 0
    assert f"Permission to alice/{public}.git denied to bob" in refused.stderr


def test_a_strict_hub_says_an_empty_repository_is_empty(
    hub_factory: Any, http: Any, tmp_path: Path
) -> None:
    strict = hub_factory(api_only=False)
    token = strict.token("sam")
    assert http(strict.url, token, "POST", "/user/repos", {"name": "e"}).status == 201
    for method, path, body in (
        ("GET", "/git/refs", None),
        ("GET", "/git/ref/heads/main", None),
        ("GET", "/git/matching-refs/heads", None),
        ("POST", "/git/refs", {"ref": "refs/heads/x", "sha": "a" * 40}),
    ):
        got = http(strict.url, token, method, f"/repos/sam/e{path}", body)
        assert (got.status, got.body["message"]) == (409, "Git Repository is empty."), path
    sha = push_commit(strict.url, token, "sam/e", tmp_path)
    refs = http(strict.url, token, "GET", "/repos/sam/e/git/refs").body
    assert [(r["ref"], r["object"]["sha"]) for r in refs] == [("refs/heads/main", sha)]


def test_a_ref_path_cannot_leave_the_repository(
    api: Any, alice: str, repo: Any, pushed: Any
) -> None:
    pushed(repo.full_name)
    base = f"/repos/{repo.full_name}/git"
    for path in ("/ref/..%2F..%2FHEAD", "/refs/..%2Fpacked-refs", "/matching-refs/..%2F"):
        got = api(alice, "GET", base + path)
        assert got.status in (200, 404) and (got.status == 404 or got.body == []), path


def test_a_log_link_shows_the_file_at_that_commit(
    hub: Any, alice: str, bob: str, api: Any, unique: str, tmp_path: Path
) -> None:
    name = f"logs-{unique}"
    assert api(alice, "POST", "/user/repos", {"name": name, "private": True}).status == 201
    sha = push_commit(hub.url, alice, f"alice/{name}", tmp_path)
    link = f"/alice/{name}/blob/{sha}/README"
    status, kind, page = get_text(hub.url, link, alice)
    assert (status, kind.split(";")[0]) == (200, "text/html")  # its page, as on GitHub
    assert f"alice/{name} clone-" in page.decode()
    status, kind, body = get_text(hub.url, f"/alice/{name}/raw/{sha}/README", alice)
    assert (status, kind.split(";")[0]) == (200, "text/plain")  # and its raw bytes
    assert body.decode().startswith(f"alice/{name}")
    assert get_text(hub.url, f"/alice/{name}/raw/main/README", alice)[2] == body
    assert get_text(hub.url, f"/alice/{name}/blob/{sha}/absent", alice)[0] == 404
    assert get_text(hub.url, f"/alice/{name}/blob/{'0' * 40}/README", alice)[0] == 404
    assert get_text(hub.url, link)[0] == 404  # private: anonymous callers see nothing
    assert get_text(hub.url, link, bob)[0] == 404


def test_an_api_only_repository_becomes_git_backed_at_its_first_push(
    hub: Any, alice: str, api: Any, unique: str, tmp_path: Path
) -> None:
    name = f"late-{unique}"
    full = f"alice/{name}"
    assert api(alice, "POST", "/user/repos", {"name": name}).status == 201
    refs = f"/repos/{full}/git/refs"
    assert api(alice, "GET", refs).body == []  # API-only: an empty list, not 409, as before
    clone = tmp_path / "clone"
    git("init", "-q", "-b", "main", str(clone))
    git("commit", "-q", "--allow-empty", "-m", "to come", cwd=clone)
    sha = git("rev-parse", "HEAD", cwd=clone).stdout.strip()
    for claim, at in (("refs/relay/claims/1", sha), ("refs/relay/claims/2", "f" * 40)):
        assert api(alice, "POST", refs, {"ref": claim, "sha": at}).status == 201  # any sha
    git("push", "-q", git_url(hub.url, full, alice), "HEAD:refs/heads/main", cwd=clone)
    listed = {r["ref"]: r["object"]["sha"] for r in api(alice, "GET", refs).body}
    assert listed == {"refs/heads/main": sha, "refs/relay/claims/1": sha}  # 2: git lacks it
    assert ls_remote(git_url(hub.url, full, alice))["refs/relay/claims/1"] == sha
    late = api(alice, "POST", refs, {"ref": "refs/relay/claims/3", "sha": "f" * 40})
    assert (late.status, late.body["message"]) == (422, "Object does not exist")


def test_git_is_served_in_every_protocol_version_and_a_gzipped_request_too(
    hub: Any, alice: str, api: Any, unique: str, tmp_path: Path, monkeypatch: Any
) -> None:
    """Smart HTTP as ``git http-backend`` answers it: protocol v0 and v1 (whose refs
    advertisement opens with the service's line) as well as v2, a fetch request the client
    gzipped (one with many haves), and 415 for a POST of another content type."""
    name = f"wire-{unique}"
    full = f"alice/{name}"
    assert api(alice, "POST", "/user/repos", {"name": name}).status == 201
    push_commit(hub.url, alice, full, tmp_path)
    url = git_url(hub.url, full, alice)
    for version in ("0", "1", "2"):
        clone = tmp_path / f"v{version}"
        git("-c", f"protocol.version={version}", "clone", "-q", url, str(clone))
        git("commit", "-q", "--allow-empty", "-m", f"v{version}", cwd=clone)
        pushed = git("-c", f"protocol.version={version}", "push", "-q", "origin",
                     f"HEAD:refs/heads/v{version}", cwd=clone)  # fmt: skip
        assert pushed.returncode == 0
    refs = ls_remote(url)
    assert {"refs/heads/v0", "refs/heads/v1", "refs/heads/v2"} <= set(refs)
    many = tmp_path / "v0"
    later = int(time.time()) + 3600  # newer than the shared commits, so negotiation walks
    for n in range(80):  # the haves the hub lacks first: the request passes 1 KB, gzipped
        monkeypatch.setenv("GIT_COMMITTER_DATE", f"{later + n} +0000")
        git("commit", "-q", "--allow-empty", "-m", f"local {n}", cwd=many)
    monkeypatch.delenv("GIT_COMMITTER_DATE")
    monkeypatch.setenv("GIT_TRACE_CURL", "1")
    monkeypatch.setenv("GIT_TRACE_CURL_NO_DATA", "1")
    fetched = git("fetch", "-q", "origin", "refs/heads/v2:refs/remotes/origin/v2", cwd=many)
    assert "Content-Encoding: gzip" in fetched.stderr
    got = git("rev-parse", "refs/remotes/origin/v2", cwd=many).stdout.strip()
    assert got == refs["refs/heads/v2"]
    status, _, body = get_text(hub.url, f"/{full}.git/info/refs?service=git-upload-pack")
    assert status == 200 and body.startswith(b"001e# service=git-upload-pack\n0000")
    import urllib.error
    import urllib.request

    post = urllib.request.Request(
        f"{hub.url}/{full}.git/git-upload-pack", b"0000", {"Content-Type": "text/plain"}
    )
    try:
        urllib.request.urlopen(post, timeout=10)
        raise AssertionError("a POST of text/plain was answered")
    except urllib.error.HTTPError as err:
        assert err.code == 415 and b"Expected POST with Content-Type" in err.read()
