"""A value under a secret's name is judged by its shape: a reference, a host, a version, a
call or a template's phrase is kept only when its parts look named, not drawn. A password
with a dot, a double colon, a bracket or a template's word inside is still a password."""

from __future__ import annotations

import pytest

from relay.redact import Redactor
from relay.redact.expressions import made_part
from relay.redact.placeholders import is_placeholder_phrase

REDACTOR = Redactor()
MARK = "[redacted:secret]"

# Values that passed for a reference, a host, a version, a scope or a placeholder.
PASSWORDS = (
    "Tr0ub4dor.Xk92mLq",  # dotted like attribute access, its parts drawn
    "k9x2m.q7z3p",  # a host's shape, but no top-level domain ends it
    "Kx9q::2mVb",  # a scope's shape
    "Zq8vLp(3Wn5r",  # a bracket, and no call
    "MyCompanyExample2024",  # a template's word inside a real one
    "dummyPass-Kx9q2",  # and beside drawn characters
    "Rk7.1.2.3Xk9qLm",  # a version's digits inside
)
SYNTAXES = (
    "DB_PASSWORD={v}",
    "password: {v}",
    'password = "{v}"',
    '  "secret": "{v}",',
)


@pytest.mark.parametrize("syntax", SYNTAXES)
@pytest.mark.parametrize("value", PASSWORDS)
def test_a_password_shaped_like_code_is_redacted_whole(syntax: str, value: str) -> None:
    out = REDACTOR.redact(syntax.format(v=value) + "\n")
    assert out == syntax.format(v=MARK) + "\n"


KEPT = (
    "key_length = X25519.key_length",
    "password = self.token",
    "password = config.password",
    "token: settings.API_TOKEN",
    "password = getpass.getpass()",
    'secret = get_secret("db")',
    "password: db.example.com",
    "password: ip-10-0-1-23.ec2.internal:5432",
    "password: 1.2.3",
    "token: v0.12.3-rc1",
    "password: example",
    "password: changeme123",
    "password: your_password_here",
    'api_key = "YOUR_API_KEY"',
    "SECRET=insert-your-secret",
    "password = std::string",
)


@pytest.mark.parametrize("line", KEPT)
def test_a_value_whose_parts_look_named_is_kept(line: str) -> None:
    assert REDACTOR.redact(line + "\n") == line + "\n"


def test_a_call_keeps_its_closing_bracket_and_a_password_its_own() -> None:
    assert REDACTOR.redact("f(token=get_token())\n") == "f(token=get_token())\n"
    out = REDACTOR.redact("PASSWORD=Zq8v(3W)x9 next\n")
    assert out == f"PASSWORD={MARK} next\n"


@pytest.mark.parametrize(
    ("part", "made"),
    [
        (b"X25519", False),
        (b"sha256", False),
        (b"getX509Cert", False),
        (b"Base64Encoder", False),
        (b"key_length", False),
        (b"Tr0ub4dor", True),
        (b"Xk92mLq", True),
        (b"k9x2m", True),
    ],
)
def test_a_part_is_made_when_its_digits_fall_apart(part: bytes, made: bool) -> None:
    assert made_part(part) is made


@pytest.mark.parametrize(
    ("value", "phrase"),
    [
        (b"your_api_key_here", True),
        (b"yourpasswordhere", True),
        (b"Dummy-Secret", True),
        (b"changeme123", True),
        (b"MyCompanyExample2024", False),
        (b"dummyPass-Kx9q2", False),
        (b"password", True),  # a secret's own name, as a template's default
        (b"user:passwd", True),
        (b"a%20secret", True),
        (b"admin", False),  # a plain word that names no secret: a weak password
        (b"MySecretPassword", False),
        (b"example73914862", False),  # a long number that is no filler
    ],
)
def test_a_placeholder_phrase_is_only_template_words_and_filler(value: bytes, phrase: bool) -> None:
    assert is_placeholder_phrase(value) is phrase
