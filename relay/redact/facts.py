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
(``DATABASE_URL=postgres://app:…@db/app``) is this node's secret too.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

from relay.redact.literals import MachineFacts

_SECRET_NAME = re.compile(
    r"(?i)(?:^|[_\-.])(?:token|secret|password|passwd|passphrase|pass|pwd|api_?key|apikey|"
    r"access_?key|private_?key|key|credentials?|auth|pat|cookie|signing|webhook|dsn)"
    r"(?:$|[_\-.])|token|secret|password|apikey"
)
# The name means a secret: its last word is one (a number after it aside).
_MEANS_SECRET = re.compile(
    r"(?i)(?:(?:^|[_\-.])(?:token|secret|password|passwd|passphrase|pass|pwd|api_?key|apikey|"
    r"access_?key|private_?key|key|credentials?|auth|pat|cookie|signing|webhook|dsn)"
    r"|token|secret|password|apikey)(?:[_\-.]?[0-9]+)?$"
)
_NOT_SECRET_NAMES = frozenset({"PWD", "OLDPWD", "SSH_AUTH_SOCK", "XAUTHORITY", "GPG_AGENT_INFO"})
# A URL's password: ``scheme://user:password@host``.
_URL_PASSWORD = re.compile(r"[a-zA-Z][a-zA-Z0-9+.\-]*://[^\s:/@]*:([^\s/@]+)@")


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
        if names_secret(name) and (means_secret(name) or _looks_drawn(value))
    ]
    passwords = (m.group(1) for value in environ.values() for m in _URL_PASSWORD.finditer(value))
    found += [p for p in passwords if not _stands_in(p)]
    return tuple(sorted({v for v in (*found, *extra) if v.strip()}))


def _stands_in(value: str) -> bool:
    """A URL's password that only stands in for one (``${DB_PASSWORD}``, ``****``)."""
    from relay.redact.values import value_is_not_secret

    return value_is_not_secret(value.encode("utf-8", "replace"))


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
