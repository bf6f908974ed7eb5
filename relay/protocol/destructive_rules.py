"""What each program does that is destructive: one small rule per program name, read by
:mod:`relay.protocol.destructive`, which finds the programs a step runs.

A rule gets a command's arguments (quotes already removed) and returns a short reason or
None. Rules are linear in the arguments: no regex that backtracks, no nested scans.
:func:`code_of` and :func:`find_runs` say which code a command hands on (``sh -c``,
``powershell -EncodedCommand``, ``find -exec``), for the reader to read as well.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Callable

Rule = Callable[[list[str]], str | None]


def names(text: str) -> frozenset[str]:
    """The words of ``text``: a table's row written as one line."""
    return frozenset(text.split())


_WORD = re.compile(r"[A-Za-z_]+")  # one character class: linear on any input
_SQL_OBJECTS = names(
    "table database schema index view user role function procedure trigger sequence type"
    " extension owned collection keyspace materialized tablespace column constraint"
)
SQL_CLIENTS = names(
    "psql mysql mariadb sqlite3 sqlite sqlcmd osql isql sqlplus clickhouse clickhouse-client"
    " cqlsh mongo mongosh duckdb cockroach snowsql redis-cli invoke-sqlcmd"
)
SHELLS = names("sh bash zsh dash ksh ash mksh fish csh tcsh")
PWSH = frozenset({"powershell", "pwsh"})
_KEEP_DEVICES = ("/dev/null", "/dev/zero", "/dev/stdout", "/dev/stderr", "/dev/tty", "/dev/fd/",
                 "/dev/shm/", "/dev/tcp/", "/dev/udp/", "/dev/random", "/dev/urandom")  # fmt: skip
_SYSTEM_DIRS = ("/etc/", "/boot/", "/usr/", "/bin/", "/sbin/", "/lib", "/system/", "/library/")


def short_flags(args: list[str]) -> set[str]:
    """The letters of every ``-abc`` cluster before ``--``."""
    found: set[str] = set()
    for arg in args:
        if arg == "--":
            break
        if arg.startswith("-") and not arg.startswith("--"):
            found.update(arg[1:])
    return found


def long_flags(args: list[str]) -> set[str]:
    """Every ``--name`` (without its ``=value``), lower-cased, before ``--``."""
    found: set[str] = set()
    for arg in args:
        if arg == "--":
            break
        if arg.startswith("--") and len(arg) > 2:
            found.add(arg.split("=", 1)[0].lower())
    return found


def positional(args: list[str], valued: frozenset[str] = frozenset()) -> list[str]:
    """The arguments that are not options; options in ``valued`` take the next word."""
    kept: list[str] = []
    skip = False
    rest = False
    for arg in args:
        if skip:
            skip = False
        elif rest or not arg.startswith("-") or arg == "-":
            kept.append(arg)
        elif arg == "--":
            rest = True
        elif arg in valued:
            skip = True
    return kept


def _ps_param(args: list[str], name: str) -> bool:
    """Whether a PowerShell parameter ``-name`` is given, abbreviated or not (``-r``)."""
    for arg in args:
        word = arg.lower().split(":", 1)[0]
        if len(word) >= 2 and word[0] == "-" and word[1] != "-" and name.startswith(word[1:]):
            return True
    return False


def slash(args: list[str], letter: str) -> bool:
    """Whether a cmd.exe switch ``/letter`` is given (``/S``, ``/s/q``; ``/srv/s`` is a path)."""
    for arg in args:
        chunks = arg.lower().split("/")[1:] if arg.startswith("/") else []
        if letter in chunks and all(len(c) <= 2 or ":" in c for c in chunks):
            return True
    return False


def outside(path: str) -> bool:
    """Whether a path names a place outside the work tree: absolute, home, or up."""
    low = path.lower().replace("\\", "/")
    if low.startswith(("/", "~", "$home", "${home}", "$env:", "%")):
        return True
    if len(low) >= 2 and low[1] == ":" and low[0].isalpha():
        return True
    return ".." in low.split("/")


