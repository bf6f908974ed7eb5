"""Running the hub in the foreground, and minting tokens for it.

The first line printed is the base URL (flushed at once) so that a parent process can
start ``relay hub --port 0`` and read where it listens.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import gc
import re
import signal
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from relay.errors import LocalUsageError
from relay.hub import running
from relay.hub.faults import FaultSpec


def default_data_dir() -> Path:
    """The platform's user data directory for the hub."""
    import platformdirs

    return platformdirs.user_data_path("relay", appauthor=False) / "hub"


LOGIN = re.compile(r"^[A-Za-z0-9](?:[A-Za-z0-9]|-(?=[A-Za-z0-9])){0,38}$")


def check_data_dir(data_dir: Path) -> Path:
    """The data directory must be a directory (or not exist yet)."""
    if data_dir.exists() and not data_dir.is_dir():
        raise LocalUsageError(
            f"--data {data_dir} is a file, not a directory",
            hint="name a directory (it is created if missing)",
        )
    return data_dir


def create_token(data_dir: Path, login: str, *, admin: bool = False, long: bool = False) -> str:
    """Create the user if new and return a fresh token (``long``: shaped like a
    fine-grained PAT, 93 characters, instead of a classic 40-character one)."""
    from relay.hub.store import Store

    if not LOGIN.match(login):
        raise LocalUsageError(
            f"bad login {login!r}",
            hint="use up to 39 letters, digits and single inner dashes, as GitHub does",
        )
    store = Store.open(check_data_dir(data_dir))
    try:
        found = store.user_by_login(login)
        if found is not None and found["type"] != "User":  # GitHub's can't sign in either
            what = "an organisation" if found["type"] == "Organization" else "an App's bot"
            raise LocalUsageError(
                f"{login} is {what}, which cannot sign in or hold a token, as on GitHub",
                hint="make a token for a person (for an organisation, one of its members)",
            )
        return store.create_token(login, admin=admin, long=long)
    finally:
        store.close()


def base_url(host: str, port: int, *, tls: bool = False) -> str:
    """The URL clients use; a wildcard bind is reached through loopback."""
    if host in ("0.0.0.0", "", "::"):
        host = "127.0.0.1"
    scheme = "https" if tls else "http"
    return f"{scheme}://[{host}]:{port}" if ":" in host else f"{scheme}://{host}:{port}"


@dataclass(frozen=True)
class Options:
    """What ``relay hub`` was told beyond where to listen (defaults: GitHub's limits)."""

    faults: FaultSpec = field(default_factory=FaultSpec)
    rate_limit: int = 5000
    content_limits: tuple[int, int] = (80, 500)
    content_window: int = 60
    strict_git: bool = False
    app_user: bool = False
    invitations: bool = False  # collaborators accept an invitation first, as on GitHub
    tls: bool = False  # HTTPS with a certificate of the hub's own CA (relay/hub/tls.py)


async def serve(
    data_dir: Path,
    *,
    host: str,
    port: int,
    options: Options,
    announce: Callable[[str], None] | None = None,
) -> str:
    """Serve until SIGINT/SIGTERM; return the URL it served on."""
    held = running.claim(check_data_dir(data_dir))  # before anything is opened or written
    try:
        return await _serve_claimed(data_dir, host, port, options, announce, held)
    finally:
        held.release()  # no pid file left behind, whichever way the hub stops


async def _serve_claimed(
    data_dir: Path,
    host: str,
    port: int,
    options: Options,
    announce: Callable[[str], None] | None,
    held: running.Claim,
) -> str:
    from aiohttp import web

    from relay.hub.app import build_app

    app = build_app(
        data_dir,
        faults=options.faults,
        rate_limit=options.rate_limit,
        content_limits=options.content_limits,
        content_window=options.content_window,
        strict_git=options.strict_git,
        app_user=options.app_user,
        invitations=options.invitations,
    )
    context = None
    if options.tls:
        from relay.hub.tls import prepare

        context = prepare(data_dir, host).context()
    runner = web.AppRunner(app, access_log=None, shutdown_timeout=1.0)
    await runner.setup()
    site = web.TCPSite(runner, host, port, shutdown_timeout=1.0, ssl_context=context)
    try:
        await site.start()
    except OSError as err:
        await runner.cleanup()
        raise _bind_error(err, host=host, port=port) from None
    url = base_url(host, runner.addresses[0][1], tls=options.tls)
    held.publish(url)  # before the first line: whoever reads it finds the pid file
    if announce is None:
        from relay.hub.tls import ca_path

        trust = f", CA for clients: {ca_path(data_dir)}" if options.tls else ""
        print(f"relay hub serving {url} (data: {data_dir}{trust})", flush=True)
    else:
        announce(url)
    _settle_heap()
    await _wait_for_stop()
    await runner.cleanup()
    return url


def _bind_error(err: OSError, *, host: str, port: int) -> LocalUsageError:
    """Say which option to change: the port when it is taken or forbidden, else the host."""
    if err.errno in (errno.EADDRINUSE, errno.EACCES):
        hint = "pick another --port (0 picks a free one)"
    else:
        hint = "use an address of this machine with --host (default 127.0.0.1)"
    message = f"cannot listen on {host}:{port}: {err.strerror or err}"
    return LocalUsageError(message, hint=hint, typed=(host,))


YOUNG_OBJECTS = 20_000  # the youngest generation's threshold while serving (Python's: 700)


def _settle_heap() -> None:
    """What start-up made (the modules, the routes, the GraphQL schema) lives as long as the
    hub: moved out of the collector's sight, no collection walks it again; and the young
    generation is collected less often, since a request's objects are nearly all freed by
    their counts, not by a collection (at 700, one collection every few requests)."""
    gc.collect()
    gc.freeze()
    _, middle, old = gc.get_threshold()
    gc.set_threshold(YOUNG_OBJECTS, middle, old)


async def _wait_for_stop() -> None:
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        with contextlib.suppress(NotImplementedError, RuntimeError):  # Windows
            loop.add_signal_handler(sig, stop.set)
    await stop.wait()


def run(
    data_dir: Path,
    *,
    host: str,
    port: int,
    options: Options,
    announce: Callable[[str], None] | None = None,
) -> str:
    """Serve in the foreground (blocking); return the URL once stopped. ``announce`` says
    the URL once the hub serves (default: one line for a person)."""
    try:
        return asyncio.run(
            serve(data_dir, host=host, port=port, options=options, announce=announce)
        )
    except KeyboardInterrupt:
        sys.stdout.flush()
        return base_url(host, port)
