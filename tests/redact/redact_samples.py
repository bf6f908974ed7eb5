"""Realistic secrets of every supported format, for the redaction tests.

Each maker takes random bytes (from hypothesis or a fixed seed) and returns the text to put
in a log and the strings that must not survive redaction. Secret bodies are derived from a
hash of the bytes, so they look like the real thing: high-entropy, mixed-case, fixed length.
"""

from __future__ import annotations

import base64
import hashlib
import json
import string
import urllib.parse
from collections.abc import Callable

from relay.redact import MachineFacts, Redactor

B62 = string.ascii_letters + string.digits
B64URL = B62 + "-_"
OWN_SECRET = 'n0de/Own+se"cret=4a7f'
FACTS = MachineFacts(
    user="zelda9",
    home="/home/zelda9",
    hosts=("hyrule-box", "hyrule-box.example.net"),
    secrets=(OWN_SECRET,),
)


def body(seed: bytes, n: int, alphabet: str = B62) -> str:
    """``n`` characters of ``alphabet`` derived from ``seed``."""
    out: list[str] = []
    counter = 0
    while len(out) < n:
        digest = hashlib.sha512(seed + counter.to_bytes(4, "big")).digest()
        out.extend(alphabet[b % len(alphabet)] for b in digest)
        counter += 1
    return "".join(out[:n])


def jwt(seed: bytes) -> str:
    head = base64.urlsafe_b64encode(b'{"alg":"RS256","typ":"JWT"}').decode().rstrip("=")
    claims = base64.urlsafe_b64encode(f'{{"sub":"{body(seed, 8)}"}}'.encode()).decode()
    return f"{head}.{claims.rstrip('=')}.{body(seed + b'sig', 43, B64URL)}"


def key_block(seed: bytes, label: str) -> str:
    data = base64.b64encode(hashlib.sha512(seed).digest() * 6).decode()
    lines = [data[i : i + 64] for i in range(0, len(data), 64)]
    return "\n".join([f"-----BEGIN {label}-----", *lines, f"-----END {label}-----"])


Made = tuple[str, list[str]]


def _plain(prefix: str, n: int, alphabet: str = B62) -> Callable[[bytes], Made]:
    def make(seed: bytes) -> Made:
        token = prefix + body(seed, n, alphabet)
        return token, [token]

    return make


def _context(fmt: str, n: int, alphabet: str = B62) -> Callable[[bytes], Made]:
    def make(seed: bytes) -> Made:
        value = body(seed, n, alphabet)
        return fmt.format(value), [value]

    return make


def _key(label: str) -> Callable[[bytes], Made]:
    def make(seed: bytes) -> Made:
        block = key_block(seed, label)
        return block, block.splitlines()[1:-1]

    return make


def _ghs(seed: bytes) -> Made:
    token = f"ghs_{int.from_bytes(seed[:3], 'big') + 1}_{jwt(seed)}"
    return token, [token, token[4:]]


def _jwt(seed: bytes) -> Made:
    token = jwt(seed)
    return token, [token]


def _own(form: Callable[[str], str]) -> Callable[[bytes], Made]:
    def make(seed: bytes) -> Made:
        return form(OWN_SECRET), [form(OWN_SECRET)]

    return make


def _own_marked(join: Callable[[list[str]], str]) -> Callable[[bytes], Made]:
    """The own secret's characters with a mark between each two: what must vanish is every
    character but the first and last, as ``join`` writes them."""

    def make(seed: bytes) -> Made:
        return join(list(OWN_SECRET)), [join(list(OWN_SECRET[1:-1]))]

    return make


def _basic(seed: bytes) -> Made:
    encoded = base64.b64encode(f"x-access-token:{OWN_SECRET}".encode()).decode()
    return f"AUTHORIZATION: basic {encoded}", [encoded]


IPV4_SETTINGS = (
    "connect to {}:5432",
    "inet {}/24 brd",
    "from {} port 22",
    "Host: {}",
    "\n{} - - [30/Nov/2026] GET /",  # an access log: the address opens the line
    "eth0 {} up",
)


def _ipv4(seed: bytes) -> Made:
    octets = [1 + b % 223 for b in seed[:4]]
    octets[0] = octets[0] if octets[0] not in (127,) else 10
    ip = ".".join(map(str, octets))
    return IPV4_SETTINGS[sum(seed) % len(IPV4_SETTINGS)].format(ip), [ip]


def _private_ipv4(seed: bytes) -> Made:
    """A private address after a product-like word is still an address."""
    ip = f"192.168.{seed[0]}.{1 + seed[1] % 254}"
    return f"worker {ip} joined", [ip]


def _escaped_json(seed: bytes) -> Made:
    value = body(seed, 16)
    key = ("password", "api_key", "client_secret")[seed[0] % 3]
    return f'body="{{\\"{key}\\":\\"{value}\\"}}"', [value]


