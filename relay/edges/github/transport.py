"""The wire under gidgethub: counting, retrying and backing off, request by request.

Ground rules (GitHub's rate-limit guidance, GITHUB-FACTS A1): a 429 or a rate-limit 403 is
retried after ``Retry-After`` seconds when given, else at ``x-ratelimit-reset`` when the
budget is spent, else after at least a minute; a 5xx or a dropped connection is retried
with exponential backoff. Every request has a bounded number of attempts and a bounded
total wait, and a wait that would overrun the bound is not started: the last answer goes
back to gidgethub, which raises, and the client turns that into a one-line error. The
sleep and the clock are injectable so tests need not wait. ``_request`` is the one seam
every byte passes through, so the counters count what went over the wire, 304s included.
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import socket
from collections.abc import Awaitable, Callable, Mapping
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from relay.edges.github.primed import take
from relay.edges.github.tls import deferred_contexts
from relay.errors import RemoteUnavailable

with deferred_contexts():  # aiohttp's TLS contexts read the trust store when they connect
    import aiohttp
    import gidgethub.aiohttp

API_VERSION = "2022-11-28"
Sleep = Callable[[float], Awaitable[None]]
Clock = Callable[[], float]
Answer = tuple[int, Mapping[str, str], bytes]
Probe = Callable[[], Awaitable[Any]]
LOST_ANSWER_PROBE: ContextVar[Probe | None] = ContextVar("relay_lost_answer_probe", default=None)
"""Set around one content-creating POST: how to find what it created if its answer is lost
(a dropped connection or a 5xx after the write may have committed it). The wire asks it
before every retry of that POST; what it finds is the answer, so nothing is posted twice."""


@dataclass(frozen=True)
class RetryPolicy:
    """How hard one request tries: attempts, the backoff curve, the total wait allowed."""

    attempts: int = 5
    connect_attempts: int = 2  # refused/unresolvable: fail fast, the hub is likely down
    base_delay: float = 0.5
    max_delay: float = 8.0
    secondary_wait: float = 60.0  # GitHub: wait at least a minute without Retry-After,
    secondary_max: float = 300.0  # then longer each time (doubling, up to five minutes)
    max_total_wait: float = 240.0  # room for two secondary-limit waits (60 s, then 120 s)
    jitter: float = 0.25  # a 5xx or drop's backoff is cut by up to this share, at random
    # seconds between two writes (POST, PATCH, PUT, DELETE) of one client; None: GitHub's
    # guidance (one at a time, at least a second apart) against GitHub, none elsewhere
    write_interval: float | None = None

    def backoff(self, attempt: int, draw: float = 0.0) -> float:
        """Exponential delay before retry number ``attempt`` (1-based), less the jitter
        share ``draw`` (0..1) of it, so clients that failed together do not retry
        together."""
        full = float(min(self.base_delay * 2 ** (attempt - 1), self.max_delay))
        return full * (1.0 - self.jitter * min(max(draw, 0.0), 1.0))

    def secondary(self, attempt: int) -> float:
        """The wait after a secondary-limit answer with no Retry-After: a minute, growing."""
        return float(min(self.secondary_wait * 2 ** (attempt - 1), self.secondary_max))


@dataclass
class WireStats:
    """What went over the wire in this client's life."""

    requests: int = 0
    not_modified: int = 0
    retries: int = 0
    waited: float = 0.0
    lost_answers: int = 0  # POSTs whose answer was lost (dropped, 5xx) and were retried
    found_after_loss: int = 0  # of those, the ones found already done: not posted again
    writes: int = 0  # content-creating requests (POST, PATCH, PUT, DELETE; no GraphQL query)


@dataclass
class _Budget:
    """The seconds one logical request has spent waiting so far."""

    waited: float = 0.0


WRITES = frozenset({"POST", "PATCH", "PUT", "DELETE"})


