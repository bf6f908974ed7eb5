"""The format table, row by row: generated secrets go, their placeholders stay.

Every row of ``relay.redact.formats.FORMATS`` gets a random token of its shape (from the
row itself, see ``format_samples``) at a random place in a log, in a random syntax that does
not name a secret, fed in random chunks through a stream with small windows; the token must
be gone and named. The same shape filled with documentation filler must come through.
Example counts are small here; the benchmark runs the same generators at full size.
"""

from __future__ import annotations

import itertools
import random

import pytest
from format_samples import SYNTAXES, clean_lines, placeholder, positive
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from relay.redact import Redactor
from relay.redact.formats import (
    B62,
    ESCAPED_FORMATS,
    FORMATS,
    PERCENT_FORMATS,
    SCANNER,
    Format,
    FormatScanner,
    Run,
    _Anchor,
    _one_way_match,
    _RunStep,
    crc32_base62,
)
from relay.redact.stream import OVERLAP as STREAM_OVERLAP

OVERLAP = 8 << 10  # longer than any generated token, so the stream's promise holds
REDACTOR = Redactor(block_size=2 * OVERLAP, max_redacted_share=1.0)
SETTINGS = settings(max_examples=4, deadline=None, suppress_health_check=[HealthCheck.too_slow])
ROWS = {fmt.name: fmt for fmt in FORMATS}


def _stream(text: str, cuts: list[int]) -> tuple[str, dict[str, int]]:
    data = text.encode()
    points = sorted({0, len(data), *(c % (len(data) + 1) for c in cuts)})
    stream = REDACTOR.open(overlap=OVERLAP)
    out = "".join(stream.feed(data[a:b]) for a, b in itertools.pairwise(points))
    out += stream.finish()
    return out, stream.report.counts


def test_row_names_are_unique_and_every_row_is_bounded() -> None:
    assert len(ROWS) == len(FORMATS)
    """The stream promises that no match is longer than its overlap (see ``stream``)."""
    assert all(fmt.max_length < STREAM_OVERLAP for fmt in FORMATS)


@pytest.mark.parametrize("name", sorted(ROWS))
@SETTINGS
@given(
    seed=st.integers(0, 2**32),
    syntax=st.sampled_from(SYNTAXES),
    before=st.integers(0, 3 * OVERLAP),
    cuts=st.lists(st.integers(0, 10**6), max_size=4),
)
def test_a_generated_secret_of_every_format_is_redacted(
    name: str, seed: int, syntax: str, before: int, cuts: list[int]
) -> None:
    fmt = ROWS[name]
    rng = random.Random(seed)
    token = positive(fmt, rng)
    text = clean_lines(rng, before) + syntax.format(t=token) + "\n" + clean_lines(rng, 200)
    out, counts = _stream(text, cuts)
    assert token not in out
    assert counts.get(fmt.label), (fmt.label, counts, syntax.format(t=token))


@pytest.mark.parametrize("name", sorted(ROWS))
def test_the_placeholder_shape_of_every_format_is_kept(name: str) -> None:
    """Docs and templates print ``ghp_xxxx…``: redacting it would hide the clue, save nothing."""
    fmt = ROWS[name]
    for shape in (placeholder(fmt), *fmt.placeholders):
        line = f"example: {shape} (replace with your own)\n"
        assert REDACTOR.redact(line) == line, shape


def test_a_valid_checksum_outweighs_a_placeholder_look() -> None:
    """A body that says "placeholder" reads as a template, unless its CRC32 holds: then it is
    real."""
    rng = random.Random(7)
    random_part = "placeholder" + "".join(rng.choice(B62) for _ in range(19))
    real = "ghp_" + random_part + crc32_base62(random_part)
    fake = "ghp_" + random_part + ("zzzzzz" if not real.endswith("zzzzzz") else "yyyyyy")
    assert real not in REDACTOR.redact(f"token {real} ok")
    assert REDACTOR.redact(f"see {fake} ok") == f"see {fake} ok"


