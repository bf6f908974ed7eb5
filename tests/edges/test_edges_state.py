"""Node-local state in a real clone's .git/relay: versioned files, claims, the pass lock."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from edges_helpers import Remote, git

from relay.edges.local import (
    PASS_LOG_KEEP,
    SCHEMA_VERSION,
    NodeConfig,
    NodeState,
    PassRecord,
    clone_root,
    git_dir,
)
from relay.errors import ConfigError

NOW = datetime(2026, 11, 30, 9, 0, tzinfo=UTC)


def test_state_lives_in_the_clones_git_dir(remote: Remote) -> None:
    nested = remote.a / "docs" / "deep"
    nested.mkdir(parents=True)
    state = NodeState.for_clone(nested)
    assert state.root == remote.a / ".git" / "relay"
    assert clone_root(nested) == remote.a


def test_worktree_git_file_is_followed(remote: Remote, tmp_path: Path) -> None:
    tree = tmp_path / "tree"
    git(remote.a, "worktree", "add", "-q", str(tree), "-b", "side")
    found = git_dir(tree)
    assert found.is_dir() and found != tree / ".git"
    assert (found / "HEAD").exists()


def test_outside_a_clone_is_a_config_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="not inside a git clone"):
        NodeState.for_clone(tmp_path)


def test_config_round_trips_with_a_schema_version(remote: Remote) -> None:
    state = NodeState.for_clone(remote.a)
    assert state.load_config() is None
    config = NodeConfig(node="mac-studio", repo="o/r", api_url="http://127.0.0.1:1")
    state.save_config(config)
    assert state.load_config() == config
    doc = json.loads(state.config_path.read_text())
    assert doc["schema"] == SCHEMA_VERSION
    assert not list(state.root.glob(".config.json.*")), "temp files must not be left behind"


def test_newer_or_broken_files_are_refused_with_a_fix(remote: Remote) -> None:
    state = NodeState.for_clone(remote.a)
    state.root.mkdir(parents=True, exist_ok=True)
    state.config_path.write_text(json.dumps({"schema": SCHEMA_VERSION + 1, "config": {}}))
    with pytest.raises(ConfigError, match="newer relay"):
        state.load_config()
    state.config_path.write_text("{not json")
    with pytest.raises(ConfigError, match=r"unreadable.*delete it"):
        state.load_config()
    state.config_path.write_text(json.dumps({"schema": 1, "config": {"repo": "o/r"}}))
    with pytest.raises(ConfigError, match="invalid at 'node'"):
        state.load_config()


def test_claims_are_recorded_once_and_finished(remote: Remote) -> None:
    state = NodeState.for_clone(remote.a)
    first = state.record_claim(issue=7, task=1, node="win", now=NOW)
    again = state.record_claim(issue=7, task=1, node="win", now=NOW + timedelta(hours=1))
    assert again == first
    state.record_claim(issue=8, task=2, node="win", now=NOW)
    assert state.claim(issue=7, task=1) is not None
    assert state.claim(issue=7, task=1).outcome is None  # type: ignore[union-attr]
    done = state.finish_claim(issue=7, task=1, outcome="done", now=NOW + timedelta(minutes=5))
    assert done.outcome == "done" and done.finished_at == NOW + timedelta(minutes=5)
    reread = NodeState.for_clone(remote.a).claims()
    assert [(c.issue, c.task, c.outcome) for c in reread] == [(7, 1, "done"), (8, 2, None)]
    with pytest.raises(ConfigError, match="no local claim"):
        state.finish_claim(issue=9, task=1, outcome="done", now=NOW)


def test_prune_keeps_open_jobs_and_unfinished_claims(remote: Remote) -> None:
    state = NodeState.for_clone(remote.a)
    for issue in (1, 2, 3):
        state.record_claim(issue=issue, task=1, node="n", now=NOW)
    state.finish_claim(issue=1, task=1, outcome="done", now=NOW)
    state.finish_claim(issue=2, task=1, outcome="failed", now=NOW)
    assert state.prune_claims(open_issues={2}) == 1
    assert [c.issue for c in state.claims()] == [2, 3]


def test_notified_is_idempotent(remote: Remote) -> None:
    state = NodeState.for_clone(remote.a)
    assert state.mark_notified(issue=4, task=2, now=NOW) is True
    assert state.mark_notified(issue=4, task=2, now=NOW) is False
    assert state.mark_notified(issue=4, task=3, now=NOW) is True
    assert NodeState.for_clone(remote.a).notified() == {(4, 2), (4, 3)}


def test_pass_log_is_bounded_and_the_last_line_is_the_heartbeat(remote: Remote) -> None:
    state = NodeState.for_clone(remote.a)
    assert state.heartbeat() is None
    for i in range(PASS_LOG_KEEP + 15):
        state.log_pass(
            PassRecord(at=NOW + timedelta(seconds=i), node="n", outcome="idle", requests=i)
        )
    passes = state.passes()
    assert len(passes) == PASS_LOG_KEEP
    beat = state.heartbeat()
    assert beat is not None and beat.requests == PASS_LOG_KEEP + 14
    with state.pass_log_path.open("a") as log:
        log.write("garbage line\n")
    assert len(state.passes()) == PASS_LOG_KEEP


def test_token_file_is_private(remote: Remote) -> None:
    state = NodeState.for_clone(remote.a)
    state.save_token("  tok-123 \n")
    assert state.token_path.read_text() == "tok-123\n"
    assert state.token_path.stat().st_mode & 0o777 == 0o600


HOLDER = textwrap.dedent(
    """
    import sys, time
    from pathlib import Path
    from relay.edges.local import NodeState
    lock = NodeState(Path(sys.argv[1])).lock("win-desktop")
    assert lock.acquire()
    print("held", flush=True)
    sys.stdin.readline()
    """
)


def test_pass_lock_refuses_a_second_pass_from_another_process(remote: Remote) -> None:
    state = NodeState.for_clone(remote.a)
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(state.root)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        with state.pass_lock("win-desktop") as lock:
            assert not lock.held
            assert "another relay pass is running for node win-desktop" in lock.busy_message(
                "win-desktop"
            )
        with state.pass_lock("mac-studio") as other:
            assert other.held, "another node's lock is independent"
    finally:
        assert holder.stdin is not None
        holder.stdin.write("\n")
        holder.stdin.close()
        holder.wait(timeout=10)
    with state.pass_lock("win-desktop") as lock:
        assert lock.held, "the lock is free once the holder exits"
    assert not lock.held