def _encoded_url(seed: bytes) -> Made:
    value = body(seed, 14)
    url = urllib.parse.quote(f"https://ci:{value}@git.example.org/r.git", safe="")
    return f"GET /login?next={url}", [value]


def _ipv6(seed: bytes) -> Made:
    groups = [f"{int.from_bytes(seed[i : i + 2], 'big') | 1:x}" for i in range(0, 6, 2)]
    ip = f"2001:db8:{groups[0]}::{groups[1]}:{groups[2]}"
    return f"listening on [{ip}]:8080", [ip]


def _mac(seed: bytes) -> Made:
    mac = ":".join(f"{b:02x}" for b in seed[:6])
    return f"link/ether {mac} brd", [mac]


def _email(seed: bytes) -> Made:
    address = f"{body(seed, 6).lower()}.dev@{body(seed + b'd', 5).lower()}.example.org"
    return f"Author: Someone <{address}>", [address]


MAKERS: dict[str, Callable[[bytes], Made]] = {
    "github-classic": _plain("ghp_", 36),
    "github-oauth": _plain("gho_", 36),
    "github-pat": _plain("github_pat_11", 70, B62 + "_"),
    "github-installation": _ghs,
    "aws-key-id": _plain("AKIA", 16, string.ascii_uppercase + string.digits),
    "aws-secret": _context("aws_secret_access_key = {}", 40, B62 + "/+"),
    "google-api-key": _plain("AIza", 35, B64URL),
    "slack-token": _plain("xoxb-1234567890-", 24),
    "slack-webhook": _context("https://hooks.slack.com/services/T0001/B0001/{}", 24),
    "stripe": _plain("sk_live_", 24),
    "openai": _plain("sk-proj-", 80, B64URL),
    "openai-legacy": _plain("sk-", 48),
    "anthropic": _plain("sk-ant-api03-", 95, B64URL),
    "npm": _plain("npm_", 36),
    "pypi": _plain("pypi-AgEIcHlwaS5vcmc", 70, B64URL),
    "rsa-key": _key("RSA PRIVATE KEY"),
    "openssh-key": _key("OPENSSH PRIVATE KEY"),
    "pgp-key": _key("PGP PRIVATE KEY BLOCK"),
    "jwt": _jwt,
    "bearer": _context("Authorization: Bearer {}", 40, B64URL),
    "url-credentials": _context("https://deploy:{}@git.example.org/repo.git", 20),
    "password-json": _context('"password": "{}"', 16),
    "token-env": _context("export DEPLOY_TOKEN={}", 32),
    "api-key-yaml": _context("api_key: {}", 32),
    "cli-flag": _context("--password {}", 12),
    "escaped-json": _escaped_json,
    "pass-env": _context("export DB_PASS={}", 18),
    "url-no-user": _context("redis://:{}@cache:6379/0", 20),
    "url-encoded-credentials": _encoded_url,
    "mysql-flag": _context("mysql -h db -uroot -p{} app", 14),
    "docker-login": _context("docker login -u ci -p {} registry.example.org", 24),
    "aws-configure": _context("aws configure set aws_secret_access_key {}", 40),
    "own-secret": _own(lambda s: s),
    "own-secret-base64": _own(lambda s: base64.b64encode(s.encode()).decode().rstrip("=")),
    "own-secret-url": _own(lambda s: urllib.parse.quote(s, safe="")),
    "own-secret-json": _own(lambda s: json.dumps(s)[1:-1]),
    "own-secret-json-twice": _own(lambda s: json.dumps(json.dumps(s)[1:-1])[1:-1]),
    "own-secret-quote": _own(urllib.parse.quote),
    "own-secret-quote-plus": _own(urllib.parse.quote_plus),
    "own-secret-basic-auth": _basic,
    "own-secret-commas": _own_marked(", ".join),
    "own-secret-pipes": _own_marked("|".join),
    "own-secret-python-list": _own_marked(lambda chars: str(chars)[1:-1]),
    "home": lambda seed: ("cd /home/zelda9/src/app", ["/home/zelda9"]),
    "windows-home": lambda seed: (r"C:\Users\Zelda9\AppData\Local", ["Zelda9"]),
    "user": lambda seed: ("logged in as zelda9 today", ["zelda9"]),
    "host": lambda seed: ("ssh hyrule-box.example.net uptime", ["hyrule-box"]),
    "ipv4": _ipv4,
    "ipv4-private": _private_ipv4,
    "ipv6": _ipv6,
    "mac": _mac,
    "email": _email,
}


# One engine that may redact a whole log (no share rule), for tests that read lines.
WHOLE = Redactor(max_redacted_share=1.0)


def redacted(text: str, redactor: Redactor = WHOLE) -> str:
    """The text redacted; the line count is kept."""
    out = redactor.redact(text)
    assert out.count("\n") == text.count("\n")
    return out
