"""Secrets named in HCL, Go, Python, markdown tables, sshpass and YAML block scalars: the
value goes, in any quoting, and the rest of the line stays; a look-alike stays whole."""

from __future__ import annotations

import pytest

from relay.redact import Redactor

REDACTOR = Redactor(max_redacted_share=1.0)
V = "Xk3jd8sKq9Lm2Pz7Qw4v"  # machine-made: every syntax below takes it
R = "[redacted:secret]"

# (line with {v}, the same line redacted). Each value in each quoting the syntax allows.
NAMED = [
    # HCL: a variable whose name names a secret, on one line and over the block's lines
    (
        'variable "db_password" {{ default = "{v}" }}',
        f'variable "db_password" {{ default = "{R}" }}',
    ),
    (
        'variable "db_password" {{\n  default = "{v}"\n}}',
        f'variable "db_password" {{\n  default = "{R}"\n}}',
    ),
    (
        'variable "api_token" {{\n  type = string\n  sensitive = true\n  default = "{v}"\n}}',
        f'variable "api_token" {{\n  type = string\n  sensitive = true\n  default = "{R}"\n}}',
    ),
    # Go: typed constants and variables, short declarations
    ('const apiKey string = "{v}"', f'const apiKey string = "{R}"'),
    ('var dbPassword string = "{v}"', f'var dbPassword string = "{R}"'),
    ("var dbPassword string = `{v}`", f"var dbPassword string = `{R}`"),
    ('apiToken := "{v}"', f'apiToken := "{R}"'),
    # Python (and TypeScript) annotations, subscript assignments
    ('API_KEY: Final = "{v}"', f'API_KEY: Final = "{R}"'),
    ('API_KEY: Final[str] = "{v}"', f'API_KEY: Final[str] = "{R}"'),
    ("API_TOKEN: typing.Final[str] = '{v}'", f"API_TOKEN: typing.Final[str] = '{R}'"),
    ('const apiKey: string = "{v}";', f'const apiKey: string = "{R}";'),
    ('os.environ["API_TOKEN"] = "{v}"', f'os.environ["API_TOKEN"] = "{R}"'),
    ("settings['db_password'] = '{v}'", f"settings['db_password'] = '{R}'"),
    ('config["secret"]["key"] = "{v}"', f'config["secret"]["key"] = "{R}"'),
    # markdown tables: the first cell names it, a later cell holds it
    ("| DB_PASSWORD | {v} |", f"| DB_PASSWORD | {R} |"),
    ("| DB_PASSWORD | hunter2-xyz-long |", f"| DB_PASSWORD | {R} |"),
    ("| api_token | prod | {v} |", f"| api_token | prod | {R} |"),
    ("  | `API_KEY` | `{v}` | 2026-01-01 |", f"  | `API_KEY` | `{R}` | 2026-01-01 |"),
    # sshpass, the password apart and glued
    ("sshpass -p {v} ssh deploy@host", f"sshpass -p {R} ssh deploy@host"),
    ("sshpass -p{v} ssh deploy@host", f"sshpass -p{R} ssh deploy@host"),
    ("sshpass -v -p '{v}' scp a host:b", f"sshpass -v -p '{R}' scp a host:b"),
    # YAML block scalars: every value line goes, the line count stays
    ("password: >-\n  {v}\n  {v}\nnext: 1", f"password: >-\n  {R}\n\nnext: 1"),
    (
        "db:\n  token: |\n    {v}\n\n    more\n  user: app",
        f"db:\n  token: |\n    {R}\n\n\n  user: app",
    ),
    ("- private_key: |+ # pem\n    {v}\n", f"- private_key: |+ # pem\n    {R}\n"),
]


@pytest.mark.parametrize(("line", "expected"), NAMED)
def test_a_named_value_goes_and_the_rest_of_the_line_stays(line: str, expected: str) -> None:
    text = f"before\n{line.format(v=V)}\nafter\n"
    out = REDACTOR.redact(text)
    assert out == f"before\n{expected}\nafter\n"
    assert out.count("\n") == text.count("\n")


# Look-alikes: a reference, a placeholder, a mask, a name about a secret, a header row.
KEPT = [
    "password = var.db_password",
    'variable "db_password" { default = var.fallback }',
    'variable "db_password" {\n  description = "the default password"\n}',
    'variable "db_password_file" { default = "/run/secrets/db-1234" }',
    'variable "region" { default = "eu-west-1abc9" }',
    'const apiKey string = "<your-api-key>"',
    'var dbPassword string = ""',
    "API_KEY: Final = os.environ['API_KEY']",
    "api_key: str",
    "token: Optional[str] = None",
    'os.environ["API_TOKEN"] = "${API_TOKEN}"',
    'settings["token"]["url"] = "https://example.org/t1234567"',
    "| password | *** |",
    "| api_token | <your-token> |",
    "| DB_PASSWORD | ${DB_PASSWORD} |",
    "| Token | Scope | Expires |\n|-------|-------|---------|",
    "| api_token | prod | ci |",
    "| Password | yes |",
    "| Password | \u2713 |",
    "| token | n/a |",
    "| token_url | https://example.org/x1234567 |",
    "| auth | The database password is set in the vault |",
    "sshpass -f /run/pw ssh -p 2222 host",
    "sshpass -p $SSHPASS ssh host",
    "password: |\nnext: 1",
    "password: >-\n  ${DB_PASSWORD}\n",
    "description: |\n  Xk3jd8sKq9Lm2Pz7Qw4v is not named\n",
    "token: |",
]


