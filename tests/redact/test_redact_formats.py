"""Each supported format, in a realistic line, is replaced by its named placeholder."""

from __future__ import annotations

import hashlib
import html
import json
import re
import urllib.parse
from collections.abc import Callable

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from redact_samples import FACTS, MAKERS, OWN_SECRET

from relay.errors import LocalUsageError
from relay.redact import MAX_REDACTED_SHARE, Kind, MachineFacts, Redactor, placeholder
from relay.redact.stream import MIN_SHARE_INPUT

REDACTOR = Redactor(FACTS)


@pytest.mark.parametrize("name", sorted(MAKERS))
def test_every_format_is_removed(name: str) -> None:
    text, secrets = MAKERS[name](name.encode() * 3)
    out = REDACTOR.redact(f"step 3: {text}\nnext line\n")
    for secret in secrets:
        assert secret not in out, (name, out)
    assert out.endswith("next line\n")


def test_redacting_twice_changes_nothing_more() -> None:
    text = "\n".join(MAKERS[name](name.encode())[0] for name in sorted(MAKERS)) + "\n"
    once, first = REDACTOR.redact_with_report(text)
    twice, second = REDACTOR.redact_with_report(once)
    assert twice == once
    assert second.counts == {} and first.counts


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("push with ghp_" + "a1B2" * 9, "push with [redacted:github-token]"),
        ("GH_TOKEN=github_pat_11AAAAAAA0" + "x" * 60, "GH_TOKEN=[redacted:github-token]"),
        ("id AKIAQ3EGRT7PLW2KZ5NB ok", "id [redacted:aws-access-key] ok"),
        ("key=AIzaSyA9f3Kq0LmZ2xWb7Yc1Nd4Pe6Rg8Th5Uj2", "key=[redacted:google-api-key]"),
        ("xoxb-482913576024-9071836452317-AbCdEfGhIjKl", "[redacted:slack-token]"),
        ("sk_live_4eC39HqLyjWDarjtT1zdp7dc", "[redacted:stripe-key]"),
        ("sk-ant-api03-" + "Ab1" * 30, "[redacted:anthropic-key]"),
        ("sk-" + "Ab1" * 16, "[redacted:openai-key]"),
        ("npm_" + "Ab1" * 12, "[redacted:npm-token]"),
        ("Authorization: Bearer abc.def-ghi_123", "Authorization: Bearer [redacted:authorization]"),
        (
            "git clone https://bob:hunter2@example.com/r",
            "git clone https://[redacted:url-credentials]@example.com/r",
        ),
        ('{"password": "p4ss w0rd"}', '{"password": "[redacted:secret]"}'),
        ("DB_PASSWORD=hunter2 next", "DB_PASSWORD=[redacted:secret] next"),
        ("db.pwd=hunter2", "db.pwd=[redacted:secret]"),
        ("x-api-key: 0123abcd", "x-api-key: [redacted:secret]"),
        ("Cookie: sessionid=a3fWa9; theme=dark", "Cookie: [redacted:secret]; theme=dark"),
        ("mysql --password s3cr3t -h db", "mysql --password [redacted:secret] -h db"),
        ("AUTHORIZATION: token 9f3c2a7e51b0d846", "AUTHORIZATION: token [redacted:authorization]"),
        (f"value {OWN_SECRET} end", "value [redacted:own-secret] end"),
        ("in /home/zelda9/src", "in <home>/src"),
        ("in /home/someone/src", "in <home>/src"),
        ("in /Users/someone/src", "in <home>/src"),
        (r"in C:\Users\Zelda9\src", r"in <home>\src"),
        ("as zelda9 on hyrule-box", "as <user> on <host>"),
        ("at hyrule-box.example.net.", "at <host>."),
        ("to 10.1.2.3:80.", "to <ip>:80."),
        ("via fe80::1ff:fe23:4567:890a", "via <ip>"),
        ("addr 2001:0db8:85a3:0000:0000:8a2e:0370:7334 up", "addr <ip> up"),
        ("ether 00:1a:2b:3c:4d:5e brd", "ether <mac> brd"),
        ("ether 00-1A-2B-3C-4D-5E brd", "ether <mac> brd"),
        ("mail zelda.w+ci@example.co.uk", "mail <email>"),
        # JSON inside a JSON string, as a log quotes a request body
        (r"{\"password\":\"hunter2hunter2\"}", r"{\"password\":\"[redacted:secret]\"}"),
        (
            r'"{\"api_key\": \"abcd1234efgh5678\"}"',
            r'"{\"api_key\": \"[redacted:secret]\"}"',
        ),
        # ``pass`` names a secret here as it does in the environment scan (facts)
        ("DB_PASS=hunter22hunter", "DB_PASS=[redacted:secret]"),
        ('{"pass": "hunter22hunter"}', '{"pass": "[redacted:secret]"}'),
        (
            "redis://:Hunter2pass@redis:6379/0",
            "redis://[redacted:url-credentials]@redis:6379/0",
        ),
        (
            "next=https%3A%2F%2Fuser%3Apa55word%40example.com%2Fx",
            "next=https%3A%2F%2F[redacted:url-credentials]%40example.com%2Fx",
        ),
        ("mysql -uroot -pS3cr3tpw db", "mysql -uroot -p[redacted:secret] db"),
        (
            "docker login -u bob -p VALUE123 reg.io",
            "docker login -u bob -p [redacted:secret] reg.io",
        ),
        (
            "aws configure set aws_secret_access_key VALUE1234",
            "aws configure set aws_secret_access_key [redacted:secret]",
        ),
        # addresses where an address word, punctuation, a port or a prefix length says so
        ("connect to 10.0.0.5:5432", "connect to <ip>:5432"),
        ("inet 192.168.1.20/24 brd", "inet <ip>/24 brd"),
        ("from 203.0.113.9 port 22", "from <ip> port 22"),
        ("Host: 172.16.4.2", "Host: <ip>"),
        ("203.0.113.9 - - [30/Nov/2026] GET /", "<ip> - - [30/Nov/2026] GET /"),
        ("eth0 203.0.113.9 up", "eth0 <ip> up"),
        ("libfoo 10.0.0.1 private range", "libfoo <ip> private range"),
        ("ip=198.51.100.7", "ip=<ip>"),
        ("ssh root@203.0.113.9 uptime", "ssh root@<ip> uptime"),
    ],
)
def test_placeholders_name_what_they_replaced(line: str, expected: str) -> None:
    assert REDACTOR.redact(line) == expected


