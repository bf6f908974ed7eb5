"""A box's only way out: every box has a network of its own (loopback alone), and a role
whose work needs the network (an agent CLI's model API, hosts the contract authorises)
reaches it through a CONNECT proxy relay runs outside the box. The proxy listens on a
unix socket in the box's folder (which the box sees at the same path); a forwarder
started inside the box's network listens on 127.0.0.1:``EGRESS_PORT`` and hands each
connection to that socket, and the role's environment names it as its HTTPS proxy.

Ground rules: only ``CONNECT host:port`` to a listed host goes out (a bare host is port
443 alone, ``*.example.com`` its subdomains, ``host:port`` or an address that port);
everything else is refused with a line relay keeps in the role's transcript. A listed
name that resolves to a loopback, link-local or unspecified address (a cloud's metadata
service, the host's own listeners) is refused unless the list names that address itself;
the proxy connects to the address it vetted, never resolving twice. Where relay itself
goes out through a proxy (``HTTPS_PROXY`` in its own environment), the tunnel goes
through it.
"""

from __future__ import annotations

import contextlib
import os
import shlex
import socket
import sys
import threading
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from urllib.parse import unquote, urlsplit

from relay.loop.hosts import forbidden_address, literal, matching, split_target

EGRESS_PORT = 39417  # in the box's own network, where nothing else listens when it starts
SOCKET_NAME = "egress.sock"  # in the box's folder
PROXY_VARIABLES = (
    "HTTPS_PROXY",
    "HTTP_PROXY",
    "ALL_PROXY",
    "NO_PROXY",
    "https_proxy",
    "http_proxy",
    "all_proxy",
    "no_proxy",
)
_HEAD_CAP = 8192
_HEAD_WAIT = 10.0
_DIAL_WAIT = 15.0
_UNIX_PATH_MAX = 100  # sun_path holds 108 bytes; longer paths go through /proc/self/fd


def proxy_env(port: int = EGRESS_PORT) -> dict[str, str]:
    """The variables that send a role's HTTP(S) through the box's forwarder (both cases:
    curl reads the lower, most tools either)."""
    url = f"http://127.0.0.1:{port}"
    env: dict[str, str] = {}
    for name in ("HTTPS_PROXY", "HTTP_PROXY", "ALL_PROXY"):
        env[name] = env[name.lower()] = url
    env["NO_PROXY"] = env["no_proxy"] = "localhost,127.0.0.1,::1"
    return env


def without_proxies(env: Mapping[str, str]) -> dict[str, str]:
    """``env`` less the person's proxy variables (which may carry a password, and lead
    nowhere from a box's own network)."""
    return {k: v for k, v in env.items() if k not in PROXY_VARIABLES}


# --- the proxy, outside the box ---


class Refused(Exception):
    """Why a connection may not go out, with the HTTP status to answer."""

    def __init__(self, status: str, why: str) -> None:
        super().__init__(why)
        self.status = status
        self.why = why


