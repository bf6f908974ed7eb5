"""Code that names a secret without holding one, family by family, as third-party Python
and the standard library write it (``python -m bench redact_realcode`` counts them over
whole packages). Each family's kept lines stand beside a secret in a look-alike syntax,
which is still redacted: the rule reads shape, not the examples."""

from __future__ import annotations

import pytest

from bench.bench_redact_realcode import changed_lines
from relay.redact import MachineFacts, Redactor

REDACTOR = Redactor(MachineFacts(user="runner", home="/home/runner"), max_redacted_share=1.0)
R = "[redacted:secret]"
SECRET = "Xk9qLmZw2VbN7rTp4sYh"

# family -> lines of code that hold no secret
KEPT = {
    "type annotation": (
        "    auth: BasicAuth | None",
        "    proxy_auth: BasicAuth | None = None,",
        "        auth: AuthTypes | UseClientDefault = USE_CLIENT_DEFAULT,",
        "    backend_class: type[AsyncBackend], token: object",
        "    token: EventLoopToken = threadlocals.current_token",
        "    private_key: ed25519.Ed25519PrivateKey,",
        "    __installation_authorization: InstallationAuthorization | None = None",
    ),
    "a variable of its own name": (
        "        self._cookie_jar = cookie_jar",
        "_DHPrivateKey = DHPrivateKey",
        "    env['HTTP_COOKIE'] = cookie_str",
        "        self.token = nextchar",
    ),
    "an expression": (
        "TOKEN = CHAR ^ CTL ^ SEPARATORS",
        "        auth = await self._loop.run_in_executor(",
        "    username = password = host = None",
        "        proxy, auth = val",
        "        tmp_cookie_jar = _UnlimitedCookieJar(",
        "            password=parts['password'],",
        "    authorization = authorization[1].encode('ascii')",
        "MLKEM768X25519PrivateKey = rust_openssl.mlkem.MLKEM768X25519PrivateKey",
        "Ed25519PublicKey.register(rust_openssl.ed25519.Ed25519PublicKey)",
    ),
    "a string that code builds": (
        "    user_pass = '%s:%s' % (unquote(user), unquote(password))",
        "    credentials = '{0}:{1}'.format(user, passwd).encode()",
        "        auth_val = 'Digest %s' % auth",
        '    auth_str = f", auth={auth!r}" if auth else ""',
        '_TOKEN: Final[str] = rf"[{_TCHAR}]+"',
        '    _non_token_end_matcher = re.compile(r"[^{}]+".format(',
    ),
    "a key inside a string the quote closes": (
        "def unix_getpass(prompt='Password: ', stream=None):",
        '        print("shlex: token=" + repr(raw))',
        "        Sets an appropriate 'Cookie:' HTTP header on the `Request`.",
    ),
    "names compared, listed or passed": (
        "            if token.token_type == 'mime-parameters':",
        "    __slots__ = ('scheme', 'user', 'password', 'host', 'tld', 'port')",
        "__all__ = ('Context', 'ContextVar', 'Token', 'copy_context')",
        "           'total_ordering', 'cache', 'cmp_to_key', 'lru_cache', 'reduce',",
        "           'HTTPPasswordMgr', 'HTTPPasswordMgrWithDefaultRealm',",
        '>>> keyring.set_password("system", "username", "password")',
        "    tokenize(readline, tokeneater=printtoken)",
    ),
    "a message, a header's name, a document's example": (
        '            raise InvalidToken("Supplied HOTP value does not match.")',
        '        raise TokenError("EOF in multi-line statement", strstart)',
        'DetachedSignature = "Don\'t embed data in the PKCS7 structure"',
        '    proxy_auth_hdr = "Proxy-Authorization"',
        '_SK_END = b"-----END OPENSSH PRIVATE KEY-----"',
        '#   "token": "v1.1f699f1069f60xxx",',
        "e.g. `pass` in `https://user:pass@host:port/path?query#fragment`",
        "    >>> splitpasswd('user:passwd')",
        "    relay join --save-token keyring` (the OS keyring)",
        "    relay run --pass-secret ANTHROPIC_API_KEY:maker",
    ),
    "a change log's entry": (
        "        * sm/passphrase.h: Likewise.",
        "        - debian/patches/hurd-i386/git-auth-leak.diff: Refreshed.",
        "        tofu/conflicting/1C005AF3-secret.gpg, tofu/conflicting/1C005AF3-1.txt,",
        "  * Add new upstream signing key 19882D92DDA4C400C22C0D56CC2AF4472167BE03",
        "        Added gnutls_x509_crq_get_signature_oid and gnutls_x509_crq_get_pk_oid",
        "        44bd9561 fix signature for VP8RecordCoeffTokens()",
        "        --user and --password respectively.  Renamed ftp_acc and ftp_pass",
        "        * src/groupadd.c: Add missing -p, --password description to the",
        "        --remove-password (-r), --restrict (-R), --administrators (-A),",
        "        gpg: The option --passphrase= can be empty.",
        "        (gpg --change-passphrase your-user-id).",
        '        (opts): Add "--install-key", "--remove-key" and "-C".',
        "  * #759: OpenID Connect - fix Authorization: Basic parsing",
        "        Third try to fix access. Followup 6879efc2c1596d11a6a6ad296f80063b558d5e0f",
        "        gnutls_session_get_master_secret: ADDED",
        "   GNUTLS_BAG_SECRET: ADDED to gnutls/pkcs12.h.",
        "   gnutls_authz_send_callback_func: ADD, callback prototypes.",
        "   gnutls_x509_privkey_export: REMOVED, use the new export.",
        "        * signing-key: Updated.",
        "   * Two new settings ConditionCredential= and AssertCredential= can be",
        "        + Add file (GnuPG key: 0x7EC2DBB6F4DBF434).",
        "        doit:124: rsa pss key: gnutls_x509_crt_verify_data2      |",
        '        http_proxy="http://proxyuser:proxypass@proxyhost:port" Patch by',
    ),
    "a name from code in a change log": (
        "        * Rename _libssh2_ecdsa_key_get_curve_type to _libssh2_ecdsa_get_curve_type",
        "  * Rename _gnutls_pubkey_get_hash_algo to _gnutls_pubkey_hash_algo",
        "        This API wraps xcb_render_composite_glyphs_8/16/32, making them usable.",
        "  the key wraps gnutls_cipher_encrypt_8/16/32",
        "    - ALSA: emu10k1: Fix out of bounds access in snd_emu10k1_pcm_channel_alloc()",
        "  api in the sd_bus_message_read_array() call",
        "        regenerate subset api test result SourceHanSans-Regular.41,4C2E.retaingids.otf",
        "  auth for DejaVuSans-Bold.2024",
    ),
    "a setting named in a sentence": (
        '        "name" and "token: variables, as well as from the return value.',
        '  "key: lines, as read from the file.',
        "        systemd-nspawn command line, using new --set-credential= and",
        "  run --password= foo",
    ),
    "a document's example": (
        "        Cookie: rocky=road; Path=/cookie",
        "    # authorization: https://docs.github.com/en/rest/overview/authentication",
        "    (`--token V`, `-pV`, `sshpass -p V`), `Authorization:` headers",
        '    DONE_TOKEN = "done."',
    ),
}


