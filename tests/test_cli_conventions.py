"""The command line's conventions over its whole tree: no abbreviated flags, `--json` on
every verb, and `relay completion SHELL` for bash, zsh, fish and PowerShell (the bash one
run by bash itself)."""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from relay.cli import build_parser


def relay(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    argv = [sys.executable, "-m", "relay.cli", *args]
    return subprocess.run(argv, capture_output=True, text=True, timeout=60, cwd=cwd)


def tree(
    parser: argparse.ArgumentParser, path: tuple[str, ...] = ()
) -> Iterator[tuple[tuple[str, ...], argparse.ArgumentParser, bool]]:
    """Every parser under ``parser``: its words, itself, whether it is a leaf (a verb)."""
    subs = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    choices = {name: p for a in subs for name, p in a.choices.items()}
    yield path, parser, not choices
    for name, child in choices.items():
        yield from tree(child, (*path, name))


def test_no_parser_takes_abbreviations() -> None:
    found = list(tree(build_parser([])))
    assert len(found) > 25  # the whole tree, every verb loaded
    assert [p for p, parser, _ in found if parser.allow_abbrev] == []


def test_every_verb_takes_json() -> None:
    missing = [
        " ".join(path)
        for path, parser, leaf in tree(build_parser([]))
        if leaf and path and "--json" not in parser._option_string_actions
    ]
    assert missing == []


def test_repo_is_not_taken_for_repo_dir(tmp_path: Path) -> None:
    """`relay join --repo X` used to run as `--repo-dir X`; now it is refused in one line
    that names the verb's help, and nothing is written."""
    done = relay("join", "--repo", "octo/proj", "--scheduler", "none", cwd=tmp_path)
    assert done.returncode == 2
    assert done.stderr.splitlines() == [
        "relay: `relay join`: unrecognized arguments: --repo octo/proj — see `relay join --help`"
    ]
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("shell", ["bash", "zsh", "fish", "powershell"])
def test_completion_names_every_verb(shell: str) -> None:
    done = relay("completion", shell)
    assert done.returncode == 0, done.stderr
    for word in ("init", "join", "watch", "completion", "open", "repo", "worker", "json"):
        assert word in done.stdout, (shell, word)


def test_completion_rejects_an_unknown_shell() -> None:
    done = relay("completion", "ksh")
    assert done.returncode == 2 and len(done.stderr.splitlines()) == 1
    assert "invalid choice: 'ksh'" in done.stderr


def bash_completes(script: Path, line: str) -> list[str]:
    """What bash offers for ``line`` (the cursor at its end) with the script loaded."""
    words = line.split(" ")
    probe = (
        f"source {script}\n"
        f"COMP_WORDS=({' '.join(repr(w) for w in words)})\n"
        f"COMP_CWORD={len(words) - 1}\n"
        f"COMP_LINE={line!r}\nCOMP_POINT=${{#COMP_LINE}}\n"
        '_shtab_relay "relay" "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD-1]}"\n'
        'printf "%s\\n" "${COMPREPLY[@]}"\n'
    )
    done = subprocess.run(
        ["bash", "-c", probe], capture_output=True, text=True, timeout=30, env=dict(os.environ)
    )
    assert done.returncode == 0, done.stderr
    return sorted(w.strip() for w in done.stdout.splitlines() if w.strip())


@pytest.mark.skipif(shutil.which("bash") is None, reason="no bash")
def test_bash_completes_verbs_sub_verbs_and_flags(tmp_path: Path) -> None:
    script = tmp_path / "relay.bash"
    script.write_text(relay("completion", "bash").stdout)
    assert "job" in bash_completes(script, "relay j")
    assert bash_completes(script, "relay hub repo ") == ["create", "list"]
    assert "--worker" in bash_completes(script, "relay job open --w")
    assert bash_completes(script, "relay completion p") == ["powershell"]


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (
            ("hub", "repo", "create", "bad"),
            "relay: 'bad' is not OWNER/NAME — name it as OWNER/NAME, for example"
            " `relay hub repo create alice/demo`",
        ),
        (
            ("hub", "repo", "create", "x/y", "--repo", "a/b"),
            "relay: `relay hub repo create`: unrecognized arguments: --repo a/b"
            " — see `relay hub repo create --help`",
        ),
        (
            ("job", "open", "--work", "x", "--title", "t", "--objective", "o"),
            "relay: `relay job open`: unrecognized arguments: --work — see `relay job open --help`",
        ),
    ],
)
def test_usage_errors_name_the_verb_typed_and_the_flag_mistyped(
    tmp_path: Path, args: tuple[str, ...], said: str
) -> None:
    done = relay(*args, cwd=tmp_path)
    assert done.returncode == 2
    assert done.stderr.splitlines() == [said], done.stderr
