"""A token route counts only if it would give a token now: a `gh` that is installed but
logged out (or logged in to another host only) is no route, and `relay join` and `relay
doctor` agree about it. A stand-in `gh` on PATH plays each state, as the real one answers
`gh auth token --hostname HOST`."""

from __future__ import annotations

import os
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from worlds import WORKER, World, envelope_of

LOGGED_OUT = (
    "echo 'You are not logged into any GitHub hosts. To log in, run: gh auth login' >&2\nexit 1\n"
)


def logged_in(host: str, token: str) -> str:
    """A gh that has a token for ``host`` only, as `gh auth token --hostname HOST` answers."""
    return (
        f'if [ "$*" = "auth token --hostname {host}" ]; then echo {token}; exit 0; fi\n'
        f"echo 'no oauth token found for the host' >&2\nexit 1\n"
    )


def gh_on_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, script: str) -> None:
    """Put a `gh` stand-in first on PATH (join records this PATH in the watcher's entry)."""
    bin_dir = tmp_path / "gh-bin"
    bin_dir.mkdir(exist_ok=True)
    gh = bin_dir / "gh"
    gh.write_text("#!/bin/sh\n" + script)
    gh.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")


def join_and_doctor(world: World) -> tuple[str, dict[str, str], dict[str, str]]:
    """The worker joins (again: join says each time how scheduled passes find their token;
    its token only in this shell, nothing saved); what join said of the scheduled passes'
    token, and doctor's two token checks (status, detail)."""
    w = world.worker
    said = w.ok("join", "--node", WORKER, "--scheduler", "cron")
    done = w.run("doctor", "--json")
    checks = envelope_of(done.stdout)["data"]["checks"]
    named = {c["name"]: c for c in checks if c["name"].startswith("token")}
    return (
        said,
        {name: c["status"] for name, c in named.items()},
        {name: c["detail"] for name, c in named.items()},
    )


def test_gh_is_a_route_only_when_it_has_a_token_for_the_nodes_host(
    world: World, real_crontab: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """One world, three states of gh, one after the other (join and doctor each time)."""
    world.open_job()  # a job binds the worker: doctor checks its watcher's token
    host = urlsplit(world.hub.url).hostname or ""
    for state, script in (
        ("logged out", LOGGED_OUT),
        ("logged in to another host", logged_in("github.com", "gho_elsewhere")),
    ):
        gh_on_path(tmp_path, monkeypatch, script)
        said, status, detail = join_and_doctor(world)
        assert "a scheduled pass will find no token: run `relay join --save-token`" in said, state
        assert f"gh auth login --hostname {host}" in said, state
        assert "ask `gh auth token`" not in said, state
        assert status == {"token for scheduled passes": "fail", "token": "fail"}, (state, detail)
        assert "will find no token" in detail["token for scheduled passes"], state

    gh_on_path(tmp_path, monkeypatch, logged_in(host, world.worker.token))
    said, status, detail = join_and_doctor(world)
    assert "scheduled passes ask `gh auth token` for their token" in said
    assert status == {"token for scheduled passes": "ok", "token": "ok"}, detail
    assert "from gh auth token works" in detail["token"]


def test_gh_answering_from_this_shells_variables_is_no_route_for_a_scheduled_pass(
    world: World, real_crontab: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """gh also answers from GH_ENTERPRISE_TOKEN, GITHUB_ENTERPRISE_TOKEN and GH_CONFIG_DIR;
    a scheduled pass has none of this shell's variables, so doctor said OK for a token the
    pass then did not find."""
    world.open_job()
    host = urlsplit(world.hub.url).hostname or ""
    for name in ("GH_ENTERPRISE_TOKEN", "GITHUB_ENTERPRISE_TOKEN", "GH_CONFIG_DIR"):
        # a gh that has a token for the host only while the variable is set
        gh_on_path(
            tmp_path,
            monkeypatch,
            f'if [ -n "${name}" ] && [ "$*" = "auth token --hostname {host}" ]; then'
            f" echo {world.worker.token}; exit 0; fi\n{LOGGED_OUT}",
        )
        monkeypatch.setenv(name, world.worker.token if "TOKEN" in name else str(tmp_path))
        said, status, detail = join_and_doctor(world)
        assert "a scheduled pass will find no token" in said, (name, said)
        assert status["token for scheduled passes"] == "fail", (name, detail)
        monkeypatch.delenv(name)
