"""Leaks that relaxations of the redaction rules let through, found by a fresh attack on
them: each test is the exact text and what must not survive it. Every case here was masked
before the relaxations (a private key's block ran to the log's end, and no rule spared the
values below), leaked after them, and is masked again: a key's block runs to its END marker
within ``KEY_REACH`` whatever lies between, each relaxed shape reads the value too (a word,
not a drawn value), and the node's own secrets are learned without the word shapes."""

from __future__ import annotations

import base64
import hashlib
from pathlib import Path

import pytest
from redact_samples import redacted
from test_redact_check28 import relay_redact

# Synthetic values, written for these tests: no issuer made them.
PASSWORD = "Hq4vN8zR2kW7mX3pT9bL"
AWS_SECRET = "Zk3vQ8pL2mN7xR4tW9bY6cF1hJ5sD0gA8eK3uV2i"


def _key_body(seed: bytes, size: int = 900) -> list[str]:
    """A key's body as ``gpg --armor`` or PEM writes it: random bytes in base64, 64 a line."""
    raw = b"".join(hashlib.sha512(seed + bytes([i])).digest() for i in range(size // 64 + 1))
    data = base64.b64encode(raw[:size]).decode()
    return [data[i : i + 64] for i in range(0, len(data), 64)]


BODY = _key_body(b"rev28b")
PGP = ("-----BEGIN PGP PRIVATE KEY BLOCK-----", "-----END PGP PRIVATE KEY BLOCK-----")
RSA = ("-----BEGIN RSA PRIVATE KEY-----", "-----END RSA PRIVATE KEY-----")
OPENSSH = ("-----BEGIN OPENSSH PRIVATE KEY-----", "-----END OPENSSH PRIVATE KEY-----")


def _leaked(out: str) -> list[str]:
    return [line for line in BODY if line in out]


def _stamp(i: int) -> str:
    """A GitHub Actions raw log's prefix: every line of a job's log has one."""
    return f"2026-12-06T10:00:{i // 1000:02d}.{i % 1000:07d}Z "


# --- 1. a private key printed with a prefix on each line: the armor's own lines end it -----


@pytest.mark.parametrize("prefix", [_stamp, lambda i: "web_1  | ", lambda i: "[pod/signer-0] "])
@pytest.mark.parametrize("headers", [[""], ["Version: GnuPG v2", ""]])
def test_an_armored_private_key_with_a_prefix_on_each_line_is_masked(
    prefix: object, headers: list[str]
) -> None:
    """``gpg --armor --export-secret-keys`` in a job (a release's signing key), read from the
    raw log, ``docker compose logs`` or ``kubectl logs --prefix``: a PGP armor always has a
    blank line after its headers, and under a prefix that line is the prefix alone, which
    is no body line: the block ends at the BEGIN line and every line of the key is kept."""
    assert callable(prefix)
    lines = [PGP[0], *headers, *BODY, "=tJ8a", PGP[1]]
    text = "".join(f"{prefix(i)}{line}\n" for i, line in enumerate(lines))
    assert _leaked(redacted(text)) == []


@pytest.mark.parametrize("prefix", [_stamp(0), "web_1  | ", "    "])
def test_an_encrypted_pem_key_with_a_prefix_or_an_indent_is_masked(prefix: str) -> None:
    """An encrypted PEM key (``Proc-Type``/``DEK-Info`` below its BEGIN line) in a log with a
    prefix, or indented in YAML (``key: |``): the second header line is read as no body
    line (the header check looks at the raw line's start), and the whole body is kept."""
    lines = [
        RSA[0],
        "Proc-Type: 4,ENCRYPTED",
        "DEK-Info: AES-128-CBC,0A1B2C3D4E5F60718293A4B5C6D7E8F9",
        "",
        *BODY,
        RSA[1],
    ]
    text = "".join(f"{prefix}{line}\n" for line in lines)
    assert _leaked(redacted(text)) == []


# --- 2. another line between a prefixed key's body lines -----------------------------------


@pytest.mark.parametrize(
    ("prefix", "other"),
    [
        ("web_1  | ", "db_1   | LOG:  checkpoint starting: time"),
        ("[pod/web-0] ", "[pod/web-1] GET /healthz 200 1ms"),
        (_stamp(5), _stamp(5) + "##[warning]Node.js 16 actions are deprecated."),
    ],
)
def test_a_prefixed_key_with_another_services_line_inside_is_masked(
    prefix: str, other: str
) -> None:
    """Two services' output interleaved (compose, kubectl with several pods, a job whose
    runner adds a warning): the block ends at the other line, and the END-marker search up
    from the bottom reads bare base64 alone, so every body line below it is kept (most of
    the key: an RSA key's lower half is its primes' and exponents' bytes)."""
    lines = [prefix + RSA[0], *(prefix + b for b in BODY[:3]), other]
    lines += [*(prefix + b for b in BODY[3:]), prefix + RSA[1]]
    assert _leaked(redacted("\n".join(lines) + "\n")) == []


def test_a_cut_off_key_with_a_line_inside_is_masked() -> None:
    """A step's output interleaved with the key, the log cut before the END line."""
    lines = [RSA[0], *BODY[:3], "Still running...", *BODY[3:], "Error: job cancelled"]
    assert _leaked(redacted("\n".join(lines) + "\n")) == []


# --- 3. a key in a diff, in grep's output, in a container's JSON log, in colour -------------


@pytest.mark.parametrize(
    "form",
    [
        lambda i, s: f"-{s}",  # git show / git diff of a commit that deletes the key
        lambda i, s: f"\x1b[31m-{s}\x1b[m",  # the same, coloured
        lambda i, s: f"\x1b[32m+{s}\x1b[m",  # a coloured addition
        lambda i, s: f"deploy/id_rsa:{i + 1}:{s}",  # grep -rn
        lambda i, s: f"deploy/id_rsa-{i + 1}-{s}",  # grep -A's context lines
        lambda i, s: '{"log":"' + s + '\\n","stream":"stdout"}',  # docker's json-file log
        lambda i, s: f"\x1b[90m{s}\x1b[0m",  # a runner's colour for a step's output
    ],
)
def test_a_key_in_a_diff_grep_or_json_log_is_masked(form: object) -> None:
    """``git show`` of the commit that removed a key pushed by mistake is the common one:
    ``+`` is base64 and an added key is masked, ``-`` is not and a removed one is kept."""
    assert callable(form)
    lines = [RSA[0], *BODY, RSA[1]]
    text = "diff --git a/deploy/id_rsa b/deploy/id_rsa\n--- a/deploy/id_rsa\n+++ /dev/null\n"
    text += "".join(form(i, line) + "\n" for i, line in enumerate(lines))
    assert _leaked(redacted(text)) == []


@pytest.mark.parametrize(
    "form",
    [
        lambda s: f'    "{s}\\n" +',  # JavaScript, Java: a fixture's key, concatenated
        lambda s: f'    "{s}\\n"',  # Python, C: adjacent literals
        lambda s: f"{s} \\",  # a shell line continued
        lambda s: f"{s} [stdout]",  # a tool's tag after each line
    ],
)
def test_a_key_written_in_code_is_masked(form: object) -> None:
    """A test fixture's key in a diff or a printed file: each body line ends in a quote, a
    ``\\n`` or a ``+``, so none is a body line and the block ends at its BEGIN line."""
    assert callable(form)
    text = "".join(form(line) + "\n" for line in [OPENSSH[0], *BODY, OPENSSH[1]])
    assert _leaked(redacted(text)) == []


# --- 4. a credential in a CLI's message, read as a C library's export macro ----------------


@pytest.mark.parametrize(
    "line",
    [
        f"Created API token {PASSWORD} (expires 2027-01-01)",
        f"Using API key {PASSWORD} (source: environment)",
        f"INFO Generated new API key {PASSWORD} (id: 42)",
        f"Admin API secret {PASSWORD} (rotate after use)",
        f"REST API password {PASSWORD} (user admin)",
        f"GITHUB_API token {PASSWORD} (scopes: repo)",
    ],
)
def test_a_credential_after_api_and_its_word_in_a_message_is_masked(line: str) -> None:
    """``_C_API_MACRO`` takes ``API`` then any word (as a return type) and a value before a
    ``(``: a CLI's ``API key X (note)`` is that shape; ``API key: X (note)`` is masked."""
    assert PASSWORD not in redacted(line + "\n")


# --- 5. common human passwords read as a document's counting --------------------------------


@pytest.mark.parametrize(
    "line",
    [
        "DB_PASSWORD=Welcome-123456",
        "password: Password-123456",
        "MYSQL_ROOT_PASSWORD=letmein-123456",
        "password=admin_123456",
        "ADMIN_PASSWORD=Acme-345678",
        "password: root-123abc",
    ],
)
def test_a_common_password_with_ascending_digits_is_masked(line: str) -> None:
    """``_counted_parts``: a word, then parts of ascending runs (``123456``). The issue's
    ``xoxb-12345-abcd234`` has a token's prefix; ``Welcome-123456`` is among the passwords
    people choose most, and a real one where it stands."""
    value = line.replace(": ", "=").split("=")[-1]
    assert value not in redacted(line + "\n")


@pytest.mark.parametrize(
    "password", ["admin_123456", "Welcome-123456", "SuperMode", "_Admin", "SUPERSECRETPASSWORD"]
)
def test_a_database_urls_password_stays_an_own_secret(password: str, tmp_path: Path) -> None:
    """``facts._stands_in`` asks ``value_is_not_secret`` whether a URL's password stands in
    for one; each relaxation of it (counting, a class's name, a private type, capitals up
    to 24) now drops a real password from the node's own secrets, and its bare use in the
    log (``connecting with …``) is kept."""
    url = f"postgres://app:{password}@db:5432/app"
    out = relay_redact(f"psql: connecting with {password}\n", tmp_path, DATABASE_URL=url)
    assert password not in out


# --- 6. a password with a $ in Markdown's inline code ---------------------------------------


@pytest.mark.parametrize(
    "line",
    [
        "- password: `Hq4v$N8zR2kW7mX3`",
        "| staging | admin | password: `Hq4v$N8zR2kW7mX3` |",
        "export PGPASSWORD=`Hq4v$N8zR2kW7mX3`",
    ],
)
def test_a_password_with_a_dollar_in_backticks_is_masked(line: str) -> None:
    """A runbook, an issue's comment, a PR's description: passwords carry symbols, ``$``
    often; a lone word in backticks is no command (no space in it)."""
    assert "Hq4v$N8zR2kW7mX3" not in redacted(line + "\n")


# --- 7. capitals alone, up to 24: a base32 seed without a digit ----------------------------


@pytest.mark.parametrize(
    "line",
    [
        "TOTP_SECRET=JBSWYDPEHPKPXPQRWLMN",
        "otp_secret: KRUGSZZAMFZSAYJAONSW",
        "secret: NBSWYTDPEBXXEZLMMQ",
        "API_KEY=QWERTYUIOPASDFGHJKLZXC",
    ],
)
def test_capitals_of_a_seed_or_key_are_masked(line: str) -> None:
    """A base32 TOTP seed has no digit with odds of 1 in 28 at 16 characters; a status or a
    constant is a word (``ADDED``), not 13 to 24 letters of no word."""
    value = line.replace(": ", "=").split("=")[-1]
    assert value not in redacted(line + "\n")


# --- 8. the rest: code's shapes that a log or a config holds as a literal -------------------


@pytest.mark.parametrize(
    "line",
    [
        f"#define WIFI_PASSWORD {PASSWORD}",  # an Arduino sketch, the macro unquoted
        f"  #define BLYNK_AUTH_TOKEN {PASSWORD}",
        f"<!-- password={PASSWORD}-->",  # an HTML comment's end read as PHP's ->
        f"    password={PASSWORD},",  # a multi-line settings dump, read as a call
        f"    api_key={PASSWORD})",
        f"    aws_secret_access_key={AWS_SECRET},",  # no look at the value's randomness
        f"  client_secret={AWS_SECRET})",
        f"let password = {PASSWORD}",  # a bare value after let, read as a variable
        f"export const DB_PASSWORD = {PASSWORD}",
        f"PASSWORD=`echo {PASSWORD}`",  # a command that prints the literal
        f"password=/^{PASSWORD}",
    ],
)
def test_a_literal_in_a_code_shape_is_masked(line: str) -> None:
    """Each rule reads the line's shape alone, never the value's: a 40-character random
    value on an indented ``name=value,`` line is kept as a call's keyword argument."""
    out = redacted(line + "\n")
    assert PASSWORD not in out and AWS_SECRET not in out


@pytest.mark.parametrize(
    ("line", "value"),
    [
        ("password: summer-2026-06-01", "summer-2026-06-01"),  # a dated feature's name
        ("DB_PASSWORD=acme-prod-2026-01-15", "acme-prod-2026-01-15"),
        ("password: _SuperSecret", "_SuperSecret"),  # a private type
        ("password=WinterState", "WinterState"),  # a class's name
        ("PASSWORD=SUPERSECRETPASSWORD", "SUPERSECRETPASSWORD"),
        ("password: 'open sesame key'", "open sesame key"),  # a phrase naming a secret
        ("secret: 'purple monkey dishwasher token'", "purple monkey dishwasher token"),
        ("password: 'you will pass'", "you will pass"),  # three words, two a sentence's
        ("api_key = 0xDEADBEEFCAFEBABEULL", "0xDEADBEEFCAFEBABEULL"),  # C's suffix
        ("password=0x1A2B3C4Du", "0x1A2B3C4Du"),
    ],
)
def test_a_password_of_words_is_masked(line: str, value: str) -> None:
    """Human passwords are words, dates and capitals: each of these was masked before."""
    assert value not in redacted(line + "\n")
