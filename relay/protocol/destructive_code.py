"""Code a step runs that is not shell: interpreter one-liners, and text it cannot read.

``python -c``, ``node -e``, ``perl -e``, ``ruby -e`` and ``php -r`` carry code in another
language. It is read by its calls only: a well-known delete call (``shutil.rmtree``,
``os.remove``, ``fs.rmSync``, ``File::Path`` ``rmtree``, ``FileUtils.rm_rf``, …) is
destructive wherever it points, since its path is an expression; the strings handed to a
shell call (``os.system``, ``subprocess.*``, ``execSync``, ``system``, backticks) are
returned for :mod:`relay.protocol.destructive` to read as shell.

Code the step does not show cannot be judged by what shows, so running it is destructive:
a shell or interpreter that reads its program from a pipe fed by anything but ``echo`` or
``printf`` (``curl … | sh``, ``base64 -d | bash``, ``iwr … | iex``), and a command named
by ``$(…)`` or backticks (``bash -c "$(curl …)"``, ``$(printf rm) -rf /``) unless the
substitution only prints words (``echo``, ``printf``, ``which``), which are then read in
its place. Every scan here is one pass over the text.
"""

from __future__ import annotations

import shlex

from relay.protocol.destructive_rules import PWSH, SHELLS, names, positional, short_flags

_DELETE_ANY = names(
    "rmtree remove_tree rm_rf rm_r rmSync rmdirSync unlinkSync removedirs unlink rmdir"
    " removeSync rimraf remove_dir remove_entry remove_entry_secure emptyDirSync"
)
_DELETE_QUALIFIED = names(
    "os.remove fs.rm fs.promises.rm .rm FileUtils.rm FileUtils.rm_f FileUtils.remove"
    " File.delete Dir.delete FileUtils.rmdir fs.remove fse.remove"
)
_SHELL_CALLS = names(
    "system popen Popen run call check_call check_output getoutput getstatusoutput"
    " execSync execFileSync exec execFile spawn spawnSync execl execlp execv execvp execvpe"
    " execle execve spawnl spawnlp spawnv spawnvp qx readpipe capture2 capture2e capture3"
    " popen2 popen3"
)
_CALLS_READ = 16  # shell calls read in one code string; more is not a one-liner
_CODE_FLAGS = {"node": ("-e", "--eval", "-p", "--print"), "ruby": ("-e",), "php": ("-r",)}
_PRINTERS = frozenset({"echo", "printf", "write-output", "write-host", "write"})
_WHICH = frozenset({"which", "command", "type", "where", "get-command"})

Item = tuple[str, str]  # (kind, text): "id", "str" (a literal), "tick" (backticks), "op"


def language(name: str) -> str | None:
    """The interpreter a program name runs (``python3.12`` is python), or None."""
    for family in ("python", "node", "perl", "ruby", "php"):
        if name.startswith(family) and not name[len(family) :].strip("0123456789.js"):
            return family
    return "python" if name == "py" else None


def code_strings(lang: str, args: list[str]) -> list[str]:
    """The code given on the command line: ``-c`` (python), ``-e`` (node, perl, ruby)…"""
    found: list[str] = []
    for index, arg in enumerate(args[:-1]):
        if lang == "python":
            if arg == "-m":
                break
            hit = arg[:1] == "-" != arg[1:2] and arg[-1] == "c" and arg[1:].isalpha()
        elif lang == "perl":
            hit = arg[:1] == "-" and arg[-1] in "eE" and arg[1:].isalpha() and len(arg) <= 4
        else:
            hit = arg in _CODE_FLAGS[lang]
        if hit:
            found.append(args[index + 1])
            if lang == "python":
                break
    found += [a.split("=", 1)[1] for a in args if lang == "node" and a.startswith("--eval=")]
    return found


def one_liner(name: str, args: list[str]) -> tuple[str | None, list[str]]:
    """(why the interpreter's code deletes, or None; the strings it hands to a shell)."""
    lang = language(name)
    if lang is None:
        return None, []
    shell: list[str] = []
    for code in code_strings(lang, args):
        items = _lex(code)
        literals = [text for kind, text in items if kind == "str"]
        for kind, text in [*items, *(i for lit in literals[:50] for i in _lex(lit))]:
            if kind == "id" and _deletes(text):
                return f"deletes files ({text.lstrip('.')[:40]} in {lang} code)", []
        calls = [i for i, (kind, text) in enumerate(items) if kind == "id" and _runs(text)]
        if len(calls) > _CALLS_READ:
            return f"more shell calls than can be read ({lang} code)", []
        for index in calls:
            shell += _argument_texts(_call_literals(items, index))
        shell += [text for kind, text in items if kind == "tick"]
    return None, shell


def _last(identifier: str) -> str:
    return identifier.replace("::", ".").rsplit(".", 1)[-1]


def _deletes(identifier: str) -> bool:
    full = identifier.replace("::", ".")
    return _last(full) in _DELETE_ANY or full in _DELETE_QUALIFIED


def _runs(identifier: str) -> bool:
    return _last(identifier) in _SHELL_CALLS


def _lex(code: str) -> list[Item]:
    """Identifiers (dotted: ``os.system``, ``.rmSync``, ``File::Path``), string literals,
    backtick strings and brackets, in one pass; an open quote runs to the end."""
    items: list[Item] = []
    index, size = 0, len(code)
    while index < size:
        char = code[index]
        if char in "'\"`":
            end = index + 1
            text: list[str] = []
            while end < size and code[end] != char:
                step = 2 if code[end] == "\\" and end + 1 < size else 1
                text.append(code[end + step - 1])
                end += step
            items.append(("tick" if char == "`" else "str", "".join(text)))
            index = end + 1
        elif char.isalpha() or char in "_.":
            end = index + 1
            while end < size and (code[end].isalnum() or code[end] in "_.:"):
                end += 1
            items.append(("id", code[index:end]))
            index = end
        else:
            if char in "()[]{};,\n":
                items.append(("op", char))
            index += 1
    return items


