"""The prefilter changes nothing but the speed: every rule finds the same spans whether it
reads the whole block or only the lines the prefilter kept (see ``relay.redact.prefilter``).

Blocks are mixed from ordinary build lines and every kind of find: a token of every row of
the format table, the named syntaxes, the hand-written rules' samples, key blocks with and
without their BEGIN line, name/value pairs across blank lines, addresses, this node's own
secret split by colour codes — at random, with few enough hits that the prefilter is used.
"""

from __future__ import annotations

import random

import pytest
from format_samples import SYNTAXES, clean_lines, placeholder, positive
from hypothesis import given, settings
from hypothesis import strategies as st
from redact_samples import FACTS, MAKERS, OWN_SECRET, key_block

from relay.redact.engine import Engine
from relay.redact.formats import FORMATS, SCANNER, FormatScanner
from relay.redact.prefilter import (
    IPV4_SUPERSET,
    PAIR_RIDER,
    PAIR_SUPERSET,
    PAIR_WORD,
    RULE_SUPERSETS,
    Prefilter,
    _ranges,
    _union,
    compile_latin1,
)

HOSTS = ("mac-studio", "win-desktop")
WITH = Engine(FACTS, node_hosts=HOSTS)
WITHOUT = Engine(FACTS, node_hosts=HOSTS, prefilter=False)
NAMED = (
    "VENDOR_KEY={v}",
    'const HEROKU_KEY = "{v}";',
    "<property><name>fs.s3a.secret.key</name>\n\n   \n  <value>{v}</value></property>",
    "<name>fs.s3a.secret.key</name>\nbuild line\n<value>{v}</value>",
    '<add key="ClientSecret" value="{v}" />',
    "deploy --token {v} --region eu",
    "the api token is {v}",
    "max_tokens=512 tests/test_token.py::test_token_12 PASSED version 10.2.0.1",
    "api\nkey={v}",
    "version\n10.0.0.{n}",
    "ssh Mac-Studio.corp.example{n}.net; ping win-desktop.local; node mac-studio",
    'variable "db_password" {{\n  type = string\n  default = "{v}"\n}}',
    'const apiKey string = "{v}"',
    'os.environ["API_TOKEN"] = "{v}"',
    'API_KEY: Final[str] = "{v}"',
    "| DB_PASSWORD | {v} |",
    "| Token | Scope |\n|---|---|",
    "sshpass -p{v} ssh host",
    "password: >-\n  {v}\n\n  {v}\nnext: 1",
    "10.0.0.{n} mail a@b.example.org token: |\n  {v}\n",
    "2026-01-02T10:00:00Z a@b.example.org password: |\r\n  {v}\r\n\r\n  {v}\r\nnext: 1",
    "a@b.example.org db_secret = '''\n  {v}\n  more\n''' # end",
    'mail a@b.example.org api_token="""{v}\n"""',
    "a@b.example.org AKIAQWERTYUIOPASDF{n}\n  Kq8vZ2mW7x/{v}",
    "+ a@b.example.org cat <<EOF | docker login -u ci --password-stdin\n{v}\nEOF",
    'a@b.example.org variable "db_password" {{\n  type = string\n  default = "{v}"\n}}',
    "| step | /home/bob token: |\n  {v}\n\t{v}\n",
    "| API_TOKEN | {v} |\n---",
    "| Token | Scope |\n--- | ---",
    "token: !!binary &t |\n  {v}\nkey: |2\n    {v}\n  {v}\nnext: 1",
    "password: {v} plain with spaces # note",
    "curl -s -u admin:{v} https://x{n}.example.org | redis-cli -a {v} ping",
    "htpasswd -bB /etc/htpasswd user{n} {v}",
    "{v}\n=Ab3d\n-----END PGP PRIVATE KEY BLOCK-----",
    "define('AUTH_KEY', '{v}');",
    "kind: Secret\ndata:\n  tls.key: QUFBQUFBQUFBQUFB{v}\n\n  app.conf: {v}",
    'password = """\n{v}\nbuild line\n"""',
    "api_token = '''{v}''' # and more",
    "spring.datasource.password {v}",
    '$c = ConvertTo-SecureString "{v}" -AsPlainText -Force',
    "echo {v} | docker login --password-stdin -u ci ghcr.io",
    "gh secret set API_TOKEN --body {v}",
    "aws ssm put-parameter --name /a{n} --type SecureString --value {v}",
    "az keyvault secret set --vault-name kv --name db{n} --value '{v}'",
    "printf '{v}' | docker secret create db{n} - && echo -n {v} | gcloud secrets versions add a",
    "docker run --rm -e 'DB_PASSWORD={v}&{n}' -e \"API_TOKEN={v}&x\" --env KEY={v}&{n} a",
    "SET PASSWORD FOR 'u{n}'@'%' = '{v}'; ALTER USER u IDENTIFIED BY 'x' REPLACE '{v}';",
    "EXEC sp_addlogin N'u{n}', N'{v}'; db.changeUserPassword(\"u\", \"{v}\")",
    "GET /sso?next=%2F&password%3D{v} 302",
    "PW={v} DB_PW={v} passcode={v} master_key={v}",
    "ldappasswd -x -w {v} -s {v} uid=u{n} | openssl enc -k {v} | unzip -P{v} a.zip",
    "<ns:password value='{v}'/> ::set-output name=api_token::{v}",
    "gh auth login --with-token <<< {v}\necho {v} | gh auth login --with-token",
    'static API_KEY: &\'static str = "{v}"; let token: &[u8] = b"{v}";',
    "Authorization: Splunk {v}\ncurl -H 'Authorization: GenieKey {v}' https://x{n}.example.org",
    "login failed for user{n} with password {v} (password {v}) using password {v}",
    "requests.get(u, auth=('a{n}', '{v}')); HTTPBasicAuth(u, '{v}')",
    'smtp.login("a@b.example.org", "{v}"); ftp.login(user{n}, "{v}")',
    'new NetworkCredential("ci", "{v}"); DriverManager.getConnection(url, "app{n}", "{v}")',
    "echo {v} | sudo -S apt-get update; sudo -u ci -S true <<< {v}",
)


