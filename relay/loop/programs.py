"""Which programs a role runs, decided purely, for the rule that the maker never grades:
a role's line runs under ``/bin/sh -c``, so every simple command of it runs, and each
one's program is what is left once its wrappers are stripped. ``timeout 600
./tools/maker.sh``, ``cd tools && ./maker.sh``, ``true && tools/maker.sh``, ``sh
tools/maker.sh``, ``uv run --with x python tools/maker.py`` all run the maker's script;
``agent claude:review``, ``/usr/local/bin/claude -p`` and ``npx claude`` run ``claude``.

Ground rules: a line is split into simple commands at ``&&``, ``||``, ``;``, ``|``, ``&``,
newlines, parentheses and command substitutions; ``cd DIR`` moves where the next relative
path is read from; leading ``VAR=value`` assignments go; wrappers (timeout, nice, time,
env, nohup, stdbuf, ionice, xargs, npx, uvx, ``uv run``, ``pipx run``, ``poetry run``, a
shell or an interpreter with its options) are stripped with their options, repeatedly; a
path is normalised and, inside the clone, made relative to it; a Python module is its
file (``-m tools.maker`` is ``tools/maker.py``); a bare name found on PATH is any path of
that base name. Commands that only move text or files (``cd``, ``true``, ``echo``,
``git``...) are no role's identity. Nothing here reads the disk.
"""

from __future__ import annotations

import posixpath
import re
import shlex

from relay.loop.agents import parse_role

_ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")
_SEPARATORS = frozenset({"&&", "||", ";", ";;", "|", "|&", "&", "\n", "(", ")", "{", "}"})
_REDIRECT = re.compile(r"^[<>&]+$|^\d*[<>]")
_SHELLS = re.compile(r"^(?:sh|bash|dash|zsh|ksh|mksh|ash|fish)$")
_PYTHON = re.compile(r"^(?:python(?:\d+(?:\.\d+)*)?|pypy\d*|py)$")
_SCRIPTED = re.compile(r"^(?:node|deno|bun|ruby|perl|php|Rscript|lua|tclsh)$")
# wrappers: the options of each that take the next word, and how many plain words it
# takes before the program it runs (``timeout 600 PROG``, ``flock FILE PROG``)
_WRAPPERS: dict[str, tuple[frozenset[str], int]] = {
    "timeout": (frozenset({"-s", "--signal", "-k", "--kill-after"}), 1),
    "nice": (frozenset({"-n", "--adjustment"}), 0),
    "time": (frozenset({"-o", "--output", "-f", "--format"}), 0),
    "env": (frozenset({"-u", "--unset", "-C", "--chdir", "-S", "--split-string"}), 0),
    "nohup": (frozenset(), 0),
    "stdbuf": (frozenset({"-i", "-o", "-e"}), 0),
    "ionice": (frozenset({"-c", "--class", "-n", "--classdata", "-p", "--pid"}), 0),
    "chrt": (frozenset(), 1),
    "taskset": (frozenset(), 1),
    "flock": (frozenset({"-w", "--timeout", "-E", "--conflict-exit-code"}), 1),
    "xargs": (
        frozenset({"-n", "-I", "-i", "-P", "-L", "-l", "-d", "-s", "-E", "-e", "-a"}),
        0,
    ),
    "npx": (frozenset({"-p", "--package", "--registry", "--cache"}), 0),
    "uvx": (frozenset({"--from", "--with", "--python", "-p", "--index", "--extra-index-url"}), 0),
    "exec": (frozenset({"-a"}), 0),
    "command": (frozenset(), 0),
    "builtin": (frozenset(), 0),
    "sudo": (frozenset({"-u", "--user", "-g", "--group", "-C", "-D", "--chdir"}), 0),
    "doas": (frozenset({"-u"}), 0),
    "caffeinate": (frozenset({"-t", "-w"}), 0),
    "watch": (frozenset({"-n", "--interval", "-d"}), 0),
    "strace": (frozenset({"-o", "-e", "-p", "-s"}), 0),
    "valgrind": (frozenset(), 0),
}
_UV_RUN = frozenset(
    {"--with", "--with-requirements", "--with-editable", "--python", "-p", "--project",
     "--directory", "--package", "--extra", "--group", "--env-file", "--index",
     "--extra-index-url", "--from", "-w"}
)  # fmt: skip
# wrappers of two words (``uv run``), with the options that take the next word
_RUNNERS: dict[tuple[str, str], frozenset[str]] = {
    ("uv", "run"): _UV_RUN,
    ("uv", "tool"): frozenset(),  # ``uv tool run``: its ``run`` follows
    ("tool", "run"): frozenset({"--from", "--with", "--python", "-p"}),
    ("pipx", "run"): frozenset({"--spec", "--python", "--index-url", "--pip-args"}),
    ("poetry", "run"): frozenset({"-C", "--directory", "-P", "--project"}),
    ("pdm", "run"): frozenset({"-p", "--project"}),
    ("hatch", "run"): frozenset(),
    ("pipenv", "run"): frozenset(),
    ("conda", "run"): frozenset({"-n", "--name", "-p", "--prefix"}),
    ("mamba", "run"): frozenset({"-n", "--name", "-p", "--prefix"}),
    ("npm", "exec"): frozenset({"-p", "--package", "-c", "--call"}),
    ("pnpm", "exec"): frozenset(),
    ("pnpm", "dlx"): frozenset(),
    ("yarn", "dlx"): frozenset({"-p", "--package"}),
    ("bundle", "exec"): frozenset(),
    ("cargo", "run"): frozenset({"-p", "--package", "--bin"}),
}
_SHELL_VALUE = frozenset({"-o", "-O", "+o", "+O", "--rcfile", "--init-file"})
_PYTHON_VALUE = frozenset({"-W", "-X", "--check-hash-based-pycs"})
# programs that only move text or files: two roles running them share no judgement
NEUTRAL = frozenset(
    {"cd", "pushd", "popd", "true", "false", ":", "echo", "printf", "test", "[", "[[",
     "cat", "tee", "git", "grep", "sed", "awk", "head", "tail", "sort", "uniq", "wc", "tr",
     "cut", "mkdir", "rm", "cp", "mv", "ls", "touch", "export", "set", "unset", "exit",
     "sleep", "wait", "read", "source", ".", "trap", "umask", "ulimit", "jq", "date",
     "shift", "return", "eval", "if", "then", "else", "elif", "fi", "for", "while",
     "do", "done", "case", "esac", "!"}
)  # fmt: skip


