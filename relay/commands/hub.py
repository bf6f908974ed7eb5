"""`relay hub`: serve the embedded GitHub; `relay hub token LOGIN`: mint a token for it."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from relay.commands.output import Output, envelope

DESCRIPTION = """\
Serve the part of GitHub's REST API that relay uses, from SQLite under --data.
The first line printed holds the base URL; use it as the API base and a token from
`relay hub token LOGIN` as the credential, exactly as with api.github.com.

Web pages for people, at github.com's paths (open the base URL in a browser; sign in at
/login with a token for private repositories): <owner>/<repo>/issues, .../issues/<n>,
<owner>/<repo>, .../tree/<ref>/<path>, .../blob/<ref>/<path> and .../raw/<ref>/<path>.

Git: every repository is also served over smart HTTP at BASE/OWNER/REPO.git (clone, fetch,
push) with the same tokens as the password (any user name) and the API's access rules.

GitHub Enterprise Server's shape: the API also at BASE/api/v3 and GraphQL at
BASE/api/graphql; with --tls over HTTPS (its CA in DATA/tls/ca.pem), so that
`eval "$(relay hub env gh LOGIN)"` points the gh CLI at the hub.

`relay hub --help-all` adds the internals: fault injection, limits, admin endpoints.
"""

# What `relay hub --help-all` adds to the description: the internals tests and benchmarks use.
INTERNALS = """\
Admin endpoints (for a token from `relay hub token LOGIN --admin` only; others get 404):
  GET|POST|DELETE /_hub/faults    read, set ({"spec": "..."}) or clear faults
  GET|DELETE      /_hub/requests  request counters by method, path and status
  POST            /_hub/apps      register a GitHub App: {"slug", "public_key" (PEM),
                                  "repositories": ["owner/name"]} -> app and installation ids

Fault spec (--faults or POST /_hub/faults), comma-separated key=value:
  500=P 502=P 503=P 429=P secondary=P drop=P slow=P   shares of requests, 0..1
  latency=S      seconds of delay for `slow` (or for every request if slow is absent)
  retry_after=N  Retry-After seconds on 429 and secondary 403 (default 1)
  drop_after=P 502_after=P   shares answered only AFTER the handler ran and its write
                 committed: the connection drops or a 502 comes back although the comment,
                 label or ref now exists (a retry then duplicates it or finds it taken)
  seed=N         seed of the per-request draw (deterministic)
  limit=N        stop injecting after N faults
  on=METHOD:TEXT fault only requests of METHOD whose path contains TEXT
                 (e.g. on=POST:/git/refs, the claim; on=TEXT for any method)