def _hit(rng: random.Random) -> str:
    kind = rng.randrange(6)
    value = "".join(rng.choice("abcdefXYZ0123456789") for _ in range(32))
    if kind == 0:
        fmt = rng.choice(FORMATS)
        token = positive(fmt, rng) if rng.random() < 0.8 else placeholder(fmt)
        return rng.choice(SYNTAXES).format(t=token)
    if kind == 1:
        return rng.choice(NAMED).format(v=value, n=rng.randrange(1, 255))
    if kind == 2:
        name = rng.choice(sorted(MAKERS))
        return MAKERS[name](rng.randbytes(8))[0]
    if kind == 3:
        block = key_block(rng.randbytes(8), "RSA PRIVATE KEY")
        return block if rng.random() < 0.5 else block.split("\n", 3)[-1]  # BEGIN cut off
    if kind == 4:
        cut = rng.randrange(1, len(OWN_SECRET))
        return f"ok \x1b[31m{OWN_SECRET[:cut]}\x1b[0m{OWN_SECRET[cut:]} done"
    return rng.choice(SINGLE).format(n=rng.randrange(1, 255))


# Lines that one part of the prefilter alone keeps, so that each part is needed.
SINGLE = (
    "connect to 10.{n}.0.{n}:5432",
    "mail bob{n}.dev@example.org ok",
    "listening on [2001:db8::{n}]:8080",
    "ether 00-1a-2b-3c-4d-5e up {n}",
    r"in C:\Users\Bob\src {n}",
    "cd /home/bob/src {n}",
    "GET /x?next=https%3A%2F%2Fci%3Apa55w0rd{n}%40git.example.org",
    "+ aws configure set x_key V{n}",
    "+ mysql -h db -uroot -pS3cr3t{n} app",
    "clone https://ci:pa55{n}@git.example.org/r",
    "-H 'bearer qwkrtzmh{n}'",
    "<name>db.secret</name>\n\n  <value>x{n}</value>",
    "cloudflare => 'Xk3jd8sKq9Lm2Pz7{n}'",
    'heroku := "Xk3jd8sKq9 Lm2Pz7{n}"',
    'variable "db_password" {{\n  type = string\n  default = "x{n}"\n}}',
    "| api_token | prod | Xk3jd8sKq9Lm2Pz7{n} |",
    "password: |\n  hunter{n}\n\n  more",
    'os.environ["API_TOKEN"] = "v{n}"',
    'apiKey string = "v{n}"',
    "sshpass -pS3cr3t{n} ssh host",
    'if ("Kq8vZ2mW{n}x" === api_key) {{',
    'std::string secret("Kq8vZ2mW{n}x");',
    'char secret[25] = "Kq8vZ2mW{n}x";',
    'config.put("password", "Kq8vZ2mW{n}x");',
    "ENV DB_PASSWORD Kq8vZ2mW{n}x",
    'password "Kq8vZ2mW{n}x";',
    "define('NONCE_SALT', 'Kq8vZ2mW{n}x');",
    "cat <<EOF | docker login -u ci --password-stdin\nKq8vZ2mW{n}x\nEOF",
    "machine h{n}.example.org login ci password Kq8{n}",
    "data:\n  ca.crt: TUlJQ2pDQ0FYUUNDUUQ4{n}QUFBQUFB==",
    '<setting name="ApiToken" as="S">Kq8vZ2mW{n}x</setting>',
    "APP_CREDENTIALS=Hxkqmzpab",
)