def _lex(command: str) -> list[str]:
    """A shell line's words and separators (backquotes and ``$(`` open a command of
    their own)."""
    text = command.replace("`", "\n").replace("$(", "\n(")
    lexer = shlex.shlex(text, posix=True, punctuation_chars="();<>|&\n")
    lexer.whitespace = " \t\r"
    lexer.whitespace_split = True
    lexer.commenters = ""
    try:
        return list(lexer)
    except ValueError:  # an unclosed quote: read it as plain words
        return text.replace("\n", " ; ").split()


def simple_commands(command: str) -> list[list[str]]:
    """The simple commands of a shell line, each as its words (redirections dropped)."""
    found: list[list[str]] = [[]]
    words = _lex(command)
    index = 0
    while index < len(words):
        word = words[index]
        if word in _SEPARATORS or set(word) <= set("();|&\n"):
            found.append([])
        elif _REDIRECT.match(word):
            index += 0 if re.match(r"^\d*[<>]+&?\S", word) else 1  # ``>out`` or ``> out``
        else:
            found[-1].append(word)
        index += 1
    return [c for c in found if c]


def _skip_options(words: list[str], index: int, takes_value: frozenset[str]) -> int:
    """The index past a program's options (``-x``, ``--x=v``, ``-n 10``, ``-n10``)."""
    while index < len(words) and words[index].startswith(("-", "+")) and words[index] != "-":
        option = words[index]
        index += 1
        if option == "--":
            break
        if option in takes_value and index < len(words):
            index += 1
    return index


def _path(word: str, root: str, cwd: str) -> str:
    """A program's word as one spelling: a path joined to the ``cd`` before it,
    normalised and, in the clone, made relative to it; a bare name as it is."""
    if "/" not in word:
        return word
    root = posixpath.normpath(root) if root else ""
    path = word if posixpath.isabs(word) else posixpath.join(cwd or ".", word)
    path = posixpath.normpath(path)
    if posixpath.isabs(path) and root and (path == root or path.startswith(root + "/")):
        path = posixpath.relpath(path, root)
    return path


def _module_file(module: str, root: str, cwd: str) -> str:
    """A Python module as its file in the clone (``tools.maker`` is ``tools/maker.py``),
    found from where it runs (Python puts that first on its path)."""
    parts = [p for p in module.split(".") if p]
    if parts and parts[-1] == "__main__":
        parts.pop()
    return _path("./" + "/".join(parts) + ".py", root, cwd)


