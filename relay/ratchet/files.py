"""The spine on disk: each file of ``docs/loop/`` read into its model and written back
atomically. A missing file is a one-line error saying to run `relay loop init`."""

from __future__ import annotations

from pathlib import Path

from relay.edges.files import write_atomic
from relay.errors import ConfigError, SpineFileError
from relay.loop.contract import CONTRACT_NAME, Contract, parse_contract, section_of, split_protected
from relay.loop.goals import BOARD_NAME, GOALS_NAME, Board, GoalsFile, parse_board, parse_goals
from relay.loop.records import (
    BASELINE_NAME,
    FAILURES_NAME,
    HANDOVER_NAME,
    LOG_NAME,
    RULES_NAME,
    Baseline,
    Failure,
    Iteration,
    Rule,
    parse_baseline,
    parse_failures,
    parse_log,
    parse_rules,
)

INIT_HINT = "run `relay loop init` first"


class Spine:
    """The files of ``docs/loop/`` in one clone."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def read(self, name: str) -> str | None:
        """A spine file's text, None when absent."""
        path = self.root / name
        try:
            return path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return None
        except UnicodeDecodeError as exc:
            raise SpineFileError(name, 1, f"not UTF-8 text ({exc.reason})") from None

    def need(self, name: str) -> str:
        """A spine file's text; ConfigError when it is missing."""
        text = self.read(name)
        if text is None:
            raise ConfigError(f"{name} is missing", hint=INIT_HINT)
        return text

    def write(self, name: str, text: str) -> None:
        """Write a spine file atomically."""
        path = self.root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(path, text.encode("utf-8"))

    def contract(self) -> Contract:
        return parse_contract(self.need(CONTRACT_NAME))

    def goals(self) -> GoalsFile:
        return parse_goals(self.need(GOALS_NAME))

    def board(self) -> Board:
        return parse_board(self.need(BOARD_NAME))

    def failures(self) -> tuple[str, tuple[Failure, ...]]:
        return parse_failures(self.need(FAILURES_NAME))

    def rules(self) -> tuple[str, tuple[Rule, ...]]:
        return parse_rules(self.need(RULES_NAME))

    def log(self) -> tuple[str, tuple[Iteration, ...]]:
        return parse_log(self.need(LOG_NAME))

    def baseline(self) -> Baseline:
        return parse_baseline(self.read(BASELINE_NAME) or "")

    def handover(self) -> str:
        return self.read(HANDOVER_NAME) or ""

    def exists(self, contract: Contract) -> dict[str, bool]:
        """Which of the contract's protected entries exist (a ``#section`` needs its file
        and the section in it)."""
        found = {}
        for entry in contract.protected:
            path, heading = split_protected(entry)
            present = (self.root / path).exists()
            if present and heading is not None:
                present = section_of(self.read(path), heading) is not None
            found[entry] = present
        return found