def is_github(api_url: str) -> bool:
    """Whether ``api_url`` is GitHub's: api.github.com, or a GitHub Enterprise Server's
    ``https://HOST/api/v3`` (`relay hub` is neither, though it speaks the same API)."""
    parts = urlsplit(api_url.rstrip("/"))
    return parts.hostname == "api.github.com" or parts.path.endswith("/api/v3")


def write_interval(api_url: str, policy: RetryPolicy) -> float:
    """Seconds a client keeps between its writes to ``api_url`` (GitHub's secondary-limit
    guidance: content-creating requests one at a time, at least one second apart)."""
    if policy.write_interval is not None:
        return policy.write_interval
    return 1.0 if is_github(api_url) else 0.0


def is_mutation(body: bytes) -> bool:
    """Whether a GraphQL request's body is a mutation (content-creating; a query is not)."""
    try:
        query = json.loads(body).get("query", "")
    except (ValueError, AttributeError):
        return False
    return isinstance(query, str) and query.lstrip().startswith("mutation")


def _message(body: bytes) -> str:
    try:
        data = json.loads(body)
    except ValueError:
        return ""
    return str(data.get("message", "")) if isinstance(data, dict) else ""


def is_rate_limited(status: int, headers: Mapping[str, str], message: str) -> bool:
    """Whether a 403/429 is a rate limit (primary or secondary) rather than a refusal."""
    if status == 429:
        return True
    if status != 403:
        return False
    lowered = message.lower()
    return (
        headers.get("x-ratelimit-remaining") == "0"
        or "retry-after" in headers
        or "rate limit" in lowered
        or "abuse" in lowered
    )


def retry_delay(
    status: int,
    headers: Mapping[str, str],
    body: bytes,
    *,
    attempt: int,
    now: float,
    policy: RetryPolicy,
    draw: float = 0.0,
) -> float | None:
    """Seconds to wait before retrying this answer, or None when it must not be retried.
    ``draw`` (0..1, random in use) jitters a 5xx's backoff."""
    if status >= 500:
        return policy.backoff(attempt, draw)
    if not is_rate_limited(status, headers, _message(body)):
        return None
    retry_after = headers.get("retry-after", "")
    if retry_after.strip().isdigit():
        return float(retry_after)
    reset = headers.get("x-ratelimit-reset", "")
    if headers.get("x-ratelimit-remaining") == "0" and reset.strip().isdigit():
        return max(float(reset) - now, 0.0) + 1.0
    return policy.secondary(attempt)


