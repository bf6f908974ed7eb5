"""`relay hub` and `relay hub token` refuse bad arguments with one line that says what to
do, and exit 2 — never a traceback."""

from __future__ import annotations

import json
import subprocess
import sys
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest


def relay(*args: str) -> subprocess.CompletedProcess[str]:
    argv = [sys.executable, "-m", "relay.cli", *args]
    return subprocess.run(argv, capture_output=True, text=True, timeout=60)


def refused(out: subprocess.CompletedProcess[str], *words: str) -> None:
    """Exit 2, no traceback, and the last line of stderr names what to change."""
    assert out.returncode == 2, out.stderr
    assert "Traceback" not in out.stderr and out.stdout == ""
    last = out.stderr.strip().splitlines()[-1]
    assert all(word in last for word in words), last


@pytest.fixture
def a_file(tmp_path: Path) -> Path:
    path = tmp_path / "not-a-dir"
    path.write_text("x")
    return path


def test_serving_from_a_file_is_refused(a_file: Path) -> None:
    refused(relay("hub", "--port", "0", "--data", str(a_file)), "--data", "directory")
    assert a_file.read_text() == "x"


def test_minting_into_a_file_is_refused(a_file: Path) -> None:
    refused(relay("hub", "token", "alice", "--data", str(a_file)), "--data", "directory")


@pytest.mark.parametrize("port", ["99999", "-1", "http"])
def test_a_port_out_of_range_is_refused_by_the_parser(tmp_path: Path, port: str) -> None:
    refused(relay("hub", "--port", port, "--data", str(tmp_path)), "--port", "0..65535")


def test_an_address_not_of_this_machine_names_host(tmp_path: Path) -> None:
    out = relay("hub", "--host", "192.0.2.1", "--port", "0", "--data", str(tmp_path))
    refused(out, "--host")
    assert "--port" not in out.stderr


def test_a_taken_port_names_port(hub: Any, tmp_path: Path) -> None:
    port = str(hub.url.rsplit(":", 1)[1])
    refused(relay("hub", "--port", port, "--data", str(tmp_path)), "--port")


@pytest.mark.parametrize("login", ["a b", "-lead", "trail-", "a--b", "x" * 40, ""])
def test_a_login_github_would_not_allow_is_refused(tmp_path: Path, login: str) -> None:
    refused(relay("hub", "token", "--data", str(tmp_path), "--", login), "bad login")
    assert not (tmp_path / "hub.sqlite3").exists()


def test_help_documents_the_late_faults_and_the_budget() -> None:
    out = relay("hub", "--help-all")
    assert out.returncode == 0
    for words in ("drop_after=P", "502_after=P", "--rate-limit", "committed"):
        assert words in out.stdout


def test_a_data_directory_that_cannot_hold_the_hub_is_refused(tmp_path: Path) -> None:
    not_a_db = tmp_path / "d1"
    not_a_db.mkdir()
    (not_a_db / "hub.sqlite3").write_text("x" * 200)
    clash = tmp_path / "d2" / "hub.sqlite3"
    clash.mkdir(parents=True)
    for data in (not_a_db, clash.parent):
        refused(relay("hub", "token", "alice", "--data", str(data)), "--data")
        refused(relay("hub", "--port", "0", "--data", str(data)), "--data")
    assert (not_a_db / "hub.sqlite3").read_text() == "x" * 200


def test_hub_json_in_the_foreground_says_its_url_as_one_json_line(tmp_path: Path) -> None:
    argv = [sys.executable, "-m", "relay.cli", "hub", "--json", "--port", "0"]
    proc = subprocess.Popen(
        [*argv, "--data", str(tmp_path / "data")], stdout=subprocess.PIPE, text=True
    )
    try:
        assert proc.stdout is not None
        document = json.loads(proc.stdout.readline())
        assert document["ok"] and document["command"] == "hub", document
        url = document["data"]["url"]
        try:
            urllib.request.urlopen(f"{url}/rate_limit", timeout=10).close()
        except urllib.error.HTTPError as err:  # it answers: it serves
            assert err.code == 401, err
    finally:
        proc.terminate()
        rest, _ = proc.communicate(timeout=10)
    assert rest == "", rest  # the one line is all it printed
