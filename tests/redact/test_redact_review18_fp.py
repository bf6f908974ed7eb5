"""False alarms of review 18: a type, a usage line's metavar, an expression, ssh's prompt, an
age recipient, a thing's name and a Digest header's parameters under a secret's name, each
judged by its shape; beside each, a real secret in the same syntax that stays masked."""

from __future__ import annotations

import pytest
from redact_samples import redacted

_WORDS_ARE_A_PASSPHRASE = (
    "words joined by - or _ under a secret's, token's or key's name are also a generated "
    "passphrase's shape (correct-horse-battery-staple): no narrow shape tells a name from "
    "one, so it is masked"
)


# A drawn value (synthetic): no issuer made it.
DRAWN = "xK9mP2vL8qR5wT7zAbQ3"


@pytest.mark.parametrize(
    "line",
    [
        # F1: a field's generic type under a secret's name
        "token: Option<String>,",
        "password: Vec<u8>,",
        "secret: Box<dyn Secret>,",
        "apiKey: Promise<string>;",
        "token: Arc<Mutex<Token>>,",
        "credentials: HashMap<String, Credential>,",
        "    token: Option<String>,",
        "    pub password: Vec<u8>,",
        "    private readonly apiKey: Promise<string>;",
        "  credentials: HashMap<&'a str, Credential>,",
        "    pub token: std::sync::Arc<Token>,",
        # F2: a usage line's metavars, in brackets
        "Usage: deploy [-h] [--api-key KEY] [--token TOKEN]",
        "Usage: login [--token TOKEN] [--password PASSWORD]",
        "usage: deploy [-h] [--api-key KEY] [--token TOKEN]",
        "  [--token TOKEN] [--password PASSWORD]",
        # F3: an expression, a reference
        "password: this.configService.get<string>('DB_PASSWORD'),",
        "password: \"#{ENV['DB_PASSWORD']}\"",
        "password: \"#{ENV.fetch('DB_PASSWORD')}\"",
        # F4: ssh's prompt names a file; an age recipient is public; a thing's name
        "Enter passphrase for key '/root/.ssh/id_ed25519':",
        "Public key: age1ql3z7hjy54pw3hyww5ayyfg7zqgvc7w3j2elw8zmrj2kg5sfn9aqmcac8p",
        pytest.param(
            'auth: "oauth2-proxy"',
            marks=pytest.mark.xfail(
                strict=True,
                reason=_WORDS_ARE_A_PASSPHRASE,
            ),
        ),
        pytest.param(
            "secret: my-app-secret",
            marks=pytest.mark.xfail(
                strict=True,
                reason=_WORDS_ARE_A_PASSPHRASE,
            ),
        ),
        pytest.param(
            'token: "tok_eof"',
            marks=pytest.mark.xfail(
                strict=True,
                reason=_WORDS_ARE_A_PASSPHRASE,
            ),
        ),
    ],
)
def test_a_false_alarm_is_left_alone(line: str) -> None:
    assert redacted(line) == line


def test_ssh_prompt_keeps_its_key_file() -> None:
    """The home directory is shown as ``<home>`` as everywhere; the path is no passphrase."""
    line = "Enter passphrase for key '/home/runner/.ssh/id_ed25519':"
    assert redacted(line) == "Enter passphrase for key '<home>/.ssh/id_ed25519':"


def test_digest_header_masks_its_response_only() -> None:
    line = (
        'Authorization: Digest username="admin", realm="x", '
        'nonce="dcd98b7102dd2f0e8b11d0f600bfb0c093", response="6629fae49393a05397450978507c4ef1"'
    )
    out = redacted(line)
    assert out.startswith('Authorization: Digest username="admin", realm="x", nonce="dcd98b71')
    assert "6629fae49393a05397450978507c4ef1" not in out
    assert out.endswith('response="[redacted:authorization]"')


@pytest.mark.parametrize(
    ("line", "secret"),
    [
        (f'token: "{DRAWN}"', DRAWN),
        (f"token: {DRAWN}", DRAWN),
        (f'password: Vec::from("{DRAWN}")', DRAWN),
        (f"token: Option<{DRAWN}>,", DRAWN),
        (f"--token {DRAWN}", DRAWN),
        (f"--api-key {DRAWN}", DRAWN),
        (f"Usage example: deploy --token {DRAWN}", DRAWN),
        ("password: my-app-secret", "my-app-secret"),
        ("passphrase: correct-horse-battery", "correct-horse-battery"),
        ("api_key = abc_def_ghi", "abc_def_ghi"),
        (f"secret: my-app-{DRAWN}", DRAWN),
        (f"Authorization: Digest {DRAWN}", DRAWN),
        (
            "AGE-SECRET-KEY-1ZW2JHZNRPU49PE8C9YCYZQ952ZV4KMX5PCDYR5P2A6VA7LMUJZK2E8JTM5",
            "ZW2JHZNRPU49PE8C9YCYZQ952ZV4KMX5PCDYR5P2A6VA7LMUJZK2E8JTM5",
        ),
    ],
)
def test_a_secret_in_the_same_syntax_stays_masked(line: str, secret: str) -> None:
    assert secret not in redacted(line)


def test_a_usage_bracket_is_not_taken_with_a_real_value() -> None:
    assert redacted(f"[--token {DRAWN}]") == "[--token [redacted:secret]]"
