"""Secrets handed to a program on its command line, in the program's own spelling.

``--password VALUE`` and ``KEY=VALUE`` are found by the shared rules (``assignments``); these
are the common tools whose flags name no secret: ``mysql -pSECRET`` (the value glued to
``-p``), ``docker login -p VALUE`` or ``-p=VALUE`` (and podman, nerdctl, buildah, skopeo,
helm registry, oras), ``sshpass -pVALUE`` and ``sshpass -p VALUE``, and ``aws configure set
aws_secret_access_key VALUE``. The ``-p`` forms ride on the shared dash rule (``tokens``),
which already stops at every dash, and then look back along the line for the tool;
``configure set`` is a rule of its own, anchored on words that ordinary build output seldom
holds (see ``rules`` for why that is cheap). ``curl -u user:password``, ``redis-cli -a
password``, ``htpasswd -b file user password`` and ``mc alias set ALIAS URL ACCESS SECRET``
are rules anchored on the command's name, whose check reads the command's arguments (a
short pass, up to the next command on the line). Only the value is replaced.
"""

from __future__ import annotations

import functools
import re

from relay.redact.assignments import stands_in, value_end
from relay.redact.linear import Searcher, latin1_searcher, line_searcher, past_line
from relay.redact.rules import Kind, Rule, rule

_VALUE = rb"(?P<pw>[^\s'\"\-][^\s'\"]{0,4095})"
# Without the leading dash: the shared dash rule supplies it. ``pgap`` tells ``-pVALUE``
# (mysql) from ``-p VALUE`` (a registry login); a bare ``-p`` asks at the prompt. ``-p=VALUE``
# (``peq``) is either's: the Go tools' flag parser (pflag) reads a short flag's value so.
# Refused inside the regex, so that build logs cost no Python check each: a dash inside a
# word (``site-packages``), the compilers' -pthread, -pipe, -pedantic… and, as words of their
# own (or before ``=``), find's and other tools' -p flags: ``-pg+1jRoB/…``, ``-pythonRocks24``
# and ``-pathfinder9`` are mysql's passwords, ``-path '*.ibd'`` is find's.
P_FLAG = (
    rb"(?<=[\s'\"(]-)p(?!thread|ipe|edantic"
    rb"|(?:ie|ic|g|rint|rune|ath|refix|rofile|ython)(?![^\s'\"=]))"
    rb"(?:(?P<peq>=)|(?P<pgap>[ \t]*))['\"]?" + _VALUE
)
# The command, as a word of its own on the line (not ``-I/usr/include/mysql``).
# (or a Python list's item: ``['mysql', '-uroot', '-pSECRET']``, as CalledProcessError prints)
_MYSQL = re.compile(rb"(?:^|[^\w\-./])(?:[^\s\-]\S*/)?mysql[a-z]*(?:['\"],)?[ \t]")
_LOGIN = re.compile(
    rb"(?:^|[^\w\-.])(?:docker|podman|nerdctl|buildah|skopeo|helm[ \t]+registry|oras|az)"
    rb"[ \t]+login[ \t]"
)

# sshpass takes the password glued or apart (``sshpass -pVALUE ssh …``, ``sshpass -p VALUE``),
# as its own option: between it and ``-p`` only its other options (a later ``-p`` is ssh's port).
_SSHPASS = re.compile(
    rb"(?:^|[^\w\-.])(?:[^\s\-]\S*/)?sshpass(?:[ \t]+-[dfpev]\S*+(?:[ \t]+[^\s\-]\S*+)?)*+[ \t]+\Z"
)


_QUOTED = {39: "sq", 34: "dq"}  # ', "


def _value(block: bytes, m: re.Match[bytes]) -> tuple[int, int] | None:
    """The password, to its closing quote when quoted (``-p 'two words'``): the regex
    reads one word of it."""
    start, end = m.span("pw")
    quote = _QUOTED.get(block[start - 1]) if start > 0 else None
    if quote is not None:
        end = value_end(block, quote, start, end)
    if len(block[start:end].rstrip(b"`'\"),;.:")) < 3 or stands_in(block, start, end):
        return None  # ``sshpass -p V``: a usage line's name for it (no one's password)
    return start, end


