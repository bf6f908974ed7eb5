"""Destructive by what a step does, not only by its label.

The controller chooses a TASK's ``scope``; an attacker who controls the controller can
call ``rm -rf ~`` a ``build``. So the worker reads every step itself: a step that deletes,
overwrites or reconfigures something outside the work tree is destructive whatever the
scope says, and its TASK needs ``authorized-by-human: yes`` and then a person's approval
(:mod:`relay.protocol.approvals`), or is declined where destructive steps are forbidden.

What counts (the rules live in :mod:`relay.protocol.destructive_rules`, one per program):
any recursive removal, since where ``rm -rf "$DIR"`` ends cannot be read from the step
(``rm -r``, ``rd /s``, ``del /s``, ``Remove-Item -Recurse``, ``find -delete`` or ``-exec
rm``); force pushes and remote branch deletion (``git push --force``, ``-f``, ``+refspec``,
``--force-with-lease``, ``--delete``, ``:branch``); ``git clean -x`` (ignored files: local
settings, caches, secrets no commit restores); writing disks (``dd of=/dev/…``, ``>
/dev/sda``, ``mkfs``, ``format``, ``diskpart``, ``fdisk``, ``parted``, ``wipefs``),
``shred``, ``truncate``; ``chmod/chown -R``, ``sed -i``, ``mv`` or ``unlink`` of a path
outside the work tree; ``rsync --delete``; registry, service and scheduled-task changes
(``reg add/delete``, ``sc delete/config``, ``systemctl stop/disable/mask``, ``launchctl
unload/bootout``, ``service X stop``, ``schtasks /delete``); package removal (apt, dnf,
yum, pip, ``npm -g``, brew, choco, winget, …); SQL ``DROP``/``TRUNCATE`` given to a
database client (psql, mysql, sqlite3, …, in its arguments or piped to it); ``docker
system prune``, ``docker rm -f``, ``kubectl delete``, ``terraform destroy``, ``gh
repo/release delete``; ``shutdown``, ``reboot``, ``kill -9 -1``; and any command the
shared scope lists under "Destructive commands" (its leading words: ``make release``
matches ``make -j4 release``; a script matches by file name).

Not destructive: work inside the work tree relay checked out — ``rm -f build/out.o``,
``rm file.txt``, ``git reset --hard`` and ``git clean -fd`` there (relay's own clone;
either is destructive with ``git -C`` pointing elsewhere), ``git push``, ``pip install``.
Quoted text given to a program is data (``echo "rm -rf /"``, ``grep DROP schema.sql``),
except where it is code: ``sh -c``/``bash -c``, ``eval``, ``cmd /c``, ``powershell
-Command`` (and ``-EncodedCommand``), ``su -c``, ``ssh host …``, ``$(…)`` and backticks,
``find -exec``, and text piped into a shell or ``Invoke-Expression``.

How a step is read: commands are split at ``&&``, ``||``, ``;``, ``|``, ``&``, parentheses
and braces; prefixes (``sudo``, ``env``, ``xargs``, ``nohup``, ``time``, ``timeout``,
``nice``, ``VAR=value``, …) are skipped; a program is known by its file name whatever its
directory, quotes, case or ``.exe``, or by a variable the step sets (``R=rm; $R -rf``,
``set R=rd``, ``$c = 'Remove-Item'``). A POSIX step is read with :mod:`shlex`; when shlex
cannot (an open quote), the step is judged on its words: every known program name in it
starts a command. A step with no shell named is read both as POSIX sh and as cmd.exe. Every
scan is linear in the step (at most 1000 characters), nested code at most four deep; a
step nested deeper is destructive. Interpreter one-liners (``python -c``, ``node -e``, …)
and code the step cannot show (``curl … | sh``, ``$(…) -rf /``) are read by
:mod:`relay.protocol.destructive_code`. This reads the usual ways to write commands, no
proof: a script the step only names is judged by what shows.
"""

from __future__ import annotations

import shlex
from functools import lru_cache

from relay.protocol.destructive_code import one_liner, substituted, unread_input
from relay.protocol.destructive_rules import (
    PWSH,
    SHELLS,
    SQL_CLIENTS,
    code_of,
    find_runs,
    names,
    outside,
    sql_reason,
)
from relay.protocol.destructive_rules import system_path as _system_path
from relay.protocol.destructive_system import rule_for
from relay.protocol.messages import TaskMsg

