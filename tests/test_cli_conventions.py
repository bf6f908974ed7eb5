"""The command line's conventions over its whole tree: no abbreviated flags, `--json` on
every verb, and `relay completion SHELL` for bash, zsh, fish and PowerShell (the bash one
run by bash itself)."""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import shlex
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from relay.cli import build_parser


def relay(
    *args: str, cwd: Path | None = None, process: bool = False
) -> subprocess.CompletedProcess[str]:
    """`relay ARGS` in ``cwd``: run by ``relay.cli.main`` in this process (what these tests
    are about is the parser's and the verbs' answer), or with ``process`` as a process of
    its own (each test keeps one: its exit code and stderr are the process's). A process
    costs relay's start-up, half a CPU-second, where a call here costs next to nothing."""
    if process:
        argv = [sys.executable, "-m", "relay.cli", *args]
        return subprocess.run(argv, capture_output=True, text=True, timeout=60, cwd=cwd)
    from relay.cli import main

    out, err = io.StringIO(), io.StringIO()
    with (
        contextlib.chdir(cwd or Path.cwd()),
        contextlib.redirect_stdout(out),
        contextlib.redirect_stderr(err),
    ):
        status = main(list(args))
    return subprocess.CompletedProcess(list(args), status, out.getvalue(), err.getvalue())


def first(request: pytest.FixtureRequest) -> bool:
    """Whether this is a parametrised test's first case (the one run as a process)."""
    return min(request.node.callspec.indices.values()) == 0


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
    """`relay join --repo X` used to run as `--repo-dir X`; now `--repo` is gh's `-R`: with
    no clone of X here nor joined on this machine, one line says what to do, and nothing
    is written."""
    done = relay("join", "--repo", "octo/proj", "--scheduler", "none", cwd=tmp_path, process=True)
    assert done.returncode == 2
    assert done.stderr.splitlines() == [
        "relay: no clone of octo/proj here or joined on this machine — clone octo/proj and run"
        " relay in it (`relay join` there lets -R find it), or pass --repo-dir PATH"
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
    script.write_text(relay("completion", "bash", process=True).stdout)
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
            "relay: `relay job open`: unrecognized arguments: --work — did you mean `--worker`?",
        ),
        (("wach", "--once"), "relay: invalid choice: 'wach' — did you mean `relay watch`?"),
        (
            ("hub", "repo", "lst"),
            "relay: `relay hub repo`: invalid choice: 'lst' — did you mean `relay hub repo list`?",
        ),
        (
            ("watch", "--interal", "5"),
            "relay: `relay watch`: unrecognized arguments: --interal 5"
            " — did you mean `--interval`?",
        ),
        (
            ("watch", "-once"),
            "relay: `relay watch`: unrecognized arguments: -once — did you mean `--once`?",
        ),
        (
            ("status", "--JSON"),
            "relay: `relay status`: unrecognized arguments: --JSON — did you mean `--json`?",
        ),
        (  # `relay result #3` unquoted: the shell drops `#3`
            ("result",),
            "relay: `relay result`: the following arguments are required: issue — give its"
            " number, 12 (an unquoted #12 is a comment to the shell: write '#12')",
        ),
        (
            ("task", "#x", "--step", "ls"),
            "relay: `relay task`: argument issue: '#x' is not an issue: give its number (12 or"
            " #12) or its URL (https://github.com/OWNER/NAME/issues/12) — see `relay task --help`",
        ),
        (
            ("result", "https://github.com/octo/proj/pull/3"),
            "relay: `relay result`: argument issue: 'https://github.com/octo/proj/pull/3' is not"
            " an issue: give its number (12 or #12) or its URL"
            " (https://github.com/OWNER/NAME/issues/12) — see `relay result --help`",
        ),
        (
            ("status", "-R", "octo"),
            "relay: `relay status`: argument -R/--repo: 'octo' is not OWNER/NAME, e.g. octo/proj"
            " — see `relay status --help`",
        ),
    ],
)
def test_usage_errors_name_the_verb_typed_and_the_flag_mistyped(
    tmp_path: Path, args: tuple[str, ...], said: str, request: pytest.FixtureRequest
) -> None:
    done = relay(*args, cwd=tmp_path, process=first(request))
    assert done.returncode == 2
    assert done.stderr.splitlines() == [said], done.stderr