def _script(word: str, root: str, cwd: str) -> str:
    path = _path(word, root, cwd)
    if path.endswith("/__main__.py"):
        return path.removesuffix("/__main__.py") + ".py"
    return path


def _programs_of_words(words: list[str], root: str, cwd: str) -> list[str]:
    """The program one simple command runs (a ``-c`` script's own commands too)."""
    index = 0
    while index < len(words):
        word = words[index]
        base = posixpath.basename(word)
        if _ASSIGNMENT.match(word):
            index += 1
            continue
        nxt = words[index + 1] if index + 1 < len(words) else ""
        if (base, nxt) in _RUNNERS:
            index = _skip_options(words, index + 2, _RUNNERS[(base, nxt)])
            continue
        if base in _WRAPPERS:
            takes, plain = _WRAPPERS[base]
            index = _skip_options(words, index + 1, takes)
            if base == "nice" and index < len(words) and re.match(r"^-?\d+$", words[index]):
                index += 1
            index += plain
            continue
        if _SHELLS.match(base):
            at = index + 1
            while at < len(words) and words[at].startswith(("-", "+")) and words[at] != "--":
                if "c" in words[at].lstrip("-+") and not words[at].startswith("--"):
                    rest = [w for w in words[at + 1 :] if not w.startswith("-")]
                    return programs_of(rest[0], root=root, cwd=cwd) if rest else [base]
                at += 2 if words[at] in _SHELL_VALUE else 1
            at += 1 if at < len(words) and words[at] == "--" else 0
            if at >= len(words):
                return [base]
            index = at
            return [_script(words[index], root, cwd)]
        if _PYTHON.match(base) or _SCRIPTED.match(base):
            at = index + 1
            while at < len(words) and words[at].startswith("-") and words[at] != "-":
                option = words[at]
                if option.startswith("-m"):  # ``-m mod`` or ``-mmod``
                    module = words[at + 1] if option == "-m" and at + 1 < len(words) else ""
                    return [_module_file(module or option[2:], root, cwd)]
                if option in ("-c", "-e", "--eval") and at + 1 < len(words):
                    return [f"{base} {option} " + " ".join(words[at + 1].split())]
                at += 2 if option in _PYTHON_VALUE else 1
            if at >= len(words):
                return [base]
            return [_script(words[at], root, cwd)]
        agent = parse_role(" ".join(words[index:]))
        if agent is not None:
            return [agent.name]
        return [_script(word, root, cwd)]
    return []


def programs_of(command: str, *, root: str = "", cwd: str = "") -> list[str]:
    """Every program ``command`` runs, in order, each as one spelling (``root``: the
    clone's absolute path, so a script's absolute path there is its relative one)."""
    agent = parse_role(command)
    if agent is not None:
        return [agent.name]
    found: list[str] = []
    for words in simple_commands(command):
        if words[0] in ("cd", "pushd"):
            target = words[1] if len(words) > 1 else ""
            if not target or target == "-" or target.startswith(("~", "$")):
                cwd = ""
            else:
                cwd = _path(target if "/" in target else f"./{target}", root, cwd)
            continue
        for program in _programs_of_words(words, root, cwd):
            if program not in found:
                found.append(program)
    return found


def program_of(command: str, *, root: str = "") -> str:
    """The first program ``command`` runs that is not a neutral one (the whole line, as
    one spelling, when it runs none)."""
    for program in programs_of(command, root=root):
        if program not in NEUTRAL:
            return program
    return " ".join(command.split())


def _same(one: str, other: str) -> bool:
    """One program under two spellings: equal, or a bare name (found on PATH) and a path
    of that base name (``claude`` and ``/usr/local/bin/claude``)."""
    if one == other:
        return True
    if "/" not in one and " " not in one:
        return posixpath.basename(other) == one
    if "/" not in other and " " not in other:
        return posixpath.basename(one) == other
    return False


def shared_program(one: str, other: str, *, root: str = "") -> str | None:
    """A program both roles' lines run (neither a neutral one), or None."""
    if not one.strip() or not other.strip():
        return None
    mine = [p for p in programs_of(one, root=root) if p not in NEUTRAL]
    theirs = [p for p in programs_of(other, root=root) if p not in NEUTRAL]
    for program in mine:
        if any(_same(program, p) for p in theirs):
            return program
    return None


def same_program(one: str, other: str, *, root: str = "") -> bool:
    """Whether two roles' commands (or agent adapters) run a program in common."""
    return shared_program(one, other, root=root) is not None
