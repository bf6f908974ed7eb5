"""Findings of review 17 on issue 28, from lines written for the purpose and from real
third-party code (awscli, botocore, antlr4, asttokens, IPython's styles) that the shape
rules were not written against. Each test is the exact line and what must come out of it.
Marked xfail (strict) as the other finding files are: each fails today, and turns into an
ordinary test when fixed."""

from __future__ import annotations

import pytest
from redact_samples import redacted

_A_WORD_MAY_BE_A_PASSWORD = (
    "a bare word after = under a token's name may be a password (access_token = "
    "sunshine); only an object's field (node.last_token = nlast) or a language keyword is "
    "read as code, so a plain variable is masked"
)


# A drawn value (synthetic, from a seed): no issuer made it.
DRAWN = "tHNRWUi7cTsgwhn7YwELtiB07LXzWY3lGeKDKGvi"

# --- leaks ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "name",
    [
        "REGISTRY_TOKEN=",
        "DOCKER_REGISTRY_TOKEN=",
        "  registry_token: ",
        "SYNC_TOKEN=",
        "VAULT_PATH_TOKEN=",
        "HOST_TOKEN=",
        "NODE_KEY=",
        "oauth_request_token=",
    ],
)
def test_a_drawn_value_under_an_owner_qualified_secret_name_is_masked(name: str) -> None:
    """``bucket_key: reports/x.csv`` is no secret by the value's shape; a 40-character drawn
    value under ``REGISTRY_TOKEN`` is one, whatever word stands before ``token``."""
    assert DRAWN not in redacted(f"{name}{DRAWN}\n")


@pytest.mark.parametrize(
    "line",
    [
        "+ docker run -e 'MYSQL_ROOT_PASSWORD=Tr0ub4dor&GY7rVR' mysql:8",
        'docker run -e "MYSQL_ROOT_PASSWORD=Tr0ub4dor&GY7rVR" mysql:8',
        "docker run --env MYSQL_ROOT_PASSWORD=Tr0ub4dor&GY7rVR mysql:8",
        "docker run --env=MYSQL_ROOT_PASSWORD=Tr0ub4dor&GY7rVR mysql:8",
        "docker run -e 'MYSQL_ROOT_PASSWORD=Tr0ub4dor & GY7rVR' mysql:8",
    ],
)
def test_a_password_with_an_ampersand_in_docker_run_env_is_masked_whole(line: str) -> None:
    """The same value is masked whole in YAML, JSON, .env and flags; after ``docker run -e``
    the part after ``&`` was left (``[redacted:secret]&GY7rVR``)."""
    assert "GY7rVR" not in redacted(line + "\n")


@pytest.mark.parametrize(
    ("line", "out"),
    [
        (
            "docker run -e MYSQL_ROOT_PASSWORD=Tr0ub4dor && echo started",
            "docker run -e MYSQL_ROOT_PASSWORD=[redacted:secret] && echo started",
        ),
        (
            "docker run -e MYSQL_ROOT_PASSWORD=Tr0ub4dor& wait",
            "docker run -e MYSQL_ROOT_PASSWORD=[redacted:secret]& wait",
        ),
        (
            "docker run -e MYSQL_ROOT_PASSWORD=Tr0ub4dor&>run.log",
            "docker run -e MYSQL_ROOT_PASSWORD=[redacted:secret]&>run.log",
        ),
    ],
)
def test_a_shell_operator_after_a_docker_run_env_value_is_kept(line: str, out: str) -> None:
    """A bare ``-e`` value is a shell word: an ``&`` that ends it, or opens ``&&`` or
    ``&>``, is the shell's."""
    assert redacted(line + "\n") == out + "\n"