def commands_of(example: str) -> list[list[str]]:
    """The `relay ...` commands of one example line, as the shell would split them (its
    comment, pipes, `&&` and redirections left out)."""
    words = shlex.split(example, comments=True)
    found: list[list[str]] = []
    current: list[str] | None = None
    skip = False
    for word in words:
        if word in ("&&", "|", "||", ";"):
            current = None
        elif skip:
            skip = False
        elif word in (">", "2>&1") or word.startswith(">"):
            skip = word == ">"
        elif current is None and word == "relay":
            current = []
            found.append(current)
        elif current is not None:
            current.append(word)
    return found


def test_every_commands_help_ends_with_examples_that_parse() -> None:
    """Every command's `--help` ends with two or three examples, each one a line relay
    takes as typed (parsed by the real parser, nothing run)."""
    from relay.commands.helptext import EXAMPLES

    missing, bad = [], []
    for path, parser, _ in tree(build_parser([])):
        name = " ".join(path)
        text = parser.format_help().rstrip()
        tail = text.rsplit("examples:\n", 1)
        if len(tail) != 2 or not 2 <= len(EXAMPLES[name]) <= 3:
            missing.append(name or "relay")
            continue
        shown = [line.strip() for line in tail[1].splitlines()]
        assert shown == list(EXAMPLES[name]), name
        for example in EXAMPLES[name]:
            commands = commands_of(example)
            assert commands, example
            for words in commands:
                try:
                    build_parser(words).parse_args(words)
                except (Exception, SystemExit) as exc:  # a usage error, or argparse's exit
                    bad.append((example, repr(exc)))
    assert missing == [] and bad == []
    assert set(EXAMPLES) == {" ".join(p) for p, _, _ in tree(build_parser([]))}


def test_every_verb_that_acts_on_a_repository_takes_dash_r() -> None:
    """gh's `-R OWNER/NAME` on every verb that acts in a clone (that has --repo-dir)."""
    missing = [
        " ".join(path)
        for path, parser, leaf in tree(build_parser([]))
        if leaf
        and "--repo-dir" in parser._option_string_actions
        and "-R" not in parser._option_string_actions
    ]
    assert missing == []


def test_the_loop_finds_its_clone_by_dash_r(tmp_path: Path) -> None:
    """`relay loop status -R OWNER/NAME` acts on the clone of that repository; another
    repository's name is one line and exit 2."""
    clone = tmp_path / "proj"
    clone.mkdir()
    git_in(clone, "init", "-q", "-b", "main")
    git_in(clone, "remote", "add", "origin", "https://github.com/octo/proj.git")
    (clone / "README.md").write_text("proj\n")
    git_in(clone, "add", "-A")
    git_in(clone, "commit", "-qm", "proj")
    assert relay("loop", "init", "--yes", "--gate", "true", cwd=clone).returncode == 0
    assert relay("loop", "status", "-R", "octo/proj", cwd=clone).returncode == 0
    other = relay("loop", "status", "-R", "octo/other", cwd=clone, process=True)
    assert other.returncode == 2 and len(other.stderr.splitlines()) == 1
    assert "no clone of octo/other" in other.stderr


@pytest.mark.parametrize(
    ("typed", "number", "repo"),
    [
        ("12", 12, None),
        ("#12", 12, None),
        ("https://github.com/octo/proj/issues/12", 12, "octo/proj"),
        ("http://127.0.0.1:8080/alice/demo/issues/3", 3, "alice/demo"),
        ("https://ghe.example.com/octo/proj/issues/7#issuecomment-1", 7, "octo/proj"),
    ],
)
def test_an_issue_is_its_number_hash_number_or_url(
    typed: str, number: int, repo: str | None
) -> None:
    for verb in (["result"], ["strike"], ["job", "repair"], ["task"]):
        words = [*verb, typed, *(["--step", "ls"] if verb == ["task"] else [])]
        args = build_parser(words).parse_args(words)
        assert args.issue == number and args.issue.repo == repo
    words = ["watch", "--once", "--issue", typed]
    assert build_parser(words).parse_args(words).issue == number