Rate limit: each user has --rate-limit requests an hour across all of its tokens (an App
installation has its own budget; anonymous callers 60 per address), as on GitHub.
Secondary limit: --content-limit content-creating requests a minute and an hour per user
(GitHub's 80/500); past it a 403 names the secondary rate limit, with Retry-After.
"""

# The options `relay hub --help` leaves to `--help-all` (tests, benchmarks, transitions).
INTERNAL_FLAGS = (
    "--rate-limit",
    "--content-limit",
    "--content-window",
    "--api-only",
    "--strict-git",
    "--app-user",
    "--faults",
)


HUB_PORT = 8080  # not the webhook receiver's 8787: a node and a hub share one machine


def port_number(text: str) -> int:
    """argparse type: a TCP port, 0..65535 (0 picks a free one)."""
    try:
        port = int(text)
    except ValueError:
        port = -1
    if not 0 <= port <= 65535:
        raise argparse.ArgumentTypeError(f"{text!r} is not a port; use 0..65535 (0: any free)")
    return port


def positive(text: str) -> int:
    """argparse type: a whole number of at least 1."""
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number of at least 1")
    return value


def content_limit(text: str) -> tuple[int, int]:
    """argparse type: ``PER_MINUTE/PER_HOUR``, whole numbers of at least 0 (0: no limit)."""
    minute, slash, hour = text.partition("/")
    try:
        limits = (int(minute), int(hour))
    except ValueError:
        limits = (-1, -1)
    if not slash or min(limits) < 0:
        raise argparse.ArgumentTypeError(f"{text!r} is not PER_MINUTE/PER_HOUR, e.g. 80/500")
    return limits


def register(sub: Any) -> None:
    """Add the `hub` verb and its `token` sub-verb."""
    p: argparse.ArgumentParser = sub.add_parser(
        "hub",
        help="serve a local GitHub for relay",
        description=DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument(
        "--data",
        type=Path,
        default=None,
        help="data directory (default: the platform's user data directory)",
    )
    p.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1)")
    p.add_argument(
        "--port",
        type=port_number,
        default=HUB_PORT,
        help=f"port, 0 for a free one (default {HUB_PORT}; `relay watch --webhook` listens on"
        " 8787, so both run on one machine)",
    )
    p.add_argument(
        "--rate-limit",
        type=positive,
        default=5000,
        metavar="N",
        help="requests per user per hour (default 5000, GitHub's; raise it for benchmarks)",
    )
    p.add_argument(
        "--content-limit",
        type=content_limit,
        default=(80, 500),
        metavar="PER_MINUTE/PER_HOUR",
        help="secondary limit: content-creating requests (POST, PATCH, PUT, DELETE) per user"
        " a minute and an hour (default 80/500, GitHub's; 0/0 turns it off for tests)",
    )
    p.add_argument(
        "--content-window",
        type=positive,
        default=60,
        metavar="SECONDS",
        help="how long the secondary limit's minute lasts (default 60, GitHub's; tests"
        " shorten it so a wait they provoke ends sooner)",
    )
    p.add_argument(
        "--api-only",
        action="store_true",
        help="for a git remote elsewhere: a repository nobody pushed to keeps its refs in the"
        " hub's store, at any sha (default, as GitHub: every repository's refs are its"
        " hosted git's; an empty one answers 409 to refs)",
    )
    p.add_argument(
        "--strict-git",
        action="store_true",
        help="the default since refs are always git's (kept so that older scripts still run)",
    )
    p.add_argument(
        "--app-user",
        action="store_true",
        help="transitional: GET /user answers an App installation token as its bot (GitHub"
        " answers 403 'Resource not accessible by integration', the default here too)",
    )
    p.add_argument(
        "--faults", default="", metavar="SPEC", help="inject faults (see the fault spec above)"
    )
    p.add_argument(
        "--invitations",
        action="store_true",
        help="a new collaborator is invited and collaborates once they accept"
        " (PATCH /user/repository_invitations/ID), as on GitHub (default: added at once)",
    )
    p.add_argument(
        "--tls",
        action="store_true",
        help="serve HTTPS with a certificate from a CA of the hub's own (its certificate in"
        " DATA/tls/ca.pem, for clients to trust), as a GitHub Enterprise Server: the API at"
        " BASE/api/v3 too, GraphQL at BASE/api/graphql; `relay hub env gh` sets gh up for it",
    )
    p.add_argument(
        "--detach",
        action="store_true",
        help="return once the hub serves, leaving it running in the background (its pid in"
        " DATA/hub.pid, its output in DATA/hub.log)",
    )
    p.add_argument(
        "--json",
        action="store_true",
        help="the envelope (url, pid with --detach) as one line once it serves",
    )
    p.set_defaults(func=serve)
    from relay.commands.helptext import hide_internals

    internals = {a.option_strings[0]: str(a.help) for a in p._actions if a.option_strings}
    hide_internals(
        p,
        full_description=f"{DESCRIPTION}\n{INTERNALS}",
        internals={flag: internals[flag] for flag in INTERNAL_FLAGS},
    )
    inner = p.add_subparsers(dest="hub_verb", metavar="token|repo|env")
    t = inner.add_parser("token", help="create LOGIN if new and print a fresh token")
    t.add_argument("login", metavar="LOGIN")
    t.add_argument("--data", type=Path, default=argparse.SUPPRESS, help="data directory")
    t.add_argument("--admin", action="store_true", help="the token may use /_hub/ endpoints")
    t.add_argument(
        "--long",
        action="store_true",
        help="mint a 93-character fine-grained-PAT-shaped token instead of a 40-character one",
    )
    t.add_argument("--json", action="store_true", help="machine-readable output")
    t.set_defaults(func=token)
    from relay.commands import hub_env, hub_repo

    hub_repo.register(inner)
    hub_env.register(inner)


def _data_dir(args: argparse.Namespace) -> Path:
    from relay.hub.server import default_data_dir

    data: Path | None = getattr(args, "data", None)
    # absolute: the hub's git runs in other directories, where a relative path means another
    return data.resolve() if data is not None else default_data_dir()


def serve(args: argparse.Namespace) -> Output:
    """Serve until interrupted (or, with --detach, start serving and return)."""
    from relay.errors import LocalUsageError
    from relay.hub.faults import FaultSpec
    from relay.hub.server import Options, run

    if args.detach:
        from relay.commands.hub_repo import detach

        minute, hour = args.content_limit
        again = [
            "hub",
            "--host",
            args.host,
            "--port",
            str(args.port),
            "--data",
            str(_data_dir(args)),
        ]
        again += ["--rate-limit", str(args.rate_limit), "--content-limit", f"{minute}/{hour}"]
        again += ["--content-window", str(args.content_window)]
        again += ["--faults", args.faults, *(["--api-only"] if args.api_only else [])]
        again += ["--app-user"] if args.app_user else []
        again += ["--tls"] if args.tls else []
        again += ["--invitations"] if args.invitations else []
        return detach(_data_dir(args), again)

    options = Options(
        faults=FaultSpec.parse(args.faults),
        rate_limit=args.rate_limit,
        content_limits=args.content_limit,
        content_window=args.content_window,
        strict_git=args.strict_git or not args.api_only,
        app_user=args.app_user,
        tls=args.tls,
        invitations=args.invitations,
    )
    announce = None
    if args.json:

        def announce(url: str) -> None:
            """The envelope with the URL, one line, the moment the hub serves."""
            document = envelope("hub", data={"url": url}, exit_code=0, errors=[])
            print(json.dumps(document, sort_keys=True), flush=True)

    data = _data_dir(args)
    made = not data.exists()
    try:
        url = run(data, host=args.host, port=args.port, options=options, announce=announce)
    except LocalUsageError:  # e.g. its port taken: a folder made for it is not left behind
        if made:
            import shutil

            shutil.rmtree(data, ignore_errors=True)
        raise
    return Output(lines=("relay hub stopped",), data={"url": url}, announced=args.json)


def token_data_dir(args: argparse.Namespace) -> tuple[Path, str]:
    """The database a token is minted in, and what to tell the person about it ("" when
    they named it): ``--data``; else the folder of the running hub ``RELAY_API_URL`` names,
    or of the one hub running when it names none; else, with no hub running, the default
    (said aloud). Refused when RELAY_API_URL names no running hub of theirs, or several
    run and none is named: a token in a database no hub serves is refused where it is used."""
    import os

    from relay.edges.github.credentials import API_URL_ENV
    from relay.errors import LocalUsageError
    from relay.hub.running import hub_for, running_hubs
    from relay.hub.server import default_data_dir

    if getattr(args, "data", None) is not None:
        return _data_dir(args), ""
    api = os.environ.get(API_URL_ENV, "").strip()
    found = hub_for(api) if api else None
    hubs = running_hubs() if found is None else [found]
    if found is None and not api and len(hubs) == 1:
        found = hubs[0]
    if found is not None:
        return found.data, f"the token is for the hub at {found.url} (--data {found.data})"
    choices = "; ".join(f"--data {hub.data} for {hub.url}" for hub in hubs)
    if api:
        running = f" (running: {choices})" if hubs else " (none of yours runs)"
        raise LocalUsageError(
            f"no running hub of yours serves {API_URL_ENV}={api}{running}",
            hint="pass --data with the folder the hub you use serves",
        )
    if hubs:
        raise LocalUsageError(
            f"{len(hubs)} hubs of yours run: {choices}",
            hint=f"pass --data to say which (or set {API_URL_ENV} to its URL)",
        )
    default = default_data_dir()
    return default, (
        f"the token is in the default database {default} (no running hub of yours to take it"
        " from); pass --data with the folder your hub serves if that is another"
    )


def token(args: argparse.Namespace) -> Output:
    """Print a fresh token, alone, on standard output (what database it went to, when the
    person did not name one, on standard error)."""
    import sys

    from relay.hub.server import create_token

    data, said = token_data_dir(args)
    value = create_token(data, args.login, admin=args.admin, long=args.long)
    if said:
        print(f"relay: {said}", file=sys.stderr)
    return Output(lines=(value,), data={"login": args.login, "token": value, "data": str(data)})
