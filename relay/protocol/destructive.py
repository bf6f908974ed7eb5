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
outside the work tree; writing a file outside it (``> ~/.bashrc``, ``tee``, ``dd of=``,
``cp``/``mv``/``ln``/``install`` into it, ``tar x -C /``, ``unzip -d ~``; ``/tmp`` is
scratch); ``git config --global``; firewall and account changes (``iptables -F``, ``nft
flush``, ``useradd``, ``passwd``); ``rsync --delete``; registry, service and scheduled-task
changes (``reg add/delete``, ``sc delete/config``, ``systemctl stop/disable/mask``,
``launchctl unload/bootout``, ``service X stop``, ``schtasks /delete``); package removal
(apt, dnf, yum, pip, ``npm -g``, brew, choco, winget, …); SQL ``DROP``/``TRUNCATE`` given
to a database client (psql, mysql, sqlite3, …, in its arguments or piped to it); ``docker
system prune``, ``docker rm -f``, ``kubectl delete``, ``terraform destroy``, ``gh
repo/release delete``; ``shutdown``, ``reboot``, ``kill -9 -1``; and any command the shared
scope lists under "Destructive commands" (its leading words: ``make release`` matches
``make -j4 release``; a script matches by file name).

Not destructive: work inside the work tree relay checked out — ``rm -f build/out.o``,
``rm file.txt``, ``git reset --hard`` and ``git clean -fd`` there (relay's own clone;
either is destructive with ``git -C`` pointing elsewhere), ``git push``, ``pip install``.
Quoted text given to a program is data (``echo "rm -rf /"``, ``grep DROP schema.sql``),
except where it is code: ``sh -c``/``bash -c``, ``eval``, ``cmd /c``, ``powershell
-Command`` (and ``-EncodedCommand``), ``su -c``, ``ssh host …``, ``$(…)`` and backticks,
``find -exec`` (``{}`` read as the place searched), ``<(…)``, git's ``-c alias.x='!…'``
and command-valued keys, and text given to a shell on its input: piped, a here-string
(``bash <<< '…'``) or a here-document (its body in the step), or ``Invoke-Expression``.

