"""Properties of the named syntaxes: a generated secret, at a random place in a log, in a
random syntax and split across streaming chunks at random, is replaced — and nothing else
is: the text before and after it, on its line and around it, comes out unchanged. The same
syntaxes holding a placeholder, a reference or a masked value come out whole."""

from __future__ import annotations

import itertools
import random
import re
import string

from format_samples import clean_lines
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from relay.redact import Redactor

OVERLAP = 256  # small windows, so that cuts fall everywhere
REDACTOR = Redactor(block_size=2 * OVERLAP, max_redacted_share=1.0)
S = "[redacted:secret]"
A = "[redacted:authorization]"
B62 = string.ascii_letters + string.digits
SETTINGS = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])

# (template, what its value becomes, whether the line may open with other text). ``{v}`` is
# the value; a block scalar's second value line is ``{w}``, and its line break stays.
SYNTAXES: list[tuple[str, str, bool]] = [
    # assignments
    ("password={v}", S, True),
    ('DB_PASSWORD="{v}" next', S, True),
    ("token: '{v}'", S, True),
    ('{{"api_key": "{v}", "n": 1}}', S, True),
    ('body="{{\\"client_secret\\":\\"{v}\\"}}"', S, True),
    ("deploy --token {v} --region eu", S, True),
    ("curl -H 'Authorization: Bearer {v}' https://example.org", A, True),
    # named
    ("VENDOR_KEY={v}", S, True),
    ('const HEROKU_KEY = "{v}";', S, True),
    ('cloudflare: "{v}"', S, True),
    ("<password>{v}</password>", S, True),
    ('<add key="ClientSecret" value="{v}" />', S, True),
    # HCL
    ('variable "db_password" {{ default = "{v}" }}', S, False),
    ('variable "db_password" {{\n  type = string\n  default = "{v}"\n}}', S, False),
    # Go
    ('const apiKey string = "{v}"', S, True),
    ('var dbPassword string = "{v}"', S, True),
    ('apiToken := "{v}"', S, True),
    # Python
    ('API_KEY: Final = "{v}"', S, False),
    ('API_KEY: Final[str] = "{v}"', S, False),
    ('os.environ["API_TOKEN"] = "{v}"', S, True),
    ("settings['db_password'] = '{v}'", S, True),
    ('config["secret"]["key"] = "{v}"', S, True),
    # markdown tables
    ("| DB_PASSWORD | {v} |", S, False),
    ("| api_token | prod | {v} |", S, False),
    # sshpass
    ("sshpass -p {v} ssh deploy@host", S, True),
    ("sshpass -p{v} ssh deploy@host", S, True),
    # YAML block scalars
    ("password: >-\n  {v}\n  {w}\nnext: 1", S, False),
    ("db:\n  token: |\n    {v}\n\n    {w}\n  user: app", S, False),
]
# Quoted syntaxes, whose value may hold blanks ("correct horse battery staple").
QUOTED = [s for s in SYNTAXES if '"{v}"' in s[0] or "'{v}'" in s[0]]
LEFT = ["", "+ ", "  ", "[step 3] ", "2026-12-02T14:00:00Z "]

# What stands for a secret in the same places: references, placeholders, masks.
STAND_INS = ["${DB_PASSWORD}", "<your-token>", "********", "[REDACTED]", "xxxxxxxxxxxx", "$TOKEN"]
NOT_IN = {
    # an element's or a tag's own brackets cannot hold a bracketed stand-in
    "<password>{v}</password>": ("<your-token>",),
    '<add key="ClientSecret" value="{v}" />': ("<your-token>",),
    "curl -H 'Authorization: Bearer {v}' https://example.org": ("<your-token>", "[REDACTED]"),
}


def machine_made(rng: random.Random) -> str:
    """A secret as a generator prints it: base62, both cases and a digit, 16 to 40 long."""
    n = rng.randint(16, 40)
    while True:
        value = "".join(rng.choice(B62) for _ in range(n))
        if any(c.isdigit() for c in value) and value.lower() != value != value.upper():
            return value


def _expected(template: str, replacement: str) -> str:
    """The template with each value replaced; of a block's second value line, only its line
    break is left (the one placeholder stands for the lines, and the line count stays)."""
    return _fill(re.sub(r" *\{w\}", "", template), replacement, "")


def _fill(template: str, v: str, w: str) -> str:
    return template.replace("{v}", v).replace("{w}", w).replace("{{", "{").replace("}}", "}")


