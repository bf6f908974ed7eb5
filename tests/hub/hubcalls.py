"""The hub suites' helpers: a raw HTTP caller for what the clients hide (status codes,
headers), PyGithub without retries, and real git against the hub. A module of its own name
(not ``conftest``), so that test files anywhere can import it while other folders' conftest
modules are loaded in the same pytest process."""

from __future__ import annotations

import itertools
import json
import os
import subprocess
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import github


@dataclass(frozen=True)
class Answer:
    """A raw HTTP answer."""

    status: int
    headers: dict[str, str]
    body: Any


def call(
    url: str,
    token: str,
    method: str,
    path: str,
    body: Any = None,
    headers: dict[str, str] | None = None,
) -> Answer:
    """One request with the stdlib, returning the answer whatever its status."""
    data = None if body is None else json.dumps(body).encode()
    sent = {"Authorization": f"token {token}", "Accept": "application/vnd.github+json"}
    req = urllib.request.Request(f"{url}{path}", data, {**sent, **(headers or {})}, method=method)
    try:
        with urllib.request.urlopen(req, timeout=10) as resp:
            status, head, raw = resp.status, dict(resp.headers), resp.read()
    except urllib.error.HTTPError as err:
        status, head, raw = err.code, dict(err.headers), err.read()
    lowered = {k.lower(): v for k, v in head.items()}
    return Answer(status, lowered, json.loads(raw) if raw else None)


def get_text(url: str, path: str, token: str | None = None) -> tuple[int, str, bytes]:
    """A GET of a web page (not JSON): status, content type and body."""
    headers = {"Authorization": f"token {token}"} if token else {}
    req = urllib.request.Request(f"{url}{path}", None, headers)
    try:
        with urllib.request.urlopen(req, timeout=10) as resp:
            return resp.status, resp.headers.get("Content-Type", ""), resp.read()
    except urllib.error.HTTPError as err:
        return err.code, err.headers.get("Content-Type", ""), err.read()


def pygithub(url: str, token: str, **kwargs: Any) -> github.Github:
    """A PyGithub client on the hub, without its retries (tests want to see each answer) and
    without its pauses between writes (the hub has no secondary limit unless told to)."""
    pauses = {"seconds_between_requests": None, "seconds_between_writes": None}
    return github.Github(
        base_url=url, auth=github.Auth.Token(token), retry=None, **{**pauses, **kwargs}
    )


def git_url(url: str, full: str, token: str | None = None) -> str:
    """The hub's clone URL of ``owner/name``, with the token as the Basic password (any
    user name does, as on GitHub) when one is given."""
    scheme, rest = url.split("://", 1)
    auth = f"x-access-token:{token}@" if token else ""
    return f"{scheme}://{auth}{rest}/{full}.git"


def git(
    *args: str, cwd: Path | None = None, check: bool = True
) -> subprocess.CompletedProcess[str]:
    """Real git, with a fixed identity and no prompts or user configuration."""
    env = {
        **os.environ, "GIT_TERMINAL_PROMPT": "0", "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_CONFIG_GLOBAL": os.devnull, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t.invalid",
        "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@t.invalid",
    }  # fmt: skip
    done = subprocess.run(
        ["git", *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=60
    )
    if check and done.returncode != 0:
        raise AssertionError(f"git {' '.join(args[:2])} failed: {done.stderr}")
    return done


def push_commit(url: str, token: str, full: str, work: Path, *, branch: str = "main") -> str:
    """Commit a file in a new clone under ``work`` and push it to the hub's ``owner/name``
    on ``branch``; the new commit's sha (a real object the refs API then accepts)."""
    work.mkdir(parents=True, exist_ok=True)
    clone = work / f"clone-{next(_clones)}"
    git("init", "-q", "-b", branch, str(clone))
    (clone / "README").write_text(f"{full} {clone.name}\n")
    git("add", "README", cwd=clone)
    git("commit", "-q", "-m", "a real commit", cwd=clone)
    git("push", "-q", git_url(url, full, token), f"HEAD:refs/heads/{branch}", cwd=clone)
    return git("rev-parse", "HEAD", cwd=clone).stdout.strip()


_clones = itertools.count(1)