_DEPTH = 4
_DIALECTS = {
    None: ("sh", "cmd"),
    "sh": ("sh",),
    "bash": ("sh",),
    "cmd": ("cmd",),
    "powershell": ("powershell",),
    "pwsh": ("powershell",),
}
_WRAPPERS: dict[str, frozenset[str]] = {  # prefix -> its options that take a value
    "sudo": names("-u -g -h -p -C -U -r -t -D"),
    "doas": frozenset({"-u", "-C"}),
    "env": frozenset({"-u", "-C", "-S"}),
    "xargs": names("-I -i -n -P -L -l -s -d -E -e -a"),
    "nice": frozenset({"-n"}),
    "ionice": frozenset({"-c", "-n", "-p"}),
    "stdbuf": frozenset({"-i", "-o", "-e"}),
    **dict.fromkeys(
        names(
            "nohup time command exec builtin busybox caffeinate unbuffer then do else elif if"
            " while until ! { } call start"
        ),
        frozenset[str](),
    ),
}
_ONE_ARG = frozenset({"timeout", "chroot"})  # a prefix with one argument before the command
_ESCAPES = {"sh": "\\", "powershell": "`"}
_OPS = frozenset(";&|()<>{}")
_CMD_OPS = frozenset("&|()<>")  # cmd.exe: ';' and braces are plain characters
_CODE = frozenset({"find", "eval", "iex", "invoke-expression", "cmd", "su", "ssh"})
_PROGRAMS = SHELLS | PWSH | _WRAPPERS.keys() | _ONE_ARG | _CODE
_BUDGET = 60_000  # characters read for one step, nested code included
TOO_COMPLEX = "nested too deep to be read safely"


@lru_cache(maxsize=2048)
def classify(step: str, extra: tuple[str, ...] = (), *, shell: str | None = None) -> str | None:
    """Why ``step`` is destructive (a short reason), or None. ``extra``: the shared scope's
    own destructive commands; ``shell``: the TASK's (None reads it as sh and as cmd)."""
    known = tuple(w for w in (_words(e) for e in extra) if w)
    for dialect in _DIALECTS.get(shell, ("sh", "cmd", "powershell")):
        reader = _Reader(known)
        try:
            why = reader.judge(step, dialect, 0)
        except _TooComplex:
            return TOO_COMPLEX
        if why is not None:
            return why
    return None


def task_destructive(task: TaskMsg, extra: tuple[str, ...] = ()) -> tuple[int, str] | None:
    """The first destructive step of ``task`` (numbered from 1) and why, or None."""
    for number, step in enumerate(task.steps, start=1):
        why = classify(step, tuple(extra), shell=task.shell)
        if why is not None:
            return number, why
    return None


class _TooComplex(Exception):
    """More nested code than a step of 1000 characters honestly needs."""


def _words(text: str) -> list[str]:
    """A listed command's or a variable's words (a Windows path keeps its backslashes)."""
    try:
        return shlex.split(text, posix="\\" not in text)
    except ValueError:
        return text.split()


def _name(word: str) -> str:
    """A program's name: no directory, no ``.exe``, lower-case (``"/bin/RM"`` is ``rm``)."""
    base = word.strip().lstrip("@&").replace("\\", "/").rsplit("/", 1)[-1].lower()
    return base[:-4] if base.endswith((".exe", ".com")) else base


def _tokens(text: str, dialect: str) -> tuple[list[tuple[str, bool]], bool]:
    """(word, is_operator) pairs, and whether the text parsed (else its words only)."""
    if dialect != "cmd":
        punctuation = "();<>|&" + ("{}" if dialect == "powershell" else "")  # sh: ${X}
        lexer = shlex.shlex(text, posix=True, punctuation_chars=punctuation)
        lexer.whitespace_split = True
        lexer.commenters = ""
        lexer.escape = _ESCAPES[dialect]
        try:
            return [(t, bool(t) and set(t) <= set(punctuation)) for t in lexer], True
        except ValueError:
            bare = text.replace("'", "").replace('"', "")  # judged on its words
            return _loose(bare, quotes="", ops=_OPS), False
    return _loose(text, quotes='"', ops=_CMD_OPS, caret=True), True