def chunked(data: bytes, cuts: list[int]) -> list[bytes]:
    points = sorted({c % (len(data) + 1) for c in cuts} | {0, len(data)})
    return [data[a:b] for a, b in itertools.pairwise(points)]


def streamed(data: bytes, cuts: list[int]) -> str:
    stream = REDACTOR.open(overlap=OVERLAP)
    out = [stream.feed(chunk) for chunk in chunked(data, cuts)]
    out.append(stream.finish())
    return "".join(out)


@st.composite
def planted(draw: st.DrawFn) -> tuple[str, str]:
    """A log with secrets in random syntaxes at random places; and the same log as it must
    come out, each value replaced and every other byte as it was."""
    rng = random.Random(draw(st.integers(0, 2**32)))
    text = [clean_lines(rng, draw(st.integers(0, 1500)))]
    expected = list(text)
    for _ in range(draw(st.integers(1, 5))):
        quoted = draw(st.booleans())
        template, replacement, inline = draw(st.sampled_from(QUOTED if quoted else SYNTAXES))
        v = machine_made(rng)
        if quoted:
            v = " ".join(machine_made(rng) for _ in range(rng.randint(1, 4)))
        left = draw(st.sampled_from(LEFT)) if inline else ""
        line = left + _fill(template, v, machine_made(rng))
        text.append(line + "\n")
        expected.append(left + _expected(template, replacement) + "\n")
        gap = clean_lines(rng, draw(st.integers(0, 1500)))
        text.append(gap)
        expected.append(gap)
    return "".join(text), "".join(expected)


@SETTINGS
@given(planted(), st.lists(st.integers(min_value=0), max_size=20))
def test_a_named_secret_goes_and_every_other_byte_stays(
    case: tuple[str, str], cuts: list[int]
) -> None:
    text, expected = case
    assert REDACTOR.redact(text) == expected
    assert streamed(text.encode(), cuts) == expected


@SETTINGS
@given(
    st.sampled_from(SYNTAXES),
    st.sampled_from(STAND_INS),
    st.sampled_from(LEFT),
    st.integers(0, 2**32),
    st.lists(st.integers(min_value=0), max_size=10),
)
def test_a_stand_in_in_a_named_syntax_is_left_alone(
    syntax: tuple[str, str, bool], stand_in: str, left: str, seed: int, cuts: list[int]
) -> None:
    """``password=${DB_PASSWORD}``, ``| api_token | <your-token> |``, ``token: |`` over
    ``********``: it protects nothing to redact them, and the reader loses the clue."""
    template, _, inline = syntax
    if stand_in in NOT_IN.get(template, ()):
        return
    rng = random.Random(seed)
    line = (left if inline else "") + _fill(template, stand_in, stand_in)
    text = clean_lines(rng, rng.randrange(0, 1200)) + line + "\n" + clean_lines(rng, 600)
    assert REDACTOR.redact(text) == text
    assert streamed(text.encode(), cuts) == text


# The named rules (one RE2 pass) read a value of at most 4 KB, well inside the stream's real
# overlap (32 KB) but not this test's: their syntaxes are left to the test above.
READ_TO_ANY_LENGTH = [
    s
    for s in QUOTED
    if s[2] and not s[0].startswith(("const HEROKU_KEY", "cloudflare", "<add key"))
]


@SETTINGS
@given(
    st.sampled_from(READ_TO_ANY_LENGTH),
    st.integers(2 * OVERLAP, 6 * OVERLAP),
    st.integers(1, 30),
    st.integers(0, 2**32),
    st.lists(st.integers(min_value=0), max_size=20),
)
def test_a_long_quoted_secret_on_a_line_longer_than_the_window_goes_whole(
    syntax: tuple[str, str, bool], pad: int, words: int, seed: int, cuts: list[int]
) -> None:
    """The window ends inside the value (words of it may be longer than the overlap): what
    follows in the next window is dropped up to the quote that closes it, and no further."""
    template, replacement, _ = syntax
    rng = random.Random(seed)
    value = " ".join(machine_made(rng) for _ in range(words))
    left = "x " * (pad // 2)
    text = f"{left}{_fill(template, value, '')} done\nnext line\n"
    expected = f"{left}{_expected(template, replacement)} done\nnext line\n"
    assert REDACTOR.redact(text) == expected
    assert streamed(text.encode(), cuts) == expected
