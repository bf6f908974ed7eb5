"""Values under a name are redacted whole: however long, and past escaped quotes."""

from __future__ import annotations

import base64
import random

import pytest

from relay.redact import Redactor

REDACTOR = Redactor()


def survivors(secret: str, out: str) -> list[str]:
    """Every 8-character run of ``secret`` still in ``out``: none may survive."""
    return [secret[i : i + 8] for i in range(len(secret) - 7) if secret[i : i + 8] in out]


def b64(n: int, seed: int) -> str:
    return base64.b64encode(random.Random(seed).randbytes(n)).decode()[:n]


@pytest.mark.parametrize("n", [5_000, 20_000])
@pytest.mark.parametrize(
    "syntax",
    ["api_key={v}", 'password="{v}"', "token: {v}", '{{"api_key": "{v}"}}', "secret='{v}'"],
)
def test_a_long_named_value_is_redacted_whole(syntax: str, n: int) -> None:
    value = b64(n, n)
    out = REDACTOR.redact(syntax.format(v=value) + "\n")
    assert survivors(value, out) == [], out[:200]
    assert "[redacted:" in out


@pytest.mark.parametrize(
    ("line", "secret"),
    [
        ('{"password":"q8Wv2Lp\\"Z7tRk4Nf1"}', 'q8Wv2Lp\\"Z7tRk4Nf1'),
        ("password='q8Wv2Lp''Z7tRk4Nf1'", "q8Wv2Lp''Z7tRk4Nf1"),
        ('password="q8Wv2Lp""Z7tRk4Nf1"', 'q8Wv2Lp""Z7tRk4Nf1'),
        ("token='q8Wv2Lp\\'Z7tRk4Nf1' next=1", "q8Wv2Lp\\'Z7tRk4Nf1"),
    ],
)
def test_an_escaped_or_doubled_quote_is_inside_the_value(line: str, secret: str) -> None:
    out = REDACTOR.redact(line + "\n")
    assert survivors(secret, out) == [], out
    assert "Z7tRk4Nf1" not in out, out


def test_the_value_ends_at_its_real_closing_quote() -> None:
    out = REDACTOR.redact('{"password":"q8Wv2Lp\\"Z7tRk4Nf1", "user": "alice"}\n')
    assert out == '{"password":"[redacted:secret]", "user": "alice"}\n'


@pytest.mark.parametrize(
    "line",
    [
        'export GITHUB_TOKEN="${{ secrets.GITHUB_TOKEN }}"',
        "NPM_TOKEN: ${{ secrets.NPM_TOKEN }}",
        "password='${{ secrets.DB_PASSWORD }}'",
    ],
)
def test_an_actions_expression_is_a_reference_and_left_alone(line: str) -> None:
    """``${{ … }}`` names where the secret is kept; it holds none."""
    assert REDACTOR.redact(line + "\n") == line + "\n"


@pytest.mark.parametrize(
    "line",
    [
        "DOCKER_TOKEN=dckr_pat_" + "X" * 27,
        "api_key: sk_test_" + "x" * 24,
        "token: ghp_your_token_here",
        "password: changeme",
        'password: "password"',
        "AKIAIOSFODNN7EXAMPLE",
        "aws_access_key_id=AKIAIOSFODNN7EXAMPLE",
    ],
)
def test_a_placeholder_under_a_name_is_left_alone(line: str) -> None:
    """A template's filler, word or documented example protects nothing: the reader keeps it."""
    assert REDACTOR.redact(line + "\n") == line + "\n"


@pytest.mark.parametrize(
    "line",
    [
        "DOCKER_TOKEN=dckr_pat_{v}",
        "api_key: sk_test_{v}",
        "token: ghp_{v}",
        "password: {v}",
        "aws_access_key_id=AKIA{v}",
    ],
)
def test_a_real_value_in_the_same_place_is_still_redacted(line: str) -> None:
    value = "Q3EGRT7PLW2KZ5NBX8VD4MHC"
    secret = line.format(v=value).split("=")[-1].split(": ")[-1]
    out = REDACTOR.redact(line.format(v=value) + "\n")
    assert survivors(secret, out) == [], out


@pytest.mark.parametrize(
    "syntax",
    [
        "<value>{v}</value>",
        '<entry key="password">{v}</entry>',
        '<setting name="ApiToken" serializeAs="String">{v}</setting>',
        "var authToken = `{v}`",
        "const apiKey = `{v}`;",
    ],
)
def test_xml_values_and_backtick_strings_are_redacted(syntax: str) -> None:
    value = "q8Wv2LpZ7tRk4Nf1Xy9Tb3"
    text = "build started\n" * 50 + syntax.format(v=value) + "\nbuild done\n"
    out = REDACTOR.redact(text)
    assert survivors(value, out) == [], out[-200:]
    assert "[redacted:secret]" in out


@pytest.mark.parametrize(
    "line",
    [
        "<value>true</value>",
        "<value>/usr/local/lib</value>",
        '<entry key="timeout">30000</entry>',
        "var greeting = `hello world 2`",
    ],
)
def test_plain_xml_values_and_backtick_strings_are_kept(line: str) -> None:
    assert REDACTOR.redact(line + "\n") == line + "\n"


@pytest.mark.parametrize("chunk", [997, 65_536])
def test_a_value_longer_than_the_stream_window_is_redacted_whole(chunk: int) -> None:
    """A window holds 64 KB here; the value is 200 KB, so it goes on across three windows."""
    redactor = Redactor(block_size=64 << 10, max_redacted_share=1.0)
    value = b64(200_000, 7)
    text = "step 1\n" + "api_key=" + value + " next=1\nstep 2\n"
    stream = redactor.open(overlap=8 << 10)
    parts = [stream.feed(text[i : i + chunk]) for i in range(0, len(text), chunk)]
    out = "".join(parts) + stream.finish()
    assert survivors(value, out) == []
    assert out == "step 1\napi_key=[redacted:secret] next=1\nstep 2\n"
