"""Leaks and a false positive a review found: each case is the exact line that was kept (or
redacted) before, with the exact output it must give now."""

from __future__ import annotations

import pytest

from relay.redact import Redactor

REDACTOR = Redactor(max_redacted_share=1.0)
R = "[redacted:secret]"


def redacted(text: str) -> str:
    """The whole text redacted; line count and the rest of each line are kept."""
    out = REDACTOR.redact(text)
    assert out.count("\n") == text.count("\n")
    return out


# A row above a line of dashes that is no table separator is a data row, not a header.
NOT_SEPARATORS = ["---", "-----------------------------", "-----BEGIN PGP MESSAGE-----", " --- "]


@pytest.mark.parametrize("below", NOT_SEPARATORS)
def test_a_row_above_dashes_that_are_no_separator_is_a_value(below: str) -> None:
    text = f"| API_TOKEN | Tbl1SecretValue9xyz |\n{below}\n"
    assert redacted(text) == f"| API_TOKEN | {R} |\n{below}\n"


def test_the_reviewed_table_keeps_no_value() -> None:
    text = (
        "| API_TOKEN | Tbl1SecretValue9xyz |\n---\n"
        "| DB_PASSWORD | Tbl2SecretValue9xyz |\n-----------------------------\n"
    )
    expected = f"| API_TOKEN | {R} |\n---\n| DB_PASSWORD | {R} |\n-----------------------------\n"
    assert redacted(text) == expected


SEPARATORS = ["|---|---|", "|:--|--:|", "--- | ---", "| --- | :---: |", "|-|-|", "---|---"]


@pytest.mark.parametrize("below", SEPARATORS)
def test_a_row_above_a_real_separator_is_a_header(below: str) -> None:
    text = f"| Token | Tbl1SecretValue9xyz |\n{below}\n"
    assert redacted(text) == text


@pytest.mark.parametrize("checksum", ["=Ab3d", "=+/9z"])
def test_a_pgp_key_without_its_begin_line_goes_past_its_checksum_line(checksum: str) -> None:
    """The armor's checksum line (``=`` and four base64 characters) sits between the key's
    body and its END line: the scan back from END reads past it to the body."""
    text = (
        "keep this line\nPGPLEAKaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\nPGPLEAKbbbbbbbbbbbbbbbbbbbbbb\n"
        f"{checksum}\n-----END PGP PRIVATE KEY BLOCK-----\nafter\n"
    )
    assert redacted(text) == "keep this line\n[redacted:private-key]\n\n\n\nafter\n"


# YAML's plain scalars hold blanks: on a line that the key opens, the value runs to the line's
# end (less a comment); elsewhere, and where the first word reads as prose, as before.
PLAIN_SCALARS = [
    ("password: Yml33 plain with spaces", f"password: {R}"),
    ("  - token: Abc123 x y # the ci token", f"  - token: {R} # the ci token"),
    ('"password": Yml33 plain with spaces  ', f'"password": {R}  '),
    ("db_password: Sh31,xyz;w", f"db_password: {R}"),
    ("  token: abc123Z,", f"  token: {R},"),
    ("the password: Yml33 plain with spaces", f"the password: {R} plain with spaces"),
    ("token_stream: processed 5 items", "token_stream: processed 5 items"),
]


@pytest.mark.parametrize(("line", "expected"), PLAIN_SCALARS)
def test_a_plain_scalar_on_a_line_its_key_opens_goes_to_the_line_end(
    line: str, expected: str
) -> None:
    assert redacted(f"before\n{line}\nafter\n") == f"before\n{expected}\nafter\n"


# ``pass`` with ``:`` names a secret as with ``=``; a test runner's PASS lines stay.
BARE_PASS = [
    ("DB_PASS: hunter2hunter2", f"DB_PASS: {R}"),
    ("SMTP_PASS: Smtp9secretX", f"SMTP_PASS: {R}"),
    ("pass: Yml34Secret9xyz", f"pass: {R}"),
    ("  smtp.pass: 'Q9x secret'", f"  smtp.pass: '{R}'"),
    ("PASS: test_parser", "PASS: test_parser"),
    ("--- PASS: TestParser (0.00s)", "--- PASS: TestParser (0.00s)"),
    ("PASS: TestParser", "PASS: TestParser"),
    ("  pass: 5", "  pass: 5"),
]


