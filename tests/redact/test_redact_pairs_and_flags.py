"""Name/value pairs and command-line flags that carried a password past the rules: each
case as a review found it, read alone and amid a log's other lines (where the prefilter
keeps only the lines it hits, so both lines of a pair must be kept)."""

from __future__ import annotations

import pytest

from relay.redact import Redactor

REDACTOR = Redactor(max_redacted_share=1.0)
R = "[redacted:secret]"
FILLER = "".join(f"step {i} compiled ok\n" for i in range(400))


def both_ways(text: str) -> str:
    """The text redacted alone, checked to read the same amid filler lines."""
    alone = REDACTOR.redact(text)
    padded = REDACTOR.redact(FILLER + text + FILLER)
    assert padded == FILLER + alone + FILLER
    return alone


PAIRS = [
    ('- name: DB_PASSWORD\n  value: "Pw-k8s-41"\n', f'- name: DB_PASSWORD\n  value: "{R}"\n'),
    ("  - name: API_TOKEN\n    value: Zx9pQ7rT\n", f"  - name: API_TOKEN\n    value: {R}\n"),
    ("- {name: DB_PASSWORD, value: s3cr3tpw}\n", f"- {{name: DB_PASSWORD, value: {R}}}\n"),
    (
        '{"name": "DB_PASSWORD", "value": "pa55word!"}\n',
        f'{{"name": "DB_PASSWORD", "value": "{R}"}}\n',
    ),
    (
        '"Environment": [{"Name": "DB_PASSWORD", "Value": "Pw-ecs-77"}]\n',
        f'"Environment": [{{"Name": "DB_PASSWORD", "Value": "{R}"}}]\n',
    ),
    (
        '{\n  "name": "DB_PASSWORD",\n  "value": "jsonpw42"\n}\n',
        f'{{\n  "name": "DB_PASSWORD",\n  "value": "{R}"\n}}\n',
    ),
    ('- key: secret_key\n  value: "kv-9f8e7d"\n', f'- key: secret_key\n  value: "{R}"\n'),
]


@pytest.mark.parametrize(("text", "expected"), PAIRS)
def test_a_value_beside_a_secret_name_goes(text: str, expected: str) -> None:
    assert both_ways(text) == expected


PAIRS_KEPT = [
    "- name: DB_PASSWORD\n  valueFrom:\n    secretKeyRef: {name: db, key: password}\n",
    "- name: LOG_LEVEL\n  value: debug\n",
    '- name: DB_PASSWORD\n  value: ""\n',
    "- name: DB_PASSWORD\n  value: ${DB_PASSWORD}\n",
    '- name: DB_PASSWORD\n  value: "{{ .Values.db.password }}"\n',
    '{"name": "retries", "value": "3"}\n',
]


@pytest.mark.parametrize("text", PAIRS_KEPT)
def test_a_pair_with_no_secret_or_only_a_reference_is_kept(text: str) -> None:
    assert both_ways(text) == text


FLAGS = [
    (
        "aws rds create-db-instance --master-user-password 'Correct horse 9' --engine mysql\n",
        f"aws rds create-db-instance --master-user-password '{R}' --engine mysql\n",
    ),
    (
        "sqlcmd -S db -U sa -P 'Pw!sql42' -Q \"select 1\"\n",
        f"sqlcmd -S db -U sa -P '{R}' -Q \"select 1\"\n",
    ),
    ("ssh-keygen -t ed25519 -N 'kg-pass-99' -f key\n", f"ssh-keygen -t ed25519 -N '{R}' -f key\n"),
    ("7z a -pZipPw77 out.7z dir\n", f"7z a -p{R} out.7z dir\n"),
    ("zip -P ZipPw88 out.zip file\n", f"zip -P {R} out.zip file\n"),
    (
        "net use Z: \\\\fs\\share /user:DOM\\svc NetPw-4a /persistent:no\n",
        f"net use Z: \\\\fs\\share /user:DOM\\svc {R} /persistent:no\n",
    ),
    ("net use \\\\fs\\share NetPw-5b /user:svc\n", f"net use \\\\fs\\share {R} /user:svc\n"),
    (
        "Command '['mysql', '-uroot', '-pMyPw55x', 'db']' returned non-zero exit status 1.\n",
        f"Command '['mysql', '-uroot', '-p{R}', 'db']' returned non-zero exit status 1.\n",
    ),
    ("['tool', '--password', 'ArgPw66y']\n", f"['tool', '--password', '{R}']\n"),
]


@pytest.mark.parametrize(("line", "expected"), FLAGS)
def test_a_password_given_to_a_tools_own_flag_goes(line: str, expected: str) -> None:
    assert both_ways(line) == expected


FLAGS_KEPT = [
    'sqlcmd -S db -p -Q "select 1"\n',  # sqlcmd's -p prints statistics
    "ssh-keygen -t ed25519 -N '' -f key\n",
    "7z a -p out.7z dir\n",  # asks at a prompt
    "zip -r -p out.zip dir\n",
    "unzip -P\n",
    "net use Z: \\\\fs\\share /persistent:no\n",
    "net use Z: \\\\fs\\share * /user:svc\n",
    'tool --password "$DB_PASSWORD"\n',
    "tool --password '<password>'\n",
    "['tool', '--password', '${PW}']\n",
]


@pytest.mark.parametrize("line", FLAGS_KEPT)
def test_a_flag_with_no_password_after_it_is_kept(line: str) -> None:
    assert both_ways(line) == line
