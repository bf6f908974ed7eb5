"""The self-identifying token formats, as data: one row per format, matched in one RE2 pass.

A format is a sequence of parts — a literal (``"glpat-"``), a choice of literals
(``("shpat_", "shpss_")``) or a run of characters from an alphabet with a length range — so
that the same row yields the regex that finds it, the generator the tests use, and the
documentation. Where a format carries a checksum (GitHub's and npm's tokens end with a
base62 CRC32 of their random part), the row names it: a token whose checksum holds is
redacted even when it looks like a placeholder, since a real token can never be one.

Why RE2: a log is untrusted input, and RE2 (``google-re2``) matches in time linear in the
input whatever the pattern, where a backtracking engine can be made to take quadratic or
exponential time. Every row's anchor (its first literal) is compiled into one alternation,
so a block is scanned once for every format together; each place found is then matched
against the candidate rows' own regexes within a window of the row's longest length.

The rows are facts about each vendor's published token shape (prefix, length, alphabet);
they are bounded in length, so no match reaches past the streaming overlap.
"""

from __future__ import annotations

import functools
import re
import zlib
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import NamedTuple, cast

import re2

from relay.redact.linear import Searcher, Spans, searcher
from relay.redact.placeholders import is_named_placeholder_value, looks_like_placeholder
from relay.redact.riders import Rider, Riding
from relay.redact.rules import WORD, LineBudget, Span

B62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
UPPER = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
LOWER = "abcdefghijklmnopqrstuvwxyz"
LETTERS = UPPER + LOWER
DIGITS = "0123456789"
HEX = "0123456789abcdef"
HEX_MIXED = HEX + "ABCDEF"
UPPER_ALNUM = UPPER + DIGITS
LOWER_ALNUM = LOWER + DIGITS
B64 = B62 + "+/"
B64URL = B62 + "-_"
BECH32 = "qpzry9x8gf2tvdw0s3jn54khce6mua7l".upper()


@dataclass(frozen=True)
class Run:
    """``low`` to ``high`` characters, each from ``alphabet``."""

    alphabet: str
    low: int
    high: int | None = None

    @property
    def most(self) -> int:
        """The longest the run may be."""
        return self.low if self.high is None else self.high


Part = str | tuple[str, ...] | Run


def crc32_base62(random: str) -> str:
    """The six-character base62 CRC32 that GitHub and npm append to a token's random part."""
    value = zlib.crc32(random.encode())
    out = ""
    while value:
        value, digit = divmod(value, 62)
        out = B62[digit] + out
    return out.rjust(6, "0")


def _crc_ok(body: str) -> bool:
    """GitHub and npm: 30 random base62 characters, then their CRC32 in six."""
    return len(body) == 36 and crc32_base62(body[:30]) == body[30:]


Checksum = Callable[[str], bool]
CHECKSUMS: dict[str, Checksum] = {"crc32-base62": _crc_ok}


@dataclass(frozen=True)
class Format:
    """One token format: its name, its shape, its checksum, and its placeholder shapes.

    ``kind`` is the word in the replacement (``[redacted:<kind>]``) and in the report; it is
    the name unless the format belongs to a family the redactor already names."""

    name: str
    parts: tuple[Part, ...]
    kind: str = ""
    checksum: str | None = None  # a key of CHECKSUMS, checked on what follows the prefix
    placeholders: tuple[str, ...] = ()  # documented example or dummy values: not secrets
    check: Callable[[bytes], bool] | None = None  # a further test of the whole match
    anchor_parts: int = 1  # parts after the first literal that the one-pass scan asks for

    @property
    def label(self) -> str:
        """The name a find of this row is replaced and counted under."""
        return self.kind or self.name

    @property
    def max_length(self) -> int:
        """The longest token of this row: the window its regex is matched in."""
        return sum(p.most if isinstance(p, Run) else max(map(len, _alts(p))) for p in self.parts)


def _alts(part: str | tuple[str, ...]) -> tuple[str, ...]:
    return (part,) if isinstance(part, str) else part


def _in_class(char: str) -> str:
    return "\\" + char if char in "\\]^-[" else char


@functools.cache
def _klass(alphabet: str) -> str:
    """A regex character class for ``alphabet``, with consecutive characters as ranges
    (cached: the table has a few alphabets, asked for by every row at start-up)."""
    codes = sorted(set(map(ord, alphabet)))
    pieces: list[str] = []
    i = 0
    while i < len(codes):
        j = i
        while j + 1 < len(codes) and codes[j + 1] == codes[j] + 1:
            j += 1
        lo, hi = _in_class(chr(codes[i])), _in_class(chr(codes[j]))
        pieces.append(lo if i == j else f"{lo}-{hi}")
        i = j + 1
    return "[" + "".join(pieces) + "]"


def _escape(text: str) -> str:
    return "".join("\\" + c if not c.isalnum() and c != "_" else c for c in text)


# RE2 refuses counts above 1000; a longer run is asked for without a most, and the search
# window (the row's longest length) bounds it instead.
_RE2_MOST = 1000


def part_regex(part: Part, *, capture: bool = False) -> str:
    """The regex of one part; ``capture`` makes a run a group (the random part of a token)."""
    if isinstance(part, Run):
        if part.high is None or part.high == part.low:
            count = f"{{{part.low}}}"
        else:
            count = f"{{{part.low},{part.high}}}"
        if part.most > _RE2_MOST:
            count = f"{{{min(part.low, _RE2_MOST)},}}"
        regex = _klass(part.alphabet) + count
        return f"({regex})" if capture else regex
    alts = _alts(part)
    return _escape(alts[0]) if len(alts) == 1 else "(?:" + "|".join(map(_escape, alts)) + ")"


def format_regex(fmt: Format, *, capture: bool = False) -> str:
    """The row's whole regex; with ``capture``, each run is a group."""
    return "".join(part_regex(p, capture=capture) for p in fmt.parts)


def _uuid(alphabet: str = HEX) -> tuple[Part, ...]:
    return (Run(alphabet, 8), "-", Run(alphabet, 4), "-", Run(alphabet, 4), "-", Run(alphabet, 4),
            "-", Run(alphabet, 12))  # fmt: skip


def _f(name: str, *parts: Part, kind: str = "", checksum: str | None = None,
       placeholders: tuple[str, ...] = (),
       check: Callable[[bytes], bool] | None = None,
       anchor_parts: int = 1) -> Format:  # fmt: skip
    return Format(name, parts, kind=kind, checksum=checksum, placeholders=placeholders,
                  check=check, anchor_parts=anchor_parts)  # fmt: skip


def _random_base62(token: bytes) -> bool:
    """Both cases, and a digit unless long: random base62 has them, words joined by dashes do
    not."""
    body = token[3:]
    upper = any(65 <= c <= 90 for c in body)
    lower = any(97 <= c <= 122 for c in body)
    digit = any(48 <= c <= 57 for c in body)
    return upper and lower and (digit or len(body) >= 32)


def _random_after(skip: int) -> Callable[[bytes], bool]:
    """``_random_base62`` for a body after a prefix of ``skip`` characters, without the
    long-body exemption: both cases and a digit, which words and names seldom have."""

    def check(token: bytes) -> bool:
        body = token[skip:]
        return (
            any(65 <= c <= 90 for c in body)
            and any(97 <= c <= 122 for c in body)
            and any(48 <= c <= 57 for c in body)
        )

    return check


def _letters_and_digits(skip: int) -> Callable[[bytes], bool]:
    """A lower-case body that is random has both letters and digits: a snake_case name has
    no digit, a number no letter."""

    def check(token: bytes) -> bool:
        body = token[skip:]
        return any(97 <= c <= 122 for c in body) and any(48 <= c <= 57 for c in body)

    return check


def _upper_or_digit(skip: int) -> Callable[[bytes], bool]:
    """A body after ``skip`` characters that holds an upper-case letter or a digit: a
    snake_case name glued to the prefix (``ghs_pragma_interrupt``, a C function in a change
    log) holds neither, a drawn token's 16 characters and more nearly always both."""

    def check(token: bytes) -> bool:
        return any(65 <= c <= 90 or 48 <= c <= 57 for c in token[skip:])

    return check


def _tail_random(n: int) -> Callable[[bytes], bool]:
    """The last ``n`` characters hold letters and digits both (a random id, not a word)."""
    return _letters_and_digits_tail(n)


def _letters_and_digits_tail(n: int) -> Callable[[bytes], bool]:
    def check(token: bytes) -> bool:
        body = token[-n:]
        return any(97 <= c <= 122 for c in body) and any(48 <= c <= 57 for c in body)

    return check


def _ifttt_key(token: bytes) -> bool:
    """IFTTT's maker key: the last path segment, 22 or more random characters."""
    key = token.rsplit(b"/", 1)[-1]
    upper = any(65 <= c <= 90 for c in key)
    lower = any(97 <= c <= 122 for c in key)
    return len(key) >= 22 and upper and lower


# What a password may hold in a connection string: printable ASCII but the separators.
_PASSWORD_CHARS = "".join(chr(c) for c in range(33, 127) if chr(c) not in "@/\\\"'`<>;")

# OneSignal's keys are lower-case base32 (RFC 4648 without padding).
B32_LOWER = "abcdefghijklmnopqrstuvwxyz234567"