@pytest.mark.parametrize(("line", "expected"), BARE_PASS)
def test_pass_names_a_secret_with_a_colon_as_with_an_equals_sign(line: str, expected: str) -> None:
    assert redacted(f"{line}\n") == f"{expected}\n"


def test_a_cookie_header_keeps_its_later_cookies() -> None:
    """``Cookie:`` is a header whose pairs ``; `` separates, not a plain scalar."""
    line = "Set-Cookie: id=a3fWa9x; Path=/; HttpOnly\n"
    assert redacted(line) == f"Set-Cookie: {R}; Path=/; HttpOnly\n"


V = "Xk3jd8sKq9Lm2Pz7Qw4v"
# Block scalar headers with a tag, an anchor or an indentation indicator: the lines below go.
BLOCK_SCALARS = [
    ("token: !!binary |\n  c2VjcmV0c2VjcmV0Cg==\nnext: 1", f"token: !!binary |\n  {R}\nnext: 1"),
    ("token: &tok |\n  anchored secret\nnext: 1", f"token: &tok |\n  {R}\nnext: 1"),
    ("password: !secret &p >-\n  two props\nnext: 1", f"password: !secret &p >-\n  {R}\nnext: 1"),
    # the indicator sets the depth: a first line deeper than the rest hides none of them
    ("token: |2\n    first deeper\n  second\nnext: 1", f"token: |2\n    {R}\n\nnext: 1"),
    (
        "- token: |2\n      first deeper\n    second\n  user: app",
        f"- token: |2\n      {R}\n\n  user: app",
    ),
    # ``key`` alone: a block of base64 lines, the first machine-made
    (f"key: |2\n  {V}\n  Ab3dAb3d==\nnext: 1", f"key: |2\n  {R}\n\nnext: 1"),
    (f"key: &k |\n  {V}\nnext: 1", f"key: &k |\n  {R}\nnext: 1"),
]


@pytest.mark.parametrize(("text", "expected"), BLOCK_SCALARS)
def test_a_block_scalar_behind_a_tag_an_anchor_or_an_indicator_is_read(
    text: str, expected: str
) -> None:
    assert redacted(f"{text}\n") == f"{expected}\n"


# ``key: |`` over what is no key material: a cache key's template or value, a word.
KEY_BLOCKS_KEPT = [
    "key: |\n  ${{ runner.os }}-node-${{ hashFiles('**/package-lock.json') }}\n",
    "key: |\n  Linux-node-4f2a9c12\n  more\n",
    "key: |2\n  indentsecret\n",
    f"keyboard: |\n  {V}\n",
]


@pytest.mark.parametrize("text", KEY_BLOCKS_KEPT)
def test_a_key_block_that_holds_no_key_material_is_kept(text: str) -> None:
    assert redacted(text) == text


def test_a_tagged_block_scalar_across_windows_is_redacted_as_a_whole_log_is() -> None:
    """A stream whose window ends inside the value reads the header above it (tag and all)
    to drop the rest of the block in the next window."""
    block = "token: !!binary |\n" + "".join(f"  {V}{i:04d} chunk\n" for i in range(80))
    text = "x\n" + block + "next: 1\n"
    whole = redacted(text)
    assert whole == "x\ntoken: !!binary |\n  " + R + "\n" * 80 + "next: 1\n"
    stream = Redactor(block_size=512, max_redacted_share=1.0).open(overlap=256)
    data = text.encode()
    out = [stream.feed(data[at : at + 300]) for at in range(0, len(data), 300)]
    out.append(stream.finish())
    assert "".join(out) == whole


