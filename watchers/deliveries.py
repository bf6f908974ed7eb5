"""What the webhook receiver remembers of its deliveries: the recent delivery ids (a
redelivery keeps its id and runs once), and the passes under way per issue, into which
further deliveries for that issue are folded (a delivery id is not signed, so a replayed
delivery is told apart by its issue, not by its id)."""

from __future__ import annotations

import asyncio
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from relay.watchers.webhook import WebhookEvent

SEEN_DELIVERIES = 4096
DEFAULT_ISSUE_INTERVAL = 0.5  # seconds between two passes started for one issue

OnEvent = Callable[["WebhookEvent"], Awaitable[None]]
Spawn = Callable[[Awaitable[None]], None]


class DeliveryLog:
    """The most recent delivery ids, bounded, oldest forgotten first."""

    def __init__(self, capacity: int = SEEN_DELIVERIES) -> None:
        self._ids: OrderedDict[str, None] = OrderedDict()
        self._capacity = capacity

    def __len__(self) -> int:
        return len(self._ids)

    def first_time(self, delivery_id: str) -> bool:
        """Record the id; True unless it was already among the recent ones."""
        if delivery_id in self._ids:
            self._ids.move_to_end(delivery_id)
            return False
        self._ids[delivery_id] = None
        if len(self._ids) > self._capacity:
            self._ids.popitem(last=False)
        return True

    def forget(self, delivery_id: str) -> None:
        """Let a later redelivery of this id run again (its pass failed)."""
        self._ids.pop(delivery_id, None)


class Coalescer:
    """One pass per issue at a time, at most one started per ``interval``: a delivery for
    an issue whose pass runs or waits is folded into one follow-up pass (the newest
    delivery's), so replayed deliveries cost one pass per interval, not one each."""

    def __init__(
        self,
        run: OnEvent,
        spawn: Spawn,
        *,
        interval: float = DEFAULT_ISSUE_INTERVAL,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.run, self.spawn, self.interval, self.clock = run, spawn, interval, clock
        self._active: set[int | None] = set()
        self._waiting: dict[int | None, WebhookEvent] = {}
        self._started: dict[int | None, float] = {}

    def submit(self, event: WebhookEvent) -> bool:
        """Run ``event``'s pass, or fold it into the one under way; False: folded."""
        key = event.issue_number
        if key in self._active:
            self._waiting[key] = event
            return False
        self._active.add(key)
        self.spawn(self._work(key, event))
        return True

    async def _work(self, key: int | None, event: WebhookEvent) -> None:
        try:
            while True:
                wait = self._started.get(key, float("-inf")) + self.interval - self.clock()
                if wait > 0:
                    await asyncio.sleep(wait)
                event = self._waiting.pop(key, event)  # the newest: one pass for them all
                self._started[key] = self.clock()
                self._forget_old()
                await self.run(event)
                if key not in self._waiting:
                    return
                event = self._waiting.pop(key)
        finally:
            self._active.discard(key)

    def _forget_old(self) -> None:
        """Drop start times older than the interval (they no longer hold a pass back)."""
        if len(self._started) > 1024:
            now = self.clock()
            for key in [k for k, t in self._started.items() if now - t >= self.interval]:
                del self._started[key]
