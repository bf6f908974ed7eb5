"""Issue 28's findings on tools' own password flags, secrets fed to a login's standard input,
workflow commands, Rust's constants and webhook URLs, with the neighbours each fix must
keep: the general shape of each fix, beyond the one line ``test_redact_rev28.py`` holds."""

from __future__ import annotations

import pytest
from redact_samples import redacted

# Synthetic values, written for these tests: no issuer made them.
PASSWORD = "Hq4vN8zR2kW7mX3pT9bL"
OTHER = "Tz6pW2nK8mR4vX9qL3bD"
LOG_LINE = "2026-05-01 INFO step 1 done\n"


@pytest.mark.parametrize(
    "line",
    [
        f"ldapmodify -x -D cn=admin,dc=acme -w{PASSWORD} -f users.ldif",
        f"ldapadd -H ldap://ldap:389 -x -D cn=admin -w '{PASSWORD}' -f base.ldif",
        f"ldapdelete -x -w {PASSWORD} uid=bob,dc=acme",
        f"ldapwhoami -x -D cn=admin -w {PASSWORD}",
        f"openssl enc -d -aes-256-cbc -pbkdf2 -k {PASSWORD} -in secrets.enc",
        f"unzip -o -P{PASSWORD} bundle.zip",
        f'<password value="{PASSWORD}"/>',
        f"  <ns:token value='{PASSWORD}' scope=\"ci\"/>",
    ],
)
def test_a_password_after_a_tools_own_flag_or_in_an_elements_value_is_masked(line: str) -> None:
    assert PASSWORD not in redacted(line + "\n")


@pytest.mark.parametrize(
    "line",
    [
        f"ldappasswd -x -D cn=admin -w {PASSWORD} -a {OTHER} -s {OTHER} uid=bob",
        f"ssh-keygen -p -P {PASSWORD} -N {OTHER} -f id_ed25519",
    ],
)
def test_every_password_of_a_command_that_takes_two_is_masked(line: str) -> None:
    """The old one and the new one: the check that reads the command masks both."""
    out = redacted(line + "\n")
    assert PASSWORD not in out and OTHER not in out


@pytest.mark.parametrize(
    "line",
    [
        "ldapsearch -x -W -b dc=acme",  # asks at a prompt
        'ldapsearch -x -w "$LDAP_PASSWORD" -b dc=acme',
        "unzip -p archive.zip notes.txt",  # to stdout, no password
        "openssl req -new -key key.pem -keyout out.pem -out req.csr",
        "openssl enc -d -aes-256-cbc -k - -in a.enc",
        '<password value="${DB_PASSWORD}"/>',
        '<tokenizer value="whitespace-and-punctuation"/>',
        '<setting name="Retries" value="Kq8vZ2mW7xTn4Lp9"/>',
    ],
)
def test_the_neighbours_of_a_tools_flag_are_kept(line: str) -> None:
    assert redacted(line + "\n") == line + "\n"


@pytest.mark.parametrize(
    "line",
    [
        f'echo "::set-output name=api_token::{PASSWORD}"',
        f"::save-state name=DEPLOY_KEY::{PASSWORD}",
        f"printf '%s' '{PASSWORD}' | gh auth login --hostname ghe.acme.dev --with-token",
        f'docker login -u ci --password-stdin ghcr.io <<< "{PASSWORD}"',
    ],
)
def test_a_token_set_as_an_output_or_fed_to_a_login_is_masked(line: str) -> None:
    assert PASSWORD not in redacted(line + "\n")


def test_a_here_document_fed_to_gh_auth_login_is_masked() -> None:
    text = f"cat <<EOF | gh auth login --with-token\n{PASSWORD}\nEOF\n"
    assert redacted(text) == "cat <<EOF | gh auth login --with-token\n[redacted:secret]\nEOF\n"


def test_a_here_string_is_masked_and_the_line_below_it_kept() -> None:
    """``<<<`` is no here-document: the value is on its own line, the next is the log's."""
    out = redacted(f"gh auth login --with-token <<< {PASSWORD}\n{LOG_LINE}")
    assert out == f"gh auth login --with-token <<< [redacted:secret]\n{LOG_LINE}"