# Order matters only where two rows can match at the same place: the longer shape first.
# fmt: off
FORMATS: tuple[Format, ...] = (
    # Source forges and CI. GitHub's classic tokens are 36 characters (the last six a
    # checksum); installation tokens may be long (``ghs_<app id>_<jwt>``), hence the range.
    _f("github-token", ("ghp_", "gho_", "ghu_", "ghs_", "ghr_"), Run(B64URL + ".", 16, 4096),
       checksum="crc32-base62", check=_upper_or_digit(4)),
    _f("github-fine-grained-pat", "github_pat_", Run(B62 + "_", 22, 255), kind="github-token"),
    _f("gitlab-pat", "glpat-", Run(B64URL + ".", 20, 80)),
    _f("gitlab-pipeline-trigger-token", "glptt-", Run(HEX, 40)),
    _f("gitlab-runner-token", "glrt-", Run(B64URL + ".", 20, 80)),
    _f("gitlab-runner-registration-token", "GR1348941", Run(B64URL, 20)),
    _f("gitlab-deploy-token", "gldt-", Run(B64URL, 20, 80)),
    _f("gitlab-feed-token", "glft-", Run(B64URL, 20, 80)),
    _f("gitlab-oauth-secret", "gloas-", Run(B64URL, 64)),
    _f("gitlab-scim-token", "glsoat-", Run(B64URL, 20, 80)),
    _f("gitlab-ci-job-token", "glcbt-", Run(B62, 1, 5), "_", Run(B64URL, 20, 80)),
    _f("gitlab-incoming-mail-token", "glimt-", Run(B64URL, 25)),
    _f("gitlab-agent-token", "glagent-", Run(B64URL, 50, 80)),
    _f("gitlab-feature-flag-token", "glffct-", Run(B64URL, 20, 80)),
    _f("gitlab-session-cookie", "_gitlab_session=", Run(LOWER_ALNUM, 32)),
    _f("bitbucket-app-password", "ATBB", Run(B62 + "_=.-", 32)),
    _f("atlassian-api-token", ("ATATT3", "ATCTT3"), Run(B64URL + "=", 186, 200)),
    _f("circleci-token", ("CCIPAT_", "CCIPRJ_"), Run(B62, 22), "_", Run(HEX, 40)),
    _f("buildkite-token", "bkua_", Run(HEX, 40)),
    _f("sonarqube-token", ("sqp_", "sqa_", "squ_"), Run(HEX, 40)),
    # A legacy token (40 hex, no prefix) in the scanner's own property: ``-Dsonar.login=…``.
    _f("sonarqube-legacy-token", ("-Dsonar.login=", "-Dsonar.token=", "sonar.login=",
                                  "sonar.token="), Run(HEX, 40),
       kind="sonarqube-token"),
    _f("sourcegraph-token", "sgp_", Run(HEX_MIXED + "local", 5, 16), "_", Run(HEX_MIXED, 40)),
    _f("octopus-deploy-key", "API-", Run(UPPER_ALNUM, 26)),
    _f("harness-token", ("pat.", "sat."), Run(B64URL, 22), ".", Run(B62, 24), ".",
       Run(B62, 20)),
    _f("jfrog-api-key", "AKCp", Run(B62, 69)),
    _f("jfrog-identity-token", "cmVmdGtuOjAxOj", Run(B62, 50)),
    # JFrog reference tokens: base64 of ``reftkn:01:…``, 64 characters in all.
    _f("jfrog-reference-token", "cmVmd", Run(B62, 59), kind="jfrog-identity-token"),
    _f("nuget-api-key", "oy2", Run(LOWER_ALNUM, 43)),
    _f("rubygems-token", "rubygems_", Run(HEX, 48)),
    _f("clojars-token", "CLOJARS_", Run(B62, 60)),
    _f("packagist-token", ("packagist_uut_", "packagist_out_", "packagist_ouu_"),
       Run(HEX, 68)),
    _f("npm-token", "npm_", Run(B62, 36), checksum="crc32-base62"),
    _f("pypi-token", "pypi-AgE", Run(B64URL, 40, 4000)),
    _f("docker-hub-pat", "dckr_pat_", Run(B64URL, 27)),
    _f("docker-hub-oat", "dckr_oat_", Run(B64URL, 32)),
    _f("terraform-cloud-token", Run(B62, 14), ".atlasv1.", Run(B64URL + "=", 60, 70)),
    _f("pulumi-token", "pul-", Run(HEX, 40)),
    _f("vercel-token", ("vcp_", "vci_", "vca_", "vcr_", "vck_"), Run(B62, 24, 60)),
    _f("netlify-token", "nfp_", Run(B62, 36)),
    _f("fly-token", "fo1_", Run(B64URL, 43)),
    _f("fly-macaroon", "fm2_", Run(B64 + "=_-", 100, 4000)),
    _f("fly-macaroon-v1", ("fm1a_", "fm1r_"), Run(B64, 100, 4000), Run("=", 0, 3)),
    _f("render-token", "rnd_", Run(B62, 32)),
    # Akamai EdgeGrid's client and access tokens: ``akab-`` and two runs of sixteen.
    _f("akamai-edgegrid-token", "akab-", Run(LOWER_ALNUM, 16), "-", Run(LOWER_ALNUM, 16),
       check=_letters_and_digits(5)),
    # Resend's API keys: ``re_``, an id of eight, ``_``, a secret of twenty-four.
    _f("resend-api-key", "re_", Run(B62, 8), "_", Run(B62, 24), check=_random_after(12)),
    _f("deno-deploy-token", ("ddp_", "ddw_"), Run(B62, 36)),
    _f("heroku-token", "HRKU-", Run(B64URL, 58, 64)),
    _f("readme-token", "rdme_", Run(LOWER_ALNUM, 70)),
    _f("infracost-token", "ico-", Run(B62, 32)),
    _f("ionic-token", "ion_", Run(LOWER_ALNUM, 42)),
    _f("scalingo-token", "tk-us-", Run(B64URL, 48)),
    _f("prefect-token", "pnu_", Run(B62, 36)),
    _f("apify-token", "apify_api_", Run(B62, 36)),
    _f("castai-key", "castai_v1_", Run(B62 + "_", 40, 100), check=_random_after(10)),
    _f("chief-tools-token", ("ctp_", "cto_"), Run(B62, 36), check=_random_after(4)),
    _f("figma-token", "figd_", Run(B64URL, 40)),
    _f("figma-pat", "figp_", Run(B64URL + "=", 40, 54), kind="figma-token"),
    _f("frameio-token", "fio-u-", Run(B64URL + "=", 64)),
    _f("typeform-token", "tfp_", Run(B62 + "-_.=", 59)),  # in either case
    _f("linear-api-key", "lin_api_", Run(B62, 40)),
    _f("linear-oauth-token", "lin_oauth_", Run(HEX, 64)),
    _f("launchdarkly-key", ("api-", "sdk-", "mob-"), *_uuid()),
    _f("intra42-secret", "s-s4t2", ("ud-", "af-"), Run(HEX_MIXED, 64)),
    _f("settlemint-token", "sm_", ("pat_", "aat_", "sat_"), Run(B62, 16)),
    _f("ubidots-token", "BBFF-", Run(B62, 30)),
    _f("defined-networking-key", "dnkey-", Run(LOWER_ALNUM + "=_-", 26), "-",
       Run(LOWER_ALNUM + "=_-", 52)),
    _f("notion-token", "ntn_", Run(DIGITS, 11), Run(B62, 35)),
    _f("notion-legacy-token", "secret_", Run(B62, 43)),
    _f("posthog-personal-key", "phx_", Run(B62, 43)),
    _f("adobe-client-secret", "p8e-", Run(B62, 32)),
    _f("airtable-pat", "pat", Run(B62, 14), ".", Run(HEX, 64)),
    _f("contentful-token", "CFPAT-", Run(B64URL, 43)),
    _f("wakatime-key", "waka_", *_uuid()),
    _f("tailscale-key", "tskey-", ("auth-", "api-", "client-", "scim-", "webhook-"),
       Run(B62, 10, 20), "-", Run(B62, 20, 40)),
    # A service token names its environment: ``dp.st.<env>.<key>`` (the env a slug).
    _f("doppler-service-token", "dp.st.", Run(LOWER_ALNUM + "-_", 2, 35), ".", Run(B62, 40, 44),
       kind="doppler-token"),
    _f("doppler-token", "dp.", ("pt.", "st.", "sa.", "ct.", "scim.", "audit."),
       Run(B62, 40, 44)),
    _f("planetscale-token", ("pscale_tkn_", "pscale_pw_", "pscale_oauth_"),
       Run(B64URL + ".=", 32, 64)),
    _f("supabase-token", "sbp_", Run(HEX, 40)),
    _f("supabase-secret-key", "sb_secret_", Run(B64URL, 31)),
    _f("dynatrace-token", "dt0c01.", Run(B62, 24), ".", Run(B62, 64)),
    _f("new-relic-user-key", "NRAK-", Run(UPPER_ALNUM, 27)),
    _f("new-relic-insert-key", "NRII-", Run(B64URL, 32)),
    _f("new-relic-browser-key", "NRJS-", Run(HEX, 19)),
    _f("new-relic-license-key", Run(HEX, 36), "NRAL"),
    _f("grafana-cloud-token", "glc_", Run(B64, 32, 400), Run("=", 0, 2)),
    _f("grafana-service-account-token", "glsa_", Run(B62, 32), "_", Run(HEX_MIXED, 8)),
    _f("grafana-api-key", "eyJrIjoi", Run(B64, 70, 400), Run("=", 0, 2)),
    _f("sentry-org-token", "sntrys_eyJ", Run(B64URL + "+/=", 60, 400)),
    _f("sentry-user-token", "sntryu_", Run(HEX, 64)),
    _f("postman-api-key", "PMAK-", Run(HEX_MIXED, 24), "-", Run(HEX_MIXED, 34)),
    _f("age-secret-key", "AGE-SECRET-KEY-1", Run(BECH32, 58)),
    _f("vault-service-token", "hvs.", Run(B64URL, 24, 200)),
    _f("vault-batch-token", "hvb.", Run(B64URL, 100, 300)),
    _f("vault-recovery-token", "hvr.", Run(B64URL, 24, 200)),
    # Vault's tokens before 1.10: ``s.`` and 24 random base62 (both cases and a digit).
    _f("vault-legacy-token", "s.", Run(B62, 24), check=_random_after(2),
       kind="vault-service-token"),
    _f("onepassword-service-token", "ops_eyJ", Run(B64, 250, 4000), Run("=", 0, 3)),
    _f("onepassword-secret-key-v2", "A3-", Run(UPPER_ALNUM, 6), "-", Run(UPPER_ALNUM, 6), "-",
       Run(UPPER_ALNUM, 5), "-", Run(UPPER_ALNUM, 5), "-", Run(UPPER_ALNUM, 5), "-",
       Run(UPPER_ALNUM, 5), kind="onepassword-secret-key"),
    _f("onepassword-secret-key", "A3-", Run(UPPER_ALNUM, 6), "-", Run(UPPER_ALNUM, 11), "-",
       Run(UPPER_ALNUM, 5), "-", Run(UPPER_ALNUM, 5), "-", Run(UPPER_ALNUM, 5)),
    _f("openshift-token", "sha256~", Run(B64URL, 43)),
    # Authress service client keys: four dotted parts, the third opening with "acc".
    _f("authress-access-key", ("authress_", "scauth_", "ext_", "sc_"), Run(B62, 5, 30), ".",
       Run(B62, 4, 6), ".acc", ("_", "-"), Run(B62 + "-", 10, 32), ".",
       Run(B64URL + "+/=", 30, 120)),
    # Data Center and self-hosted forges, CI and code quality
    _f("bitbucket-data-center-token", "BBDC-", Run(B64URL + "+/@", 40, 50)),
    _f("sonarcloud-token", "sqco_", Run(B62, 59)),
    _f("sourcegraph-legacy-token", "sgp_", Run(HEX_MIXED, 40), kind="sourcegraph-token"),
    _f("sourcegraph-cody-token", "slk_", Run(HEX, 64)),
    _f("crates-io-token", "cio", Run(B62, 32), check=_random_after(3)),
    _f("dependency-track-key", "odt_", Run(B62, 32, 255)),
    _f("stackhawk-key", "hawk.", Run(B64URL, 20), ".", Run(B64URL, 20)),
    _f("spectralops-token", "spu-", Run(LOWER_ALNUM, 32), check=_letters_and_digits(4)),
    _f("endor-labs-key", "endr+", Run(B62 + "-", 16)),
    _f("trufflehog-enterprise-key", "thog-key-", Run(HEX, 16)),
    _f("trufflehog-enterprise-secret", "thog-secret-", Run(HEX, 32)),
    _f("nightfall-key", "NF-", Run(B62, 32), check=_random_after(3)),
    _f("rootly-key", "rootly_", Run(HEX, 64)),
    _f("pganalyze-key", "pgar_", Run(B62, 27)),
    # Portainer's access tokens: ``ptr_`` is also C's pointer prefix, hence the check.
    _f("portainer-token", "ptr_", Run(B64URL + "/+=", 20, 60), check=_random_after(4)),
    _f("teamwork-token", "tkn.v1_", Run(B62, 71), "="),
    _f("voiceflow-key", "VF.", ("DM.", "WS.", ""), Run(HEX_MIXED, 24), ".", Run(B62, 16)),
    _f("salad-cloud-key", "salad_cloud_", Run(B62, 1, 7), "_", Run(B62, 7, 235)),
    _f("fullstory-key", "na1.", Run(B64, 100)),
    _f("jina-key", "jina_", Run(B62, 60)),
    _f("tavily-key", "tvly-", Run(B62, 32)),
    _f("bannerbear-key", "bb_", ("pr_", "ma_"), Run(HEX, 30)),
    _f("besttime-key", "pri_", Run(HEX, 32)),
    _f("flexport-key", "shltm_", Run(B64URL, 40)),
    _f("fleetbase-key", "flb_live_", Run(B62, 20)),
    # Azure DevOps' identifiable PATs: 76 random characters, AZDO, four more.
    _f("azure-devops-pat", Run(B62, 76), "AZDO", Run(B62, 4)),
    _f("segment-token", "sgp_", Run(B62, 64)),
    _f("axiom-token", "xaat-", *_uuid()),
    _f("honeycomb-key", ("hcaik_", "hcaic_"), Run(LOWER_ALNUM, 58)),
    _f("zuplo-key", "zpka_", Run(HEX, 32), "_", Run(HEX, 8)),
    # Clouds
    _f("aws-access-key-id-a3t", "A3T", Run(UPPER_ALNUM, 17), kind="aws-access-key"),
    _f("aws-access-key-id", ("AKIA", "ASIA", "ABIA", "ACCA", "A3T"), Run(UPPER_ALNUM, 16),
       kind="aws-access-key", placeholders=("AKIAXXXXXXXXXXXXXXXX", "AKIA0000000000000000",
                                    "AKIAIOSFODNN7EXAMPLE")),  # AWS's documented example
    _f("aws-mws-key", "amzn.mws.", *_uuid()),
    _f("google-api-key", "AIza", Run(B64URL, 35), kind="google-api-key"),
    _f("google-oauth-client-secret", "GOCSPX-", Run(B64URL, 28)),
    _f("google-oauth-access-token", "ya29.", Run(B64URL, 20, 2000)),
    _f("google-oauth-refresh-token", "1//0", Run(B64URL, 40, 512)),
    _f("azure-ad-client-secret", Run(B64URL + "~.", 3), Run(DIGITS, 1), "Q~",
       Run(B64URL + "~.", 31, 34)),
    _f("azure-storage-key", "AccountKey=", Run(B64, 86), "=="),
    _f("alibaba-access-key-id", "LTAI", Run(B62, 20)),
    _f("tencent-secret-id", "AKID", Run(B62, 32)),
    # Amazon Bedrock's long-lived API keys: ABSK and base64.
    _f("aws-bedrock-api-key", "ABSK", Run(B64, 109, 269), Run("=", 0, 2)),
    _f("clickhouse-cloud-secret-key", "4b1d", Run(B62, 38)),
    _f("scaleway-access-key", "SCW", Run(UPPER_ALNUM, 17)),
    _f("yandex-api-key", "AQVN", Run(B64URL, 35, 38)),
    _f("yandex-iam-token", "t1.", Run(B64URL, 40, 200), Run("=", 0, 2), ".",
       Run(B64URL, 86), Run("=", 0, 2)),
    _f("digitalocean-token", ("dop_v1_", "doo_v1_", "dor_v1_"), Run(HEX, 64)),
    _f("databricks-token", "dapi", Run(HEX, 32), Run("-0123456789", 0, 2)),
    _f("cloudflare-origin-ca-key", "v1.0-", Run(HEX, 24), "-", Run(HEX, 146)),
    _f("dropbox-short-lived-token", "sl.", Run(B64URL, 130, 160)),
    _f("dropbox-short-lived-token-u", "sl.u.", Run(B64URL, 100, 1500),
       kind="dropbox-short-lived-token"),  # the newer form, longer
    _f("dropbox-long-lived-token", Run(LOWER_ALNUM, 11), "AAAAAAAAAA", Run(B64URL + "=", 43)),
    _f("azure-sas-signature", "sig=", Run(B64URL + "%+/", 43, 80)),
    _f("firebase-cloud-messaging-key", "AAAA", Run(B64URL, 7), ":", Run(B64URL, 140)),
    _f("salesforce-token", "00D", Run(B62, 12, 15), "!", Run(B62 + "._", 80, 120)),
    _f("salesforce-refresh-token", "5AEP861", Run(B62 + "._=", 80, 300)),
    # AWS STS session tokens are base64 of a binary blob that opens with its version and
    # "origin_ec"; in a presigned URL they are percent-encoded.
    _f("aws-session-token", "IQoJb3JpZ2luX2Vj", Run(B64 + "%=", 100, 4000)),
    _f("aws-appsync-api-key", "da2-", Run(LOWER_ALNUM, 26)),
    _f("aws-bedrock-short-lived-key", "bedrock-api-key-YmVkcm9jay5hbWF6b25hd3MuY29t",
       Run(B64 + "%=", 40, 4000)),
    _f("amazon-lwa-client-secret", "amzn1.oa2-cs.v1.", Run(HEX, 64)),
    _f("amazon-lwa-token", ("Atza|", "Atzr|"), Run(B64URL, 100, 1000)),
    _f("azure-container-registry-key", Run(B64, 42), "+ACR", Run(B62, 6)),
    _f("cloudflare-api-token", ("cfut_", "cfat_"), Run(B62, 40), Run(HEX, 8)),
    _f("cloudflare-global-api-key", "cfk_", Run(B62, 40), Run(HEX, 8)),
    # A tunnel's token is base64 JSON: {"a":"<account>","t":"<tunnel>","s":"<secret>"}.
    _f("cloudflare-tunnel-token", "eyJhIjoi", Run(B64, 100, 300), Run("=", 0, 2)),
    _f("mongodb-atlas-service-account-secret", "mdb_sa_sk_", Run(B64URL, 40)),
    _f("aiven-service-password", "AVNS_", Run(B64URL, 19, 24)),
    _f("google-chat-webhook", "chat.googleapis.com/v1/spaces/", Run(B64URL, 7, 20),
       "/messages?key=", Run(B64URL, 39), "&token=", Run(B64URL, 43), Run("=", 0, 1)),
    # MaxMind: six, an underscore, 29, ``_mmk``. The underscore is a run of one so that the
    # row's first literal, its anchor, is the rare ``_mmk``.
    _f("maxmind-license-key", Run(B62, 6), Run("_", 1), Run(B62, 29), "_mmk"),
    # AI and data
    _f("anthropic-key", "sk-ant-", Run(B64URL, 20, 400), kind="anthropic-key"),
    _f("openai-project-key", "sk-", ("proj-", "svcacct-", "admin-"), Run(B64URL, 20, 400),
       kind="openai-key"),
    _f("openai-legacy-key", "sk-", Run(B62, 20), "T3BlbkFJ", Run(B62, 20), kind="openai-key"),
    # Older OpenAI keys (and look-alikes of other vendors) are random base62: both cases and
    # a digit, which kebab-case names (``sk-learn-…``) lack.
    _f("openrouter-key", "sk-or-v1-", Run(HEX, 64)),
    _f("langfuse-secret-key", "sk-lf-", *_uuid()),
    _f("deepseek-key", "sk-", Run(HEX, 32)),
    _f("together-key", "tgp_v1_", Run(B64URL, 43)),
    _f("openai-key", "sk-", Run(B64URL, 20, 400), kind="openai-key", check=_random_base62),
    _f("huggingface-token", "hf_", Run(LETTERS, 34)),
    _f("huggingface-org-token", "api_org_", Run(LETTERS, 34)),
    _f("groq-key", "gsk_", Run(B62, 52)),
    _f("replicate-token", "r8_", Run(B62, 37)),
    _f("perplexity-key", "pplx-", Run(B62, 48)),
    _f("xai-key", "xai-", Run(B62, 80)),
    _f("langsmith-key", "lsv2_", ("pt_", "sk_"), Run(HEX, 32), "_", Run(HEX, 10)),
    _f("pinecone-key", "pcsk_", Run(B62 + "_", 40, 120)),
    _f("nvidia-api-key", "nvapi-", Run(B64URL, 64)),
    _f("firecrawl-key", "fc-", Run(HEX, 32)),
    _f("heygen-key", "sk_V2_", Run(B62 + "_", 40, 50)),
    _f("runway-key", "key_", Run(HEX, 128)),
    _f("elevenlabs-key", "sk_", Run(HEX, 48)),
    _f("iex-cloud-token", "sk_", Run(LOWER_ALNUM, 32), check=_letters_and_digits(3)),
    _f("new-relic-query-key", "NRIQ-", Run(B64URL, 25, 32)),
    _f("new-relic-admin-key", "NRAA-", Run(HEX, 27)),
    _f("new-relic-rest-key", "NRRA-", Run(HEX, 42)),
    _f("new-relic-pixie-key", "px-", ("api-", "dep-"), *_uuid()),
    # The mobile app token: AA, 40 hex, -NRMA (the AA a run, so the anchor is -NRMA).
    _f("new-relic-mobile-token", Run("A", 2), Run(HEX, 40), "-NRMA"),
    _f("mapbox-temporary-token", "tk.eyJ", Run(B64URL, 50, 300), ".", Run(B64URL, 20, 40)),
    _f("intercom-token", "dG9rOj", Run(B64, 50, 60), Run("=", 0, 2)),  # base64 of "tok:"
    # Payments and commerce
    # Stripe's publishable keys (``pk_live_``) are public by design: not in the table.
    _f("stripe-secret-key", ("sk_live_", "sk_test_", "sk_prod_", "rk_live_", "rk_test_",
                             "rk_prod_"),
       Run(B62, 10, 247), kind="stripe-key"),
    _f("stripe-webhook-secret", "whsec_", Run(B62 + "+/=", 20, 200), kind="stripe-key"),
    _f("shopify-token", ("shpat_", "shpca_", "shppa_", "shpss_"), Run(HEX_MIXED, 32)),
    _f("square-token", ("sq0atp-", "sq0csp-"), Run(B64URL, 22, 43)),
    _f("woocommerce-key", ("ck_", "cs_"), Run(HEX, 40)),
    _f("facebook-access-token", "EAA", Run(B62, 100, 255)),
    _f("square-access-token", "EAAA", Run(B64URL, 22, 60), check=_random_after(4)),
    _f("braintree-token", "access_token$", ("production$", "sandbox$"), Run(LOWER_ALNUM, 16),
       "$", Run(HEX, 32)),
    _f("flutterwave-secret-key", "FLWSECK", Run("_TEST", 0, 5), "-", Run(B62, 32), "-X"),
    # The public key is for the browser, but scanners flag it: a log has no need of it.
    _f("flutterwave-public-key", "FLWPUBK", Run("_TEST", 0, 5), "-", Run(B62, 32), "-X"),
    _f("flutterwave-encryption-key", "FLWSECK", Run("_TEST", 0, 5), "-", Run(B62, 12),
       kind="flutterwave-secret-key"),
    _f("shippo-token", "shippo_", ("live_", "test_"), Run(HEX_MIXED, 40)),
    # Twitch stream keys: live_, the account number, a random part. Before the other live_
    # rows, whose alphabets would take its underscore.
    _f("twitch-stream-key", "live_", Run(DIGITS, 8, 12), "_", Run(B62, 30, 36)),
    _f("lob-key", ("live_", "test_"), Run(HEX, 35)),
    _f("gocardless-token", "live_", Run(B64URL + "=", 40)),
    _f("easypost-key", ("EZAK", "EZTK"), Run(B62, 54)),
    _f("duffel-token", "duffel_", ("live_", "test_"), Run(B64URL + "=", 43)),
    _f("plaid-access-token", "access-", ("sandbox-", "development-", "production-"), *_uuid()),
    _f("mapbox-secret-token", "sk.eyJ", Run(B64URL, 50, 300), ".", Run(B64URL, 20, 40)),
    _f("stripe-payment-intent-secret", "pi_", Run(B62, 24), "_secret_", Run(B62, 25),
       kind="stripe-key"),
    _f("recharge-key", ("sk_test_", "sk_"), ("1x", "2x", "3x", "5x", "10x"), Run("123", 1), "_",
       Run(HEX_MIXED, 64)),
    _f("tickettailor-key", "sk_", Run(DIGITS, 4), "_", Run(DIGITS, 6), "_", Run(HEX, 32)),
    _f("klaviyo-private-key", "pk_", Run(HEX, 34)),
    _f("clickup-token", "pk_", Run(DIGITS, 7, 9), "_", Run(UPPER_ALNUM, 32)),
    _f("pagarme-key", "ak_live_", Run(B62, 30)),
    _f("ramp-client-secret", "ramp_sec_", Run(B62, 48)),
    _f("paddle-api-key", ("pdl_live_apikey_", "pdl_sdbx_apikey_"), Run(B62 + "_", 40, 80),
       check=_random_after(16)),
    _f("paypal-access-token", "A21AA", Run(B64URL, 80, 120), check=_random_after(5)),
    _f("zoho-token", "1000.", Run(HEX, 32), ".", Run(HEX, 32)),
    _f("sidekiq-credentials", Run(HEX, 8), Run(":", 1), Run(HEX, 8), "@",
       ("gems.contribsys.com", "enterprise.contribsys.com")),
    # Messaging, mail, webhooks
    # Slack tokens go on with digits (a team or user id): ``xoxo-party.jpg`` is a file name.
    # Slack's tokens: a team or user id of eight to thirteen digits first (``xoxb-12345-…`` is
    # a document's), then more ids and a random part; refresh tokens a digit and 140 more.
    _f("slack-token", "xox", ("b-", "p-", "a-", "r-", "s-", "e-", "o-", "c-"), Run(DIGITS, 8, 13),
       "-", Run(B62 + "-", 8, 250), kind="slack-token"),
    _f("slack-refresh-token", "xoxe-", Run(DIGITS, 1), "-", Run(B62, 140, 150),
       kind="slack-token"),
    # Legacy workspace and app tokens may go on with letters: random base62 then.
    _f("slack-legacy-token", "xox", ("a-", "r-"), Run(B62 + "-", 8, 48), kind="slack-token",
       check=_random_after(5)),
    _f("slack-app-token", "xapp-", Run(DIGITS, 1), "-", Run(B62 + "-", 10, 200),
       kind="slack-token"),
    # Configuration tokens: ``xoxe.`` before a bot or user token's prefix and one digit.
    _f("slack-config-access-token", "xoxe.", ("xoxb-", "xoxp-"), Run(DIGITS, 1), "-",
       Run(UPPER_ALNUM + LOWER, 163, 166), kind="slack-token"),
    _f("slack-webhook", ("https://hooks.slack.com/", "http://hooks.slack.com/", "hooks.slack.com/"),
       ("services/", "workflows/", "triggers/"),
       Run(B62 + "_/+-", 20, 300), kind="slack-webhook"),
    _f("discord-webhook", ("discord.com", "discordapp.com", "ptb.discord.com",
                           "canary.discord.com"),
       ("/api/webhooks/", "/api/v6/webhooks/", "/api/v7/webhooks/", "/api/v8/webhooks/",
        "/api/v9/webhooks/", "/api/v10/webhooks/"),
       Run(DIGITS, 17, 20), "/", Run(B64URL, 60, 68)),
    # Rows that open with ``/`` or ``.`` are path parts: their host stands before them.
    # Teams' connectors: two ids, a hex id, an id, and (since 2024) ``/V2`` and a signature.
    _f("teams-webhook-v2", "webhook.office.com/webhookb2/",
       *_uuid(LOWER_ALNUM), "@", *_uuid(LOWER_ALNUM), "/IncomingWebhook/",
       Run(LOWER_ALNUM, 32), "/", *_uuid(LOWER_ALNUM), "/V2", Run(B64URL, 32, 64),
       kind="teams-webhook-v2"),
    _f("teams-webhook", "webhook.office.com/webhookb2/",
       *_uuid(LOWER_ALNUM), "@", *_uuid(LOWER_ALNUM),
       "/IncomingWebhook/", Run(LOWER_ALNUM, 32), "/", *_uuid(LOWER_ALNUM)),
    _f("zapier-webhook", "hooks.zapier.com/hooks/", ("catch/", "standard/"), Run(DIGITS, 5, 10),
       "/", Run(B62, 5, 32)),
    _f("ifttt-webhook", "maker.ifttt.com/", ("use/", "trigger/"),
       Run(B64URL + "/", 22, 200), check=_ifttt_key),
    _f("pagerduty-integration-url", "events.", ("pagerduty.com", "eu.pagerduty.com"),
       "/integration/", Run(HEX_MIXED, 32)),
    _f("telegram-bot-url", "api.telegram.org/", ("bot", "file/bot"), Run(DIGITS, 5, 16), ":",
       Run(B64URL, 30, 40), kind="telegram-bot-token"),
    # Mattermost's incoming hooks: ``/hooks/`` and 26 lower-case letters and digits on any
    # host; Rocket.Chat's: an id of 17 and a token of 48.
    _f("mattermost-webhook", "/hooks/", Run(LOWER_ALNUM, 26),
       check=_tail_random(26)),
    _f("rocketchat-webhook", "/hooks/", Run(B62, 17), "/",
       Run(B62, 48)),
    _f("feishu-webhook", ("open.feishu.cn", "open.larksuite.com"), "/open-apis/bot/v2/hook/",
       Run(LOWER_ALNUM + "-", 20, 40)),
    _f("netlify-build-hook", "api.netlify.com/build_hooks/", Run(HEX, 24)),
    _f("vercel-deploy-hook", "api.vercel.com/v1/integrations/deploy/", Run(B64URL, 8, 40), "/",
       Run(B62, 8, 20)),
    _f("flowdock-token-url", "api.flowdock.com/", ("v1/messages/chat/", "v1/messages/team_inbox/",
                                                 "messages/chat/", "messages/team_inbox/"),
       Run(HEX, 32)),
    _f("webhook-site-url", "webhook.site/", *_uuid()),
    # Incident and automation services whose URL is the credential.
    _f("make-webhook", "hook.", Run(LOWER_ALNUM, 2, 8), ".make.com/", Run(LOWER_ALNUM, 32)),
    _f("make-webhook-legacy", "hook.integromat.com/", Run(LOWER_ALNUM, 32), kind="make-webhook"),
    _f("pipedream-webhook", Run(LOWER_ALNUM, 12, 40), ".m.pipedream.net"),
    _f("victorops-webhook", "alert.victorops.com/integrations/generic/20131114/alert/",
       *_uuid(HEX_MIXED)),
    _f("grafana-oncall-webhook", Run(LOWER_ALNUM + "-", 1, 63),
       ".grafana.net/oncall/integrations/v1/", Run(LOWER + "_", 3, 40), "/", Run(B62, 20, 40)),
    _f("squadcast-webhook", "api.squadcast.com/v2/incidents/api/", Run(HEX_MIXED, 32, 64)),
    _f("betterstack-webhook", ("betterstack.com", "betteruptime.com"),
       "/api/v1/incoming-webhook/", Run(B62, 16, 64)),
    # Better Stack's (formerly Better Uptime's) heartbeats: whoever has the URL reports the job
    # done (``https://uptime.betterstack.com/api/v1/heartbeat/<token>``).
    _f("betterstack-heartbeat-url", ("betterstack.com", "betteruptime.com"),
       "/api/v1/heartbeat/", Run(B62, 16, 64)),
    # Healthchecks.io's pings: a check's UUID, or the project's ping key (22 URL-safe base64
    # characters) and the check's slug.
    _f("healthchecks-ping-url", "hc-ping.com/", *_uuid(HEX_MIXED)),
    _f("healthchecks-ping-key-url", "hc-ping.com/", Run(B64URL, 22), "/",
       Run(LOWER_ALNUM + "-_", 1, 100), kind="healthchecks-ping-url"),
    # RingCentral's (Glip's) incoming webhooks: the webhook's id (a UUID) after ``/webhook/``
    # or ``/webhook/v2/``, on Glip's host or RingCentral's (read as any URL-safe run of 20 or
    # more, the UUID among them).
    _f("glip-webhook-v2", ("hooks.glip.com", "hooks.ringcentral.com"), "/webhook/v2/",
       Run(B64URL, 20, 400), kind="glip-webhook"),
    _f("glip-webhook", ("hooks.glip.com", "hooks.ringcentral.com"), "/webhook/",
       Run(B64URL, 20, 400)),
    _f("flock-webhook", "api.flock.com/hooks/sendMessage/", *_uuid(HEX_MIXED)),
    _f("airtable-webhook", "hooks.airtable.com/workflows/v1/genericWebhook/",
       Run(B62 + "/", 40, 120)),
    _f("azure-function-key-url", Run(LOWER_ALNUM + "-", 1, 60), ".azurewebsites.net/api/",
       Run(B64URL + "/", 1, 128), "?code=", Run(B64URL + "=%", 40, 120)),
    _f("apps-script-url", "script.google.com/macros/s/", Run(B64URL, 40, 120)),
    _f("wecom-webhook", "qyapi.weixin.qq.com/cgi-bin/webhook/send?key=", *_uuid(HEX_MIXED)),
    # Webex's incoming webhooks: the id is base64 of ``ciscospark://us/WEBHOOK/<uuid>``.
    _f("webex-webhook", ("webexapis.com", "api.ciscospark.com"), "/v1/webhooks/incoming/",
       Run(B64URL + "=", 40, 200)),
    # Jira's automation rules' incoming webhooks (on its maker's, Code Barrel's, host too).
    _f("jira-automation-webhook", ("automation.atlassian.com", "automation.codebarrel.io"),
       "/pro/hooks/", Run(HEX, 40, 64)),
    # Deploy hooks: whoever has the URL builds and deploys the project.
    _f("cloudflare-pages-deploy-hook", "api.cloudflare.com/client/v4/pages/webhooks/deploy_hooks/",
       *_uuid(HEX_MIXED)),
    _f("render-deploy-hook", "api.render.com/deploy/srv-", Run(LOWER_ALNUM, 20, 24), "?key=",
       Run(B64URL, 8, 64)),
    # (its key after the hook's other parameters: ``?ref=main&key=…``, ``?imgURL=…&key=…``,
    # a branch's or an image's name with its slashes and colons, a CI's ``$GITHUB_SHA``)
    _f("render-deploy-hook-params", "api.render.com/deploy/srv-", Run(LOWER_ALNUM, 20, 24),
       "?", Run(B64URL + "=&.%/+:~${}", 1, 256), "&key=", Run(B64URL, 8, 64),
       kind="render-deploy-hook"),
    # Zenduty's integrations (``/api/integration/generic/<key>/``), Zoom Team Chat's incoming
    # webhooks, a Bitrix24 portal's inbound webhooks (``/rest/<user>/<code>/``), and
    # Cronitor's telemetry URLs (``cronitor.link/p/<API key>/<monitor>``).
    _f("zenduty-webhook", "zenduty.com/api/integration/", Run(LOWER_ALNUM + "_-", 2, 40), "/",
       *_uuid(HEX_MIXED)),
    _f("zoom-incoming-webhook", "integrations.zoom.us/chat/webhooks/incomingwebhook/",
       Run(B64URL, 16, 40)),
    _f("bitrix24-webhook", ".bitrix24.", Run(LOWER + ".", 2, 10), "/rest/", Run(DIGITS, 1, 10),
       "/", Run(LOWER_ALNUM, 16)),  # (a two-part ending too: ``.bitrix24.com.br``)
    _f("cronitor-telemetry-url", "cronitor.link/p/", Run(HEX_MIXED, 32)),
    # Oracle's thin driver: ``jdbc:oracle:thin:user/password@//host:port/service``.
    _f("oracle-jdbc-credentials", "jdbc:oracle:", ("thin:", "oci:", "oci8:"),
       Run(B64URL + ".$", 1, 64), "/", Run(_PASSWORD_CHARS, 4, 128), "@",
       kind="url-credentials"),
    # Any service's ``/webhook/<uuid>`` (n8n, Node-RED, self-hosted hubs): the id is the key.
    _f("uuid-webhook", ("/webhook/", "/webhooks/", "/hook/", "/webhook-test/"),
       *_uuid(HEX_MIXED)),
    _f("discord-bot-token", Run("MNO", 1), Run(B64URL, 23, 25), ".", Run(B64URL, 6), ".",
       Run(B64URL, 27, 38), anchor_parts=3),  # dot, six, dot, 27: dotted names seldom are
    # Facebook's app access tokens: the app's id, a bar (or %7C in a URL), the app's secret.
    _f("facebook-app-token", Run(DIGITS, 15, 16), ("|", "%7C", "%7c"), Run(B64URL, 27, 40),
       check=_random_after(17)),
    _f("telegram-bot-token", Run(DIGITS, 8, 10), ":AA", Run(B64URL, 33)),
    _f("twilio-api-key", "SK", Run(HEX_MIXED, 32)),
    # An account's SID and its auth token, as a client's basic credentials print them.
    _f("twilio-account-credentials", "AC", Run(HEX, 32), ":", Run(HEX, 32)),
    _f("sendgrid-key", "SG.", Run(B64URL, 22), ".", Run(B64URL, 43)),
    _f("sendgrid-key-any", "SG.", Run(B64URL + "=.", 66, 69), kind="sendgrid-key",
       check=_random_after(3)),
    _f("brevo-key", ("xkeysib-", "xsmtpsib-"), Run(HEX_MIXED, 64), "-", Run(B62, 16)),
    _f("mailchimp-key", Run(HEX, 32), "-us", Run(DIGITS, 1, 2)),
    _f("mailgun-key", "key-", Run(HEX, 32)),
    _f("hubspot-token", "pat-", ("na1-", "eu1-"), *_uuid()),
    # Asana's personal access tokens: ``2/<user>/<app>:<32 hex>`` (``1/`` before them).
    _f("asana-token", Run("12", 1), "/", Run(DIGITS, 13, 20), "/", Run(DIGITS, 13, 20), ":",
       Run(HEX, 32), anchor_parts=2),
    _f("asana-token-v1", Run("1", 1), "/", Run(DIGITS, 13, 20), ":", Run(HEX, 32),
       kind="asana-token", anchor_parts=2),
    _f("twitter-bearer-token", "AAAAAAAAAAAAAAAAAAAAA", Run(B62 + "%", 80, 120)),
    _f("adafruit-key", "aio_", Run(B62, 28)),
    _f("teams-legacy-webhook", ("outlook.office.com/webhook/", "outlook.office365.com/webhook/"),
       *_uuid(LOWER_ALNUM), "@", *_uuid(LOWER_ALNUM), "/IncomingWebhook/",
       Run(LOWER_ALNUM, 32), "/", *_uuid(LOWER_ALNUM), kind="teams-webhook"),
    _f("tines-webhook", Run(LOWER_ALNUM + "-", 1, 63), ".tines.com/webhook/", Run(LOWER_ALNUM, 32),
       "/", Run(LOWER_ALNUM, 32)),
    _f("mailersend-token", "mlsn.", Run(HEX, 64)),
    _f("pubnub-secret-key", "sec-c-", Run(B62, 48)),  # publish and subscribe keys are public
    _f("onesignal-key", "os_v2_app_", Run(B32_LOWER, 103)),
    # What a GitHub Actions step asks the runner to mask is a secret by its own word.
    _f("actions-add-mask", "::add-mask::",
       Run("".join(chr(c) for c in range(33, 127) if chr(c) not in "\"'`"), 8, 4096),
       check=lambda token: token[12:13] not in (b"$", b"%")),  # not ``$TOKEN``: a variable
    # Tokens in general: a JWT (signed or not: the signature may be empty), and one wrapped in
    # base64 (``eyJ`` encodes as ``ZXlK``).
    _f("jwt", "eyJ", Run(B64URL, 5, 4096), ".", Run(B64URL, 5, 8192), ".", Run(B64URL, 0, 4096)),
    _f("jwt-base64", "ZXlK", Run(B64, 60, 4000), Run("=", 0, 2)),
    # A private key's PEM block in base64 (a Kubernetes secret's value, ``echo … | base64 -d``):
    # its BEGIN line encoded, then the rest of the block.
    _f("private-key-base64", (
        "LS0tLS1CRUdJTiBQUklWQVRFIEtFWS0tLS0t", "LS0tLS1CRUdJTiBSU0EgUFJJVkFURSBLRVktLS0tL",
        "LS0tLS1CRUdJTiBFQyBQUklWQVRFIEtFWS0tLS0t", "LS0tLS1CRUdJTiBEU0EgUFJJVkFURSBLRVktLS0tL",
        "LS0tLS1CRUdJTiBPUEVOU1NIIFBSSVZBVEUgS0VZLS0tLS",
        "LS0tLS1CRUdJTiBFTkNSWVBURUQgUFJJVkFURSBLRVktLS0tL",
        "LS0tLS1CRUdJTiBQR1AgUFJJVkFURSBLRVkgQkxPQ0stLS0tL"),
       Run(B64, 16, 16000), Run("=", 0, 2)),  # (its lines below: ``engine``)
)
# fmt: on
# The base64 key's row: the engine and the stream stretch its finds over the lines of base64
# below it, as ``base64 key.pem`` wraps them at 76 columns.
B64_KEY = "private-key-base64"


