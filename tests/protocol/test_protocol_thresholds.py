"""Time rules are thresholds: the property the idle pass relies on.

``now`` enters decide() only as "before or after a moment" (a lease lapses, a grace ends),
each changing the decision once. So a quiet decision that is the same a horizon later is
the same at every moment in between, and relay.watchers.quiet may stand an idle pass for
it until then. Checked here on the protocol's waits, at every half minute of the horizon.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timedelta

import pytest
from protocol_world import CONTROLLER, WORKER, World
from test_protocol_decide import job, task

from relay.protocol import decide
from relay.protocol.decide import RECLAIM_GRACE
from relay.protocol.work import BARE_GRACE, DEFAULT_HEARTBEAT, LEASE, MISSED_BEATS
from relay.watchers.quiet import HORIZONS, holds_until

STEP = timedelta(seconds=30)


def lapsed_claim(world: World) -> str:
    """The worker claimed and went away: the controller waits, then takes the baton back."""
    task(world, job(world))
    world.pass_of(WORKER, crash_at="run")
    return CONTROLLER


def remote_claim(world: World) -> str:
    """Another clone of the worker holds the claim: the worker waits out its lease."""
    task(world, job(world))
    world.pass_of(WORKER, crash_at="run")
    world.local.clear()
    return WORKER


def bare_claim(world: World) -> str:
    """A claim ref with no claim comment, already seen: the worker waits out the grace."""
    task(world, job(world))
    world.pass_of(WORKER, crash_at="record")
    world.local.clear()
    world.pass_of(WORKER)  # the first sighting is recorded
    return WORKER


LAPSE = MISSED_BEATS * timedelta(seconds=DEFAULT_HEARTBEAT)
SCENARIOS: dict[str, tuple[Callable[[World], str], timedelta]] = {
    "lapsed claim": (lapsed_claim, LAPSE + RECLAIM_GRACE),
    "remote claim": (remote_claim, LEASE),
    "bare claim": (bare_claim, BARE_GRACE),
}


def held(world: World, node: str, now: datetime) -> bool:
    """Check the property at ``now``; whether the horizon found was cut short by a change."""
    snapshot = world.snapshot(node)
    actions = decide(snapshot, node, now)
    until = holds_until(lambda later: decide(snapshot, node, later) == actions, now)
    if until is None:
        return True
    assert until - now in {timedelta(seconds=s) for s in HORIZONS}
    moment = now
    while moment <= until:
        assert decide(snapshot, node, moment) == actions, f"changed at {moment - now}"
        moment += STEP
    return until - now < timedelta(seconds=max(HORIZONS))


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_a_quiet_decision_the_same_a_horizon_on_is_the_same_all_the_while(name: str) -> None:
    setup, span = SCENARIOS[name]
    cut_short = False
    for offset in range(0, int(span.total_seconds()) + 900, 110):  # up to and past the moment
        world = World()
        node = setup(world)
        cut_short |= held(world, node, world.now + timedelta(seconds=offset))
    assert cut_short, f"{name}: no horizon met the change: the test tested nothing"
