"""The shapes the field's scanners test with: webhook URLs, code syntaxes, false alarms by
shape (the name's meaning, references, markup, placeholders). One line each; the whole
corpus is measured in ``bench/bench_redact_field``."""

from __future__ import annotations

import pytest

from relay.redact import Redactor
from relay.redact.values import name_is_secret, value_is_not_secret

REDACTOR = Redactor(max_redacted_share=1.0)
UUID = "3f6e2b1a-1c2d-4e5f-8a9b-0c1d2e3f4a5b"
TENANT = "72f988bf-86f1-41af-91ab-2d7cd011db47"


@pytest.mark.parametrize(
    ("line", "secret"),
    [
        (
            f"https://contoso.webhook.office.com/webhookb2/{UUID}@{TENANT}/IncomingWebhook/"
            f"9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c4d/{UUID}",
            "9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c4d",
        ),
        (
            "https://events.pagerduty.com/integration/0f3e9a1c5b2d4f6e8a0c1b3d5f7e9a2c/enqueue",
            "0f3e9a1c5b2d4f6e8a0c1b3d5f7e9a2c",
        ),
        ("https://maker.ifttt.com/trigger/done/with/key/k9Xq2WbL7mZ4tR8vN1cY5h", "k9Xq2WbL7m"),
        ("url: https://chat.example.com/hooks/xz3ab8ckd7fymj4ghpq5r1s9tw", "xz3ab8ckd7fym"),
        (
            "curl https://api.telegram.org/bot123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw/getMe",
            "AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw",
        ),
        ("https://discord.com/api/v10/webhooks/123456789012345678/" + "aB3" * 22, "aB3aB3aB3"),
        (f"https://open.feishu.cn/open-apis/bot/v2/hook/{UUID}", UUID),
        (f"https://qyapi.weixin.qq.com/cgi-bin/webhook/send?key={UUID}", UUID),
        ("jdbc:oracle:thin:scott/Tiger9#Secret@//db:1521/ORCL", "Tiger9#Secret"),
    ],
)
def test_webhook_urls_and_connection_strings_lose_their_credential(line: str, secret: str) -> None:
    assert secret not in REDACTOR.redact(line + "\n")


@pytest.mark.parametrize(
    "line",
    [
        'if (password == "Kq8vZ2mW9xLp") {',
        'if ("Kq8vZ2mW9xLp" === api_key) {',
        'password "Kq8vZ2mW9xLp";',
        'char secret[25] = "Kq8vZ2mW9xLp";',
        'std::string secret("Kq8vZ2mW9xLp");',
        'config.put("password", "Kq8vZ2mW9xLp");',
        'System.setProperty("DB_PASSWORD", "Kq8vZ2mW9xLp")',
        "ENV DB_PASSWORD Kq8vZ2mW9xLp",
        "password: !!str Kq8vZ2mW9xLp",
        "apiKey := `Kq8vZ2mW9xLp`",
        "<apiKey>Kq8vZ2mW9xLp</apiKey>",
    ],
)
def test_code_names_a_secret_in_comparisons_calls_and_declarations(line: str) -> None:
    assert "Kq8vZ2mW9xLp" not in REDACTOR.redact(line + "\n")


@pytest.mark.parametrize(
    "line",
    [
        "password=Qb_(a4i58Vkc-h)Qpv",
        "user=sa;password=Qb_(a4i58Vkc-h)Qpv;",
        "jdbc:mysql://db/shop?user=root&password=MfE#rZtl4V-jz)ud.27m4Ci&useSSL=false",
        'token: "Qb_(a4i58Vkc-h)Qpv"',
    ],
)
def test_a_bracket_closed_into_more_of_the_value_is_no_call(line: str) -> None:
    """``f(x)`` is code, but no call's close runs on into a word: ``Qb_(…)Qpv`` is one value,
    as is one with a close that nothing opened (``jz)ud.27``)."""
    out = REDACTOR.redact(line + "\n")
    assert "a4i58Vkc" not in out and "Qpv" not in out and "ud.27" not in out, out
    assert "[redacted:" in out


@pytest.mark.parametrize(
    "line",
    [
        'password = get_secret("db")',
        "password=getpass(prompt)",
        "token = f(x)[0]",
        "api_key = getpass()or default_key",
        "password = f(x)if c else d",
        'password = getpass.getpass(prompt=":)Enter")',
        "--password get((char*)p)",
        "Authorization: Bearer getToken((char*)x)",
    ],
)
def test_a_call_s_value_is_code(line: str) -> None:
    assert REDACTOR.redact(line + "\n") == line + "\n"


