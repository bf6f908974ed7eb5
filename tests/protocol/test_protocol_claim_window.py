"""How long one beat keeps a claim alive: the window the worker signs at the claim
(``alive_for``), never one that grows with every beat; a claim from an older relay, which
does not say, is read as before (its text's ``alive_until - claimed_at``)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from relay.protocol.messages import ClaimMsg, parse_message, render_message
from relay.protocol.work import RunLimits, alive_until, beat_window, claim_lapses, lease_until

T0 = datetime(2026, 12, 7, 9, 0, tzinfo=UTC)
LIMITS = RunLimits()


def claimed(*, signed_window: bool = True) -> ClaimMsg:
    """A claim of thirty steps taken at T0, as relay makes it (or an older relay did)."""
    return ClaimMsg(
        issue=7,
        node="worker",
        task=1,
        claimed_at=T0,
        lease_until=lease_until(T0, steps=30, limits=LIMITS),
        alive_until=alive_until(T0, LIMITS),
        alive_for=beat_window(LIMITS) if signed_window else None,
    )


def test_the_window_is_the_one_signed_at_the_claim_however_long_it_ran() -> None:
    """The worker beat for two hours and died; its last text says alive twenty minutes
    more. An edit by anyone ten minutes later (no history read) holds the claim one
    window from that edit, not two hours and twenty minutes."""
    claim = claimed()
    last_beat = T0 + timedelta(hours=2)
    beat = claim.model_copy(update={"alive_until": alive_until(last_beat, LIMITS)})
    edited = last_beat + timedelta(minutes=10)
    window = timedelta(seconds=beat_window(LIMITS))
    assert claim_lapses(beat, edited) == edited + window
    assert window == timedelta(minutes=20)


def test_the_signed_window_survives_the_comment_round_trip() -> None:
    """``alive_for`` is in the signed block: what a reader parses is what was signed."""
    text = render_message(claimed())
    parsed = parse_message(text, issue=7)
    assert isinstance(parsed, ClaimMsg) and parsed.alive_for == 1200


def test_an_older_relays_claim_is_read_as_before() -> None:
    """A claim with no ``alive_for`` (an older relay's) keeps the old reading: its text's
    window from its last edit."""
    claim = claimed(signed_window=False)
    last_beat = T0 + timedelta(hours=2)
    beat = claim.model_copy(update={"alive_until": alive_until(last_beat, LIMITS)})
    edited = last_beat + timedelta(minutes=10)
    grown = beat.alive_until - beat.claimed_at if beat.alive_until else None
    assert grown is not None
    assert claim_lapses(beat, edited) == min(beat.lease_until, edited + grown)
