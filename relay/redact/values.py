"""Whether a value that a name calls secret is one: judged by the name's meaning and the
value's shape, not by lists of examples.

A name is a secret's when its last word is a secret word (``DB_PASSWORD``, ``apiKey``,
``client_secret_prod``), not when it merely holds one (``foreignKey``, ``key_length``,
``token_endpoint``, ``secretRef``). ``key`` and ``token`` name secrets unless the word before
says whose they are (``bucket_key``, ``partition_key``, ``public_key``, ``page_token``).

A value is no secret when it is a reference or an expression (``X25519.key_length``,
``settings.CLIENT_SECRET``, ``os.getenv(``, ``$2``, ``!Ref Param``), markup
(``<xsd:element …``), a boolean or a small number, a host, a plain URL or a version, or a
placeholder (``test``, ``example``, a run of one character, a repeated pattern, ascending
digits). Each of these holds only when the value's parts look named, not drawn: a dotted
``Tr0ub4dor.Xk92mLq``, a host-shaped ``k9x2m.q7z3p``, ``Kx9q::2mVb``, ``Zq8vLp(3Wn5r`` and
``MyCompanyExample2024`` are passwords (see ``made_part``, ``is_placeholder_phrase``).
Only the finds of the rules that read names go through here (``Kind.SECRET``): the format
table's tokens are judged by their own shape.
"""

from __future__ import annotations

import re

from relay.redact.expressions import (
    bare,
    close_runs_on,
    is_annotation,
    is_expression_around,
    is_first_of_arguments,
    is_format_template,
    is_same_variable,
    made_part,
)
from relay.redact.named import looks_random, named_identifier
from relay.redact.placeholders import is_named_placeholder_value, is_reference

# What stands before a value: its name, maybe a closing quote or bracket, the separator, and
# an opening quote (``"bucket_key": "``, ``key_length = ``, ``ACCESS_KEY:=``).
_NAME_BEFORE = re.compile(
    rb"([A-Za-z0-9_.\-]{1,80})\\{0,3}[\"']?\]?[ \t]*"
    rb"(?:=>|:{1,3}=|\?=|\+=|\.=|=|:)[ \t]*(?:!!?[A-Za-z]+[ \t]+)?\\{0,3}[\"'`]?$"
)
_WORDS = re.compile(rb"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|[0-9]+")
# A name compared with a value, or called with it (a constructor, a setter).
_NAME_USED = re.compile(
    rb"([A-Za-z0-9_.]{1,80}?)(?:[ \t]*[=!]==?[ \t]*|(?:\.(?:assign|set|append))?\([ \t]*"
    rb"|[\"'][ \t]*,[ \t]*)[\"']$"
)
# An e-mail address ending where a name read before a value ends.
_AN_EMAIL = re.compile(rb"[A-Za-z0-9_.+\-]@[A-Za-z0-9\-]+(?:\.[A-Za-z0-9\-]+)+$")
# Words after the meaning that only say which one (``password_prod``, ``SECRET_KEY_BASE``).
_QUALIFIERS = frozenset(
    b"value val data b64 base64 hex raw str string enc encoded encrypted plain plaintext "
    b"cleartext clear default prod production dev development staging stage qa "
    b"live local old new current ci main base v x".split()
)
# Names that say nothing of their own: an XML attribute's ``value=`` follows ``key="…"``.
_NEUTRAL = frozenset(b"value val v data content text default".split())
# A name's last word that means a secret (a word that ends in one of the long ones, too:
# ``dbpassword``, ``accesstoken``).
_SECRET_EXACT = frozenset(
    b"key pwd pass auth authorization salt jwt dsn sas psk hmac otp pin pat sig seed creds cred "
    b"apikey authkey authtoken".split()
)
_SECRET_ENDS = (
    b"password", b"passwd", b"passphrase", b"passcode", b"secret", b"secrets", b"token",
    b"apikey", b"credential", b"credentials", b"signature", b"cookie", b"session", b"bearer",
    b"mnemonic", b"privatekey", b"secretkey", b"accesskey", b"masterkey", b"signingkey",
    b"licensekey", b"encryptionkey",
)  # fmt: skip
# A name's last word that says it is something about a secret, not the secret: its length,
# its URL, where it is kept, what it is called (``key_length``, ``token_endpoint``,
# ``secretRef``, ``key_down_event``, ``X-API-Name``, ``COMMUNICATION_API_VERSION``).
_PROPERTIES = frozenset(
    b"length len size count num number limit max min type types kind name names id ids "
    b"index idx url uri urls endpoint host port path file filename dir directory ref "
    b"reference event events handler callback listener version ver format fmt field fields "
    b"column label prefix suffix pattern regex policy mode method provider source store "
    b"class enabled required expire expires expiry expiration ttl timeout header headers "
    b"param params arg args flag option options config configuration settings setting "
    b"helper util utils manager generator validator schema template hint description desc "
    b"title message msg error err exception status state check rotation age created updated "
    b"time date timestamp strength complexity iterations rounds algorithm alg input box "
    b"button form prompt placeholder visible visibility toggle reset change changed forgot "
    b"down up press pressed released binding bindings map mapping lookup location".split()
    # what serves, loads or checks one (``AUTH_SERVICE``, ``token_loader_cls``)
    + b"service services server loader cls".split()
    # a public digest of the secret, not the secret (``key_fingerprint``, ``key_sha256``)
    + b"fingerprint fingerprints checksum sha1 sha256 sha512 md5".split()
)
# Whose ``key`` or ``token`` is no secret: a database's, a map's, a cache's, a public one,
# a page's, a tokenizer's.
_NOT_SECRET_OWNERS = frozenset(
    b"foreign primary sort partition bucket cache hash range row column object map dict "
    b"lookup group shard sharding idempotency dedup dedupe composite unique natural "
    b"surrogate translation i18n message locale label field attribute attr prop property "
    b"entry item element record event state public publishable pub known list "
    b"tag metadata meta param query order join lock trace span correlation cursor "
    b"page pagination continuation cancellation cancel pad eos bos unk sep cls mask "
    b"eof start end special s3 file route storage_class sql".split()
)
# Whose ``key`` or ``token`` may be either (a registry's, a host's, a node's, a sync's, a
# path's, an index's, a request's): the value's shape decides, drawn or not
# (``REGISTRY_TOKEN=tHNRWUi7…``, not ``registry_key = "docker.io"``).
_MAYBE_OWNERS = frozenset(b"host node registry sync path index request".split())
_VENDORS = frozenset(
    b"cloudflare heroku stripe github gitlab slack twilio sendgrid mailgun mailchimp datadog "
    b"sentry npm pypi docker aws azure gcp openai anthropic shopify okta auth0 vault discord "
    b"telegram firebase algolia pusher mapbox newrelic pagerduty snyk vercel netlify "
    b"supabase digitalocean linode hetzner huggingface postman grafana databricks notion "
    b"linear jira atlassian bitbucket circleci".split()
)