def _slashes_escaped(
    fmt: Format, slash: str = "\\/", colon: str = ":", name: str = "json-escaped"
) -> Format | None:
    """The row as a JSON string holds it where its encoder escapes every slash
    (``https:\\/\\/hooks.slack.com\\/services\\/…``, PHP's and some Java encoders'
    default), or as a URL's query holds it percent-encoded (``slash`` ``%2F``, ``colon``
    ``%3A``): each literal's ``/`` as ``slash``; None for a row with no slash in a literal."""
    marks = "".join(sorted(set(slash) - set(B62)))  # what a run that held slashes holds now

    def escaped(part: Part) -> Part:
        if isinstance(part, Run):
            if "/" not in part.alphabet:
                return part
            high = part.most + part.most * (len(slash) - 1)
            return Run(part.alphabet + marks, part.low, high)
        if isinstance(part, tuple):
            return tuple(a.replace("/", slash).replace(":", colon) for a in part)
        return part.replace("/", slash).replace(":", colon)

    if all(isinstance(p, Run) or "/" not in "".join(_alts(p)) for p in fmt.parts):
        return None
    check = fmt.check
    raw_slash, raw_colon = slash.encode(), colon.encode()
    return Format(
        f"{fmt.name}-{name}",
        tuple(escaped(p) for p in fmt.parts),
        kind=fmt.label,
        checksum=fmt.checksum,
        placeholders=tuple(p.replace("/", slash).replace(":", colon) for p in fmt.placeholders),
        check=None
        if check is None
        else (lambda token: check(token.replace(raw_slash, b"/").replace(raw_colon, b":"))),
        anchor_parts=fmt.anchor_parts,
    )