def writes_outside(path: str) -> bool:
    """Whether writing ``path`` overwrites something outside the work tree: a disk, a
    system file, or any file in home or an absolute path (``> ~/.bashrc``), but not the
    harmless devices (``/dev/null``) nor scratch space (``/tmp/x``)."""
    low = path.lower().replace("\\", "/")
    if system_path(path):
        return True
    if low.startswith(_KEEP_DEVICES) or low in ("/dev/null", "/dev/stdout", "/dev/stderr"):
        return False
    scratch = low.startswith(("/tmp/", "$tmpdir/", "${tmpdir}/")) and ".." not in low.split("/")
    return outside(path) and not scratch


def disk_device(path: str) -> bool:
    """Whether writing to ``path`` writes a device (a disk), not a file."""
    low = path.lower()
    if low.startswith("\\\\.\\") or low.startswith("//./"):
        return True
    return low.startswith("/dev/") and not low.startswith(_KEEP_DEVICES)


def system_path(path: str) -> bool:
    """Whether overwriting ``path`` changes the machine's own configuration."""
    low = path.lower().replace("\\", "/")
    return disk_device(path) or low.startswith(_SYSTEM_DIRS) or low.startswith("c:/windows")


def registry_path(path: str) -> bool:
    low = path.lower()
    return low.startswith(("hklm:", "hkcu:", "hkcr:", "hku:", "hkcc:", "registry::"))


def sql_reason(text: str) -> str | None:
    """``DROP <object>``, ``TRUNCATE``, or a store's wipe, in any case, in SQL text."""
    words = [w.lower() for w in _WORD.findall(text)]
    for index, word in enumerate(words):
        if word == "drop" and index + 1 < len(words) and words[index + 1] in _SQL_OBJECTS:
            return f"SQL DROP {words[index + 1].upper()}"
        if word == "truncate":
            return "SQL TRUNCATE"
        if word in ("dropdatabase", "flushall", "flushdb"):
            return f"wipes a database ({word})"
    return None


_PS_REMOVE = ("-force", "-path", "-literalpath", "-include", "-exclude", "-filter", "-confirm",
              "-whatif", "-credential", "-stream")  # fmt: skip


def _rm(args: list[str]) -> str | None:
    # PowerShell's rm is Remove-Item: its -Force is no cluster of -F -o -r -c -e
    posix = [a for a in args if not any(p.startswith(a.lower()) for p in _PS_REMOVE)]
    if {"r", "R"} & short_flags(posix) or "--recursive" in long_flags(args):
        return "recursive removal (rm -r)"
    if any(outside(a) for a in args if not a.startswith("-")):
        return "removal outside the work tree (rm of an absolute, home or parent path)"
    return _remove_item(args)


def _remove_item(args: list[str]) -> str | None:
    if _ps_param(args, "recurse"):
        return "recursive removal (Remove-Item -Recurse)"
    if any(registry_path(a) for a in args):
        return "registry change (Remove-Item HKLM:)"
    return None


def _rd(args: list[str]) -> str | None:
    if slash(args, "s"):
        return "recursive removal (rd /s)"
    return _remove_item(args)


def _del(args: list[str]) -> str | None:
    if slash(args, "s"):
        return "recursive removal (del /s)"
    return _remove_item(args)


def _git(args: list[str]) -> str | None:
    valued = frozenset({"-C", "-c", "--git-dir", "--work-tree", "--namespace"})
    places = [
        args[i + 1] for i, a in enumerate(args[:-1]) if a in ("-C", "--git-dir", "--work-tree")
    ]
    places += [a.split("=", 1)[1] for a in args if a.startswith(("--git-dir=", "--work-tree="))]
    away = any(outside(p) for p in places)
    for index, arg in enumerate(args[:-1]):
        key, _, value = args[index + 1].partition("=")
        if arg == "-c" and key.lower() == "core.hookspath" and outside(value):
            return "runs hooks it cannot read (git -c core.hooksPath outside the work tree)"
    words = positional(args, valued)
    if not words:
        return None
    sub = words[0]
    rest = args[args.index(sub) + 1 :] if sub in args else []
    if sub == "push":
        flags, longs = short_flags(rest), long_flags(rest)
        if "f" in flags or longs & {"--force", "--force-with-lease", "--force-if-includes"}:
            return "force push (git push --force)"
        if any(w.startswith("+") for w in positional(rest, frozenset({"-o", "--push-option"}))):
            return "force push (git push +refspec)"
        if "d" in flags or longs & {"--delete", "--mirror", "--prune"}:
            return "deletes remote branches (git push --delete)"
        if any(w.startswith(":") and len(w) > 1 for w in positional(rest)):
            return "deletes a remote branch (git push :branch)"
    if sub == "clean" and ("f" in short_flags(rest) or "--force" in long_flags(rest)):
        if {"x", "X"} & short_flags(rest):
            return "removes ignored files (git clean -x)"
        if away:
            return "git clean outside the work tree"
    if sub == "reset" and "--hard" in long_flags(rest) and away:
        return "git reset --hard outside the work tree"
    if sub == "config":
        return _git_config(rest)
    return None