_BOOLEAN = frozenset(
    b"true false yes no on off null none nil undefined nan empty".split()
    # an Authorization header's scheme with no credential after it (``"Basic " + …``)
    + b"basic bearer digest negotiate sso-key".split()
)
# A setting's state: what a switch, a consent or a requirement is set to, never a credential
# (``password_auth: enabled``, ``cookie_consent=accepted``, ``password_login: disabled``).
_STATES = frozenset(
    b"enabled disabled enable disable required optional accepted rejected declined allowed "
    b"denied granted revoked active inactive expired pending unset auto automatic manual "
    b"always never supported unsupported ignored skipped".split()
    # what a message says of it (``timeStampToken is missing``)
    + b"missing invalid malformed incorrect wrong valid present absent".split()
    # a request's credentials mode and a cookie's SameSite (``credentials: 'include'``)
    + b"include omit same-origin lax strict".split()
    # a change log's entry for a function or a constant (``gnutls_reauth: Added``)
    + b"added removed deprecated renamed".split()
)
# What closes a call or a literal, alone where a value would be: the rest of a prompt's line
# (``getpass("Password: ")``), code, not a value.
_CLOSERS = re.compile(rb"[)\]};,]+:?|[,)][ \t)][^\r\n]*")
# A cookie's or a setting's own pair as the value (``Set-Cookie: cookie_consent=accepted``):
# judged by what its value is.
_PAIR = re.compile(rb"[A-Za-z_][A-Za-z0-9_.\-]*=([^=\s;]+)")
# Prose where a value goes (``put your unique phrase here``, ``ask the admin for it``): four
# words or more of letters and single spaces, two of them words that only a sentence has
# (``My Sql pw``, ``correct horse battery staple`` are passwords).
_PROSE = re.compile(rb"[A-Za-z'][A-Za-z0-9'\-]*(?: [A-Za-z0-9'][A-Za-z0-9'\-]*){3,}[.!?]?")
# Three words of a passive sentence (``will be replaced``, ``to be set``): a note.
_SHORT_PROSE = re.compile(
    rb"[a-z']+ (?:be|been|is|are) [a-z']+ed[.!?]?|[a-z']+ [a-z']+ (?:be|been)"
)
# A feature's or an API version's name: words and a date (``analytics-usage-cost-2026-08-24``)
_DATED_NAME = re.compile(rb"[a-z]+(?:-[a-z]+){2,}-20[0-9]{2}-[01][0-9]-[0-3][0-9]")
# A private class or a type variable (``_ProviderT``, ``_Client``)
_PRIVATE_TYPE = re.compile(rb"_(?:[A-Z][a-z]+)+T")
# ``"done."``, ``Updated.``: a word that ends a sentence
_LAST_WORD = re.compile(rb"[A-Za-z][a-z]{1,11}\.")
# ``ADDED``, ``REMOVED``, ``EOF``: a status or a constant, in capitals and no digit
_STATUS = re.compile(rb"[A-Z]{3,12}[.,]?")
# A status and its note, a change log's sentence (``ADDED to gnutls/pkcs12.h.``, ``ADD,
# callback prototypes.``): the capitals, then words in small letters to a full stop.
_STATUS_NOTE = re.compile(rb"[A-Z]{3,12},?(?: [a-z][A-Za-z0-9_./\-]*)+\.")
# A sentence: a capital, three words or more, a full stop (a passphrase has no stop).
_SENTENCE = re.compile(rb"[A-Z][a-z']*(?: [A-Za-z][A-Za-z'\-]*){2,}[.!?]")
# An HTTP header's name or a PowerShell command's (``Proxy-Authorization``,
# ``ConvertTo-SecureString``): capitalised words joined by dashes.
_HEADER_NAME = re.compile(rb"[A-Z][a-z]+(?:[A-Z][a-z]+)*(?:-[A-Z][a-z]+(?:[A-Z][a-z]+)*)+")
_SENTENCE_WORDS = frozenset(
    b"a an the your you my our their to here there is are be of for with in on at from see "
    b"please enter use set by as it this that same above below not ask".split()
    + b"will would can should must be been was were has have had".split()
)
# An Amazon resource name: what a resource is called (a KMS key, a secret in Secrets
# Manager), not what it holds.
_ARN = re.compile(rb"arn:aws[a-z\-]*:[a-z0-9\-]+:[a-z0-9\-]*:(?:[0-9]{12}|aws)?:")
_PLACEHOLDER_WORDS = frozenset(
    b"test testing tests example examples sample demo dummy foo bar baz foobar fake mock "
    b"todo tbd fixme abc abc123 xyz value secret password passwd pass token changeme "
    b"placeholder string".split()
)
_SMALL_NUMBER = re.compile(rb"[+\-]?[0-9]{1,5}(?:\.[0-9]+)?|0[xX][0-9A-Fa-f]{1,8}")
# C's integer literal with its type's suffix (``0x51454d5520434647ULL``): a macro's value
_C_LITERAL = re.compile(rb"(?:0[xX][0-9A-Fa-f]{1,16}|[0-9]{1,20})(?:[uU]?[lL]{1,2}|[uU])")
# The words of a lower-case phrase where a value goes: a command or a message that names
# the secret (``cat_passwd='getent passwd'``), never the secret itself.
_PHRASE_NAMING = re.compile(
    rb"(?:getent|cat|echo|read|print|show|get|set|enter|type|your|the|new|old|current|no|"
    rb"missing|invalid|wrong|bad|empty|reset|change|update)(?: [a-z]+)+"
)
_NAMED_WORDS = frozenset(b"password passwd pass secret token key keys passwords tokens".split())
# A class's name where a value goes (``auth: AuthConfig``): capitalised words, the last a
# type's.
_CLASS_NAME = re.compile(
    rb"(?:[A-Z][a-z]+)+(?:Config|Configuration|Options|Settings|Provider|Manager|Handler|"
    rb"Client|Service|Factory|Context|Params|Error|Exception|Schema|Interface|Builder|"
    rb"Strategy|Backend|Request|Response)"
)
# A type where a value goes (``password: SecretStr``, a model's field; ``Optional[str]``).
_TYPE_VALUE = re.compile(
    rb"(?:typing\.)?(?:Optional\[)?(?:pydantic\.)?"
    rb"(?:Secret(?:Str|Bytes)|SecureString|str|string|String|bytes|Text)\]?(?:[ \t]*\|[ \t]*None)?"
)
# A grammar's rule (RFC 9110's ``token = 1*tchar``, ``*( OWS "," )``): a repetition of a
# named rule, which no secret is written as.
_ABNF_ITEM = (
    rb"(?:[0-9]*\*[0-9]*(?:[a-z][a-z\-]*|[A-Z]+|\()"
    rb"|[a-z][a-z\-]*|[A-Z]+|\"[^\"]*\"|[()/\[\]])"
)
_ABNF = re.compile(rb"[0-9]*\*[0-9]*(?:[a-z][a-z\-]*|[A-Z]+|\()(?:[ \t]+" + _ABNF_ITEM + rb")*")
# A reference or an expression with a fallback (``process.env.DB_PASSWORD || ""``,
# ``os.environ.get("X") or None``): the operand before the operator is judged.
_FALLBACK = re.compile(rb"(?P<head>[^\s|?]+)[ \t]+(?:\|\||\?\?|or)[ \t]+(?P<tail>[^\r\n]*)")
_POSITIONAL = re.compile(rb"\$(?:[0-9@*#?!$\-]|\{[0-9]+\})[}\"']*")
_MARKUP = re.compile(rb"<[A-Za-z/!?]")
_TAG = re.compile(rb"!!?[A-Za-z][A-Za-z0-9]*(?:[ \t]|$)|ENC\[")
# Within quotes a tag is no syntax: ``"!B6bhauMfxLVei"`` is a password that opens with ``!``;
# ``"!Ref Param"`` still reads as a tag and its argument.
_QUOTED_TAG = re.compile(rb"!!?[A-Za-z][A-Za-z0-9]*[ \t]|ENC\[")
_QUOTES = (b'"', b"'", b"`")
_SEGMENT = rb"[A-Za-z_$][A-Za-z0-9_$]*"
# A reStructuredText role and its target (``:py:class:`~pkg.Credentials```)
_ROLE = re.compile(rb":[a-z]+(?::[a-z]+)*:`~?(?P<target>[A-Za-z_][A-Za-z0-9_.]*)(?:\(\))?`?")
# A dotted setting's name: words in small letters (a short number in them), the last a
# camel-case name (``fs.s3.enableServerSideEncryption``, ``spark.hadoop.fs.s3a.accessKey``)
_SETTING_PATH = re.compile(rb"(?:[a-z][a-z0-9]{0,15}\.){1,6}(?P<last>[a-z]+(?:[A-Z][a-z]+)+)")
_SNAKE_PATH = re.compile(rb"[a-z_][a-z0-9_]*(?:\.[a-z_][a-z0-9_]*)+")
_DOTTED = re.compile(_SEGMENT + rb"(?:(?:\.|::|->)" + _SEGMENT + rb")+(?:\(\)?|\[[^\]]*\]?)?[;,)]?")
# A call: a name (a path of names), its bracket, and the bracket's close further on
# (``get_secret("db")``, ``os.getenv(``); ``Zq8vLp(3Wn5r`` is a password with a bracket in it.
_CALL = re.compile(
    _SEGMENT
    + rb"(?:\[[^\]\s]{1,40}\])?(?:\."
    + _SEGMENT
    + rb")*(?:<[A-Za-z0-9_, \t\[\]]{1,60}>)?\("
)  # (and a generic method's type: ``this.configService.get<string>(``)
# A host: names, the last of them a top-level domain's letters (``db.example.com:5432``);
# ``k9x2m.q7z3p`` has no such end.
_HOST = re.compile(
    rb"(?:[a-z0-9][a-z0-9\-]*\.)+(?P<tld>[a-z][a-z\-]{1,24})(?::[0-9]{1,5})?(?:/[^\s]*)?"
)
_URL = re.compile(rb"(?i:https?|wss?|ftp)://[^\s@/]+(?:/[^\s@?#]*)?")
# A version, maybe after a package's name and before a release's word (``1.2.3``,
# ``v0.12.3-rc1``, ``mysql-8.0.32``, ``2.0.0-SNAPSHOT``).
_VERSION = re.compile(
    rb"(?:[A-Za-z][A-Za-z_\-]*[\-@/])?v?[0-9]+(?:\.[0-9]+){2,3}(?P<tail>(?:[\-+.]?[A-Za-z0-9]+)*)"
    rb"|[0-9]+(?:\.[0-9]+)+-(?:SNAPSHOT|RELEASE)"
)
# A value shown masked or cut short: a run of mask characters, or dots at its end.
_MASKED = re.compile(rb"#{4}|\*{4}|\.{3}[)\]}]?$|\xe2\x80\xa6$|(?<=[0-9a-f])x{3,}$")
_WORD = re.compile(rb"[a-z]{2,12}")  # a plain word in small letters
_FLAG_NAME = re.compile(rb"--[a-z][a-z0-9\-]*")  # ``"--remove-key"``: an option's name
_ALNUM = frozenset(b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789")
# Words joined by separators and ending with one: a token's prefix with nothing after it.
_FRAGMENT = re.compile(rb"[A-Za-z]+(?:[_\-][A-Za-z]+)*[_\-]")
# A variable's name as the value: snake case with a secret word for one of its parts
# (``struct_pubkey_st``, see ``_snake_variable``), or camel case of a few words and no
# digit (``apiKey``).
_CAMEL = re.compile(rb"[a-z]+(?:[A-Z][a-z]+){1,3}")
_SECRET_PARTS = frozenset(
    b"pubkey password passwd secret token key apikey api auth cookie cookies credential "
    b"credentials passphrase".split()
)
# Type words between a name and its ``=`` (``API_KEY: Final = …``, ``apiKey string = …``).
_TYPES = frozenset(b"final str string optional secretstr bytes classvar any var let const".split())
_NAME_LEFT = re.compile(rb"([A-Za-z0-9_.\-]{1,80})[\"']?[ \t]*:?[ \t]*$")
# A generic type where a value goes (``Option<String>``, ``Arc<Mutex<Token>>``, ``Box<dyn
# Secret>``, ``HashMap<&'a str, Credential>``, ``std::vec::Vec<u8>``): a type's name, maybe
# a path, then angle brackets of names, commas, references, lifetimes and paths, then what
# ends a field (a comma, a semicolon, ``| null``).
_GENERIC = re.compile(
    rb"(?:[A-Za-z_][A-Za-z0-9_]*::){0,4}[A-Z][A-Za-z0-9_]*<[A-Za-z0-9_ \t,&'<>:\[\]]{1,120}>"
)
_AGE_RECIPIENT = re.compile(rb"age1[02-9ac-hj-np-z]{58}")
# A file's absolute path of names (``/home/runner/.ssh/id_ed25519``, ``~/.ssh/id_rsa``): where
# a key is kept, as ssh's prompt names it, not a passphrase.
_FILE_PATH = re.compile(rb"~?(?:/[A-Za-z0-9_.@+\-]{1,64}){2,16}")
# What ends a field after its type (a comma, a semicolon, ``| null``, a comment), and the
# line's end too for ``_GENERIC_END``.
_FIELD_ENDS = rb"[ \t]*(?:[,;)=]|\|[ \t]*(?:null|undefined|None)|//|#"
_FIELD_END = re.compile(_FIELD_ENDS + rb")")
_GENERIC_END = re.compile(_FIELD_ENDS + rb"|\r?$)")
# A generic type's arguments, each naming a type: a letter in each (``Spring<2024>`` is a
# password)
_TYPE_ARGUMENTS = re.compile(rb"[<>,]")
_A_LETTER = re.compile(rb"[A-Za-z]")
_TYPE_WORD = re.compile(rb"'?[A-Za-z_][A-Za-z0-9_]*")
# The small letters' words a generic type's arguments hold: builtins and Rust's keywords.
_GENERIC_WORDS = frozenset(
    b"str string number boolean bool any unknown never void object bigint char usize isize "
    b"u8 u16 u32 u64 u128 i8 i16 i32 i64 i128 f32 f64 dyn mut impl const static std".split()
)


def _generic_type(text: bytes) -> bool:
    """``text`` opens with a generic type that ends its field (see ``_GENERIC``): its
    brackets balance and each word inside is a type's (capitalised and named), a builtin's, a
    module's in a path or a lifetime (``'a``); ``Option<xK9mP2vL8qR5wT7z>`` is none."""
    m = _GENERIC.match(text)
    if m is None or _GENERIC_END.match(text, m.end()) is None:
        return False
    typed = text[: m.end()]
    if typed.count(b"<") != typed.count(b">") or made_part(typed):
        return False
    inside = typed[typed.index(b"<") + 1 :]
    if not all(_A_LETTER.search(a) for a in _TYPE_ARGUMENTS.split(inside) if a.strip()):
        return False  # ``Spring<2024>``: a password; a type's argument names one
    for w in _TYPE_WORD.finditer(typed):
        word = w.group()
        path = typed.startswith(b"::", w.end())
        if not (word[:1] in (b"'", b"_") or word[:1].isupper() or path or word in _GENERIC_WORDS):
            return False
    return True


def _field_type(text: bytes) -> bool:
    """A generic type (``_generic_type``) that a field's end follows (``,`` ``;`` ``)``
    ``=``, ``| null``), or a container's or a wrapper's (``Option<String>``): a password's
    value may have a generic's shape (``Hello<World>``) where a line ends."""
    m = _GENERIC.match(text)
    if m is None:
        return False
    head = text[: text.index(b"<")].rsplit(b"::", 1)[-1]
    return head in _CONTAINERS or _FIELD_END.match(text, m.end()) is not None


# Generic types a field's value is held in (Rust's, TypeScript's, Java's, C#'s, Kotlin's).
_CONTAINERS = frozenset(
    b"Option Optional Vec Box Arc Rc Cow Mutex RwLock RefCell Cell Result Promise Array "
    b"ReadonlyArray Record Partial Readonly Map HashMap BTreeMap Set HashSet List Seq "
    b"Sequence Iterable Dict Mapping Secret SecretString SecretBox Sensitive Zeroizing "
    b"Observable Future Task Lazy Nullable Maybe".split()
)
# The name that the value after it belongs to, where ``name_before`` reads none: an element
# (``<password>``), a key's or a name's attribute before ``value=`` (``<add key="password"
# value="…"``), a flag (``--password VALUE``, ``-password=VALUE``).
_NAMED_BEFORE = re.compile(
    rb"(?:<([A-Za-z0-9_.:\-]{1,80})(?:[ \t][^<>\n]*)?>"
    rb"|(?:key|name)=[\"']([^\"'\n]{1,80})[\"'][^<>\n]*value=[\"']"
    rb"|(?:^|[ \t])--?([A-Za-z][A-Za-z0-9_\-]{0,79})(?:[ \t]+|=)[\"']?)$"
)


def _named_before(block: bytes, start: int) -> bytes | None:
    """The name an element, an attribute pair or a flag gives the value at ``start`` (see
    ``_NAMED_BEFORE``), or None."""
    line = block.rfind(b"\n", 0, start) + 1
    m = _NAMED_BEFORE.search(block, max(line, start - 200), start)
    if m is None:
        return None
    return next(g for g in m.groups() if g is not None)


def _random_segment(value: bytes) -> bool:
    """A piece of 16 or more characters with upper, lower and digit: a token's part."""
    for piece in re.split(rb"[./:\-]", value):
        mixed = re.search(rb"[A-Z]", piece) and re.search(rb"[a-z]", piece)
        if len(piece) >= 16 and mixed and re.search(rb"[0-9]", piece):
            return True
    return False


def _is_call(value: bytes) -> bool:
    """The value is a call: a name that looks named, then a bracket closed later on."""
    m = _CALL.match(value)
    if m is None or _NOT_IN_A_CALL.search(value):
        return False
    if close_runs_on(value, m.end() - 1):
        return False  # ``Qb_(a4i58Vkc-h)Qpv``: no call's close runs on into a word
    if value.count(b"(") > value.count(b")") and value[-1:].isalnum() and made_part(value):
        return False  # ``r9o(ci19w)(fbx4op0``: a bracket opened last that nothing closes
    return not made_part(value[: m.end()]) and (m.end() == len(value) or b")" in value[m.end() :])


# What no call's arguments hold outside a string, and a password may (``gd(bj2p1b^abhI)``).
_NOT_IN_A_CALL = re.compile(rb"^[^\"']*[!#%^~]")


def _is_host(value: bytes) -> bool:
    """A host name whose names look named (``ip-10-0-1-23.ec2.internal``)."""
    m = _HOST.fullmatch(value)
    return m is not None and not made_part(value[: m.end("tld")]) and not _random_segment(value)


def name_words(name: bytes) -> list[bytes]:
    """A name's words, lower-cased: ``PuttyPassword`` -> putty, password."""
    return [w.lower() for w in _WORDS.findall(name)]


def name_is_secret(name: bytes, *, file: bool = True) -> bool | None:
    """Whether the name means a secret: False when its last word is something about one (a
    length, a URL, an event), names a key or token that is no secret (a database's, a
    public one), is a plural (``tokens``), runs a secret's word on into another
    (``tokeneater``), or the name is a file's (``passphrase.h``); None when it does not say
    (``value``, ``my_password_super_secure``). ``file``: the name may be a file's (not a
    chart's values path, ``secrets.db``, which no file name stands where)."""
    if file and _is_a_file(name):
        return False  # ``sm/passphrase.h: Likewise.``, ``git-auth-leak.diff``: a file
    words = name_words(name)
    while words and (words[-1] in _QUALIFIERS or words[-1].isdigit()):
        words.pop()
    if not words or (len(words) == 1 and words[0] in _NEUTRAL):
        return None
    last = words[-1]
    before = words[-2] if len(words) > 1 else b""
    if words[-3:] == [b"access", b"key", b"id"]:
        return True  # AWS's key id: half of a credential pair, and what scanners look for
    if last in _VENDORS:
        return True
    if last in (b"key", b"token", b"keys", b"tokens") and before in _NOT_SECRET_OWNERS:
        return False
    if last in (b"key", b"token") and before in _MAYBE_OWNERS:
        return None
    if before in (b"public", b"pub", b"publishable") or last in _PROPERTIES:
        return False
    if last in _PLURALS:
        return False  # ``tokens``, ``keys``: a list of them, or a count
    if last in _NOT_A_KEY:
        return False  # ``hotkey``, ``monkey``: a word that only ends in ``key``
    if last in _SECRET_EXACT or last.endswith(_SECRET_ENDS):
        return True
    return False if _word_after_the_secret(last) else None


_PLURALS = frozenset(b"tokens keys passwords cookies".split())
# Words that end in ``key`` and name no key at all (a keyboard's shortcut, an animal).
_NOT_A_KEY = frozenset(b"hotkey hotkeys monkey turkey donkey hockey jockey whiskey".split())
_STEMS = (b"password", b"passwd", b"secret", b"token", b"cookie", b"credential")


def _word_after_the_secret(word: bytes) -> bool:
    """A secret's word run on into another (``tokeneater``, ``passwordless``,
    ``secretsmanager``): the name means that other thing."""
    for stem in _STEMS:
        at = word.rfind(stem)
        rest = word[at + len(stem) :] if at >= 0 else b""
        if len(rest) >= 3 and rest not in _QUALIFIERS and rest not in (b"s", b"key"):
            return True
    return False


_EXTENSION = re.compile(rb"[^.]\.([a-z0-9]{1,8})$")


def _is_a_file(name: bytes) -> bool:
    """The name ends in a file's extension: a short word after a dot that names no secret
    and says no more of which one (``.h``, ``.scm``, ``.dpatch``; not ``smtp.pass``,
    ``db.password.prod``)."""
    m = _EXTENSION.search(name)
    if m is None:
        return False
    ext = m.group(1)
    return not (ext in _SECRET_EXACT or ext.endswith(_SECRET_ENDS) or ext in _QUALIFIERS)


def name_before(block: bytes, start: int) -> bytes | None:
    """The name that a value at ``start`` is assigned to, compared with or passed to on its
    line (``token_type == '…'``, ``InvalidToken("…")``), if a separator says so."""
    line = block.rfind(b"\n", 0, start) + 1
    m = _NAME_BEFORE.search(block, max(line, start - 160), start)
    if m is None:
        used = _NAME_USED.search(block, max(line, start - 160), start)
        if used is None or _AN_EMAIL.search(block, max(line, used.start(1) - 80), used.end(1)):
            return None  # ``login("ci@acme.io", "…")``: an address's domain is no name
        return used.group(1)
    sep = block[m.end(1) : m.end()]
    if b":" in sep and b"=" not in sep and not re.search(rb"[\"'\]]|:[ \t]", sep):
        return None  # ``admin:pw`` (a user and a password), not ``key: value``
    name = m.group(1)
    if name.lower() in _TYPES:
        left = _NAME_LEFT.search(block, max(line, start - 160), m.start(1))
        return left.group(1) if left else None
    return name


def value_is_not_secret(
    value: bytes, *, quoted: bool = False, words: bool = True, chosen: bool = False
) -> bool:
    """The value's shape says it is no secret (see the module docstring). ``quoted``: the
    value stood within quotes (as it does when it opens with one). ``words``: a value made
    of words may be one of code's or prose's (a class's name, a dated feature, a phrase):
    not where a password is all there is to read (a URL's in the node's environment).
    ``chosen``: the name is a password's or a passphrase's, which one may well choose as a
    path or a dotted name (``password: /etc/secret/db``): those shapes do not clear it."""
    v = value.strip().lstrip(b"\\")
    in_quotes = quoted or v[:1] in _QUOTES
    tag = _QUOTED_TAG if in_quotes else _TAG
    v = v.strip(b"\"'`")
    if not v:
        return True
    lowered = v.lower()
    if lowered in _BOOLEAN or lowered in _STATES or lowered in _PLACEHOLDER_WORDS:
        return True
    if _CLOSERS.fullmatch(v) or _ARN.match(v) or _FLAG_NAME.fullmatch(v):
        return True
    if (_PROSE.fullmatch(v) or (words and _SHORT_PROSE.fullmatch(v))) and sentence_words(
        lowered
    ) >= 2:
        return True  # ``will be replaced``, ``put your unique phrase here``: a sentence's words
    if words and (_DATED_NAME.fullmatch(v) or _PRIVATE_TYPE.fullmatch(v)):
        return True  # ``analytics-usage-cost-2026-08-24``: a dated feature; ``_ProviderT``
    if _SENTENCE.fullmatch(v) or _HEADER_NAME.fullmatch(v) or _LAST_WORD.fullmatch(v):
        return True  # ``InvalidToken("Signature did not match digest.")``: a message
    if _STATUS.fullmatch(v) or _STATUS_NOTE.fullmatch(v):
        return True  # ``gnutls_reauth: ADDED``: a status, a constant
    if len(v) < 3 or (len(v) <= 3 and not v.isalnum() and not any(map(_ALNUM.__contains__, v))):
        return True  # ``token = v``, ``split_token = ".."``: too short to be anyone's
    if (
        (pair := _PAIR.fullmatch(v))
        and not made_part(v[: pair.start(1)])  # (``Xk9mP2vL8qR5wT=abc``: a drawn value)
        and not looks_random(v[: pair.start(1) - 1], least=10)  # (``gyciwjEBG81L4=Bne-``)
        and (value_is_not_secret(pair.group(1)) or _WORD.fullmatch(pair.group(1)))
    ):
        return True  # ``Cookie: rocky=road``: a cookie set to a word, as documents show
    # ``@Microsoft.KeyVault(SecretUri=…)``, ``@Variables.DbPassword``: a platform's reference
    v = v[1:] if v.startswith(b"@") and len(v) > 1 else v
    if _SMALL_NUMBER.fullmatch(v) or _POSITIONAL.fullmatch(v) or is_reference(v):
        return True
    if not chosen and _FILE_PATH.fullmatch(v) and not made_part(v) and not _random_segment(v):
        return True  # ``Enter passphrase for key '/home/runner/.ssh/id_ed25519':``: a file
    if _AGE_RECIPIENT.fullmatch(v):
        return True  # ``Public key: age1…``: an age recipient, published to encrypt to
    if len(parts := v.split()) > 1 and all(map(is_reference, parts)):
        return True  # ``"$ENTRY_TOKEN_SEARCH $ID"``: expansions, each a reference
    if words and _CLASS_NAME.fullmatch(v):
        return True  # ``AuthConfig``: a class
    if words and in_quotes and _PHRASE_NAMING.fullmatch(v) and _NAMED_WORDS.intersection(v.split()):
        return True  # ``'getent passwd'``: a command, a message naming the secret
    if _MARKUP.match(v) or _is_call(v):
        return True
    if (tagged := tag.match(v)) and not made_part(tagged.group().strip(b"! \t")):
        return True  # ``!Ref Param``, ``!vault |``; not ``!Xq7Lp2zRt9wKmab``, a drawn password
    if tag is _QUOTED_TAG and v[:1] == b"!" and _TAG.fullmatch(v):
        # a tag's word alone within quotes (``"!none"``, ``'!!str'``): judged as the word
        word = v.lstrip(b"!")
        return value_is_not_secret(word, quoted=True) or bool(_WORD.fullmatch(word.lower()))
    if _TYPE_VALUE.fullmatch(v) or _ABNF.fullmatch(v):
        return True  # ``password: SecretStr``, ``token = 1*tchar``: a type, a grammar
    if (fallback := _FALLBACK.fullmatch(v)) and _is_reference_head(fallback.group("head")):
        # ``process.env.DB_PASSWORD || ""``: read from elsewhere, unless the default is one
        tail = fallback.group("tail").rstrip(b";,) \t")
        return tail.strip(b"\"'`") == b"" or value_is_not_secret(tail)
    if (role := _ROLE.fullmatch(v)) and not made_part(role["target"]):
        return True  # ``:py:class:`~botocore.credentials.Credentials```: a docstring's role
    setting = None if chosen or not in_quotes else _SETTING_PATH.fullmatch(v)
    if setting and named_identifier(setting["last"]):
        return True  # ``'fs.s3.enableServerSideEncryption'``: a setting's name
    if _DOTTED.fullmatch(v) and not made_part(v) and (not in_quotes or _SNAKE_PATH.fullmatch(v)):
        # ``X25519.key_length``, ``self.token``: code, not ``Tr0ub4dor.Xk92mLq``; within
        # quotes a string, which names a path only in lower case (``"settings.db_password"``)
        return True
    if _is_host(v) or (_URL.fullmatch(v) and not _random_segment(v)):
        return True
    if (version := _VERSION.fullmatch(v)) and not made_part(version.group("tail") or b""):
        return True
    if _FRAGMENT.fullmatch(v):
        return True  # ``sm_pat_``: a token's prefix alone
    if _MASKED.search(v) or (b"::" in v and not made_part(v)):
        return True  # ``sk-...``, ``xoxp-…-####``: shown masked; ``iam::1234:role``: a scope
    variable = len(v) < 48 and (_snake_variable(v, in_quotes) or _CAMEL.fullmatch(v))
    if variable and _SECRET_PARTS.intersection(name_words(v) + lowered.split(b"_")):
        return True  # ``struct_pubkey_st``, ``apiKey``: a variable, not its value
    return is_named_placeholder_value(v, counted=words) or _one_char_run(v)


def _snake_variable(value: bytes, in_quotes: bool) -> bool:
    """A variable's name in snake case: small letters, each part opening with one
    (``struct_pubkey_st``), or within quotes an environment variable's, in capitals with no
    part all digits (``'AWS_ACCESS_KEY_ID'``); ``super_secret_jwt_key_2024`` and
    ``MY_SECRET_KEY_2024`` are passwords."""
    if _LOWER_SNAKE.fullmatch(value):
        return True
    if not in_quotes or not _UPPER_SNAKE.fullmatch(value):
        return False
    return not any(p.isdigit() for p in value.split(b"_"))


_LOWER_SNAKE = re.compile(rb"_?[a-z][a-z0-9]*(?:_[a-z][a-z0-9]*)+")
_UPPER_SNAKE = re.compile(rb"[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+")


def _is_reference_head(head: bytes) -> bool:
    """The operand before a fallback is code that reads a value: a dotted name, a call, a
    variable (``process.env.X``, ``os.getenv("X")``, ``$X``), not a literal."""
    if made_part(head):
        return False
    return bool(_DOTTED.fullmatch(head) or _is_call(head) or is_reference(head))


def value_is_code(value: bytes) -> bool:
    """A header's credential that is code, a link or a mask where the value goes
    (``self.headers.get(``, ``...}``, ``https://docs…``): the narrow part of
    ``value_is_not_secret``."""
    v = value.strip()
    made = made_part(v)
    return bool(
        _CLOSERS.fullmatch(v)
        or _MASKED.search(v)
        or (_URL.fullmatch(v) and not _random_segment(v))
        or (not made and (_is_call(v) or _DOTTED.fullmatch(v)))
    )


def sentence_words(lowered: bytes) -> int:
    """How many of a value's words are words that only a sentence has."""
    return sum(w in _SENTENCE_WORDS for w in lowered.rstrip(b".!?").split())


def _one_char_run(value: bytes) -> bool:
    """``yyy``, ``000``: one character repeated."""
    return len(value) >= 3 and len(set(value)) == 1


def is_not_secret(block: bytes, start: int, end: int) -> bool:
    """A named rule's find at ``block[start:end]`` that is no secret: its name does not mean
    one, or its value's shape says so."""
    value = block[start:end]
    name = name_before(block, start)
    named = _named_before(block, start)  # an element's, an attribute pair's, a flag's
    chosen = _chosen_name(name) or _chosen_name(named)
    if value_is_not_secret(value, quoted=block[start - 1 : start] in _QUOTES, chosen=chosen):
        return True
    if bare(block, start) and _after_colon(block, start):
        # ``token: Option<String>,``, ``pub password: Vec<u8>,``: a field's type, read to its
        # ``>``; after ``=``, a flag or prose (``PASSWORD=Hello<World>``) it is a value, and
        # so it is under a password's name where no field's end follows (YAML's ``password:
        # Hello<World>``), unless the type is a container's (``password: Option<String>``)
        line_end = block.find(b"\n", end, end + 200)
        text = block[start : end + 200 if line_end < 0 else line_end]
        if _generic_type(text) and (not chosen or _field_type(text)):
            return True
    if block[end - 1 : end] == b">" and _in_slot(block, start):
        return True  # ``<user:password>``: a template's slot
    member = block.startswith(b">", end) and block[end - 1 : end] == b"-"
    if block[start : start + 1] == b"$" and (member or block.startswith(b"->", end)):
        return True  # ``$this->password``, ``$assert->{pass}``: PHP's and Perl's members
    command = value.split()
    if block[start - 1 : start] == b"`" and len(command) > 1 and not any(map(made_part, command)):
        return True  # ``KEY=`echo $PID | cut -d: -f1```: a command's output
    line_end = block.find(b"\n", end)
    if _REGEX_LITERAL.fullmatch(block, start, len(block) if line_end < 0 else line_end):
        return True  # ``const UNEXPECTED_TOKEN = /^Unexpected token/i``: a regex literal
    if _PERL_BUILTIN.fullmatch(block, start, end) and block.startswith(b";", end):
        return True  # ``my $token = shift;``: an argument read in Perl
    line = block.rfind(b"\n", 0, start) + 1
    made = made_part(value)
    define = _C_DEFINE.match(block, line)
    alias = bare(block, start) and _IDENT.fullmatch(value)
    if define is not None and (
        (alias and not made)
        or _C_LITERAL.fullmatch(value)
        or _spells_the_name(define.group(1), value)
    ):
        # ``#define EVP_PKEY_EC NID_X9_62_id_ecPublicKey``: a macro's alias;
        # ``#define SN_setct_PANToken "setct-PANToken"``: its name as a string
        return True
    base = block[end : end + 1] in (b")", b",") and _NAME_PATH.fullmatch(value) and not made
    if base and _CLASS_HEAD.match(block, line, start):
        return True  # ``class CrtS3SigV4AsymQueryAuth(CrtSigV4AsymQueryAuth):``: a base
    if _C_API_MACRO.search(block, max(0, start - 64), start) and block[end : end + 8].lstrip(
        b" \t"
    ).startswith((b"(", b")")):
        return True  # ``GLAPI void APIENTRY glUniform2fv (``: a function's declaration
    if _in_arn(block, start):
        return True  # ``arn:aws:kms:…:key/…``: a resource's name, read from its "aws:"
    if is_annotation(block, start, end, made=made) or is_expression_around(
        block, start, end, made=made
    ):
        return True  # ``auth: BasicAuth | None``, ``TOKEN = CHAR ^ CTL``: code
    if is_format_template(block, start, end) or is_first_of_arguments(block, start, end):
        return True  # ``'%s:%s' % (user, pw)``, ``get_password("system", "user")``
    if name is None:
        return False
    if _in_tag_attribute(block, start) and name.lower() in (b"key", b"name", b"id"):
        return True  # <entry key="…">: the key's name, not a key
    if (
        _KEYWORD_ARGUMENT.match(block, line, start)
        and _LAST_ARGUMENT.match(block, end)
        and bare(block, start)
        and _SNAKE_WORD.fullmatch(value)
    ):
        return True  # ``    secret=match,`` on a line of its own: a call's argument
    if _JS_BINDING.match(block, line, start) and alias and not made:
        return True  # ``let cookieDomain = attributeValue``: code reads a variable (a
        # literal in JavaScript is quoted)
    if bare(block, start) and (value in _CODE_KEYWORDS or _SHORT_WORD.fullmatch(value)):
        # (a word under a token's name after `` = `` may be a password: ``access_token =
        # sunshine``; only a language's keyword, or a short word set on an object's field)
        keyword = value in _CODE_KEYWORDS
        head = keyword and _STATEMENT_HEAD.match(block, line)
        if head and block.rfind(b":", line, start) > 0:
            return True  # ``if ttype == tokenize.NEWLINE: break``: a statement after its head
        spaced = _SPACED_EQUALS.search(block, max(line, start - 8), start)
        if spaced and _drawn_kind(name) and (keyword or b"." in name):
            return True  # ``node.last_token = nlast``: an object's field set from a variable
    if _spells_the_name(name, value):
        return True  # ``#define SN_setct_PANToken "setct-PANToken"``: the name as a string
    if bare(block, start) and not made and is_same_variable(name, value):
        return True  # ``self._cookie_jar = cookie_jar``: a variable handed on
    if bare(block, start) and not made and _RECEIVER.match(name) and _IDENT.fullmatch(value):
        return True  # ``self.token = nextchar``: an object's field set from a variable
    if not made and is_code_identifier(block, start, end):
        return True  # ``credentials = in_memory``, ``"key": api_key or …``: a variable
    if _LEXER_WORD.fullmatch(block, start, end) and _compares_a_token(block, start, name):
        return True  # ``if token == "lambda":``: a lexer's token, compared with its text
    if name.lower() in _NEUTRAL and name_is_secret(named or b"") is False:
        return True  # ``<add key="apiKeyName" value="…">``: the key says what the value is
    if name_is_secret(name, file=not _chart_value(block, start, name)) is False:
        # ``AUTH_SERVER=Xk9m…``: what serves a secret, but a drawn value is one
        return not (name_words(name)[-1:] in _SERVERS and looks_random(value))
    return False


# Helm's ``--set`` (``--set-string``, ``--set-literal``): a chart's values path, ``a.b=V``,
# maybe after others (``--set a=1,secrets.db=V``).
_CHART_SET = re.compile(
    rb"(?:^|[ \t])--set(?:-string|-literal)?[ =](?:[^\s,=]{1,200}=[^\s,]{0,4096},)*$"
)


def _chart_value(block: bytes, start: int, name: bytes) -> bool:
    """The value at ``start``, named ``name``, is set by a chart's values path (``helm
    upgrade … --set-string secrets.db=V``): the name is no file's."""
    at = start - 1 - len(name)  # where the name starts
    if at <= 0 or block[at : start - 1] != name or block[start - 1 : start] != b"=":
        return False
    line = max(block.rfind(b"\n", 0, at) + 1, at - 4096)
    return _CHART_SET.search(block, line, at) is not None


def _chosen_name(name: bytes | None) -> bool:
    """The name is a password's or a passphrase's: a secret one chooses."""
    return name is not None and any(w.startswith(_CHOSEN) for w in name_words(name))


_CHOSEN = (b"password", b"passphrase", b"passwd", b"pwd")
_SERVERS = [[w] for w in b"service services server loader cls".split()]


# A variable's name in snake case: words (a digit may end one) joined by underscores.
_SNAKE = re.compile(rb"_?[a-z][a-z0-9]*(?:_[a-z][a-z0-9]*)+")
# Code's binding before it: a quoted key's colon with code after the name (a dict's, whose
# bare value is a name: YAML's ``"password": my_pw`` ends its line), or an ``=`` with
# blanks on both sides after a subscript (``creds["token"] = …``) or on a line indented by
# spaces (a function's body, ``util._pass = …`` in it; an INI file's ``password = value``,
# a properties file's ``db.password = value`` and a git config's tab-indented keys are
# values, and ``.env`` and shell write no blanks).
_QUOTED_KEY = re.compile(rb"[\"'][ \t]*:[ \t]+$")
# What may follow a variable where a value was read on (a dict's close, an operator).
_CODE_AFTER = re.compile(rb"[ \t]*(?:[,;)}\]]|(?:or|and|if|else)[ \t])")


def is_code_identifier(block: bytes, start: int, end: int) -> bool:
    """The bare value is a variable's name in code: snake case after code's binding
    (``    credentials = in_memory``, ``'Authorization': v4auth_header``). A ``.env`` line's
    ``DB_PASSWORD=my_pw``, an INI file's ``password = my_pw`` and YAML's ``password: my_pw``
    stay values."""
    name = _SNAKE.match(block, start, end)
    if not bare(block, start) or name is None:
        return False
    if name.end() < end and not _CODE_AFTER.match(block, name.end(), end):
        return False
    line = block.rfind(b"\n", 0, start) + 1
    if _QUOTED_KEY.search(block, max(line, start - 16), start):
        return bool(_CODE_AFTER.match(block, name.end()))  # ``…: v4auth_header}``
    eq = block.rfind(b"=", line, start)
    if eq <= line or block[eq - 1 : eq] not in (b" ", b"\t") or block[eq + 1 : start].strip():
        return False
    return block[line : line + 4] == b"    " or block[line:eq].rstrip().endswith(b"]")


# A token a lexer compares with a keyword or a punctuation mark's text.
_LEXER_WORD = re.compile(rb"[a-z_]{1,12}|[^\sA-Za-z0-9]{1,3}")
_COMPARED = re.compile(rb"[ \t]*[=!]==?[ \t]*[\"']$")


# A language's keywords and constants, where a value would be (``…: break``, ``= None``).
_CODE_KEYWORDS = frozenset(
    b"break continue pass return None null nil true false True False self this undefined".split()
)
# A short variable's name in small letters (``nlast``), set on an object's field.
_SHORT_WORD = re.compile(rb"[a-z]{2,10}")
_SPACED_EQUALS = re.compile(rb"[ \t]=[ \t]+$")
# A compound statement's head in code, to its colon (``if …:``, ``while …:``).
_STATEMENT_HEAD = re.compile(rb"[ \t]*+(?:if|elif|while|for|with|except)[ \t(]")
# Names of secrets that a machine draws (a token, a key, a cookie), never a word one chose.
_DRAWN_WORDS = frozenset(b"token key apikey cookie session credential credentials".split())


def _drawn_kind(name: bytes) -> bool:
    """The name's last word (its qualifiers aside) is a drawn secret's: a token's, a key's
    (``first_token``, ``ruleOrToken``); a password may well be a word."""
    words = name_words(name)
    while words and (words[-1] in _QUALIFIERS or words[-1].isdigit()):
        words.pop()
    return bool(words) and (words[-1] in _DRAWN_WORDS or words[-1].endswith((b"token", b"key")))


def _spells_the_name(name: bytes, value: bytes) -> bool:
    """The value is the name itself, or its last words, in another case or with other
    separators: a constant's text, not a secret."""
    said = bytes(c for c in value.lower() if c in _ALNUM)
    return len(said) >= 6 and bytes(c for c in name.lower() if c in _ALNUM).endswith(said)


def _compares_a_token(block: bytes, start: int, name: bytes) -> bool:
    """The value is compared with a name whose last word is ``token`` or ``tok``."""
    words = name_words(name)
    if not words or words[-1] not in (b"token", b"tok", b"ttype", b"tokval"):
        return False
    line = block.rfind(b"\n", 0, start) + 1
    return _COMPARED.search(block, max(line, start - 8), start) is not None


_RECEIVER = re.compile(rb"(?:self|this|cls)\.")
# A JavaScript binding's head, to its ``=``: a bare value after it is code, not a literal.
_JS_BINDING = re.compile(
    rb"[ \t]*(?:export[ \t]+)?(?:let|const|var)[ \t]+[A-Za-z_$][\w$]*[ \t]*=[ \t]*$"
)
# A variable's name in small letters (``match``, ``new_token``): what a call passes on.
_SNAKE_WORD = re.compile(rb"[a-z_][a-z_]*[0-9]?")
# A regex literal, to its flags and the line's end (``/^Unexpected token '?(.)'?/i``).
_REGEX_LITERAL = re.compile(rb"/\^[^\r\n]*/[dgimsuy]*[;,)]?[ \t]*\r?")
# An indented line that opens with a keyword argument, and its end after the value.
_KEYWORD_ARGUMENT = re.compile(rb"[ \t]+[a-z_][a-z0-9_]*=$")
_LAST_ARGUMENT = re.compile(rb"[,)][ \t]*\r?(?:\n|$)")
_PERL_BUILTIN = re.compile(rb"shift|pop|undef|@_")
_C_DEFINE = re.compile(rb"[ \t]*#[ \t]*define[ \t]+([A-Za-z_][A-Za-z0-9_]*)")
# A C library's export macro right before a function's name (``Z3_API``, ``APIENTRY``,
# ``BZ_API(``), its return type between them at most: the name is what it exports.
_C_API_MACRO = re.compile(
    rb"\b[A-Z0-9_]*?(?:API|APIENTRY|APICALL)(?:\(|[ \t]+(?:(?:const[ \t]+)?"
    rb"(?:void|int|char|bool|long|short|float|double|unsigned|signed|[A-Za-z_][A-Za-z0-9_]*_t)"
    rb"[ \t*]+)?)$"
)
_IDENT = re.compile(rb"[A-Za-z_][A-Za-z0-9_]*")
_NAME_PATH = re.compile(rb"[A-Za-z_][A-Za-z0-9_]*+(?:\.[A-Za-z_][A-Za-z0-9_]*+)*+")
# A class's definition up to one of its bases (Python's ``class Name(Base, ``).
_CLASS_HEAD = re.compile(
    rb"[ \t]*+class[ \t]++[A-Za-z_][A-Za-z0-9_]*+[ \t]*+\((?:[^()\r\n]*,[ \t]*)?$"
)


_SLOT_HEAD = re.compile(rb"<[A-Za-z_][\w.-]*:")


def _after_colon(block: bytes, start: int) -> bool:
    """A ``:`` and blanks only come before the value: where a field's type is written."""
    head = block[max(0, start - 16) : start].rstrip(b" \t")
    return head.endswith(b":") and not head.endswith(b"::")


def _in_slot(block: bytes, start: int) -> bool:
    """The value closes a template's slot opened just before it on its line (``<user:``,
    no space between): ``<--password VALUE>`` is a flag and its value, not a slot."""
    line = block.rfind(b"\n", 0, start) + 1
    lt = block.rfind(b"<", line, start)
    return lt >= 0 and _SLOT_HEAD.fullmatch(block, lt, start) is not None


def _in_tag_attribute(block: bytes, start: int) -> bool:
    """The value is an attribute's inside an open markup tag on its line."""
    line = block.rfind(b"\n", 0, start) + 1
    head = block[line:start]
    lt = head.rfind(b"<")
    return lt >= 0 and head.rfind(b">") < lt


_ARN_EDGE = re.compile(rb"[\s\"'=(,\[]")


def _in_arn(block: bytes, start: int) -> bool:
    """The value lies inside an Amazon resource name begun on its line before it."""
    line = block.rfind(b"\n", 0, start) + 1
    head = block[max(line, start - 200) : start]
    at = head.rfind(b"arn:")
    if at < 0 or (at > 0 and not _ARN_EDGE.match(head, at - 1)):
        return False
    return _ARN.match(head + block[start : start + 80], at) is not None
