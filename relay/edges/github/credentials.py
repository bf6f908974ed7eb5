"""Where relay finds its token and its API base URL: the one lookup order.

The token is looked for in order (:func:`token_routes`): a GitHub App the node acts as
(``RELAY_APP_*``: its installation token), ``RELAY_TOKEN``, ``GITHUB_TOKEN``, ``GH_TOKEN``,
the OS keyring (when the optional ``keyring`` package has a usable backend and `relay join
--save-token keyring` kept one there), the GitHub CLI (``gh auth token --hostname HOST`` for
the API's host, when it answers: an installed but logged-out gh is no route), then the
node's token file (``.git/relay/token``, which must be readable by this user only). The
first one found wins. A pass, `relay doctor` and `relay join` all read this one list, so
what doctor describes is the route a pass takes. The API base URL comes from ``--api``,
else ``RELAY_API_URL``, else GitHub's.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from relay.edges.files import read_private
from relay.errors import ConfigError

if TYPE_CHECKING:
    from relay.edges.github.appauth import AppAuth

TOKEN_ENV_VARS: tuple[str, ...] = ("RELAY_TOKEN", "GITHUB_TOKEN", "GH_TOKEN")
API_URL_ENV = "RELAY_API_URL"
DEFAULT_API_URL = "https://api.github.com"
GH_TIMEOUT = 3.0  # seconds; a gh that hangs (keyring prompt) must not stall a pass

MISSING_TOKEN = (
    "no API token found; set RELAY_TOKEN to a token for {url}"
    " (embedded hub: `relay hub token LOGIN` makes one; GitHub: `gh auth login`)"
)


@dataclass(frozen=True)
class Token:
    """A token and where it came from; the value never appears in a repr."""

    value: str = field(repr=False)
    source: str


def api_base_url(flag: str | None = None, env: Mapping[str, str] | None = None) -> str:
    """The API base URL from ``--api``, ``RELAY_API_URL`` or the default; ConfigError if bad."""
    environ = os.environ if env is None else env
    url = (flag or environ.get(API_URL_ENV) or DEFAULT_API_URL).strip().rstrip("/")
    parts = urlsplit(url)
    if parts.username is not None or parts.password is not None:
        raise ConfigError(
            "the API URL must not carry a user or password",
            hint=f"give the token in RELAY_TOKEN and the bare URL in --api or {API_URL_ENV}",
        )
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ConfigError(
            f"API URL {url!r} is not an http(s) URL; pass --api http://HOST:PORT"
            f" or set {API_URL_ENV}"
        )
    return url


def gh_hostname(api_url: str) -> str:
    """The host the GitHub CLI files a token under for this API (github.com for the cloud)."""
    host = urlsplit(api_url).hostname or ""
    return "github.com" if host == "api.github.com" else host


@dataclass(frozen=True)
class Route:
    """One place a token may come from. ``present`` shows no secret and is true only when
    the route would give a token now (a variable set, gh answering `gh auth token
    --hostname HOST`, a readable file); ``fetch`` gets the token or None."""

    name: str
    present: Callable[[], bool]
    fetch: Callable[[], Token | None]


def token_routes(
    *,
    api_url: str,
    token_file: Path | None = None,
    env: Mapping[str, str] | None = None,
    gh_timeout: float = GH_TIMEOUT,
    app: AppAuth | None = None,
) -> list[Route]:
    """The lookup order, as data: every caller that finds or describes a token reads it."""
    environ = os.environ if env is None else env
    routes: list[Route] = []
    if app is not None:
        routes.append(
            Route(f"GitHub App {app.app_id}", lambda: True, lambda: _app_token(app, api_url))
        )
    for name in TOKEN_ENV_VARS:
        routes.append(Route(name, _env_set(environ, name), _env_token(environ, name)))
    # saved for this node on purpose: before gh
    routes.append(
        Route(
            "the OS keyring",
            lambda: keyring_token(api_url) is not None,
            lambda: keyring_token(api_url),
        )
    )
    # gh counts when it would answer now for this host: installed but logged out (or
    # logged in to another host only) is no route, whatever join and doctor would say
    routes.append(
        Route(
            "`gh auth token`",
            lambda: _token_from_gh(api_url, environ, gh_timeout) is not None,
            lambda: _token_from_gh(api_url, environ, gh_timeout),
        )
    )
    if token_file is not None:
        path = token_file
        routes.append(
            Route(
                f"the token file {path}",
                lambda: read_token_file(path) is not None,
                lambda: read_token_file(path),
            )
        )
    return routes


def _env_set(environ: Mapping[str, str], name: str) -> Callable[[], bool]:
    return lambda: bool(environ.get(name, "").strip())


def _env_token(environ: Mapping[str, str], name: str) -> Callable[[], Token | None]:
    def fetch() -> Token | None:
        value = environ.get(name, "").strip()
        return Token(value, name) if value else None

    return fetch


def _app_token(app: AppAuth, api_url: str) -> Token:
    from relay.edges.github.appauth import installation_token_blocking

    return Token(installation_token_blocking(app, api_url=api_url), f"GitHub App {app.app_id}")


def find_token(
    *,
    api_url: str,
    token_file: Path | None = None,
    env: Mapping[str, str] | None = None,
    gh_timeout: float = GH_TIMEOUT,
    app: AppAuth | None = None,
) -> Token:
    """Find the token relay sends to ``api_url``, the first route that answers; ConfigError
    saying how to provide one."""
    routes = token_routes(
        api_url=api_url, token_file=token_file, env=env, gh_timeout=gh_timeout, app=app
    )
    return first_token(routes, api_url=api_url)


def first_token(routes: list[Route], *, api_url: str) -> Token:
    """The token of the first route that answers; ConfigError saying how to provide one."""
    for route in routes:
        found = route.fetch()
        if found is not None:
            return found
    raise ConfigError(MISSING_TOKEN.format(url=api_url))


def read_token_file(path: Path) -> Token | None:
    """The token in ``path``, None if absent; ConfigError if others may read it or it's empty."""
    value = read_private(path, what="token file")
    return None if value is None else Token(value, f"token file {path}")