# The rows with a slash in a literal, as a JSON encoder that escapes slashes writes them,
# and percent-encoded as a URL's query holds a URL: tables of their own, each read only in a
# block that holds its escaped slash (a substring search), where in the one pass they cost
# every log 3% of it.
ESCAPED_FORMATS = tuple(twin for fmt in FORMATS if (twin := _slashes_escaped(fmt)) is not None)
ESCAPED_SLASH = b"\\/"
PERCENT_FORMATS = tuple(
    twin
    for fmt in FORMATS
    if (twin := _slashes_escaped(fmt, "%2F", "%3A", "url-encoded")) is not None
)
PERCENT_SLASH = b"%2F"
ESCAPED_SLASHES = {ESCAPED_SLASH: ESCAPED_FORMATS, PERCENT_SLASH: PERCENT_FORMATS}


def _options(*, capture: bool = True) -> re2.Options:
    options = re2.Options()
    # Each row's own regex: a small automaton, read at a hit's place only.
    options.max_mem = 16 << 20
    options.never_capture = not capture
    return options


@dataclass(frozen=True)
class Found:
    """Where one format matched, and whether its checksum vouches for it."""

    start: int
    end: int
    fmt: Format


_FILLER = Found(0, 0, Format("placeholder", ("",)))  # a row's shape, filled with filler
_FLOOD = Format("token-flood", ("",), kind="secret")  # more near-matches than a line holds
_ANCHOR_RUN = 4  # characters of the body that an anchor asks for after the prefix
_KEY_BYTES = 4  # bytes of a hit past the run-first rows' literals that pick its candidates
_MOST_RIDINGS = 8  # the passes with riders kept compiled (each engine's, by its secrets)
_MOST_KEYS = 4096  # hits' first bytes whose candidates are kept (a hit holds an anchor)
_MOST_VERDICTS = 1024  # tokens whose checksum-or-placeholder verdict is kept
_VERDICT_BYTES = 96  # and how long each may be (two hundred kilobytes at most in all)
_OUTCOME_REACH = 128  # the longest run of a hit's rows' characters whose outcome is kept
_MOST_OUTCOMES = 1024  # hits' outcomes kept (their bytes 170 kilobytes at most), then dropped
# An outcome kept: a find's length and row; ``_NO_ROW``, ``_FILLED`` (``_FILLER``).
_Outcome = tuple[int, "Format | None"]
_NO_ROW: _Outcome = (0, None)
_FILLED: _Outcome = (-1, None)


