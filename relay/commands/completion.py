"""`relay completion SHELL`: a tab-completion script for bash, zsh, fish or PowerShell,
generated from the same argparse tree the command runs (by shtab), so it names every verb,
sub-verb, flag and choice there is and can never fall behind."""

from __future__ import annotations

import argparse
from typing import Any

from relay.commands.output import Output

SHELLS = ("bash", "zsh", "fish", "powershell")
WHERE = {
    "bash": "relay completion bash > ~/.local/share/bash-completion/completions/relay",
    "zsh": "relay completion zsh > ~/.zfunc/_relay  (with fpath+=~/.zfunc before compinit)",
    "fish": "relay completion fish > ~/.config/fish/completions/relay.fish",
    "powershell": "relay completion powershell >> $PROFILE",
}


def register(sub: Any) -> None:
    """Add `completion`."""
    epilog = "install it:\n" + "\n".join(f"  {WHERE[s]}" for s in SHELLS)
    p: argparse.ArgumentParser = sub.add_parser(
        "completion",
        help="print a shell completion script",
        description="Print the tab-completion script for SHELL on standard output.",
        epilog=epilog,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("shell", choices=SHELLS, metavar="SHELL", help=" | ".join(SHELLS))
    p.add_argument("--json", action="store_true", help="the script inside the JSON envelope")
    p.set_defaults(func=run)


def script(parser: argparse.ArgumentParser, shell: str) -> str:
    """The completion script for ``shell`` over the command tree ``parser``."""
    import shtab

    text: str = shtab.complete(parser, shell=shell)
    return text


def run(args: argparse.Namespace) -> Output:
    """Print the script (the whole tree comes from the CLI, which loads every verb)."""
    text = script(args.whole_parser(), args.shell)
    return Output(lines=(text.rstrip("\n"),), data={"shell": args.shell, "script": text})