_CONFIG_READS = names(
    "--get --get-all --get-regexp --get-urlmatch --list -l --show-origin --show-scope"
    " --get-color --get-colorbool --name-only get list"
)


def _git_config(args: list[str]) -> str | None:
    """``git config --global``/``--system``, or ``--file`` outside: the configuration
    of every repository of the machine (hooks, editors, ssh commands), not the work tree's."""
    files = [args[i + 1] for i, a in enumerate(args[:-1]) if a in ("-f", "--file")]
    files += [a.split("=", 1)[1] for a in args if a.startswith("--file=")]
    wide = {"--global", "--system"} & set(args) or any(outside(f) for f in files)
    if wide and not _CONFIG_READS & set(args):
        return "changes git's configuration outside the work tree (git config --global)"
    return None


_GIT_COMMAND_KEYS = names(
    "core.pager core.editor core.sshcommand core.fsmonitor core.askpass sequence.editor"
    " diff.external gpg.program gpg.ssh.program pager.log pager.diff pager.show"
    " credential.helper uploadpack.packobjectshook"
)


def _git_code(args: list[str]) -> list[tuple[str, str]]:
    """The shell code ``git -c key=value`` makes git run: an alias (``!cmd`` is shell; a
    plain one is git again), and keys whose value is a command (``core.pager``, filters)."""
    found: list[tuple[str, str]] = []
    for index, arg in enumerate(args[:-1]):
        if arg != "-c":
            continue
        key, _, value = args[index + 1].partition("=")
        key = key.lower()
        if key.startswith("alias."):
            found.append((value[1:], "sh") if value.startswith("!") else (f"git {value}", "sh"))
        elif key in _GIT_COMMAND_KEYS or key.endswith(
            (".clean", ".smudge", ".process", ".textconv", ".driver", ".command")
        ):
            found.append((value.removeprefix("!"), "sh"))
    return found


def _dd(args: list[str]) -> str | None:
    for arg in args:
        if arg.lower().startswith("of=") and disk_device(arg[3:]):
            return f"writes a device (dd of={arg[3:][:40]})"
        if arg.lower().startswith("of=") and writes_outside(arg[3:]):
            return f"overwrites {arg[3:][:40]} (dd of=)"
    return None


def _fdisk(args: list[str]) -> str | None:
    if "l" in short_flags(args) or "--list" in long_flags(args):
        return None
    return "partitions a disk"


def _wipefs(args: list[str]) -> str | None:
    if {"a", "o"} & short_flags(args) or long_flags(args) & {"--all", "--offset"}:
        return "wipes a disk's signatures (wipefs)"
    return None


def _diskutil(args: list[str]) -> str | None:
    verbs = ("erase", "zero", "secure", "partition", "reformat", "random", "delete")
    words = positional(args)
    if words and words[0].lower().startswith(verbs):
        return f"changes a disk (diskutil {words[0][:30]})"
    return None


def _chmod(args: list[str]) -> str | None:
    recursive = "R" in short_flags(args) or "--recursive" in long_flags(args)
    if recursive and any(outside(p) for p in positional(args)[1:]):
        return "recursive permission change outside the work tree (chmod/chown -R)"
    return None


def _icacls(args: list[str]) -> str | None:
    if (slash(args, "t") or slash(args, "r")) and any(outside(a) for a in args[:1]):
        return "recursive permission change outside the work tree (icacls /t)"
    return None


