"""What may leave a box, decided: an egress list's entries and what they match, the hosts
each agent CLI's adapter lists, the contract's ``## Network access``, and relay's CONNECT
proxy itself on real sockets (no box): it tunnels to a listed host, refuses the rest with
a logged line, never lets a listed name lead to this machine's loopback, and goes through
relay's own upstream proxy where relay has one."""

from __future__ import annotations

import os
import socket
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from relay.errors import SpineFileError
from relay.loop.agents import api_hosts
from relay.loop.contract import Contract, parse_contract, render_contract
from relay.loop.hosts import forbidden_address, matching, parse_entry
from relay.ratchet.egress import EgressProxy, proxy_env, unix_address, without_proxies


@pytest.mark.parametrize(
    ("entry", "parsed"),
    [
        ("api.anthropic.com", ("api.anthropic.com", 443)),
        ("`API.Anthropic.com.`", ("api.anthropic.com", 443)),
        ("*.googleapis.com", ("*.googleapis.com", 443)),
        ("gateway.example.com:8443", ("gateway.example.com", 8443)),
        ("127.0.0.1:9000", ("127.0.0.1", 9000)),
        ("[::1]:9000", ("::1", 9000)),
        ("::1", ("::1", 443)),
        ("https://api.openai.com", None),
        ("host:0", None),
        ("host:70000", None),
        ("bad host", None),
        ("*.", None),
        ("", None),
    ],
)
def test_an_entry_is_a_host_and_a_port(entry: str, parsed: tuple[str, int] | None) -> None:
    assert parse_entry(entry) == parsed


def test_a_target_matches_its_entry_alone() -> None:
    hosts = ("api.anthropic.com", "*.googleapis.com", "127.0.0.1:9000")
    assert matching(hosts, "API.anthropic.com.", 443) == "api.anthropic.com"
    assert matching(hosts, "api.anthropic.com", 80) is None  # a bare name is 443 alone
    assert matching(hosts, "evil-api.anthropic.com", 443) is None
    assert matching(hosts, "oauth2.googleapis.com", 443) == "*.googleapis.com"
    assert matching(hosts, "googleapis.com", 443) is None  # a wildcard is the subdomains
    assert matching(hosts, "googleapis.com.evil.com", 443) is None
    assert matching(hosts, "127.0.0.1", 9000) == "127.0.0.1:9000"
    assert matching(hosts, "127.0.0.1", 9001) is None
    assert matching(("*.0.0.1",), "127.0.0.1", 443) is None  # a wildcard never an address
    assert matching((), "api.anthropic.com", 443) is None


@pytest.mark.parametrize(
    ("address", "forbidden"),
    [
        ("127.0.0.1", True),
        ("127.8.9.1", True),
        ("::1", True),
        ("::ffff:127.0.0.1", True),
        ("169.254.169.254", True),  # a cloud's metadata service
        ("fe80::1%eth0", True),
        ("0.0.0.0", True),
        ("160.79.104.10", False),
        ("10.1.2.3", False),  # a company's gateway on its own network
        ("2607:6bc0::10", False),
    ],
)
def test_a_listed_name_never_leads_to_this_machine(address: str, forbidden: bool) -> None:
    assert forbidden_address(address) is forbidden


def test_each_adapter_lists_its_own_api_and_a_base_url_the_person_sets() -> None:
    assert api_hosts("claude", {}) == (
        "api.anthropic.com",
        "console.anthropic.com",
        "platform.claude.com",
    )
    assert "chatgpt.com" in api_hosts("codex", {}) and "api.openai.com" in api_hosts("codex", {})
    gemini = api_hosts("gemini", {})
    assert "generativelanguage.googleapis.com" in gemini and "*.googleapis.com" not in gemini
    vertex = api_hosts(
        "gemini", {"GOOGLE_GENAI_USE_VERTEXAI": "true", "GOOGLE_CLOUD_LOCATION": "us-central1"}
    )
    assert (
        "us-central1-aiplatform.googleapis.com" in vertex and "aiplatform.googleapis.com" in vertex
    )
    based = api_hosts("claude", {"ANTHROPIC_BASE_URL": "https://gw.example.com:8443/anthropic"})
    assert based[-1] == "gw.example.com:8443"
    assert api_hosts("codex", {"OPENAI_BASE_URL": "https://proxy.example.com/v1"})[-1] == (
        "proxy.example.com"
    )
    # only https: a box's one way out is a CONNECT tunnel
    assert api_hosts("claude", {"ANTHROPIC_BASE_URL": "http://gw.example.com"}) == api_hosts(
        "claude", {}
    )


