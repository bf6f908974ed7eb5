"""What one pass did, in a module of its own: the idle pass (relay.watchers.quiet) reports
in the same shape as a full one without loading what a full pass needs."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from relay.node.execute import TaskReport


@dataclass
class PassReport:
    """What one pass did: lines for people, tasks run, wire counts, and its outcome."""

    node: str
    outcome: str = "idle"
    lines: list[str] = field(default_factory=list)
    tasks: list[TaskReport] = field(default_factory=list)
    requests: int = 0
    not_modified: int = 0
    writes: int = 0  # of the requests, the content-creating ones
    retries: int = 0
    lost_answers_found: int = 0
    seconds: float = 0.0
    teardown: bool = False
    started_by: str | None = None
