"""Secrets in the syntaxes a review found missed, each in a few spellings, beside the same
syntax holding a reference or no secret, which is kept: TOML's and Python's triple-quoted
strings, a .properties file's blank separator, PowerShell's plain-text secure string, a
password piped to a registry login, ``az login -p``, ``gh secret set --body``, a URL-encoded
pair, and the short names ``PW``, ``pwd``, ``passcode`` and ``master_key``."""

from __future__ import annotations

import pytest

from relay.redact import MachineFacts, Redactor

REDACTOR = Redactor(MachineFacts(user="runner", home="/home/runner"), max_redacted_share=1.0)
R = "[redacted:secret]"
# a password with symbols, and a machine-made key
VALUES = ("Hunter2pass!x9", "Xk9qLmZw2VbN7rTp4sYh")

SYNTAXES = (
    # TOML and Python multi-line strings
    'password = """{v}"""',
    'db_password = """\n{v}\n"""',
    "api_token = '''\n  {v}\n'''",
    'client_secret="""{v}"""',
    # .properties: key, blanks, value
    "spring.datasource.password {v}",
    "mail.smtp.password\t{v}",
    "app.api.token   {v}",
    # PowerShell
    '$cred = ConvertTo-SecureString "{v}" -AsPlainText -Force',
    "$pw = ConvertTo-SecureString -String '{v}' -AsPlainText -Force",
    "ConvertTo-SecureString {v} -AsPlainText -Force",
    # a password fed to a login on standard input
    "echo {v} | docker login --password-stdin -u bot ghcr.io",
    'echo "{v}" | docker login -u bot --password-stdin',
    "printf '%s' '{v}' | podman login --password-stdin quay.io",
    "echo -n '{v}' | helm registry login -u ci --password-stdin reg.example.com",
    # the Azure CLI
    "az login -u ci -p {v}",
    "az login --service-principal -u http://app -p '{v}' --tenant contoso",
    # the GitHub CLI
    "gh secret set API_TOKEN --body {v}",
    'gh secret set API_TOKEN -b "{v}" --repo org/app',
    "gh secret set DEPLOY_KEY --body='{v}'",
    # URL-encoded
    "https://example.org/login?next=%2F&password%3D{v}",
    "state=x%26user%3Dbob%26pwd%3D{v}%26remember%3D1",
    # short names
    "PW={v}",
    "DB_PW='{v}'",
    "pwd={v}",
    "pwd: {v}",
    "Server=db;User Id=app;Pwd={v};",
    "passcode={v}",
    '"passcode": "{v}"',
    "master_key = {v}",
    "MASTER_KEY={v}",
    'masterKey: "{v}"',
)


@pytest.mark.parametrize("value", VALUES)
@pytest.mark.parametrize("syntax", SYNTAXES)
def test_a_secret_in_each_syntax_is_redacted_and_only_it(syntax: str, value: str) -> None:
    out = REDACTOR.redact(syntax.format(v=value) + "\n")
    assert value not in out
    assert out == syntax.format(v=R) + "\n"


KEPT = (
    'password = """${DB_PASSWORD}"""',
    'token_url = """https://auth.example.com/oauth/token"""',
    'description = """The secret is rotated every 90 days."""',
    'password = """\nyour_password_here\n"""',
    "spring.datasource.password ${DB_PASSWORD}",
    "mail.smtp.password.file /run/secrets/smtp",
    "the password is rotated",
    "$cred = ConvertTo-SecureString $env:DEPLOY_PASSWORD -AsPlainText -Force",
    "$secure = ConvertTo-SecureString $encrypted",
    'echo "$REGISTRY_TOKEN" | docker login -u ci --password-stdin ghcr.io',
    'echo "${{ secrets.GITHUB_TOKEN }}" | docker login ghcr.io -u $ --password-stdin',
    "echo done | tee build.log",
    'az login -u "$AZ_USER" -p "$AZ_PASSWORD"',
    "az login --identity",
    'gh secret set DEPLOY_TOKEN --body "$DEPLOY_TOKEN"',
    "gh secret set DEPLOY_KEY < deploy_key",
    "https://example.org/sso?next=%2Fhome&password%3D%24%7BPASSWORD%7D",
    "PWD=/srv/build/app",
    "pwd: /srv/app",
    'OLDPWD="/srv/build"',
    "cd $PWD && make",
    "PW=${PW}",
    "passcode_length = 6",
    "master_key_id = alias/app-master",
)


@pytest.mark.parametrize("line", KEPT)
def test_the_same_syntax_without_a_secret_is_kept(line: str) -> None:
    assert REDACTOR.redact(line + "\n") == line + "\n"


def test_a_multi_line_string_keeps_its_line_count() -> None:
    text = 'password = """\nXk9qLmZw2VbN7rTp4sYh\nsecond-line-Q7x9\n"""\nnext = 1\n'
    out = REDACTOR.redact(text)
    assert out.count("\n") == text.count("\n")
    assert "Xk9q" not in out and "Q7x9" not in out and out.endswith('"""\nnext = 1\n')


@pytest.mark.parametrize("line", ["pwd: '%7xX83feJm-i@P'", "PWD=%7xX83feJm-i@P"])
def test_a_pwd_value_that_opens_with_a_percent_is_a_password_not_a_variable(line: str) -> None:
    assert "7xX83feJm" not in REDACTOR.redact(line + "\n")
    assert REDACTOR.redact("PWD=%CD%\n") == "PWD=%CD%\n"


def test_a_multi_line_string_among_many_ordinary_lines_is_redacted() -> None:
    """The prefilter keeps every line of the string (its closing quotes included), as it
    keeps a YAML block scalar's: the rules then read a block of only the lines it kept."""
    before = "".join(f"compiling module {i} ok\n" for i in range(300))
    after = "".join(f"linking {i}\n" for i in range(300))
    text = before + 'password = """\nqwertyuiopasdfgh\n"""\n' + after
    assert REDACTOR.redact(text) == before + f'password = """\n{R}\n"""\n' + after


@pytest.mark.parametrize("line", ["passcode=482913", "PASSCODE: 482913", "pw=48291375"])
def test_a_numeric_passcode_is_a_secret_not_a_test_count(line: str) -> None:
    assert "4829" not in REDACTOR.redact(line + "\n")
    assert REDACTOR.redact("PASS=3 FAIL=0\n") == "PASS=3 FAIL=0\n"