@dataclass(frozen=True)
class _Anchor:
    """How a row is found: its first literal, and how far its match may start before it."""

    literal: bytes
    row: int
    lead: int  # the most characters the row has before its first literal (0: it opens it)
    offset: int = 0  # where the literal is in a hit of the anchor regex
    # The least run the row has before its literal, as one class: a cheap test that spares
    # the window search on a near-miss (a line of ``0-us1`` repeated).
    before: re.Pattern[bytes] | None = None
    least: int = 0  # how many characters that test reads


def _lead_chars(before: Run) -> int:
    """How much of the run before a row's first literal its anchor asks for: one character.
    More would refuse more near-misses in the scan, but each counted character costs the
    DFA states on every log (measured: 8 characters make the whole scan twice as slow)."""
    return 1 if before.low else 0


def _anchor_regex(fmt: Format) -> tuple[int, str]:
    """Where a row's first literal is, and the regex that the one-pass scan looks for.

    The scan looks only for each row's first literal with the first few characters around
    it: a DFA that followed every row's whole body at once would need a state for each mix
    of half-read bodies, and spend its time building them. Each place found is then held to
    the row's whole shape by the row's own regex."""
    i = next(i for i, p in enumerate(fmt.parts) if not isinstance(p, Run))
    before = fmt.parts[i - 1] if i else None
    regex = part_regex(fmt.parts[i])
    if isinstance(before, Run) and _lead_chars(before):
        regex = _klass(before.alphabet) + f"{{{_lead_chars(before)}}}" + regex
    for after in fmt.parts[i + 1 : i + 1 + fmt.anchor_parts]:
        if not isinstance(after, Run):
            regex += part_regex(after)
            continue
        # A row that asks for more parts (a shape whose literal is common) gets whole runs.
        most = after.low if fmt.anchor_parts > 1 else min(after.low, _ANCHOR_RUN)
        if most:
            regex += _klass(after.alphabet) + f"{{{most}}}"
        if after.low != (after.high or after.low) or after.low > most:
            break  # what follows a run of open length cannot be placed
    return i, regex