# --- false alarms ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "line",
    [
        # a bare identifier is a reference, not a secret
        pytest.param(
            "first_token = prev",
            marks=pytest.mark.xfail(
                strict=True,
                reason=_A_WORD_MAY_BE_A_PASSWORD,
            ),
        ),
        "node.last_token = nlast",
        pytest.param(
            "ruleOrToken = tag",
            marks=pytest.mark.xfail(
                strict=True,
                reason=_A_WORD_MAY_BE_A_PASSWORD,
            ),
        ),
        "token_loader_cls = FileWebIdentityTokenLoader",
        "access_key = ConfigValue(credentials.access_key,",
        # the name's last word is no secret word
        'AUTH_SERVICE = "sts"',
        # an environment variable's name, a dotted setting's name as the value
        "ACCESS_KEY = 'AWS_ACCESS_KEY_ID'",
        "EMRFS_SSE_KEY = 'fs.s3.enableServerSideEncryption'",
        # code and docstring markup
        "if ttype == tokenize.NEWLINE: break",
        "class CrtS3SigV4AsymQueryAuth(CrtSigV4AsymQueryAuth):",
        ":type credentials: :py:class:`~botocore.credentials.Credentials`",
        "if error_type in ('TOKEN_EXPIRED', 'USER_CREDENTIALS_CHANGED'):",
        # Symfony's reference to an environment variable
        "password: '%env(DB_PASSWORD)%'",
    ],
)
def test_code_that_holds_no_secret_is_unchanged(line: str) -> None:
    assert redacted(line + "\n") == line + "\n"


@pytest.mark.parametrize(
    "line",
    [
        # actions/cache's input as a GitHub Actions log prints it under ``with:``
        "    key: Linux-node-94c0e7614a621909791d2bbd9a9533d87fcaa383c936fd74381887c6c3c76625",
        "Cache hit for key: setup-python-Linux-x64-python-3.11.6-pip-"
        "94c0e7614a621909791d2bbd9a9533d87fcaa383c936fd74381887c6c3c76625",
    ],
)
def test_a_ci_cache_key_is_unchanged(line: str) -> None:
    assert redacted(line + "\n") == line + "\n"


@pytest.mark.parametrize(
    "line",
    [
        f"aws ssm put-parameter --name /app/db --type SecureString --value {DRAWN}",
        f"aws ssm put-parameter --value='{DRAWN}' --name /app/db --type String",
        f"az keyvault secret set --vault-name kv --name db-pass --value {DRAWN}",
        f"printf '{DRAWN}' | docker secret create db_password -",
        f"echo -n '{DRAWN}' | gcloud secrets versions add db-password --data-file=-",
        f'docker secret create db_password - <<< "{DRAWN}"',
    ],
)
def test_a_value_stored_as_a_secret_by_a_cli_is_masked(line: str) -> None:
    """``gh secret set X --body V`` and ``aws secretsmanager … --secret-string V`` are
    masked; the same value given to SSM, Key Vault, docker secret or gcloud secrets is not."""
    assert DRAWN not in redacted(line + "\n")


@pytest.mark.parametrize(
    "line",
    [
        "aws ssm put-parameter --name /app/db --type SecureString --value file://db.txt",
        'aws ssm put-parameter --name /app/db --value "$DB_PASSWORD"',
        "az keyvault secret set --vault-name kv --name db-pass --file ./db.txt",
        "docker secret create db_password ./db_password.txt",
    ],
)
def test_a_secret_stores_value_from_a_file_or_a_variable_is_unchanged(line: str) -> None:
    assert redacted(line + "\n") == line + "\n"


HEX = "94c0e7614a621909791d2bbd9a9533d87fcaa383c936fd74381887c6c3c76625"


@pytest.mark.parametrize(
    ("line", "value"),
    [
        # the shapes read as code above, with a drawn value in them
        (f'first_token = "{DRAWN}"', DRAWN),
        (f"first_token = {DRAWN}", DRAWN),
        (f"node.last_token = {DRAWN}", DRAWN),
        (f"access_key = ConfigValue({DRAWN},", DRAWN),
        (f'AUTH_SERVICE_TOKEN = "{DRAWN}"', DRAWN),
        (f"EMRFS_SSE_KEY = 'fs.s3.{DRAWN}'", DRAWN),
        (f"class Client(Base, token={DRAWN}):", DRAWN),
        (f"password: :py:class:`{DRAWN}`", DRAWN),
        (f"if ready: token = {DRAWN}", DRAWN),
        # a password may be a word: only a drawn secret's name makes a word a variable
        ("password = hunter", "hunter"),
        # a digest alone, or words that are drawn, or a name that owns the key
        (f"    key: {HEX}", HEX),
        (f"    key: Xkq9-Tzmw-{HEX}", HEX),
        (f"api_key: Linux-node-{HEX}", HEX),
        (f"ssh_key: Linux-node-{HEX}", HEX),
    ],
)
def test_a_secret_in_the_shapes_read_as_code_is_masked(line: str, value: str) -> None:
    assert value not in redacted(line + "\n")
