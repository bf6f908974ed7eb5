"""Findings of a fresh attack on the redaction of issue 28, after the review-18 changes.

Regressions against the trees of a day before are fixed and tested first: a generic type's
shape (``Hello<World>``) was read as a field's type wherever it stood, so that
``PASSWORD=Hello<World>``, ``--password Spring<Boot>`` and ``The password is Foo<Bar>`` were
kept (it is a type only after a ``:`` now, and under a password's name only where a field's
end follows it or it is a container's); a path under a password's name was kept in XML and
after a flag. The other leaks the attack found are masked now, each with look-alikes that
stay; what is left is below them, each a strict xfail (it fails today, and turns into an
ordinary test when fixed): a value on the line after its name, and false alarms in real
code (the interpreter's library, the installed packages, C headers, Perl modules, GCC's
ChangeLog)."""

from __future__ import annotations

import pytest
from redact_samples import redacted

from relay.redact import Redactor
from relay.redact.stream import BLOCK_SIZE

PW = "Xk9mP2vL8qR5wT7zAbQ3"


@pytest.mark.parametrize(
    ("line", "secret"),
    [
        ("password=Spring<Boot>", "Spring<Boot>"),
        ("export DB_PASSWORD=Hello<World>", "Hello<World>"),
        ("--password Spring<Boot>", "Spring<Boot>"),
        ("mysql --password=Foo<Bar> app", "Foo<Bar>"),
        ("docker run -e DB_PASSWORD=Hello<World> app", "Hello<World>"),
        ("helm install a ./chart --set password=Hello<World>", "Hello<World>"),
        ("2024-05-01T10:20:30.1234567Z PASSWORD=Spring<Boot>", "Spring<Boot>"),
        ("[pod/api/app] password=Hello<World>", "Hello<World>"),
        ("cfg.password = Spring<Boot>", "Spring<Boot>"),
        ("The password is Hello<World>", "Hello<World>"),
        ("DB_PASSWORD=Foo<Bar> npm run deploy", "Foo<Bar>"),
    ],
)
def test_a_generic_types_shape_where_no_type_goes_is_masked(line: str, secret: str) -> None:
    assert secret not in redacted(line + "\n")


@pytest.mark.parametrize(
    "line",
    [
        "token: Option<String>,",
        "    pub password: Vec<u8>,",
        "    private readonly apiKey: Promise<string>;",
        "credentials: HashMap<String, Credential>,",
        "  credentials: HashMap<&'a str, Credential>,",
        "    pub token: std::sync::Arc<Token>,",
    ],
)
def test_a_fields_generic_type_after_a_colon_stays_unchanged(line: str) -> None:
    assert redacted(line + "\n") == line + "\n"


@pytest.mark.parametrize(
    ("line", "secret"),
    [
        # a path under a password's name is masked after = and :, and in XML and after a
        # flag (the review-18 changes had let the latter through)
        (
            "<password>/correct/horse/battery/staple</password>",
            "/correct/horse/battery/staple",
        ),
        (
            '<add key="password" value="/correct/horse/battery/staple" />',
            "/correct/horse/battery/staple",
        ),
        ("--password /correct/horse/battery/staple", "/correct/horse/battery/staple"),
        # YAML's key: value has a field type's shape (token: Option<String>), but no field's
        # end follows it, and the name is a password's
        ("password: Hello<World>", "Hello<World>"),
        ("web_1  | db_password: Spring<Boot>", "Spring<Boot>"),
    ],
)
def test_a_password_a_review_18_relaxation_still_lets_through_is_masked(
    line: str, secret: str
) -> None:
    assert secret not in redacted(line + "\n")


@pytest.mark.parametrize(
    ("line", "secret"),
    [
        # a pflag's short flag with = (docker's -p), gh's -b glued to its value
        (f"docker login -u ci -p={PW} registry.example.com", PW),
        (f"gh secret set DB_PASS -b{PW}", PW),
        # positional credentials: MinIO's client, an LDAP bind
        (f"mc alias set myminio https://minio.example.com minioadmin {PW}", PW),
        (f"ldap.simple_bind_s('cn=admin,dc=example,dc=org', '{PW}')", PW),
        # a chart's value under a secrets. path
        (f"helm upgrade app ./chart --set-string secrets.db={PW}", PW),
        # a flag's name in snake case, a short password after a blank
        ("python deploy.py --client_secret Summer2024!", "Summer2024!"),
        ("python sync.py --api_key Tr0ub4dor&3", "Tr0ub4dor&3"),
        # a default in a shell expansion, as docker compose config prints it
        ("POSTGRES_PASSWORD=${POSTGRES_PASSWORD:-Tr0ub4dor&3}", "Tr0ub4dor&3"),
        # .NET's appSettings under a key named in camel case
        ('<add key="encryptionKey" value="qwerty!wBSi5b" />', "qwerty!wBSi5b"),
        # a value opening with a bracket is masked on a bare line, not under a log's prefix
        ("web_1  | DB_PASSWORD=(Tr0ub4dor&3", "Tr0ub4dor&3"),
        (f"2024-05-01T10:20:30.1234567Z password=[{PW}", PW),
        # R's assignment arrow
        ('db_password <- "Tr0ub4dor&3"', "Tr0ub4dor&3"),
    ],
)
def test_a_secret_the_attack_found_is_masked(line: str, secret: str) -> None:
    assert secret not in redacted(line + "\n")
    # and amid a log's other lines, where the prefilter keeps only the lines it hits
    filler = "".join(f"step {i} compiled ok\n" for i in range(200))
    assert secret not in redacted(filler + line + "\n" + filler)


