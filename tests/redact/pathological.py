"""Pathological inputs for every pattern: one near-match repeated for the length of a line.

A backtracking regex is slow on the input that almost matches it again and again: the
anchor of a rule followed by a value that never ends the way the rule needs. Each family
here is such a unit — the prefix of every row of the format table, and the lead-in of every
hand-written rule (keywords, separators, key markers, dashes, dots, colons, ``@``, URLs,
ANSI codes) — to be repeated with no line break. The tests feed them small; the benchmark
(``bench/bench_redact_redos.py``) feeds 10 MB of each and compares with an ordinary log.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from relay.redact.formats import FORMATS, Run

HAND_WRITTEN: dict[str, bytes] = {
    "password-quoted": b'password="',
    "password-escaped": b'password=\\"',
    "token-equals": b"token=",
    "api-key-colon": b"api_key: ",
    "authorization": b"Authorization: ",
    "bearer": b"bearer ",
    "keywords": b"token secret password key ",
    "named-vendor": b"cloudflare: ",
    "xml-element": b"<password>",
    "xml-name-value": b"<name>secret</name><value>",
    "flag": b" --token ",
    "flags": b"--password ",
    "dash": b"-",
    "mysql": b"mysql -p",
    "openssl-pass": b"-pass pass:",
    "smbclient": b"smbclient -U a%",
    "docker-login": b"docker login -p ",
    "aws-configure": b"configure set x_key ",
    "begin-key": b"-----BEGIN RSA PRIVATE KEY-----",
    "end-key": b"-----END PRIVATE KEY-----\n",
    "dots": b"1.2.",
    "colons": b"a:",
    "double-colons": b"::",
    "hex-groups": b"12:34:",
    "digit-colons": b"1:",  # a .pgpass line's fields, never a line's start
    "url-slashed-password": b"://u:p/",  # a URL's password holding a slash, no @ after
    "at-sign": b"a@b.",
    "url": b"://a",
    "url-encoded": b"%3a%2f%2fa%3a",
    "home": b"/home/",
    "windows-home": b"C:\\Users\\",
    "jwt": b"eyJa.",
    "hex": b"0123456789abcdef",
    "base64": b"QUJD",
    "digits": b"1234567890",
    "spaces": b" ",
    "quotes": b'"',
    "ansi-codes": b"\x1b[31m",
    "ansi-in-word": b"a\x1b[0m",
    # the prefilter's own shapes: a word's rest without its separator, an element that
    # never closes, a quoted named value cut short, a command whose -p never comes
    "prefilter-rest": b"session_a.b-",
    "prefilter-element": b"<api_key a=",
    "prefilter-quoted": b'heroku := "ab',
    "prefilter-login": b"docker login ",
    "prefilter-version": b"version 1.2.3.4 ",
    # the syntaxes read across a type, a subscript, a block or a table's cells
    "go-typed": b"apiKey string ",
    "annotation": b"API_KEY: Final[str",
    "subscript": b'environ["API_TOKEN"]["',
    "hcl-variable": b'variable "db_password" { type = string ',
    "table-row": b"| password | ",
    "yaml-block": b"password: |\n  ",
    "sshpass": b"sshpass -p",
    "yaml-tagged-block": b"token: !!binary &a ",
    "yaml-plain-scalar": b"password: Yml33 x ",
    "quote-in-value": b"password=a'",
    "curl-user": b"curl -u a",
    "curl-flags": b"curl -s ",
    "redis-cli": b"redis-cli -a ",
    "htpasswd": b"htpasswd -b ",
    "table-dashes": b"| token | a |\n---",
    "cache-key": b"Cache restored from key: L",
    # a .netrc line whose password never comes, here-documents on a password reader's line,
    # a constant named by a key whose value never closes, a Secret's map of unending values
    "netrc": b"machine a login b account c ",
    "heredoc-stdin": b"<<a --password-stdin ",
    "php-define": b"define('auth_key', 'a",
    "secret-data": b"data:\n  a: QUJDRUZH",
    # a here-string on a reader's line, a tool's password flag, a workflow command's output,
    # an element's value attribute and a Rust reference type, each with no value after it
    "here-string-stdin": b"<<< a --with-token ",
    "ldap-flag": b"ldapsearch -w ",
    "set-output": b"::set-output name=token::",
    "element-value": b"<secret a='b' value=",
    "rust-reference": b"let token: &'static ",
    # a docker run -e value read as a shell word (bare with its &, or to its quote), a
    # secret store's --value that never comes, and a secret store reading a pipe
    "env-flag-ampersand": b"--env password=a&",
    "env-flag-quoted": b"-e 'password=a",
    "secret-store-value": b"put-parameter --name a ",
    "secret-store-pipe": b"echo a | docker secret create ",
    "sql-set-password": b"set password for 'a",
    "sql-replace": b"alter user a replace ",
    # a credential after a scheme of any name, a password's word in a sentence, a call
    # that takes a user and a password, and sudo reading a pipe, each with no value after it
    "authorization-scheme": b"Authorization: Splunk ",
    "prose-with-password": b"with password ",
    "credential-call": b"HTTPBasicAuth('a', ",
    "login-call": b"smtp.login(a, ",
    "jdbc-connection": b'getConnection(url, "a", ',
    "jdbc-connection-call": b'getConnection(props.get("a"), b(c), ',
    "sudo-stdin": b"echo a | sudo -u ",
    "sudo-here-string": b"sudo -s <<< a ",
    # the benchmark's own secret (``own-S3cret-value-9f8e7d6c``) spaced and folded one
    # character a line, each less its last character: a disguised form that never ends
    "own-spaced": b"o w n - S 3 c r e t - v a l u e - 9 f 8 e 7 d 6 ",
    "own-folded": "\n".join("own-S3cret-value-9f8e7d6").encode() + b"\n",
    # what the prefilter reads again on a hit line (``prefilter._block_below``): a block
    # scalar's indicator after tags, a secret's triple quotes, a here-document, HCL's
    # variable block and an access key id, each opened again and again on one line
    "block-scalar-tags": b": " + b"!: " * 256 + b"> ",  # (re read it from every colon)
    "triple-opens": b'pass"""',
    "heredoc-opens": b"<<a ",
    "hcl-opens": b'variable "',
    "key-ids": b"akia",
    # minified JavaScript: a hit line holding ``:!`` over and over, then a ``>``
    "minified-js": b't.apiKey="x";' + b"e=n?!0:!1," * 256 + b"r=a||b>c;",
}


