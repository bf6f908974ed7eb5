"""A realistic build-and-test log with secrets planted at known lines, made from a seed.

Clean lines imitate compiler warnings, make and CMake progress, pytest progress and
tracebacks, npm and pip output, Java and Node stack traces, git and Docker lines — with the
things redaction must leave alone: version numbers (``10.2.0.1`` after a version word,
four-part versions after a product name or an operator), commit hashes, UUIDs, timestamps,
paths outside the home directory, C++ scopes, counters, test tallies (``PASS=3``). Secret
lines carry one secret of a supported kind (every kind in turn) in a plausible setting —
addresses in the settings that say they are addresses (``from``, ``inet``, ``Host:``, a port,
the start of an access-log line); ``Corpus.secrets`` maps each such line number to the
strings that must not survive.

Besides the settings above, secret lines carry a token of every row of the format table
(``relay.redact.formats``) in a syntax that does not name it, a machine-made value named in
the wider syntaxes (``VENDOR_KEY=``, XML, flags, "the api token is …"), and this node's own
secret in the encodings the Actions runner masks (XML-escaped, doubled quotes, split by
colour codes). One line in ``DECOY_EVERY`` is a decoy: a line the scanners' "must not flag"
cases are made of — every row's placeholder shape, references, masks, public keys, words
that contain a prefix, hashes and ids — recorded in ``Corpus.decoys``; it must come out
unchanged. The token and placeholder generators are the tests' own (``format_samples``), so
that the benchmark measures what the tests specify.
"""

from __future__ import annotations

import base64
import codecs
import hashlib
import json
import random
import string
import sys
import urllib.parse
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from relay.redact import MachineFacts
from relay.redact.formats import FORMATS

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests" / "redact"))
from format_samples import SYNTAXES, placeholder, positive

FACTS = MachineFacts(
    user="alice.w",
    home="/home/alice.w",
    hosts=("buildbox-7", "buildbox-7.corp.example.net"),
    secrets=("own-S3cret-value-9f8e7d6c", "db\"pa<ss>&wo'rd-7f3e"),
)
DECOY_EVERY = 97
_ALNUM = string.ascii_letters + string.digits
RARE_EVERY = 50  # one line in this many is one of the rarer clean lines
_URLSAFE = _ALNUM + "-_"
_WORDS = (
    "parser", "lexer", "token_stream", "cache", "index", "resolver", "planner", "scheduler",
    "worker", "queue", "config", "loader", "writer", "reader", "buffer", "session", "handler",
    "router", "codec",
)  # fmt: skip


@dataclass
class Corpus:
    """Where the planted secrets are: line number -> strings that must not appear."""

    secrets: dict[int, list[str]] = field(default_factory=dict)
    kinds: set[str] = field(default_factory=set)
    count: int = 0
    line_kinds: dict[int, str] = field(default_factory=dict)  # the kind planted on each line
    decoys: set[int] = field(default_factory=set)  # lines that look secret and are not


def _rand(rng: random.Random, n: int, alphabet: str = _ALNUM) -> str:
    return "".join(rng.choices(alphabet, k=n))