def _call_literals(items: list[Item], index: int) -> list[str]:
    """The string literals of the call at ``index``: inside its brackets, or (perl, ruby
    without brackets) up to the end of its statement."""
    found: list[str] = []
    depth = 0
    bracketed = index + 1 < len(items) and items[index + 1] == ("op", "(")
    for kind, text in items[index + 1 :]:
        if kind == "op" and text in "([{":
            depth += 1
        elif kind == "op" and text in ")]}":
            depth -= 1
            if depth <= 0 and (bracketed or depth < 0):
                break
        elif kind == "op" and text in ";\n" and depth == 0:
            break
        elif kind in ("str", "tick"):
            found.append(text)
    return found


def _argument_texts(literals: list[str]) -> list[str]:
    """A call's literals read as one command line, and as an argv (``['rm', '-rf', x]``)."""
    if not literals:
        return []
    plain = " ".join(literals)
    argv = " ".join(shlex.quote(lit) for lit in literals)
    return [plain] if argv == plain else [plain, argv]


def _reads_stdin(name: str, args: list[str]) -> bool:
    """Whether a program takes its code from its input (``sh``, ``python -``, ``iex``)."""
    words = positional(args, frozenset({"-W", "-X", "-o", "-O"}))
    bare = not words or words[0] == "-"
    if name in SHELLS:
        return (bare or "s" in short_flags(args)) and not any(
            a == "--command" or (a[:1] == "-" != a[1:2] and "c" in a) for a in args
        )
    lang = language(name)
    if lang is not None:
        return bare and not code_strings(lang, args) and "-m" not in args
    if name in PWSH:
        return bare  # pwsh -NoProfile, pwsh -Command -
    return name in ("iex", "invoke-expression", "cmd") and not args


def unread_input(name: str, args: list[str], before: list[str], dialect: str) -> str | None:
    """Why a command runs piped text this cannot read (``curl … | sh``), or None."""
    if not before or not _reads_stdin(name, args):
        return None
    source = before[0].replace("\\", "/").rsplit("/", 1)[-1].lower().removesuffix(".exe")
    hidden = any("$(" in w or "`" in w for w in before)
    literal = dialect == "powershell" and len(before) == 1 and " " in before[0]
    if (source in _PRINTERS or literal) and not hidden:
        return None
    return f"runs code it cannot read ({source[:30]} | {name})"


def substituted(text: str) -> tuple[str | None, str | None]:
    """For ``$(…)`` or backticks where a command's name goes: (why it runs code this
    cannot read, or None; the text with the readable ones replaced by what they print,
    or None when there are none)."""
    spans = _command_substitutions(text)
    if not spans:
        return None, None
    out: list[str] = []
    last = 0
    for start, end, inner in spans:
        if start < last:
            continue  # inside one already read
        printed = _printed(inner)
        if printed is None:
            return f"runs code it cannot read ($({inner.strip()[:30]}) as a command)", None
        out += [text[last:start], printed]
        last = end
    return None, "".join([*out, text[last:]])


def _printed(inner: str) -> str | None:
    """What a substitution prints, when it only prints words; else None."""
    if any(c in inner for c in "$`|;&<>(){}"):
        return None
    try:
        words = shlex.split(inner)
    except ValueError:
        return None
    head = words[0].lower() if words else ""
    if head in ("echo", "printf") and not any("%" in w or "\\" in w for w in words):
        return " ".join(w for w in words[1:] if head == "printf" or not w.startswith("-"))
    if head in _WHICH and len(words) >= 2:
        return words[-1]
    return None


def _command_substitutions(text: str) -> list[tuple[int, int, str]]:
    """(start, end, inner) of every ``$(…)``/backtick standing where a command's name goes
    (not ``echo $(x)``, ``X=$(x)`` or ``"$(x)/tool.sh"``); one unclosed runs to the end."""
    found: list[tuple[int, int, str]] = []
    stack: list[tuple[int, bool]] = []  # (where it opened, whether at a command's place)
    tick: tuple[int, bool] | None = None
    command, quoted, index, size = True, False, 0, len(text)
    while index < size:
        char = text[index]
        if char == "\\":
            index, command = index + 2, False
            continue
        if char == "'" and not quoted:
            close = text.find("'", index + 1)
            if close < 0:
                break
            index, command = close + 1, False
            continue
        if text.startswith("$(", index) and not text.startswith("$((", index):
            stack.append((index, command))
            index, command = index + 2, True
            continue
        if char == "`":
            if tick is None:
                tick, command = (index, command), True
            else:
                if tick[1] and not _glued(text, index + 1):
                    found.append((tick[0], index + 1, text[tick[0] + 1 : index]))
                tick, command = None, False
            index += 1
            continue
        if char == "(":
            stack.append((-1, False))
        elif char == ")" and stack:
            start, at_command = stack.pop()
            if at_command and start >= 0 and not _glued(text, index + 1):
                found.append((start, index + 1, text[start + 2 : index]))
        if char == '"':
            quoted = not quoted
        elif not char.isspace():
            command = char in ";&|({\n"
        index += 1
    found += [(s, size, text[s + 2 :]) for s, at in stack if at and s >= 0]
    found += [(tick[0], size, text[tick[0] + 1 :])] if tick and tick[1] else []
    return sorted(found)


def _glued(text: str, index: int) -> bool:
    """Whether a substitution ends inside a longer word (``$(git rev-parse …)/x.sh``)."""
    return index < len(text) and (text[index].isalnum() or text[index] in "/._-")