@pytest.mark.parametrize("line", SINGLE)
def test_each_part_of_the_prefilter_keeps_its_rules_lines(line: str) -> None:
    rng = random.Random(line)
    text = clean_lines(rng, 3000) + line.format(n=42) + "\n" + clean_lines(rng, 3000)
    block = text.encode()
    expected = WITHOUT.scan(block)
    assert expected.spans, line  # the line holds a find
    assert WITH.scan(block) == expected


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32), hits=st.integers(0, 12))
def test_the_prefilter_finds_what_every_rule_over_every_line_finds(seed: int, hits: int) -> None:
    rng = random.Random(seed)
    parts = [clean_lines(rng, rng.randrange(200, 3000)) for _ in range(hits + 1)]
    text = "".join(p + _hit(rng) + "\n" for p in parts[:-1]) + parts[-1]
    block = text.encode()
    assert WITH._prefilter is not None and WITH._prefilter.lines(block) is not None
    assert WITH.scan(block) == WITHOUT.scan(block)


def test_ordinary_lines_are_not_kept_and_a_dense_block_is_scanned_whole() -> None:
    rng = random.Random(5)
    clean = clean_lines(rng, 20_000).encode()
    assert WITH._prefilter is not None
    lines = WITH._prefilter.lines(clean)
    assert lines is not None and lines.text == b""
    dense = ("token=" + "Zq7" * 8 + "\n").encode() * 100
    assert WITH._prefilter.lines(dense) is None
    assert WITH.scan(dense) == WITHOUT.scan(dense)


def test_extra_patterns_read_the_whole_block_and_leave_the_prefilter_on() -> None:
    """An extra pattern may be any regex, across lines too: it reads the whole block in a
    pass of its own, so it finds what it would alone, and the built-in rules keep the
    prefilter (a master section's patterns must not cost every rule its speed)."""
    extra = {"ticket": r"TCK-\d+\nmore", "scope-1": r"(?i)acme-[0-9]+"}
    engine = Engine(FACTS, extra_patterns=extra, node_hosts=HOSTS)
    whole = Engine(FACTS, extra_patterns=extra, node_hosts=HOSTS, prefilter=False)
    assert engine._prefilter is not None
    rng = random.Random(7)
    text = clean_lines(rng, 3000) + "TCK-12\nmore ACME-7 win-desktop.lan\n" + clean_lines(rng, 900)
    block = text.encode()
    assert engine._prefilter.lines(block) is not None  # the prefilter is used on it
    scan = engine.scan(block)
    assert scan == whole.scan(block)
    kinds = {kind for _, _, kind in scan.spans}
    assert {"ticket", "scope-1", "host"} <= kinds, kinds