@pytest.mark.parametrize("fmt", [f for f in FORMATS if f.checksum], ids=lambda f: f.name)
def test_the_checksum_is_over_the_random_part(fmt: Format) -> None:
    rng = random.Random(fmt.name)
    token = positive(fmt, rng)
    body = token[4:]
    assert crc32_base62(body[:30]) == body[30:]
    flipped = ("A" if body[0] != "A" else "B") + body[1:30]
    assert crc32_base62(flipped) != body[30:]


def _no_word_to_glue_into(fmt: Format) -> bool:
    """A row that opens with a host's name (``<name>.tines.com/webhook/…``: a letter before
    it is more of that name), or a workflow command (``::add-mask::``, whatever is before)."""
    first = fmt.parts[0]
    if isinstance(first, Run):
        return first.most >= 60 and "-" in first.alphabet
    return first == "::add-mask::"


@pytest.mark.parametrize("name", sorted(n for n, f in ROWS.items() if not _no_word_to_glue_into(f)))
def test_a_format_glued_inside_a_longer_word_is_not_a_token(name: str) -> None:
    """``xoxo`` in a file name, ``TASK`` before hex: a prefix inside a word is not a token.

    The glued token is not taken, from its glued start; a token of another shape that
    stands on its own inside it (``zxoxe.xoxb-…``: a bot token after a dot) may be."""
    fmt = ROWS[name]
    token = positive(fmt, random.Random(name))
    out, counts = _stream(f"name=z{token}9 end\n", [])
    assert out.startswith(f"name=z{token[:1]}"), (token, out)
    if fmt.label in counts:  # then a token inside, past a boundary, as its own row has it
        inner = out[len("name=z") : out.index("[redacted:")]
        assert inner and inner[-1] in ".-/:=@~", (token, out)


# The examples the issue names as missed, each by the prefix or shape it gave, and the row
# that now knows it: none may drop out of the table unnoticed.
ISSUE_EXAMPLES = {
    "glpat-": "gitlab-pat",
    "glptt-": "gitlab-pipeline-trigger-token",
    "glrt-": "gitlab-runner-token",
    "gldt-": "gitlab-deploy-token",
    "GR1348941": "gitlab-runner-registration-token",
    "…8Q~…": "azure-ad-client-secret",
    "shpat_": "shopify-token",
    "shpss_": "shopify-token",
    "sntrys_": "sentry-org-token",
    "sntryu_": "sentry-user-token",
    "dop_v1_": "digitalocean-token",
    "dapi": "databricks-token",
    "glc_": "grafana-cloud-token",
    "glsa_": "grafana-service-account-token",
    "hf_": "huggingface-token",
    "api_org_": "huggingface-org-token",
    "ops_": "onepassword-service-token",
    "ntn_": "notion-token",
    "hvs.": "vault-service-token",
    "hvb.": "vault-batch-token",
    "HRKU-": "heroku-token",
    "NRAK-": "new-relic-user-key",
    "PMAK-": "postman-api-key",
    "dckr_pat_": "docker-hub-pat",
    "SG.": "sendgrid-key",
    "SK": "twilio-api-key",
    "discord bot": "discord-bot-token",
    "telegram bot": "telegram-bot-token",
    "…-usN": "mailchimp-key",
    "rk_live_": "stripe-secret-key",
    "sk_live_": "stripe-secret-key",
    "unsigned JWT": "jwt",
    "base64-wrapped JWT": "jwt-base64",
    "Slack webhook": "slack-webhook",
    "Discord webhook": "discord-webhook",
    "Teams webhook": "teams-webhook",
    "Zapier webhook": "zapier-webhook",
}


@pytest.mark.parametrize("example", sorted(ISSUE_EXAMPLES))
def test_every_example_the_issue_names_is_a_row_that_redacts_it(example: str) -> None:
    fmt = ROWS[ISSUE_EXAMPLES[example]]
    rng = random.Random(example)
    # What a token of the example shows (a row may have several prefixes: make that one).
    needle = {"…8Q~…": "Q~", "…-usN": "-us"}.get(example, example)
    tokens = (positive(fmt, rng) for _ in range(200))
    token = next(t for t in tokens if " " in needle or needle in t)
    if example == "unsigned JWT":
        token = token.rsplit(".", 1)[0] + "."  # no signature at all
    out, counts = _stream(f"| prod | {token} | ok |\n", [])
    assert token not in out and counts.get(fmt.label), (example, token, out)
    shape = placeholder(fmt)
    assert REDACTOR.redact(f"see {shape} here\n") == f"see {shape} here\n"


