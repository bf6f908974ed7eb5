"""Faults on demand, so the reliability work can be tested against the hub.

A spec is comma-separated ``key=value`` (see the package docstring): shares of 500, 502,
503, 429, ``secondary`` (403 naming the secondary rate limit), ``drop`` (connection closed
unanswered) and ``slow`` (delayed by ``latency`` seconds) strike before the handler;
``drop_after`` and ``502_after`` strike after it, once its write has committed (GitHub's
"it was done but the answer was lost"); plus ``seed``, ``retry_after`` and
``limit``, and ``on=METHOD:TEXT`` (or ``on=TEXT``) to fault only the requests of that
method whose path contains TEXT — e.g. ``on=POST:/git/refs``, the claim. Each request
draws one number from a seeded generator, in arrival order, so a
sequential client sees the same faults on every run.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from enum import Enum

from relay.errors import LocalUsageError


class Fault(Enum):
    """What the hub does instead of (or before) answering; values are spec keys."""

    E500 = "500"
    E502 = "502"
    E503 = "503"
    E429 = "429"
    SECONDARY = "secondary"
    DROP = "drop"
    SLOW = "slow"
    DROP_AFTER = "drop_after"
    E502_AFTER = "502_after"


AFTER_FAULTS = frozenset({Fault.DROP_AFTER, Fault.E502_AFTER})
"""Faults that strike after the handler ran (and its write committed): the client sees a
lost connection or a 502 although the comment, the label or the claimed ref now exists."""


NUMBERS = ("seed", "latency", "retry_after", "limit")
FAULT_KEYS = tuple(f.value for f in Fault)


def _on(raw: str) -> tuple[str, str]:
    """``on=POST:/git/refs`` -> ("POST", "/git/refs"); ``on=/labels`` -> ("", "/labels")."""
    method, sep, text = raw.partition(":")
    if sep and method.isalpha() and method.isupper():
        return method, text
    return "", raw


def _number(part: str) -> tuple[str, float]:
    key, sep, raw = part.partition("=")
    try:
        value = float(raw)
    except ValueError:
        value = -1.0
    if not sep or value < 0 or key not in NUMBERS + FAULT_KEYS:
        keys = ", ".join(FAULT_KEYS + NUMBERS)
        raise LocalUsageError(f"bad fault {part!r}", hint=f"use key=value with keys {keys}")
    return key, value


@dataclass(frozen=True)
class FaultSpec:
    """A parsed ``--faults`` spec; the empty spec injects nothing."""

    shares: dict[Fault, float] = field(default_factory=dict)
    seed: int = 0
    latency: float = 0.0
    retry_after: int = 1
    limit: int | None = None
    on: tuple[str, str] = ("", "")  # (method, path part): fault only these requests
    text: str = ""

    @classmethod
    def parse(cls, text: str) -> FaultSpec:
        """Parse a spec; raises LocalUsageError naming the bad part."""
        shares: dict[Fault, float] = {}
        numbers: dict[str, float] = {}
        on = ("", "")
        for part in filter(None, (p.strip() for p in text.split(","))):
            if part.startswith("on="):
                on = _on(part.removeprefix("on="))
                continue
            key, value = _number(part)
            if key in NUMBERS:
                numbers[key] = value
            else:
                shares[Fault(key)] = value
        if sum(shares.values()) > 1.0:
            raise LocalUsageError(
                "fault shares add up to more than 1", hint="lower them to sum to at most 1"
            )
        limit = numbers.get("limit")
        return cls(
            shares=shares,
            seed=int(numbers.get("seed", 0)),
            latency=numbers.get("latency", 0.0),
            retry_after=int(numbers.get("retry_after", 1)),
            limit=None if limit is None else int(limit),
            on=on,
            text=text,
        )

    def describe(self) -> dict[str, object]:
        """The spec as JSON-able data, for the admin endpoint."""
        return {
            "spec": self.text,
            "seed": self.seed,
            "latency": self.latency,
            "retry_after": self.retry_after,
            "limit": self.limit,
            "on": ":".join(filter(None, self.on)),
            "shares": {f.value: share for f, share in self.shares.items()},
        }


@dataclass
class Faults:
    """The live injector: a spec, its seeded generator and how many faults it injected."""

    spec: FaultSpec = field(default_factory=FaultSpec)
    injected: int = 0
    by_kind: dict[str, int] = field(default_factory=dict)
    _rng: random.Random = field(default_factory=random.Random)

    def __post_init__(self) -> None:
        self.set(self.spec)

    def set(self, spec: FaultSpec) -> None:
        """Replace the spec and restart its sequence from the seed."""
        self.spec, self.injected, self._rng = spec, 0, random.Random(spec.seed)
        self.by_kind = {}

    @property
    def active(self) -> bool:
        """Whether any request may be touched (cheap check for the hot path)."""
        return bool(self.spec.shares or self.spec.latency)

    def draw(self, method: str = "", path: str = "") -> Fault | None:
        """The fault for the next request (``method`` ``path``), or None."""
        spec = self.spec
        if not spec.shares or (spec.limit is not None and self.injected >= spec.limit):
            return None
        want_method, want_path = spec.on
        if (want_method and method != want_method) or want_path not in path:
            return None
        point, edge = self._rng.random(), 0.0
        for fault, share in spec.shares.items():
            edge += share
            if point < edge:
                self.injected += 1
                self.by_kind[fault.value] = self.by_kind.get(fault.value, 0) + 1
                return fault
        return None

    def delay(self, fault: Fault | None) -> float:
        """Seconds to wait before answering this request."""
        if fault is Fault.SLOW or (Fault.SLOW not in self.spec.shares and self.spec.latency):
            return self.spec.latency
        return 0.0
