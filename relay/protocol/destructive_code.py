"""Code a step runs that is not shell: interpreter one-liners, and text it cannot read.

``python -c``, ``node -e``, ``perl -e``, ``ruby -e``, ``php -r`` and ``awk``'s program
carry code in another language (as does text printed into one: ``python3 - <<< '…'``). It
is read by its calls only: a well-known delete call (``shutil.rmtree``, ``os.remove``,
``fs.rmSync``, ``File::Path`` ``rmtree``, ``FileUtils.rm_rf``, …) is destructive wherever
it points, since its path is an expression; the strings handed to a shell call
(``os.system``, ``subprocess.*``, ``execSync``, ``system``, backticks) are returned for
:mod:`relay.protocol.destructive` to read as shell (perl's ``qx{}``/``qq()`` and ruby's
``%x()`` are strings too, and awk's ``print | "cmd"``); a shell call given anything but
literals (``os.system(cmd)``) runs what cannot be read, so is destructive.

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
_HARMLESS_WORDS = names(
    "True False None nil undef true false null or and not die if unless exit warn"
)  # words in a shell call's arguments that are no command: system("make") or die
_PREFIXES = names("f r b u rb br fr rf")
_AWK = names("awk gawk mawk nawk")
_AWK_VALUED = names("-F -v -f --field-separator --assign --file -i --include -l --load -E --exec")
_STDIN_FLAG = {"python": "-c", "node": "-e", "perl": "-e", "ruby": "-e", "php": "-r", "awk": "--"}
_CALLS_READ = 16  # shell calls read in one code string; more is not a one-liner
_CODE_FLAGS = {"node": ("-e", "--eval", "-p", "--print"), "ruby": ("-e",), "php": ("-r",)}
_PRINTERS = frozenset({"echo", "printf", "write-output", "write-host", "write"})
_WHICH = frozenset({"which", "command", "type", "where", "get-command"})

Item = tuple[str, str]  # (kind, text): "id", "str" (a literal), "tick" (backticks), "op"


def language(name: str) -> str | None:
    """The interpreter a program name runs (``python3.12`` is python), or None."""
    if name in _AWK:
        return "awk"
    for family in ("python", "node", "perl", "ruby", "php"):
        if name.startswith(family) and not name[len(family) :].strip("0123456789.js"):
            return family
    return "python" if name == "py" else None


def code_strings(lang: str, args: list[str]) -> list[str]:
    """The code given on the command line: ``-c`` (python), ``-e`` (node, perl, ruby)…"""
    found: list[str] = []
    if lang == "awk":  # its program: -e/--source, or the first word that is no option
        given = [args[i + 1] for i, a in enumerate(args[:-1]) if a in ("-e", "--source")]
        if given or set(args) & {"-f", "--file", "-E", "--exec"}:
            return given
        return positional(args, _AWK_VALUED)[:1]
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
    return read_code(lang, code_strings(lang, args))


def stdin_code(name: str, text: str) -> tuple[str | None, list[str]]:
    """The same for code an interpreter reads from its input (``python3 - <<< '…'``,
    ``echo '…' | perl``): read as if given with ``-c``/``-e``."""
    lang = language(name)
    return (None, []) if lang is None else read_code(lang, [text])


def read_code(lang: str, codes: list[str]) -> tuple[str | None, list[str]]:
    """(why the code deletes or runs what cannot be read, or None; its shell strings)."""
    shell: list[str] = []
    for code in codes:
        items = _lex(code, lang)
        literals = [text for kind, text in items if kind == "str"]
        for kind, text in [*items, *(i for lit in literals[:50] for i in _lex(lit))]:
            if kind == "id" and _deletes(text):
                return f"deletes files ({text.lstrip('.')[:40]} in {lang} code)", []
        calls = [i for i, (kind, text) in enumerate(items) if kind == "id" and _runs(text)]
        if len(calls) > _CALLS_READ:
            return f"more shell calls than can be read ({lang} code)", []
        for index in calls:
            literals, unknown = _call_arguments(items, index)
            if unknown:
                call = f"{items[index][1][:30]}({unknown[:20]})"
                return f"runs a command it cannot read ({call} in {lang} code)", []
            shell += _argument_texts(literals)
        shell += [text for kind, text in items if kind == "tick"]
        why, piped = _pipes(items, lang)
        if why is not None:
            return why, []
        shell += piped
    return None, shell


def _pipes(items: list[Item], lang: str) -> tuple[str | None, list[str]]:
    """What a program pipes to or from a command: awk's ``print | "sh"`` and ``"cmd" |
    getline``, perl's and ruby's ``open(F, "|cmd")``: (why it cannot be read; the commands)."""
    found: list[str] = []
    for index, (kind, text) in enumerate(items):
        after = items[index + 1] if index + 1 < len(items) else ("op", "")
        if lang == "awk" and kind == "op" and text == "|":
            if after[0] == "str":
                found.append(after[1])
                if _names_reader(after[1]):
                    return f"pipes code into a program ({after[1][:30]} in awk code)", []
            elif after != ("id", "getline"):
                return "pipes into a command it cannot read (awk code)", []
            before = items[index - 1] if index else ("op", "")
            if after == ("id", "getline") and before[0] == "str":
                found.append(before[1])
            elif after == ("id", "getline") and before[0] == "id":
                return "runs a command it cannot read (awk getline)", []
        if lang in ("perl", "ruby") and kind == "str" and text.strip() in ("|-", "-|"):
            return f"runs a command it cannot read (open |- in {lang} code)", []
        piped = kind == "str" and lang in ("perl", "ruby") and text.strip()[:1] == "|"
        if piped or (kind == "str" and lang == "perl" and text.strip()[-1:] == "|"):
            found.append(text.strip().strip("|"))
    return None, found


def _names_reader(command: str) -> bool:
    """Whether a command line runs a shell or interpreter that reads its input as code."""
    words = command.split()
    name = words[0].rsplit("/", 1)[-1].lower() if words else ""
    return name in SHELLS or (language(name) is not None and len(words) == 1)


def _last(identifier: str) -> str:
    return identifier.replace("::", ".").rsplit(".", 1)[-1]


def _deletes(identifier: str) -> bool:
    full = identifier.replace("::", ".")
    return _last(full) in _DELETE_ANY or full in _DELETE_QUALIFIED


def _runs(identifier: str) -> bool:
    return _last(identifier) in _SHELL_CALLS


_PAIRS = {"(": ")", "[": "]", "{": "}", "<": ">"}


def _quote_like(code: str, index: int, lang: str) -> tuple[int, str, int] | None:
    """Perl's ``q(…)``, ``qq{…}``, ``qx(…)`` and ruby's ``%x(…)``, ``%q[…]``, ``%(…)`` at
    ``index``: (where the text starts, its kind, its closing character) or None."""
    size = len(code)
    if lang == "ruby" and code[index] == "%" and index + 1 < size:
        letter = code[index + 1] if code[index + 1] in "qQwWxiI" else ""
        start = index + 1 + len(letter)
        if start < size and code[start] in "([{<|!/":
            kind = "tick" if letter == "x" else "str"
            return start + 1, kind, ord(_PAIRS.get(code[start], code[start]))
        return None
    if lang != "perl" or not code.startswith("q", index) or (index and code[index - 1].isalnum()):
        return None
    end = index + 1
    while end < size and code[end] in "qxw" and end - index < 2:
        end += 1
    word = code[index:end]
    while end < size and code[end] == " ":
        end += 1
    if word in ("q", "qq", "qx", "qw") and end < size and code[end] in "([{<|!/#~":
        return end + 1, "tick" if word == "qx" else "str", ord(_PAIRS.get(code[end], code[end]))
    return None


def _lex(code: str, lang: str = "") -> list[Item]:
    """Identifiers (dotted: ``os.system``, ``.rmSync``, ``File::Path``), string literals
    (perl's ``qq(…)`` and ruby's ``%x(…)`` too), backtick strings, brackets, ``=`` and
    ``|``, in one pass; an open quote runs to the end."""
    items: list[Item] = []
    index, size = 0, len(code)
    while index < size:
        char = code[index]
        quote_like = _quote_like(code, index, lang) if char in "q%" else None
        if quote_like is not None:
            start, kind, closing = quote_like
            opening, depth, end = code[start - 1], 0, start
            while end < size and (code[end] != chr(closing) or depth):
                if code[end] == opening and opening != chr(closing):
                    depth += 1
                elif code[end] == chr(closing):
                    depth -= 1
                end += 1
            items.append((kind, code[start:end]))
            index = end + 1
        elif char in "'\"`":
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
            if char in "()[]{};,\n=|":
                items.append(("op", char))
            index += 1
    return items


def _call_arguments(items: list[Item], index: int) -> tuple[list[str], str]:
    """The string literals of the call at ``index``: inside its brackets, or (perl, ruby
    without brackets) up to the end of its statement; and the first word in them that is
    no literal (``os.system(cmd)``: a command this cannot read), or ""."""
    found: list[str] = []
    unknown = ""
    depth = 0
    bracketed = index + 1 < len(items) and items[index + 1] == ("op", "(")
    for at, (kind, text) in enumerate(items[index + 1 :], start=index + 2):
        following = items[at] if at < len(items) else ("op", "")
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
        elif kind == "id" and not unknown and text not in _HARMLESS_WORDS:
            keyword = following == ("op", "=")  # check=True
            prefix = following[0] == "str" and text.lower() in _PREFIXES  # f"…", r"…"
            unknown = "" if keyword or prefix else text
    return found, unknown


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


def piped_code(name: str, args: list[str], before: list[str]) -> tuple[str | None, list[str]]:
    """Code printed into an interpreter that reads it from its input (``echo '…' | python3
    -``, ``perl <<< '…'``), read as if given with ``-c``/``-e``."""
    source = _name(before[0]) if before else ""
    if source not in _PRINTERS or language(name) is None or not _reads_stdin(name, args):
        return None, []
    return stdin_code(name, " ".join(before[1:]))


def _name(word: str) -> str:
    return word.replace("\\", "/").rsplit("/", 1)[-1].lower().removesuffix(".exe")


def unread_input(name: str, args: list[str], before: list[str], dialect: str) -> str | None:
    """Why a command runs piped text this cannot read (``curl … | sh``), or None."""
    if not before or not _reads_stdin(name, args):
        return None
    source = _name(before[0])
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
        words = printed(inner)
        if words is None:
            return f"runs code it cannot read ($({inner.strip()[:30]}) as a command)", None
        out += [text[last:start], words]
        last = end
    return None, "".join([*out, text[last:]])


def printed(inner: str) -> str | None:
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