def test_private_key_block_keeps_line_count() -> None:
    block = "-----BEGIN EC PRIVATE KEY-----\nMHcCAQEEIBb\nAoGCCqGSM49\n-----END EC PRIVATE KEY-----"
    out = REDACTOR.redact(f"before\n{block}\nafter\n")
    assert out == "before\n[redacted:private-key]\n\n\n\nafter\n"


def test_json_escaped_key_block_on_one_line() -> None:
    line = '{"key": "-----BEGIN RSA PRIVATE KEY-----\\nMIIEow\\n-----END RSA PRIVATE KEY-----"}'
    assert "MIIEow" not in REDACTOR.redact(line)


@pytest.mark.parametrize(
    "line",
    [
        "driver version 10.2.0.1 loaded",
        "release v1.2.3.4 and 1.2.3.4-rc1 and 1.2.3.4+build5 and 1.2.3.4.5",
        "commit 3f9a2b7c1d0e4f5a6b7c8d9e0f1a2b3c4d5e6f7a",
        "request 123e4567-e89b-12d3-a456-426614174000 at 2026-11-30T08:57:16.123Z",
        "src/parser.cpp:12:5: error: std::vector<int> has no member Foo::bar",
        "listening on 127.0.0.1:8000 and [::1]:8000 and 0.0.0.0",
        "max_tokens=512 tokenizer=gpt2 token_stream: processed 5 items",
        "docker pull image:1.2 from registry; git@github.com:org/repo.git",
        "npm WARN deprecated inflight@1.0.6; @pytest.mark.parametrize; pkg@1.2.3",
        "password: ${DB_PASSWORD} token=None secret: <redacted> api_key=*****",
        "cache key=abc123 primary_key: id",
        "/usr/lib/python3.11/site-packages/x.py line 12, 12:34:56 elapsed",
        "sha256:0ae37458a9abe56630569ee15cdcc93baed47353432e68e531333d948d2f1a20",
        "setuptools>=68.0.0.1 foo-2.3.4.5 pkg==1.2.3.4 Firefox/115.0.2.1",
        "firefox 115.0.2.1; .NET SDK 8.0.100.1; cmake 3.28.1.0; libfoo 1.2.3.4",
        "PASS: test_parser PASS=3 FAIL=0 bypass=1 tests passed: 5 pass_file=/etc/x",
        "gcc -I/usr/include/mysql -pthread -pipe; ssh login -p 22; mysql -u root -p db",
        "aws configure set region us-east-1",
    ],
)
def test_clean_lines_come_through_unchanged(line: str) -> None:
    assert REDACTOR.redact(line + "\n") == line + "\n"


