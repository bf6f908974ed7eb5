"""The one edge of redaction: read this machine's user, home, host names and secret values.

Everything else in ``relay.redact`` is pure and takes these facts as data. Which environment
variables hold secrets is decided from their *names*, the way CI systems mask them: a name
whose parts include a secret-naming word (``GITHUB_TOKEN``, ``DB_PASSWORD``, ``AWS_SECRET_
ACCESS_KEY``, ``NPM_AUTH``) — but not the working-directory variables ``PWD``/``OLDPWD``.
The assignment rules (``assignments``) read the same words in ``NAME=value`` lines, ``pass``
included (``DB_PASS=…``); the scan here is the wider net (``GH_PAT``, ``SENTRY_DSN``,
``DEPLOY_KEY``), since masking a value this node holds costs nothing in ordinary text —
unless that value is ordinary text: where the secret word is not the name's meaning (its
last word, a number aside: ``GITHUB_TOKEN``, ``API_KEY_2``) but one word of several
(``AUTH_PROVIDER=github``, ``SECRETS_REGION=us-east-1``, ``TOKEN_ENDPOINT=https://…``), the
value is taken only when its shape looks drawn, not named (``SECRET_KEY_BASE=<hex>``; see
``values``), or every ``github`` of a log would be masked. A URL's password in any variable
(``DATABASE_URL=postgres://app:…@db/app``) is this node's secret too, and so is a connection
string's (``ConnectionStrings__Db=Server=db;User ID=sa;Password=…;``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

from relay.redact.literals import MachineFacts

# The words that name a secret: as a word of the name (``GITHUB_TOKEN``, ``JWT``,
# ``CI_JOB_JWT``, ``MNEMONIC``), anywhere in it (``HTPASSWD``), or as its last word after a
# separator only (``STRIPE_SK``: ``SK`` alone, ``DISK`` and ``TASK`` are not one).
_WORDS = (
    r"token|secret|password|passwd|passphrase|pass|pwd|api_?key|apikey|access_?key|"
    r"private_?key|key|credentials?|auth|pat|cookie|signing|webhook|dsn|jwt|mnemonic"
)
_ANYWHERE = r"token|secret|password|passwd|apikey"
_SUFFIX = r"[_\-.]sk"
# Words a name may hold beside a secret's as often as for one (``SONAR_LOGIN`` is a token,
# ``DOCKER_LOGIN`` a user name; ``TOTP_SEED`` a key, ``RANDOM_SEED`` a number): their
# value is taken when it looks drawn (``_looks_drawn``), or, for a seed, when it is no
# number (a TOTP seed is base32, which reads as a word).
_WEAK = r"login|seed|salt|pepper"
_SECRET_NAME = re.compile(
    rf"(?i)(?:^|[_\-.])(?:{_WORDS}|{_WEAK})(?:$|[_\-.])|{_ANYWHERE}|{_SUFFIX}(?:[_\-.]?[0-9]+)?$"
)
# The name means a secret: its last word is one (a number after it aside).
_MEANS_SECRET = re.compile(
    rf"(?i)(?:(?:^|[_\-.])(?:{_WORDS})|{_ANYWHERE}|{_SUFFIX})(?:[_\-.]?[0-9]+)?$"
)
# A seed's name (its last word): its value is a secret unless it is a number.
_SEED_NAME = re.compile(r"(?i)(?:^|[_\-.])seed(?:[_\-.]?[0-9]+)?$")
_NOT_SECRET_NAMES = frozenset({"PWD", "OLDPWD", "SSH_AUTH_SOCK", "XAUTHORITY", "GPG_AGENT_INFO"})
# A URL's password: ``scheme://user:password@host``.
# (a password may hold a slash: ``openssl rand -base64`` pasted unescaped; not a port's
# digits before a path: ``host:8080/x@v1`` names no password)
_URL_PASSWORD = re.compile(
    r"[a-zA-Z][a-zA-Z0-9+.\-]*://[^\s:/@]*:(?![0-9]{1,5}(?:/|@))([^\s@]+)@[A-Za-z0-9\[]"
)
# One ``key=value`` part of a connection string (ADO.NET, ODBC, JDBC's SQL Server form):
# the value in braces (ODBC: ``}}`` is a ``}`` in it), in quotes, or up to the next ``;``.
_CONNECTION_PART = re.compile(
    r"\s*([A-Za-z][A-Za-z0-9 _.\-]*?)\s*=\s*"
    r"(?:\{((?:[^}]|\}\})*)\}|\"([^\"]*)\"|'([^']*)'|([^;]*?))\s*(?:;|$)"
)
# The keys of a connection string's password.
_CONNECTION_PASSWORD_KEYS = frozenset({"password", "pwd"})


def names_secret(name: str) -> bool:
    """True when an environment variable's name says its value may be a secret."""
    return name.upper() not in _NOT_SECRET_NAMES and bool(_SECRET_NAME.search(name))


