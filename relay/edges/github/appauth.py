"""GitHub App authentication, for nodes that are not a person.

An App proves itself with a short-lived JWT (RS256, signed with the App's private key) and
trades it for an installation token that lasts an hour. The JWT is encoded by PyJWT (which
gidgethub brings), with the claims gidgethub's ``apps.get_jwt`` makes (``iat`` 60 s back,
``exp`` ten minutes after ``iat``). We do not call ``get_jwt`` itself: it reads the wall
clock, and here time comes from an injected clock, so that the refresh schedule and the
hub's expiry checks are testable without waiting.

GitHub docs: "Generating a JSON Web Token (JWT) for a GitHub App" and "Generating an
installation access token for a GitHub App".
"""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from relay.errors import ConfigError, RemoteProtocolError

if TYPE_CHECKING:
    from gidgethub.abc import GitHubAPI

Clock = Callable[[], float]

# GitHub recommends iat 60 s in the past (clock drift) and allows exp at most 10 min ahead.
JWT_BACKDATE_SECONDS = 60
JWT_LIFETIME_SECONDS = 540
# An installation token is replaced this long before GitHub says it expires.
REFRESH_MARGIN_SECONDS = 300.0

ENV_APP_ID = "RELAY_APP_ID"
ENV_INSTALLATION_ID = "RELAY_APP_INSTALLATION_ID"
ENV_PRIVATE_KEY = "RELAY_APP_PRIVATE_KEY"
ENV_PRIVATE_KEY_FILE = "RELAY_APP_PRIVATE_KEY_FILE"


def _load_rsa_key(private_key: str | bytes) -> Any:
    """Parse a PEM RSA private key, raising ConfigError with a fix when it is not one."""
    from cryptography.hazmat.primitives.asymmetric import rsa
    from cryptography.hazmat.primitives.serialization import load_pem_private_key

    pem = private_key.encode("ascii") if isinstance(private_key, str) else private_key
    try:
        key = load_pem_private_key(pem, password=None)
    except (ValueError, TypeError) as err:
        raise ConfigError(
            "the GitHub App private key is not a readable PEM key",
            hint="paste the .pem file GitHub generated for the App, unencrypted",
        ) from err
    if not isinstance(key, rsa.RSAPrivateKey):
        raise ConfigError(
            "the GitHub App private key is not an RSA key",
            hint="GitHub Apps sign with RS256; use the key GitHub generated",
        )
    return key


def app_jwt(*, app_id: str, private_key: str | bytes, now: float) -> str:
    """Return the App's JWT for `now`: RS256, iat 60 s back, exp 9 min ahead, iss = app id
    (gidgethub's ``get_jwt`` claims, at an injected time)."""
    import jwt

    issued = int(now)
    claims = {
        "iat": issued - JWT_BACKDATE_SECONDS,
        "exp": issued + JWT_LIFETIME_SECONDS,
        "iss": app_id,
    }
    return jwt.encode(claims, _load_rsa_key(private_key), algorithm="RS256")


@dataclass(frozen=True)
class InstallationToken:
    """An installation token and the moment (epoch seconds) GitHub says it expires."""

    token: str
    expires_at: float

    def fresh_at(self, now: float, *, margin: float = REFRESH_MARGIN_SECONDS) -> bool:
        """True while the token may still be used at `now` without refreshing."""
        return now < self.expires_at - margin


def parse_token_response(data: Any) -> InstallationToken:
    """Read GitHub's ``{token, expires_at}`` answer, or raise RemoteProtocolError."""
    if not isinstance(data, Mapping):
        raise RemoteProtocolError("the installation token answer is not a JSON object")
    token, expires = data.get("token"), data.get("expires_at")
    if not isinstance(token, str) or not token or not isinstance(expires, str):
        raise RemoteProtocolError("the installation token answer lacks token or expires_at")
    try:
        moment = datetime.fromisoformat(expires)
    except ValueError as err:
        raise RemoteProtocolError(f"expires_at {expires!r} is not an ISO 8601 time") from err
    if moment.tzinfo is None:
        raise RemoteProtocolError(f"expires_at {expires!r} carries no time zone")
    return InstallationToken(token=token, expires_at=moment.timestamp())