def test_extra_patterns_and_allowed_exceptions() -> None:
    redactor = Redactor(FACTS, extra_patterns={"ticket": r"TCK-[0-9]{4}"}, allowed=[r"10\.9\.9\.9"])
    out = redactor.redact("see TCK-1234 on 10.9.9.9 and 10.9.9.8")
    assert out == "see [redacted:ticket] on 10.9.9.9 and <ip>"


def test_a_broken_extra_pattern_is_a_usage_error() -> None:
    with pytest.raises(LocalUsageError, match="not a valid regex"):
        Redactor(FACTS, extra_patterns={"ticket": "TCK-[0-9"})


def test_a_broken_allowed_exception_is_named_with_its_own_position() -> None:
    with pytest.raises(LocalUsageError, match=r"'ok\(' is not a valid regex.* position 2"):
        Redactor(FACTS, allowed=["fine", "ok("])


def test_generic_and_one_letter_names_are_not_words_to_redact() -> None:
    facts = MachineFacts(user="root", home="/root", hosts=("vm", "localhost", "x"))
    out = Redactor(facts).redact("root cause in vm at /root/build and /rootfs on localhost x\n")
    assert out == "root cause in <host> at <home>/build and /rootfs on localhost x\n"


def test_report_counts_by_kind_and_flags_too_much_redaction() -> None:
    token = "ghp_" + "a1B2" * 9 + "\n"
    out, report = Redactor(FACTS).redact_with_report(token * 60)
    assert report.counts == {Kind.GITHUB_TOKEN: 60} and report.bytes_in >= MIN_SHARE_INPUT
    assert not report.safe and "replaced" in report.reason
    assert out == (placeholder(Kind.GITHUB_TOKEN) + "\n") * 60
    _, fine = Redactor(FACTS).redact_with_report("ok\n" * 100 + token)
    assert fine.safe and fine.bytes_in > fine.bytes_out


def test_a_small_log_is_judged_by_what_is_left_not_by_its_share() -> None:
    """Below MIN_SHARE_INPUT the share rule would drop a 3-line log with one home path."""
    text = "build\ncd /home/zelda9/src\nok\n"
    out, report = Redactor(FACTS).redact_with_report(text)
    assert report.share > MAX_REDACTED_SHARE and report.bytes_in < MIN_SHARE_INPUT
    assert report.safe and out == "build\ncd <home>/src\nok\n"


def test_binary_input_is_not_safe() -> None:
    _, report = Redactor(FACTS).redact_with_report(b"\x7fELF\x02\x01\x00\x00" + bytes(range(256)))
    assert not report.safe and "binary" in report.reason


def test_binary_decoded_with_replace_is_still_binary() -> None:
    """A caller that decoded with errors="replace" hands in U+FFFD runs and no NUL byte."""
    blob = bytes(b for b in hashlib.sha512(b"blob").digest() * 40 if b)
    _, report = Redactor(FACTS).redact_with_report(blob.decode(errors="replace"))
    assert not report.safe and "binary" in report.reason
    _, text = Redactor(FACTS).redact_with_report("caf\ufffd opened\n" + "ok\n" * 20)
    assert text.safe  # one stray U+FFFD is mojibake, not binary


def test_no_allowed_exception_unmasks_this_nodes_own_secrets() -> None:
    token = "ghp_" + "Zq7" * 12
    facts = MachineFacts(secrets=(OWN_SECRET, token))
    redactor = Redactor(facts, allowed=[".*"])
    out = redactor.redact(f"a {OWN_SECRET} b {token} c 10.9.9.9\n")
    assert out == "a [redacted:own-secret] b [redacted:own-secret] c 10.9.9.9\n"


