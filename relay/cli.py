"""The `relay` command line: one module per verb under `relay.commands`, one place to render.

Each verb module exposes ``register(subparsers)`` which adds its parser and sets
``func`` to a callable taking the parsed namespace and returning a ``Output``.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import re
import sys
from collections.abc import Sequence

from relay.commands.helptext import add_examples, did_you_mean, epilog, version_only
from relay.errors import LocalUsageError, RelayError

TYPE_CHECKING = False  # typing's constant without loading typing (mypy reads it the same)
if TYPE_CHECKING:  # loaded when a verb runs: `relay --version` imports none of it
    from typing import Any, NoReturn

    from relay.commands.output import Output

# Verb modules, imported lazily so that `relay watch --once` does not pay for the hub.
VERBS: tuple[str, ...] = (
    "init",
    "join",
    "job",
    "task",
    "watch",
    "result",
    "hypothesis",
    "strike",
    "resolve",
    "status",
    "doctor",
    "leave",
    "nodes",
    "redact",
    "hub",
    "demo",
    "loop",
    "completion",
)


# Each verb's one line in `relay --help`, as its module registers it (a test holds them
# equal): the top-level help lists the verbs without importing a single verb module.
SUMMARIES: dict[str, str] = {
    "init": "set relay up in a repository",
    "join": "make this clone a relay node",
    "job": "open a job (one issue)",
    "task": "post the next TASK of a job",
    "watch": "take this node's turns",
    "result": "show a job's newest result",
    "hypothesis": "record a hypothesis",
    "strike": "count a failed round trip",
    "resolve": "resolve and close a job",
    "status": "jobs, batons and nodes",
    "doctor": "check this node's watcher",
    "leave": "remove this node's watcher",
    "nodes": "the signed roster: members, keys, join requests",
    "redact": "redact secrets and personal data from a log (stdin to stdout)",
    "hub": "serve a local GitHub for relay",
    "demo": "run relay end to end on a local hub",
    "loop": "work a backlog of goals",
    "completion": "print a shell completion script",
}


class Parser(argparse.ArgumentParser):
    """argparse whose complaints are relay's usage errors, so that under ``--json`` a bad
    flag is the same envelope as any other failure (every sub-parser is one of these)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        # No abbreviations: `--repo` must never be taken for `--repo-dir` (or any flag for
        # another that starts with it); a flag is named in full or refused.
        kwargs.setdefault("allow_abbrev", False)
        super().__init__(*args, **kwargs)

    def error(self, message: str) -> NoReturn:
        unknown = self.unknown_flags() if message.startswith("the following arguments") else []
        if unknown:  # a mistyped flag (`--work`) is the mistake, not the one it missed
            message = f"unrecognized arguments: {' '.join(unknown)}"
        prog = self.prog
        parser: argparse.ArgumentParser = self
        if prog == "relay" and message.startswith("unrecognized arguments") and self.verb:
            # argparse says it at the top: name the verb (and sub-verbs) it was given to
            prog = f"relay {self.verb_path()}"
            parser = self.named_parser()
        where = "" if prog == "relay" else f"`{prog}`: "
        hint = self.nearest(message, parser, prog) or f"see `{prog} --help`"
        if re.match(r"the following arguments are required: (.*, )?issue\b", message):
            # `relay result #3` unquoted: the shell took `#3` for a comment
            hint = "give its number, 12 (an unquoted #12 is a comment to the shell: write '#12')"
        choice = re.match(r"argument \S+: (invalid choice: '[^']*')", message)
        if choice and hint.startswith("did you mean"):  # the choices are in the hint's place
            message = choice.group(1)
        raise LocalUsageError(f"{where}{message}", hint=hint)

    @staticmethod
    def nearest(message: str, parser: argparse.ArgumentParser, prog: str) -> str:
        """Say "did you mean X?" for a mistyped verb (or sub-verb) or flag, when one is near."""
        choice = re.search(r"invalid choice: '([^']*)' \(choose from (.*)\)", message)
        if choice:
            near = did_you_mean(choice.group(1), re.findall(r"'([^']*)'", choice.group(2)))
            return near.replace("`", f"`{prog} ", 1) if near else ""
        if message.startswith("unrecognized arguments: "):
            words = message.split()[2:]  # `-once` too: a flag typed with one dash
            flags = [w.partition("=")[0] for w in words if w.startswith("-") and w != "-"]
            helps = ("--help", "--help-all")
            known = [
                f for f in parser._option_string_actions if f.startswith("--") and f not in helps
            ]
            return next(filter(None, (did_you_mean(f, known) for f in flags)), "")
        return ""

    verb = ""  # the verb of the line being parsed, for the hint above
    words: Sequence[str] = ()  # the line being parsed
    line: Sequence[str] = ()  # the same, for the sub-parsers (which report missing flags)

    def unknown_flags(self) -> list[str]:
        """The line's flags that neither this parser nor the top one knows."""
        known = {*self._option_string_actions, "--version", "-h", "--help"}
        flags = [w.partition("=")[0] for w in Parser.line if w.startswith("-") and w != "-"]
        return [f for f in flags if f not in known and not f.lstrip("-").isdigit()]

    def verb_path(self) -> str:
        """The verb and sub-verbs the line names (``hub repo create``), walking the tree."""
        return " ".join(self.walk()[0]) or self.verb

    def named_parser(self) -> argparse.ArgumentParser:
        """The parser of the verb and sub-verbs the line names."""
        return self.walk()[1]

    def walk(self) -> tuple[list[str], argparse.ArgumentParser]:
        parser: argparse.ArgumentParser = self
        names: list[str] = []
        for word in self.words:
            subs = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
            if not subs or word not in subs[0].choices:
                break
            parser = subs[0].choices[word]
            names.append(word)
        return names, parser