def means_secret(name: str) -> bool:
    """True when the name's meaning is a secret (its last word), not one word of several."""
    return names_secret(name) and bool(_MEANS_SECRET.search(name))


def secret_values(environ: Mapping[str, str], extra: Iterable[str] = ()) -> tuple[str, ...]:
    """The values of secret-named variables (where the name only holds a secret word, those
    that look drawn), URL passwords, plus explicitly passed secrets, without blanks."""
    found = [
        value
        for name, value in environ.items()
        if names_secret(name) and (means_secret(name) or _taken_for_its_shape(name, value))
    ]
    passwords = [m.group(1) for value in environ.values() for m in _URL_PASSWORD.finditer(value)]
    passwords += (p for value in environ.values() for p in connection_passwords(value))
    found += [p for p in passwords if not _stands_in(p)]
    return tuple(sorted({v for v in (*found, *extra) if v.strip()}))


def connection_passwords(value: str) -> list[str]:
    """The password of a connection string (``Server=db;User ID=sa;Password=…;``, ``Pwd=``,
    any case, a value in braces or quotes): only of a value that is ``key=value`` parts,
    two at least, ``;`` between them, and nothing else."""
    if ";" not in value or "=" not in value:
        return []
    found: list[str] = []
    parts = at = 0
    while at < len(value):
        part = _CONNECTION_PART.match(value, at)
        if part is None or part.end() == at:
            return []
        key = part.group(1).lower().replace(" ", "")
        if key in _CONNECTION_PASSWORD_KEYS:
            braced, dq, sq, bare = part.group(2, 3, 4, 5)
            secret = braced.replace("}}", "}") if braced is not None else dq or sq or bare
            if secret:
                found.append(secret)
        parts += 1
        at = part.end()
    return found if parts >= 2 else []


def _taken_for_its_shape(name: str, value: str) -> bool:
    """A value under a name that only holds a secret word: one that looks drawn, or a seed
    that is no number (a TOTP seed's base32 reads as a word, a test's seed is a number)."""
    if _SEED_NAME.search(name) and not value.strip().isdigit():
        return True
    return _looks_drawn(value)


def _stands_in(value: str) -> bool:
    """A URL's password that only stands in for one (``${DB_PASSWORD}``, ``****``)."""
    from relay.redact.values import value_is_not_secret

    return value_is_not_secret(value.encode("utf-8", "replace"), words=False)


def _looks_drawn(value: str) -> bool:
    """The value's shape is a secret's, not a word's, a region's or a plain URL's."""
    from relay.redact.expressions import made_part
    from relay.redact.values import value_is_not_secret

    raw = value.strip().encode("utf-8", "replace")
    return made_part(raw) and not value_is_not_secret(raw)


def gather_facts(
    *, environ: Mapping[str, str] | None = None, token: str | None = None
) -> MachineFacts:
    """Read this machine's facts; ``token`` is relay's own token, masked like any secret."""
    import getpass
    import os
    import socket
    from pathlib import Path

    env = os.environ if environ is None else environ
    try:
        user = getpass.getuser()
    except (KeyError, OSError):
        user = env.get("USER", env.get("USERNAME", ""))
    hosts = {socket.gethostname(), socket.getfqdn(), env.get("COMPUTERNAME", "")}
    home = str(Path.home()) if environ is None else env.get("HOME", env.get("USERPROFILE", ""))
    secrets = secret_values(env, [token] if token else [])
    return MachineFacts(
        user=user, home=home, hosts=tuple(sorted(h for h in hosts if h)), secrets=secrets
    )