class WireAPI(gidgethub.aiohttp.GitHubAPI):
    """gidgethub's aiohttp client with retries, counters and the API version header."""

    def __init__(
        self,
        session: aiohttp.ClientSession,
        requester: str,
        *,
        policy: RetryPolicy,
        sleep: Sleep,
        clock: Clock,
        **kwargs: Any,
    ) -> None:
        super().__init__(session, requester, **kwargs)
        self.policy = policy
        self.stats = WireStats()
        self._sleep = sleep
        self._clock = clock
        self._draw = random.Random().random  # the jitter's source
        self._write_gap = write_interval(str(kwargs.get("base_url", "")), policy)
        self._write_lock = asyncio.Lock()
        self._last_write: float | None = None

    async def sleep(self, seconds: float) -> None:
        await self._sleep(seconds)

    async def _request(
        self, method: str, url: str, headers: Mapping[str, str], body: bytes = b""
    ) -> Answer:
        if method.upper() in WRITES and self._write_gap > 0:
            async with self._write_lock:  # one write at a time, spaced
                if self._last_write is not None:
                    due = self._last_write + self._write_gap - self._clock()
                    if due > 0:
                        await self._sleep(due)
                try:
                    return await self._send(method, url, headers, body)
                finally:
                    self._last_write = self._clock()
        return await self._send(method, url, headers, body)

    async def _send(self, method: str, url: str, headers: Mapping[str, str], body: bytes) -> Answer:
        sent = {**headers, "x-github-api-version": API_VERSION}
        budget = _Budget()
        probe = LOST_ANSWER_PROBE.get() if method.upper() == "POST" else None
        lost = False
        for attempt in range(1, self.policy.attempts + 1):
            if lost and probe is not None:
                found = await self._look(probe)
                if found is not None:
                    return found
            answer = await self._attempt(method, url, sent, body, attempt, budget)
            lost = answer is None or answer[0] >= 500
            if answer is None:
                continue  # a dropped connection, already waited for
            status, response_headers, data = answer
            delay = retry_delay(
                status,
                response_headers,
                data,
                attempt=attempt,
                now=self._clock(),
                policy=self.policy,
                draw=self._draw(),
            )
            last = attempt == self.policy.attempts
            if delay is None or last or not await self._wait(delay, budget):
                return answer
        raise AssertionError("unreachable: the last attempt returns or raises")

    async def _look(self, probe: Probe) -> Answer | None:
        """Before retrying a POST whose answer was lost: did it take effect? The probe's
        find becomes the answer (201), so a retried write never creates a second copy."""
        self.stats.lost_answers += 1
        token = LOST_ANSWER_PROBE.set(None)  # the probe's own requests are plain reads
        try:
            found = await probe()
        finally:
            LOST_ANSWER_PROBE.reset(token)
        if found is None:
            return None
        self.stats.found_after_loss += 1
        headers = {"content-type": "application/json; charset=utf-8"}
        return 201, headers, json.dumps(found).encode()

    async def _attempt(
        self,
        method: str,
        url: str,
        headers: Mapping[str, str],
        body: bytes,
        attempt: int,
        budget: _Budget,
    ) -> Answer | None:
        """One request; None after a retryable connection failure (and its wait)."""
        self.stats.requests += 1
        if method.upper() in WRITES and (
            not url.rstrip("/").endswith("/graphql") or is_mutation(body)
        ):
            self.stats.writes += 1
        # asked already: by the idle check (relay.watchers.quiet), or as the verb started
        answer = await take(method, url, headers)
        if answer is None:
            try:
                answer = await super()._request(method, url, headers, body)
            except (TimeoutError, aiohttp.ClientError) as exc:
                if not await self._may_retry_connection(exc, attempt, budget):
                    raise self._unreachable(exc) from exc
                return None
        if answer[0] == 304:
            self.stats.not_modified += 1
        return answer

    async def _may_retry_connection(self, exc: Exception, attempt: int, budget: _Budget) -> bool:
        if isinstance(exc, aiohttp.ClientSSLError | aiohttp.InvalidURL):
            return False
        limit = self.policy.connect_attempts
        if not isinstance(exc, aiohttp.ClientConnectorError):
            limit = self.policy.attempts
        delay = self.policy.backoff(attempt, self._draw())
        return attempt < limit and await self._wait(delay, budget)

    async def _wait(self, delay: float, budget: _Budget) -> bool:
        """Sleep ``delay`` unless that overruns this request's total wait; False: give up."""
        if budget.waited + delay > self.policy.max_total_wait:
            return False
        budget.waited += delay
        self.stats.retries += 1
        self.stats.waited += delay
        await self._sleep(delay)
        return True

    def _unreachable(self, exc: Exception) -> RemoteUnavailable:
        # what went wrong in words, never an exception class's name
        if isinstance(exc, aiohttp.ClientSSLError):
            reason = "TLS handshake failed"
        elif isinstance(exc, aiohttp.ClientConnectorError) and isinstance(
            exc.os_error, socket.gaierror
        ):  # no address for the name: the error's number (-2) says nothing to a person
            return RemoteUnavailable(
                f"cannot resolve {exc.host}: no address for the API at {self.base_url}",
                hint="check the URL (--api, RELAY_API_URL) and this machine's network",
            )
        elif isinstance(exc, aiohttp.ClientConnectorError):
            number = exc.os_error.errno
            reason = (os.strerror(number) if number else "connection failed").lower()
        elif isinstance(exc, TimeoutError | asyncio.TimeoutError):
            reason = "no answer in time"
        else:
            reason = "the connection failed"
        return RemoteUnavailable(
            f"cannot reach the API at {self.base_url} ({reason});"
            " is `relay hub` running / is the URL right?"
        )