def test_version_loads_no_verb_and_answers_the_same_every_way() -> None:
    """`relay --version` imports none of the verbs (nor the protocol), and every way of
    starting relay says the same; how fast it answers is bench/bench_startup.py's figure,
    and tests/relay/test_relay_startup.py holds its import list."""
    probe = (
        "import sys; sys.argv = ['relay', '--version']\n"
        "from relay.cli import main\n"
        "assert main() == 0\n"
        "print(sorted(m for m in sys.modules if m.startswith('relay.')))"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    said, loaded = done.stdout.splitlines()
    assert said.startswith("relay 0.")
    assert "relay.commands.output" not in loaded and "relay.protocol" not in loaded, loaded
    for module in ("relay", "relay.cli"):
        fast = relay_module(module, "--version")
        assert fast.returncode == 0 and fast.stdout == said + "\n", fast.stderr


def relay_module(module: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", module, *args], capture_output=True, text=True, timeout=60
    )


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (
            ("join", "--interval", "0", "--scheduler", "none"),
            "argument --interval: '0' is not a whole number from 60 to 86400",
        ),
        (  # cron silently made it daily
            ("join", "--interval", "99999999", "--scheduler", "none"),
            "argument --interval: '99999999' is not a whole number from 60 to 86400",
        ),
        (
            ("watch", "--interval", "inf"),
            "argument --interval: 'inf' is not a number of at most 86400 s",
        ),
        (
            ("watch", "--interval", "1e9"),
            "argument --interval: '1e9' is not a number of at most 86400 s",
        ),
        (
            ("watch", "--interval", "1e400"),
            "argument --interval: '1e400' is not a number of at most 86400 s",
        ),
        (
            ("watch", "--webhook", "--reconcile", "inf"),
            "argument --reconcile: 'inf' is not a number of at most 86400 s",
        ),
        (
            ("join", "--step-timeout", "0", "--scheduler", "none"),
            "argument --step-timeout: '0' is not a number of more than 0 s",
        ),
        (
            ("join", "--step-timeout", "-5", "--scheduler", "none"),
            "argument --step-timeout: '-5' is not a number of more than 0 s",
        ),
        (
            ("result", "3", "--timeout", "0"),
            "argument --timeout: '0' is not a number of more than 0 s",
        ),
        (("result", "3", "--poll", "0"), "argument --poll: '0' is not a number of at least 0.1 s"),
        (
            ("result", "3", "--poll", "nan"),
            "argument --poll: 'nan' is not a number of at least 0.1 s",
        ),
    ],
)
def test_numbers_out_of_bounds_are_refused_with_the_limit(
    tmp_path: Path, args: tuple[str, ...], said: str, request: pytest.FixtureRequest
) -> None:
    """`--interval 0` on join silently became 300, `--step-timeout -5` was saved as is."""
    done = relay(*args, cwd=tmp_path, process=first(request))
    assert done.returncode == 2
    (line,) = done.stderr.splitlines()
    assert line == f"relay: `relay {args[0]}`: {said} — see `relay {args[0]} --help`"
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (("init", "--iterations", "-1", "--yes"), "--iterations: '-1' is not a whole number"
         " of at least 1"),
        (("init", "--coverage-floor", "120", "--yes"), "--coverage-floor: '120' is not a"
         " percentage (0 to 100)"),
        (("init", "--retries", "-2", "--yes"), "--retries: '-2' is not a whole number of at"
         " least 0"),
        (("run", "--maker", "true", "--max-iterations", "0"), "--max-iterations: '0' is not a"
         " whole number of at least 1"),
    ],
)  # fmt: skip
def test_the_loops_numbers_out_of_bounds_write_nothing(
    tmp_path: Path, args: tuple[str, ...], said: str, request: pytest.FixtureRequest
) -> None:
    """`relay loop init --iterations -1` wrote docs/loop/ with a contract it then refused."""
    git_in(tmp_path, "init", "-q")
    done = relay("loop", *args, cwd=tmp_path, process=first(request))
    assert done.returncode == 2
    (line,) = done.stderr.splitlines()
    command = f"relay loop {args[0]}"
    assert line == f"relay: `{command}`: argument {said} — see `{command} --help`"
    assert [p.name for p in tmp_path.iterdir()] == [".git"]


def git_in(where: Path, *args: str) -> str:
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com"}
    env.update(GIT_COMMITTER_NAME="t", GIT_COMMITTER_EMAIL="t@example.com")
    done = subprocess.run(
        ["git", *args], cwd=where, env=env, capture_output=True, text=True, check=True
    )
    return done.stdout


