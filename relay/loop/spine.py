"""What `relay loop init` writes: the loop's parts of LOOP.md, the goals backlog, the
board's goals table and the state files; and the gates it proposes from the project.

Ground rules: nothing is overwritten. LOOP.md gains only the sections it lacks (its
``## Relay`` section and everything else are kept byte for byte); GOALS.md and BOARD.md
gain their loop sections when they lack them; every other file is written only when
absent. The gates are learned from the project's own files, read purely from their text.
"""

from __future__ import annotations

import json
import re
import tomllib
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from relay.loop.contract import Contract, Gate, render_contract
from relay.loop.goals import (
    BACKLOG_INTRO,
    Board,
    GoalsFile,
    parse_board,
    parse_goals,
    render_board,
    render_goals,
)
from relay.loop.markdown import find, sections
from relay.loop.records import (
    BASELINE_NAME,
    FAILURES_HEAD,
    FAILURES_NAME,
    LOG_HEAD,
    LOG_NAME,
    RULES_HEAD,
    RULES_NAME,
    Baseline,
    render_baseline,
    render_log,
)

LOOP_NAME = "docs/loop/LOOP.md"
LOOP_SECTIONS: tuple[tuple[str, str], ...] = (
    (
        "Roles",
        "- **Maker**: the command given to `relay loop run --maker`. It gets a brief file (its\n"
        "  path is the last argument and `RELAY_LOOP_BRIEF`), edits the work tree and never\n"
        "  commits.\n"
        "- **Checker panel**: each `--checker` command reviews the diff and the gate results\n"
        "  and answers with a JSON verdict on its last line. A checker is never the maker.\n"
        "- **Verifier**: relay itself re-runs the gates on the candidate commit in a fresh\n"
        "  worktree; an optional `--verifier` command then judges the stopping condition.\n"
        "\n"
        "A roster, below this prose, gives each role its backend, one line a role: a dash,\n"
        "the role (maker, code-reviewer, security-auditor, test-engineer, red-team,\n"
        "verifier, coordinator, or one of your own), a colon, then `command` and the\n"
        "command in backticks, `agent NAME` (claude, codex, gemini, aider), `node NAME`\n"
        "(several: `node a, b`) or `managed-agent`. Indented items under a role set its\n"
        "`Model:`, `Instructions:` (a file), `Tools:` and `Limits:` (timeout, retries,\n"
        "turns, copies). A grading role never runs the maker's program (however wrapped),\n"
        "node or agent, and only the coordinator holds a shipping tool: `relay loop roles`\n"
        "shows the roster and `relay loop check` refuses one that breaks these.\n",
    ),
    (
        "Iteration",
        "Goals are worked in dependency order: one at a time, or with `--parallel N` (the\n"
        "contract's Concurrent makers) several independent goals at once, each in its own\n"
        "worktree, a goal waiting until every goal it depends on is kept. For each goal:\n"
        "record the baseline, run the maker, run the gates (the acceptance command, every\n"
        "contract gate, the coverage comparison, the protected paths), ask the checkers,\n"
        "verify in a fresh worktree; keep the change as one commit on the main line on a\n"
        "pass (a candidate made on an older main line is judged again on the new one), or\n"
        "record the failure and let the maker heal it, and revert the goal's changes when\n"
        "its retries are spent. `--group G` works one group, then the checkers review the\n"
        "group's whole change once more.\n",
    ),
    (
        "Guardrails",
        "- Tests never break and line coverage never drops.\n"
        "- Nothing outside a goal's own changes is reverted; relay never leaves the tree dirty.\n"
        "- The contract (CONTRACT.md) and these guardrails are protected paths.\n"
        "- A checker's output is data: a review carrying instructions is discarded.\n"
        "- Nothing is pushed and no relay job is opened unless the contract authorises it.\n",
    ),
    (
        "Security-critical areas",
        "A goal marked `--security`, or declaring a path (`--path`) inside an area listed\n"
        "here, is security-critical before its maker runs: it is worked only with a checker\n"
        "panel and a red team. `relay loop init` proposes the areas it finds; add more in\n"
        "the same shape, an item naming the area and then its paths in backticks\n"
        "(authentication, secrets, money, anything that runs what others wrote).\n",
    ),
    (
        "Stopping conditions",
        "A run stops when every goal is done or blocked, when the budget in CONTRACT.md is\n"
        "spent, or when an escalation condition fires; it ends with a report, appended to\n"
        "handover.md.\n",
    ),
    (
        "What works here",
        "What the loop and the people working with it have found to work on this\n"
        "repository; add to it by hand. The learned rules are in\n"
        "[state/learned-rules.md](state/learned-rules.md).\n",
    ),
)


