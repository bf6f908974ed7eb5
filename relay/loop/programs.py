"""Which program a role runs, decided purely, for the rule that the maker never grades:
``sh tools/maker.sh``, ``./tools//maker.sh``, ``tools/maker.sh`` and the script's absolute
path in the clone are one program; ``agent claude:review`` and ``claude -p`` are one too.

Ground rules: a command's program is what runs once its interpreter is stripped (``sh``,
``bash``, ``python``, ``env`` and the like, with their options and ``VAR=value``
assignments); a path is normalised (``./``, ``//``, ``..``) and, inside the clone, made
relative to it; an agent adapter is the CLI of its name. Nothing here reads the disk.
"""

from __future__ import annotations

import posixpath
import re
import shlex

from relay.loop.agents import parse_role

# interpreters a command may start with: the program is the script they are given
_INTERPRETER = re.compile(
    r"^(?:sh|bash|dash|zsh|ksh|env|exec|python(?:\d+(?:\.\d+)*)?|pypy\d*|node|ruby|perl|uv)$"
)
_ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")
_SHELL_SYNTAX = re.compile(r"[;&|<>`$()\n{}]")
# options of an interpreter that take the next word as their value
_TAKES_VALUE = {"env": {"-u", "-C", "-S"}, "python": {"-W", "-X"}, "sh": {"-o", "-O"}}


def _words(command: str) -> list[str]:
    try:
        return shlex.split(command)
    except ValueError:
        return command.split()


def _path(word: str, root: str) -> str:
    """A program's word as one spelling: a path normalised and, in the clone, relative to
    it; a bare name as it is."""
    if "/" not in word:
        return word
    root = posixpath.normpath(root) if root else ""
    if posixpath.isabs(word):
        path = posixpath.normpath(word)
        if root and (path == root or path.startswith(root.rstrip("/") + "/")):
            return posixpath.relpath(path, root)
        return path
    return posixpath.normpath(word)


def program_of(command: str, *, root: str = "") -> str:
    """The program ``command`` runs, as one spelling (``root``: the clone's absolute path,
    so a script's absolute path there is the same program as its relative one)."""
    agent = parse_role(command)
    if agent is not None:
        return agent.name
    words = _words(command)
    index = 0
    while index < len(words):
        word = words[index]
        base = posixpath.basename(word)
        if _ASSIGNMENT.match(word):
            index += 1
            continue
        if _INTERPRETER.match(base):
            index += 1
            if base == "uv" and index < len(words) and words[index] == "run":
                index += 1
            while index < len(words) and words[index].startswith("-"):
                option = words[index]
                if option == "-c" and index + 1 < len(words):
                    code = words[index + 1]
                    if _SHELL_SYNTAX.search(code):  # a script of its own: its text is it
                        return "-c " + " ".join(code.split())
                    return program_of(code, root=root)
                if option == "-m" and index + 1 < len(words):
                    return f"-m {words[index + 1]}"
                family = "python" if base.startswith(("python", "pypy")) else base
                family = "sh" if family in ("bash", "dash", "zsh", "ksh") else family
                index += 2 if option in _TAKES_VALUE.get(family, ()) else 1
            continue
        return _path(word, root)
    return " ".join(command.split())


def same_program(one: str, other: str, *, root: str = "") -> bool:
    """Whether two roles' commands (or agent adapters) run the same program."""
    if not one.strip() or not other.strip():
        return False
    return program_of(one, root=root) == program_of(other, root=root)