def p_flag_span(block: bytes, m: re.Match[bytes]) -> tuple[int, int] | None:
    """``-pSECRET`` after ``mysql``; ``-p SECRET`` after ``docker login`` and its kin."""
    # At most 300 bytes back: on a line with no break in sight, the whole block before each
    # -p would make a log of dashes quadratic.
    floor = max(0, m.start() - 300)
    line = max(block.rfind(b"\n", floor, m.start()) + 1, floor)
    head = block[line : m.start()].lower()
    if m.group("peq"):  # ``-p=VALUE``: a registry login's (pflag's) or mysql's
        known = _LOGIN.search(head) or _MYSQL.search(head)
    else:
        known = (_LOGIN if m.group("pgap") else _MYSQL).search(head)
    if known or (b"sshpass" in head and _SSHPASS.search(head)):
        return _value(block, m)
    return None


# A command's arguments after its name, each a word or a quoted string, up to the next
# command on the line (``|``, ``;``, ``&&``) and at most ``_MOST_ARGS`` of them: a short pass.
_ARG = re.compile(rb"[ \t]++(?:'(?P<sq>[^'\r\n]*+)'?|\"(?P<dq>[^\"\r\n]*+)\"?|(?P<w>[^\s'\"]\S*+))")
_MOST_ARGS = 48
_COMMAND_END = frozenset((b"|", b"||", b";", b"&&", b"&"))
_WORD_BEFORE = re.compile(rb"[\w\-.]")


def _args(block: bytes, at: int) -> list[tuple[int, int]]:
    """The spans of the arguments from ``at``, quotes left out."""
    out: list[tuple[int, int]] = []
    while len(out) < _MOST_ARGS and (m := _ARG.match(block, at)) is not None:
        at = m.end()
        group = m.lastgroup or "w"
        start, end = m.span(group)
        if group == "w" and block[start:end] in _COMMAND_END:
            break
        out.append((start, end))
        if group == "w" and block[end - 1] == 59:  # ";": the command ends with this word
            break
    return out


def _command_at(block: bytes, m: re.Match[bytes]) -> bool:
    """The command's name is a word of its own (``/usr/bin/curl``, not ``libcurl``)."""
    at = m.start()
    return at == 0 or block[at - 1] == 47 or not _WORD_BEFORE.match(block, at - 1)  # "/"


def _secret(block: bytes, start: int, end: int) -> tuple[int, int] | None:
    return None if end <= start or stands_in(block, start, end) else (start, end)


def _user_password(
    block: bytes,
    m: re.Match[bytes],
    *,
    flags: tuple[bytes, ...],
    attached: tuple[bytes, ...],
    separator: bytes,
) -> tuple[int, int] | None:
    """The password of a command's ``user<separator>password`` argument: after one of
    ``flags`` (``-u u:p``), glued to one of ``attached`` (``-uu:p``), or as ``--flag=u:p``;
    a user alone asks at a prompt."""
    if not _command_at(block, m):
        return None
    args = _args(block, m.end() - 1)
    for i, (start, end) in enumerate(args):
        word = block[start:end]
        if word in flags and i + 1 < len(args):
            start, end = args[i + 1]
        elif word[:2] in attached and word[2:3] != b"-":
            start += 2
        elif word.startswith(tuple(f + b"=" for f in flags if f.startswith(b"--"))):
            start += word.index(b"=") + 1
        else:
            continue
        cut = block.find(separator, start, end)
        return None if cut < 0 else _secret(block, cut + len(separator), end)
    return None


def curl_span(block: bytes, m: re.Match[bytes]) -> tuple[int, int] | None:
    """``curl -u user:password`` (``--user``, ``-U``, ``--proxy-user``, ``-uuser:pw``,
    ``--user=…``): the password, after the first colon; ``-u user`` asks at a prompt."""
    flags = (b"-u", b"--user", b"-U", b"--proxy-user")
    return _user_password(block, m, flags=flags, attached=(b"-u", b"-U"), separator=b":")


def redis_span(block: bytes, m: re.Match[bytes]) -> tuple[int, int] | None:
    """``redis-cli -a password`` (``--pass password``, ``--pass=password``)."""
    if not _command_at(block, m):
        return None
    args = _args(block, m.end() - 1)
    for i, (start, end) in enumerate(args):
        word = block[start:end]
        if word in (b"-a", b"--pass") and i + 1 < len(args):
            return _secret(block, *args[i + 1])
        if word.startswith(b"--pass="):
            return _secret(block, start + 7, end)
    return None


_HTPASSWD_VALUED = frozenset(b"Cr")  # options that take a number after them


