"""The one door through which everything a node prints or posts is redacted.

A task's log and RESULT, a pass's lines and an error message all leave the machine (into
the thread, a terminal, a scheduler log); each goes through this module, so the rules that
apply to one apply to all.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from relay.node.context import NodeContext
    from relay.protocol import Master
    from relay.redact import Redactor


def redactor_for(ctx: NodeContext, token: str) -> Redactor:
    """This node's redactor: its own facts and secrets (``token`` is the one this pass acts
    with) plus the master section's patterns; built once per token and master section."""
    built = ctx.redactors.get(token)
    if built is None:
        built = ctx.redactors[token] = build_redactor(ctx.master, token)
    return built


def build_redactor(
    master: Master | None,
    token: str = "",
    *,
    extra_patterns: Mapping[str, str] | None = None,
    allowed: Iterable[str] = (),
) -> Redactor:
    """The one recipe: the machine's facts and secrets, plus the repository's own patterns
    and allowances when its master section is known, plus any the caller adds (``relay
    redact --pattern/--allow``). relay's own words (``authorized-by-human: yes``) are no
    secret-naming assignment in the rules themselves, so no allowance here stands for them."""
    import re

    from relay.redact import Redactor, gather_facts

    extra = dict(extra_patterns or {})
    kept = list(allowed)
    hosts: list[str] = []
    if master is not None:
        scope = master.scope
        extra |= {f"scope-{n}": p for n, p in enumerate(scope.redact, start=1)}
        # A node's name is usually its host's short name: the short name is public (it is
        # in the table), its fully qualified forms (``win-desktop.local``) say where the
        # machine lives and are redacted as <host> on every node, not only on the one named.
        hosts = [node.name for node in master.nodes]
        # node names are public in the node table, even where one equals its host name
        kept += [*scope.redact_allow, *(re.escape(node.name) for node in master.nodes)]
    facts = gather_facts(token=token or None)
    return Redactor(facts, extra_patterns=extra, allowed=kept, node_hosts=hosts)


def redactor_here(
    repo_dir: Path | None = None,
    *,
    extra_patterns: Mapping[str, str] | None = None,
    allowed: Iterable[str] = (),
) -> Redactor:
    """The recipe for a command run in a clone (or outside one): its master section's
    patterns when the clone at ``repo_dir`` (or here) has one, the machine's facts alone
    otherwise."""
    return build_redactor(_master_near(repo_dir), extra_patterns=extra_patterns, allowed=allowed)


def redact_lines(ctx: NodeContext, lines: list[str], *, token: str) -> list[str]:
    """Pass output goes to terminals and scheduler logs: redact it like any published text
    (an idle pass prints nothing and so builds no redactor)."""
    if not lines:
        return lines
    redactor = redactor_for(ctx, token)
    return [redactor.redact(line) for line in lines]


def redacted(message: str, *, repo_dir: Path | None = None) -> str:
    """An error message as it may be printed into a terminal or a scheduler log: errors
    quote paths, URLs and command output, so they pass through the same redactor as logs,
    with the repository's own patterns when the clone at ``repo_dir`` (or here) has them."""
    try:
        return redactor_here(repo_dir).redact(message)
    except Exception:  # never let redaction hide the error itself
        return message


def _master_near(repo_dir: Path | None) -> Master | None:
    """The master section of the clone at ``repo_dir`` (or here), None when there is none.

    Outside a clone nothing is imported; in one, only what reads the spine (the node's
    other modules, and the libraries they load, would be most of a short `relay redact`)."""
    here = (repo_dir or Path.cwd()).resolve()
    root = next((d for d in (here, *here.parents) if (d / ".git").exists()), None)
    if root is None:
        return None
    from relay.node.spine import read_master

    try:
        return read_master(root)
    except Exception:  # not a clone, no section: the machine's facts alone
        return None
