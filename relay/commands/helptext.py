"""What `--help` ends with, and what a mistyped word is answered with: gh's habits.

Every command's help ends with two or three examples (one table here, so they are read,
and tested to parse, in one place); a mistyped verb or flag gets "did you mean X?"; a
command whose options include internals (`relay hub`) keeps them for ``--help-all``.
Imports nothing of relay's, so `relay --version` and the parser stay cheap.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterable, Sequence

TYPE_CHECKING = False  # typing's constant without loading typing (mypy reads it the same)
if TYPE_CHECKING:
    from typing import Any

# Two or three examples for each command, by its words after `relay` ("" is `relay`
# itself). Each line is a command a person may paste; a `#` starts what it does.
EXAMPLES: dict[str, tuple[str, ...]] = {
    "": (
        "relay demo                          # the whole round trip on a local hub",
        "relay init && relay join            # set relay up in this clone, then join",
        "relay status -R octo/proj           # the open jobs of octo/proj",
    ),
    "init": (
        "relay init                          # asks what it needs",
        "relay init --yes --node ci-box",
        "relay init -R alice/demo --api http://127.0.0.1:8080 --yes",
    ),
    "join": (
        "relay join                          # this machine joins, with a watcher",
        "relay join --node laptop --scheduler none",
        "relay join -R octo/proj --save-token",
    ),
    "job": (
        "relay job open --worker ci-box --title 'Build fails' --objective 'Find why.'",
        "relay job repair 12",
    ),
    "job open": (
        "relay job open --worker ci-box --title 'Build fails' --objective 'Find why.'",
        "relay job open -R octo/proj --worker ci-box --title 'Disk' --objective 'How full?'",
    ),
    "job repair": (
        "relay job repair 12",
        "relay job repair '#12' -R octo/proj",
    ),
    "task": (
        "relay task 12 --step 'make test'",
        "relay task '#12' --step 'df -h .' --step 'uname -a' --scope diagnostics",
        "relay task https://github.com/octo/proj/issues/12 --step 'git log -1'",
    ),
    "watch": (
        "relay watch --once                  # one pass, then exit",
        "relay watch --interval 30           # pass every 30 s until no job needs this node",
        "relay watch --once -R octo/proj --issue 12",
    ),
    "result": (
        "relay result 12",
        "relay result '#12' --wait --timeout 600",
        "relay result https://github.com/octo/proj/issues/12",
    ),
    "hypothesis": (
        "relay hypothesis 12 'the cache is stale'",
        "relay hypothesis '#12' 'the disk is full' --outcome refuted",
    ),
    "strike": (
        "relay strike 12",
        "relay strike '#12' --hypothesis 2 -R octo/proj",
    ),
    "resolve": (
        "relay resolve 12 --summary 'The cache was stale.'",
        "relay resolve '#12' --summary 'Fixed in a1b2c3d.' -R octo/proj",
    ),
    "status": (
        "relay status",
        "relay status -R octo/proj",
        "relay status --json",
    ),
    "doctor": (
        "relay doctor",
        "relay doctor --fix                  # re-create a missing watcher entry",
        "relay doctor -R octo/proj --json",
    ),
    "leave": (
        "relay leave",
        "relay leave -R octo/proj --node ci-box",
    ),
    "nodes": (
        "relay nodes                         # members, keys, join requests",
        "relay nodes approve ci-box --fingerprint SHA256:...",
        "relay nodes sign --yes",
    ),
    "nodes approve": (
        "relay nodes approve ci-box          # asks for the fingerprint `relay nodes key` printed",
        "relay nodes approve ci-box --fingerprint SHA256:... --admin",
    ),
    "nodes key": (
        "relay nodes key                     # this node's key fingerprint, to read out",
        "relay nodes key -R octo/proj --json",
    ),
    "nodes sign": (
        "relay nodes sign                    # list what would be signed",
        "relay nodes sign --yes",
    ),
    "redact": (
        "relay redact build.log > build.redacted.log",
        "make test 2>&1 | relay redact --report",
        "relay redact build.log --pattern 'ticket=T-[0-9]+' -o clean.log",
    ),
    "hub": (
        "relay hub --data ./hub              # serve on 127.0.0.1:8080",
        "relay hub --port 0 --detach         # a free port, in the background",
        "relay hub token alice               # a token for alice",
    ),
    "hub token": (
        "relay hub token alice",
        "relay hub token admin --admin --data ./hub",
    ),
    "hub repo": (
        "relay hub repo create alice/demo --private",
        "relay hub repo list",
    ),
    "hub repo create": (
        "relay hub repo create alice/demo",
        "relay hub repo create alice/demo --private --exist-ok --api http://127.0.0.1:8080",
    ),
    "hub repo list": (
        "relay hub repo list",
        "relay hub repo list --api http://127.0.0.1:8080 --json",
    ),
    "hub env": (
        "relay hub env gh alice             # eval its output: gh then uses the hub",
        "relay hub env gh --token ghp_example --data ./hub --json",
    ),
    "demo": (
        "relay demo                          # about a minute, nothing left behind",
        "relay demo --keep ~/relay-demo      # keep the files and the hub to read the pages",
    ),
    "loop": (
        "relay loop init --gate 'make test'",
        "relay loop goal add 'Faster tests' --accept 'make test'",
        "relay loop run --maker 'claude -p'",
    ),
    "loop init": (
        "relay loop init                     # proposes gates and asks",
        "relay loop init --gate 'make test' --gate 'make lint' --yes",
    ),
    "loop goal": (
        "relay loop goal add 'Parse dates' --accept 'pytest tests/test_dates.py'",
        "relay loop goal add 'Faster build' --metric 'make bench' --direction down",
    ),
    "loop goal add": (
        "relay loop goal add 'Parse dates' --accept 'pytest tests/test_dates.py'",
        "relay loop goal add 'Faster build' --metric 'make bench' --direction down --runs 3",
    ),
    "loop status": (
        "relay loop status",
        "relay loop status --json",
    ),
    "loop next": (
        "relay loop next",
        "relay loop next --json",
    ),
    "loop check": (
        "relay loop check",
        "relay loop check --repo-dir ~/src/proj",
    ),
    "loop run": (
        "relay loop run --maker 'claude -p' --dry-run",
        "relay loop run --maker 'claude -p' --checker 'make lint' --wall-clock 8h",
        "relay loop run --backend managed-agents --ask-on 12",
    ),
    "loop roster": (
        "relay loop roster create --backend managed-agents",
        "relay loop roster create --backend managed-agents --json",
    ),
    "loop roster create": (
        "relay loop roster create --backend managed-agents",
        "relay loop roster create --backend managed-agents --model claude-opus-4-8",
    ),
    "loop roles": (
        "relay loop roles",
        "relay loop roles --json",
    ),
    "loop make-here": (
        "RELAY_LOOP_MAKER='claude -p' relay loop make-here G3   # as a TASK's step on a node",
        "relay loop make-here G3 --timeout 900",
    ),
    "loop interrupt": (
        "relay loop interrupt code-reviewer",
        "relay loop interrupt maker --goal G3",
    ),
    "loop triage": (
        "relay loop triage",
        "relay loop triage --json",
    ),
    "loop schedule": (
        "relay loop schedule --at 02:00",
        "relay loop schedule --remove",
    ),
    "loop scheduled": (
        "relay loop scheduled",
        "relay loop scheduled --max-iterations 5",
    ),
    "completion": (
        "relay completion bash > ~/.local/share/bash-completion/completions/relay",
        "relay completion zsh > ~/.zfunc/_relay",
        "relay completion fish > ~/.config/fish/completions/relay.fish",
    ),
}


def epilog(path: str) -> str | None:
    """The examples block for the command ``path`` (None when the table has none)."""
    lines = EXAMPLES.get(path)
    if not lines:
        return None
    return "examples:\n" + "\n".join(f"  {line}" for line in lines)


def parsers(
    parser: argparse.ArgumentParser, path: tuple[str, ...] = ()
) -> Iterable[tuple[tuple[str, ...], argparse.ArgumentParser]]:
    """Every parser under ``parser`` with its words (the sub-verbs' aliases once)."""
    yield path, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            seen: set[int] = set()
            for name, child in action.choices.items():
                if id(child) not in seen:
                    seen.add(id(child))
                    yield from parsers(child, (*path, name))


def add_examples(parser: argparse.ArgumentParser) -> None:
    """End each loaded command's help with its examples (a stub of an unloaded verb is
    left alone). The description keeps its own line breaks, as the examples do."""
    for path, found in parsers(parser):
        text = epilog(" ".join(path))
        stub = bool(path) and found.get_default("func") is None and not _has_subs(found)
        if text is None or stub:
            continue
        found.epilog = text
        if found.formatter_class is argparse.HelpFormatter:
            found.formatter_class = argparse.RawDescriptionHelpFormatter


def _has_subs(parser: argparse.ArgumentParser) -> bool:
    return any(isinstance(a, argparse._SubParsersAction) for a in parser._actions)


def did_you_mean(word: str, choices: Iterable[str]) -> str:
    """ "did you mean `X`?" for the nearest of ``choices``, or nothing (flags compared
    without their dashes, which every flag shares, and in any case: `--JSON`)."""
    import difflib

    names = {choice.lstrip("-").lower(): choice for choice in choices}
    near = difflib.get_close_matches(word.lstrip("-").lower(), list(names), n=1, cutoff=0.6)
    return f"did you mean `{names[near[0]]}`?" if near else ""


class HelpAll(argparse.Action):
    """``--help-all``: the help with the options and text that ``--help`` leaves out."""

    def __init__(self, option_strings: Sequence[str], dest: str, **kwargs: Any) -> None:
        self.full_description: str = kwargs.pop("full_description")
        self.internals: dict[str, str] = kwargs.pop("internals")
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS, **kwargs)

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: Any,
        option_string: str | None = None,
    ) -> None:
        parser.description = self.full_description
        for action in parser._actions:
            named = [self.internals[o] for o in action.option_strings if o in self.internals]
            if named:
                action.help = named[0]
        parser.print_help()
        parser.exit()


def hide_internals(
    parser: argparse.ArgumentParser, *, full_description: str, internals: dict[str, str]
) -> None:
    """Leave the options named in ``internals`` (flag -> its help) out of ``--help`` and
    add ``--help-all``, which shows them with ``full_description``."""
    for action in parser._actions:
        if any(o in internals for o in action.option_strings):
            action.help = argparse.SUPPRESS
    parser.add_argument(
        "--help-all",
        action=HelpAll,
        full_description=full_description,
        internals=internals,
        help="show this help with the internals too (fault injection, admin endpoints)",
    )


def version_only(argv: Sequence[str] | None = None) -> str | None:
    """The answer to `relay --version` (alone on the line), without loading any verb."""
    words = list(sys.argv[1:] if argv is None else argv)
    if words != ["--version"]:
        return None
    from relay import __version__

    return f"relay {__version__}"
