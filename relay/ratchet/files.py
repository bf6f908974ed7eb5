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
        raw = self.read_bytes(name)
        if raw is None:
            return None
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            line = raw[: exc.start].count(b"\n") + 1
            raise SpineFileError(name, line, f"not UTF-8 text ({exc.reason})") from None
        return text.replace("\r\n", "\n").replace("\r", "\n")

    def read_bytes(self, name: str) -> bytes | None:
        """A spine file's bytes as they are, None when absent."""
        try:
            return (self.root / name).read_bytes()
        except FileNotFoundError:
            return None

    def extend(self, name: str, old: str, new: str) -> None:
        """Write ``new``, which extends ``old`` (the file's text): the file's own bytes are
        kept as they are, and what is added takes the file's line ends."""
        raw = self.read_bytes(name)
        if raw is None or not new.startswith(old):
            self.write(name, new)
            return
        added = new[len(old) :]
        if b"\r\n" in raw:
            added = added.replace("\n", "\r\n")
        path = self.root / name
        write_atomic(path, raw + added.encode("utf-8"))

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
