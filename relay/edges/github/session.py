"""The plumbing under ``GitHubClient``: one aiohttp session, the ETag cache, errors, parsing.

Ground rules: one client per pass (``async with``), bound to one repository; every answer
is parsed into a frozen model here; every failure leaves as one relay error with a one-line
message that says what to do (the gidgethub exception stays chained as its cause). The
few "failures" relay treats as answers are answers here: a label that already exists, a
label not on the issue, a claim ref someone else created first.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any, Self, TypeVar
from urllib.parse import quote, urlencode

import gidgethub
from pydantic import BaseModel

from relay import __version__
from relay.edges.github.cache import EtagCache, cache_owner
from relay.edges.github.errors import map_http_error
from relay.edges.github.transport import (
    LOST_ANSWER_PROBE,
    Clock,
    Probe,
    RetryPolicy,
    Sleep,
    WireAPI,
    WireStats,
)
from relay.errors import ConfigError, RemoteProtocolError

if TYPE_CHECKING:
    from relay.edges.github.appauth import AppAuth

M = TypeVar("M", bound=BaseModel)
Allow = Callable[[gidgethub.HTTPException], bool]
DECLINED: Any = object()  # what a call returns when its ``allow`` accepted the error
REQUEST_TIMEOUT = 30.0  # seconds for one HTTP exchange
PER_PAGE = 100


def iso(moment: datetime) -> str:
    """GitHub's ``since`` format: UTC, whole seconds, ``Z``."""
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