How a step is read: commands are split at ``&&``, ``||``, ``;``, ``|``, ``&``, parentheses
and braces; prefixes (``sudo``, ``env``, ``xargs``, ``nohup``, ``time``, ``timeout``,
``nice``, ``VAR=value``, …) are skipped, and those that run a command of their own (``env
-S '…'``, ``watch``, ``npx``) read it; a newline ends a command. A program is known by its
file name whatever its directory, quotes (``$'\\x72m'`` too), case or ``.exe``, or by a
variable the step sets (``R=rm; $R -rf``, ``R=r; ${R}m``, ``set R=rd``, ``$c =
'Remove-Item'``); one named by a variable the step does not set is destructive. A POSIX
step is read with :mod:`shlex`; when shlex cannot (an open quote), the step is judged on
its words: every known program name in it starts a command. A step with no shell named is
read both as POSIX sh and as cmd.exe. Every scan is linear in the step (at most 1000
characters), nested code at most four deep; a step nested deeper is destructive.
Interpreter one-liners (``python -c``, ``node -e``, …) and code the step cannot show
(``curl … | sh``, ``$(…) -rf /``) are read by :mod:`relay.protocol.destructive_code`. This
reads the usual ways to write commands, no proof: a script the step only names is judged by
what shows."""

from __future__ import annotations

import re
import shlex
from functools import lru_cache

from relay.protocol.destructive_code import (
    language,
    one_liner,
    piped_code,
    printed,
    stdin_code,
    substituted,
    unread_input,
)
from relay.protocol.destructive_rules import (
    PWSH,
    SHELLS,
    SQL_CLIENTS,
    code_of,
    find_runs,
    names,
    outside,
    sql_reason,
    writes_outside,
)
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
    "watch": names("-n --interval -d"),
    "npx": names("-p --package -c --call"),
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
_OPS = frozenset(";&|()<>{}\n")
_CMD_OPS = frozenset("&|()<>\n")  # cmd.exe: ';' and braces are plain characters
_CODE = frozenset({"find", "eval", "iex", "invoke-expression", "cmd", "su", "ssh"})
_PROGRAMS = SHELLS | PWSH | _WRAPPERS.keys() | _ONE_ARG | _CODE
_BUDGET = 60_000  # characters read for one step, nested code included
TOO_COMPLEX = "nested too deep to be read safely"
_HEREDOC = re.compile(r"<<(-?)[ \t]*(['\"]?)([A-Za-z_][A-Za-z0-9_]*)\2")
_VARIABLE = re.compile(r"\$\{?([A-Za-z_][A-Za-z0-9_]*|[0-9@*#?!])\}?")
_PACKAGE_RUNNERS = frozenset({"npx", "bunx", "pnpx"})
_READERS = SHELLS | {"source", "."}


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
        punctuation = "();<>|&\n" + ("{}" if dialect == "powershell" else "")  # sh: ${X}
        if dialect == "sh":
            text = text.replace("\\\n", " ")  # a continued line
        lexer = shlex.shlex(text, posix=True, punctuation_chars=punctuation)
        lexer.whitespace = " \t\r"  # a newline ends a command, as ';' does
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


_C_ESCAPES = {"a": "\a", "b": "\b", "e": "\x1b", "E": "\x1b", "f": "\f", "n": "\n", "r": "\r",
              "t": "\t", "v": "\v"}  # fmt: skip
_C_NUMBERS = {"x": (16, 2), "u": (16, 4), "U": (16, 8)}


def _ansi_c(text: str) -> str:
    """Each ``$'…'`` (bash's ANSI-C quoting: ``$'\\x72\\x6d' -rf ~`` is ``rm -rf ~``) as
    the plain quoted text it stands for."""
    if "$'" not in text:
        return text
    out: list[str] = []
    quote, index, size = "", 0, len(text)
    while index < size:
        char = text[index]
        if char == "\\" and quote != "'":
            out.append(text[index : index + 2])
            index += 2
            continue
        if not quote and text.startswith("$'", index):
            decoded, index = _c_string(text, index + 2)
            out.append(shlex.quote(decoded))
            continue
        if quote or char in "'\"":
            quote = "" if char == quote else quote or char
        out.append(char)
        index += 1
    return "".join(out)


def _c_string(text: str, index: int) -> tuple[str, int]:
    """The text of a ``$'…'`` whose body starts at ``index``, and where it ends."""
    out: list[str] = []
    size = len(text)
    while index < size and text[index] != "'":
        char = text[index]
        index += 1
        if char != "\\" or index >= size:
            out.append(char)
            continue
        code = text[index]
        index += 1
        if code in _C_NUMBERS or code in "01234567":
            base, most = _C_NUMBERS.get(code, (8, 3))
            start = index - 1 if base == 8 else index
            digits = "01234567" if base == 8 else "0123456789abcdefABCDEF"
            end = start
            while end < size and end - start < most and text[end] in digits:
                end += 1
            number = int(text[start:end], base) if end > start else None
            out.append(chr(number) if number is not None and number < 0x110000 else code)
            index = end
        elif code == "c" and index < size:
            out.append(chr(ord(text[index]) & 0x1F))
            index += 1
        else:
            out.append(_C_ESCAPES.get(code, code))
    return "".join(out), index + 1


def _heredocs(text: str) -> str:
    """Each here-document (``bash <<EOF`` … ``EOF``) as a here-string of its body, so
    the reader hands the body to its command as it does piped text. A body whose
    delimiter is not quoted keeps its ``$(…)`` (the shell runs them): it is double-quoted."""
    if "<<" not in text:
        return text
    out: list[str] = []
    pending: list[tuple[bool, bool, str, int]] = []  # (<<-, quoted, delimiter, slot in out)
    quote, index, size = "", 0, len(text)
    while index < size:
        char = text[index]
        if char == "\\" and quote != "'":
            out.append(text[index : index + 2])
            index += 2
            continue
        if quote or char in "'\"":
            quote = "" if char == quote else quote or char
        elif text.startswith("<<<", index):
            out.append("<<<")
            index += 3
            continue
        elif (match := _HEREDOC.match(text, index)) is not None:
            dash, quoted, delimiter = match.groups()
            pending.append((bool(dash), bool(quoted), delimiter, len(out)))
            out.append("")
            index = match.end()
            continue
        elif char == "\n" and pending:
            index = _bodies(text, index + 1, pending, out)
            pending = []
            out.append("\n")
            continue
        out.append(char)
        index += 1
    _bodies(text, size, pending, out)
    return "".join(out)


def _bodies(
    text: str, index: int, pending: list[tuple[bool, bool, str, int]], out: list[str]
) -> int:
    """Read the bodies of the here-documents a line opened, from ``index``; where they end."""
    for dash, quoted, delimiter, slot in pending:
        body: list[str] = []
        while index < len(text):
            end = text.find("\n", index)
            end = len(text) if end < 0 else end
            line, index = text[index:end], end + 1
            if (line.lstrip("\t") if dash else line) == delimiter:
                break
            body.append(line)
        joined = "\n".join(body)
        escaped = joined.replace("\\", "\\\\").replace('"', '\\"')
        out[slot] = "<<< " + (shlex.quote(joined) if quoted else f'"{escaped}"')
    return index


def _process_substitutions(tokens: list[tuple[str, bool]]) -> list[tuple[list[str], str]]:
    """Every ``<(…)`` and ``>(…)``: the words of the command it stands in, and its code."""
    found: list[tuple[list[str], str]] = []
    command: list[str] = []
    index = 0
    while index < len(tokens):
        text, is_op = tokens[index]
        index += 1
        if not is_op:
            command.append(text)
        elif text.endswith(("<(", ">(")):
            depth, inner = 1, []
            while index < len(tokens) and depth:
                word, op = tokens[index]
                depth += word.count("(") - word.count(")") if op else 0
                inner.append(word if op or not depth else shlex.quote(word))
                index += 1
            found.append((command[:], " ".join(inner[:-1] if not depth else inner)))
        elif not set(text) <= set("<>&"):
            command = []
    return found


def _expand(word: str, values: dict[str, str]) -> str | None:
    """A command's name with the step's variables put in (``${R}m`` with ``R=r`` is
    ``rm``), or None when one of them is not set by the step (its value is unknown)."""
    unknown = "\0"
    out = _VARIABLE.sub(lambda m: values.get(m.group(1).lower(), unknown), word)
    return None if unknown in out or "$" in out else out


def _pipelines(tokens: list[tuple[str, bool]]) -> tuple[list[list[list[str]]], list[str]]:
    """Commands grouped in pipelines, and every target written by a redirection (``>
    /dev/sda``, ``>> ~/.bashrc``). A here-string (``bash <<< 'rm -rf ~'``) is read as
    ``printf`` piped into its command, so a shell or interpreter reads it as code."""
    pipelines: list[list[list[str]]] = [[[]]]
    targets: list[str] = []
    redirect = ""
    for raw, is_op in tokens:
        text = raw.replace("\n", "") if is_op else raw
        text = ">" if is_op and text == ">|" else text  # >| overwrites, as > does
        if is_op and not text:  # a newline: the next command
            pipelines.append([[]])
            redirect = ""
        elif not is_op:
            if redirect == "<<<":
                pipelines[-1].insert(len(pipelines[-1]) - 1, ["printf", text])
            elif ">" in redirect:
                targets.append(text)
            elif not redirect:
                pipelines[-1][-1].append(text)
            redirect = ""
        elif set(text) <= set("<>&") and set(text) & set("<>"):
            redirect = text
        elif text in ("|", "|&"):
            pipelines[-1].append([])
        else:
            pipelines.append([[]])
            redirect = ""
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


def _env_split(args: list[str]) -> list[str] | None:
    """The command ``env -S 'cmd args'`` runs (its string split into words), or None."""
    index = 0
    while index < len(args) and args[index].startswith("-"):
        arg = args[index]
        if arg in ("-S", "--split-string") and index + 1 < len(args):
            return [*_words(args[index + 1]), *args[index + 2 :]]
        if arg.startswith(("-S", "--split-string=")):
            return [
                *_words(arg.split("=", 1)[1] if arg.startswith("--") else arg[2:]),
                *args[index + 1 :],
            ]
        index += 2 if arg in ("-u", "-C", "--unset", "--chdir") else 1
    return None


def _unwrap(words: list[str]) -> list[str]:
    """``words`` without the prefixes that run the rest as a command (sudo, env, …)."""
    index = 0
    while index < len(words):
        word = words[index]
        name = _name(word)
        if "=" in word and word.split("=", 1)[0].isidentifier():
            index += 1  # VAR=value
        elif name == "env" and (split := _env_split(words[index + 1 :])) is not None:
            words, index = split, 0  # env -S 'rm -rf /srv'
        elif name == "watch":  # watch joins its arguments and runs them with sh -c
            rest = words[_options_end(words, index + 1, name) :]
            exact = set(words[index + 1 :]) & {"-x", "--exec"}
            return rest if exact else ["sh", "-c", " ".join(rest)]
        elif name in _PACKAGE_RUNNERS or (
            name in ("npm", "pnpm", "yarn", "bun")
            and words[index + 1 : index + 2] in (["exec"], ["x"], ["dlx"])
        ):
            start = index + (1 if name in _PACKAGE_RUNNERS else 2)
            rest = words[_options_end(words, start, "npx") :]
            calls = [
                words[i + 1] for i in range(start, len(words) - 1) if words[i] in ("-c", "--call")
            ]
            return ["sh", "-c", calls[0]] if calls else rest
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
        if dialect == "sh":
            text = _heredocs(_ansi_c(text))
        if dialect == "sh" and ("$(" in text or "`" in text):
            why, rewritten = substituted(text)  # $(printf rm) -rf /, bash -c "$(curl …)"
            if why is None and rewritten is not None:
                why = self.judge(rewritten, dialect, depth + 1)
            if why is not None:
                return why
        tokens, parsed = _tokens(text, dialect)
        pipelines, targets = _pipelines(tokens)
        for target in targets:
            if writes_outside(target):
                return f"overwrites {target[:40]} (> {target[:40]})"
        for words, inner in _process_substitutions(tokens) if dialect == "sh" else []:
            why = self.judge(inner, dialect, depth + 1) or self.sourced(words, inner, depth)
            if why is not None:
                return why
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

    def sourced(self, words: list[str], inner: str, depth: int) -> str | None:
        """Why a shell or interpreter that runs ``<(…)`` as its program is destructive:
        code it cannot read, unless the substitution only prints words, read in its place."""
        words = _unwrap(words)
        name = _name(words[0]) if words else ""
        if name not in _READERS and language(name) is None:
            return None
        shown = printed(inner)
        if shown is None:
            return f"runs code it cannot read ({name} <({inner.strip()[:30]}))"
        if name in _READERS:
            return self.judge(shown, "sh", depth + 1)
        return stdin_code(name, shown)[0]

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
            if dialect == "sh" and ("$" in value or "`" in value):  # X=$(printf rm); $X
                return f"runs a command named by a variable it cannot read ({words[0][:30]})", ""
            words = [*_words(value)[:20], *words[1:]]
        if dialect == "sh" and "$(" not in words[0] and _VARIABLE.search(words[0]):
            expanded = _expand(words[0], self.values)
            if expanded is None:
                return f"runs a command named by a variable it cannot read ({words[0][:30]})", ""
            words = [*_words(expanded)[:20], *words[1:]]
            if not words:
                return None, ""
        head, args = (words or [""])[0], words[1:]
        if dialect == "cmd" and "/" in head and not head.startswith("/"):
            first, _, switches = head.partition("/")  # rd/s/q
            if _name(first) in ("rd", "rmdir", "del", "erase"):
                head, args = first, ["/" + switches, *args]
        name = _name(head)
        why, shell = one_liner(name, args)  # python -c, node -e, perl -e, ruby -e
        if why is None:
            why, piped = piped_code(name, args, before)  # echo '…' | python3 -
            shell += piped
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
            starts = [a for a in args[: _first_test(args)]]
            place = next((p for p in starts if outside(p)), starts[0] if starts else ".")
            for run in find_runs(args):  # find ~ -exec rm -f {} + removes in ~
                run = [w.replace("{}", place) for w in run]
                why, _ = self.command(run, dialect, depth + 1, [])
                if why is not None:
                    return why, name
        rule = rule_for(name)
        if name == "format" and _script(head):
            rule = None  # the repository's own formatter (tools/format), not a disk's
        why = rule(args) if rule is not None else None
        if why is None:
            why = _listed(name, args, self.extra)
        if why is None and name in ("tee", "set-content", "out-file", "add-content"):
            why = next((f"overwrites {a[:40]} ({name})" for a in args if writes_outside(a)), None)
        return why, name


def _first_test(args: list[str]) -> int:
    """Where ``find``'s start paths end: at its first test, action or bracket."""
    for index, arg in enumerate(args):
        if arg.startswith(("-", "(", "!", ")")):
            return index
    return len(args)


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