@dataclass
class AppAuth:
    """One App installation's credentials; hands out a cached, refreshed installation token."""

    app_id: str
    installation_id: int
    private_key: str | bytes = field(repr=False)
    clock: Clock = time.time
    refresh_margin: float = REFRESH_MARGIN_SECONDS
    _cached: InstallationToken | None = field(default=None, init=False, repr=False)
    _lock: asyncio.Lock = field(default_factory=asyncio.Lock, init=False, repr=False)
    requests: int = field(default=0, init=False)  # sent for token exchanges, for pass reports

    def __post_init__(self) -> None:
        _load_rsa_key(self.private_key)  # fail at set-up, not at the first pass

    def jwt(self) -> str:
        """A fresh App JWT for the current clock reading."""
        return app_jwt(app_id=self.app_id, private_key=self.private_key, now=self.clock())

    @property
    def cached(self) -> InstallationToken | None:
        """The installation token last fetched, if any."""
        return self._cached

    async def installation_token(self, gh: GitHubAPI) -> str:
        """Return a usable installation token, fetching a new one when the cached one is due.

        Raises gidgethub's HTTP exceptions as they come (401 for a rejected JWT) and
        RemoteProtocolError for an answer without a token.
        """
        async with self._lock:
            cached = self._cached
            if cached is not None and cached.fresh_at(self.clock(), margin=self.refresh_margin):
                return cached.token
            data = await gh.post(
                "/app/installations/{installation_id}/access_tokens",
                url_vars={"installation_id": str(self.installation_id)},
                data=b"",
                jwt=self.jwt(),
            )
            self._cached = parse_token_response(data)
            return self._cached.token


def installation_token_blocking(auth: AppAuth, *, api_url: str) -> str:
    """The installation token for synchronous callers (``NodeContext.token``), refreshed when
    due. The exchange runs on a private event loop in a worker thread because the caller
    may itself be running inside one. ConfigError when GitHub refuses the App."""
    cached = auth.cached
    if cached is not None and cached.fresh_at(auth.clock(), margin=auth.refresh_margin):
        return cached.token

    async def fetch() -> str:
        # the same wire as every other request: retries with backoff, Retry-After honoured
        from relay.edges.github.session import ApiSession

        session = ApiSession(api_url=api_url, token="")
        try:
            async with session:
                return await auth.installation_token(session.wire)
        finally:
            auth.requests += session.stats.requests

    from concurrent.futures import ThreadPoolExecutor

    import gidgethub

    with ThreadPoolExecutor(max_workers=1) as pool:
        try:
            return pool.submit(asyncio.run, fetch()).result()
        except gidgethub.HTTPException as err:
            raise ConfigError(
                f"the GitHub App could not get an installation token ({err.status_code})",
                hint=f"check {ENV_APP_ID}, {ENV_INSTALLATION_ID} and the App's private key",
            ) from err


def _read_key(environ: Mapping[str, str]) -> str:
    inline = environ.get(ENV_PRIVATE_KEY, "")
    if inline.strip():
        return inline
    path = environ.get(ENV_PRIVATE_KEY_FILE, "")
    if not path:
        raise ConfigError(
            f"{ENV_APP_ID} is set but no private key was given",
            hint=f"set {ENV_PRIVATE_KEY} to the PEM text or {ENV_PRIVATE_KEY_FILE} to its path",
        )
    try:
        return Path(path).read_text(encoding="ascii")
    except OSError as err:
        raise ConfigError(f"cannot read the GitHub App private key file: {err.strerror}") from err


def from_env(
    environ: Mapping[str, str] | None = None, *, clock: Clock = time.time
) -> AppAuth | None:
    """Build AppAuth from RELAY_APP_* variables, or None when no App is configured."""
    env = os.environ if environ is None else environ
    app_id = env.get(ENV_APP_ID, "").strip()
    if not app_id:
        return None
    installation = env.get(ENV_INSTALLATION_ID, "").strip()
    if not installation.isdigit():
        raise ConfigError(
            f"{ENV_INSTALLATION_ID} must be the App installation's numeric id",
            hint="find it in the installation's settings URL",
        )
    return AppAuth(
        app_id=app_id, installation_id=int(installation), private_key=_read_key(env), clock=clock
    )