# The IPv4 part leaves out the quads the version rule keeps whatever they are (after a
# tool's name, a version word, an operator, a name joined by "-" or "/"): each context,
# with public and private quads, with and without a port, must read the same either way.
_QUAD_LEADS = ("gnu ", "GNU ", "cmake ", "g++ ", "g++  ", "(gcc ", '"gcc ', "@gcc ", "gnux ",
               "gn ", "admin ", "version ", "build\t", "myversion ", "libfoo ", "dotnetsdk ",
               "x>=", "a=", "host=", "q-", " -", "Firefox/", "/", "", "v", "ip ", "SDK ",
               "runtime ", "runtimes ", "mylib ", "lib ", "li ", "lib" + "a" * 37 + " ",
               "lib" + "a" * 38 + " ", "x LIB" + "b" * 38 + " ")  # fmt: skip
_QUADS = ("203.0.113.9", "10.1.2.3", "100.64.1.2", "172.16.0.4", "192.168.1.9", "13.2.0.8")
_QUAD_TAILS = ("", ":5432", "/24", " ok", "-rc1", ".5")


@settings(max_examples=120, deadline=None)
@given(
    lead=st.sampled_from(_QUAD_LEADS),
    quad=st.sampled_from(_QUADS),
    tail=st.sampled_from(_QUAD_TAILS),
    seed=st.integers(0, 2**16),
)
def test_the_ipv4_part_keeps_every_quad_the_version_rule_does_not(
    lead: str, quad: str, tail: str, seed: int
) -> None:
    rng = random.Random(seed)
    line = f"{lead}{quad}{tail}"
    block = (clean_lines(rng, 2000) + line + "\n" + clean_lines(rng, 2000)).encode()
    assert WITH.scan(block) == WITHOUT.scan(block), line


def test_a_build_logs_versions_are_not_kept() -> None:
    assert WITH._prefilter is not None
    for line in (
        "-- The CXX compiler identification is GNU 13.2.0.8; cmake 3.28.1.4",
        "Collecting setuptools>=68.0.2.1 (from index-2.3.4.2)",
        "driver version 10.2.0.67 (build 67)",
        "Mozilla/5.0 Firefox/115.0.2.1 .NET SDK 8.0.100.1 libfoo 1.2.3.1",
    ):
        lines = WITH._prefilter.lines((line + "\n").encode() * 3)
        assert lines is not None and lines.text == b"", line


# ``key: value more`` in its shapes: a setting, or a sentence that the rules refuse.
_COLON_KEYS = ("token_stream", "password", "db.secret", "API_TOKEN", "cookie", "apikey", "auth")
_COLON_VALUES = (
    "processed", "Processed", "p9ocessed", "proc+essed", "abc/def", "x=y", "!!str", "!!binary",
    "str", "'quoted", '"q', "hunter2", "a'b", "f", "sk-live",
)  # fmt: skip
_COLON_TAILS = ("", " 5 items", " more words", " # note", ",", " ,x", "; next", " \x0bx", " &a")


@settings(max_examples=150, deadline=None)
@given(
    key=st.sampled_from(_COLON_KEYS),
    blanks=st.sampled_from((" ", "  ", "\t", " \t ")),
    value=st.sampled_from(_COLON_VALUES),
    second=st.sampled_from(("", "Kq8vZ2mW7x3", "words", "x9z8IXeA7e@QU")),
    tail=st.sampled_from(_COLON_TAILS),
    seed=st.integers(0, 2**16),
)
def test_every_setting_after_a_name_and_a_colon_is_kept(
    key: str, blanks: str, value: str, second: str, tail: str, seed: int
) -> None:
    rng = random.Random(seed)
    line = f"{key}:{blanks}{value}{' ' + second if second else ''}{tail}"
    block = (clean_lines(rng, 2000) + line + "\n" + clean_lines(rng, 2000)).encode()
    assert WITH.scan(block) == WITHOUT.scan(block), line


def test_a_test_summary_line_is_not_kept() -> None:
    """``PASS: test_x_12`` and ``PASS=12`` name no password, a named value shorter than the
    named rules' least is no secret, and ``-pthread`` after ``include/mysql`` is no -p."""
    assert WITH._prefilter is not None
    for line in (
        "PASS: test_reader_840 PASS=840 FAIL=0; -I/usr/include/mysql -pthread",
        "PASS: test_lexer_12 PASS=12 FAIL=0",
        "session: processed_123 in 0.5s; mysql client built with -pthread",
        "2026-11-01T00:12:10.130Z INFO  token_stream: processed 130 items (max_tokens=130)",
    ):
        lines = WITH._prefilter.lines((line + "\n").encode() * 3)
        assert lines is not None and lines.text == b"", line
        assert WITH.scan((line + "\n").encode()) == WITHOUT.scan((line + "\n").encode())