def a_clone(where: Path) -> Path:
    """A git repository with one commit (what a person's clone looks like to relay)."""
    where.mkdir()
    git_in(where, "init", "-q", "-b", "main")
    (where / "README.md").write_text("mine\n")
    git_in(where, "add", "-A")
    git_in(where, "commit", "-qm", "mine")
    return where


def snapshot(where: Path) -> dict[str, bytes]:
    return {str(p.relative_to(where)): p.read_bytes() for p in where.rglob("*") if p.is_file()}


@pytest.mark.parametrize("kind", ["clone", "files", "file"])
def test_demo_keep_refuses_a_folder_that_holds_something(tmp_path: Path, kind: str) -> None:
    """`relay demo --keep DIR` wrote into any folder, a git clone included."""
    if kind == "clone":
        keep = a_clone(tmp_path / "proj")
        said = f"relay: --keep {keep} is a git clone: relay writes only into a new or empty folder"
    elif kind == "files":
        keep = tmp_path / "notes"
        keep.mkdir()
        (keep / "todo.txt").write_text("x\n")
        said = f"relay: --keep {keep} is not empty (todo.txt): relay writes only into a new or"
        said += " empty folder"
    else:
        keep = tmp_path / "a-file"
        keep.write_text("x\n")
        said = f"relay: --keep {keep} is a file, not a folder"
    before = snapshot(tmp_path)
    done = relay("demo", "--keep", str(keep), cwd=tmp_path, process=kind == "clone")
    assert done.returncode == 2
    assert done.stderr.splitlines() == [f"{said} — give --keep a new folder"]
    assert snapshot(tmp_path) == before and "hub" not in done.stdout  # no hub was started


@pytest.mark.parametrize("kind", ["under-a-file", "cannot-be-made", "empty-word", "old-demo"])
def test_demo_keep_refuses_a_folder_it_cannot_use_in_one_line(tmp_path: Path, kind: str) -> None:
    """`--keep FILE/sub` and `--keep /proc/nope/x` gave tracebacks; `--keep ""` was called
    "--keep . is a git clone"; a demo folder whose hub had stopped was said to have one
    running (from the pid it left), with exit 1."""
    if kind == "under-a-file":
        (tmp_path / "a-file").write_text("x\n")
        keep = str(tmp_path / "a-file" / "sub")
        said = f"relay: cannot make --keep {keep}: Not a directory — give --keep a folder you"
        said += " can write"
    elif kind == "cannot-be-made":
        keep = "/proc/nope/x"
        said = f"relay: cannot make --keep {keep}: No such file or directory — give --keep a"
        said += " folder you can write"
    elif kind == "empty-word":
        keep = ""
        said = "relay: `relay demo`: argument --keep: give --keep a folder, e.g. --keep"
        said += " ./relay-demo — see `relay demo --help`"
    else:  # a kept demo whose hub was stopped: its data stays, its pid file is gone
        old = tmp_path / "old-demo"
        (old / "hub").mkdir(parents=True)
        (old / "hub" / "hub.pid").write_text("999999\n")  # no hub holds it
        keep = str(old)
        said = f"relay: --keep {keep} already holds a demo — give --keep a new folder"
    before = snapshot(tmp_path)
    done = relay("demo", "--keep", keep, cwd=tmp_path, process=kind == "under-a-file")
    assert done.returncode == 2, done.stderr
    assert done.stderr.splitlines() == [said]
    assert snapshot(tmp_path) == before and "hub" not in done.stdout  # no hub was started
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        {"under-a-file": ["a-file"], "old-demo": ["old-demo"]}.get(kind, [])
    )


def test_loop_goal_add_without_a_spine_says_to_init_and_writes_nothing(tmp_path: Path) -> None:
    """It used to write docs/loop/ and commit on the person's branch."""
    clone = a_clone(tmp_path / "proj")
    head = git_in(clone, "rev-parse", "HEAD")
    done = relay("loop", "goal", "add", "Parse dates", "--accept", "true", cwd=clone, process=True)
    assert done.returncode == 2
    assert done.stderr.splitlines() == [
        "relay: no loop in this clone yet (docs/loop/CONTRACT.md is missing)"
        " — run `relay loop init` first, then add the goal"
    ]
    assert git_in(clone, "rev-parse", "HEAD") == head
    assert git_in(clone, "status", "--porcelain", "--untracked-files=all") == ""