@pytest.mark.parametrize(
    "line",
    [
        'db: {"password": "!Kq8vZ2mW9xLp"}',
        "password: '!Kq8vZ2mW9xLp'",
        'DB_PASSWORD="!Kq8vZ2mW9xLp"',
        'api_key = "!!Kq8vZ2mW9xLp"',
    ],
)
def test_a_quoted_value_that_opens_with_a_bang_is_no_yaml_tag(line: str) -> None:
    """Within quotes ``!`` is a character like any other (a password's first); outside them
    ``password: !Ref Param`` is a tag and stays (see the list of lines kept below)."""
    assert "Kq8vZ2mW9xLp" not in REDACTOR.redact(line + "\n")


@pytest.mark.parametrize(
    "line",
    [
        'foreignKey: "customer_id"',
        "key_length = XSalsa20.key_length",
        '"bucket_key": "SalesResults-1.2"',
        "key_down_event=KeyboardEvent123",
        "PuttyPassword=0",
        '<entry key="jetbrains.mps.v8_elimination" value="executed" />',
        "xoxb-12345-abcd234",
        "xoxe.xoxp-1-RANDOMSTRINGHERE",
        "xoxp-572370529330-573807301142-572331691188-####################",
        "SUMO_ACCESS_KEY=${SUMO_ACCESS_KEY:=$2}",
        '"password": "<xsd:element name=\\"password\\" type=\\"xsd:string\\"/>"',
        "GR134894112312312312312312312",
        'public_key = "9Cnzj4p4WGeKLs1Pt8QuKUpRKfFLfRYC9AIKjbJTWit"',
        "apiKey: config.apiKey,",
        "token_endpoint = https://oauth2.googleapis.com/token",
        "api_key: !Ref ApiKeyParameter",
        'api_key: "!Ref ApiKeyParameter"',
        'password: "!none"',
        "token: '!Sub'",
        'password: "!!str"',
        "export OPENAI_API_KEY=sk-...",
        "arn:aws:iam::123456789012:role/ci-deploy",
        'curl -sL --user "$1:$2" "$3"',
        "AIzaSyabcdefghijklmnopqrstuvwxyz1234567",
        "sgp_5555555dAAAAA7777777CcccCFaaaaaaaaaaaaaa",
        "curl -u <user:password> https://localhost",
        'curl -H "Authorization: Bearer $(gcloud auth print-access-token)" https://x',
        'nonMatchingToken := "sm_pat_',
    ],
)
def test_a_line_that_only_looks_secret_is_kept(line: str) -> None:
    assert REDACTOR.redact(line + "\n") == line + "\n"


def test_the_name_s_last_word_says_what_it_holds() -> None:
    assert name_is_secret(b"DB_PASSWORD") is True
    assert name_is_secret(b"apiKey") is True
    assert name_is_secret(b"SECRET_KEY_BASE") is True
    assert name_is_secret(b"key_length") is False
    assert name_is_secret(b"foreignKey") is False
    assert name_is_secret(b"tokenEndpoint") is False
    assert name_is_secret(b"my_password_super_secure") is None  # does not say: judged by value


def test_a_value_s_shape_says_when_it_is_no_secret() -> None:
    for value in (b"true", b"0", b"$2", b"X25519.key_length", b"<xsd:element", b"12345678"):
        assert value_is_not_secret(value), value
    for value in (b"Kq8vZ2mW9xLp", b"hunter2-Zq", b"9f3c2a7e51b0d846"):
        assert not value_is_not_secret(value), value


def test_a_flag_inside_angle_brackets_is_no_template_slot() -> None:
    """``<user:password>`` is a template's slot and kept; ``<--password VALUE>`` is a flag
    with its value (a one-line log folds a command line into brackets), and is masked."""
    from relay.node.redaction import build_redactor

    redactor = build_redactor(None)
    assert "OSEA3eUzT6jx" not in redactor.redact("x ; <--password OSEA3eUzT6jx> ; y")
    assert (
        redactor.redact("postgres://<user:password>@db/app") == "postgres://<user:password>@db/app"
    )


@pytest.mark.parametrize(
    ("line", "secret"),
    [
        ("::add-mask::rrSVtJBLgdI5X9JWwsvU", "rrSVtJBLgdI5X9JWwsvU"),
        ('+ echo "::add-mask::rrSVtJBLgdI5X9JWwsvU"', "rrSVtJBLgdI5X9JWwsvU"),
        ("npm config set //registry.npmjs.org/:_authToken d7abfd30-06e4-4ad2-a8c2", "d7abfd30"),
        ("pnpm config set _authToken Vb7Kq2Lm9Xp4Rt8W", "Vb7Kq2Lm9Xp4Rt8W"),
    ],
)
def test_what_a_step_asks_to_mask_or_sets_as_a_registry_token_is_a_secret(
    line: str, secret: str
) -> None:
    assert secret not in REDACTOR.redact(line + "\n")


@pytest.mark.parametrize(
    "line",
    ["echo ::add-mask::$TOKEN", "npm config set registry https://registry.npmjs.org/"],
)
def test_a_variable_to_mask_and_a_registry_url_are_kept(line: str) -> None:
    assert REDACTOR.redact(line + "\n") == line + "\n"