def unix_address(path: Path) -> tuple[str, int | None]:
    """Where to bind or connect for ``path``: itself, or (a path longer than a unix
    socket's address holds) the same file through an open descriptor of its folder."""
    if len(os.fsencode(str(path))) <= _UNIX_PATH_MAX:
        return str(path), None
    fd = os.open(path.parent, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    return f"/proc/self/fd/{fd}/{path.name}", fd


class EgressProxy:
    """The CONNECT proxy one role's box goes out through, listening on ``path`` (a unix
    socket), letting out ``hosts`` alone; ``who`` names the role in what it logs."""

    def __init__(
        self,
        path: Path,
        hosts: Sequence[str],
        *,
        who: str = "the role",
        environ: Mapping[str, str] | None = None,
    ) -> None:
        self.path = path
        self.hosts = tuple(dict.fromkeys(hosts))
        self.who = who
        self.environ = dict(os.environ if environ is None else environ)
        self.upstream = upstream_proxy(self.environ)
        self.log: list[str] = []
        self._lock = threading.Lock()
        self._live: set[socket.socket] = set()
        self._stop = threading.Event()
        self._server: socket.socket | None = None
        self._thread: threading.Thread | None = None

    def start(self) -> EgressProxy:
        server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        address, fd = unix_address(self.path)
        try:
            self.path.unlink(missing_ok=True)
            server.bind(address)
            os.chmod(address, 0o600)
        except OSError:
            server.close()
            raise
        finally:
            if fd is not None:
                os.close(fd)
        server.listen(64)
        server.settimeout(0.25)
        self._server = server
        self._thread = threading.Thread(target=self._accept, name="relay-egress", daemon=True)
        self._thread.start()
        return self

    def close(self) -> None:
        """Stop listening and end every tunnel still open."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=2)
        if self._server is not None:
            self._server.close()
        with self._lock:
            live = list(self._live)
        for each in live:
            with contextlib.suppress(OSError):
                each.shutdown(socket.SHUT_RDWR)
            each.close()
        with contextlib.suppress(OSError):
            self.path.unlink(missing_ok=True)

    def _say(self, line: str) -> None:
        with self._lock:
            self.log.append(line)

    def _keep(self, each: socket.socket) -> None:
        with self._lock:
            self._live.add(each)

    def _drop(self, each: socket.socket) -> None:
        with self._lock:
            self._live.discard(each)
        each.close()

    def _accept(self) -> None:
        assert self._server is not None
        while not self._stop.is_set():
            try:
                client, _ = self._server.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            client.settimeout(None)
            self._keep(client)
            threading.Thread(target=self._serve, args=(client,), daemon=True).start()

    def _serve(self, client: socket.socket) -> None:
        remote: socket.socket | None = None
        try:
            try:
                host, port, early = self._request(client)
                remote = self._dial(host, port)
            except Refused as refused:
                failed = "could not open" if refused.status.startswith("502") else "refused"
                self._say(f"relay egress: {failed} {refused.why}")
                body = f"relay: {refused.why}\n".encode()
                client.sendall(
                    f"HTTP/1.1 {refused.status}\r\nContent-Type: text/plain\r\n"
                    f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n".encode()
                    + body
                )
                return
            self._keep(remote)
            client.sendall(b"HTTP/1.1 200 Connection established\r\n\r\n")
            if early:  # what the client sent before it heard the 200 (a TLS hello)
                remote.sendall(early)
            pump = threading.Thread(target=_pump, args=(remote, client), daemon=True)
            pump.start()
            _pump(client, remote)
            pump.join()
        except OSError:
            return
        finally:
            if remote is not None:
                self._drop(remote)
            self._drop(client)

    def _request(self, client: socket.socket) -> tuple[str, int, bytes]:
        """The CONNECT request's target, once the list allows it, and what the client sent
        after its request head."""
        client.settimeout(_HEAD_WAIT)
        head = b""
        while b"\r\n\r\n" not in head:
            if len(head) > _HEAD_CAP:
                raise Refused("431 Request Header Fields Too Large", "a request head too long")
            got = client.recv(4096)
            if not got:
                raise OSError("closed before its request")
            head += got
        client.settimeout(None)
        head, _, early = head.partition(b"\r\n\r\n")
        line = head.split(b"\r\n", 1)[0].decode("latin-1")
        words = line.split()
        if len(words) != 3 or not words[2].startswith("HTTP/"):
            raise Refused("400 Bad Request", f"a request relay cannot read ({line[:120]!r})")
        method, target = words[0], words[1]
        if method != "CONNECT":
            host = urlsplit(target).netloc or target
            raise Refused(
                "405 Method Not Allowed",
                f"{method} {host[:120]} for {self.who}: only HTTPS (CONNECT) leaves a box",
            )
        parsed = split_target(target)
        if parsed is None:
            raise Refused("400 Bad Request", f"CONNECT {target[:120]!r}: not host:port")
        host, port = parsed
        if matching(self.hosts, host, port) is None:
            listed = ", ".join(self.hosts) or "nothing"
            raise Refused(
                "403 Forbidden",
                f"CONNECT {host}:{port} for {self.who}: not on its egress list ({listed})",
            )
        return host, port, early

    def _dial(self, host: str, port: int) -> socket.socket:
        """A connection to ``host:port``: through relay's own proxy where it has one, else
        to the address resolved and vetted here."""
        if self.upstream is not None and not bypassed(host, self.environ):
            return _through(self.upstream, host, port)
        try:
            found = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
        except OSError as err:
            raise Refused(
                "502 Bad Gateway", f"CONNECT {host}:{port}: cannot resolve ({err})"
            ) from err
        last: OSError | None = None
        for family, kind, proto, _, address in found:
            if not literal(host) and forbidden_address(str(address[0])):
                raise Refused(
                    "403 Forbidden",
                    f"CONNECT {host}:{port} for {self.who}: it resolves to {address[0]},"
                    " an address of this machine's or a local service's (list the address"
                    " itself to allow it)",
                )
            remote = socket.socket(family, kind, proto)
            remote.settimeout(_DIAL_WAIT)
            try:
                remote.connect(address)
            except OSError as err:
                remote.close()
                last = err
                continue
            remote.settimeout(None)
            return remote
        raise Refused("502 Bad Gateway", f"CONNECT {host}:{port}: cannot connect ({last})")


def _pump(source: socket.socket, sink: socket.socket) -> None:
    """Copy ``source`` into ``sink`` until it ends, then pass the end on."""
    try:
        while True:
            data = source.recv(65536)
            if not data:
                break
            sink.sendall(data)
    except OSError:
        pass
    finally:
        with contextlib.suppress(OSError):
            sink.shutdown(socket.SHUT_WR)


def upstream_proxy(environ: Mapping[str, str]) -> tuple[str, int, str | None] | None:
    """The HTTP proxy relay itself goes out through (``HTTPS_PROXY``): its host, port and
    basic credentials, or None."""
    url = environ.get("HTTPS_PROXY") or environ.get("https_proxy") or ""
    if not url.strip():
        return None
    parts = urlsplit(url if "://" in url else f"http://{url}")
    if parts.scheme != "http" or not parts.hostname:
        return None
    login = None
    if parts.username is not None:
        login = f"{unquote(parts.username)}:{unquote(parts.password or '')}"
    return parts.hostname, parts.port or 80, login


def bypassed(host: str, environ: Mapping[str, str]) -> bool:
    """Whether relay's own ``NO_PROXY`` sends ``host`` around its proxy."""
    listed = environ.get("NO_PROXY") or environ.get("no_proxy") or ""
    for each in (p.strip().lower().lstrip(".") for p in listed.split(",")):
        if each == "*" or (each and (host == each or host.endswith("." + each))):
            return True
    return False


def _through(upstream: tuple[str, int, str | None], host: str, port: int) -> socket.socket:
    """A tunnel to ``host:port`` through relay's own proxy."""
    where, at, login = upstream
    try:
        remote = socket.create_connection((where, at), timeout=_DIAL_WAIT)
    except OSError as err:
        raise Refused("502 Bad Gateway", f"CONNECT {host}:{port}: relay's proxy: {err}") from err
    target = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
    ask = f"CONNECT {target} HTTP/1.1\r\nHost: {target}\r\n"
    if login is not None:
        import base64

        ask += f"Proxy-Authorization: Basic {base64.b64encode(login.encode()).decode()}\r\n"
    try:
        remote.sendall((ask + "\r\n").encode())
        head = b""
        while b"\r\n\r\n" not in head and len(head) <= _HEAD_CAP:
            got = remote.recv(1)  # byte by byte: nothing of the tunnel is read here
            if not got:
                break
            head += got
    except OSError as err:
        remote.close()
        raise Refused("502 Bad Gateway", f"CONNECT {host}:{port}: relay's proxy: {err}") from err
    status = head.split(b"\r\n", 1)[0].decode("latin-1")
    if len(status.split()) < 2 or status.split()[1] != "200":
        remote.close()
        raise Refused("502 Bad Gateway", f"CONNECT {host}:{port}: relay's proxy said {status!r}")
    remote.settimeout(None)
    return remote


@contextlib.contextmanager
def serving(folder: Path, hosts: Sequence[str], *, who: str = "the role") -> Iterator[EgressProxy]:
    """An :class:`EgressProxy` for ``hosts`` on a socket in ``folder`` (a box's), while
    the box runs."""
    proxy = EgressProxy(folder / SOCKET_NAME, hosts, who=who).start()
    try:
        yield proxy
    finally:
        proxy.close()


# --- the forwarder, inside the box ---

# run by relay's own interpreter in isolated mode (nothing of the tree it starts in is
# imported): it listens on the box's loopback, then forks and hands every connection on
_FORWARDER = r"""
import os, socket, sys, threading
path, port = sys.argv[1], int(sys.argv[2])
server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
try:
    server.bind(("127.0.0.1", port))
except OSError as err:
    sys.stderr.write(f"relay: the box cannot listen on 127.0.0.1:{port} for its egress ({err})\n")
    sys.exit(1)
server.listen(64)
if os.fork():
    os._exit(0)
null = os.open(os.devnull, os.O_RDWR)
for fd in (0, 1, 2):
    os.dup2(null, fd)
if len(os.fsencode(path)) > 100:
    folder = os.open(os.path.dirname(path), os.O_RDONLY | os.O_DIRECTORY)
    path = f"/proc/self/fd/{folder}/{os.path.basename(path)}"
def pump(source, sink):
    try:
        while True:
            data = source.recv(65536)
            if not data:
                break
            sink.sendall(data)
    except OSError:
        pass
    finally:
        try:
            sink.shutdown(socket.SHUT_WR)
        except OSError:
            pass
def serve(client):
    out = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        out.connect(path)
    except OSError:
        client.close()
        out.close()
        return
    back = threading.Thread(target=pump, args=(out, client), daemon=True)
    back.start()
    pump(client, out)
    back.join()
    client.close()
    out.close()
while True:
    client, _ = server.accept()
    threading.Thread(target=serve, args=(client,), daemon=True).start()
"""


def forwarder_command(path: Path, port: int = EGRESS_PORT) -> str:
    """The shell line that starts the box's forwarder (listening on 127.0.0.1:``port``,
    handing on to the proxy's socket ``path``) and stops the box when it cannot."""
    argv = [sys.executable, "-I", "-c", _FORWARDER, str(path), str(port)]
    return " ".join(shlex.quote(a) for a in argv) + " || exit 1"
