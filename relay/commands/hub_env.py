"""`relay hub env gh [LOGIN]`: the environment that points the GitHub CLI at a running hub.

``gh`` speaks to any host but github.com (and its ``github.localhost`` special case) as to a
GitHub Enterprise Server: ``https://HOST/api/v3`` and ``https://HOST/api/graphql``, with
the token from ``GH_ENTERPRISE_TOKEN``. A hub started with ``--tls`` serves that shape, so
``eval "$(relay hub env gh alice)"`` is all a shell needs for ``gh issue view 1``.
"""

from __future__ import annotations

import argparse
import shlex
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from relay.commands.output import Output
from relay.errors import LocalUsageError


def register(inner: Any) -> None:
    """Add `hub env` under `relay hub`'s sub-verbs."""
    e: argparse.ArgumentParser = inner.add_parser(
        "env",
        help="print the environment that points a client (gh) at a running hub",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    e.add_argument("client", choices=("gh",), help="the client to set up: gh, the GitHub CLI")
    e.add_argument(
        "login",
        nargs="?",
        metavar="LOGIN",
        help="mint a fresh token for LOGIN (created if new) in the hub's database",
    )
    e.add_argument("--token", default=None, help="use this token instead of minting one")
    e.add_argument("--data", type=Path, default=None, help="the running hub's data directory")
    e.add_argument("--json", action="store_true", help="machine-readable output")
    e.set_defaults(func=env)


def gh_environment(url: str, token: str, ca: Path) -> dict[str, str]:
    """The variables ``gh`` (and the git it runs) reads to use the hub at ``url`` as a
    GitHub Enterprise Server whose certificate comes from a CA in ``ca`` (a bundle of the
    system's CAs and the hub's)."""
    parts = urlsplit(url)
    host = parts.netloc
    return {
        "GH_HOST": host,
        "GH_ENTERPRISE_TOKEN": token,
        "SSL_CERT_FILE": str(ca),
        "GIT_SSL_CAINFO": str(ca),
        "GH_PROMPT_DISABLED": "1",
        "GH_NO_UPDATE_NOTIFIER": "1",
    }


# Where distributions keep the system's trusted CAs (Debian/Ubuntu, Fedora/RHEL, Alpine/BSD)
SYSTEM_BUNDLES = (
    Path("/etc/ssl/certs/ca-certificates.crt"),
    Path("/etc/pki/tls/certs/ca-bundle.crt"),
    Path("/etc/ssl/cert.pem"),
)
BUNDLE_FILE = "ca-bundle.pem"


def ca_bundle(ca: Path, system: tuple[Path, ...] = SYSTEM_BUNDLES) -> Path:
    """A file of the system's trusted CAs followed by the hub's, written beside the hub's
    CA: ``SSL_CERT_FILE`` replaces the system's list, and gh (or git) pointed at the hub
    alone could no longer reach any other host."""
    import ssl

    found = [p for p in (*system, Path(ssl.get_default_verify_paths().openssl_cafile)) if p]
    bundle = ca.with_name(BUNDLE_FILE)
    trusted = next((p for p in found if p.is_file() and p.resolve() != bundle.resolve()), None)
    text = trusted.read_text() if trusted is not None else ""
    if text and not text.endswith("\n"):
        text += "\n"
    partial = bundle.with_name(BUNDLE_FILE + ".partial")
    partial.write_text(text + ca.read_text())
    partial.replace(bundle)  # whole or not at all
    return bundle


def _running(data: Path | None) -> tuple[str, Path]:
    """The URL and data folder of the hub to point at: the one serving ``--data``, else the
    one hub of this user's that runs (or the one of them serving HTTPS)."""
    from relay.hub.running import running_hubs, serving

    if data is not None:
        found = serving(data.resolve())
        if found is None:
            raise LocalUsageError(
                f"no hub serves {data}", hint=f"start one: relay hub --tls --data {data}"
            )
        return found.url, found.data
    hubs = running_hubs()
    secure = [h for h in hubs if h.url.startswith("https://")]
    if len(hubs) > 1 and len(secure) == 1:  # the one gh can reach
        hubs = secure
    if len(hubs) != 1:
        said = "no hub of yours runs" if not hubs else f"{len(hubs)} hubs of yours run"
        raise LocalUsageError(
            f"{said}; which one should gh use?",
            hint="start one with `relay hub --tls`, or name its folder with --data",
        )
    return hubs[0].url, hubs[0].data


def env(args: argparse.Namespace) -> Output:
    """Print ``export NAME=VALUE`` lines for ``eval``; refuse a plain-HTTP hub, which gh
    cannot reach by any name but github.localhost on port 80."""
    from relay.hub.server import create_token
    from relay.hub.tls import ca_path

    url, data = _running(args.data)
    if not url.startswith("https://"):
        raise LocalUsageError(
            f"the hub at {url} serves plain HTTP, and gh speaks HTTPS to every host but github.com",
            hint="restart it with `relay hub --tls` (same --data), then run this again",
        )
    if args.token is None and not args.login:
        raise LocalUsageError(
            "whose token should gh use?",
            hint="name a LOGIN to mint one for (`relay hub env gh alice`) or pass --token",
        )
    token = args.token or create_token(data, args.login)
    variables = gh_environment(url, token, ca_bundle(ca_path(data)))
    lines = tuple(f"export {name}={shlex.quote(value)}" for name, value in variables.items())
    return Output(lines=lines, data={"url": url, "env": variables})