# ``pass`` alone, in the shapes the assignment rules take or refuse, and named values about
# as long as the named rules' least (16 characters, 20 for a value further on the line).
_PASS_KEYS = ("PASS", "pass", "Pass", "DB_PASS", "db.pass", "x-PASS", "PASS_1", "bypass", "_PASS")
_PASS_SEPARATORS = (":", ": ", "=", " = ", ":=", "=>", '": ', "': ", ": str = ", ":\t", " : ")
_PASS_VALUES = (
    "840", "test_reader_840", '"840"', "840x", "840'x", "840'", "Kq8vZ2mW7x3", "$(pass db)",
    "", "'hunter2'", "840;", "\\\"840\\\"", "|", "840 more",
)  # fmt: skip


@settings(max_examples=200, deadline=None)
@given(
    key=st.sampled_from(_PASS_KEYS),
    sep=st.sampled_from(_PASS_SEPARATORS),
    value=st.sampled_from(_PASS_VALUES),
    head=st.sampled_from(("", "  ", "- ", "export ", '"', "x ")),
    seed=st.integers(0, 2**16),
)
def test_every_password_set_by_pass_alone_is_kept(
    key: str, sep: str, value: str, head: str, seed: int
) -> None:
    rng = random.Random(seed)
    line = f"{head}{key}{sep}{value}"
    block = (clean_lines(rng, 1000) + line + "\n" + clean_lines(rng, 1000)).encode()
    assert WITH.scan(block) == WITHOUT.scan(block), line


_NAMED_SYNTAXES = (
    "{w}: {v}", '{w}="{v}"', "{w}='{v}'", "{w}=`{v}`", "{w} is {v}", "the {w} now {v} ok",
    "{w}: {v}==", "{w}_id: {v}",
)  # fmt: skip


@settings(max_examples=150, deadline=None)
@given(
    word=st.sampled_from(("pass", "session", "key", "api", "github", "token", "password")),
    syntax=st.sampled_from(_NAMED_SYNTAXES),
    size=st.integers(12, 26),
    case=st.sampled_from(("lower", "mixed", "upper", "hex")),
    seed=st.integers(0, 2**16),
)
def test_named_values_about_as_long_as_the_least_are_kept(
    word: str, syntax: str, size: int, case: str, seed: int
) -> None:
    rng = random.Random(seed)
    alphabet = {
        "lower": "abcdefghijklmnopqrstuvwxyz0123456789_",
        "mixed": "abcdefXYZKLMqrstuv0123456789",
        "upper": "ABCDEFGHJKLMNPQRSTUVWXYZ0123456789",
        "hex": "0123456789abcdef",
    }[case]
    value = "".join(rng.choice(alphabet) for _ in range(size - 1)) + rng.choice("0123456789")
    line = syntax.format(w=word, v=value)
    block = (clean_lines(rng, 1000) + line + "\n" + clean_lines(rng, 1000)).encode()
    assert WITH.scan(block) == WITHOUT.scan(block), line


@pytest.mark.parametrize(
    "line",
    [
        "mysql -uroot -pthreadS3cret app",
        "mysql -uroot -pthread app",
        "mysql -uroot -pthre",
        "mysql -uroot -pt",
        "mysql -uroot '-pS3cr3t'",
        "mysql -uroot\x0b-pS3cr3t",
        "sshpass -pthread9 ssh host",
        "docker login -p thread https://r.example.org",
        "/usr/include/mysql -pthread -pS3cr3t",
    ],
)
def test_a_p_flag_after_mysql_is_kept_unless_it_is_pthread(line: str) -> None:
    rng = random.Random(line)
    block = (clean_lines(rng, 1000) + line + "\n" + clean_lines(rng, 1000)).encode()
    assert WITH.scan(block) == WITHOUT.scan(block), line


