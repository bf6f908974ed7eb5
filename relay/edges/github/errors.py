"""gidgethub's HTTP exceptions turned into relay's errors, each one line saying what to do.

Pure: the exception in, the relay error out, in one function, so every message can be
read in one place and tested without a network.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime

import gidgethub

from relay.edges.github.transport import is_rate_limited
from relay.errors import ConfigError, RelayError, RemoteProtocolError, RemoteUnavailable


def rejected_token(api_url: str) -> ConfigError:
    """The 401 message: the token is wrong, and how to get a right one."""
    return ConfigError(
        f"the API at {api_url} rejected the token; set RELAY_TOKEN to a valid token"
        " (embedded hub: relay hub token LOGIN)"
    )


def reset_text(headers: Mapping[str, str], now: float | None = None) -> str:
    """When to try again: ``Retry-After``, else ``x-ratelimit-reset`` as a UTC time."""
    reset = headers.get("x-ratelimit-reset", "")
    after = headers.get("retry-after", "")
    if after.strip().isdigit():
        return f"retry in {int(after)} s"
    if not reset.strip().isdigit():
        return "try again in a few minutes"
    at = datetime.fromtimestamp(int(reset), tz=UTC)
    now_ts = datetime.now(tz=UTC).timestamp() if now is None else now
    minutes = max(int(reset) - int(now_ts), 0) // 60
    return f"it resets at {at:%H:%M:%S} UTC (in {minutes} min)"


def _message(exc: gidgethub.HTTPException) -> str:
    text = str(exc.args[0]) if exc.args else ""
    return text or exc.status_code.phrase


def map_http_error(
    exc: gidgethub.HTTPException,
    *,
    what: str,
    api_url: str,
    repo: str | None,
    now: float | None = None,
) -> RelayError:
    """The relay error for a failed request about ``what`` (e.g. "issue #3")."""
    status = int(exc.status_code)
    message = _message(exc)
    where = repo or "the repository"
    if status == 401:
        return rejected_token(api_url)
    if status in (403, 429) and is_rate_limited(status, exc.headers, message):
        return RemoteUnavailable(
            f"the API at {api_url} rate-limited relay ({message}); {reset_text(exc.headers, now)}"
        )
    if status == 403:
        return ConfigError(
            f"the API at {api_url} refused {what} ({message}); the token needs write access"
            f" to {where}"
        )
    if status == 404:
        return ConfigError(
            f"{what}: not found in {where} at {api_url}; check the repository name"
            " (the remote's, or `relay init --repo OWNER/NAME`) and that the token can see it"
        )
    if status == 410:
        return ConfigError(f"{what}: gone from {where} (410: {message}); it was deleted")
    if status >= 500:
        return RemoteUnavailable(
            f"the API at {api_url} kept failing on {what} (HTTP {status}); try again later"
        )
    return RemoteProtocolError(f"the API at {api_url} refused {what} (HTTP {status}: {message})")


def no_access(repo: str) -> ConfigError:
    """A 404 for the repository itself: GitHub answers an outsider of a private repository
    as it answers a name that does not exist, so the token cannot see it either way."""
    return ConfigError(
        f"the token has no access to {repo}",
        hint=f"use a token of an account that can read {repo} (RELAY_TOKEN), or check the"
        " repository's name (the remote's, or `relay init --repo OWNER/NAME`)",
    )
