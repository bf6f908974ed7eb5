"""Leaks and false alarms of the kinds issue 28 names, found by a second fresh check that fed
``relay redact`` lines written for the purpose (the first check's are in
``test_redact_check28.py``). Each test is the exact line and what must come out of it; those
marked xfail (strict) fail today and record a finding not fixed yet."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from redact_samples import redacted
from test_redact_check28 import relay_redact

# Synthetic values, written for these tests: no issuer made them.
PASSWORD = "Hq4vN8zR2kW7mX3pT9bL"
HEX_KEY = "4dc5995273c39cf4c56c7e5e88d1867b"
OWN = "Zq8Lm3Xv7Tn2Wp5Rk9Bd4Hs6"  # this node's secret in the tests below


# --- leaks: values a name calls secret -----------------------------------------------------


@pytest.mark.parametrize(
    "line",
    [
        f'let token: &str = "{PASSWORD}";',
        f'const API_TOKEN: &str = "{PASSWORD}";',
        f'pub const API_SECRET: &str = "{PASSWORD}";',
        f'static API_KEY: &\'static str = "{PASSWORD}";',
        f'let api_key: &str = "{HEX_KEY}";',
    ],
)
def test_a_rust_constant_under_a_secret_name_is_masked(line: str) -> None:
    """Every other typed syntax is read (``const apiKey: string = "V"``, ``val password:
    String = "V"``, ``API_KEY: Final = "V"``); Rust's ``&str`` and ``&'static str`` are not."""
    out = redacted(line + "\n")
    assert PASSWORD not in out and HEX_KEY not in out


@pytest.mark.parametrize(
    "line",
    [
        f'const apiKey: string = "{PASSWORD}";',
        f'val password: String = "{PASSWORD}"',
        f'var token string = "{PASSWORD}"',
        f'API_KEY: Final = "{PASSWORD}"',
    ],
)
def test_a_typed_constant_of_other_languages_is_masked(line: str) -> None:
    """The neighbours of the Rust case above, which pass: the finding is Rust's alone."""
    assert PASSWORD not in redacted(line + "\n")


# --- leaks: this node's own secrets --------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        ",".join(OWN),  # echo "$T" | sed 's/./&,/g'
        ", ".join(OWN),
        "|".join(OWN),
        "_".join(OWN),
        str(list(OWN)),  # print(list(os.environ["MY_API_TOKEN"]))
        json.dumps(list(OWN)),
    ],
)
def test_an_own_secret_split_by_any_separator_is_masked(text: str, tmp_path: Path) -> None:
    """Spaced (``Z q 8``), dotted and dashed are masked; any other one-character separator,
    or Python's list of the characters (the usual way past a CI masker), is not."""
    out = relay_redact(text + "\n", tmp_path, MY_API_TOKEN=OWN)
    assert OWN[:12] not in out.translate({ord(c): None for c in ",| _'\"[]"})


@pytest.mark.parametrize("text", [" ".join(OWN), ".".join(OWN), "-".join(OWN)])
def test_an_own_secret_spaced_dotted_or_dashed_is_masked(text: str, tmp_path: Path) -> None:
    out = relay_redact(text + "\n", tmp_path, MY_API_TOKEN=OWN)
    assert OWN[:12] not in out.translate({ord(c): None for c in " .-"})


@pytest.mark.parametrize(
    "name",
    ["CI_JOB_JWT", "JWT", "STRIPE_SK", "SONAR_LOGIN", "TOTP_SEED", "MNEMONIC", "HTPASSWD"],
)
def test_an_own_secret_under_a_common_secret_name_is_learned(name: str, tmp_path: Path) -> None:
    """A drawn value printed alone in prose is masked only as the node's own secret; these
    names (GitLab's own CI_JOB_JWT, SonarQube's documented SONAR_LOGIN) do not make it one."""
    out = relay_redact(f"step printed {OWN} here\n", tmp_path, **{name: OWN})
    assert OWN not in out