class FormatScanner:
    """Every row of the table, found in one RE2 pass over its anchors, then checked whole."""

    def __init__(self, formats: tuple[Format, ...] = FORMATS) -> None:
        self.formats = formats
        # Each row's own regex, compiled the first time its anchor is hit: most logs hit few
        # rows, and compiling all of them is most of a short run's start-up.
        self._strict: list[tuple[Searcher, Searcher] | None] = [None] * len(formats)
        # Rows that open with a literal and whose runs each end where the next part cannot
        # start (no run's characters open what follows it: a literal and one run, most of
        # them) are matched at their anchor without a regex, each run as long as it can be,
        # with no going back: what RE2's leftmost-first match of that shape gives.
        self._shaped = [_one_way_shape(f) for f in formats]
        self._longest = [f.max_length for f in formats]
        anchors: dict[str, None] = {}
        self._by_byte: dict[int, list[_Anchor]] = {}  # rows that open with their literal
        self._run_first: list[_Anchor] = []  # rows that open with a run (few)
        for row, fmt in enumerate(formats):
            i, regex = _anchor_regex(fmt)
            anchors[regex] = None
            lead = sum(p.most for p in fmt.parts[:i] if isinstance(p, Run))
            before = fmt.parts[i - 1] if i else None
            offset = _lead_chars(before) if isinstance(before, Run) else 0
            runs = [p for p in fmt.parts[:i] if isinstance(p, Run)]
            least = sum(p.low for p in runs)
            union = "".join(sorted({c for p in runs for c in p.alphabet}))
            lead_re = re.compile(f"{_klass(union)}{{{least}}}".encode()) if least else None
            for alt in _alts(fmt.parts[i]):  # type: ignore[arg-type]
                entry = _Anchor(alt.encode(), row, lead, offset, lead_re, least)
                if lead:
                    self._run_first.append(entry)
                else:
                    self._by_byte.setdefault(ord(alt[0]), []).append(entry)
        for entries in self._by_byte.values():
            entries.sort(key=lambda a: a.row)  # table order decides between rows
        # Rows that open with a run, by where their literal is from the hit and its first byte:
        # a hit is compared with the few whose literal can be there, not with all of them.
        self._run_at: dict[tuple[int, int], tuple[_Anchor, ...]] = {}
        for entry in sorted(self._run_first, key=lambda a: a.row):
            key = (entry.offset, entry.literal[0])
            self._run_at[key] = (*self._run_at.get(key, ()), entry)
        self._offsets = sorted({a.offset for a in self._run_first})
        # A hit's candidates by its first bytes (whether it is glued to a word before it,
        # then ``_KEY_BYTES`` past the run-first rows' literals): a dict look-up instead
        # of a list built and walked for every hit; filled as hits come, up to a bound.
        self._key_bytes = max(self._offsets, default=0) + _KEY_BYTES
        # With them, the characters their rows are made of, when each opens with its literal
        # at the hit (None else: see ``_outcome_chars``).
        self._candidates: dict[tuple[bool, bytes], tuple[tuple[_Anchor, ...], bytes | None]] = {}
        # What the rows made of a hit (a find's length and row, filler, or no row), by its
        # bytes up to the first one that none of its rows holds: a log prints the same
        # example, masked value or near-miss again and again (``AKIAXXXXXXXXXXXXXXXX``,
        # ``ghp_xxxx…`` on every step), and each was matched and judged again: two thirds
        # of the 21,000 hits in the 100 MB bench log are such repeats (the table's first pass
        # over it 0.735 -> 0.700 CPU-s, a second 0.578 -> 0.515). Dropped whole when full,
        # so that a log's later repeats are kept too (a thousand saved nearly as many
        # checks there as 4,096).
        self._outcomes: dict[bytes, _Outcome] = {}
        self._row_chars: dict[int, frozenset[int]] = {}
        # Whether a row's token is a find (its checksum holds, or it is no placeholder), by
        # the row and the token's text (which decide its runs too: the rows' regexes hold no
        # assertion): a log prints the same example or masked value again and again
        # (``AKIAXXXXXXXXXXXXXXXX`` on every step), and the placeholder test costs more than
        # the search that found it. Short tokens only, up to a bound.
        self._verdicts: dict[tuple[int, bytes], bool] = {}
        # Every byte a character (Latin-1): the anchors are ASCII, so this finds what UTF-8
        # would, and it reads lines that are not UTF-8 as the prefilter does. The engine
        # runs it over the whole block, once: its hits are the table's only candidates.
        options = _options(capture=False)
        # Room for the DFA cache of the one-pass anchor scan: the forward automaton gets about
        # a third of it, and at 16 MB its states (7 MB on the build log) filled it and were
        # thrown away and built again all through a long log (the pass over the 100 MB build
        # log 0.352 -> 0.317 CPU-s at 24 MB, the redactor's peak 2 MB higher); 64 MB grew it
        # 3 MB.
        options.max_mem = 24 << 20
        options.encoding = re2.Options.Encoding.LATIN1  # type: ignore[attr-defined]
        self._options = options
        # In sorted order: RE2 factors the common beginning of neighbouring alternatives, so
        # the automaton's states hold fewer places and cost less to build (the pass over the
        # 100 MB bench log 0.41 -> 0.36 CPU-s while they are built). Which anchor matches
        # at a hit does not matter: its rows are found from its bytes, in table order, and
        # the search goes on from the find's end at the latest (``finds``).
        self.search = re2.compile("|".join(sorted(anchors)).encode(), options)
        self.anchor_search: Searcher = searcher(self.search, within=True)
        self._anchor_at: Searcher = searcher(self.search, anchored=True, within=True)
        # The pass with riders (``riders``): the anchors' regex and theirs, by their patterns;
        # and the riders it last ran with, which a pass given none runs with too (their
        # places unread): one automaton's states in memory rather than two.
        self._riding: dict[tuple[bytes, ...], Searcher] = {(): self.anchor_search}
        self._last: tuple[Rider, ...] = ()

    def ride(self, riders: Sequence[Rider]) -> None:
        """Compile the pass with ``riders`` now (``finds`` does when first given them)."""
        key = tuple(rider.pattern for rider in riders)
        if key not in self._riding:
            if len(self._riding) > _MOST_RIDINGS:  # engines with other secrets, gone
                del self._riding[next(k for k in self._riding if k)]
                # and out of the regex library's own cache of compiled patterns too (128),
                # which would keep each dropped pass's automaton, megabytes, as long as the
                # process runs (what still uses a pattern keeps it: this drops no search)
                re2.purge()
            pattern = b"|".join((self.search.pattern, *key))
            self._riding[key] = searcher(re2.compile(pattern, self._options), within=True)
        self._last = tuple(riders)

    def finds(self, block: bytes, start: int = 0, riding: Riding = ()) -> Iterator[Found]:
        """Each accepted match at or after ``start``: at a token's edges, not a placeholder.
        ``riding``: searches that ride on the pass (``riders``), each with the list its
        places are added to, in order, as the finds are read (all of them once they are
        read to their end).

        (The loop runs once a hit, thousands of times a megabyte of some logs: what it
        calls is bound to local names once, and ``_at``'s look-up is written out here.)

        A hit where a rider's place opens and no anchor does is passed over (the next
        search finds the anchor that the anchors' own search would: the anchors come first
        in the regex, so where one opens the hit is its own), and where the loop skips
        bytes after an anchor (the rest of its hit, of a token found, of a flooded line),
        each rider is asked for its places there."""
        done = start
        size = len(block)
        if not riding:
            riding = [(rider, []) for rider in self._last]
        patterns = tuple(rider.pattern for rider, _ in riding)
        if patterns not in self._riding:
            self.ride([rider for rider, _ in riding])
        search = self._riding[patterns]
        anchor_at = self._anchor_at
        spent = LineBudget(block).spent
        check = self._check
        cached = self._candidates
        outcomes = self._outcomes
        key_bytes = self._key_bytes
        startswith = block.startswith
        pos = start
        while pos < size:
            hs, he = search(block, pos, size)[0]
            if hs < 0:
                return
            if riding:
                rode = False
                byte = block[hs]
                for rider, places in riding:
                    if byte in rider.first and rider.at(block, hs):
                        rode = True
                        if rider.every or not places:
                            places.append(hs)
                # (each rider's ``at`` is exact: a hit it refuses is an anchor's, which a
                # line's budget counts as the anchors' own pass would)
                if rode and anchor_at(block, hs, size)[0][0] < 0:
                    pos = hs + 1
                    continue  # a rider's place, and no anchor here
            pos = he if he > hs else hs + 1
            if hs < done:
                _ride(block, hs + 1, pos, riding)
                continue  # inside the token found last
            if (stop := spent(hs)) >= 0:
                yield Found(hs, stop, _FLOOD)  # a line of near-matches: see ``LineBudget``
                done = pos = stop + 1
                _ride(block, hs + 1, pos, riding)
                continue
            # ``_at``: the first row, in table order, whose whole shape matches here
            glued = (
                hs > 0
                and block[hs - 1] in WORD
                and block[hs] in WORD
                and not after_escape(block, hs)
            )
            key = (glued, block[hs : hs + key_bytes])
            entry = cached.get(key)
            if entry is None:
                candidates = self._candidates_at(*key)
                entry = (candidates, self._outcome_chars(candidates))
                if len(cached) < _MOST_KEYS:
                    cached[key] = entry
            candidates, chars = entry
            found = None
            kept = None  # the hit's bytes that decide its outcome (see ``_outcome_chars``)
            outcome = None
            if chars is not None:
                run = block[hs : hs + _OUTCOME_REACH]
                reach = len(run) - len(run.lstrip(chars))
                if reach < _OUTCOME_REACH:
                    kept = run[: max(reach + 1, key_bytes)]  # (the head the rows came from)
                    outcome = outcomes.get(kept)
            if outcome is None:
                for anchor in candidates:
                    at = hs + anchor.offset
                    if not startswith(anchor.literal, at):
                        continue
                    if anchor.before is not None and (
                        at < anchor.least
                        or not anchor.before.fullmatch(block, at - anchor.least, at)
                    ):
                        continue
                    found = check(block, anchor, at)
                    if found is not None:
                        break  # a find, or ``_FILLER``: no other row
                if kept is not None:
                    if len(outcomes) >= _MOST_OUTCOMES:
                        outcomes.clear()
                    outcomes[kept] = (
                        _NO_ROW
                        if found is None
                        else _FILLED
                        if found is _FILLER
                        else (found.end - hs, found.fmt)
                    )
            elif outcome[1] is not None:
                found = Found(hs, hs + outcome[0], outcome[1])
            elif outcome is _FILLED:
                found = _FILLER
            if found is not None and found is not _FILLER and found.start >= done:
                done = found.end
                pos = min(pos, done)  # (the anchor's hit may run past the token)
                _ride(block, hs + 1, pos, riding)
                yield found
            else:
                pos = hs + 1  # another row's anchor may start inside this one's hit

    def _candidates_at(self, glued: bool, head: bytes) -> tuple[_Anchor, ...]:
        """The rows whose literal may be at a hit that opens with ``head`` (``glued``: right
        after a word character): the rows that open with their literal, in table order
        (none when glued: refused anyway), then those that open with a run."""
        out = [
            a
            for a in (() if glued else self._by_byte.get(head[0], ()))
            if a.literal[: len(head)] == head[: len(a.literal)]
        ]
        for offset in self._offsets:
            if offset < len(head):
                out += self._run_at.get((offset, head[offset]), ())
        return tuple(out)

    def _outcome_chars(self, candidates: tuple[_Anchor, ...]) -> bytes | None:
        """The characters the ``candidates``' rows are made of (their literals' and runs'),
        when each opens with its literal at the hit; else None (no candidate, or one with
        a run before its literal, which reads the bytes before the hit).

        Then the hit's outcome is decided by its bytes up to the first that is none of
        these (or the block's end), with the head its candidates came from: each row is
        matched from the hit (its regex, or ``_one_way_match``), over those characters
        alone, within its window; what ``_check`` reads past the match is the byte after
        it; the word before the hit was read before its candidates were (none of these
        when glued), and the row's checks read the token alone."""
        if not candidates or any(anchor.lead for anchor in candidates):
            return None
        chars: set[int] = set()
        for anchor in candidates:
            row = self._row_chars.get(anchor.row)
            if row is None:
                row = self._row_chars[anchor.row] = frozenset(
                    b
                    for part in self.formats[anchor.row].parts
                    for text in ((part.alphabet,) if isinstance(part, Run) else _alts(part))
                    for b in text.encode()
                )
            chars |= row
        return bytes(sorted(chars))

    def compile_all(self) -> None:
        """Every row's own regex, compiled now (see ``Engine.warm``)."""
        for row in range(len(self.formats)):
            self._strict[row] or self._compile(row)

    def _compile(self, row: int) -> tuple[Searcher, Searcher]:
        """The row's regex (each run a group), as a search and as a match at a place."""
        regex = re2.compile(format_regex(self.formats[row], capture=True).encode(), _options())
        self._strict[row] = found = (
            searcher(regex, within=True),
            searcher(regex, anchored=True, within=True),
        )
        return found

    def _check(self, block: bytes, anchor: _Anchor, at: int) -> Found | None:
        """The row's find at the anchor; ``_FILLER`` when its shape holds a placeholder."""
        row = anchor.row
        fmt = self.formats[row]
        stop = min(at + self._longest[row], len(block))  # the searches read within the text
        shaped = self._shaped[row]
        if shaped is not None:
            spans = _one_way_match(shaped, block, at, stop)
            if spans is None:
                return None
            s, e = spans[0]
        elif anchor.lead:
            strict = self._strict[row] or self._compile(row)
            spans = strict[0](block, max(0, at - anchor.lead), stop)
            s, e = spans[0]
            if s < 0 or s > at or e <= at:
                return None
        else:
            strict = self._strict[row] or self._compile(row)
            spans = strict[1](block, at, stop)
            s, e = spans[0]
            if s < 0:
                return None
        if s > 0 and block[s - 1] in WORD and block[s] in WORD and not after_escape(block, s):
            return None  # inside a longer word: "xoxo-party", "TASK0123…"
        if e < len(block) and block[e] in _ALNUM:
            return None  # a longer run than the format allows: a hash, not this key
        if e < len(block) and block[e] in b"#*":
            return _FILLER  # the rest is masked (``xoxp-…-####``): a document's example
        if fmt.check is not None and not fmt.check(block[s:e]):
            return None
        token = block[s:e]
        verdicts = self._verdicts
        key = (row, token)
        verdict = verdicts.get(key)
        if verdict is None:
            # The placeholder test reads the runs alone: a format's own literals are no filler.
            if len(spans) == 2:  # one run (most rows): its bytes, without a join
                body = block[spans[1][0] : spans[1][1]] if spans[1][1] > spans[1][0] else b""
            else:
                body = b"".join([block[a:b] for a, b in spans[1:] if b > a])
            verdict = (
                fmt.checksum is not None and _checksum_holds(fmt, block, s, e)
            ) or not _is_placeholder(fmt, token, body)
            if len(verdicts) < _MOST_VERDICTS and e - s <= _VERDICT_BYTES:
                verdicts[key] = verdict
        return Found(s, e, fmt) if verdict else _FILLER

    def spans(self, block: bytes, lowered: bytes, start: int) -> Iterator[Span]:
        """The engine's interface (see ``rules.Rule.spans``)."""
        for found in self.finds(block, start):
            yield found.start, found.end, found.fmt.label