@pytest.mark.parametrize(
    "form",
    [
        lambda s: urllib.parse.quote_plus(s),
        lambda s: urllib.parse.quote(s),  # "/" left as it is
        lambda s: json.dumps(json.dumps(s)[1:-1])[1:-1],  # JSON inside a JSON string
        lambda s: re.sub("%[0-9A-F]{2}", lambda m: m.group().lower(), urllib.parse.quote(s)),
        lambda s: html.escape(s, quote=False).replace('"', "&#34;").replace("'", "&#39;"),
        lambda s: "".join(f"&#{ord(c)};" if c in "&<>\"'" else c for c in s),  # numeric
        lambda s: "".join(f"&#x{ord(c):x};" if c in "&<>\"'" else c for c in s),
        lambda s: json.dumps(s)[1:-1].replace("/", "\\/"),  # an escaped slash
        lambda s: json.dumps(s)[1:-1].replace("&", "\\u0026"),  # Go's encoding/json
        lambda s: s.encode().hex(),
    ],
)
def test_own_secret_in_more_encodings(form: Callable[[str], str]) -> None:
    value = "own s3cret/with+signs=9"
    out = Redactor(MachineFacts(secrets=(value,))).redact(f"x {form(value)} y")
    assert out == "x [redacted:own-secret] y"


def test_a_flag_followed_by_a_plain_word_is_prose_not_a_secret() -> None:
    """relay's own hints say `--save-token file`; a short lower-case word after a
    secret-named flag is a choice or prose, while anything secret-shaped is masked."""
    r = Redactor()
    for kept in ("use --save-token file", "pass --save-token to keep it"):
        assert r.redact(kept) == kept
    for secret in ("--password hunter22", "--token Zq7Zq7Zq7", "--api-key kqzwmfjtrhxv"):
        flag, value = secret.split(" ")
        out = r.redact(secret)
        assert value not in out and out.startswith(flag), out


def test_the_end_of_a_key_without_its_begin_line_is_still_masked() -> None:
    """A log's output cap can cut a key block's BEGIN line away, and a step may print only
    the end of a key file: the base64 lines above an END marker are key material."""
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import rsa

    key = rsa.generate_private_key(public_exponent=65537, key_size=1024)
    pem = key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.OpenSSH,
        serialization.NoEncryption(),
    ).decode()
    body = pem.splitlines()
    r = Redactor()
    for keep in (3, 6, len(body) - 1):
        text = (
            "compiling foo.c\n[... 1024 bytes of output omitted ...]\n"
            + "\n".join(body[-keep:])
            + "\nlinking done\n"
        )
        out = r.redact(text)
        for line in body[1:-1]:
            assert line not in out
        assert "END OPENSSH PRIVATE KEY" not in out
        assert out.startswith("compiling foo.c\n") and out.endswith("linking done\n")
        assert out.count("\n") == text.count("\n")  # line numbers stay true


def test_public_addresses_after_ordinary_words_are_addresses_not_versions() -> None:
    r = Redactor()
    for line in (
        "Failed password for invalid user admin 203.0.113.9 port 22",
        "worker-a Ready 34.123.45.67",
        "public_ip 198.51.100.23",
        "NAT mapped 198.51.100.23",
        "wlan 198.51.100.23",
    ):
        out = r.redact(line)
        assert "<ip>" in out and not any(q in out for q in ("203.0", "34.123", "198.51")), out
    for kept in ("cmake 3.28.1.0", "firefox 115.0.2.1", "Installing node 18.17.1.3"):
        assert r.redact(kept) == kept


OWN_ENCODINGS: dict[str, Callable[[str], str]] = {
    "xml": lambda s: s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;"),
    "xml-attribute": lambda s: html.escape(s, quote=True),
    "xml-apos": lambda s: html.escape(s).replace("&#x27;", "&apos;"),
    "sql-doubled-quotes": lambda s: s.replace("'", "''"),
    "csv-doubled-quotes": lambda s: s.replace('"', '""'),
    "command-line": lambda s: s.replace("\\", "\\\\").replace('"', '\\"'),
}
TRICKY_SECRET = "p4ss\"w<o>rd&'x-42"