def test_aider_reaches_its_models_provider() -> None:
    keys = {"ANTHROPIC_API_KEY": "k", "DEEPSEEK_API_KEY": "k"}
    assert api_hosts("aider", keys, model="sonnet") == ("api.anthropic.com",)
    assert api_hosts("aider", keys, model="gpt-4o") == ("api.openai.com",)
    assert api_hosts("aider", keys, model="openrouter/anthropic/claude-3.5-sonnet") == (
        "openrouter.ai",
    )
    assert api_hosts("aider", keys, model="gemini/gemini-2.5-pro") == (
        "generativelanguage.googleapis.com",
    )
    assert api_hosts("aider", keys) == ("api.anthropic.com", "api.deepseek.com")
    assert api_hosts("aider", {}, model="ollama/llama3") == ()  # the contract lists it


CONTRACT_NETWORK = (
    "\n## Network access\n\n- maker: `pypi.org`, files.pythonhosted.org\n"
    "- red team: `127.0.0.1:9000`\n"
)


def test_the_contract_lists_hosts_by_role_and_writes_them_back() -> None:
    base = render_contract(Contract())
    assert "## Network access" not in base  # written once a person lists a host
    contract = parse_contract(base + CONTRACT_NETWORK)
    assert contract.hosts_for("maker") == ("pypi.org", "files.pythonhosted.org")
    assert contract.hosts_for("red-team") == ("127.0.0.1:9000",)
    assert contract.hosts_for("checker") == ()
    again = parse_contract(render_contract(contract))
    assert again.network == contract.network and again.extra == ()


@pytest.mark.parametrize(
    ("line", "said"),
    [
        ("- builder: `pypi.org`", "reads - role:"),
        ("- maker: https://pypi.org/simple", "is not a host"),
        ("pypi.org", "reads - role:"),
    ],
)
def test_a_network_line_relay_cannot_read_is_refused(line: str, said: str) -> None:
    text = render_contract(Contract()) + f"\n## Network access\n\n{line}\n"
    with pytest.raises(SpineFileError, match=said):
        parse_contract(text)


def test_the_proxy_variables_are_relays_alone() -> None:
    env = without_proxies({"HTTPS_PROXY": "http://u:pw@p:3128", "no_proxy": "x", "PATH": "/bin"})
    assert env == {"PATH": "/bin"}
    got = proxy_env(4000)
    assert got["HTTPS_PROXY"] == got["https_proxy"] == got["ALL_PROXY"] == "http://127.0.0.1:4000"
    assert got["NO_PROXY"] == "localhost,127.0.0.1,::1"


# --- the proxy, on real sockets ---


def echo_server() -> tuple[socket.socket, threading.Thread]:
    """A TCP server on the loopback that answers each connection with what it got, upper-cased."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(8)

    def serve() -> None:
        while True:
            try:
                conn, _ = server.accept()
            except OSError:
                return
            with conn:
                conn.sendall(conn.recv(1024).upper())

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    return server, thread


@pytest.fixture
def folder() -> Iterator[Path]:
    with tempfile.TemporaryDirectory(prefix="relay-egress-") as where:
        yield Path(where)


def ask(path: Path, request: bytes, then: bytes = b"") -> bytes:
    """Send ``request`` to the proxy's socket; then (once it says 200) ``then``; all it said."""
    address, fd = unix_address(path)
    client = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    client.settimeout(10)
    try:
        client.connect(address)
        client.sendall(request)
        said = b""
        while b"\r\n\r\n" not in said:
            got = client.recv(4096)
            if not got:
                return said
            said += got
        if b" 200 " in said.split(b"\r\n", 1)[0] and then:
            client.sendall(then)
        while True:
            got = client.recv(4096)
            if not got:
                return said
            said += got
    finally:
        client.close()
        if fd is not None:
            os.close(fd)


def test_the_proxy_tunnels_to_a_listed_host_and_refuses_the_rest(folder: Path) -> None:
    server, thread = echo_server()
    other, other_thread = echo_server()
    port, elsewhere = server.getsockname()[1], other.getsockname()[1]
    proxy = EgressProxy(folder / "egress.sock", [f"127.0.0.1:{port}"], who="the maker").start()
    try:
        said = ask(proxy.path, f"CONNECT 127.0.0.1:{port} HTTP/1.1\r\n\r\n".encode(), b"ping")
        assert said.startswith(b"HTTP/1.1 200 ") and said.endswith(b"PING"), said
        # what a client sends before it hears the 200 (a TLS hello) goes through too
        eager = ask(proxy.path, f"CONNECT 127.0.0.1:{port} HTTP/1.1\r\n\r\nhello".encode())
        assert eager.startswith(b"HTTP/1.1 200 ") and eager.endswith(b"HELLO"), eager
        refused = ask(proxy.path, f"CONNECT 127.0.0.1:{elsewhere} HTTP/1.1\r\n\r\n".encode())
        assert refused.startswith(b"HTTP/1.1 403 "), refused
        plain = ask(proxy.path, b"GET http://example.com/ HTTP/1.1\r\nHost: example.com\r\n\r\n")
        assert plain.startswith(b"HTTP/1.1 405 "), plain
        # a listed *name* that leads to this machine's loopback is refused
        named = EgressProxy(folder / "named.sock", [f"localhost:{port}"], who="the maker").start()
        try:
            looped = ask(named.path, f"CONNECT localhost:{port} HTTP/1.1\r\n\r\n".encode())
        finally:
            named.close()
        assert looped.startswith(b"HTTP/1.1 403 ") and b"list the address" in looped, looped
    finally:
        proxy.close()
        for each, running in ((server, thread), (other, other_thread)):
            each.close()
            running.join(timeout=5)
    assert proxy.log == [
        f"relay egress: refused CONNECT 127.0.0.1:{elsewhere} for the maker: not on its egress"
        f" list (127.0.0.1:{port})",
        "relay egress: refused GET example.com for the maker: only HTTPS (CONNECT) leaves a box",
    ]
    assert not proxy.path.exists()