def _alts_bytes(part: str | tuple[str, ...]) -> tuple[bytes, ...]:
    return tuple(a.encode() for a in _alts(part))


class _RunStep(NamedTuple):
    """A run as ``_one_way_match`` reads it: its characters, the least it holds and the most
    (None: as far as the row's window goes)."""

    alphabet: bytes
    low: int
    most: int | None


# A row's parts as ``_one_way_match`` reads them: a literal's alternatives, or a run.
_Step = tuple[bytes, ...] | _RunStep
Span2 = tuple[int, int]


def _one_way_shape(fmt: Format) -> tuple[_Step, ...] | None:
    """The row's steps when it opens with a literal and no run's characters can open the part
    after it (nor a run follow a run that may be empty); else None (its regex decides)."""
    parts = fmt.parts
    if not parts or isinstance(parts[0], Run):
        return None
    steps: list[_Step] = []
    for i, part in enumerate(parts):
        if not isinstance(part, Run):
            alts = _alts_bytes(part)
            if not all(alts):
                return None
            steps.append(alts)
            continue
        if not part.alphabet.isascii():  # the regex counts characters; this, bytes
            return None
        if i + 1 < len(parts):
            after = parts[i + 1]
            if isinstance(after, Run):
                opens = set(after.alphabet.encode()) if after.low else None
            else:
                opens = {a.encode()[0] for a in _alts(after) if a}
            if opens is None or opens & set(part.alphabet.encode()):
                return None
        alphabet = part.alphabet.encode()
        if part.most > _RE2_MOST:  # as ``part_regex`` asks for it: no most, the window bounds it
            steps.append(_RunStep(alphabet, min(part.low, _RE2_MOST), None))
        else:
            steps.append(_RunStep(alphabet, part.low, part.most))
    return tuple(steps)


