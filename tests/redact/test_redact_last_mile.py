"""What a review of issue 28's last mile found: passwords in sentences and in a ``.pgpass``
line, a raw ``@`` in a URL's password, the unnamed half of an AWS key pair, formats the
table lacked, and lines that hold no secret and were redacted. Each line is written as a
log or a file would hold it."""

from __future__ import annotations

import pytest
from redact_samples import redacted

R = "[redacted:secret]"


@pytest.mark.parametrize(
    ("line", "secret"),
    [
        ("the admin password is Xk9#mQ2v until rotated\n", "Xk9#mQ2v"),
        ('login with password "Hunter2!x"\n', "Hunter2!x"),
        ("use passphrase: correct horse battery staple\n", "correct horse battery staple"),
        ("Note: the wifi password was Gr33n-Tea_42.\n", "Gr33n-Tea_42"),
        ("the passphrase 'tulip 7 orbit!' unlocks the vault\n", "tulip 7 orbit!"),
    ],
)
def test_a_password_in_a_sentence_goes(line: str, secret: str) -> None:
    out = redacted(line)
    assert secret not in out
    assert out == line.replace(secret, R)


@pytest.mark.parametrize(
    "line",
    [
        "Error: password is required\n",
        "the password is incorrect.\n",
        "your password was changed at 10:22\n",
        "password is too short (min 8)\n",
        "Password is SHA256-hashed\n",
        'enter password "" to skip\n',
        "passphrase: not set\n",
        "password: must be at least eight chars\n",
        "decrypt without a password is GNUTLS_E_DECRYPTION_FAILED.\n",
        "- !1932 gtlspassword: Fix inverted assertion\n",
        '* gpg: the passphrase "enter again" prompt shows\n',
        "the password is ${DB_PASSWORD}\n",
        "relay: the token is t140's, so it can create t140/proj but not x/proj\n",
        "the token is alice's, not yours\n",
    ],
)
def test_a_sentence_about_a_password_stays(line: str) -> None:
    assert redacted(line) == line


@pytest.mark.parametrize(
    ("line", "secret"),
    [
        ("db.internal:5432:app:svc_ro:Zq8!kP2wLm\n", "Zq8!kP2wLm"),
        ("host:5432:db:user:S3cr3tPw\n", "S3cr3tPw"),
        ("*:*:*:replicator:r3pl-Secret#9\n", "r3pl-Secret#9"),
    ],
)
def test_a_pgpass_line_loses_its_password(line: str, secret: str) -> None:
    assert redacted(line) == line.replace(secret, R)


@pytest.mark.parametrize(
    "line",
    ["12:30:45:00:01\n", "localhost:5432:*:postgres:$PGPASSWORD\n", "a:1:b:c\n"],
)
def test_what_only_looks_like_a_pgpass_line_stays(line: str) -> None:
    assert redacted(line) == line


def test_a_raw_at_sign_in_a_url_password_is_redacted_to_the_last_one() -> None:
    line = "DATABASE_URL=postgres://u:p@ss@word1@db:5432/x\n"
    out = redacted(line)
    assert "ss@word1" not in out and "word1" not in out
    assert out == "DATABASE_URL=postgres://[redacted:url-credentials]@db:5432/x\n"


def test_a_url_whose_path_holds_an_at_sign_keeps_it() -> None:
    line = "see https://github.com/org/repo@v2 and git@github.com:org/repo\n"
    assert redacted(line) == line


AKID = "AKIAQYLPMN5HFIQR7XYZ"
SECRET = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYzzQ9e8Lk2M"
FILLER = "".join(f"step {i}: building target {i} ok\n" for i in range(40))


@pytest.mark.parametrize(
    "pair",
    [
        f"{AKID} {SECRET}\n",
        f"ci-deploy,{AKID},{SECRET}\n",  # a credentials CSV's row
        f"{AKID}\n{SECRET}\n",  # two echoes
        f"{FILLER}{AKID}\n{SECRET}\n{FILLER}",
    ],
)
def test_the_unnamed_half_of_an_aws_key_pair_goes(pair: str) -> None:
    out = redacted(pair)
    assert AKID not in out and SECRET not in out


def test_a_hash_beside_a_key_id_stays() -> None:
    line = f"{AKID} 3f786850e387550fdab836ed7e6dc881de23001b\n"
    assert redacted(line) == "[redacted:aws-access-key] 3f786850e387550fdab836ed7e6dc881de23001b\n"


@pytest.mark.parametrize(
    ("token", "kind"),
    [
        ("dp.st.dev.Ab9Kx3mQ2vL8pR4tY7wZ1bN6cD5fG0hJ2kL3mN4pQ5r", "doppler-token"),
        ("dp.st.prd_us-east.Ab9Kx3mQ2vL8pR4tY7wZ1bN6cD5fG0hJ2kL3mN4pQ5r", "doppler-token"),
        (
            "CCIPRJ_Ab9Kx3mQ2vL8pR4tY7wZ1b_9f3a7c1e5b2d8f4a6c0e9b7d3f1a5c8e2b4d6f0a",
            "circleci-token",
        ),
        ("akab-4x2m9q7z3p1k8w5n-9c6v3b0m7x4z1q8w", "akamai-edgegrid-token"),
        ("re_c1tpEyD8_NKFusih9vKVQknRAQfmFcWCv", "resend-api-key"),
    ],
)
def test_a_format_the_table_lacked_is_named(token: str, kind: str) -> None:
    assert redacted(f"found {token} in the build output\n") == (
        f"found [redacted:{kind}] in the build output\n"
    )


def test_a_function_name_that_starts_like_a_resend_key_stays() -> None:
    line = "re_compile_all_patterns_in_the_table(rows)\n"
    assert redacted(line) == line


@pytest.mark.parametrize(
    "line",
    [
        'password: process.env.DB_PASSWORD || ""\n',
        "  token: os.environ.get('API_TOKEN') or None\n",
        "hotkey: CtrlShiftAltF12Combination\n",
        "    password: SecretStr\n",
        "    api_key: Optional[SecretStr]\n",
        'if token == "lambda":\n',
        "        if token == 'async' and not stashed:\n",
        "#     token = 1*tchar\n",
        'list = *( OWS "," ) token *( OWS "," [ OWS token ] )\n',
        "model = Model(password='IAmSensitive')\n",
        "gnutls_session_get_master_secret: Added\n",
    ],
)
def test_code_grammar_and_documented_examples_stay(line: str) -> None:
    assert redacted(line) == line


@pytest.mark.parametrize(
    "line",
    [
        'password: process.env.DB_PASSWORD || "Kx9#q2Lm!vB"\n',
        "password: *Xk9mQ2v\n",
        'if password == "Tr0ub4dor&3":\n',
    ],
)
def test_a_value_beside_those_shapes_still_goes(line: str) -> None:
    assert redacted(line) != line
