"""Pushing from an Actions runner: the token reaches git through the environment only."""

from __future__ import annotations

import base64
import os
import subprocess

from relay.edges.git import credential_env


def test_no_token_no_settings() -> None:
    assert credential_env({}) == {}
    # GITHUB_TOKEN outside Actions is the user's business, not a push credential
    assert credential_env({"GITHUB_TOKEN": "t0ken"}) == {}


def test_actions_token_becomes_an_auth_header_git_reads() -> None:
    env = credential_env({"GITHUB_ACTIONS": "true", "GITHUB_TOKEN": "t0ken"})
    full = {**os.environ, **env}
    full.pop("GIT_CONFIG_PARAMETERS", None)
    done = subprocess.run(
        ["git", "config", "--get", "http.extraheader"],
        env=full,
        capture_output=True,
        text=True,
        check=True,
    )
    header = done.stdout.strip()
    assert header.startswith("AUTHORIZATION: basic ")
    assert base64.b64decode(header.split()[-1]).decode() == "x-access-token:t0ken"


def test_explicit_token_wins_and_existing_settings_are_kept() -> None:
    env = credential_env(
        {"RELAY_GIT_TOKEN": "mine", "GIT_CONFIG_COUNT": "1", "GITHUB_TOKEN": "other"}
    )
    assert env["GIT_CONFIG_COUNT"] == "2"
    assert env["GIT_CONFIG_KEY_1"] == "http.extraheader"
    assert base64.b64decode(env["GIT_CONFIG_VALUE_1"].split()[-1]) == b"x-access-token:mine"
    assert "GIT_CONFIG_KEY_0" not in env


def test_a_scoped_token_goes_to_its_origin_only() -> None:
    from relay.edges.git import origin_prefix

    prefix = origin_prefix("http://user@127.0.0.1:8080/octo/r.git")
    assert prefix == "http://127.0.0.1:8080/"
    assert origin_prefix("git@github.com:octo/r.git") is None
    assert origin_prefix("/srv/git/r.git") is None
    env = {**os.environ, **credential_env({}, token="t0ken", url=prefix)}
    env.pop("GIT_CONFIG_PARAMETERS", None)

    def header_for(url: str) -> str:
        argv = ["git", "config", "--get-urlmatch", "http.extraheader", url]
        return subprocess.run(argv, env=env, capture_output=True, text=True).stdout.strip()

    sent = header_for("http://127.0.0.1:8080/octo/r.git/info/refs")
    assert base64.b64decode(sent.split()[-1]) == b"x-access-token:t0ken"
    assert header_for("http://127.0.0.1:8081/octo/r.git") == ""
    assert header_for("https://elsewhere.example/octo/r.git") == ""
