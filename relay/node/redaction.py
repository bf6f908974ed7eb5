"""The one door through which everything a node prints or posts is redacted.

A task's log and RESULT, a pass's lines and an error message all leave the machine (into
the thread, a terminal, a scheduler log); each goes through this module, so the rules that
apply to one apply to all.
"""

from __future__ import annotations

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


# relay's own protocol words, which the secret-assignment rule would otherwise take for a
# credential (``authorized-by-human: yes`` reads like ``auth...: value``): relay's hints and
# notices say them, and they are never a secret
RELAY_WORDS = (r"`?authorized-by-human(?::\s*|=)(?:yes|no)`?",)


def build_redactor(master: Master | None, token: str = "") -> Redactor:
    """The one recipe: the machine's facts and secrets, relay's own words kept, plus the
    repository's own patterns and allowances when its master section is known."""
    import re

    from relay.redact import DEFAULT_ALLOWED, Redactor, gather_facts

    if master is None:
        return Redactor(gather_facts(token=token or None), allowed=RELAY_WORDS)
    scope = master.scope
    extra = {f"scope-{n}": p for n, p in enumerate(scope.redact, start=1)}
    # node names are public in the node table, even where one equals its host name
    names = tuple(re.escape(node.name) for node in master.nodes)
    return Redactor(
        gather_facts(token=token or None),
        extra_patterns=extra,
        allowed=(*DEFAULT_ALLOWED, *RELAY_WORDS, *scope.redact_allow, *names),
    )


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
        return build_redactor(_master_near(repo_dir)).redact(message)
    except Exception:  # never let redaction hide the error itself
        return message


def _master_near(repo_dir: Path | None) -> Master | None:
    """The master section of the clone at ``repo_dir`` (or here), None when there is none."""
    from relay.edges.local import clone_root
    from relay.node.context import read_master

    try:
        return read_master(clone_root(repo_dir or Path.cwd()))
    except Exception:  # not a clone, no section: the machine's facts alone
        return None