# Words and names that open like a row whose prefix is short or a common word part: the row's
# check (a random body has both cases and a digit, or letters and digits) or its exact length
# turns them away. Each line must come through unchanged.
LOOK_ALIKES = (
    "ptr_to_next_element_in_the_list_node = NULL;",  # C's pointer prefix, portainer-token
    "see spu-configurationmanagerservicexyzab for the knobs",  # 32 letters, spectralops-token
    "sk_customerbillingaccountmanagerxyz = load()",  # 32 letters, iex-cloud-token
    "ciothebestsubscriptionmanagersetupx done",  # cio and 32 letters, crates-io-token
    "NF-ALLUPPERCASEWORDSWITHOUTDIGITSXY flag",  # NF- and 32, nightfall-key
    # PayPal's A21AA, then 81 capitals without a digit: paypal-access-token
    "A21AAPPLICATIONSETTINGSFORTHEPRODUCTIONENVIRONMENTWITHOUTANYDIGITSINITATALLFORSUREEVER",
)


@pytest.mark.parametrize("line", LOOK_ALIKES)
def test_ordinary_names_that_open_like_a_short_prefix_are_kept(line: str) -> None:
    out, counts = _stream(line + "\n", [])
    assert out == line + "\n" and not counts, (line, counts)


def test_a_twitch_key_is_named_before_the_live_rows_that_share_its_prefix() -> None:
    """``live_<account>_<30>`` is 40 characters after ``live_``, as GoCardless's tokens are:
    the longer shape (with its underscore) goes first, so the find is named for what it is."""
    rng = random.Random(40)
    body = "".join(rng.choice(B62) for _ in range(30))
    token = f"live_126031192_{body}"
    out, counts = _stream(f"| obs | {token} | ok |\n", [])
    assert token not in out and counts == {"twitch-stream-key": 1}, counts


def test_a_row_whose_shape_opens_with_a_run_is_found_by_its_rare_literal() -> None:
    """MaxMind's keys open with six random characters and an underscore: the row makes the
    underscore a run so that its anchor is ``_mmk``, and snake_case names do not stop it."""
    rng = random.Random(6)
    key = (
        "".join(rng.choice(B62) for _ in range(6))
        + "_"
        + "".join(rng.choice(B62) for _ in range(29))
        + "_mmk"
    )
    names = "user_account_settings_manager_x_mmk_file and snake_case_names_everywhere\n"
    out, counts = _stream(f"license {key}\n{names}", [])
    assert key not in out and counts == {"maxmind-license-key": 1}, counts
    assert out.endswith(names)


@pytest.mark.parametrize("prefix", ["sk_", "pk_", "pi_", "1000.", "ghp_"])
def test_a_named_value_that_only_opens_like_a_format_is_still_a_named_secret(prefix: str) -> None:
    """A row's prefix before a body that fits no row's shape: the table does not name the
    value, so the named-value rules must (``<value>`` holds machine-made values)."""
    value = prefix + "Zq8LmN3pR7sT1uV4wY6zAb3Cd5Ef9gHj"
    out, counts = _stream(f"<value>{value}</value>\n", [])
    assert value not in out and counts, (out, counts)


def test_an_anchor_inside_another_rows_refused_hit_is_still_read() -> None:
    """The one-pass scan stops at every row's anchor; where a row refuses the place (here
    Yandex's ``t1.`` inside a Discord bot token), the scan goes on from the next byte, not
    from the refused anchor's end, which would step over the token's own anchor."""
    token = "OCvOmr7DBI3fPHB4XLZ-Iccot1.rHz4Uh.vtK1hBFuU-2AZADxTURT0q_-Ica-0WTB"
    assert Redactor().redact(f"got {token} back") == "got [redacted:discord-bot-token] back"