def htpasswd_span(block: bytes, m: re.Match[bytes]) -> tuple[int, int] | None:
    """``htpasswd -b[c…] file user password``, ``htpasswd -nb user password``: with ``-b``
    the password is the last argument (``-n`` prints the entry instead of naming a file)."""
    if not _command_at(block, m):
        return None
    letters = bytearray()
    positional: list[tuple[int, int]] = []
    args = iter(_args(block, m.end() - 1))
    for start, end in args:
        word = block[start:end]
        if not positional and word[:1] == b"-" and len(word) > 1:
            letters += word[1:]
            if word[-1] in _HTPASSWD_VALUED:
                next(args, None)
            continue
        positional.append((start, end))
    if ord("b") not in letters:
        return None
    at = 1 if ord("n") in letters else 2
    return _secret(block, *positional[at]) if len(positional) > at else None


def openssl_pass_span(block: bytes, m: re.Match[bytes]) -> tuple[int, int] | None:
    """``openssl … -pass pass:password`` (``-passin``, ``-passout``): OpenSSL's pass
    phrase argument; ``env:``, ``file:``, ``fd:`` and ``stdin`` name where it is instead."""
    args = _args(block, m.end())
    if not args:
        return None
    start, end = args[0]
    if block[start : start + 5].lower() != b"pass:":
        return None
    return _secret(block, start + 5, end)


def smbclient_span(block: bytes, m: re.Match[bytes]) -> tuple[int, int] | None:
    """``smbclient -U user%password`` (``--user=user%password``): after the first ``%``."""
    return _user_password(block, m, flags=(b"-U", b"--user"), attached=(), separator=b"%")


# Tools whose password flag names no secret, case and all (sqlcmd's ``-p`` prints
# statistics, zip's ``-p`` keeps paths): the flags that take it as the next argument, and
# those it may be glued to (``7z a -pSECRET``; a bare ``-p`` asks at a prompt).
_MONGO_TOOLS = (b"", b"sh", b"dump", b"restore", b"export", b"import", b"stat", b"top", b"files")
_LDAP_TOOLS = (b"search", b"modify", b"add", b"delete", b"whoami", b"compare", b"modrdn", b"exop")
_TOOL_FLAGS: dict[bytes, tuple[tuple[bytes, ...], tuple[bytes, ...]]] = {
    b"sqlcmd": ((b"-P",), (b"-P",)),
    b"osql": ((b"-P",), (b"-P",)),
    b"bcp": ((b"-P",), (b"-P",)),
    b"ssh-keygen": ((b"-N", b"-P"), (b"-N", b"-P")),
    b"7z": ((), (b"-p",)),
    b"7za": ((), (b"-p",)),
    b"7zr": ((), (b"-p",)),
    b"zip": ((b"-P",), (b"-P",)),
    # MongoDB's shells and tools: ``-p pw`` (a bare ``-p`` asks at a prompt)
    **{b"mongo" + tool: ((b"-p",), ()) for tool in _MONGO_TOOLS},
    # OpenLDAP's clients: ``-w pw`` binds with it (``-W`` asks); ldappasswd's ``-a`` and
    # ``-s`` are the old and the new password
    **{b"ldap" + tool: ((b"-w",), (b"-w",)) for tool in _LDAP_TOOLS},
    b"ldappasswd": ((b"-w", b"-a", b"-s"), (b"-w", b"-a", b"-s")),
    # unzip's ``-P pw`` (its ``-p`` pipes to stdout); openssl's ``-k pw`` (enc's pass phrase)
    b"unzip": ((b"-P",), (b"-P",)),
    b"openssl": ((b"-k",), ()),
    # twine's ``-p token`` (PyPI's API token, with ``-u __token__``)
    b"twine": ((b"-p",), ()),
}
# Their names (the prefilter's superset reads them too).
TOOL_NAMES = (
    rb"(?:sqlcmd|osql|bcp|ssh-keygen|7z[ar]?|(?:un)?zip|openssl|twine|mongo(?:"
    + b"|".join(tool for tool in _MONGO_TOOLS if tool)
    + rb")?|ldap(?:passwd|"
    + b"|".join(_LDAP_TOOLS)
    + rb"))"
)
TOOL = TOOL_NAMES + rb"(?:\.exe)?[ \t]"


