"""Answers already on hand, or on their way: GETs made before the full client was loaded.

Two callers ask before the client exists. The idle pass (:mod:`relay.watchers.quiet`) asks
for the issue list with the standard library first; when the answer is not a 304 there is
work, and the full client takes over. A verb (:mod:`relay.commands.early`) sends its first
GETs from a thread as it starts, so that they travel while the client, the models and the
protocol load. Rather than ask again, the client is handed the answer it would have got:
the wire (:mod:`relay.edges.github.transport`) takes it instead of sending that request,
once, and counts it as the request it was. It takes it only when it was asked the way the
wire would ask (the same token, accept and conditional headers) and came back 200 or 304;
anything else (an error, a lost connection, another token) is asked again by the wire, so
that it is reported and retried exactly as always. What gidgethub does with an answer (the
ETag cache, the rate limit, the next page) is then done as for any other.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

if TYPE_CHECKING:  # loaded when a GET is kept: the idle pass's check needs neither
    import threading
    from concurrent.futures import Future

Answer = tuple[int, Mapping[str, str], bytes]
TIMEOUT = 30.0  # seconds for one exchange, as the full client's
API_VERSION = "2022-11-28"  # as relay.edges.github.transport
ACCEPT = "application/vnd.github.v3+json"  # gidgethub's default
ENCODINGS = "gzip, deflate"  # what the full client asks for
# the headers an answer depends on: an early answer stands for the wire's request only when
# the wire would have sent these the same
MATCHED = ("authorization", "accept", "if-none-match", "if-modified-since")
TAKEN = frozenset({200, 304})

# url -> the answer (or its future) and the headers it was asked with (None: any request)
_ANSWERS: dict[str, tuple[Future[Answer], dict[str, str] | None]] = {}


def _same(headers: Mapping[str, str], sent: Mapping[str, str]) -> bool:
    lowered = {k.lower(): v for k, v in headers.items()}
    return all(lowered.get(name) == sent.get(name) for name in MATCHED)


def prime(url: str, answer: Answer, sent: Mapping[str, str] | None = None) -> None:
    """Keep ``answer`` for the next GET of ``url`` (in this process); ``sent``: the headers
    it was asked with (None: any request of ``url`` may take it)."""
    from concurrent.futures import Future

    done: Future[Answer] = Future()
    done.set_result(answer)
    _ANSWERS[url] = (done, None if sent is None else {k.lower(): v for k, v in sent.items()})


def request_headers(
    token: str, *, etag: str | None = None, last_modified: str | None = None, agent: str
) -> dict[str, str]:
    """The headers of a GET as the full client sends it (gidgethub's, the API version, the
    conditional ones, the encodings the full client accepts)."""
    headers = {
        "user-agent": agent,
        "accept": ACCEPT,
        "authorization": f"token {token}",
        "content-length": "0",
        "x-github-api-version": API_VERSION,
        "accept-encoding": ENCODINGS,
    }
    if etag is not None:
        headers["if-none-match"] = etag
    if last_modified is not None:
        headers["if-modified-since"] = last_modified
    return headers


def get(
    url: str, headers: Mapping[str, str], *, connected: threading.Event | None = None
) -> tuple[int, dict[str, str], bytes]:
    """GET ``url`` with the standard library; the status, headers (lower-cased) and body
    (decoded as the full client would). An https URL gets a TLS context made now, for this
    connection, with the system's trust store (``SSL_CERT_FILE`` as ever). ``connected``
    is set once the socket is connected, before the TLS handshake (or once it failed)."""
    import http.client

    parts = urlsplit(url)
    host, port = parts.hostname or "", parts.port
    connection: http.client.HTTPConnection
    try:
        if parts.scheme == "https":
            import ssl

            context = ssl.create_default_context()
            connection = http.client.HTTPSConnection(host, port, timeout=TIMEOUT, context=context)
            http.client.HTTPConnection.connect(connection)  # the socket alone, then TLS
            if connected is not None:
                connected.set()
            connection.sock = context.wrap_socket(connection.sock, server_hostname=host)
        else:
            connection = http.client.HTTPConnection(host, port, timeout=TIMEOUT)
            connection.connect()
    finally:
        if connected is not None:
            connected.set()
    target = parts.path + (f"?{parts.query}" if parts.query else "")
    try:
        connection.request("GET", target, headers=dict(headers))
        answer = connection.getresponse()
        body = answer.read()
        got = {name.lower(): value for name, value in answer.getheaders()}
    finally:
        connection.close()
    coding = got.get("content-encoding", "").lower()
    if body and coding in ("gzip", "deflate"):
        import zlib

        body = zlib.decompress(body, 47 if coding == "gzip" else 15)
    return answer.status, got, body


def fetch_early(url: str, headers: Mapping[str, str]) -> threading.Event:
    """GET ``url`` in a thread of its own, its answer kept for the wire; the event is set
    once its socket is connected (or it has failed), so the caller may go on loading."""
    import threading
    from concurrent.futures import Future

    connected = threading.Event()
    pending: Future[Answer] = Future()
    sent = {k.lower(): v for k, v in headers.items()}
    _ANSWERS[url] = (pending, sent)

    def run() -> None:
        # running, the future can no longer be cancelled (a waiter's cancellation would
        # cancel it through asyncio.wrap_future, and setting its answer would then raise)
        try:
            if not pending.set_running_or_notify_cancel():
                return
            try:
                answer = get(url, sent, connected=connected)
            except BaseException as exc:  # the wire asks again, and reports what it finds
                pending.set_exception(exc)
            else:
                pending.set_result(answer)
        finally:
            connected.set()

    threading.Thread(target=run, name="relay-early-get", daemon=True).start()
    return connected


def forget() -> None:
    """Drop every answer kept (an early GET still travelling finishes unread)."""
    _ANSWERS.clear()


async def take(method: str, url: str, headers: Mapping[str, str] | None = None) -> Answer | None:
    """The answer kept for a GET of ``url``, once, when it was asked as ``headers`` ask
    and came back 200 or 304 (waiting for one still travelling); None for anything else."""
    if method.upper() != "GET" or not _ANSWERS:
        return None
    kept = _ANSWERS.pop(url, None)
    if kept is None:
        return None
    pending, sent = kept
    if sent is not None and (headers is None or not _same(headers, sent)):
        return None
    if not pending.done():
        import asyncio

        try:
            await asyncio.wrap_future(pending)
        except Exception:
            return None
    if pending.exception() is not None:
        return None
    answer = pending.result()
    return answer if answer[0] in TAKEN else None