@pytest.mark.parametrize(
    "line",
    [
        "::set-output name=version::1.24.3",
        "::set-output name=token_url::https://auth.acme.dev/oauth/token",
        "::set-output name=token::${{ steps.mint.outputs.token }}",
        'gh auth login --with-token <<< "$GH_TOKEN"',
        "cat notes.txt <<< hello",
    ],
)
def test_an_output_that_is_no_secret_is_kept(line: str) -> None:
    assert redacted(line + "\n") == line + "\n"


@pytest.mark.parametrize(
    "line",
    [
        f'let token: &\'a str = "{PASSWORD}";',
        f'const SIGNING_KEY: &[u8] = b"{PASSWORD}";',
        f'static DB_PASSWORD: &\'static [u8] = b"{PASSWORD}";',
        f'let password: String = "{PASSWORD}".to_string();',
    ],
)
def test_a_rust_reference_type_before_the_value_is_read(line: str) -> None:
    assert PASSWORD not in redacted(line + "\n")


@pytest.mark.parametrize(
    "line",
    [
        "fn login(user: &str, password: &str) -> Result<Session> {",
        "let token: &str = &args.token;",
        "let token: &str = tokens.next().unwrap();",
    ],
)
def test_a_rust_parameter_or_a_variable_is_kept(line: str) -> None:
    assert redacted(line + "\n") == line + "\n"


# Each service's URL shape as its documents give it; the ids are written anew.
HOOKS = [
    ("betterstack-heartbeat-url", "https://uptime.betterstack.com/api/v1/heartbeat/",
     "Fq7TmW3nRk9LpZx2VbC8dJhY"),
    ("betterstack-heartbeat-url", "https://betteruptime.com/api/v1/heartbeat/",
     "Wd4rHs8KqT2mZn6XcV9bLp3J"),
    ("healthchecks-ping-url", "https://hc-ping.com/", "5e2b9c7a-41d3-4f8e-a6b0-93c1d7e4f2a8"),
    ("healthchecks-ping-url", "https://hc-ping.com/", "Zr4kT8mQ1vX6nB3pL9wY2c/db-backups"),
    ("glip-webhook", "https://hooks.glip.com/webhook/", "7a1c9e3b-2d4f-4b6a-8c0e-5f9d1b3a7e2c"),
    ("glip-webhook", "https://hooks.glip.com/webhook/v2/", "6d2f8a41-93ce-4b7a-b15e-0c9d7e3a2f84"),
    ("glip-webhook", "https://hooks.ringcentral.com/webhook/v2/",
     "bV5nQ8xT2kR7mW3pZ9cL4dH6jF1sG0aY"),
    ("flock-webhook", "https://api.flock.com/hooks/sendMessage/",
     "3f8a2c1d-9b7e-4d6f-a0c5-e1b2d3f4a5c6"),
]  # fmt: skip


@pytest.mark.parametrize(("kind", "url", "secret"), HOOKS)
def test_a_webhook_url_that_is_its_own_credential_is_masked(
    kind: str, url: str, secret: str
) -> None:
    line = f"curl -fsS -m 10 --retry 3 -X POST {url}{secret}"
    out = redacted(line + "\n")
    assert secret.split("/")[0] not in out and f"[redacted:{kind}]" in out


def test_a_healthchecks_ping_keeps_its_signal() -> None:
    """``/start``, ``/fail`` and an exit status after the check's id say what the job did."""
    out = redacted("curl https://hc-ping.com/5e2b9c7a-41d3-4f8e-a6b0-93c1d7e4f2a8/fail\n")
    assert out == "curl https://[redacted:healthchecks-ping-url]/fail\n"


@pytest.mark.parametrize(
    "line",
    [
        "ping https://hc-ping.com/your-uuid-here when the job ends",
        "see https://betterstack.com/docs/uptime/cron-and-heartbeat-monitor/",
        "https://api.flock.com/hooks/sendMessage/<webhook-id>",
    ],
)
def test_a_services_document_link_is_kept(line: str) -> None:
    assert redacted(line + "\n") == line + "\n"