def tool_flag_span(block: bytes, m: re.Match[bytes]) -> tuple[int, int] | None:
    """``sqlcmd -P pw``, ``ssh-keygen -N pw``, ``zip -P pw``, ``7z a -ppw``, ``ldapsearch -w
    pw``: the value of the tool's own password flag. Where the command has two (``ssh-keygen
    -P old -N new``, ``ldappasswd -a old -s new``), the span runs from the first to the last:
    a check gives one span, and the flags between are no loss."""
    if not _command_at(block, m):
        return None
    name = m.group().lower().rstrip(b" \t").removesuffix(b".exe")
    apart, glued = _TOOL_FLAGS[name]
    args = _args(block, m.end() - 1)
    first: tuple[int, int] | None = None
    last: tuple[int, int] | None = None
    for i, (start, end) in enumerate(args):
        word = block[start:end]
        found = None
        if word in apart and i + 1 < len(args):
            found = _secret(block, *args[i + 1])
            if found is not None and block[found[0] : found[0] + 1] == b"-":
                found = None
        elif word[:2] in glued and len(word) > 2:
            found = _secret(block, start + 2, end)
        if found is not None:
            first, last = first or found, found
    return None if first is None or last is None else (first[0], last[1])


def net_use_span(block: bytes, m: re.Match[bytes]) -> tuple[int, int] | None:
    """``net use Z: \\\\host\\share PASSWORD /user:DOMAIN\\name`` (or the password after
    ``/user:…``): the first argument after the share that is no ``/`` switch; ``*`` asks."""
    if not _command_at(block, m):
        return None
    shared = False
    for start, end in _args(block, m.end() - 1):
        word = block[start:end]
        if word.startswith(b"\\\\"):
            shared = True
        elif shared and not word.startswith(b"/") and word != b"*":
            return _secret(block, start, end)
    return None


# MinIO's client: ``mc alias set ALIAS URL ACCESS_KEY SECRET_KEY`` (and the older ``mc config
# host add``, the same arguments); its flags that take a value (``--api S3v4``, ``--path on``).
MC = rb"mc(?:\.exe)?[ \t]+(?:alias[ \t]+set|config[ \t]+host[ \t]+add)[ \t]"
_MC_VALUED = frozenset((b"--api", b"--path", b"--config-dir", b"-c"))


def mc_alias_span(block: bytes, m: re.Match[bytes]) -> tuple[int, int] | None:
    """The secret key, the fourth argument that is no flag nor a flag's value; an alias
    without one (``mc alias set local http://localhost:9000``) asks for none."""
    if not _command_at(block, m):
        return None
    positional: list[tuple[int, int]] = []
    args = iter(_args(block, m.end() - 1))
    for start, end in args:
        word = block[start:end]
        if word[:1] == b"-" and len(word) > 1:
            if b"=" not in word and word.lower() in _MC_VALUED:
                next(args, None)
            continue
        positional.append((start, end))
    return _secret(block, *positional[3]) if len(positional) > 3 else None


# vault's flags that take no value (Go's flag package reads any other's next word as its
# value: ``-namespace admin``, ``-format json``)
_VAULT_SWITCHES = frozenset(
    (b"-no-print", b"-no-store", b"-non-interactive", b"-tls-skip-verify", b"-token-only")
)
# A token's shape, not prose's (``vault login failed:``, ``… with your token``): a service,
# batch or recovery token's prefix, or eight characters at least with a digit or both cases.
_VAULT_TOKEN = re.compile(rb"(?:hv[sbr]\.|[sb]\.)?[A-Za-z0-9_\-.+/=]{8,}")


def _token_shaped(word: bytes) -> bool:
    if _VAULT_TOKEN.fullmatch(word) is None or word.endswith((b".", b",")):
        return False
    return (
        word[:4] in (b"hvs.", b"hvb.", b"hvr.")
        or word[:2] in (b"s.", b"b.")
        or (any(c in b"0123456789" for c in word) or (word.lower() != word != word.upper()))
    )


def vault_login_span(block: bytes, m: re.Match[bytes]) -> tuple[int, int] | None:
    """``vault login TOKEN`` (or ``token=TOKEN``): the token, the first argument that is no
    flag nor a flag's value (``-method=userpass``, ``-namespace admin``) nor another
    method's ``name=value`` (whose ``password=…`` the named rules read), and is shaped as a
    token (``vault login failed: …`` is prose); ``-`` reads it from standard input."""
    if not _command_at(block, m):
        return None
    args = _args(block, m.end() - 1)
    i = 0
    while i < len(args):
        start, end = args[i]
        word = block[start:end]
        i += 1
        if word.startswith(b"-"):
            takes_next = b"=" not in word and word.lower() not in _VAULT_SWITCHES
            if takes_next and i < len(args) and not block[args[i][0] :].startswith(b"-"):
                i += 1  # the flag's value
            continue
        if word.lower().startswith(b"token="):
            start += len(b"token=")
            return _secret(block, start, end) if _token_shaped(block[start:end]) else None
        if b"=" in word or not _token_shaped(word):
            return None
        return _secret(block, start, end)
    return None