@pytest.mark.parametrize(
    "line",
    [
        # no password after the flag, an alias with no credentials, a variable's reference
        "docker login -u ci -p=$REGISTRY_PASSWORD registry.example.com",
        "gh secret set DB_PASS -b$DB_PASS",
        "mc alias set local http://localhost:9000",
        "mc alias set s3 https://s3.amazonaws.com $ACCESS_KEY $SECRET_KEY --api S3v4",
        "conn.simple_bind_s(dn, password)",
        # a chart's path that names no secret, a file set from a path
        "helm upgrade app ./chart --set-string image.tag=v1.2.3",
        "helm upgrade app ./chart --set secrets.enabled=true",
        "helm upgrade app ./chart --set-file secrets.db=./db.txt",
        # snake-case flags given a variable or naming a file or a kind
        "python sync.py --api_key $API_KEY",
        "python deploy.py --client_secret_file secrets.json",
        "python x.py --token_type bearer",
        # a default under a name that is no secret's, an expansion's default, none at all
        "HOME=${HOME:-/root}",
        "PGPASSWORD=${DB_PASSWORD:-$FALLBACK_PASSWORD}",
        "x=${API_TOKEN:?API_TOKEN must be set}",
        'x="${TOKEN_URL:-https://example.com/token}"',
        # .NET's settings whose key says what the value is about
        '<add key="encryptionKeySize" value="256" />',
        '<add key="encryptionKeyName" value="Primary" />',
        '<add key="apiKeyHeader" value="X-Api-Key" />',
        # code's brackets under a log's prefix, R's arrow before a call
        "web_1  | token=(a, b)",
        "2024-05-01T10:20:30.1234567Z key=[1, 2]",
        'x <- read.csv("data.csv")',
        "token <- Sys.getenv('GITHUB_TOKEN')",
        'password <- readline("Password: ")',
    ],
)
def test_a_look_alike_of_what_the_attack_found_is_unchanged(line: str) -> None:
    assert redacted(line + "\n") == line + "\n"


@pytest.mark.xfail(
    strict=True,
    reason="left by the attack on issue 28's nineteenth stop: a find across two lines needs "
    "a rule that reads the next line, the prefilter keeping that line (prefilter."
    "_lines_opened) and a stream window not cut between them; no rule reads either yet",
)
@pytest.mark.parametrize(
    "text",
    [
        # a JSON member's value on the line after its name
        f'{{\n"password":\n"{PW}"\n}}\n',
        # a flag's value after a line continuation
        f"mysql -h db -u app --password \\\n{PW} app\n",
    ],
)
def test_a_value_on_the_line_after_its_name_is_masked(text: str) -> None:
    assert PW not in redacted(text)


@pytest.mark.parametrize("into", [17, 18, 30, 38, 39, 40, 41, 42])
def test_a_triple_quoted_password_cut_by_a_window_in_its_closing_quotes_is_masked(
    into: int,
) -> None:
    # Masked whole and at every cut: a window that ended inside the string (its closing
    # """ unread) let the password through; it is cut before the string's line now.
    text = f'DB_PASSWORD = """\n{PW}\n"""\n'
    assert PW not in redacted(text)
    line = "step: compiling module ok\n"
    n = BLOCK_SIZE - into
    head = line * (n // len(line) - 1)
    head += "y" * (n - len(head) - 1) + "\n"
    stream = Redactor(max_redacted_share=1.0).open()
    out = stream.feed(head + text + line * 100) + stream.finish()
    assert PW not in out


@pytest.mark.xfail(strict=True, reason="left by the attack on issue 28's nineteenth stop")
@pytest.mark.parametrize(
    "line",
    [
        # a list's string after a string that names a secret is no pair's value
        '__all__ = ["APIKey", "Principal", "Scope"]',
        '    __slots__ = ("_filter_key", "inclusive", "version")',
        '    privacy: NotRequired[Literal["secret", "closed"]]',
        # a comparison, not an assignment
        '    if token == "max-age":',
        # a dotted name whose head is a token type (Pygments' styles, GraphQL's kinds)
        '        Token.Comment: "italic #888",',
        '        TokenKind.FLOAT: "float",',
        "                    token = Keyword",
        # a package's name mapped to its stubs', an emoji's name to the emoji
        '    "oauthlib": "types-oauthlib",',
        '    "cookie": "\U0001f36a",',
        # a capitalised type after a field's name, a class's constructor, a call
        "    personal_access_token_request: PersonalAccessTokenRequestType",
        "        private_key = MLDSA44Ed25519PrivateKey(",
        '        cookie = interact_2965(c, "http://www.acme.com",',
        # Perl: a module's path as a key, references, a glob
        "    'CPAN::HTTP::Credentials'=> 'cpan',",
        "our $exists_token = \\undef;",
        "    *all_children_pass = *all_children_are;",
        "\t[ clientAuth       => { clientAuth   => \\%ext_key_usage } ],",
        "  $this->_get_titled_section('AUTHOR' , max_token => 10_000, @_) ||",
        # C and C++: an enum's base, number literals
        "    enum _TokenT : unsigned",
        "      _S_token_unknown = -1u",
        "  AEK_PAUTH =       1ULL << 35,",
        # kernel-doc's @CONSTANT: description
        " * @NL80211_ATTR_SUPPORT_MESH_AUTH: Currently, this means the underlying driver",
        # prose naming a header
        "The extract_cookies() method will look for Set-Cookie: and",
        # a feature flag's header
        '        extra_headers = {"anthropic-beta": "telemetry-destinations-2026-08-11"}',
    ],
)
def test_an_ordinary_line_the_attack_found_is_unchanged(line: str) -> None:
    assert redacted(line + "\n") == line + "\n"
