"""Secrets named in every syntax; entropy only next to a name; what is left alone, and why."""

from __future__ import annotations

import random
import string

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from relay.redact import Redactor
from relay.redact.named import entropy, looks_random, named_identifier

REDACTOR = Redactor()
B62 = string.ascii_letters + string.digits


def machine_made(rng: random.Random, n: int = 32) -> str:
    """A value as a key generator prints it: base62 with both cases and a digit."""
    while True:
        value = "".join(rng.choice(B62) for _ in range(n))
        if looks_random(value.encode()):
            return value


# Each syntax names the secret in a way that the plain ``password=`` rules do not read.
SYNTAXES = [
    "VENDOR_KEY={v}",
    "Using Key={v}",
    'const HEROKU_KEY = "{v}";',
    'var herokuKey string = `unused`; herokuKey := "{v}"',
    "HEROKU_KEY = '{v}'  # python",
    'cloudflare: "{v}"',
    "stripe:\n  live: {v}",  # the value line itself has no name: see the test below
    'api_key = "{v}"',
    'resource "x" "y" {{ secret_key = "{v}" }}',
    "db.signing.key={v}",
    "<password>{v}</password>",
    "<ApiKey>{v}</ApiKey>",
    "<property><name>fs.s3a.secret.key</name>\n  <value>{v}</value></property>",
    '<add key="ClientSecret" value="{v}" />',
    "deploy --token {v} --region eu",
    "deploy --key={v}",
    "curl -H 'X-Api-Key: {v}' https://example.org",
    "the api token is {v}",
    "Authorization => {v}",
]


@pytest.mark.parametrize("syntax", [s for s in SYNTAXES if "stripe:" not in s])
@settings(max_examples=5, deadline=None)
@given(value=st.integers(0, 2**32).map(lambda seed: machine_made(random.Random(seed))))
# a draw whose only digit is its first character: the free-standing value once missed it
@example(value="7UcQHprTHVQxApJbvJySeSvBSXlQEWWp")
def test_a_named_machine_made_value_is_redacted_in_every_syntax(syntax: str, value: str) -> None:
    line = syntax.format(v=value)
    out = REDACTOR.redact(line + "\n")
    # the value goes, and only the value: the name, quotes and the rest of the line stay
    assert out == syntax.format(v="[redacted:secret]") + "\n"


@settings(max_examples=20, deadline=None)
@given(seed=st.integers(0, 2**32), n=st.integers(24, 64))
# draws whose parts read as CamelCase words (``fzv`` ``Cga`` ``Nufaf`` …), until a name's
# words had to be ones a person can say
@example(seed=3703, n=24)
@example(seed=1196, n=24)
@example(seed=2556, n=25)
@example(seed=1209, n=24)
def test_entropy_speaks_only_next_to_a_name(seed: int, n: int) -> None:
    """A hash or an id in a log stays readable; after "token" the same string is a secret."""
    value = machine_made(random.Random(seed), n)
    assert REDACTOR.redact(f"build {value} finished\n") == f"build {value} finished\n"
    assert value not in REDACTOR.redact(f"build token {value} finished\n")


@pytest.mark.parametrize(
    "value",
    ["test_token_stream_12", "/app/src/token_stream/index.js", "processed", "v0.12.3-rc1"],
)
def test_words_paths_and_versions_are_not_random(value: str) -> None:
    assert not looks_random(value.encode())


@pytest.mark.parametrize(
    ("value", "named"),
    [
        ("VP8RecordCoeffTokens", True),
        ("XMLHttpRequest", True),
        ("SecretStr", True),
        ("HTTPSConnectionPool", True),
        ("fzvTCgaNufafEjfBJR28vnuu", False),
        ("kqEMHVwocFRONPwcfItcato0", False),
    ],
)
def test_a_name_from_code_is_made_of_words_one_can_say(value: str, named: bool) -> None:
    assert named_identifier(value.encode()) is named


def test_drawn_characters_rarely_read_as_a_name_from_code() -> None:
    """A token after a secret word is kept when it reads as code's name: that must be rare
    for drawn base62, or a real token goes out now and then."""
    draw = random.Random(7)
    alphabet = (string.ascii_letters + string.digits).encode()
    named = sum(named_identifier(bytes(draw.choices(alphabet, k=24))) for _ in range(20000))
    assert named <= 10  # (about once in four hundred draws of twenty, before)


def test_entropy_is_in_bits_per_character() -> None:
    assert entropy(b"aaaa") == 0
    assert entropy(b"abcd") == 2
    assert entropy(bytes(range(256))) == 8


# What a scanner must not flag, each with the reason it is not a secret.
LEFT_ALONE = [
    # placeholders: the shape of a token, filled in by documentation
    ("placeholder", "export GITHUB_TOKEN=ghp_" + "x" * 36),
    ("placeholder", "aws_access_key_id = AKIAXXXXXXXXXXXXXXXX"),
    ("placeholder", "SLACK_BOT=xoxb-xxxxxxxx"),
    ("placeholder", "api_key: <your-token>"),
    ("placeholder", "password: ####"),
    ("placeholder", "token: 'xxxxxxxxxxxxxxxxxxxx'"),
    # references: the secret is held elsewhere and fetched at run time
    ("reference", "password=${DB_PASSWORD}"),
    ("reference", "token: $(cat /run/secrets/token)"),
    ("reference", "password = var.db_password"),
    ("reference", "secret=`pass show ci/deploy`"),
    ("reference", "api_key: ${{ secrets.API_KEY }}"),
    ("reference", "Authorization: Bearer $TOKEN"),
    ("reference", "git clone https://ci:${CI_TOKEN}@git.example.org/r.git"),
    # masked: an earlier tool already hid it
    ("masked", "password: ***"),
    ("masked", "token=[REDACTED]"),
    ("masked", "secret: '********'"),
    ("masked", "https://x-access-token:***@github.com/org/repo"),
    # public: published by design
    ("public", "Stripe.setPublishableKey('pk_live_" + "4eC39HqLyjWDarjtT1zdp7dc" + "')"),
    # ordinary words that contain a prefix
    ("word", "copy xoxo-party-photos-2019.jpg to /srv/media"),
    ("word", "TASK0123456789abcdef0123456789abcdef finished"),
    # names with a plain value: a counter, a file, a type
    ("not-a-secret", "max_tokens=512 token_file=/etc/t api_key_name=deploy key=abc123"),
    ("not-a-secret", "cache key: linux-pip-3f9a"),
    # relay's own approval line names a person or a placeholder for one, not a secret
    ("relay-hint", "authorized-by-human: @alice"),
    ("relay-hint", "hint: add authorized-by-human: YOUR-NAME to the issue"),
    ("relay-hint", "**authorized-by-human:** yes · author: Alice9 · authority=ca-2"),
]


@pytest.mark.parametrize(("why", "line"), LEFT_ALONE, ids=[f"{w}-{i}" for i, (w, _) in
                                                           enumerate(LEFT_ALONE)])  # fmt: skip
def test_what_is_not_a_secret_is_left_alone(why: str, line: str) -> None:
    assert REDACTOR.redact(line + "\n") == line + "\n", why