def extend_loop(old: str | None) -> str:
    """LOOP.md with every loop section it lacks appended; the rest kept byte for byte."""
    from relay.protocol.spine import LOOP_HEAD  # the protocol's package is heavy to load

    text = old if old is not None else LOOP_HEAD
    parts = sections(text)
    missing = [(h, body) for h, body in LOOP_SECTIONS if find(parts, h) is None]
    if not missing:
        return text
    text = text if text.endswith("\n") or not text else text + "\n"
    return text + "".join(f"\n## {h}\n\n{body}" for h, body in missing)


def extend_goals(old: str | None) -> str:
    """GOALS.md with a ``## Backlog`` section when it has none."""
    from relay.protocol.spine import GOALS

    doc = parse_goals(old if old is not None else GOALS)
    if find(sections(old or ""), "Backlog") is not None:
        return old or ""
    return render_goals(GoalsFile(before=doc.before, intro=BACKLOG_INTRO, goals=()))


def extend_board(old: str | None) -> str:
    """BOARD.md with a ``## Goals`` table when it has none."""
    from relay.protocol.spine import BOARD

    text = old if old is not None else BOARD
    if find(sections(text), "Goals") is not None:
        return text
    return render_board(Board(before=text, rows=()))


def fresh_files(contract: Contract) -> dict[str, str]:
    """The files written only when absent, keyed by their path in the repository."""
    from relay.protocol.spine import HANDOVER

    return {
        "docs/loop/handover.md": HANDOVER,
        "docs/loop/CONTRACT.md": render_contract(contract),
        LOG_NAME: render_log(LOG_HEAD, ()),
        FAILURES_NAME: FAILURES_HEAD,
        RULES_NAME: RULES_HEAD,
        BASELINE_NAME: render_baseline(Baseline()),
    }


def board_of(text: str | None) -> Board:
    """The board, an absent file being an empty one."""
    return parse_board(text if text is not None else extend_board(None))


# --- learning the project ---


@dataclass(frozen=True)
class Proposal:
    """A gate relay proposes, and where it learned it."""

    gate: Gate
    source: str


def propose_gates(files: Mapping[str, str], *, python: str = "python") -> list[Proposal]:
    """The project's real test, lint, typecheck and build commands, from its files (a
    Makefile's targets first: they are what the project itself runs)."""
    found: dict[str, Proposal] = {}

    def offer(name: str, command: str, source: str) -> None:
        found.setdefault(name, Proposal(Gate(name, command), source))

    if "Makefile" in files:
        targets = set(re.findall(r"^([A-Za-z][\w-]*):", files["Makefile"], re.MULTILINE))
        for name, target in (
            ("test", "test"),
            ("lint", "lint"),
            ("typecheck", "typecheck"),
            ("build", "build"),
        ):
            if target in targets:
                offer(name, f"make {target}", "Makefile")
        if "check" in targets and "test" not in targets:
            offer("test", "make check", "Makefile")
    if "pyproject.toml" in files:
        _python(files, python, offer)
    if "package.json" in files:
        _node(files["package.json"], offer)
    if "Cargo.toml" in files:
        offer("test", "cargo test", "Cargo.toml")
        offer("lint", "cargo clippy -- -D warnings", "Cargo.toml")
        offer("build", "cargo build", "Cargo.toml")
    if "go.mod" in files:
        offer("test", "go test ./...", "go.mod")
        offer("lint", "go vet ./...", "go.mod")
        offer("build", "go build ./...", "go.mod")
    return list(found.values())


Offer = Callable[[str, str, str], None]


def _python(files: Mapping[str, str], python: str, add: Offer) -> None:
    try:
        doc = tomllib.loads(files["pyproject.toml"])
    except tomllib.TOMLDecodeError:
        return
    tool = doc.get("tool", {})
    text = files["pyproject.toml"]
    if "pytest" in tool or "pytest" in text or any(p.startswith("tests/") for p in files):
        add("test", f"{python} -m pytest -q", "pyproject.toml")
    if "ruff" in tool or "ruff" in text:
        add("lint", f"{python} -m ruff check .", "pyproject.toml")
        add("format", f"{python} -m ruff format --check .", "pyproject.toml")
    if "mypy" in tool or "mypy" in text:
        add("typecheck", f"{python} -m mypy", "pyproject.toml")


def _node(text: str, offer: Offer) -> None:
    try:
        scripts = json.loads(text).get("scripts", {})
    except (ValueError, AttributeError):
        return
    for name, script in (("test", "test"), ("lint", "lint"), ("typecheck", "typecheck")):
        if isinstance(scripts, dict) and script in scripts:
            offer(name, "npm test" if script == "test" else f"npm run {script}", "package.json")
    if isinstance(scripts, dict) and "build" in scripts:
        offer("build", "npm run build", "package.json")