def _row_unit(prefix: str, run: Run | None) -> bytes:
    """A row's literal and the start of a body too short to finish it, glued to the next."""
    body = (run.alphabet[:2] if run else "a1") or "a1"
    return (prefix + body).encode()


def families() -> dict[str, bytes]:
    """Every family: the hand-written rules' and one per row of the format table."""
    out = dict(HAND_WRITTEN)
    for fmt in FORMATS:
        i = next(i for i, p in enumerate(fmt.parts) if not isinstance(p, Run))
        head = fmt.parts[i]
        literal = head if isinstance(head, str) else head[0]
        after = fmt.parts[i + 1] if i + 1 < len(fmt.parts) else None
        before = fmt.parts[i - 1] if i else None
        lead = before.alphabet[:1] if isinstance(before, Run) else ""
        out[f"row:{fmt.name}"] = lead.encode() + _row_unit(
            literal, after if isinstance(after, Run) else None
        )
    return out


# Lines each holding a find, or a near-match that costs a check: a log made of nothing
# else. No pattern backtracks on them, but every one is a find or a check of its own, so
# their cost is linear at the per-find rate, not the ordinary log's per-byte one.
DENSE: dict[str, bytes] = {
    "dense:yaml-block": b"password: |\n  a\n",
    "dense:yaml-headers": b"  password: |\n",
    "dense:table-rows": b"| password | x |\n",
    "dense:table-separator": b"| password | x |\n|---|---|\n",
    "dense:key-end-base64": b"QUJDRA==\n-----END PRIVATE KEY-----\n",
    "dense:ip-list": b"10.1.2.3\n",
    "dense:e-mails": b"a.b@example.org\n",
    "dense:assignments": b"token=abc\n",
    "dense:own-folded": "\n".join("own-S3cret-value-9f8e7d6c").encode() + b"\n",
}


def line(unit: bytes, size: int) -> bytes:
    """``unit`` repeated to ``size`` bytes, with no line break."""
    return (unit * (size // len(unit) + 1))[:size]


# An ordinary log of 100 KB, the yardstick of a pathological line's time.
ORDINARY = ("2026-12-06T11:20:31Z INFO [worker] finished batch 42 in 120ms\n" * 2000)[:100_000]


def cpu_times(redact: Callable[[str], str], pathological: str) -> tuple[float, float]:
    """CPU-seconds ``redact`` takes on :data:`ORDINARY` and on ``pathological``."""
    times = []
    for text in (ORDINARY, pathological):
        started = time.process_time()
        redact(text)
        times.append(time.process_time() - started)
    return times[0], times[1]