# A .netrc entry (as ``cat <<EOF > ~/.netrc`` writes it): ``machine HOST login USER password
# VALUE``, its tokens apart by blanks; ``default`` stands for any machine.
NETRC = (
    rb"(?:machine[ \t]+[^\s]+|default)(?:[ \t]+(?:login|account|port)[ \t]+[^\s]+)*"
    rb"[ \t]+password[ \t]+" + _VALUE
)
# Where one is, for RE2 to find before ``re`` reads it (a line of ``login`` pairs without
# a password would otherwise be read again from each ``machine``).
_SEEK_NETRC = (
    rb"(?:machine[ \t]+[^\s]+|default)(?:[ \t]+(?:login|account|port)[ \t]+[^\s]+)*"
    rb"[ \t]+password[ \t]+[^\s'\"\-]"
)
NETRC_SUPERSET = r"(?:machine[ \t]|default[ \t])[^\n]*[ \t]password[ \t]"
# A here-document fed to a command that reads a password on its standard input (``cat <<EOF
# | docker login --password-stdin``, ``chpasswd <<EOF``): its first line is the secret.
STDIN_HEREDOC = rb"(?P<head><<-?[ \t]*['\"]?(?P<tag>[a-z_][a-z0-9_]*)['\"]?)[^\n]*\n(?P<pw>[^\n]+)"
# What such a command says (lowered): docker's and its kin's ``--password-stdin``, ``gh auth
# login --with-token``, ``chpasswd``, ``passwd --stdin``, and a secret store's that keeps what
# it reads (``docker secret create NAME -``, podman's, ``gcloud secrets versions add NAME
# --data-file=-``, ``gcloud secrets create``) (``STDIN_READERS``: its superset).
# ``sudo -S`` (``--stdin``) reads its password there too; lowered, ``sudo -s`` (a root
# shell, fed commands) reads the same, so its flag's case is read on the line as written
# (``reads_stdin``).
STDIN_READERS = (
    rb"pass(?:word)?-stdin|with-token|chpasswd|passwd[ \t]+--stdin|devops[ \t]+login"
    rb"|secrets?[ \t]+create|secrets[ \t]+versions[ \t]+add|sudo[ \t]"
)
STDIN_READER = re.compile(
    rb"pass(?:word)?-stdin|with-token"
    rb"|(?:^|[\s|;&(])(?:chpasswd|passwd[ \t]+--stdin|devops[ \t]+login)(?:[\s|;&)]|$)"
    rb"|(?:^|[\s|;&(])(?:secrets?[ \t]+create|secrets[ \t]+versions[ \t]+add)[ \t]"
)
# sudo's flags before ``-S`` (or ``--stdin``): a cluster of letters, a long option, or one
# that takes a value (``-u deploy``, ``-p ''``).
_SUDO_STDIN = (
    rb"(?:^|[\s|;&(])sudo(?:[ \t]+(?:-[ugpUCDRTrth][ \t]+[^\s\-|;&][^\s|;&]{0,63}"
    rb"|-[A-Za-z]{1,6}|--[a-z\-]{2,24}(?:=[^\s|;&]{1,64})?)){0,8}"
    rb"[ \t]+(?:-[A-Za-z]{0,5}S[A-Za-z]{0,5}|--stdin)(?:[\s|;&)]|$)"
)


@functools.cache
def _sudo_stdin() -> Searcher:
    """``_SUDO_STDIN``'s search, compiled when a line first names ``sudo``: its counted runs
    make it the costliest regex of a start to compile (3 ms), for what most logs never hold."""
    return latin1_searcher(_SUDO_STDIN)


# (RE2, in any case: ``re`` from an alternation tried every byte of a long line, once for
# each here-string on it)
_STDIN_READER_LINEAR = line_searcher(STDIN_READER.pattern)


def reads_stdin(text: bytes) -> bool:
    """The command line ``text`` (as written) holds a command that reads a password on its
    standard input."""
    if _STDIN_READER_LINEAR(text, 0, len(text))[0][0] >= 0:
        return True
    return b"sudo" in text and _sudo_stdin()(text, 0, len(text))[0][0] >= 0


