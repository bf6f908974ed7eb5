"""The one door through which everything a node prints or posts is redacted.

A task's log and RESULT, a pass's lines and an error message all leave the machine (into
the thread, a terminal, a scheduler log); each goes through this module, so the rules that
apply to one apply to all.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from relay.node.context import NodeContext
    from relay.redact import Redactor


def redactor_for(ctx: NodeContext, token: str) -> Redactor:
    """This node's redactor: its own facts and secrets (``token`` is the one this pass acts
    with) plus the master section's patterns; built once per token and master section."""
    built = ctx.redactors.get(token)
    if built is None:
        built = ctx.redactors[token] = _build_redactor(ctx, token)
    return built


def _build_redactor(ctx: NodeContext, token: str) -> Redactor:
    import re

    from relay.redact import DEFAULT_ALLOWED, Redactor, gather_facts

    scope = ctx.master.scope
    extra = {f"scope-{n}": p for n, p in enumerate(scope.redact, start=1)}
    # node names are public in the node table, even where one equals its host name
    names = tuple(re.escape(node.name) for node in ctx.master.nodes)
    return Redactor(
        gather_facts(token=token),
        extra_patterns=extra,
        allowed=(*DEFAULT_ALLOWED, *scope.redact_allow, *names),
    )


def redact_lines(ctx: NodeContext, lines: list[str], *, token: str) -> list[str]:
    """Pass output goes to terminals and scheduler logs: redact it like any published text
    (an idle pass prints nothing and so builds no redactor)."""
    if not lines:
        return lines
    redactor = redactor_for(ctx, token)
    return [redactor.redact(line) for line in lines]


def redacted(message: str) -> str:
    """An error message as it may be printed into a terminal or a scheduler log: errors
    quote paths, URLs and command output, so they pass through the redactor like logs."""
    try:
        from relay.redact import Redactor, gather_facts

        return Redactor(gather_facts()).redact(message)
    except Exception:  # never let redaction hide the error itself
        return message