@pytest.mark.parametrize(
    "line", [pytest.param(line, id=f"{family}: {line.strip()[:40]}") for family, lines in
             KEPT.items() for line in lines]
)  # fmt: skip
def test_code_that_names_a_secret_is_kept(line: str) -> None:
    assert REDACTOR.redact(line + "\n") == line + "\n"


# The same syntaxes holding a secret: still redacted.
LEAKS = (
    (f"    auth: {SECRET}", f"    auth: {R}"),
    (f"        self._cookie_jar = {SECRET}", f"        self._cookie_jar = {R}"),
    ("{user: admin, password: SuperSecret, host: db}", f"{{user: admin, password: {R}, host: db}}"),
    (f"TOKEN = {SECRET} ^ CTL", f"TOKEN = {R} ^ CTL"),
    (f"    user_pass = '{SECRET}' % (user,)", f"    user_pass = '{R}' % (user,)"),
    (f'    token = b"{SECRET}"', f'    token = b"{R}"'),
    (f'    password = "{SECRET}" + suffix', f'    password = "{R}" + suffix'),
    (f'if token == "{SECRET}":', f'if token == "{R}":'),
    (f'config.put("password", "{SECRET}")', f'config.put("password", "{R}")'),
    (f'user.set_password("{SECRET}")', f'user.set_password("{R}")'),
    (f'user.setPassword("{SECRET}", true)', f'user.setPassword("{R}", true)'),
    (f"    proxy, auth = {SECRET}", f"    proxy, auth = {R}"),
    (f"https://user:{SECRET}@host/", "https://[redacted:url-credentials]@host/"),
    (f"relay join --save-token {SECRET}", f"relay join --save-token {R}"),
    (f"        * sm/passphrase: {SECRET}", f"        * sm/passphrase: {R}"),
    (f"  the signing key {SECRET}x9", f"  the signing key {R}"),
    (f"  --password {SECRET} respectively", f"  --password {R} respectively"),
    ("mysql --password correcthorse db", f"mysql --password {R} db"),
    # an ``=`` earlier on the line binds no flag's value (not ``proxy, auth = val``)
    ("x, A=1 --password pjyhIxtbLhzP", f"x, A=1 --password {R}"),
    ("f(password=Zq8v(3W))", f"f(password={R})"),
    (f"  fix Authorization: Basic {SECRET}", "  fix Authorization: Basic [redacted:authorization]"),
    (f"Cookie: session={SECRET}; Path=/", f"Cookie: {R}; Path=/"),
    (f"sshpass -p {SECRET} ssh deploy@host", f"sshpass -p {R} ssh deploy@host"),
    (f"  ConditionCredential= {SECRET} can be", f"  ConditionCredential= {R} can be"),
    (f"  * Rename the key to _{SECRET}", f"  * Rename the key to {R}"),
    (f"  This API wraps {SECRET}/16/32, making", f"  This API wraps {R}, making"),
    (f"  Fix out of bounds access in {SECRET}()", f"  Fix out of bounds access in {R}()"),
    (f"  api test result {SECRET}-Regular.41,4C2E", f"  api test result {R},4C2E"),
    (f'  and "token: {SECRET}, as well as from', f'  and "token: {R}, as well as from'),
    ("{token: hunter, user: bob}", f"{{token: {R}, user: bob}}"),
    (f"  using new --set-credential={SECRET} and", f"  using new --set-credential={R} and"),
    (f"  using new --set-credential= {SECRET} and", f"  using new --set-credential= {R} and"),
    ("  password= hunter2", f"  password= {R}"),
    ("   GNUTLS_BAG_SECRET: X9KQ2PLMZ to gnutls/pkcs12.h.", f"   GNUTLS_BAG_SECRET: {R}"),
    ("   DB_SECRET: ADDED to2x/pkcs12.h", f"   DB_SECRET: {R}"),
)


@pytest.mark.parametrize(("line", "expected"), LEAKS)
def test_a_secret_in_the_same_syntax_is_redacted(line: str, expected: str) -> None:
    assert REDACTOR.redact(line + "\n") == expected + "\n"


def test_the_real_code_bench_counts_lines_where_a_secret_was_found() -> None:
    before = "a\nuser = me@example.org\ntoken = x\n"
    after = "a\nuser = <email>\ntoken = [redacted:secret]\n"
    assert changed_lines(before, after) == [(3, "token = x", "token = [redacted:secret]")]