@pytest.mark.parametrize("line", KEPT)
def test_a_look_alike_is_kept_whole(line: str) -> None:
    text = f"{line}\n"
    assert REDACTOR.redact(text) == text


def _streamed(data: bytes, *, block_size: int, overlap: int, step: int) -> str:
    stream = Redactor(block_size=block_size, max_redacted_share=1.0).open(overlap=overlap)
    out = [stream.feed(data[at : at + step]) for at in range(0, len(data), step)]
    out.append(stream.finish())
    return "".join(out)


PHRASE = "correct horse battery staple " * 40 + "TAILWORD"
# Values longer than the stream's overlap, on lines longer than its window: the window ends
# inside them, and the rest is dropped as far as the quote (or the block) that holds it.
PAD = "x " * 300
ESCAPED = PHRASE.replace(" ", ' \\" ')
DOUBLED = PHRASE.replace(" ", " '' ")
LONG_VALUES = [
    f'{PAD}password = "{PHRASE}" after',
    f"{PAD}password = '{PHRASE}' after",
    PAD + '{"msg": "{\\"password\\": \\"' + PHRASE + '\\", \\"n\\": 1}"} after',
    f'{PAD}password = "{ESCAPED}" after',  # escaped quotes inside
    f"{PAD}password = '{DOUBLED}' after",  # doubled quotes inside
    "a: 1\npassword: |\n" + "".join(f"  {i} {PHRASE[:40]} TAILWORD\n" for i in range(60)) + "b: 2",
]


@pytest.mark.parametrize("text", LONG_VALUES)
@pytest.mark.parametrize("step", [1, 13, 200, 4096])
def test_a_quoted_value_across_windows_is_dropped_to_its_closing_quote(
    text: str, step: int
) -> None:
    data = (text + "\n").encode()
    whole = REDACTOR.redact(data)
    assert "TAILWORD" not in whole and "horse" not in whole
    assert whole.endswith(("after\n", "b: 2\n"))
    streamed = _streamed(data, block_size=512, overlap=256, step=step)
    assert streamed == whole
    assert streamed.count("\n") == text.count("\n") + 1


def test_a_value_of_escaped_json_longer_than_4_kb_is_read_to_its_end() -> None:
    """JSON inside a JSON string: the value ends at the ``\\"`` that closes it, however far
    (``\\\\\\"`` inside it is a quote of the inner string)."""
    inner = "word " * 2000 + 'a \\\\\\" quote ' + "SECRETTAIL"
    line = '{"body": "{\\"password\\": \\"' + inner + '\\", \\"n\\": 1}"}'
    out = REDACTOR.redact(line + "\n")
    assert out == '{"body": "{\\"password\\": \\"' + R + '\\", \\"n\\": 1}"}\n'
    assert _streamed((line + "\n").encode(), block_size=1024, overlap=512, step=100) == out


def test_a_key_block_under_a_block_scalar_is_a_private_key() -> None:
    """``private_key: |`` over a PEM block: the key rule reads it to its END line (in a
    stream, across windows), and the report names it as a key."""
    body = "\n".join("    " + "MIIEow" + "Ab3d" * 15 for _ in range(5))
    text = f"tls:\n  private_key: |\n    -----BEGIN RSA PRIVATE KEY-----\n{body}\n"
    text += "    -----END RSA PRIVATE KEY-----\n  port: 443\n"
    out, report = REDACTOR.redact_with_report(text)
    assert "MIIEow" not in out and out.endswith("  port: 443\n")
    assert out.count("\n") == text.count("\n")
    assert report.counts == {"private-key": 1}


@pytest.mark.parametrize("stand_in", ["[REDACTED]", "xxxxxxxxxxxx", "${DB_PASSWORD}"])
def test_a_block_of_stand_ins_is_kept_wherever_a_window_ends(stand_in: str) -> None:
    """The window may end inside the block: the stream then leaves the block, from its
    header, to the next window, and keeps it as a whole log would."""
    block = f"password: >-\n  {stand_in}\n  {stand_in}\nnext: 1\n"
    for pad in range(0, 700, 9):
        text = "x" * pad + "\n" + block + "tail line\n" * 60
        assert _streamed(text.encode(), block_size=512, overlap=256, step=4096) == text, pad