def test_a_box_folder_deeper_than_a_sockets_address_holds_still_gets_its_proxy() -> None:
    server, thread = echo_server()
    port = server.getsockname()[1]
    with tempfile.TemporaryDirectory(prefix="relay-egress-") as where:
        deep = Path(where, *(["a-rather-long-folder-name"] * 5))
        deep.mkdir(parents=True)
        path = deep / "egress.sock"
        assert len(str(path)) > 108
        proxy = EgressProxy(path, [f"127.0.0.1:{port}"]).start()
        try:
            said = ask(path, f"CONNECT 127.0.0.1:{port} HTTP/1.1\r\n\r\n".encode(), b"deep")
        finally:
            proxy.close()
            server.close()
            thread.join(timeout=5)
    assert said.endswith(b"DEEP"), said


def test_the_tunnel_goes_through_relays_own_proxy_where_relay_has_one(folder: Path) -> None:
    """relay's own HTTPS_PROXY (a company's, with a login): the tunnel is asked of it, with
    its credentials, and the list still decides what may be asked."""
    server, thread = echo_server()
    port = server.getsockname()[1]
    upstream = socket.socket()
    upstream.bind(("127.0.0.1", 0))
    upstream.listen(4)
    heard: list[bytes] = []

    def company() -> None:  # a CONNECT proxy of the person's: it tunnels to what it is asked
        try:
            conn, _ = upstream.accept()
        except OSError:
            return
        with conn:
            head = b""
            while b"\r\n\r\n" not in head:
                head += conn.recv(1)
            heard.append(head)
            host, _, at = head.split()[1].decode().rpartition(":")
            with socket.create_connection((host, int(at))) as out:
                conn.sendall(b"HTTP/1.1 200 OK\r\n\r\n")
                out.sendall(conn.recv(1024))
                conn.sendall(out.recv(1024))

    running = threading.Thread(target=company, daemon=True)
    running.start()
    environ = {"HTTPS_PROXY": f"http://person:s%40cret@127.0.0.1:{upstream.getsockname()[1]}"}
    proxy = EgressProxy(folder / "egress.sock", [f"127.0.0.1:{port}"], environ=environ).start()
    try:
        said = ask(proxy.path, f"CONNECT 127.0.0.1:{port} HTTP/1.1\r\n\r\n".encode(), b"via")
        refused = ask(proxy.path, b"CONNECT pypi.org:443 HTTP/1.1\r\n\r\n")
    finally:
        proxy.close()
        for each, done in ((upstream, running), (server, thread)):
            each.close()
            done.join(timeout=5)
    assert said.endswith(b"VIA"), said
    assert refused.startswith(b"HTTP/1.1 403 "), refused
    assert len(heard) == 1 and heard[0].startswith(f"CONNECT 127.0.0.1:{port} ".encode())
    assert b"Proxy-Authorization: Basic cGVyc29uOnNAY3JldA==" in heard[0]  # person:s@cret


def test_the_board_says_where_the_boxes_may_reach() -> None:
    from relay.loop.runenv import run_bounds, with_bounds

    contract = parse_contract(render_contract(Contract()) + CONTRACT_NETWORK)
    board = with_bounds(
        "# Board\n",
        run_bounds(contract, max_iterations=None, wall_clock=None, boundary="namespaces"),
    )
    assert (
        "- Network: each box its own, loopback only; HTTPS out through relay's proxy to an"
        " agent CLI's own API hosts and maker: pypi.org, files.pythonhosted.org;"
        " red team: 127.0.0.1:9000 (relay; the contract's `## Network access`)"
    ) in board
    loose = run_bounds(Contract(), max_iterations=None, wall_clock=None, boundary="env-level only")
    assert "- Network: the machine's (env-level only)" in with_bounds("# Board\n", loose)
