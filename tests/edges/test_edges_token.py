"""Token discovery and the API base URL, with a real `gh` stand-in on PATH."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from relay.edges.github.credentials import DEFAULT_API_URL, api_base_url, find_token, gh_hostname
from relay.errors import ConfigError

HUB = "http://127.0.0.1:8787"


def fake_gh(bin_dir: Path, script: str) -> dict[str, str]:
    """Put an executable `gh` on a PATH of its own and return that environment."""
    bin_dir.mkdir(exist_ok=True)
    gh = bin_dir / "gh"
    gh.write_text("#!/bin/sh\n" + script)
    gh.chmod(0o755)
    return {"PATH": f"{bin_dir}{os.pathsep}/usr/bin{os.pathsep}/bin"}


def test_env_vars_win_in_order() -> None:
    env = {"GH_TOKEN": "ghp_third", "GITHUB_TOKEN": "b", "RELAY_TOKEN": "a", "PATH": ""}
    assert find_token(api_url=HUB, env=env).source == "RELAY_TOKEN"
    del env["RELAY_TOKEN"]
    assert find_token(api_url=HUB, env=env).value == "b"
    del env["GITHUB_TOKEN"]
    token = find_token(api_url=HUB, env=env)
    assert (token.value, token.source) == ("ghp_third", "GH_TOKEN")
    assert "ghp_third" not in repr(token), "a token never shows in a repr"


def test_gh_is_asked_for_the_apis_host(tmp_path: Path) -> None:
    env = fake_gh(tmp_path / "bin", 'echo "$*" > "$(dirname "$0")/args"; echo gho_from_gh\n')
    token = find_token(api_url=DEFAULT_API_URL, env=env)
    assert (token.value, token.source) == ("gho_from_gh", "gh auth token")
    args = (tmp_path / "bin" / "args").read_text().split()
    assert args == ["auth", "token", "--hostname", "github.com"]
    assert gh_hostname("http://127.0.0.1:8787") == "127.0.0.1"


def test_a_hanging_or_failing_gh_falls_through_to_the_file(tmp_path: Path) -> None:
    tokfile = tmp_path / "token"
    tokfile.write_text("from-file\n")
    tokfile.chmod(0o600)
    env = fake_gh(tmp_path / "bin", "exec sleep 30\n")
    token = find_token(api_url=HUB, env=env, token_file=tokfile, gh_timeout=0.3)
    assert (token.value, token.source) == ("from-file", f"token file {tokfile}")
    env = fake_gh(tmp_path / "bin", "echo 'no oauth token' >&2; exit 1\n")
    assert find_token(api_url=HUB, env=env, token_file=tokfile).value == "from-file"


def test_a_token_file_others_can_read_is_refused(tmp_path: Path) -> None:
    tokfile = tmp_path / "token"
    tokfile.write_text("secret\n")
    tokfile.chmod(0o644)
    with pytest.raises(ConfigError, match=r"readable by others \(mode 0o644\); run: chmod 600"):
        find_token(api_url=HUB, env={"PATH": ""}, token_file=tokfile)
    tokfile.chmod(stat.S_IRUSR | stat.S_IWUSR)
    tokfile.write_text("   \n")
    with pytest.raises(ConfigError, match="is empty"):
        find_token(api_url=HUB, env={"PATH": ""}, token_file=tokfile)


def test_no_token_anywhere_says_how_to_get_one(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as err:
        find_token(api_url=HUB, env={"PATH": str(tmp_path)}, token_file=tmp_path / "none")
    message = str(err.value)
    assert "\n" not in message
    assert "RELAY_TOKEN" in message and "relay hub token LOGIN" in message and HUB in message


def test_api_url_from_flag_env_or_default() -> None:
    assert api_base_url(None, {}) == DEFAULT_API_URL
    assert api_base_url(None, {"RELAY_API_URL": "http://127.0.0.1:9/"}) == "http://127.0.0.1:9"
    assert api_base_url("https://ghe.example/api/v3", {"RELAY_API_URL": "x"}) == (
        "https://ghe.example/api/v3"
    )
    with pytest.raises(ConfigError, match="not an http"):
        api_base_url("127.0.0.1:8787", {})


def test_a_credential_in_the_api_url_is_refused_without_echoing_it() -> None:
    with pytest.raises(ConfigError) as caught:
        api_base_url("http://bob:ghp_secretsecret@127.0.0.1:1")
    assert "ghp_secret" not in str(caught.value)
    assert "RELAY_TOKEN" in str(caught.value)
