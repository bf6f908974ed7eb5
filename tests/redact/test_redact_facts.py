"""The edge that reads the machine's facts, and which variable names hold secrets."""

from __future__ import annotations

import base64
import getpass
import socket

from hypothesis import given, settings
from hypothesis import strategies as st

from relay.redact import MachineFacts, Redactor, gather_facts
from relay.redact.facts import names_secret


def test_secret_names_are_recognised() -> None:
    for name in ("GITHUB_TOKEN", "DB_PASSWORD", "AWS_SECRET_ACCESS_KEY", "npm_config__auth",
                 "STRIPE_API_KEY", "MY_APIKEY", "SLACK_WEBHOOK_URL", "RELAY_TOKEN"):  # fmt: skip
        assert names_secret(name), name
    for name in ("PWD", "OLDPWD", "PATH", "HOME", "SSH_AUTH_SOCK", "LANG", "KEYBOARD_LAYOUT"):
        assert not names_secret(name), name


def test_gather_facts_reads_this_machine_and_the_given_environment() -> None:
    env = {"HOME": "/home/tester", "DEPLOY_TOKEN": "tok-8c1f9e2d7b", "EDITOR": "vim-9000x"}
    facts = gather_facts(environ=env, token="relay-own-token-42")
    assert facts.home == "/home/tester"
    assert facts.user == getpass.getuser()
    assert socket.gethostname() in facts.hosts
    assert set(facts.secrets) == {"tok-8c1f9e2d7b", "relay-own-token-42"}