@pytest.mark.parametrize("name", sorted(OWN_ENCODINGS))
def test_own_secret_in_the_encodings_the_runner_masks(name: str) -> None:
    encoded = OWN_ENCODINGS[name](TRICKY_SECRET)
    assert encoded != TRICKY_SECRET
    out = Redactor(MachineFacts(secrets=(TRICKY_SECRET,))).redact(f"value={encoded} end\n")
    assert out == "value=[redacted:own-secret] end\n"


@settings(max_examples=30, deadline=None)
@given(cuts=st.lists(st.integers(1, len(OWN_SECRET) - 1), min_size=1, max_size=3, unique=True),
       codes=st.lists(st.sampled_from(["\x1b[31m", "\x1b[0m", "\x1b[1;32m", "\x1b[38;5;208m"]),
                      min_size=3, max_size=3))  # fmt: skip
def test_own_secret_split_by_ansi_colour_codes(cuts: list[int], codes: list[str]) -> None:
    """A coloured log can put codes inside a value; what a reader sees is still the secret."""
    pieces, last = [], 0
    for cut, code in zip(sorted(cuts), codes, strict=False):
        pieces += [OWN_SECRET[last:cut], code]
        last = cut
    coloured = "".join([*pieces, OWN_SECRET[last:]])
    out = REDACTOR.redact(f"\x1b[32mok\x1b[0m {coloured} \x1b[0mdone\n")
    plain = re.sub(r"\x1b\[[0-9;]*m", "", out)
    assert OWN_SECRET not in plain
    assert "[redacted:own-secret]" in out and out.endswith(" \x1b[0mdone\n")


@pytest.mark.parametrize("size", [100, 4096, 6000])
def test_a_long_credential_is_replaced_whole(size: int) -> None:
    """A bearer token or a URL's user info longer than the rule reads at once is not cut
    in two: what it read is replaced and so is the rest."""
    secret = ("Zq7" * size)[:size]
    bearer = Redactor().redact(f"Authorization: Bearer {secret} done")
    assert bearer == "Authorization: Bearer [redacted:authorization] done"
    url = Redactor().redact(f"clone https://ci:{secret}@git.example.org/r.git ok")
    assert url == "clone https://[redacted:url-credentials]@git.example.org/r.git ok"


def test_extra_patterns_run_in_linear_time_where_re2_reads_them() -> None:
    """A master section's pattern is run by RE2 when RE2 reads it: ``(a|a)*b`` on forty
    ``a`` would take Python's backtracking ``re`` 2**40 steps; RE2 reads it once. A
    pattern only ``re`` reads (a look-behind) still works, run by ``re``."""
    from relay.redact.engine import Engine, LinearRule

    engine = Engine(FACTS, extra_patterns={"evil": r"(a|a)*b", "ref": r"(?<=ref:)[0-9]{6}"})
    kinds = {rule.kind: type(rule) for rule in engine.extra}
    assert kinds["evil"] is LinearRule and kinds["ref"] is not LinearRule
    redactor = Redactor(FACTS, extra_patterns={"evil": r"(a|a)*b", "ref": r"(?<=ref:)[0-9]{6}"})
    assert (
        redactor.redact("a" * 40 + "c ref:123456 ab\n")
        == "a" * 40 + "c ref:[redacted:ref] [redacted:evil]\n"
    )


@pytest.mark.parametrize(
    ("line", "masked"),
    [
        # a snake_case name glued to a GitHub token's prefix: a C function in a change log
        ("\t(ghs_pragma_interrupt): Likewise.", False),
        ("\t* config/v850/v850.c (ghs_pragma_interrupt): New.", False),
        ("ghr_reset_all_handles();", False),
        # drawn tokens, classic and an installation token's long form
        ("GH_TOKEN=ghs_Xk9mP2vL8qR5wT7zAbQ3nJ6hY4cD1eF0gS2", True),
        ("token ghs_16_eyJhbGciOiJSUzI1NiJ9.eyJpc3MiOiIxMjM0NTYifQ.c2lnbmF0dXJl", True),
        ("ghp_k3m9x7q2w8e4r6t1y5u0i9o8p7a6s5d4f3g2", True),
    ],
)
def test_a_github_tokens_prefix_on_a_snake_case_name_is_no_token(line: str, masked: bool) -> None:
    out = Redactor(FACTS).redact(line + "\n")
    assert (out != line + "\n") is masked, out