def find_runs(args: list[str]) -> list[list[str]]:
    """The commands ``find -exec … ;`` runs, each up to its ``;``, ``+`` or next ``-exec``."""
    runs: list[list[str]] = []
    inside = False
    for arg in args:
        if arg in ("-exec", "-execdir", "-ok", "-okdir"):
            runs.append([])
            inside = True
        elif arg in (";", "+"):
            inside = False
        elif inside:
            runs[-1].append(arg)
    return [r for r in runs if r]


def code_of(name: str, args: list[str], before: list[str]) -> list[tuple[str, str]]:
    """The code a command runs that a step's reader must read too: (text, dialect)."""
    if name in SHELLS or name == "su":
        for index, arg in enumerate(args):
            if arg == "--command" or (len(arg) > 1 and arg[0] == "-" != arg[1] and "c" in arg):
                rest = [a for a in args[index + 1 :] if a != "--"]
                return [(rest[0], "sh")] if rest else []
        stdin = not positional(args) or "s" in short_flags(args)
        if name in SHELLS and before and stdin:  # echo '…' | sh, bash -s x <<< '…'
            return [(" ".join(before[1:]), "sh")]
        return []
    if name == "eval":
        return [(" ".join(args), "sh")]
    if name == "git":
        return _git_code(args)
    if name in ("iex", "invoke-expression"):
        return [(" ".join(args or before[1:] or before[:1]), "powershell")]
    if name == "cmd":
        for index, arg in enumerate(args):
            if arg.lower()[:2] in ("/c", "/k", "/r"):
                return [(" ".join([arg[2:], *args[index + 1 :]]), "cmd")]
        return [(" ".join(before[1:]), "cmd")] if before and not args else []
    if name in PWSH:
        return _powershell(args, before)
    if name == "ssh":
        valued = names("-b -c -D -E -e -F -I -i -J -L -l -m -O -o -p -Q -R -S -W -w")
        hosts = positional(args, valued)[:1]
        remote = args[args.index(hosts[0]) + 1 :] if hosts else []
        return [(" ".join(remote), "sh")] if remote else []
    return []


def _powershell(args: list[str], before: list[str]) -> list[tuple[str, str]]:
    """The code ``powershell``/``pwsh`` runs: after ``-Command`` (or its first word that is
    no option), or ``-EncodedCommand``'s; none for ``-File``."""
    valued = ("-executionpolicy", "-windowstyle", "-version", "-outputformat",
              "-inputformat", "-configurationname", "-workingdirectory")  # fmt: skip
    index = 0
    while index < len(args):
        low = args[index].lower()
        if low.startswith("-e") and "-encodedcommand".startswith(low):
            return [(_decoded(args[index + 1] if index + 1 < len(args) else ""), "powershell")]
        if low.startswith("-f") and "-file".startswith(low):
            return []
        if low.startswith("-c") and "-command".startswith(low):
            return [(" ".join(args[index + 1 :]), "powershell")]
        if not low.startswith("-"):  # an option unknown here may have taken it: -c after too
            later = [i for i, a in enumerate(args) if a.lower() in ("-c", "-command")][:1]
            rest = [(" ".join(args[i + 1 :]), "powershell") for i in later if i > index]
            return [(" ".join(args[index:]), "powershell"), *rest]
        if low in ("-ep", "-w", "-wd") or (
            len(low) >= 3 and any(v.startswith(low) for v in valued)
        ):
            index += 1
        index += 1
    return [(" ".join(before[1:]), "powershell")] if before else []


def _decoded(encoded: str) -> str:
    """PowerShell's ``-EncodedCommand``: base64 of UTF-16LE."""
    try:
        return base64.b64decode(encoded[:2000], validate=True).decode("utf-16-le")
    except (binascii.Error, ValueError):
        return ""


FILE_RULES: dict[str, Rule] = {
    "rm": _rm,
    **dict.fromkeys(names("remove-item ri"), _remove_item),
    **dict.fromkeys(names("rmdir rd"), _rd),
    **dict.fromkeys(names("del erase"), _del),
    **dict.fromkeys(names("fdisk sfdisk gdisk sgdisk cfdisk parted"), _fdisk),
    **dict.fromkeys(names("chmod chown chgrp"), _chmod),
    **dict.fromkeys(names("icacls takeown"), _icacls),
    "git": _git,
    "dd": _dd,
    "wipefs": _wipefs,
    "diskutil": _diskutil,
}