def test_own_secrets_are_masked_in_every_encoding() -> None:
    facts = gather_facts(environ={"HOME": "/home/tester"}, token="ghx/own+token=77")
    redactor = Redactor(facts)
    basic = base64.b64encode(b"x-access-token:ghx/own+token=77").decode()
    middle = basic[len(basic) // 2 - 6 : len(basic) // 2 + 6]  # encodes only the token
    for text in ("ghx/own+token=77", "ghx%2Fown%2Btoken%3D77", '"ghx/own+token=77"', basic):
        out = redactor.redact(f"header {text} end")
        assert "[redacted:own-secret]" in out and middle not in out, (text, out)
        assert "ghx" not in out and "77" not in out, (text, out)


def test_the_environment_scan_and_the_assignment_rules_agree_on_secret_words() -> None:
    """A value set in a log under a secret-named variable is masked even when this node does
    not hold that variable (the assignment rules read the same words)."""
    redactor = Redactor()
    for name in ("DB_PASS", "DB_PASSWORD", "DB_PASSWD", "DB_PWD", "SSH_PASSPHRASE", "NPM_AUTH",
                 "APP_CREDENTIALS", "X_SECRET", "A_TOKEN", "API_KEY", "MY_COOKIE"):  # fmt: skip
        assert names_secret(name), name
        assert redactor.redact(f"{name}=Hx7kq2mzp9") == f"{name}=[redacted:secret]", name


@settings(max_examples=50, deadline=None)
@given(
    secret=st.text(alphabet="abAB01-_", min_size=6, max_size=12),
    text=st.text(alphabet="abAB01-_ \n", max_size=200),
)
def test_the_one_pass_literal_search_finds_every_occurrence(secret: str, text: str) -> None:
    """Overlapping occurrences included: a secret half masked is a secret leaked."""
    from relay.redact.literals import LiteralScanner, build_literals

    block = (text + secret + secret[: len(secret) // 2] + secret + text).encode()
    literals = build_literals(MachineFacts(secrets=(secret,)))
    found = {(s, e) for s, e, _ in LiteralScanner(literals).spans(block, block.lower(), 0)}
    naive = set()
    for lit in literals:
        hay = block.lower() if lit.lower else block
        at = hay.find(lit.needle)
        while at >= 0:
            naive.add((at, at + len(lit.needle)))
            at = hay.find(lit.needle, at + 1)
    assert found == naive
    assert secret not in Redactor(MachineFacts(secrets=(secret,))).redact(block)


def test_a_name_that_only_holds_a_secret_word_gives_its_value_when_it_looks_drawn() -> None:
    """``GITHUB_TOKEN`` means a secret; ``AUTH_PROVIDER``, ``SECRETS_REGION`` and
    ``TOKEN_ENDPOINT`` only hold the word, and their ordinary values (``github``, a region, a
    plain URL) are no secret of this node's — masking them would mask every ``github`` of a
    log. A drawn value under such a name (``SECRET_KEY_BASE``'s hex) still is one."""
    env = {
        "AUTH_PROVIDER": "github",
        "SECRETS_REGION": "us-east-1",
        "TOKEN_ENDPOINT": "https://oauth2.googleapis.com/token",
        "PASSWORD_HASHER": "argon2id",
        "KEY_VAULT_NAME": "my-key-vault",
        "SECRET_KEY_BASE": "a3f9c2e18b7d4f6a9c0e1b2d3f4a5b6c7d8e9f0a1b2c3d4e5f6a7b8c9d0e1f2",
        "GITHUB_TOKEN": "ghs_Qa1Wb2Ec3Rd4Tf5Yg6Uh7Ij8Ok9Pl0Zx1Cv2B",
        "DB_PASSWORD": "hunter2",
        "API_KEY_2": "hunter22",
    }
    facts = gather_facts(environ=env)
    assert set(facts.secrets) == {env[n] for n in ("SECRET_KEY_BASE", "GITHUB_TOKEN")} | {
        "hunter2",
        "hunter22",
    }
    out = Redactor(facts).redact("cloning github.com/org/repo in us-east-1 with argon2id\n")
    assert out == "cloning github.com/org/repo in us-east-1 with argon2id\n"


def test_a_urls_password_in_any_variable_is_this_nodes_secret() -> None:
    """``DATABASE_URL=postgres://app:…@db/app``: the password alone, reversed or encoded, is
    masked where the log prints it; a URL that only stands in for one (``${DB_PASSWORD}``,
    ``****``) gives nothing."""
    env = {
        "DATABASE_URL": "postgres://app:QmZ8vL2pK7xR4tW9nB3c@db:5432/app",
        "CACHE_URL": "redis://:${REDIS_PASSWORD}@cache:6379/0",
        "MIRROR": "https://user:****@mirror.example.org/simple",
    }
    facts = gather_facts(environ=env)
    assert facts.secrets == ("QmZ8vL2pK7xR4tW9nB3c",)
    redactor = Redactor(facts)
    secret = "QmZ8vL2pK7xR4tW9nB3c"
    for text in (secret, secret[::-1], "UW1aOHZMMnBLN3hSNHRXOW5CM2M="):  # base64 of it
        out = redactor.redact(f"step said {text} ok\n")
        assert "[redacted:own-secret]" in out and text[2:-4] not in out, out


def test_common_secret_names_are_read_and_short_words_inside_others_are_not() -> None:
    """``JWT``, ``MNEMONIC``, ``HTPASSWD`` and a last word ``_SK`` mean a secret; ``SK`` inside
    a word (``DISK``, ``TASK``) does not. A login or a seed is one when its value looks so:
    a drawn token, a seed that is no number (a TOTP seed's base32), not a user name or a
    test's random seed."""
    for name in ("CI_JOB_JWT", "JWT", "STRIPE_SK", "MNEMONIC", "HTPASSWD", "WALLET_MNEMONIC"):
        assert names_secret(name), name
    for name in ("DISK", "TASK", "ASK", "SK", "RISK_LEVEL", "PYTHONHASHSEED", "LOGINS_DIR"):
        assert not names_secret(name), name
    env = {
        "SONAR_LOGIN": "squ_Zq8Lm3Xv7Tn2Wp5Rk9Bd4Hs6",
        "TOTP_SEED": "JBSWY3DPEHPK3PXP",
        "DOCKER_LOGIN": "builder",
        "RANDOM_SEED": "20240501",
    }
    assert set(gather_facts(environ=env).secrets) == {env["SONAR_LOGIN"], env["TOTP_SEED"]}


def test_a_connection_strings_password_in_any_variable_is_this_nodes_secret() -> None:
    """ADO.NET's and ODBC's ``key=value;`` strings, the key in any case, the value bare, in
    quotes or in braces; a value that is not such a string gives nothing."""
    env = {
        "ConnectionStrings__Db": "Server=db;User ID=sa;Password=Hq4vN8zR2kW7;",
        "ODBC": "Driver={ODBC Driver 18};Server=db;UID=sa;PWD={Mx3;pT9}}bL};",
        "SQL": "Data Source=db;password='Rk9Bd4Hs6Zq8'",
        "STANDIN": "Server=db;Password=${DB_PASSWORD};",
        "OPTS": "password=Wp5Rk9Bd4Hs6",  # one part: no connection string
        "EMPTY": "Server=db;Password=;",
    }
    assert set(gather_facts(environ=env).secrets) == {"Hq4vN8zR2kW7", "Mx3;pT9}bL", "Rk9Bd4Hs6Zq8"}
