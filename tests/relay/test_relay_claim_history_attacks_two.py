"""Attacks on "an honest TASK is never stalled by her", against a real hub: mallory (push
access, in no row of the roster) and a worker that passes on events alone with no local
records (an Actions node with no schedule), whose pass waits a bare claim ref out. Each
test asserts what relay promises."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from test_relay_run_twice_attacks import short_grace
from test_relay_seal_breaks import forget
from test_relay_trust import appends, mallory, runs
from worlds import STRANGER, World


def test_her_ref_deleted_and_made_again_never_ends_a_settling_pass(
    world: World, job: int, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """She makes the claim ref as the TASK appears. The worker passes once (on events
    alone, no records) and waits her ref out, reading the issue every few seconds. She
    deletes her ref and makes it again a second later, over and over: a read that falls in
    the gap finds no ref, so the pass claims the TASK the plain way, and by the time it
    creates the ref (after pulling its clone) hers is back. The creation fails as if
    another runner had claimed first: the pass reads the issue again a step on, finds her
    ref bare, and waits it out as any bare ref, then takes the task over. (Here one gap,
    landed on the pass's second read; the grace cut to four seconds, the settle to one.)"""
    from relay.edges.github.client import GitHubClient

    mallory(world, monkeypatch)
    short_grace(monkeypatch, grace=4)
    marker = tmp_path / "RAN"
    world.controller.call("task", str(job), "--step", appends(marker))
    ref = f"refs/relay/claims/{job}/1"
    made = {"ref": ref, "sha": world.remote_head()}
    world.api("/git/refs", "POST", made, login=STRANGER)
    forget(world)
    get_ref, create_ref = GitHubClient.get_ref, GitHubClient.create_ref
    reads: list[str] = []

    async def read(self: GitHubClient, name: str) -> Any:
        if name == ref:
            reads.append(name)
            if len(reads) == 2:  # her gap: the ref deleted just before this read
                world.api(f"/git/{ref}", "DELETE", login=STRANGER)
        return await get_ref(self, name)

    async def create(self: GitHubClient, name: str, sha: str) -> bool:
        if name == ref and len(reads) >= 2:  # ... and made again a second later
            world.api("/git/refs", "POST", made, login=STRANGER)
        return await create_ref(self, name, sha)

    monkeypatch.setattr(GitHubClient, "get_ref", read)
    monkeypatch.setattr(GitHubClient, "create_ref", create)
    said = world.worker.call("watch", "--once", "--verbose")
    assert len(reads) >= 2, said
    assert runs(marker) == 1, said + "\n".join(world.heads(job))