# Verbs with sub-verbs, for naming the command in the --json envelope.
SUB_VERBS: dict[str, tuple[str, ...]] = {
    "job": ("open", "repair"),
    "nodes": ("approve", "sign", "key"),
    "hub": ("token", "repo", "env"),
    "loop": ("init", "goal", "status", "next", "check", "run", "roles", "interrupt", "make-here"),
}


def build_parser(
    argv: Sequence[str] | None = None, *, lazy: bool = False
) -> argparse.ArgumentParser:
    """Build the parser; only the verb named in ``argv`` is imported, so that a scheduled
    `relay watch --once` does not pay for the hub or the wizard. A line that names no verb
    (`relay --help`, a mistyped verb) loads them all, unless ``lazy``: then each is listed
    by its summary, and none is imported (what the command line does)."""
    from relay import __version__

    parser = Parser(
        prog="relay",
        description="Hand work between machines through GitHub issues.",
        epilog=epilog(""),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"relay {__version__}")
    # the whole tree, every verb loaded, for verbs that describe it (`relay completion`)
    parser.set_defaults(whole_parser=lambda: build_parser([]))
    sub = parser.add_subparsers(dest="verb", metavar="VERB")
    sub.required = True
    words = list(sys.argv[1:] if argv is None else argv)
    chosen = [w for w in words[:1] if w in VERBS] or list(VERBS)
    parser.verb = " ".join(words[:1]) if words[:1] == chosen else ""
    if lazy and not parser.verb:  # the verb a flag came before (`relay --json status`), if any
        chosen = [w for w in words if w in VERBS][:1]
    parser.words = Parser.line = words
    for verb in VERBS:
        if verb in chosen:
            importlib.import_module(f"relay.commands.{verb}").register(sub)
        else:
            sub.add_parser(verb, help=SUMMARIES[verb] if lazy else f"see `relay {verb} --help`")
    add_examples(parser)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run one CLI invocation and return its exit status."""
    words = list(sys.argv[1:] if argv is None else argv)
    answer = version_only(words)
    if answer is not None:  # before any verb is imported: it answers at once
        print(answer)
        return 0
    if words in (["--help"], ["-h"]):  # the verbs' list: no verb module loads, nothing runs
        build_parser(words, lazy=True).parse_args(words)  # prints it, and exits
    from relay.edges.ownpath import fence_start

    fence_start(repo_dir_of(words))  # before a verb's module (or an optional one) loads
    json_output = "--json" in words
    command = command_of(words)
    stop_steps_on_signals()
    try:
        status = _run(words, json_output=json_output, command=command)
        return stopped_by() or status
    except KeyboardInterrupt:
        kill_steps()
        print("relay: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # `relay status | head`: the reader has gone, as Unix tools do
        sys.stderr.close()
        return 141
    finally:  # answers kept for this command's client (GETs sent early) are not the next one's
        primed = sys.modules.get("relay.edges.github.primed")
        if primed is not None:
            primed.forget()
        if argv is None:  # the process's own command line: it ends with this call
            _no_last_collection()


def _no_last_collection() -> None:
    """Spare the ending process the garbage collector's last pass over every object relay
    made (tens of milliseconds after a loop iteration): each is freed with the process, and
    nothing of relay's waits on a collection to finish its work (files are closed, and the
    box folders' removal is joined at exit, as before)."""
    import gc

    gc.freeze()