# A quoted value goes to its closing quote; a quote inside a bare value does not end it.
WHOLE_VALUES = [
    ("sshpass -p 'Ssh22 with spaces' ssh h", f"sshpass -p '{R}' ssh h"),
    ('sshpass -p "Ssh22 with spaces" ssh h', f'sshpass -p "{R}" ssh h'),
    ("mysql -u root -p'My Sql pw' db", f"mysql -u root -p'{R}' db"),
    ("docker login -u ci -p 'Dk 9 pw' reg", f"docker login -u ci -p '{R}' reg"),
    (
        "aws configure set aws_secret_access_key 'Aw 9 pw' --profile x",
        f"aws configure set aws_secret_access_key '{R}' --profile x",
    ),
    ("password=Sh31Secret'quote9x", f"password={R}"),
    ('password=Sh31Secret"quote9x next', f"password={R} next"),
    # a quote that closes the string the setting stands in stays
    ('"password=Sh31Secret9x", next', f'"password={R}", next'),
    ("echo 'password=Sh31Secret9x' done", f"echo 'password={R}' done"),
    ('{"cmd":"PASSWORD=Sh31Secret9x"}', f'{{"cmd":"PASSWORD={R}"}}'),
]


@pytest.mark.parametrize(("line", "expected"), WHOLE_VALUES)
def test_a_value_is_redacted_to_its_real_end(line: str, expected: str) -> None:
    assert redacted(f"{line}\n") == f"{expected}\n"


# Credentials on a command line whose flag names no secret: the password goes.
COMMAND_LINES = [
    ("curl -u admin:Cu1rlPw9 https://x", f"curl -u admin:{R} https://x"),
    ("curl --user admin:Cu1rlPw9 https://x", f"curl --user admin:{R} https://x"),
    ("curl -s -X POST -uadmin:Cu1rlPw9 https://x", f"curl -s -X POST -uadmin:{R} https://x"),
    ("curl --user=admin:Cu1rlPw9 x", f"curl --user=admin:{R} x"),
    ('/usr/bin/curl -u "admin:two words" x', f'/usr/bin/curl -u "admin:{R}" x'),
    ("echo 1 | curl -U proxy:Cu1rlPw9 x", f"echo 1 | curl -U proxy:{R} x"),
    ("redis-cli -a Rd1sPw9x ping", f"redis-cli -a {R} ping"),
    ("redis-cli -h db --pass Rd1sPw9x ping", f"redis-cli -h db --pass {R} ping"),
    ("htpasswd -b /etc/nginx/htpasswd user Ht1Pw9x", f"htpasswd -b /etc/nginx/htpasswd user {R}"),
    ("htpasswd -nb user 'Ht1 Pw9x'", f"htpasswd -nb user '{R}'"),
    ("htpasswd -bC 10 -B file user Ht1Pw9x", f"htpasswd -bC 10 -B file user {R}"),
    # a prompt, a reference, no password, another tool's flag
    ("curl -u admin https://x", "curl -u admin https://x"),
    ('curl -u "$CI_USER:$CI_PASS" https://x', 'curl -u "$CI_USER:$CI_PASS" https://x'),
    ("curl --user-agent a:b -o out https://x", "curl --user-agent a:b -o out https://x"),
    ("libcurl -u a:Cu1rlPw9 x", "libcurl -u a:Cu1rlPw9 x"),
    ("curl -s https://x; ls -u a:b", "curl -s https://x; ls -u a:b"),
    ("redis-cli -a", "redis-cli -a"),
    ("htpasswd -c file user", "htpasswd -c file user"),
    ("htpasswd -b file user", "htpasswd -b file user"),
]


@pytest.mark.parametrize(("line", "expected"), COMMAND_LINES)
def test_a_password_on_a_command_line_goes(line: str, expected: str) -> None:
    assert redacted(f"{line}\n") == f"{expected}\n"


# actions/cache's lines: a cache key is no secret; ``key`` named otherwise still is one.
CACHE_KEYS = [
    "Cache restored from key: Linux-node-4f2a9c1e8b7d6a5f4e3d2c1b0a9f8e7d",
    "Cache saved with key: Linux-node-4f2a9c1e8b7d6a5f4e3d2c1b0a9f8e7d",
    'Cache restored from key: "Linux-node-4f2a9c1e8b7d6a5f4e3d2c1b0a9f8e7d"',
    "Cache hit occurred on the primary key Linux-node-4f2a9c1e8b7d6a5f, not saving cache.",
    "  restore-key: Linux-node-4f2a9c1e8b7d6a5f",
    "cache_key=Linux-node-4f2a9c1e8b7d6a5f",
]