# The name/value pair's search reads only the lines by each place of its word ("value"):
# the lines kept must be those it kept reading the whole block, wherever the word is
# (alone, in a kept line, in a pair, across a line break, twice on a line).
_PAIR_LINES = (
    "- name: DB_PASSWORD",
    "  value: Kq8vZ2mW{n}x",
    "  value: connect 10.{n}.0.9",  # a line the main pass keeps
    "  value: password=Kq8vZ2mW{n}x",
    '{{"name": "api_token", "value": "Kq8vZ2mW{n}x"}}',
    "key = secret_key{n}, Value = x",
    "name: app_secret\n\n  VALUE: y{n}",
    "ValueError: bad value {n}",
    "the value is {n}; vAlUe; values",
    "password: value{n}",
    "token={n}value=Kq8vZ2mW",
    "<name>db.password</name>",
    "<value>Kq8vZ2mW{n}x</value>",
    "name: DB_PASSWORD value: Kq8vZ2mW{n}",
    "name: password value",
)


def _reference_ranges(block: bytes, most: int | None) -> list[tuple[int, int]] | None:
    """What the prefilter kept when the pair's search read the whole block."""
    main = compile_latin1(f"(?i:{'|'.join(RULE_SUPERSETS)})".encode())
    found = _ranges(main, block, most)
    if found is None:
        return None
    for search in (PAIR_SUPERSET, IPV4_SUPERSET):
        some = _ranges(compile_latin1(search.encode()), block, most)
        if some is None:
            return None
        found = _union(found, some, block) if found else some
    return None if most is not None and sum(e - s for s, e in found) > most else found


@settings(max_examples=150, deadline=None)
@given(seed=st.integers(0, 2**32), hits=st.integers(0, 40), share=st.booleans())
def test_the_pair_search_by_its_word_keeps_what_a_whole_block_search_keeps(
    seed: int, hits: int, share: bool
) -> None:
    rng = random.Random(seed)
    lines = clean_lines(rng, rng.randrange(500, 4000)).splitlines()
    for _ in range(hits):
        at = rng.randrange(len(lines) + 1)
        lines.insert(at, rng.choice(_PAIR_LINES).format(n=rng.randrange(100)))
    block = ("\n".join(lines) + "\n").encode()
    most = int(0.5 * len(block)) if share else None
    assert Prefilter((), ansi=False).ranges(block, most) == _reference_ranges(block, most)


# The word where the format table's pass must find it too: in a token the table finds or
# refuses, right after an anchor, at an anchor's own start, after a flooded line's anchors.
_WORD_LINES = (
    *_PAIR_LINES,
    "ghp_VALUEa1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P {n}",
    "ghp_a1B2AKIAVALUEc3D4e5F6g7H8i9J0k1L2m3N {n}",
    "xoxb-value-{n} AKIAVALUEVALUEVALUEVA sk_live_ValueValue{n}",
    "ghp_valu" + "e{n}",
    "glpat-" + "VaLuE" * 4 + " value",
    "ghp_xxxx " * 70 + "value {n}",
    "eyJvalue{n}.eyJvalue.x value",
)


_ANCHORS_ALONE = FormatScanner()  # the table's pass with no rider


@settings(max_examples=150, deadline=None)
@given(seed=st.integers(0, 2**32), hits=st.integers(0, 40), share=st.booleans())
def test_the_tables_pass_finds_every_line_of_the_pairs_word(
    seed: int, hits: int, share: bool
) -> None:
    rng = random.Random(seed)
    lines = clean_lines(rng, rng.randrange(500, 4000)).splitlines()
    for _ in range(hits):
        at = rng.randrange(len(lines) + 1)
        lines.insert(at, rng.choice(_WORD_LINES).format(n=rng.randrange(100)))
    block = ("\n".join(lines) + "\n").encode()
    words: list[int] = []
    assert list(SCANNER.finds(block, 0, [(PAIR_RIDER, words)])) == list(
        _ANCHORS_ALONE.finds(block, 0)
    )
    lowered = block.lower()
    every = [i for i in range(len(block)) if lowered.startswith(PAIR_WORD, i)]
    line_of = [lowered.count(b"\n", 0, at) for at in every]
    assert sorted({lowered.count(b"\n", 0, at) for at in words}) == sorted(set(line_of))
    assert words == sorted(words)
    most = int(0.5 * len(block)) if share else None
    prefilter = Prefilter((), ansi=False)
    assert prefilter.ranges(block, most, words) == prefilter.ranges(block, most)
