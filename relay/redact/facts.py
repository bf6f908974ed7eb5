"""The one edge of redaction: read this machine's user, home, host names and secret values.

Everything else in ``relay.redact`` is pure and takes these facts as data. Which environment
variables hold secrets is decided from their *names*, the way CI systems mask them: a name
whose parts include a secret-naming word (``GITHUB_TOKEN``, ``DB_PASSWORD``, ``AWS_SECRET_
ACCESS_KEY``, ``NPM_AUTH``) — but not the working-directory variables ``PWD``/``OLDPWD``.
The assignment rules (``assignments``) read the same words in ``NAME=value`` lines, ``pass``
included (``DB_PASS=…``); the scan here is the wider net (``GH_PAT``, ``SENTRY_DSN``,
``DEPLOY_KEY``), since masking a value this node holds costs nothing in ordinary text.
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
_NOT_SECRET_NAMES = frozenset({"PWD", "OLDPWD", "SSH_AUTH_SOCK", "XAUTHORITY", "GPG_AGENT_INFO"})


def names_secret(name: str) -> bool:
    """True when an environment variable's name says its value is a secret."""
    return name.upper() not in _NOT_SECRET_NAMES and bool(_SECRET_NAME.search(name))


def secret_values(environ: Mapping[str, str], extra: Iterable[str] = ()) -> tuple[str, ...]:
    """The values of secret-named variables, plus explicitly passed secrets, without blanks."""
    found = [value for name, value in environ.items() if names_secret(name)]
    return tuple(sorted({v for v in (*found, *extra) if v.strip()}))


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
