"""Findings of review 18: an Authorization header's credential after any scheme (a UUID
too), a password in a sentence after ``with password``, ``using password`` and
``(password``, a password passed by position to a call that takes a user and a password,
and one piped to ``sudo -S``. Each line came out unchanged; the value must be masked. The
close lines that hold no secret must stay as they are."""

from __future__ import annotations

import pytest
from redact_samples import redacted

DRAWN = "Xk9mP2vL8qR5wT7z"


def _masked(line: str, secret: str) -> None:
    out = redacted(line + "\n")
    assert secret not in out, out
    assert "[redacted:" in out


def _kept(line: str) -> None:
    assert redacted(line + "\n") == line + "\n"


# --- L1: Authorization: <Scheme> <credential> -----------------------------------------------


@pytest.mark.parametrize(
    ("line", "secret"),
    [
        (
            "Authorization: Splunk 700b736a-bab7-4a7d-b6b3-74afeee704ca",
            "700b736a-bab7-4a7d-b6b3-74afeee704ca",
        ),
        (
            "Authorization: GenieKey 3e763a81-dbf8-4dd6-8985-ff9cabf5441c",
            "3e763a81-dbf8-4dd6-8985-ff9cabf5441c",
        ),
        (
            "curl -H 'Authorization: Splunk ae0aa971-f186-482d-8612-de9a0727b4e5' "
            "https://hec:8088/services/collector",
            "ae0aa971-f186-482d-8612-de9a0727b4e5",
        ),
        (
            "Authorization: Key 7c9e6679-7425-40de-944b-e07fc1f90ae7:"
            "0f3b2c1d9e8a7b6c5d4e3f2a1b0c9d8e",
            "0f3b2c1d9e8a7b6c5d4e3f2a1b0c9d8e",
        ),
        (
            '{"Authorization": "SSWS 00QCjAl4MlV-WPXM2b1rGbNFkD9SK4jW5a_tY0G3K4"}',
            "00QCjAl4MlV-WPXM2b1rGbNFkD9SK4jW5a_tY0G3K4",
        ),
    ],
)
def test_a_credential_after_any_authorization_scheme_is_masked(line: str, secret: str) -> None:
    """After ``Authorization: <Scheme>`` the credential is a secret whatever its shape: a
    UUID is one after Splunk's or Opsgenie's scheme as after ``Bearer``."""
    _masked(line, secret)


def test_the_key_part_of_a_key_and_secret_pair_is_masked_too() -> None:
    out = redacted(
        "Authorization: Key 7c9e6679-7425-40de-944b-e07fc1f90ae7:0f3b2c1d9e8a7b6c5d4e3f2a1b0c9d8e\n"
    )
    assert "7c9e6679" not in out


@pytest.mark.parametrize(
    "line",
    [
        "authorization: see docs/auth.md",
        "Authorization: Required for v2 endpoints",
        "Authorization: Splunk <token>",
        "Authorization: Splunk $HEC_TOKEN",
        "Authorization: Splunk ${SPLUNK_HEC_TOKEN}",
        "fix Authorization: Basic parsing",
        "authorization: enabled",
    ],
)
def test_close_authorization_lines_without_a_credential_are_kept(line: str) -> None:
    _kept(line)


# --- L2: a password in prose -----------------------------------------------------------------


@pytest.mark.parametrize(
    "line",
    [
        f"[ERROR] login failed for user admin with password {DRAWN}",
        f"Connecting as admin using password {DRAWN}",
        f"created user deploy (password {DRAWN})",
        f"Connecting as admin using password {DRAWN}.",
        f"login with passphrase {DRAWN} failed",
    ],
)
def test_a_drawn_password_after_with_using_or_a_paren_is_masked(line: str) -> None:
    _masked(line, DRAWN)


@pytest.mark.parametrize(
    "line",
    [
        'password authentication failed for user "bob"',
        "archive created with password protection",
        "ssh: using password auth",
        "connect using password authentication-method",
        "login with password PasswordResetHandler",
        "(password reset required)",
        "created user deploy (password hidden)",
        "with password 12345678901234",
    ],
)
def test_an_english_word_after_with_password_is_kept(line: str) -> None:
    _kept(line)


# --- L3: credentials passed by position, or fed to sudo on stdin ------------------------------


@pytest.mark.parametrize(
    "line",
    [
        f"requests.get(url, auth=('admin', '{DRAWN}'))",
        f"requests.get(url, auth=HTTPBasicAuth('admin', '{DRAWN}'))",
        f'session.auth = ("admin", "{DRAWN}")',
        f'new NetworkCredential("ci", "{DRAWN}")',
        f'new NetworkCredential("ci", "{DRAWN}", "CORP")',
        f'DriverManager.getConnection(url, "app", "{DRAWN}")',
        f'smtp.login("ci@acme.io", "{DRAWN}")',
        f'ftp.login(user, "{DRAWN}")',
        f'return new PasswordAuthentication("ci", "{DRAWN}".toCharArray());',
        f'es = Elasticsearch(hosts, http_auth=("elastic", "{DRAWN}"))',
        f'HTTPDigestAuth("ci", "{DRAWN}")',
        f'echo "{DRAWN}" | sudo -S apt-get update',
        f"echo {DRAWN} | sudo -u root -S whoami",
        f'sudo -S apt-get update <<< "{DRAWN}"',
    ],
)
def test_a_password_passed_by_position_or_piped_to_sudo_is_masked(line: str) -> None:
    _masked(line, DRAWN)


def test_a_password_in_a_here_document_to_sudo_s_is_masked() -> None:
    out = redacted(f"sudo -S whoami <<EOF\n{DRAWN}\nEOF\n")
    assert DRAWN not in out


@pytest.mark.parametrize(
    "line",
    [
        "requests.get(url, auth=(user, password))",
        'session.auth = ("admin", os.environ["ADMIN_PASSWORD"])',
        'auth=HTTPBasicAuth("user", "pass")',
        'HTTPBasicAuth("ci", "a" + suffix)',
        'smtp.login(user, "${SMTP_PASSWORD}")',
        'new NetworkCredential("ci", "<password>")',
        f'page.login("admin", "{DRAWN}")',
        'ftp.login("anonymous", "")',
        "sort(key=lambda a, b: (a, b))",
        'echo "apt-get update" | sudo -s',
        f"echo {DRAWN} | sudo tee /etc/hostname",
        'sudo -s <<< "apt-get update"',
    ],
)
def test_close_calls_and_commands_without_a_literal_password_are_kept(line: str) -> None:
    _kept(line)


def test_a_root_shell_fed_a_here_document_is_kept() -> None:
    text = "sudo -s <<EOF\napt-get update\nEOF\n"
    assert redacted(text) == text
