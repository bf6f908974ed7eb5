"""The families of a reviewer's held-out set, each with cases written apart from the field
corpus (other names, syntaxes and values), so that a rule made for one example is caught
out: values that are no secret by their shape (a setting's state, a prompt's call, a format
placeholder, a platform's reference, a resource name, prose), and secrets in shapes the
named rules did not read (Webex webhooks, PHP constants named by a key or a salt, heredoc
bodies, a Kubernetes Secret's data under any key)."""

from __future__ import annotations

import base64
import random

import pytest

from relay.redact import MachineFacts, Redactor

REDACTOR = Redactor(MachineFacts(user="runner", home="/home/runner"), max_redacted_share=1.0)
_RNG = random.Random(2826)
_B62 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"


def _token(n: int = 28) -> str:
    while True:
        value = "".join(_RNG.choice(_B62) for _ in range(n))
        if any(c.isupper() for c in value) and any(c.isdigit() for c in value):
            return value


KEPT = (
    # a setting's state
    "SMTP_PASSWORD_AUTH=disabled",
    "  token_refresh: automatic",
    "admin_password_reset = optional",
    "Set-Cookie: tracking_consent=declined; Secure",
    "cookie: gdpr_consent=granted",
    # a prompt's call, closed on its line
    'secret = input("Paste the secret: ")',
    "token = getpass.getpass(prompt='API token: ')",
    'my $pw = prompt("Password:");',
    # Python's %-format slots
    "password = %(ldap_bind_password)s",
    "amqp://guest:%(RABBIT_PASS)s@mq:5672//",
    # a platform's reference
    '  "ApiToken": "@Microsoft.KeyVault(VaultName=kv-prod;SecretName=api-token)"',
    "STORAGE_KEY=@Microsoft.KeyVault(SecretUri=https://kv.vault.azure.net/secrets/sa/)",
    # an Amazon resource name
    "  SecretArn: arn:aws:secretsmanager:us-east-2:210987654321:secret:app/token-Ab12Cd",
    'encryption_key = "arn:aws-us-gov:kms:us-gov-west-1:123456789012:alias/app"',
    # prose where a value goes
    "define( 'LOGGED_IN_KEY', 'put your unique phrase here' );",
    "password: see the runbook for the current one",
    # a map named data that is no Secret's: plain words, numbers, a hex digest
    "data:\n  mode: production\n  replicas: 3\n  digest: 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b",
    # a lookup's own key, and a key that is no secret
    "value = settings.get('key', 'fallback-value')",
    "cache.put('partition_key', 'tenant-42-shard')",
    # a here-document no password reader reads, and one whose first line is its end
    "cat <<EOF > motd\nWelcome to the build host\nEOF",
    "cat <<EOF | docker login -u bot --password-stdin\nEOF",
)


@pytest.mark.parametrize("line", KEPT)
def test_a_value_that_is_no_secret_by_its_shape_is_kept(line: str) -> None:
    assert REDACTOR.redact(line + "\n") == line + "\n"


def _secrets() -> list[tuple[str, str]]:
    webex = "Y2lzY29zcGFyazovL3VzL1dFQkhPT0sv" + _token(52)
    data = [base64.b64encode(_RNG.randbytes(n)).decode() for n in (33, 48, 20)]
    password = _token(20) + "!#"
    return [
        (f"WEBEX_HOOK=https://api.ciscospark.com/v1/webhooks/incoming/{webex}", webex),
        (f"  notify_url: 'https://webexapis.com/v1/webhooks/incoming/{webex}'", webex),
        (f'define("SECURE_AUTH_KEY", "{password}");', password),
        (f"define('LOGGED_IN_SALT','{password}');", password),
        (f'$config->put("signing_key", "{password}");', password),
        (f"cat <<'CONF' > db.ini\n[db]\npassword = {password}\nCONF", password),
        (f"cat <<-EOF | tee settings.yml\n\tapi_token: {password}\n\tEOF", password),
        (
            "apiVersion: v1\nkind: Secret\ndata:\n  .dockerconfigjson: "
            f"{data[0]}\n  ca.pem: {data[1]}\ntype: kubernetes.io/tls",
            data[1],
        ),
        (f"printf 'ok'\nmachine git.example.org login bot password {password} port 443", password),
        (f"default login anonymous password {password}", password),
        (f"docker login ghcr.io -u bot --password-stdin <<'TOKEN'\n{password}\nTOKEN", password),
        (f"sudo chpasswd <<EOF\nops:{password}\nEOF", password),
        (f"kind: Secret\nmetadata:\n  name: x\ndata:\n    endpoint-config: {data[2]}", data[2]),
        (f"  data:\n    settings.json: {data[0]}", data[0]),
    ]


@pytest.mark.parametrize(("text", "secret"), _secrets())
def test_a_secret_in_a_held_out_shape_is_redacted(text: str, secret: str) -> None:
    out = REDACTOR.redact(text + "\n")
    assert secret not in out, out