class ApiSession:
    """One API session bound to one repository; ``GitHubClient`` adds the typed calls."""

    def __init__(
        self,
        *,
        api_url: str,
        token: str,
        repo: str | None = None,
        cache_path: Path | None = None,
        policy: RetryPolicy | None = None,
        sleep: Sleep | None = None,
        clock: Clock = time.time,
        timeout: float = REQUEST_TIMEOUT,
        app: AppAuth | None = None,
    ) -> None:
        self.api_url = api_url.rstrip("/")
        self.app = app  # the GitHub App this session's token was bought for, if any
        self.repo = repo
        self._token = token
        self._cache_path = cache_path
        self._owner = cache_owner(api_url=self.api_url, token=token)
        self._policy = policy or RetryPolicy()
        self._sleep: Sleep = sleep or asyncio.sleep
        self._clock = clock
        self._timeout = timeout
        self._api: WireAPI | None = None
        self._cache: EtagCache | None = None
        self._stats = WireStats()

    async def __aenter__(self) -> Self:
        import aiohttp

        self._cache = EtagCache()
        if self._cache_path is not None:
            self._cache = EtagCache.load(self._cache_path, owner=self._owner)
        session = aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=self._timeout))
        self._api = WireAPI(
            session,
            f"relay/{__version__}",
            policy=self._policy,
            sleep=self._sleep,
            clock=self._clock,
            oauth_token=self._token,
            cache=self._cache,
            base_url=self.api_url,
        )
        self._stats = self._api.stats
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        try:
            if isinstance(exc, ConfigError) and _is_404(exc) and await self._out_of_sight():
                from relay.edges.github.errors import no_access

                raise no_access(self.repo or "") from exc
        finally:
            await self.close()

    async def _out_of_sight(self) -> bool:
        """After a 404: whether the bound repository itself is hidden from this token (one
        more request), so every verb says so instead of "not found ... check the name"."""
        if not self.repo or self._api is None:
            return False
        try:
            await self._wire.getitem(self._repo_path)
        except gidgethub.HTTPException as err:
            return int(err.status_code) == 404
        except Exception:  # unreachable now: the first error says what is true
            return False
        return False

    async def close(self) -> None:
        """Close the session and write the ETag cache; safe to call twice."""
        if self._api is not None:
            await self._api._session.close()
            self._api = None
        if self._cache is not None and self._cache_path is not None:
            self._cache.save(self._cache_path, owner=self._owner)

    @property
    def stats(self) -> WireStats:
        """Requests sent, 304s received, retries and seconds waited (also after closing)."""
        return WireStats(**vars(self._stats))

    @property
    def rate_remaining(self) -> int | None:
        """Requests left in the primary rate-limit window, as the last full answer said."""
        limit = self._api.rate_limit if self._api is not None else None
        return None if limit is None else int(limit.remaining)

    @property
    def wire(self) -> WireAPI:
        """The gidgethub API under this session (for calls the typed client does not make,
        such as the App's token exchange, which authenticates with a JWT)."""
        return self._wire

    @property
    def _wire(self) -> WireAPI:
        if self._api is None:
            raise RuntimeError("the GitHub client was used outside `async with`")
        return self._api

    @property
    def _repo_path(self) -> str:
        if not self.repo:
            raise ConfigError(
                "no repository configured", hint="run `relay init` (or `relay join`) in the clone"
            )
        owner, _, name = self.repo.partition("/")
        return f"/repos/{quote(owner, safe='')}/{quote(name, safe='')}"

    @contextmanager
    def _errors(self, what: str) -> Iterator[None]:
        try:
            yield
        except gidgethub.HTTPException as exc:
            raise map_http_error(
                exc, what=what, api_url=self.api_url, repo=self.repo, now=self._clock()
            ) from exc

    # --- plumbing: every call goes through these three ---

    async def _get(self, path: str, what: str, *, allow: Allow | None = None) -> Any:
        """GET one item (conditional when cached); DECLINED when ``allow`` accepts the error."""
        try:
            return await self._wire.getitem(path)
        except gidgethub.HTTPException as exc:
            if allow is not None and allow(exc):
                return DECLINED
            with self._errors(what):
                raise

    async def _get_all(
        self, path: str, what: str, *, changes_first_page: bool = False, **query: str | None
    ) -> list[Any]:
        """GET every page of a list, following ``Link: rel=next``. ``changes_first_page``:
        the list is sorted so that any item joining it lands on the first page (issues by
        ``updated`` descending)."""
        params = {k: v for k, v in query.items() if v is not None}
        url = f"{path}?{urlencode({**params, 'per_page': PER_PAGE})}"
        with self._errors(what):
            items = [item async for item in self._wire.getiter(url)]
            # GitHub's ETag covers a page's body, not its Link header: once the last page is
            # full, a new item changes no cached page, a 304 replays the old "no next page",
            # and the list would silently end early. So look one page further ourselves —
            # unless a new item could only have changed the first page, whose 304 (or fresh
            # answer) then tells the truth about the pages after it.
            while items and len(items) % PER_PAGE == 0 and not changes_first_page:
                page = len(items) // PER_PAGE + 1
                more = [item async for item in self._wire.getiter(f"{url}&page={page}")]
                if not more:
                    break
                items += more
            return items

    async def _send(
        self,
        method: str,
        path: str,
        what: str,
        data: Any = b"",
        *,
        allow: Allow | None = None,
        probe: Probe | None = None,
    ) -> Any:
        """POST/PATCH/PUT/DELETE; DECLINED when ``allow`` accepts the error. ``probe`` finds
        what a POST created when its answer is lost, so a retry does not create it twice."""
        wire = self._wire
        token = LOST_ANSWER_PROBE.set(probe)
        try:
            if method == "POST":
                return await wire.post(path, data=data)
            if method == "PATCH":
                return await wire.patch(path, data=data)
            if method == "PUT":
                return await wire.put(path, data=data)
            return await wire.delete(path, data=data)
        except gidgethub.HTTPException as exc:
            if allow is not None and allow(exc):
                return DECLINED
            with self._errors(what):
                raise
        finally:
            LOST_ANSWER_PROBE.reset(token)

    def _one(self, model: type[M], data: Any, what: str) -> M:
        try:
            return model.model_validate(data)
        except ValueError as exc:
            raise RemoteProtocolError(
                f"the API at {self.api_url} sent an unexpected shape for {what}; is it GitHub"
                " or `relay hub`?"
            ) from exc

    def _many(self, model: type[M], data: Iterable[Any], what: str) -> list[M]:
        try:
            return [model.model_validate(item) for item in data]
        except ValueError as exc:
            raise RemoteProtocolError(
                f"the API at {self.api_url} sent an unexpected shape for {what}"
            ) from exc


def _is_404(err: BaseException) -> bool:
    """Whether the API's answer under a relay error was a 404."""
    cause = err.__cause__
    return isinstance(cause, gidgethub.HTTPException) and int(cause.status_code) == 404