def _loose(
    text: str, *, quotes: str, ops: frozenset[str], caret: bool = False
) -> list[tuple[str, bool]]:
    """A tokenizer that never fails: cmd.exe's rules (``"`` quotes, ``^`` escapes), or,
    for a step shlex cannot read, its words (``quotes`` empty)."""
    found: list[tuple[str, bool]] = []
    word: list[str] = []
    op: list[str] = []
    quoted = escaped = False
    for char in text:
        is_op = char in ops and not quoted and not escaped
        if op and not is_op:
            found.append(("".join(op), True))
            op = []
        if escaped:
            word.append(char)
            escaped = False
        elif caret and char == "^" and not quoted:
            escaped = True
        elif char in quotes:
            quoted = not quoted
        elif not quoted and (is_op or char.isspace()):
            if word:
                found.append(("".join(word), False))
                word = []
            if is_op:
                op.append(char)
        else:
            word.append(char)
    if word:
        found.append(("".join(word), False))
    if op:
        found.append(("".join(op), True))
    return found


def _pipelines(tokens: list[tuple[str, bool]]) -> tuple[list[list[list[str]]], list[str]]:
    """Commands grouped in pipelines, and every redirection target (``> /dev/sda``)."""
    pipelines: list[list[list[str]]] = [[[]]]
    targets: list[str] = []
    redirect = False
    for text, is_op in tokens:
        if not is_op:
            if redirect:
                targets.append(text)
            else:
                pipelines[-1][-1].append(text)
            redirect = False
        elif set(text) <= set("<>&") and set(text) & set("<>"):
            redirect = True
        elif text in ("|", "|&"):
            pipelines[-1].append([])
        else:
            pipelines.append([[]])
    return [[c for c in p if c] for p in pipelines if any(p)], targets


def _options_end(words: list[str], index: int, name: str) -> int:
    """Where a prefix's own options end (``sudo -u root``, ``start "" /wait``)."""
    valued = _WRAPPERS.get(name, frozenset())
    marks = ("-", "/") if name == "start" else ("-",)
    while index < len(words):
        word = words[index]
        if word == "--":
            return index + 1
        if not (word.startswith(marks) and word != "-") and not (word == "" and name == "start"):
            break
        index += 2 if word in valued else 1
    return index


def _unwrap(words: list[str]) -> list[str]:
    """``words`` without the prefixes that run the rest as a command (sudo, env, …)."""
    index = 0
    while index < len(words):
        word = words[index]
        name = _name(word)
        if "=" in word and word.split("=", 1)[0].isidentifier():
            index += 1  # VAR=value
        elif name in _WRAPPERS or name in _ONE_ARG:
            index = _options_end(words, index + 1, name) + (1 if name in _ONE_ARG else 0)
        else:
            break
    return words[index:]