def _token_from_gh(api_url: str, env: Mapping[str, str], timeout: float) -> Token | None:
    """Ask the GitHub CLI, if installed, for its token for the API's host."""
    from relay.edges.ownpath import own_path

    path = own_path(env.get("PATH", os.environ.get("PATH", "")))  # never a clone's folder
    gh = shutil.which("gh", path=path)
    if gh is None:
        return None
    argv = [gh, "auth", "token", "--hostname", gh_hostname(api_url)]
    try:
        done = subprocess.run(
            argv,
            capture_output=True,
            text=True,
            timeout=timeout,
            env=dict(env),
            stdin=subprocess.DEVNULL,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    value = done.stdout.strip()
    if done.returncode != 0 or not value or any(c.isspace() for c in value):
        return None
    return Token(value, "gh auth token")


KEYRING_SERVICE = "relay"


def usable_keyring() -> Any:
    """The ``keyring`` package when it is installed and has a usable backend, else None.

    keyring is optional: a node that wants its token in the OS keychain installs it.
    """
    try:
        import keyring
        from keyring.backends import fail
    except ImportError:
        return None
    return None if isinstance(keyring.get_keyring(), fail.Keyring) else keyring


def keyring_token(api_url: str) -> Token | None:
    """The token kept for ``api_url`` in the OS keyring, if any."""
    backend = usable_keyring()
    if backend is None:
        return None
    try:
        value = backend.get_password(KEYRING_SERVICE, api_url)
    except Exception:  # a locked or unreachable keychain is the same as no entry
        return None
    return Token(value.strip(), "the OS keyring") if value and value.strip() else None


def save_keyring_token(api_url: str, token: str) -> bool:
    """Keep ``token`` for ``api_url`` in the OS keyring; False when no keyring is usable."""
    backend = usable_keyring()
    if backend is None:
        return False
    backend.set_password(KEYRING_SERVICE, api_url, token)
    return True
