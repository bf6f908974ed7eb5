"""TLS contexts whose trust store is read when they first make a connection.

aiohttp makes two client TLS contexts as it is imported (one verifying, one not), and
making one reads the system's trust store: a good part of what importing aiohttp costs,
paid by every command that loads the API client, over http as well. Imported inside
:func:`deferred_contexts`, aiohttp's contexts are the same ``ssl.SSLContext`` objects with
the same settings (protocol, verification, host-name check, flags, the key log), but the
trust store is read at their first handshake (``wrap_bio``, what asyncio calls, or
``wrap_socket``): a command that talks to ``http://`` never reads it, one that talks to
``https://`` reads it once, as it connects.
"""

from __future__ import annotations

import contextlib
import os
import ssl
import sys
from collections.abc import Callable, Iterator
from typing import Any

_REAL_CREATE = ssl.create_default_context
_REAL_PATHS = ssl.SSLContext.set_default_verify_paths


def _defer(context: ssl.SSLContext, load: Callable[[], None]) -> None:
    """Run ``load`` just before ``context`` first wraps a connection (the loads deferred
    for one context run in the order they were asked for)."""
    loads: list[Callable[[], None]] = context.__dict__.setdefault("_relay_loads", [])
    loads.append(load)
    if len(loads) > 1:  # the wrappers are in place
        return

    def ready() -> None:
        for name in ("wrap_bio", "wrap_socket", "_relay_loads"):  # the class's from now on
            context.__dict__.pop(name, None)
        for step in loads:
            step()

    def wrap_bio(*args: Any, **kwargs: Any) -> ssl.SSLObject:
        ready()
        return context.wrap_bio(*args, **kwargs)

    def wrap_socket(*args: Any, **kwargs: Any) -> ssl.SSLSocket:
        ready()
        return context.wrap_socket(*args, **kwargs)

    context.__dict__.update(wrap_bio=wrap_bio, wrap_socket=wrap_socket)


def _client_context(
    purpose: ssl.Purpose = ssl.Purpose.SERVER_AUTH,
    *,
    cafile: Any = None,
    capath: Any = None,
    cadata: Any = None,
) -> ssl.SSLContext:
    """``ssl.create_default_context()`` for a client, its default certificates loaded on
    first use (any other purpose or explicit locations: the real one, at once)."""
    if purpose != ssl.Purpose.SERVER_AUTH or cafile or capath or cadata:
        return _REAL_CREATE(purpose, cafile=cafile, capath=capath, cadata=cadata)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    context.verify_mode = ssl.CERT_REQUIRED
    context.check_hostname = True
    if sys.version_info >= (3, 13):  # what create_default_context adds from 3.13 on
        context.verify_flags |= ssl.VERIFY_X509_PARTIAL_CHAIN | ssl.VERIFY_X509_STRICT
    keylog = os.environ.get("SSLKEYLOGFILE")
    if keylog and not sys.flags.ignore_environment and hasattr(context, "keylog_filename"):
        context.keylog_filename = keylog
    _defer(context, lambda: context.load_default_certs(ssl.Purpose.SERVER_AUTH))
    return context


def _paths_later(context: ssl.SSLContext) -> None:
    _defer(context, lambda: _REAL_PATHS(context))


@contextlib.contextmanager
def deferred_contexts() -> Iterator[None]:
    """While in it, a client context made by ``ssl.create_default_context()``, or given
    ``set_default_verify_paths()``, reads the trust store only when it first connects.
    For the import of aiohttp, which makes two of them."""
    ssl.create_default_context = _client_context
    ssl.SSLContext.set_default_verify_paths = _paths_later  # type: ignore[method-assign,assignment]
    try:
        yield
    finally:
        ssl.SSLContext.set_default_verify_paths = _REAL_PATHS  # type: ignore[method-assign]
        ssl.create_default_context = _REAL_CREATE
