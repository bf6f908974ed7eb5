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
SHIPPING_WORDS = frozenset({"ship", "shipit", "shipping", "ships", "shipped"})
# CLIs that reach what is shipped to (a remote, a registry, a cluster, a cloud): as a
# whole, or with subcommands that change it, they ship; narrowed by a subcommand that only
# reads or stays local (``git diff``, ``gh pr view``, ``kubectl get``, ``terraform plan``)
# they do not
SHIPPING_CLIS = frozenset(
    {"git", "gh", "glab", "hub", "kubectl", "helm", "terraform", "tofu", "pulumi", "ansible",
     "twine", "docker", "podman", "aws", "gcloud", "az", "flyctl", "fly", "heroku",
     "vercel", "netlify", "wrangler", "firebase", "scp", "rsync", "ssh", "sftp", "npm",
     "yarn", "pnpm", "cargo", "gem", "poetry", "uv", "flit", "hatch"}
)  # fmt: skip
READING_SUBCOMMANDS = frozenset(
    {"diff", "log", "status", "show", "blame", "view", "list", "ls", "get", "describe",
     "plan", "validate", "fmt", "check", "grep", "search", "info", "version", "help",
     "inspect", "lint", "test", "build", "whoami", "logs", "top", "explain", "output",
     "graph", "run", "shortlog", "branch", "rev", "parse", "ps", "images", "outdated",
     "audit", "tree", "lock", "sync", "add", "commit", "fetch", "stash", "checkout"}
)  # fmt: skip
# a word that ends with one of these ships too (``automerge``, ``autodeploy``, ``gitpush``)
_SHIPPING_ENDS = ("push", "merge", "deploy", "release", "publish")
# a tool that runs any command: it could push, so it is given only under a person's
# confirmation (``always_ask``)
SHELL_WORDS = frozenset(
    {"bash", "sh", "zsh", "fish", "dash", "ksh", "csh", "tcsh", "pwsh", "powershell", "cmd",
     "shell", "terminal", "console", "exec", "execute", "command", "subprocess", "python",
     "python3", "node", "ruby", "perl", "interpreter", "repl", "execution"}
)  # fmt: skip
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
_SPLIT = re.compile(r"[^a-z0-9]+")


def tool_words(tool: str) -> list[str]:
    """A tool's words, lower-cased: split at spaces, punctuation and camel case."""
    return [w for w in _SPLIT.split(_CAMEL.sub(" ", tool).lower()) if w]


def ships(tool: str) -> bool:
    """Whether a tool (or permission) can ship: any of its words pushes, merges, deploys,
    releases or publishes; or it is a CLI that reaches what is shipped to (``kubectl``,
    ``terraform``, ``twine``, ``gh``, ``git``), whole or with a subcommand that does not
    only read (``terraform apply``, ``helm upgrade``, ``twine upload``)."""
    words = tool_words(tool)
    if any(
        w in SHIPPING_WORDS or w.startswith(SHIPPING_STEMS) or w.endswith(_SHIPPING_ENDS)
        for w in words
    ):
        return True
    for at, word in enumerate(words):
        if word in SHIPPING_CLIS:
            rest = [w for w in words[at + 1 :] if w not in SHIPPING_CLIS]
            if not any(w in READING_SUBCOMMANDS for w in rest):
                return True
    return False


def shipping(tools: Iterable[str]) -> list[str]:
    """The tools among ``tools`` that ship, in their order."""
    return [t for t in tools if ships(t)]


def runs_commands(tool: str) -> bool:
    """Whether a tool runs arbitrary commands (a shell), so it could ship by itself."""
    return any(w in SHELL_WORDS for w in tool_words(tool))
