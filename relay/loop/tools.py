"""What a role's tool can do, decided purely: whether it ships (push, merge, deploy,
release, publish, in any spelling: ``git push``, ``gh pr merge``, ``deploy:prod``,
``force-push``, ``merge_pr``, ``bash (push)``) and whether it runs any command (a shell),
so it can ship through the back door and waits for a person's confirmation.

Ground rules: one rule serves the roster check (`relay loop check`) and the Managed Agents
path; a tool is read by every word of it, not its first; reading, editing and testing
tools do not ship.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

# a word that is one of these, or starts with one (``deployer``, ``publishing``), ships
SHIPPING_STEMS = ("push", "merge", "deploy", "releas", "publish")
SHIPPING_WORDS = frozenset({"ship", "shipit"})
# a word that ends with one of these ships too (``automerge``, ``autodeploy``, ``gitpush``)
_SHIPPING_ENDS = ("push", "merge", "deploy", "release", "publish")
# a tool that runs any command: it could push, so it is given only under a person's
# confirmation (``always_ask``)
SHELL_WORDS = frozenset({"bash", "sh", "zsh", "shell", "terminal", "exec", "execute", "command"})
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
_SPLIT = re.compile(r"[^a-z0-9]+")


def tool_words(tool: str) -> list[str]:
    """A tool's words, lower-cased: split at spaces, punctuation and camel case."""
    return [w for w in _SPLIT.split(_CAMEL.sub(" ", tool).lower()) if w]


def ships(tool: str) -> bool:
    """Whether a tool (or permission) can ship: any of its words pushes, merges, deploys,
    releases or publishes."""
    return any(
        w in SHIPPING_WORDS or w.startswith(SHIPPING_STEMS) or w.endswith(_SHIPPING_ENDS)
        for w in tool_words(tool)
    )


def shipping(tools: Iterable[str]) -> list[str]:
    """The tools among ``tools`` that ship, in their order."""
    return [t for t in tools if ships(t)]


def runs_commands(tool: str) -> bool:
    """Whether a tool runs arbitrary commands (a shell), so it could ship by itself."""
    return any(w in SHELL_WORDS for w in tool_words(tool))