def _run(words: list[str], *, json_output: bool, command: str) -> int:
    repo_dir = None
    try:
        try:
            args = build_parser(words, lazy=True).parse_args(words)
            if getattr(args, "find_clone", False):  # -R OWNER/NAME, or an issue's URL
                from relay.commands.repos import find_clone

                find_clone(args)
            repo_dir = getattr(args, "repo_dir", None)
            if repo_dir is not None:  # found by -R: its clone is fenced as the named one is
                from relay.edges.ownpath import fence_work_tree

                fence_work_tree(repo_dir)
            result: Output = args.func(args)
            from relay.commands.output import render  # after the parser: `--help` needs none

            render(result, json_output=json_output, command=command)
            return result.exit_status
        except Exception as exc:  # git missing, or a git command no edge expected to fail
            from relay.edges.git import as_relay_error

            mapped = None if isinstance(exc, RelayError) else as_relay_error(exc)
            if mapped is None:
                raise
            raise mapped from exc
    except RelayError as err:
        from relay.commands.output import envelope, error_entry, say, write_json
        from relay.node.redaction import redacted

        typed = {f"relaytyped{i}x": word for i, word in enumerate(err.typed) if word}

        def clean(text: str) -> str:
            for mark, word in typed.items():
                text = text.replace(word, mark)
            text = redacted(text, repo_dir=repo_dir)
            for mark, word in typed.items():
                text = text.replace(mark, word)
            return text

        # the message may quote paths and command output, so it is redacted; the hint is
        # relay's own words (what to run, which flag), never redacted into nonsense
        message, hint = clean(err.message), err.hint
        if json_output:  # the failure is the same envelope, with the error in it
            entry = error_entry(err, message, hint)
            write_json(envelope(command, data={}, exit_code=err.exit_status, errors=[entry]))
        else:
            say(f"relay: {message}{f' — {hint}' if hint else ''}")
        return err.exit_status


def repo_dir_of(words: Sequence[str]) -> str | None:
    """The clone a line names with ``--repo-dir`` (read before any parser is built, so
    that nothing is imported or run before its folders are fenced); None when none."""
    found = None
    for i, word in enumerate(words):
        if word == "--":
            break
        if word == "--repo-dir" and i + 1 < len(words):
            found = words[i + 1]
        elif word.startswith("--repo-dir="):
            found = word.partition("=")[2]
    return found or None


def command_of(words: Sequence[str]) -> str:
    """The command a line of words names: the verb, and the sub-verb of those that have one
    (``job open``, ``hub token``); never a positional argument or a flag's value."""
    verb = words[0] if words and words[0] in VERBS else ""
    sub = words[1] if verb in SUB_VERBS and len(words) > 1 else ""
    return " ".join(filter(None, [verb, sub if sub in SUB_VERBS.get(verb, ()) else ""]))


def stopped_by() -> int:
    """The exit status of a command whose steps were stopped by a signal (Ctrl-C: 130;
    SIGTERM: 143), which it answered with a `stopped` RESULT; 0 when none was."""
    steps = sys.modules.get("relay.edges.steps")
    signum = steps.stop_requested() if steps is not None else 0
    if steps is not None:
        steps.reset_stop()  # the next command in this process starts unstopped
    return 128 + signum if signum else 0


def kill_steps() -> None:
    """Kill the task steps this process runs (they live in sessions of their own)."""
    if "relay.edges.steps" in sys.modules:
        sys.modules["relay.edges.steps"].kill_running_steps()


def stop_steps_on_signals() -> None:
    """A scheduler stops a pass with SIGTERM: take its running steps down with it, so
    nothing runs on unsupervised after the next pass reports the task half-done."""
    import signal

    def stop(signum: int, _frame: object) -> None:
        kill_steps()
        raise SystemExit(128 + signum)

    with contextlib.suppress(ValueError):  # not the main thread: its handlers are not ours
        signal.signal(signal.SIGTERM, stop)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