STDIN_SUPERSET = r"<<-?[ \t]*['\"]?[a-z_][a-z0-9_]*['\"]?[^\n]*\n[^\n]*"
# Where a here-document opens, for the prefilter: it keeps the line below with any hit on
# this one (``heredoc_below``), which a regex from ``<<`` did not where another find began
# earlier on the line.
HEREDOC_SUPERSET = r"<<-?[ \t]*['\"]?[a-z_][a-z0-9_]*"
_HEREDOC_OPEN = line_searcher(HEREDOC_SUPERSET.encode())


def heredoc_below(block: bytes, line: int, end: int) -> int:
    """``end`` (past the break of the hit line from ``line``), or past the line below it
    when a here-document opens on it: its first line is what ``_heredoc_span`` reads."""
    if block.find(b"<<", line, end) < 0 or _HEREDOC_OPEN(block, line, end)[0][0] < 0:
        return end
    return past_line(block, end)


def _heredoc_span(block: bytes, m: re.Match[bytes]) -> tuple[int, int] | None:
    """The here-document's first line, when the command on the ``<<`` line reads a password
    from it, and that line is not already the document's end."""
    if block[m.start() - 1 : m.start()] == b"<":
        return None  # a here-string, ``<<< V``: the value is on this line (``commands``)
    line = block.rfind(b"\n", 0, m.start()) + 1
    if not reads_stdin(block[line : m.start("pw") - 1]):
        return None
    start, end = m.span("pw")
    end -= block[end - 1 : end] == b"\r"
    body = block[start:end].strip(b" \t")
    if not body or body.lower() == m.group("tag") or stands_in(block, start, end):
        return None
    return start, end


SHELL_RULES: tuple[Rule, ...] = (
    rule(
        Kind.SECRET,
        rb"-pass(?:in|out)?(?=[ \t])",
        lower=True,
        check=openssl_pass_span,
        gate=rb"-pass(?:in|out)?[ \t]+['\"]?pass:",
    ),
    rule(Kind.SECRET, rb"smbclient[ \t]", lower=True, check=smbclient_span, gate=rb"smbclient"),
    rule(Kind.SECRET, rb"curl[ \t]", lower=True, check=curl_span, gate=rb"curl[ \t]"),
    rule(Kind.SECRET, TOOL, lower=True, check=tool_flag_span, gate=TOOL, seek=TOOL),
    rule(Kind.SECRET, rb"net[ \t]+use[ \t]", lower=True, check=net_use_span, gate=rb"net[ \t]+use"),
    rule(
        Kind.SECRET,
        rb"vault(?:\.exe)?[ \t]+login[ \t]",
        lower=True,
        check=vault_login_span,
        gate=rb"vault(?:\.exe)?[ \t]+login",
    ),
    rule(Kind.SECRET, rb"redis-cli[ \t]", lower=True, check=redis_span, gate=rb"redis-cli[ \t]"),
    rule(Kind.SECRET, MC, lower=True, check=mc_alias_span, gate=MC),
    rule(Kind.SECRET, rb"htpasswd[ \t]", lower=True, check=htpasswd_span, gate=rb"htpasswd[ \t]"),
    rule(  # aws configure set …; npm, yarn, pnpm config set //registry.npmjs.org/:_authToken …
        Kind.SECRET,
        rb"(?:configure[ \t]+set[ \t]+(?:[a-z0-9_\-]+\.){0,4}"
        rb"[a-z0-9_]{0,40}(?:secret|token|password|key)[a-z0-9_]{0,40}"
        rb"|config[ \t]+set[ \t]+[^\s=]{0,200}?(?:_auth|_authtoken|_password|token|password))"
        rb"[ \t]+['\"]?" + _VALUE,
        lower=True,
        check=_value,
        gate=rb"config(?:ure)?[ \t]+set[ \t]",
    ),
    rule(
        Kind.SECRET,
        NETRC,
        lower=True,
        check=_value,
        seek=_SEEK_NETRC,
        gate=NETRC_SUPERSET.encode(),
    ),
    rule(
        Kind.SECRET,
        STDIN_HEREDOC,
        lower=True,
        check=_heredoc_span,
        # where a here-document can open: ``re`` alone tried each ``<<`` of a line that
        # never ends against the whole rest of it (quadratic: 9 CPU-s for a 1 MB line)
        seek=STDIN_SUPERSET.encode(),
        gate=rb"<<[^\n]*(?:" + STDIN_READERS + rb")|(?:" + STDIN_READERS + rb")[^\n]*<<",
    ),
)
