"""Attacks on "a dead worker's claim is not kept alive by her", against a real hub:
mallory (push access, in no row of the roster) edits a dead worker's claim comment, and
the controller reads the comment's edit history (GraphQL's ``userContentEdits``, the
versions a hundred a page, back to the worker's newest) to tell her edits from the
worker's beats. Each test asserts what relay promises."""

from __future__ import annotations

from pathlib import Path

import pytest
from test_relay_claim_attacks_three import her_edits_of_a_dead_claim
from worlds import World


def test_a_hundred_edits_of_hers_never_make_her_edits_beats_again(
    world: World, job: int, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """The worker claims a TASK and its machine goes off mid-step (the pass killed). She
    puts the same signed claim text back into its comment a hundred times in a row (the
    newest hundred versions GraphQL lists are then all hers), then once each second. The
    controller's pass reads the comment's history from the hub, back a page past her
    hundred to the worker's versions: the claim lapsed when its text said, before nearly
    all of her edits, and the baton is back with the controller ("looks gone").
    (Heartbeats every second, no reclaim grace.)"""
    her_edits_of_a_dead_claim(world, job, monkeypatch, tmp_path, burst=100)
