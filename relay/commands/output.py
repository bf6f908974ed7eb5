"""Frozen results returned by CLI verbs, rendered for people or as JSON in one place."""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Output:
    """What a verb produced: lines for people, data for `--json`, and an exit status."""

    lines: tuple[str, ...] = ()
    data: dict[str, Any] = field(default_factory=dict)
    exit_status: int = 0


def render(result: Output, *, json_output: bool) -> None:
    """Print a result: its data as one JSON document, or its lines for a person.

    Under ``pythonw`` (a scheduled pass on Windows) there is no stdout at all.
    """
    if sys.stdout is None:
        return
    if json_output:
        json.dump(result.data, sys.stdout, indent=2, sort_keys=True, default=str)
        sys.stdout.write("\n")
    else:
        for line in result.lines:
            print(line)
    sys.stdout.flush()