# --- false alarms --------------------------------------------------------------------------


@pytest.mark.parametrize("line", ["SLACK_TOKEN=xoxb-12345-abcd234", "token: xoxb-12345-abcd234"])
def test_the_issues_own_placeholder_under_a_name_is_kept(line: str) -> None:
    """The issue names ``xoxb-12345-abcd234`` as a placeholder; bare it is kept (the field
    corpus has it bare only), under a name it is redacted."""
    assert redacted("xoxb-12345-abcd234\n") == "xoxb-12345-abcd234\n"
    assert redacted(line + "\n") == line + "\n"


@pytest.mark.parametrize(
    "line",
    [
        "password: op://Private/db/password",  # 1Password
        'token: "vault:secret/data/ci#token"',
        "password: ref+vault://secret/db#/password",  # vals
        "password: sm://projects/acme/secrets/db",
        "password: projects/acme/secrets/db/versions/latest",  # GCP Secret Manager
        '"password": "[parameters(\'adminPassword\')]"',  # an ARM template's expression
        'password: "#{DB_PASSWORD}"',  # Octopus / Azure DevOps token replacement
        "password: '@@DB_PASSWORD@@'",
        "password: $__env{DB_PASSWORD}",  # Grafana's provisioning
    ],
)
def test_a_reference_to_a_secret_is_not_a_secret(line: str) -> None:
    """The issue: a value that is a reference or an expression is not a secret. These are the
    common secret stores' and deploy tools' own reference syntaxes."""
    assert redacted(line + "\n") == line + "\n"


@pytest.mark.parametrize(
    "line",
    [
        "password: ${DB_PASSWORD}",
        "password: !Ref DbPassword",
        "password = var.db_password",
        "password=@Microsoft.KeyVault(SecretUri=https://kv.vault.azure.net/secrets/db/)",
        "password: arn:aws:secretsmanager:us-east-1:123456789012:secret:prod/db-AbCdEf",
    ],
)
def test_the_references_already_kept_stay_kept(line: str) -> None:
    assert redacted(line + "\n") == line + "\n"


@pytest.mark.xfail(strict=True, reason="a session id in prose")
@pytest.mark.parametrize("line", ["session 7f3c2b1a9e8d4c7ba6f5e4d3c2b1a0f9 closed"])
def test_an_identifier_in_a_log_is_not_a_secret(line: str) -> None:
    assert redacted(line + "\n") == line + "\n"


@pytest.mark.parametrize("line", ["auth: AuthConfig", "session: SessionManager"])
def test_a_class_where_a_value_goes_is_not_a_secret(line: str) -> None:
    """(Fixed: capitalised words whose last is a type's, ``…Config``, ``…Manager``.)"""
    assert redacted(line + "\n") == line + "\n"


@pytest.mark.parametrize(
    "line",
    [
        f"ldapsearch -x -D cn=admin,dc=acme -w {PASSWORD} -b dc=acme",
        f"openssl enc -aes-256-cbc -k {PASSWORD} -in a -out b",
        f"unzip -P {PASSWORD} archive.zip",
        f"<secret value='{PASSWORD}'/>",
    ],
)
def test_a_password_after_a_tools_own_flag_is_masked(line: str) -> None:
    """Their neighbours are masked (``zip -P``, ``sshpass -p``, ``-passin pass:``,
    ``<param name="password" value=…>``); these are not."""
    assert PASSWORD not in redacted(line + "\n")


LOG_AFTER = "".join(f"2026-05-01 INFO step {i} done\n" for i in range(1, 4))


LONE_BEGINS = [
    "Error: key file starts with -----BEGIN PRIVATE KEY----- but has no end line",
    "-----BEGIN PGP PRIVATE KEY BLOCK-----",
]