def _one_way_match(steps: tuple[_Step, ...], block: bytes, at: int, stop: int) -> Spans | None:
    """The row's match at ``at`` within ``block[:stop]``, as its regex's anchored match
    gives it (the whole, then each run), or None, for ``_one_way_shape``'s rows: each run
    as long as it may be (a shorter one leaves one of its own characters where the next
    part must start), each literal's alternatives tried in order for the rest (what the
    regex's priority is)."""
    spans: list[Span2] = [(at, at)]
    end = _one_way_rest(steps, 0, block, at, stop, spans)
    if end < 0:
        return None
    spans[0] = (at, end)
    return spans


def _one_way_rest(
    steps: tuple[_Step, ...], i: int, block: bytes, pos: int, stop: int, spans: list[Span2]
) -> int:
    """Where the steps from ``i`` end when matched at ``pos`` (their runs' spans added to
    ``spans``), or -1."""
    while i < len(steps):
        step = steps[i]
        i += 1
        if step.__class__ is _RunStep:  # (not isinstance: this runs for every part of a hit)
            alphabet, low, most = step
            end = stop if most is None else min(stop, pos + most)
            run = block[pos:end]
            size = len(run) - len(run.lstrip(alphabet))
            if size < low:
                return -1
            spans.append((pos, pos + size))
            pos += size
            continue
        alts = cast(tuple[bytes, ...], step)
        if len(alts) == 1:  # one literal (most parts): there, or no match
            alt = alts[0]
            if not block.startswith(alt, pos) or pos + len(alt) > stop:
                return -1
            pos += len(alt)
            continue
        fits = [a for a in alts if block.startswith(a, pos) and pos + len(a) <= stop]
        if len(fits) == 1:
            pos += len(fits[0])
            continue
        kept = len(spans)
        for alt in fits:  # (an alternative that opens another: each in turn, as the regex)
            end = _one_way_rest(steps, i, block, pos + len(alt), stop, spans)
            if end >= 0:
                return end
            del spans[kept:]
        return -1
    return pos


def after_escape(block: bytes, at: int) -> bool:
    """``block[at]`` follows a terminal's escape sequence (``\x1b[32m``, a colour): its last
    letter is no word the token at ``at`` is glued to."""
    esc = block.rfind(b"\x1b[", max(0, at - _LONGEST_ESCAPE), at)
    return (
        esc >= 0
        and block[at - 1] in _ESCAPE_END
        and not block[esc + 2 : at - 1].strip(b"0123456789;")
    )


_LONGEST_ESCAPE = 24  # ``\x1b[38;2;255;255;255m``, a colour of 24 bits, and a little more
_ESCAPE_END = frozenset(b"ABCDEFGHJKSTfmsu")  # the final letters of the sequences logs hold


def _ride(block: bytes, start: int, stop: int, riding: Riding) -> None:
    """Each rider's places in ``[start, stop)``, which the pass skipped."""
    if stop > start:
        for rider, places in riding:
            if rider.every or not places:
                rider.places(block, start, stop, places)


_ALNUM = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789")


def _checksum_holds(fmt: Format, block: bytes, start: int, end: int) -> bool:
    """Whether the token's checksum (over what follows its prefix) holds."""
    if fmt.checksum is None:
        return False
    text = block[start:end].decode("ascii", "replace")
    return CHECKSUMS[fmt.checksum](text[len(_prefix(fmt, text)) :])


def _prefix(fmt: Format, text: str) -> str:
    head = fmt.parts[0]
    if isinstance(head, Run):
        return ""
    return next((a for a in _alts(head) if text.startswith(a)), "")


def _is_placeholder(fmt: Format, text: bytes, body: bytes) -> bool:
    if fmt.placeholders and text.decode("ascii", "replace") in fmt.placeholders:
        return True
    return looks_like_placeholder(body)


_PREFIXES = tuple(
    sorted(
        {a.encode() for f in FORMATS if not isinstance(f.parts[0], Run) for a in _alts(f.parts[0])}
        - {b""},
        key=len,
        reverse=True,
    )
)
_EXAMPLES = frozenset(p.encode() for f in FORMATS for p in f.placeholders)


def holds_a_format(value: bytes) -> bool:
    """Whether ``value`` holds a token of the table (which then names it, by format).

    A prefix alone is not enough: ``sk_``, ``pk_`` or ``1000.`` open many a value that no
    row's shape fits, and such a value must still be judged as a named value."""
    return next(iter(SCANNER.finds(value, 0)), None) is not None


def is_named_placeholder(value: bytes) -> bool:
    """A value under a secret's name that only a template or a document holds: a format's
    documented example, or filler or a template's word once a known prefix is stripped
    (``dckr_pat_XXXX…``, ``ghp_your_token_here``)."""
    if value in _EXAMPLES:
        return True
    if not value.startswith(_PREFIXES):  # one C-level test; most values carry no prefix
        return is_named_placeholder_value(value)
    body = next(value[len(p) :] for p in _PREFIXES if value.startswith(p))
    return len(body) >= 4 and looks_like_placeholder(body)


SCANNER = FormatScanner()


@functools.cache
def escaped_scanner(slash: bytes = ESCAPED_SLASH) -> FormatScanner:
    """The twin table of the escaped ``slash`` (``ESCAPED_SLASHES``), compiled when a block
    first holds it."""
    return FormatScanner(ESCAPED_SLASHES[slash])