class _Reader:
    """One reading of one step in one dialect; ``spent`` bounds the nested code read."""

    def __init__(self, extra: tuple[list[str], ...]) -> None:
        self.extra = extra
        self.spent = 0
        self.values: dict[str, str] = {}  # the step's own variables: R=rm; $R -rf x

    def judge(self, text: str, dialect: str, depth: int) -> str | None:
        self.spent += len(text) + 1
        if self.spent > _BUDGET or depth > _DEPTH:
            raise _TooComplex
        if dialect == "sh" and ("$(" in text or "`" in text):
            why, rewritten = substituted(text)  # $(printf rm) -rf /, bash -c "$(curl …)"
            if why is None and rewritten is not None:
                why = self.judge(rewritten, dialect, depth + 1)
            if why is not None:
                return why
        tokens, parsed = _tokens(text, dialect)
        pipelines, targets = _pipelines(tokens)
        for target in targets:
            if _system_path(target):
                return f"overwrites {target[:40]} (> {target[:40]})"
        for pipeline in pipelines:
            why = self.pipeline(pipeline, dialect, depth, parsed=parsed)
            if why is not None:
                return why
        if dialect == "sh" and "`" in text:  # `…` runs what is between the backticks
            why = self.judge(text.replace("`", " ; "), dialect, depth + 1)
            if why is not None:
                return why
        if dialect == "cmd":
            return None
        for word, is_op in tokens:  # command substitution inside quoted words is code too
            if not is_op and "$(" in word:
                inner = word.replace("$(", " ; ").replace(")", " ; ")
                why = self.judge(inner, dialect, depth + 1)
                if why is not None:
                    return why
        return None

    def pipeline(
        self, pipeline: list[list[str]], dialect: str, depth: int, *, parsed: bool
    ) -> str | None:
        before: list[str] = []
        programs: set[str] = set()
        for words in pipeline:
            loose = not parsed or words[0].lower() == "if"  # cmd: if exist x rd /s x
            starts = [i for i, w in enumerate(words) if self.known(w)] if loose else [0]
            for start in starts:
                why, name = self.command(words[start:], dialect, depth, before)
                if why is not None:
                    return why
                programs.add(name)
            before = words
        if programs & SQL_CLIENTS:
            why = sql_reason(" ".join(w for words in pipeline for w in words))
            if why is not None:
                return why
        listing = programs & {"get-childitem", "gci", "dir", "ls"}
        removing = programs & {"remove-item", "ri", "rm", "del"} and len(pipeline) > 1
        flags = (w.lower() for p in pipeline for w in p if len(w) > 1)
        if listing and removing and any("-recurse".startswith(f) for f in flags):
            return "recursive removal (Get-ChildItem -Recurse | Remove-Item)"
        return None

    def assign(self, words: list[str]) -> list[str]:
        """Note the variables a command sets (``R=rm``, ``export R=rm``, ``set R=rm``,
        ``$R = 'rm'``), so a later ``$R``, ``${R}`` or ``%R%`` is read as its value."""
        first = words[0].lower() if words else ""
        if len(words) >= 3 and first.startswith("$") and words[1] == "=":
            self.values[first.strip("${}")] = words[2]
        for word in words[1:] if first in ("export", "set", "local", "declare") else words:
            name, equals, value = word.partition("=")
            if not equals or not name.lstrip("$").isidentifier():
                break
            self.values[name.lstrip("$").lower()] = value
        return words

    def known(self, word: str) -> bool:
        name = _name(word)
        listed = any(name == _name(e[0]) for e in self.extra)
        return name in _PROGRAMS or rule_for(name) is not None or listed

    def command(
        self, words: list[str], dialect: str, depth: int, before: list[str]
    ) -> tuple[str | None, str]:
        """Why one simple command is destructive, and its program's name."""
        self.spent += len(words) + 1
        if self.spent > _BUDGET or depth > _DEPTH:
            raise _TooComplex
        words = _unwrap(self.assign(words))
        if not words:
            return None, ""
        value = self.values.get(words[0].lower().strip("${}%()"))
        if value is not None and words[0][:1] in "$%":
            words = [*_words(value)[:20], *words[1:]]
        head, args = (words or [""])[0], words[1:]
        if dialect == "cmd" and "/" in head and not head.startswith("/"):
            first, _, switches = head.partition("/")  # rd/s/q
            if _name(first) in ("rd", "rmdir", "del", "erase"):
                head, args = first, ["/" + switches, *args]
        name = _name(head)
        why, shell = one_liner(name, args)  # python -c, node -e, perl -e, ruby -e
        why = why or unread_input(name, args, before, dialect)
        if why is not None:
            return why, name
        for code, inner in [*code_of(name, args, before), *((s, "sh") for s in shell)]:
            why = self.judge(code, inner, depth + 1)
            if why is not None:
                return why, name
        if name == "find":
            if "-delete" in args:
                return "recursive removal (find -delete)", name
            for run in find_runs(args):
                why, _ = self.command(run, dialect, depth + 1, [])
                if why is not None:
                    return why, name
        rule = rule_for(name)
        if name == "format" and _script(head):
            rule = None  # the repository's own formatter (tools/format), not a disk's
        why = rule(args) if rule is not None else None
        if why is None:
            why = _listed(name, args, self.extra)
        if why is None and name in ("tee", "cp", "copy", "set-content", "out-file"):
            targets = args[-1:] if name in ("cp", "copy") else args
            why = next((f"overwrites {a[:40]} ({name})" for a in targets if _system_path(a)), None)
        return why, name


def _script(head: str) -> bool:
    """Whether a program is a script of the work tree: a relative path down into it."""
    return ("/" in head or "\\" in head) and not outside(head) and not head.endswith(".com")


def _listed(name: str, args: list[str], extra: tuple[list[str], ...]) -> str | None:
    """Whether the command is one the shared scope lists: its program (by file name) and
    then the listed words in order among its arguments (``make release`` matches ``make
    -j4 release``). A script run by an interpreter counts as the script (``bash
    deploy.sh``)."""
    candidates = [(name, args)]
    if name in SHELLS | PWSH or name.startswith(("python", "node", "perl", "ruby")):
        script = [i for i, a in enumerate(args) if not a.startswith("-")][:1]
        candidates += [(_name(args[i]), args[i + 1 :]) for i in script]
    for program, rest in candidates:
        for listed in extra:
            if program != _name(listed[0]):
                continue
            wanted = iter(rest)
            if all(any(w == want for w in wanted) for want in listed[1:]):
                return f"listed as destructive in the shared scope ({' '.join(listed)[:60]})"
    return None