@pytest.mark.parametrize("line", CACHE_KEYS)
def test_a_cache_key_is_kept(line: str) -> None:
    assert redacted(f"{line}\n") == f"{line}\n"


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        (f"key: {V}", f"key: {R}"),
        (f"signing key: {V}", f"signing key: {R}"),
        (f"the key {V} expired", f"the key {R} expired"),
        (f"encryption key from vault: {V}", f"encryption key from vault: {R}"),
    ],
)
def test_a_key_not_named_a_cache_key_still_goes(line: str, expected: str) -> None:
    assert redacted(f"{line}\n") == f"{expected}\n"


# What the new readings must leave as they were: prose with ``pass:``, a string's prefix.
UNCHANGED = [
    "Everything that is not a clean pass: strangers, edits, crashes, people, time.",
    "the first pass: Yml34Secret9xyz",
]


@pytest.mark.parametrize("line", UNCHANGED)
def test_prose_with_a_pass_is_kept(line: str) -> None:
    assert redacted(f"{line}\n") == f"{line}\n"


def test_a_string_prefix_does_not_carry_the_value_past_its_quote() -> None:
    """``token = f"…"``: the value is the prefixed string, read to its own quote and no
    further; an f-string with a field is a template, kept (the lone ``f`` was once taken as
    the value), while a plain prefixed string is judged as any quoted value."""
    line = 'auth = f"x-access-token:{token}@" if token else ""\n'
    assert redacted(line) == line
    line = 'token = b"Xk9qLmZw2VbN7rTp4sYh" if token else ""\n'
    assert redacted(line) == f'token = b"{R}" if token else ""\n'


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        (
            "openssl enc -aes-256-cbc -pass pass:S3cretSsl -in f",
            "openssl enc -aes-256-cbc -pass pass:[redacted:secret] -in f",
        ),
        (
            "openssl rsa -passin 'pass:S3cret Ssl3' -passout env:PW",
            "openssl rsa -passin 'pass:[redacted:secret]' -passout env:PW",
        ),
        ("openssl enc -pass file:pw.txt -in f", "openssl enc -pass file:pw.txt -in f"),
        (
            "smbclient //h/s -U user%S3cretSmb -c ls",
            "smbclient //h/s -U user%[redacted:secret] -c ls",
        ),
        ("smbclient -U user //h/s", "smbclient -U user //h/s"),  # asks at a prompt
    ],
)
def test_openssl_and_smbclient_pass_phrases(line: str, expected: str) -> None:
    """OpenSSL's ``pass:`` argument and smbclient's ``user%password`` hold the secret
    itself; ``file:``, ``env:`` and a user alone only say where it is."""
    assert Redactor().redact(line + "\n") == expected + "\n"


# A quoted value with a stray quote after it (``"…""``) is read past that quote, as an
# escaped one; what follows on the line (a host named example, a template's word, filler)
# must not then make the whole read look like a placeholder and keep the value.
DOUBLED_QUOTES = [
    (
        '"password": "NVIXuQdGnGRwttUp"" ; docker login -u ci -p OSEA3eUzT6jxjMhC7b80Wmf7 '
        "registry.example.org",
        "NVIXuQdGnGRwttUp",
    ),
    ("password = 'Sq1SecretValue9x'' ; your_token_here", "Sq1SecretValue9x"),
    ('"api_token": "Dq1SecretValue9x"" ' + "#" * 200, "Dq1SecretValue9x"),
    ('DB_PASSWORD="Env1SecretValue9x"" see https://example.com/docs', "Env1SecretValue9x"),
]


@pytest.mark.parametrize(("line", "secret"), DOUBLED_QUOTES)
def test_a_stray_doubled_quote_lets_nothing_after_it_vouch_for_the_value(
    line: str, secret: str
) -> None:
    assert secret not in redacted(f"{line}\n")


# An escaped quote inside a template's value keeps it a template.
def test_a_placeholder_with_a_doubled_quote_in_it_is_kept() -> None:
    line = '"password": "your_""token""_here"\n'
    assert redacted(line) == line
