"""Findings of a fresh attack on the day's relaxations of value checks: real secrets that the
earlier tree masked and the relaxations let through (words joined by dashes under a secret's
name, a cache key's shape under any ``key``, a bare word after `` = ``, a generic type of
digits, a snake-case password, Ruby's ENV.fetch with a literal default, a path or a dotted
name under a password's name, a drawn value under a server's name). Each is masked again;
beside them, the false alarms that a narrow shape still tells apart stay unchanged."""

from __future__ import annotations

import pytest
from redact_samples import redacted

HEX = "94c0e7614a621909791d2bbd9a9533d87fcaa383c936fd74381887c6c3c76625"
HEX32 = "7c1e9a4f02b83d6e5a9c0f1b2d4e6a8c"
DRAWN = "Xk9mP2vL8qR5wT7zAbQ3"


@pytest.mark.parametrize(
    ("line", "secret"),
    [
        # A1: words joined by - or _ under a secret's, key's, token's or auth's name
        ("SECRET_KEY=correct-horse-battery-staple", "correct-horse-battery-staple"),
        ("JWT_SECRET=tumble-oxidize-parlor-unwind", "tumble-oxidize-parlor-unwind"),
        (
            "ENCRYPTION_KEY=tumble-oxidize3-parlor-unwind-saddle",
            "tumble-oxidize3-parlor-unwind-saddle",
        ),
        ("export SESSION_SECRET=keyboard-cat", "keyboard-cat"),
        ('  webhook_secret: "gravel-lantern-oyster"', "gravel-lantern-oyster"),
        ('{"client_secret": "tumble-oxidize-parlor-unwind"}', "tumble-oxidize-parlor-unwind"),
        ("api_key: tumble-oxidize-parlor-unwind", "tumble-oxidize-parlor-unwind"),
        ("NEXTAUTH_SECRET=tumble_oxidize_parlor_unwind", "tumble_oxidize_parlor_unwind"),
        ("SESSION_SECRET=hunter-two", "hunter-two"),
        ("COOKIE_SECRET=monkey-banana", "monkey-banana"),
        # A2: a cache key's shape under a key that is no cache's
        (f"API key: prod-app-{HEX}", HEX),
        (f"key: prod-app-{HEX}", HEX),
        (f'"key": "prod-api-{HEX}"', HEX),
        (f"KEY=prod-api-{HEX}", HEX),
        (f'key = "mk-live-{HEX}"', HEX),
        (f"Signing key: hmac-sha256-{HEX}", HEX),
        (f"Encryption key: aes-256-{HEX}", HEX),
        (f"License key: acme-pro-{HEX}", HEX),
        (f"master key: v1-2-{HEX}", HEX),
        (f"DATADOG key: dd-api-{HEX32}", HEX32),
        # A3: a bare word after `` = `` under a token's, key's or password's name
        ("ACCESS_TOKEN = qzjbyakmqwulgfnh", "qzjbyakmqwulgfnh"),
        ("api_key = letmeinplease", "letmeinplease"),
        ("access_token = sunshine", "sunshine"),
        ("  secret_key = dragonfly", "dragonfly"),
        ("if ok: token = qzjbyakmqwulgfnh", "qzjbyakmqwulgfnh"),
        ("with creds: password = sunshine", "sunshine"),
        ("for deploy: password = letmein", "letmein"),
        # A4: a generic type's shape with only digits inside
        ("DB_PASSWORD: Spring<2024>", "Spring<2024>"),
        ("password: Welcome<123>", "Welcome<123>"),
        ("  password: Admin<2024>;", "Admin<2024>"),
        ("secret: Spring<2024>", "Spring<2024>"),
        ("client_secret: Summer<2024>,", "Summer<2024>"),
        ("password: Aa<123>", "Aa<123>"),
        ("DB_PASSWORD=Spring<2024>", "Spring<2024>"),
        ("docker run -e DB_PASSWORD=Spring<2024> app", "Spring<2024>"),
        ("password = Spring<2024>", "Spring<2024>"),
        # A5: snake case that is a password, not a variable's name
        ("JWT_SECRET=super_secret_jwt_key_2024", "super_secret_jwt_key_2024"),
        ("SECRET_KEY=MY_SECRET_KEY_2024", "MY_SECRET_KEY_2024"),
        # A6: Ruby's ENV.fetch with a literal default: the default is a secret
        ("password: \"#{ENV.fetch('DB', 'Tr0ub4dor3xQ')}\"", "Tr0ub4dor3xQ"),
        (
            "SECRET_KEY_BASE=\"#{ENV.fetch('SKB', 'a9f3c1e7b2d4f6a8c0e2b4d6f8a1c3e5')}\"",
            "a9f3c1e7b2d4f6a8c0e2b4d6f8a1c3e5",
        ),
        # A7: a path or a dotted name under a password's name; a drawn value under a
        # server's, a service's name
        ("password: /etc/secret/db", "/etc/secret/db"),
        ("password: /correct/horse/battery/staple", "/correct/horse/battery/staple"),
        ('password = "fs.s3.passwordIsHere"', "fs.s3.passwordIsHere"),
        (f"password_server={DRAWN}", DRAWN),
        (f"SECRET_SERVICE={DRAWN}", DRAWN),
        (f"AUTH_SERVER={DRAWN}", DRAWN),
    ],
)
def test_a_secret_the_relaxations_let_through_is_masked(line: str, secret: str) -> None:
    assert secret not in redacted(line + "\n")


@pytest.mark.parametrize(
    "line",
    [
        # actions/cache's key: a bare ``key`` opening its line, or after a cache's words,
        # and a runner's platform among its parts
        f"    key: Linux-node-{HEX}",
        f"key: Windows-npm-{HEX}",
        f"Cache hit for key: setup-python-Linux-x64-python-3.11.6-pip-{HEX}",
        f"Cache restored from key: macOS-arm64-cargo-{HEX}",
        # an object's field set from a short variable; a language's keyword
        "node.last_token = nlast",
        "if ttype == tokenize.NEWLINE: break",
        # a generic type whose arguments name types
        "token: Option<String>,",
        "    pub password: Vec<u8>,",
        "credentials: HashMap<String, Credential>,",
        # an environment variable's name, quoted and in capitals
        "ACCESS_KEY = 'AWS_ACCESS_KEY_ID'",
        # Ruby's references to the environment, no default
        "password: \"#{ENV['DB_PASSWORD']}\"",
        "token: \"#{ENV.fetch('TOKEN')}\"",
        # a URL under a server's name
        "AUTH_SERVER=https://auth.example.com/oauth",
        'AUTH_SERVICE = "sts"',
    ],
)
def test_a_narrow_false_alarm_shape_stays_unchanged(line: str) -> None:
    assert redacted(line + "\n") == line + "\n"


def test_ssh_prompt_names_a_key_file_not_a_passphrase() -> None:
    line = "Enter passphrase for key '/home/runner/.ssh/id_ed25519':\n"
    assert redacted(line) == "Enter passphrase for key '<home>/.ssh/id_ed25519':\n"