def _clean(rng: random.Random, n: int) -> str:
    """One clean line of a realistic build/test log."""
    w, k, h = rng.choice(_WORDS), rng.randrange(1, 900), f"{rng.getrandbits(160):040x}"
    ts = f"2026-11-{1 + n % 28:02d}T{n % 24:02d}:{n % 60:02d}:{k % 60:02d}.{k:03d}Z"
    uuid = f"{h[:8]}-{h[8:12]}-4{h[13:16]}-a{h[17:20]}-{h[20:32]}"
    lines = (
        f"src/{w}/{w}_{k}.c:{k}:{k % 80}: warning: unused variable 'tmp{k}' [-Wunused-variable]",
        f"  {k:4d} |     int tmp{k} = compute_{w}(ctx, {k});",
        f"[ {k % 100:2d}%] Building CXX object src/CMakeFiles/{w}.dir/{w}{k}.cpp.o",
        f"make[2]: Entering directory '/srv/ci/build/src/{w}'",
        f"tests/test_{w}.py::test_{w}_{k}[case-{k % 7}] PASSED{' ' * 20}[{k % 100:3d}%]",
        f"E       AssertionError: assert {k} == {k + 1}",
        f'  File "/usr/lib/python3.11/site-packages/{w}/core.py", line {k}, in run_{w}',
        f"npm WARN deprecated {w}@{k % 9}.{k % 13}.{k % 5}: this version is no longer supported",
        f"added {k} packages, and audited {k + 1} packages in {k % 60}s",
        f"\tat com.example.{w}.{w.title()}Service.handle({w.title()}Service.java:{k})",
        f"    at Object.<anonymous> (/app/src/{w}/index.js:{k}:{k % 40})",
        f"{ts} INFO  {w}: processed {k} items in {k / 7:.2f}ms (max_tokens={k})",
        f"commit {h}  Merge branch 'feature/{w}-{k}'",
        f"request-id {uuid} status=200 duration={k}ms",
        f"Successfully installed {w}-{k % 9}.{k % 13}.{k % 7} requests-2.31.0 urllib3-2.0.{k % 9}",
        f"  Compiling {w} v0.{k % 20}.{k % 9} (/srv/ci/crates/{w})",
        f"driver version 10.2.0.{k % 255} (build {k}), std::vector<{w}> resized to {k}",
        f"sha256:{hashlib.sha256(h.encode()).hexdigest()} pushed {w}:{k % 9}.{k % 5}",
        f"ok   \tgithub.com/example/{w}\t0.{k:03d}s\tcoverage: {k % 100}.{k % 10}% of statements",
    )
    if n % RARE_EVERY == RARE_EVERY // 2:
        return _rare_clean(w, k, n // RARE_EVERY)
    return lines[n % len(lines)]


def _rare_clean(w: str, k: int, n: int) -> str:
    """Clean lines that real logs hold now and then, and that each cost a closer look:
    four-part versions (which must not read as addresses), test tallies, build flags."""
    lines = (
        f"Collecting setuptools>=68.0.{k % 9}.1 (from {w}-2.3.4.{k % 9})",
        f"-- The CXX compiler identification is GNU 13.2.0.{k % 9}; cmake 3.28.1.{k % 5}",
        f"Mozilla/5.0 Firefox/115.0.2.{k % 9} .NET SDK 8.0.100.{k % 9} libfoo 1.2.3.{k % 9}",
        f"PASS: test_{w}_{k} PASS={k} FAIL=0; -I/usr/include/mysql -pthread",
    )
    return lines[n % len(lines)]


def _jwt(rng: random.Random) -> str:
    head = base64.urlsafe_b64encode(b'{"alg":"RS256","typ":"JWT"}').decode().rstrip("=")
    body = base64.urlsafe_b64encode(f'{{"iss":"{rng.randrange(10**6)}"}}'.encode()).decode()
    return f"{head}.{body.rstrip('=')}.{_rand(rng, 86, _URLSAFE)}"


Secret = tuple[str, str, list[str]]  # (kind, text, strings that must not survive)


def _token_secrets(rng: random.Random) -> list[Callable[[], Secret]]:
    def one(kind: str, fmt: str, secret: str) -> Callable[[], Secret]:
        return lambda: (kind, fmt.format(s=secret), [secret])

    r = rng
    return [
        one("github", "remote: using token {s}", "ghp_" + _rand(r, 36)),
        one("github", "GH_TOKEN={s}", "github_pat_11" + _rand(r, 20) + "_" + _rand(r, 59)),
        one("github", "x-access-token {s}", f"ghs_{r.randrange(10**6)}_{_jwt(r)}"),
        one("aws", "aws_access_key_id = {s}", "AKIA" + _rand(r, 16, string.ascii_uppercase)),
        one("aws", "export AWS_SECRET_ACCESS_KEY={s}", _rand(r, 40, _ALNUM + "/+")),
        one("google", "maps key: {s}", "AIza" + _rand(r, 35, _URLSAFE)),
        one(
            "slack", "posting with {s}", "xoxb-" + _rand(r, 12, string.digits) + "-" + _rand(r, 24)
        ),
        one(
            "slack",
            "webhook {s}",
            "https://hooks.slack.com/services/T"
            + _rand(r, 10)
            + "/B"
            + _rand(r, 10)
            + "/"
            + _rand(r, 24),
        ),
        one("stripe", "stripe.api_key = {s}", "sk_live_" + _rand(r, 24)),
        one("openai", "OpenAI(api_key={s})", "sk-proj-" + _rand(r, 120, _URLSAFE)),
        one("anthropic", "client = Anthropic(key='{s}')", "sk-ant-api03-" + _rand(r, 95, _URLSAFE)),
        one("npm", "//registry.example/:_authToken={s}", "npm_" + _rand(r, 36)),
        one("pypi", "twine upload -p {s}", "pypi-AgEIcHlwaS5vcmc" + _rand(r, 60, _URLSAFE)),
        one("jwt", "cookie session={s}", _jwt(r)),
        one("bearer", "> Authorization: Bearer {s}", _rand(r, 48, _URLSAFE)),
        one("url", "Cloning into 'repo'... https://ci:{s}@git.example.org/repo.git", _rand(r, 16)),
        one("assign", 'db: {{"password": "{s}"}}', _rand(r, 14, _ALNUM + "!#%")),
        one("assign", 'request body="{{\\"api_key\\": \\"{s}\\"}}"', _rand(r, 20)),
        one("assign", "export DB_PASS={s}", _rand(r, 18)),
        one("url", "REDIS_URL=redis://:{s}@cache:6379/0", _rand(r, 20)),
        one("url", "GET /login?next=https%3A%2F%2Fci%3A{s}%40git.example.org", _rand(r, 16)),
        one("cli", "+ mysql -h db -uroot -p{s} app < dump.sql", _rand(r, 14)),
        one("cli", "+ docker login -u ci -p {s} registry.example.org", _rand(r, 32)),
        one("cli", "+ aws configure set aws_secret_access_key {s}", _rand(r, 40, _ALNUM + "/+")),
        one("own", "deploying with {s}", FACTS.secrets[0]),
        *(one("own", "callback?state={s}", form) for form in _own_forms(FACTS.secrets[0])),
        *(one("own-encoded", fmt, form) for fmt, form in _own_encoded(FACTS.secrets[1])),
        *(one("own-disguised", "+ echo {s}", form) for form in _own_disguised(FACTS.secrets[0])),
        *(one("named", fmt, _machine_made(r)) for fmt in _NAMED),
        *(_row(r, i) for i in range(len(FORMATS))),
    ]


# Names that the plain ``password=`` rules do not read, each in its own syntax.
_NAMED = (
    "VENDOR_KEY={s}",
    'const HEROKU_KEY = "{s}";',
    'cloudflare: "{s}"',
    "  <ApiKey>{s}</ApiKey>",
    "<property><name>fs.s3a.secret.key</name><value>{s}</value></property>",
    '<add key="ClientSecret" value="{s}" />',
    "+ deploy --key {s} --region eu",
    "the api token is {s}",
)


def _machine_made(rng: random.Random) -> str:
    """A generated key: base62 with both cases and a digit."""
    while True:
        value = _rand(rng, 32)
        if any(c.isupper() for c in value) and any(c.isdigit() for c in value):
            return value


def _row(rng: random.Random, i: int) -> Callable[[], Secret]:
    """A token of one row of the format table, alone in a syntax that does not name it."""

    def make() -> Secret:
        fmt = FORMATS[i]
        token = positive(fmt, rng)
        return f"table:{fmt.name}", SYNTAXES[rng.randrange(len(SYNTAXES))].format(t=token), [token]

    return make


def _own_encoded(value: str) -> list[tuple[str, str]]:
    """This node's secret XML-escaped, with SQL's doubled quotes, and split by colour codes."""
    xml = value.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    xml = xml.replace('"', "&quot;").replace("'", "&apos;")
    sql = value.replace("'", "''")
    coloured = value[:5] + "\x1b[31m" + value[5:11] + "\x1b[0m" + value[11:]
    return [
        ("<password>{s}</password>", xml),
        ("INSERT INTO users VALUES ('ci', '{s}');", sql),
        ("\x1b[32mok\x1b[0m {s} done", coloured),
    ]


def decoys() -> list[str]:
    """Lines that must come out unchanged (see the module docstring)."""
    lines = [f"example: {placeholder(fmt)} (replace with your own)" for fmt in FORMATS]
    return [
        *lines,
        "export GITHUB_TOKEN=ghp_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx",
        "aws_access_key_id = AKIAXXXXXXXXXXXXXXXX",
        "api_key: <your-token>   password: ####   token: '********'",
        "password=${DB_PASSWORD} token: $(cat /run/secrets/token) secret=`pass show ci`",
        "password = var.db_password",
        "api_key: ${{ secrets.API_KEY }}",
        "Authorization: Bearer $TOKEN",
        "git clone https://ci:${CI_TOKEN}@git.example.org/r.git",
        "password: ***  token=[REDACTED]",
        "Stripe.setPublishableKey('pk_live_4eC39HqLyjWDarjtT1zdp7dc')",
        "copy xoxo-party-photos-2019.jpg to /srv/media",
        "TASK0123456789abcdef0123456789abcdef finished",
        "max_tokens=512 token_file=/etc/t api_key_name=deploy key=abc123",
        "cache hit 3f9a2b7c1d0e4f5a6b7c8d9e0f1a2b3c4d5e6f7a for linux-pip",
        "uploaded artifact 9fA2xQ7LmN3pR8sT1uV4wY6zAb3Cd5Ef (1.2 MB)",
        "trace-id 4bf92f3577b34da6a3ce929d0e0e4736 span 00f067aa0ba902b7",
    ]


def _own_disguised(value: str) -> list[str]:
    """This node's secret as a step prints it to get past the plain forms: spaced,
    reversed, upper-cased, rot13, every character escaped (``\\u``, ``%``), base32."""
    return [
        " ".join(value),
        value[::-1],
        value.upper(),
        codecs.encode(value, "rot13"),
        "".join(f"\\u{ord(c):04x}" for c in value),
        "".join(f"%{b:02X}" for b in value.encode()),
        base64.b32encode(value.encode()).decode().rstrip("="),
    ]


def _own_forms(value: str) -> list[str]:
    """This node's secret as ``quote_plus``, ``quote`` (``/`` kept) and JSON in JSON give it."""
    return [
        urllib.parse.quote_plus(value),
        urllib.parse.quote(value),
        json.dumps(json.dumps(value)[1:-1])[1:-1],
    ]


def _personal_secrets(rng: random.Random) -> list[Callable[[], Secret]]:
    def one(kind: str, text: str, secret: str) -> Callable[[], Secret]:
        return lambda: (kind, text, [secret])

    first = rng.randrange(1, 255)
    first += first == 127  # loopback is kept on purpose: it says nothing about the machine
    ip = ".".join([str(first), *(str(rng.randrange(1, 255)) for _ in range(3))])
    public = f"203.0.113.{rng.randrange(1, 255)}"
    private = f"192.168.{rng.randrange(256)}.{rng.randrange(1, 255)}"
    mac = ":".join(f"{rng.randrange(256):02x}" for _ in range(6))
    v6 = f"2001:db8:{rng.randrange(1, 65535):x}::{rng.randrange(1, 65535):x}"
    return [
        one("home", "cd /home/alice.w/projects/relay", "/home/alice.w"),
        one("user", "Running as alice.w on buildbox-7", "alice.w"),
        one("host", "ssh buildbox-7.corp.example.net uptime", "buildbox-7"),
        one("ip", f"connect to {ip}:5432 refused", ip),
        one("ip", f"    inet {private}/24 brd 192.168.255.255 scope global eth0", private),
        one("ip", f"Accepted publickey for ci from {public} port 22 ssh2", public),
        one("ip", f"> Host: {private}", private),
        one("ip", f'{public} - - [30/Nov/2026:08:57:16 +0000] "GET / HTTP/1.1" 200', public),
        one("ip", f"Failed password for invalid user admin {public} port 22", public),
        one("ip", f"worker-a   Ready    <none>   3d   {ip}", ip),
        one("ipv6", f"listening on [{v6}]:8080", v6),
        one("mac", f"link/ether {mac} brd ff:ff:ff:ff:ff:ff", mac),
        one("email", "Author: Alice W <alice.w@example.org>", "alice.w@example.org"),
    ]


def _key_block(rng: random.Random) -> list[str]:
    body = base64.b64encode(rng.randbytes(700)).decode()
    lines = [body[i : i + 64] for i in range(0, len(body), 64)]
    return ["-----BEGIN RSA PRIVATE KEY-----", *lines, "-----END RSA PRIVATE KEY-----"]


def write_corpus(path: Path, *, size: int, seed: int, every: int = 400) -> Corpus:
    """Write about ``size`` bytes of log to ``path``; one secret line per ~``every`` lines."""
    rng = random.Random(seed)
    corpus = Corpus()
    n = 0
    written = 0
    decoy_lines = decoys()
    with open(path, "w", encoding="utf-8", newline="\n") as out:
        while written < size:
            lines = []
            for i in range(rng.randrange(every // 2, every * 3 // 2)):
                if (n + i) % DECOY_EVERY == DECOY_EVERY // 2:
                    corpus.decoys.add(n + i)
                    lines.append(decoy_lines[(n + i) // DECOY_EVERY % len(decoy_lines)])
                else:
                    lines.append(_clean(rng, n + i))
            planted = _plant(rng, corpus, n + len(lines))
            lines += planted
            text = "\n".join(lines) + "\n"
            out.write(text)
            written += len(text.encode())
            n += len(lines)
    return corpus


def _plant(rng: random.Random, corpus: Corpus, line: int) -> list[str]:
    """One secret (or one private key block) at ``line``; record what must vanish."""
    corpus.count += 1
    if corpus.count % 25 == 0:
        block = _key_block(rng)
        for i, text in enumerate(block[1:-1], start=1):
            corpus.secrets[line + i] = [text]
        corpus.secrets[line] = [block[0]]
        corpus.secrets[line + len(block) - 1] = [block[-1]]
        corpus.kinds.add("private-key")
        for i in range(len(block)):
            corpus.line_kinds[line + i] = "private-key"
        return block
    makers = _token_secrets(rng) + _personal_secrets(rng)
    kind, text, secrets = makers[corpus.count % len(makers)]()
    corpus.secrets[line] = secrets
    corpus.kinds.add(kind)
    corpus.line_kinds[line] = kind
    return [text]
