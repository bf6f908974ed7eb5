"""Branch protection on the hub, as GitHub does it: exposed by the branches API, refused by
real git pushes (``GH006`` and ``protected branch hook declined``) and by the refs API."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from hubcalls import git, git_url, push_commit

PR_ONLY = {
    "required_status_checks": None,
    "enforce_admins": True,
    "required_pull_request_reviews": {"required_approving_review_count": 1},
    "restrictions": None,
}


def _repo(api: Any, token: str, name: str) -> str:
    assert api(token, "POST", "/user/repos", {"name": name}).status == 201
    return f"alice/{name}"


def test_a_protected_branch_is_exposed_and_refuses_pushes_over_git(
    hub: Any, api: Any, alice: str, unique: str, tmp_path: Path
) -> None:
    full = _repo(api, alice, f"guard-{unique}")
    r = f"/repos/{full}"
    base = push_commit(hub.url, alice, full, tmp_path)
    assert api(alice, "GET", f"{r}/branches/main/protection").body["message"] == (
        "Branch not protected"
    )
    listed = api(alice, "GET", f"{r}/branches").body
    assert [(b["name"], b["protected"]) for b in listed] == [("main", False)]
    made = api(alice, "PUT", f"{r}/branches/main/protection", PR_ONLY)
    assert made.status == 200 and made.body["enforce_admins"]["enabled"] is True
    got = api(alice, "GET", f"{r}/branches/main/protection").body
    assert got["required_pull_request_reviews"]["required_approving_review_count"] == 1
    assert "required_status_checks" not in got  # off parts are left out, as on GitHub
    branch = api(alice, "GET", f"{r}/branches/main").body
    assert branch["protected"] is True and branch["protection"]["enabled"] is True
    assert branch["commit"]["sha"] == base
    assert api(alice, "GET", f"{r}/branches?protected=false").body == []

    clone = tmp_path / "pusher"
    git("clone", "-q", git_url(hub.url, full, alice), str(clone))
    (clone / "log.md").write_text("a log\n")
    git("add", "log.md", cwd=clone)
    git("commit", "-q", "-m", "relay log", cwd=clone)
    refused = git("push", "origin", "HEAD:main", "HEAD:refs/heads/relay-data", cwd=clone,
                  check=False)  # fmt: skip
    assert refused.returncode == 1
    assert "remote: error: GH006: Protected branch update failed for refs/heads/main." in (
        refused.stderr
    )
    assert "Changes must be made through a pull request." in refused.stderr
    assert "! [remote rejected] HEAD -> main (protected branch hook declined)" in refused.stderr
    heads = git("ls-remote", git_url(hub.url, full, alice), cwd=clone).stdout
    assert f"{base}\trefs/heads/main" in heads  # main did not move
    assert "refs/heads/relay-data" in heads  # the unprotected branch of the same push did

    assert api(alice, "DELETE", f"{r}/branches/main/protection").status == 204
    git("push", "-q", "origin", "HEAD:main", cwd=clone)
    assert api(alice, "GET", f"{r}/branches/main").body["protected"] is False


def test_protection_binds_the_refs_api_and_spares_admins_unless_enforced(
    hub: Any, api: Any, alice: str, bob: str, unique: str, tmp_path: Path
) -> None:
    full = _repo(api, alice, f"guard-api-{unique}")
    r = f"/repos/{full}"
    assert api(alice, "PUT", f"{r}/collaborators/bob", {"permission": "push"}).status == 201
    first = push_commit(hub.url, alice, full, tmp_path)
    clone = tmp_path / "c"
    git("clone", "-q", git_url(hub.url, full, alice), str(clone))
    git("commit", "-q", "--allow-empty", "-m", "next", cwd=clone)
    git("push", "-q", "origin", "HEAD:refs/heads/next", cwd=clone)
    second = git("rev-parse", "HEAD", cwd=clone).stdout.strip()
    lenient = {**PR_ONLY, "enforce_admins": False}
    assert api(alice, "PUT", f"{r}/branches/main/protection", lenient).status == 200

    moved = api(bob, "PATCH", f"{r}/git/refs/heads/main", {"sha": second})
    assert (moved.status, moved.body["message"]) == (
        422, "Changes must be made through a pull request."
    )  # fmt: skip
    deleted = api(bob, "DELETE", f"{r}/git/refs/heads/main")
    assert (deleted.status, deleted.body["message"]) == (
        422, "Cannot delete this protected branch"
    )  # fmt: skip
    bob_push = git("push", git_url(hub.url, full, bob), "HEAD:main", cwd=clone, check=False)
    assert "GH006" in bob_push.stderr and bob_push.returncode == 1
    assert api(alice, "GET", f"{r}/git/ref/heads/main").body["object"]["sha"] == first

    # the owner is an admin: without enforce_admins, protection does not bind them
    assert api(alice, "PATCH", f"{r}/git/refs/heads/main", {"sha": second}).status == 200
    assert api(bob, "GET", f"{r}/branches/main/protection").status == 403  # admin only


def test_a_bad_protection_body_is_refused_as_github_refuses_it(
    hub: Any, api: Any, alice: str, unique: str, tmp_path: Path
) -> None:
    full = _repo(api, alice, f"guard-bad-{unique}")
    r = f"/repos/{full}"
    push_commit(hub.url, alice, full, tmp_path)
    short = {k: v for k, v in PR_ONLY.items() if k != "restrictions"}
    got = api(alice, "PUT", f"{r}/branches/main/protection", short)
    assert got.status == 422 and '"restrictions" wasn\'t supplied.' in got.body["message"]
    missing = api(alice, "PUT", f"{r}/branches/nope/protection", PR_ONLY)
    assert (missing.status, missing.body["message"]) == (404, "Branch not found")
    assert api(alice, "DELETE", f"{r}/branches/main/protection").status == 404


def test_what_each_setting_refuses() -> None:
    from relay.hub.protection import normalise, refusals

    a, b, zero = "a" * 40, "b" * 40, "0" * 40
    plain = normalise({**PR_ONLY, "required_pull_request_reviews": None})
    assert refusals(plain, old=a, new=b, admin=False, fast_forward=True) == []
    assert refusals(plain, old=a, new=b, admin=False, fast_forward=False) == [
        "Cannot force-push to a protected branch."
    ]
    forced = normalise({**PR_ONLY, "required_pull_request_reviews": None,
                        "allow_force_pushes": True})  # fmt: skip
    assert refusals(forced, old=a, new=b, admin=False, fast_forward=False) == []
    ci = {"strict": True, "contexts": ["ci"]}
    checks = normalise({**PR_ONLY, "required_pull_request_reviews": None,
                        "required_status_checks": ci})  # fmt: skip
    assert refusals(checks, old=a, new=b, admin=True, fast_forward=True) == [
        'Required status check "ci" is expected.'
    ]
    locked = normalise({**PR_ONLY, "enforce_admins": False, "lock_branch": True})
    assert refusals(locked, old=a, new=b, admin=True, fast_forward=True) == [
        "Cannot change this locked branch"
    ]
    assert refusals(plain, old=a, new=zero, admin=False, fast_forward=False) == [
        "Cannot delete this protected branch"
    ]
    assert refusals(None, old=a, new=zero, admin=False, fast_forward=False) == []