PLAIN_ROWS = [
    row for row, fmt in enumerate(FORMATS) if len(fmt.parts) == 2 and SCANNER._shaped[row]
]


@settings(max_examples=300, deadline=None)
@given(
    row=st.sampled_from(PLAIN_ROWS),
    lead=st.binary(max_size=3),
    size=st.integers(min_value=0, max_value=1100),
    noise=st.lists(st.tuples(st.integers(min_value=0, max_value=1100), st.binary(max_size=2))),
    tail=st.binary(max_size=4),
    cut=st.integers(min_value=0, max_value=1200),
)
def test_a_literal_and_run_row_matches_without_its_regex_as_its_regex_does(
    row: int, lead: bytes, size: int, noise: list[tuple[int, bytes]], tail: bytes, cut: int
) -> None:
    """Most rows are a literal and one run, matched by hand at their anchor (no regex to
    compile, no call to RE2): every alternative of the literal in order, the run as long as
    it may be, within the row's window or a shorter one — what the row's regex matches."""
    alts, run = SCANNER._shaped[row]
    assert isinstance(run, _RunStep) and not isinstance(alts, _RunStep)
    rng = random.Random(size)
    body = bytearray(rng.choice(run.alphabet) for _ in range(size))
    for at, junk in noise:  # bytes from outside the run's alphabet here and there
        body[at:at] = junk
    for alt in alts:
        block = lead + alt + bytes(body) + tail
        at = len(lead)
        for stop in (min(at + SCANNER._longest[row], len(block)), min(at + cut, len(block))):
            want = SCANNER._compile(row)[1](block, at, stop)
            got = _one_way_match(SCANNER._shaped[row], block, at, stop)
            expected = None if want[0][0] < 0 else [tuple(s) for s in want]
            assert (None if got is None else [tuple(s) for s in got]) == expected


ONE_WAY_ROWS = [row for row, fmt in enumerate(FORMATS) if SCANNER._shaped[row] is not None]


@settings(max_examples=400, deadline=None)
@given(
    row=st.sampled_from(ONE_WAY_ROWS),
    seed=st.integers(min_value=0, max_value=2**32),
    lead=st.binary(max_size=3),
    tail=st.binary(max_size=4),
    cut=st.integers(min_value=0, max_value=400),
)
def test_a_row_whose_runs_end_where_the_next_part_cannot_start_matches_as_its_regex(
    row: int, seed: int, lead: bytes, tail: bytes, cut: int
) -> None:
    """The other rows that open with a literal, where no run's characters can open the part
    after it, are matched by hand too: each run as long as it may be, every literal's
    alternatives in order. Drawn near their edges: runs one short, at their least and
    their most, one long, a stray byte in one, an alternative cut short."""
    rng = random.Random(seed)
    text = bytearray(lead)
    for step in SCANNER._shaped[row]:
        if isinstance(step, _RunStep):
            most = step.most or 300
            size = rng.choice([step.low - 1, step.low, most, most + 1, rng.randint(0, most + 2)])
            stray = b"-_.+/=:~ \n\xc3\xa9Zz09"
            text += bytes(
                rng.choice(step.alphabet if rng.random() < 0.97 else stray)
                for _ in range(max(size, 0))
            )
        else:
            alt = rng.choice(step)
            text += alt[:-1] if rng.random() < 0.05 else alt
    block = bytes(text) + tail
    at = len(lead)
    for stop in (min(at + SCANNER._longest[row], len(block)), min(at + cut, len(block))):
        want = SCANNER._compile(row)[1](block, at, stop)
        got = _one_way_match(SCANNER._shaped[row], block, at, stop)
        expected = None if want[0][0] < 0 else [tuple(s) for s in want]
        assert (None if got is None else [tuple(s) for s in got]) == expected


class _Uncached(FormatScanner):
    """The table's pass with no hit's outcome kept: every hit matched and judged anew."""

    def _outcome_chars(self, candidates: tuple[_Anchor, ...]) -> bytes | None:
        return None


