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
