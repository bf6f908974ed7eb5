"""Issue 28's findings on tools' own password flags, secrets fed to a login's standard input,
workflow commands and Rust's constants, with the neighbours each fix must keep: the general
shape of each fix, beyond the one line ``test_redact_rev28.py`` holds."""

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