UNCACHED = _Uncached()
ENDS = [b"", b" ", b"\n", b'"', b"#", b"*", b"x", b"X", b"0", b"-", b".", b"_", b"/", b"=", b":"]


@settings(max_examples=300, deadline=None)
@given(
    row=st.sampled_from(range(len(FORMATS))),
    seed=st.integers(min_value=0, max_value=2**32),
    ends=st.lists(st.sampled_from(ENDS), min_size=1, max_size=6),
    cuts=st.lists(st.integers(min_value=0, max_value=80), min_size=1, max_size=3),
    befores=st.lists(st.sampled_from([b" ", b"a", b"_", b"\x1b[0m", b"=", b"\n"]), min_size=1),
)
def test_a_hits_outcome_kept_by_its_bytes_is_the_one_matched_anew(
    row: int, seed: int, ends: list[bytes], cuts: list[int], befores: list[bytes]
) -> None:
    """Where a hit's outcome is kept (``FormatScanner._outcome_chars``), the same bytes
    elsewhere give what matching and judging them anew gives: a row's token, its filler
    and the shape cut short, each after another word or none and before each kind of
    byte, again and again, and last at the block's end."""
    fmt = FORMATS[row]
    rng = random.Random(seed)
    tokens = [positive(fmt, rng).encode(), placeholder(fmt).encode()]
    tokens += [t[: len(t) - cut] for t in tokens for cut in cuts]
    pieces = [
        before + token + end
        for token in tokens
        for before, end in itertools.product(befores[:2], ends)
        if not end[:1].isalnum() or rng.random() < 0.5
    ]
    block = b"log ".join(pieces * 2) + b" " + tokens[0]
    scanner = FormatScanner()
    assert list(scanner.finds(block)) == list(UNCACHED.finds(block))
    assert list(scanner.finds(block, 3)) == list(UNCACHED.finds(block, 3))


ESCAPED_ROWS = {fmt.name: fmt for fmt in (*ESCAPED_FORMATS, *PERCENT_FORMATS)}
# How each twin table's encoder writes a token, and a line that holds it so.
ENCODINGS = {
    "-json-escaped": (lambda t: t.replace("/", "\\/"), '{{"url": "{}"}}'),
    "-url-encoded": (lambda t: t.replace(":", "%3A").replace("/", "%2F"), "next={}&x=1"),
}


def test_every_row_with_a_slash_has_a_twin_with_the_slashes_escaped() -> None:
    def literal(part: object) -> str:
        return part if isinstance(part, str) else "".join(part) if isinstance(part, tuple) else ""

    slashed = {f.name for f in FORMATS if any("/" in literal(p) for p in f.parts)}
    assert len(slashed) > 20  # the webhooks, and tokens such as Google's 1//0…
    assert {f"{name}{suffix}" for name in slashed for suffix in ENCODINGS} == set(ESCAPED_ROWS)
    assert all(fmt.max_length < STREAM_OVERLAP for fmt in ESCAPED_ROWS.values())


@pytest.mark.parametrize("name", sorted(ESCAPED_ROWS))
@SETTINGS
@given(seed=st.integers(0, 2**32), cuts=st.lists(st.integers(0, 10**6), max_size=4))
def test_a_rows_token_in_a_json_string_with_escaped_slashes_goes(
    name: str, seed: int, cuts: list[int]
) -> None:
    """The token as a JSON encoder that escapes every slash writes it, or percent-encoded as
    a URL's query holds it, in a log with others (each twin table runs only on blocks that
    hold its escaped slash), cut into chunks."""
    rng = random.Random(seed)
    twin = ESCAPED_ROWS[name]
    suffix = next(s for s in ENCODINGS if name.endswith(s))
    encode, shape = ENCODINGS[suffix]
    token = positive(ROWS[name.removesuffix(suffix)], rng)
    text = (
        clean_lines(rng, 3000) + "\n" + shape.format(encode(token)) + "\n" + clean_lines(rng, 3000)
    )
    out, counts = _stream(text, cuts)
    assert encode(token) not in out
    assert counts.get(twin.label, 0) >= 1  # found by the twin, under the row's own name