@pytest.mark.parametrize("first", LONE_BEGINS)
def test_the_lines_after_a_lone_begin_line_are_kept(first: str) -> None:
    """(Fixed: a key's block runs over the lines of its body alone — base64, alone or after
    a prefix, its headers, blank lines — or to its END marker; every line after it was
    emptied to the end of the log: 3,000 lines of a 90 KB log in a run by hand.)"""
    out = redacted(first + "\n" + LOG_AFTER)
    assert out.endswith(LOG_AFTER)
    assert "BEGIN" not in out


@pytest.mark.parametrize("first", LONE_BEGINS)
def test_a_lone_begin_line_in_a_stream_takes_no_more_than_the_keys_reach(first: str) -> None:
    """Across a stream's windows a BEGIN line's END may be in a later window: what follows
    is dropped until it comes or ``KEY_REACH`` bytes have gone (a key is a few KB), then
    the key's body lines alone; the log after that is kept."""
    from relay.redact.engine import KEY_REACH
    from relay.redact.redactor import Redactor

    lines = [f"2026-05-01 INFO step {i} done\n" for i in range(2 * KEY_REACH // 25)]
    log = first + "\n" + "".join(lines)
    stream = Redactor(block_size=4096, max_redacted_share=1.0).open(overlap=128)
    out = "".join(stream.feed(log[i : i + 997]) for i in range(0, len(log), 997)) + stream.finish()
    kept = out.splitlines()
    assert out.count("\n") == log.count("\n")
    assert kept[-1] == lines[-1].rstrip("\n")
    assert sum(1 for line in kept if "INFO" in line) > len(lines) - KEY_REACH // 25 - 200


_KEY = [
    "MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7VJTUt9Us8cKj",
    "MZlY1hPQ1kp1PsEj3pTzYhHw6k4T5Vb8kYw4Ln2cD9xWmQ7eR1sHvUyZ3aFgJ0oN",
    "q8r7Bt2wXk5sLp3Zv9Ya==",
]


@pytest.mark.parametrize("prefix", ["", "2026-12-06T11:20:00.1234567Z ", "    "])
@pytest.mark.parametrize("end", [True, False])
def test_a_key_is_masked_whole_under_line_prefixes_with_or_without_its_end(
    prefix: str, end: bool
) -> None:
    lines = ["-----BEGIN PRIVATE KEY-----", *_KEY, *(["-----END PRIVATE KEY-----"] if end else [])]
    text = "".join(f"{prefix}{line}\n" for line in lines) + "2026-05-01 INFO step 1 done\n"
    out = redacted(text)
    assert not any(piece in out for piece in _KEY), out
    assert out.endswith("2026-05-01 INFO step 1 done\n")


def test_an_encrypted_pem_keys_headers_and_a_pgp_blocks_armor_are_part_of_the_key() -> None:
    pem = ["-----BEGIN RSA PRIVATE KEY-----", "Proc-Type: 4,ENCRYPTED",
           "DEK-Info: AES-128-CBC,3F17F5316E2BAC89", "", *_KEY]  # fmt: skip
    pgp = ["-----BEGIN PGP PRIVATE KEY BLOCK-----", "Version: GnuPG v2", "", *_KEY, "=Ab3d"]
    for lines in (pem, pgp):
        out = redacted("".join(f"{line}\n" for line in lines) + "next: done\n")
        assert not any(piece in out for piece in (*_KEY, "3F17F5316E2BAC89")), out
        assert out.endswith("next: done\n")


@pytest.mark.parametrize(
    "line",
    [
        f"::set-output name=token::{PASSWORD}",
        f'Run echo "{PASSWORD}" | gh auth login --with-token',
        f"gh auth login --with-token <<< {PASSWORD}",
    ],
)
def test_a_token_set_as_an_output_or_piped_to_a_login_is_masked(line: str) -> None:
    """Their neighbours are masked: ``echo V | docker login --password-stdin``, ``echo
    "token=V" >> $GITHUB_OUTPUT``."""
    assert PASSWORD not in redacted(line + "\n")


def test_the_password_of_an_ado_net_connection_string_in_the_environment_is_own(
    tmp_path: Path,
) -> None:
    """``DATABASE_URL``'s password is learned (a URL's); .NET's ``ConnectionStrings__Db``
    holds it as ``Password=…;`` and it is not."""
    env = {"ConnectionStrings__Db": f"Server=db;User ID=sa;Password={PASSWORD};"}
    assert PASSWORD not in relay_redact(f"x {PASSWORD} y\n", tmp_path, **env)


@pytest.mark.parametrize(
    "line",
    [
        "GLAPI void APIENTRY glProgramUniformMatrix2fv (GLuint program, GLint location, "
        "GLsizei count, GLboolean transpose, const GLfloat *value);",
        "    Z3_ast Z3_API Z3_mk_bvadd_no_overflow(Z3_context c, Z3_ast t1, Z3_ast t2, bool s);",
        "BZ_EXTERN int BZ_API(BZ2_bzDecompressInit) ( ",
        "\tIWL_VENDOR_AUTH_SAE = 0x9,",
        "    U_UNEXPECTED_TOKEN=0x10100,       /**< Syntax error in format pattern */",
        "#define EVP_PKEY_EC NID_X9_62_id_ecPublicKey",
        '#define FW_CFG_DMA_SIGNATURE    0x51454d5520434647ULL /* "QEMU CFG" */',
        '#define SN_setct_PANToken               "setct-PANToken"',
        '#define LN_pbe_WithSHA1And2_Key_TripleDES_CBC   "pbeWithSHA1And2-KeyTripleDES-CBC"',
    ],
)
def test_c_headers_hold_no_secret(line: str) -> None:
    """Lines of this machine's /usr/include (26 MB, 969 lines changed, none a secret, most of
    them a function named after an ``*_API`` or ``APIENTRY`` macro); the held-out sets of
    ``bench redact_realcode`` hold no C. (Fixed: a function named after a library's export
    macro, C's integer literals, a macro's alias or its name as a string.)"""
    assert redacted(line + "\n") == line + "\n"


@pytest.mark.xfail(strict=True, reason="a doc comment's prose after a secret-ish name")
@pytest.mark.parametrize("line", [" * @GNUTLS_BAG_SECRET: PKCS-12 bag with secret PKCS-9 keys."])
def test_c_headers_doc_comments_hold_no_secret(line: str) -> None:
    assert redacted(line + "\n") == line + "\n"


@pytest.mark.parametrize(
    "line", [f'#define API_TOKEN "{PASSWORD}"', f"MY_API {PASSWORD}", f"API_KEY = {PASSWORD}"]
)
def test_a_secret_in_a_c_macro_is_still_masked(line: str) -> None:
    assert PASSWORD not in redacted(line + "\n")


@pytest.mark.parametrize(
    "line", [f'let token = "{PASSWORD}";', f"const apiKey = '{PASSWORD}'", f"TOKEN={PASSWORD}"]
)
def test_a_quoted_secret_in_a_javascript_binding_is_still_masked(line: str) -> None:
    assert PASSWORD not in redacted(line + "\n")


@pytest.mark.parametrize(
    "line",
    [
        "$password = $this->password;",
        "$token = $request->input('token');",
        "'password' => $request->password,",
        "$apiKey = $config->get('api_key');",
        "    my $pass = $assert->{pass};",
        "    my $token = shift;",
        "    while(my $token = $parser->get_token) {",
    ],
)
def test_a_php_or_perl_expression_is_not_a_secret(line: str) -> None:
    """The issue: an expression or attribute access is not a secret (``self->password`` and
    ``X25519.key_length`` are kept). With a ``$`` before it, ``$this-`` is taken for the
    value and cut at the ``-``, leaving ``[redacted:secret]>password``. Perl's modules on
    this machine (17 MB) give 86 changed lines, npm's own JavaScript (6.5 MB) 64."""
    assert redacted(line + "\n") == line + "\n"


@pytest.mark.parametrize(
    "line",
    [
        "const UNEXPECTED_TOKEN = /^Unexpected token '?(.)'?(,)? /i",
        "    for (const key of ['_authtoken', '-authtoken']) {",
        "throw new error_1.RFC3161TimestampVerificationError('timeStampToken is missing');",
    ],
)
def test_javascript_that_names_tokens_holds_no_secret(line: str) -> None:
    """(Fixed: a regex literal, what a message says of a token.)"""
    assert redacted(line + "\n") == line + "\n"


@pytest.mark.parametrize(
    "line",
    [
        "let cookieDomain = attributeValue",
        "    credentials: 'include',",
        "      cookieAttributeList.sameSite = 'Strict'",
    ],
)
def test_javascript_reading_variables_and_modes_holds_no_secret(line: str) -> None:
    """A bare value after ``let``/``const``/``var`` is a variable (a literal is quoted); a
    fetch's credentials mode and a cookie's SameSite are settings' words."""
    assert redacted(line + "\n") == line + "\n"


@pytest.mark.xfail(strict=True, reason="a factory's first argument under a token's name")
def test_a_token_factorys_name_argument_is_not_a_secret() -> None:
    """(Capitals of 13 letters or more may be a base32 seed: not taken for a constant.)"""
    line = "createToken('BUILDIDENTIFIER', `${LETTERDASHNUMBER}+`)"  # semver's own source
    assert redacted(line + "\n") == line + "\n"


@pytest.mark.parametrize(
    "line",
    [
        '[ -n "$ID" ] && ENTRY_TOKEN_SEARCH="$ENTRY_TOKEN_SEARCH $ID"',  # kernel-install
        "FAKEROOTKEY=`echo $KEY_PID|cut -d: -f1`",  # fakeroot
        "cat_passwd='getent passwd'",  # bash-completion
    ],
)
def test_shell_expansions_and_commands_are_not_secrets(line: str) -> None:
    """Lines of this machine's shell scripts (3.7 MB, 16 lines changed): two expansions in
    one quoted value, a command substitution, a command kept in a variable."""
    assert redacted(line + "\n") == line + "\n"


@pytest.mark.parametrize("prefix", ["", "2026-12-06T11:20:00.1234567Z "])
@pytest.mark.parametrize("end", [True, False])
def test_a_long_key_is_masked_across_a_streams_windows(prefix: str, end: bool) -> None:
    """A key longer than a window, each line under a prefix or none, its END line there or
    not: no line of its body comes out, and the log's lines after it do."""
    from relay.redact.redactor import Redactor

    body = [_KEY[i % 2][i % 7 :] + _KEY[(i + 1) % 2][: i % 7] for i in range(80)]
    lines = ["-----BEGIN PRIVATE KEY-----", *body, *(["-----END PRIVATE KEY-----"] if end else [])]
    after = "".join(f"2026-05-01 INFO step {i} done\n" for i in range(40))
    log = "".join(f"{prefix}{line}\n" for line in lines) + after
    stream = Redactor(block_size=512, max_redacted_share=1.0).open(overlap=128)
    out = "".join(stream.feed(log[i : i + 61]) for i in range(0, len(log), 61)) + stream.finish()
    assert not any(line[8:40] in out for line in body), out
    assert out.count("\n") == log.count("\n")
    # with its END the log after it is kept; without, a stream's window may not know yet
    # that no END comes within the key's reach, and drops the lines in it
    assert out.endswith(after) or not end


@pytest.mark.parametrize("first", LONE_BEGINS)
def test_a_lone_begin_line_piped_through_the_command_takes_no_more_than_its_line(
    first: str, tmp_path: Path
) -> None:
    """``relay redact`` reading a pipe passes lines on as they come: a BEGIN line whose END
    may yet come is held back until more text (or the end) says, not emptied with what
    follows it."""
    from test_redact_check28 import relay_redact

    out = relay_redact(first + "\n" + LOG_AFTER, tmp_path)
    assert out.endswith(LOG_AFTER) and "BEGIN" not in out
