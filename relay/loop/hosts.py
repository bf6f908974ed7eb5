"""The hosts a box may go out to, decided purely: an egress list's entries (``name``,
``*.name``, ``name:port``, an address), whether a CONNECT target is on it, and which
addresses a listed *name* must never lead to.

Ground rules: a bare name or address is port 443 alone; a wildcard is the name's
subdomains, never an address; names compare lower-case without a trailing dot.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Sequence


def split_target(target: str) -> tuple[str, int] | None:
    """``host:port`` (``[v6]:port``) as a lower-case host without a trailing dot and a
    port, or None when it is not one."""
    target = target.strip()
    if target.startswith("["):
        host, sep, rest = target[1:].partition("]")
        if not sep or not rest.startswith(":"):
            return None
        port_text = rest[1:]
    else:
        host, sep, port_text = target.rpartition(":")
        if not sep:
            return None
    if not port_text.isdigit() or not 0 < int(port_text) < 65536:
        return None
    host = host.lower().rstrip(".")
    if not host or any(c.isspace() or c in "/@?#" for c in host):
        return None
    return host, int(port_text)


_LABEL = r"[a-z0-9_](?:[a-z0-9_-]*[a-z0-9_])?"
_NAME = re.compile(rf"(?:\*\.)?{_LABEL}(?:\.{_LABEL})*")


def parse_entry(entry: str) -> tuple[str, int] | None:
    """One listed host: ``name`` (port 443), ``*.name`` (its subdomains, 443), ``name:port``,
    an address, ``[v6]:port``; None when it cannot be one."""
    entry = entry.strip().strip("`").strip().lower().rstrip(".")
    if not entry:
        return None
    if entry.startswith("["):
        found = split_target(entry)
    elif entry.count(":") > 1:  # a bare IPv6 address
        found = (entry, 443)
    elif ":" in entry:
        found = split_target(entry)
    else:
        found = (entry, 443)
    if found is None:
        return None
    host = found[0]
    if literal(host):
        return str(ipaddress.ip_address(host)), found[1]
    return found if _NAME.fullmatch(host) else None


def literal(host: str) -> bool:
    """Whether ``host`` is an IP address rather than a name."""
    try:
        ipaddress.ip_address(host)
    except ValueError:
        return False
    return True


def matching(entries: Sequence[str], host: str, port: int) -> str | None:
    """The entry of ``entries`` that lets ``host:port`` out, or None."""
    host = host.lower().rstrip(".")
    if literal(host):
        host = str(ipaddress.ip_address(host))
    for entry in entries:
        parsed = parse_entry(entry)
        if parsed is None or parsed[1] != port:
            continue
        name = parsed[0]
        if name.startswith("*.") and not literal(host):
            if host.endswith(name[1:]) and len(host) > len(name) - 1:
                return entry
        elif name == host:
            return entry
    return None


def forbidden_address(address: str) -> bool:
    """An address a listed *name* must not lead to: the host's loopback, a link-local
    one (a cloud's metadata service), the unspecified or a multicast one."""
    try:
        ip = ipaddress.ip_address(address.split("%")[0])
    except ValueError:
        return True
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    return ip.is_loopback or ip.is_link_local or ip.is_unspecified or ip.is_multicast


def network_note(hosts: Sequence[str]) -> str:
    """The brief's word on the maker's network: its box has loopback alone, and HTTPS to
    ``hosts`` (through the proxy its environment names) is all that goes out."""
    if not hosts:
        way = (
            "Your box has no network beyond its own loopback: nothing you run reaches the\n"
            "internet or this machine's services. Do not install or fetch anything; work\n"
            "with what the project's environment already holds."
        )
    else:
        listed = ", ".join(f"`{h}`" for h in hosts)
        way = (
            "Your box has no network beyond its own loopback but HTTPS to these hosts,\n"
            f"through the proxy `HTTPS_PROXY` names: {listed}. Anything else is refused."
        )
    return f"## Network\n\n{way}\n"
