"""The lines worth a closer look: one linear-time RE2 pass over a block, before any rule runs.

Most lines of a build log hold nothing any rule could find, yet each rule's own search, and
the Python check on each of its near-misses, read the whole block. So one RE2 regex, the
*prefilter*, is matched over the block first; it is a superset of every rule but the
format table (whose own one pass over the block finds its anchors, see ``formats``): for
each rule, a pattern that matches on the line of every find the rule can make (where the
rule's own regex or check refuses a shape, ``max_tokens=`` or ``version 10.2.0.1``, the
superset may refuse it too). Only the lines it hits are joined into a smaller block, the
rules run over that, and the spans found are mapped back. A block where the hits cover most
of the text is scanned whole instead.

Why the result is the same as scanning the whole block:

- every rule's match lies within one line (its classes exclude line breaks), so a line the
  prefilter misses holds no find of any rule, and skipping it (with the near-misses a rule
  would have tried and refused there) changes no find on another line;
- the one rule that crosses lines (``<name>…</name>`` then, after blanks, ``<value>…``) has
  both of its lines hit, and lines that only blanks separate are kept together; the finds
  read from more than one line (a YAML block scalar's lines, a triple-quoted string to its
  closing quotes, an HCL variable block to its default, a table row and the separator
  below a header) have supersets that match all of
  those lines, listed first so that no other part's match on the line takes their place;
- lines that were not neighbours are joined with a barrier line (a NUL byte) that no rule
  can match or cross, and each kept line is preceded by a line break as it was;
- checks that look before a match look no further back than its line's start;
- key blocks, which span lines, are stretched on the whole block afterwards (``engine``).

The name/value pair whose value may be on the next line has a search of its own (in the
one automaton it made every line slower), which reads only the lines by each place of its
word, ``value`` (every pair match ends on such a line, and starts on it or the one before):
the engine has the format table's one pass over the block find those places with its
anchors (``formats.FormatScanner.finds``), and a search for the word alone finds them where
no such pass gave them. The IPv4 part is a pass of its own too (``IPV4_SUPERSET``): a
single-line part, so the lines it hits, joined with the others', hold every line the one
automaton kept.

This node's own literals and the node table's host names are in the prefilter too (a
value that holds a line break turns the prefilter off), unless this node has secrets: then
the disguises' pass over the whole block finds the literals with the disguised forms, in one
read of every byte for both (see ``engine``). Extra patterns from the master
section may be any regex, across lines too: they are not in it, and read the whole block.
The regex is compiled for Latin-1, so that every byte is a character (a line that is not
valid UTF-8 is still matched), and case-insensitively where the rules read the lowered
block, which only widens it.
"""

from __future__ import annotations

import bisect
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass

import re2

from relay.redact.assignments import HCL_SUPERSET, after_prefix, hcl_below, log_prefix
from relay.redact.code import SUPERSETS as CODE_SUPERSETS
from relay.redact.commands import SUPERSETS as COMMAND_SUPERSETS
from relay.redact.commands import TRIPLE_SUPERSET, lines_below
from relay.redact.linear import Searcher, latin1_searcher, line_searcher, past_line
from relay.redact.manifests import SUPERSET as MANIFEST_SUPERSET
from relay.redact.named import MIN_FREE_STANDING, STRONG, VENDORS, WEAK
from relay.redact.network import PRODUCTS
from relay.redact.riders import WordRider
from relay.redact.shell import (
    HEREDOC_SUPERSET,
    MC,
    NETRC_SUPERSET,
    TOOL_NAMES,
    heredoc_below,
)

Trie = dict[str, "Trie"]
_NAME_CHAR = "abcdefghijklmnopqrstuvwxyz0123456789_+-"


def _not_words(words: Iterable[bytes], prefixes: Iterable[tuple[bytes, int]] = ()) -> str:
    """A regex for any run of name characters (``[a-z0-9_+-]``, read case-insensitively)
    except one of ``words``: a trie of the words' beginnings, left either by a character
    the trie has not there (then any name characters: one loop that every such exit
    shares, so the automaton gains few states) or by ending where no word ends.

    ``prefixes``: beginnings whose every name is refused too, up to the given number of
    characters after the prefix (a longer name is read as any other)."""
    trie: Trie = {}
    for word in words:
        node = trie
        for char in word.decode():
            node = node.setdefault(char, {})
        node[""] = {}  # a word ends here
    for prefix, most in prefixes:
        node = trie
        for char in prefix.decode():
            node = node.setdefault(char, {})
        assert not node, "a prefix that is a word's beginning"
        node["*"] = {str(most): {}}  # every name from here, up to ``most`` more characters
    short = _ends(trie, root=True)
    loop = f"{_exits(trie)}[a-z0-9_+\\-]*"
    return f"(?:{loop}|{short})" if short else f"(?:{loop})"


def _exits(node: Trie) -> str:
    """The beginnings below ``node`` followed by a character that no word has there."""
    if "*" in node:  # a refused prefix: only a name longer than it refuses leaves it
        return f"[a-z0-9_+\\-]{{{int(next(iter(node['*']))) + 1}}}"
    children = sorted(c for c in node if c)
    other = "[" + "".join(_char(c) for c in _NAME_CHAR if c not in children) + "]"
    return "(?:" + "|".join([other, *(_char(c) + _exits(node[c]) for c in children)]) + ")"


def _ends(node: Trie, *, root: bool = False) -> str | None:
    """The beginnings below ``node`` that are no word; None when every one is."""
    if "*" in node:
        return None  # a refused prefix: each short name below it is refused
    below = ((c, _ends(node[c])) for c in sorted(c for c in node if c))
    parts = [_char(c) + rest for c, rest in below if rest is not None]
    if not root and "" not in node:
        parts.append("")
    return "(?:" + "|".join(parts) + ")" if parts else None


def _char(c: str) -> str:
    """One name character as a regex."""
    return "\\" + c if c in "+-" else c


def _ipv4_superset() -> str:
    """Every line on which the IPv4 rule (``network``) can find an address: a quad at a
    word's edge, except where the rule's version rule keeps it whatever the octets are —
    after a version operator (``>=68.0.2.1``), a name joined by ``-`` or ``/``
    (``index-2.3.4.2``, ``Firefox/115.0.2.1``), or a tool's name and one blank (``cmake
    3.28.1.4``, ``version 10.2.0.1``) unless the quad is private or has a port after it.
    Those are most of a build log's dotted quads, and the rule would refuse each."""
    quad = r"[0-9]{1,3}\.[0-9]{1,3}\.[0-9]{1,3}\.[0-9]"
    name = r"[a-z0-9_+\-]"
    # (names that start with "lib" or are "sdk" or "runtime" keep a quad as products do:
    # ``libfoo 1.2.3.4``, ``.NET SDK 8.0.100.1``; the rule reads 40 characters of a name)
    kept = sorted({*PRODUCTS, *_VERSION_WORDS, b"sdk", b"runtime"})
    leads = (
        r"^|[^a-z0-9_. /=\-\t]",  # a line's start, punctuation
        r"(?:^|[^a-z])/",
        r"(?:^|[^<>=!~])=",
        r"(?:^|[^a-z0-9])-",
        r"(?:^|[^a-z0-9_+\-])[ \t]+",  # blanks after no name
        rf"{name}[ \t]{{2,}}",  # blanks after a name (the rule reads at most eight)
        rf"(?:^|[ \t\r\n(\[]){_not_words(kept, _LIB)}[ \t]",  # a name that keeps no quad
        rf"[^a-z0-9_+\- \t\r\n(\[]{name}+[ \t]",  # a name glued to punctuation
    )
    # after a tool's name: a private quad, or one with a port (a version word keeps both)
    unless = rf"(?:^|[ \t\r\n(\[]){_not_words(_VERSION_WORDS)}[ \t]"
    private = r"(?:10|100|169|172|192)\.[0-9]{1,3}\.[0-9]{1,3}\.[0-9]"
    port = r"[0-9]{1,3}\.[0-9]{1,3}\.[0-9]{1,3}\.[0-9]{1,3}[:/][0-9]"
    after_name = f"{unless}(?:{private}|{port})"
    return f"(?:{'|'.join(leads)}){quad}|{after_name}"


def _digit(klass: str) -> str:
    """The start of the named rules' value that holds a digit and has eight characters at
    least (``named._digit``): what must be there for the rule to match at all."""
    return f"(?:{klass}{{7,}}[0-9]|{klass}*[0-9]{klass}{{7}})"


def _upper_among(first: str, klass: str, least: int) -> str:
    """The start of a value (``first``, then ``klass``: classes of ``[…]`` or ``[^…]``) of
    ``least`` characters at least with an upper-case letter among them. Each place of the
    first such letter is one branch, nested (``[A-Z]K{n}|k(?:[A-Z]K{n-1}|k(?:…))``, ``k``
    not upper case), so that the automaton counts one place and one length, not every
    subset of places a letter was at (those states ran RE2's memory past its bound)."""
    plain_first, plain = _not_upper(first), _not_upper(klass)
    nested = f"(?:{_UPPER}|{plain}+{_UPPER})"  # the last place of the first ``least``
    for place in range(least - 2, 0, -1):
        nested = f"(?:{_UPPER}{klass}{{{least - 1 - place}}}|{plain}{nested})"
    return f"(?:{_UPPER}{klass}{{{least - 1}}}|{plain_first}{nested})"


def _not_upper(klass: str) -> str:
    """``klass`` without the upper-case letters (matched case-sensitively)."""
    if klass.startswith("[^"):
        return f"(?-i:[^{klass[2:-1]}A-Z])"
    return f"(?-i:{klass})"  # a class of lower-case letters and symbols


_UPPER = "(?-i:[A-Z])"


def _random_enough(first: str, klass: str) -> str:
    """The start of a named value that ``named.looks_random`` may take (``first``, then
    ``klass``: classes of ``[…]`` or ``[^…]``): one that holds an upper-case letter, or
    of 24 characters (a shorter value must mix cases). ``PASS: test_reader_840`` and
    ``PASS: test_resolver_840`` are neither, and a build log has many such lines.

    The rules ask for 16 characters (20 further on the line) with that letter among
    them; counted here, each place of the letter was a branch of its own (the superset's
    program a third larger, its automaton's states dearer to build, for a line or two in a
    hundred megabytes of build log that the rules then refuse)."""
    plain_first, plain = _not_upper(first), _not_upper(klass)
    return f"(?:(?:{plain_first}{plain}*)?{_UPPER}|{first}{klass}{{{_MIXED_BELOW - 1}}})"


def _counted_random(first: str, klass: str, least: int) -> str:
    """``_random_enough`` with the rules' length counted: ``least`` characters at least with
    an upper-case letter among them, or 24. For a value after prose's words (``token is
    …``): uncounted there, a third more of the build log's lines were kept (786 in 100 MB),
    each then read by every rule."""
    return f"(?:{_upper_among(first, klass, least)}|{first}{klass}{{{_MIXED_BELOW - 1}}})"


_MIXED_BELOW = 24  # ``named.looks_random``: a shorter value must hold both cases


# The named rules' value characters (see ``named``): quoted three ways, and bare.
_DQ, _SQ, _BQ = r'[^"\\\r\n]', r"[^'\r\n]", r"[^`\r\n]"
_BARE_FIRST = r"""[^\s"'&,;<>(){}\[\]\\:]"""
_BARE = r"""[^\s"'&,;<>(){}\[\]\\]"""
# A type annotation glued to the name's colon, before ``=`` (``api_token:str = "…"``), or
# Rust's reference after the colon and blanks (``api_token: &'static str = "…"``).
_ANNOTATION = r"(?:(?:typing\.)?(?:final|classvar|optional|str|bytes|secretstr)|&)"
# After ``name:`` and blanks, a value the rules may take (``assignments._yaml_like``): a
# quoted one, or a bare one that ends the line, a field (``,`` ``;`` ``#`` …) or its own
# run of word characters (``…: Xk3j``, ``…: a+b``), unless more words follow a plain word.
_PLAIN = r"(?-i:[a-z_.\-])"  # no character the rules call machine-made
_SETTING = (
    rf"[ \t]+(?:[\"']|[^ \t\"']{_PLAIN}*(?:$|[^a-z \t_.\-]|(?-i:[A-Z])"
    r"|[ \t]+(?:$|[\n\r\f\v,;#})\]&])))"
)

# A name the version rule reads (40 characters at most) that opens with "lib" keeps a quad.
_LIB = ((b"lib", 40 - len(b"lib")),)
_VERSION_WORDS = (b"version", b"ver", b"release", b"build", b"rev", b"revision")
_IPV4 = _ipv4_superset()

# Every word that starts a name any rule reads: the assignment rules' keywords and the
# named rules' words (vendors included).
_KEYWORDS = "pass|secret|token|credential|cookie|pwd|key|auth"  # the assignment rules'
_OTHER_KEYWORDS = (  # all but ``pass``, and ``pw`` as a word of its own (``DB_PW``)
    "secret|token|credential|cookie|pwd|key|auth|(?:[^a-z0-9]|^)pw"
)
# The rest of a name after its keyword, as the assignment rules read it (not a plural).
_NAME_REST = r"(?:[a-z0-9_.\-]*[a-rt-z0-9_.\-]|[a-z0-9_.\-]*[sl]s)"
# In alphabetical order: RE2 factors the common beginning of neighbouring alternatives
# (``pass|passphrase|password`` reads as ``pass(?:|phrase|word)``), so the automaton reads
# each word's first letters once, and its states, holding fewer places, cost less to build
# (the words' pass over the 100 MB bench log 0.38 -> 0.35 CPU-s while its states are built;
# which word matches does not matter here: whatever follows it ends the match the same).
_NAME_WORDS = "|".join(sorted({*STRONG, *WEAK, *VENDORS}))
_SECRET_WORDS = "|".join(sorted({*STRONG, *WEAK}))
# After a YAML block scalar's name and colon: a tag and an anchor maybe, ``|`` or ``>``, the
# line's end. (The block's indented and blank lines below it are the hit's too:
# ``_lines_opened`` keeps them, after any hit on such a line.)
_BLOCK_SCALAR = r"[ \t]*(?:[!&][^\s]*[ \t]+)*[|>][-+0-9]{0,2}[ \t]*(?:#[^\n]*)?\r?\n"
_BLOCK_SCALAR_LINE = line_searcher((r":" + _BLOCK_SCALAR[:-5] + r"\r?\n?\z").encode())
# A superset of each hand-written rule (``assignments``, ``named``, ``tokens``, ``network``,
# ``shell``), over text matched case-insensitively. Each names the rules it stands for.
RULE_SUPERSETS: tuple[str, ...] = (
    # The rules whose find is read from more than one line come first, so that where another
    # part matches at the same place, theirs is the match and all their lines are kept.
    # commands: a secret's triple-quoted string opens (``_ranges`` keeps its lines: another
    # find earlier on its line took the match of a regex that read them)
    TRIPLE_SUPERSET,
    # assignments: a YAML block scalar (``password: |``, maybe after a tag and an anchor),
    # whatever the name (the rule asks for a secret's word in it: the words, read at every
    # place of every line, cost the automaton a twentieth of its time, and a line that
    # ends so is rare in a log); its indented lines below are kept with any hit on it
    # (``_ranges``: read here from each line's start, so that no other find earlier on the
    # line took the match, it cost the automaton a tenth of its work)
    rf":{_BLOCK_SCALAR}",
    # manifests: a ``data:`` map and its indented lines (a Kubernetes Secret's values)
    MANIFEST_SUPERSET,
    # shell: a here-document opens (its first line, a password fed to a command's standard
    # input, is kept with it: ``_ranges``)
    HEREDOC_SUPERSET,
    # assignments: HCL's variable block opens (kept to its default: ``_ranges``)
    HCL_SUPERSET,
    # assignments: a table row named by its first cell, and the separator below a header
    r"(?:^|\n)[ \t]*\|[ \t]*[`*]{0,2}[a-z0-9_.\-]{0,40}"
    r"(?:pass|secret|token|credential|pwd|cookie|auth|(?:api|access|private|signing)[_\-]?key)"
    r"[^\n]*(?:\n[ \t]*\|?[ \t]*:?-)?",
    # assignments: a Go type before ``=``, a subscript (``environ["API_TOKEN"]``)
    rf"(?:{_KEYWORDS})[a-z0-9_.\-]*"
    r"(?:[ \t]+(?:string|\[\]byte)[ \t]*=|\\{0,3}[\"']\](?:\[[^\]\n]*\])*[ \t]*=)",
    # assignments and named: a word, the rest of its name, a separator (auth covers
    # Authorization: …, key covers <add key="…")
    # (not a plural, ``max_tokens=``, nor a scope, ``test_token.py::test_1``, which every
    # rule refuses and many a log line holds)
    # (nor a bare value glued to a colon, ``File.java:98``, ``token_stream:1.2``, which the
    # rules read as a reference, not a setting, unless the name is quoted: ``"token":x``)
    # (nor a plain word after a colon and a blank that more words follow, ``token_stream:
    # processed 5 items``, which the rules read as a sentence) (R's ``<-`` before a string)
    rf"(?:{_OTHER_KEYWORDS}|credentials|pass[a-z]){_NAME_REST}?\\{{0,3}}"
    rf"(?:[\"']:|[\"']?[ \t]*(?:=|<-[ \t]*[\"']"
    rf"|:(?:[\"'\\=|>!&]|$|[ \t]*{_ANNOTATION}|{_SETTING})))",
    # (``pat`` as a word of its own: a personal access token, ``GH_PAT=``, ``pat:``)
    rf"(?:[^a-z0-9]|^)pat(?:[0-9_.\-]{_NAME_REST}?)?\\{{0,3}}"
    rf"(?:[\"']:|[\"']?[ \t]*(?:=|<-[ \t]*[\"']"
    rf"|:(?:[\"'\\=|>!&]|$|[ \t]*{_ANNOTATION}|{_SETTING})))",
    # (``pass`` alone, ``DB_PASS``, ``pass_1``: as a test summary's ``PASS: test_x`` and its
    # count ``PASS=3`` say, it names a secret only set with ``=`` to more than a number, or
    # with ``:`` quoted, after a prefix, in lower case, or before a type or ``=``)
    rf"pass(?:[0-9_.\-]{_NAME_REST}?)?\\{{0,3}}(?:[\"'][ \t]*:|[\"']?[ \t]*(?:"
    r"=[ \t]*(?:[^0-9\s]|[0-9]+[^0-9\s&,;<>(){}\[\]])"
    rf"|:[ \t]*(?:=|{_ANNOTATION})))",
    rf"(?:[^\s][_.\-]pass|(?-i:pass))(?:[0-9_.\-]{_NAME_REST}?)?\\{{0,3}}"
    rf"[\"']?[ \t]*:(?:[ \t\"'\\=|>!&]|$|{_ANNOTATION})",
    # (the named rules' other words go on only past a separator: ``SessionService.java:12``)
    # (and a value of eight characters at least, with a digit, as the rule asks:
    # ``src/session_1.c:12:5:`` and ``session: processed 5 items`` have none)
    rf"(?:{_NAME_WORDS})(?:[_.\-0-9][a-z0-9_.\-]*)?\\{{0,3}}[\"']?[ \t]*(?:=>|:=|=|:)"
    rf"[ \t]*(?:\\*\"{_random_enough(_DQ, _DQ)}|'{_random_enough(_SQ, _SQ)}"
    rf"|`{_random_enough(_BQ, _BQ)}|{_random_enough(_BARE_FIRST, _BARE)})",
    r"authorization[\"']?[ \t]*[:=]",  # the header takes any credential after it
    # named: an element named by a word, a name/value pair, and the two lines of one
    rf"<[a-z0-9_.:\-]{{0,40}}(?:{_NAME_WORDS})[^<>\n]*>[^<\n]+</",
    r"\"[ \t]+value=\"",
    # named: an element that a key or name attribute names (``<setting name="ApiToken"
    # serializeAs="String">…</setting>``), whatever its other attributes are
    r"<[a-z0-9_.:\-]{1,40}[ \t][^>\n]*(?:key|name)=\"[^\"\n]*\"[^>\n]*>[^<\n]+</",
    r"<name>|</name>|<value>",
    # named and assignments: a flag named by a word (``--api-key``, ``-token``)
    # (unbounded: a counted run after each dash would multiply the automaton's states)
    rf"-[a-z0-9_\-]*(?:{_SECRET_WORDS}|api-key)",
    # named: a word, a separator, at most three short words, then a long value
    rf"(?:{_SECRET_WORDS})(?:[_.\-][a-z0-9_\-]{{0,20}})?(?:[ \t]*[:>(,\"'][ \t]*|[ \t]+)"
    r"(?:[a-z]{1,12}[ \t]+){0,3}"
    rf"{_counted_random('[a-z0-9+/_.~]', '[a-z0-9+/_.~=-]', MIN_FREE_STANDING)}",
    r"bearer[ \t]+[a-z0-9_\-.~+/]{8}",  # tokens: Authorization's bearer
    r"://[^\s/@\"'<>]*@",  # tokens: user info in a URL
    r"://[^\s/@\"'<>]*:[^\s@\"'<>]*@",  # tokens: a password holding a slash
    r"%3a%2f%2f",  # tokens: a URL-encoded URL
    r"-----begin ",  # tokens: a key block (stretched to its END on the whole block)
    r"-----end ",  # engine: a key's end whose BEGIN line is gone
    r"-[0-9a-f]{2}-[0-9a-f]{2}-[0-9a-f]{2}-[0-9a-f]{2}-",  # network: a MAC with dashes
    # shell: -pSECRET after mysql or sshpass, -p after a login (not the compilers' -pthread)
    r"(?:mysql|login|sshpass)[^\n]*[ \t\n\r\f\v'\"(]-p"
    r"(?:[^t]|$|t(?:[^h]|$|h(?:[^r]|$|r(?:[^e]|$|e(?:[^a]|$|a(?:[^d]|$))))))",
    r"(?:^|[^g-z_])::(?:[^g-z_]|$)",  # network: IPv6 with ::
    r":[0-9a-f]{1,4}:[0-9a-f]{1,4}:[0-9a-f]{1,4}:[0-9a-f]{1,4}:",  # network: IPv6, MAC
    r"[a-z0-9_.%+\-]@[a-z0-9\-]+\.[a-z0-9.\-]*[a-z]{2}",  # network: e-mail
    r"/home/|/users/|:\\{1,2}users|:/users",  # network: home directories
    r"config(?:ure)?[ \t]+set[ \t]",  # shell: aws configure set, npm config set
    NETRC_SUPERSET,  # shell: a .netrc entry
    r"curl[ \t][^\n]*-u",  # shell: curl -u, --user, -U, --proxy-user
    r"redis-cli[ \t][^\n]*-(?:a|-pass)",  # shell: redis-cli -a, --pass
    r"htpasswd[ \t][^\n]*-[^\s]*b",  # shell: htpasswd -b
    r"-pass(?:in|out)?[ \t]+['\"]?pass:",  # shell: openssl -pass pass:…
    r"smbclient[ \t][^\n]*-(?:u|-user)",  # shell: smbclient -U user%password
    # shell: tools' flags, after the tool's name as a word of its own, as the rule reads it
    # (``shell._command_at``): not a timestamp's ``…:07.067Z`` nor ``gzip``, which then read
    # every other part's states again for the rest of the line (one line in ten of a log)
    r"(?:^|[^a-z0-9_.\-])" + TOOL_NAMES.decode() + r"(?:\.exe)?[ \t][^\n]*-[pnwkas]",
    r"net[ \t]+use[ \t]",  # shell: net use \\host\share PASSWORD
    r"vault(?:\.exe)?[ \t]+login[ \t]",  # shell: vault login TOKEN
    MC.decode(),  # shell: mc alias set ALIAS URL ACCESS SECRET
    *CODE_SUPERSETS,  # code: comparisons, calls, arrays, map entries, ENV, tags
    *COMMAND_SUPERSETS,  # commands: properties, URL-encoded pairs, plain-text passwords
)
# network: IPv4 where the version rule does not keep it (see ``_ipv4_superset``). A pass of
# its own: its names (a tool's, a version word) are read at every word's start, and in the
# one automaton they multiplied the states of every other part's half-read words (alone,
# its automaton is small: the redactor's peak on the build log is 1.7 MB lower).
IPV4_SUPERSET = f"(?i:{_IPV4})"
# named: a name/value pair whose value may be on the next line (``- name: DB_PASSWORD`` then
# ``value: …``). A pass of its own: in the one automaton, ``name =`` and ``key =`` (in every
# other line of code) made it a third slower.
PAIR_SUPERSET = (
    rf"(?i:(?:name|key)[\"']?[ \t]*[:=][ \t]*[\"']?[a-z0-9_.\-]*(?:{_SECRET_WORDS})"
    r"[a-z0-9_.\-]*[\"']?[ \t]*,?[ \t]*(?:\r?\n[ \t]*)?[\"']?value[\"']?[ \t]*[:=])"
)
# Every match of the pair holds this word, on the line where the match ends (and starts on
# that line or on the one before). The format table's one pass finds its places too, as a
# rider (``riders``): in the one automaton with the anchors it costs the pass nothing
# measurable, where a search of its own read the block once more.
PAIR_WORD = b"value"
PAIR_RIDER = WordRider(PAIR_WORD)
# Past this share of a block hit, scanning it whole is cheaper than joining the lines.
MAX_SHARE = 0.5
BARRIER = b"\0\n"
_EARLY = 64 << 10  # how much of a block is read before its density may stop the walk
_MAX_BLANKS = 40  # the name/value pair may have this many blanks between its lines


def compile_latin1(pattern: bytes) -> Searcher:
    """The prefilter's regex: no groups, every byte a character."""
    # Its automaton's cache fills to the budget over a long and varied log, and is most of
    # ``relay redact``'s peak memory: at 48 MB, 113 MB of Python source (the interpreter's
    # library) took the process to 79 MB, at 16 MB to 56 MB, read in 5.8 CPU-s instead of
    # 4.5 (that text's states are many). A build log's fit in 16 MB since the superset's
    # program shrank (6,612 instructions): the 100 MB bench log's pass is as fast as at 48.
    return latin1_searcher(pattern, max_mem=16 << 20)  # ``_ranges`` reads within


@dataclass(frozen=True)
class Lines:
    """The lines a prefilter kept, joined with barriers, and where each piece came from."""

    text: bytes
    starts: list[int]  # where each piece starts in ``text``
    origins: list[int]  # where that piece starts in the block

    def to_block(self, pos: int) -> int:
        """The block offset of ``text`` offset ``pos`` (which must lie in a piece)."""
        i = bisect.bisect_right(self.starts, pos) - 1
        return self.origins[i] + pos - self.starts[i]

    def span_to_block(self, start: int, end: int) -> tuple[int, int]:
        """A span of ``text`` (within one piece, or ending at its end) in block offsets."""
        i = bisect.bisect_right(self.starts, start) - 1
        delta = self.origins[i] - self.starts[i]
        return start + delta, end + delta


class Prefilter:
    """The one pass that says which lines of a block any rule could match."""

    def __init__(
        self,
        literals: Iterable[tuple[bytes, bool]],
        *,
        ansi: bool,
        passes: Iterable[Searcher] = (),
    ) -> None:
        """``literals``: needles (the node table's hosts) and whether each is matched in any
        case; ``ansi``: look for colour codes too (an own secret may be split by them);
        ``passes``: searches of their own whose hit lines are kept too — the literal
        scanner's for this node's secrets (which then reads the kept lines only). Each is a
        pass of its own rather than a part of this one: one automaton for all would need a
        state for each mix of their half-read words (it grew past 20 MB on a build log), and
        each search keeps the states it builds here for its own scan of the kept lines."""
        parts = [f"(?i:{'|'.join(RULE_SUPERSETS)})".encode()]
        for needle, fold in literals:
            quoted = re2.escape(needle)
            parts.append(b"(?i:" + quoted + b")" if fold else quoted)
        if ansi:
            parts.append(rb"\x1b\[")
        self._main = compile_latin1(b"|".join(parts))
        # The pair's search reads only the lines by each place of its word, which a search
        # for the word alone finds at the speed of a literal's (see ``_near``).
        self._word = compile_latin1(b"(?i:" + PAIR_WORD + b")")
        self._pairs = compile_latin1(PAIR_SUPERSET.encode())
        self._ipv4 = compile_latin1(IPV4_SUPERSET.encode())
        self._passes_whole = ((self._ipv4, None), *((search, None) for search in passes))

    def ranges(
        self, block: bytes, most: int | None = None, words: Sequence[int] | None = None
    ) -> list[tuple[int, int]] | None:
        """The hit lines as merged ``(start, end)`` ranges, each line with its line break;
        None as soon as they cover more than ``most`` bytes (the caller scans the block
        whole then, so a block of hit lines is not walked line by line to its end).
        ``words``: every place where the pair's word starts, in order, when another pass
        found them (the format table's, see ``formats.FormatScanner.finds``)."""
        found: list[tuple[int, int]] = []
        near = _near(self._word, block) if words is None else _near_places(block, words)
        for search, windows in ((self._main, None), (self._pairs, near), *self._passes_whole):
            some = _ranges(search, block, most, windows) if windows != [] else []
            if some is None:
                return None
            found = _union(found, some, block) if found else some
        if most is not None and sum(e - s for s, e in found) > most:
            return None
        return found

    def lines(self, block: bytes, words: Sequence[int] | None = None) -> Lines | None:
        """The hit lines joined, or None when they are most of the block (``words``: see
        ``ranges``)."""
        ranges = self.ranges(block, int(MAX_SHARE * len(block)), words)
        if ranges is None:
            return None
        pieces: list[bytes] = []
        starts: list[int] = []
        origins: list[int] = []
        at = 0
        for s, e in ranges:
            if s > 0:  # a barrier line, so the piece starts after a line break as it did
                pieces.append(BARRIER)
                at += len(BARRIER)
            pieces.append(block[s:e])
            starts.append(at)
            origins.append(s)
            at += e - s
        return Lines(b"".join(pieces), starts, origins)


def _ranges(
    search: Searcher,
    block: bytes,
    most: int | None,
    windows: Iterable[tuple[int, int]] | None = None,
) -> list[tuple[int, int]] | None:
    """The lines ``search`` hits, as merged ranges (see ``Prefilter.ranges``); only within
    ``windows`` when given: ordered stretches of the block that hold every match whole."""
    size = len(block)
    out: list[tuple[int, int]] = []
    covered = 0  # bytes of the ranges closed so far
    limit = size if most is None else most
    pos = 0
    for first, stop in ((0, size),) if windows is None else windows:
        pos = max(pos, first)
        while pos < stop:
            s, e = search(block, pos, stop)[0]
            if s < 0:
                break
            start = block.rfind(b"\n", 0, s) + 1
            end = block.find(b"\n", max(e - 1, s))
            end = size if end < 0 else _kept_below(block, start, end + 1)
            if out and start <= out[-1][1] + _MAX_BLANKS and _joins(block, out[-1][1], start):
                out[-1] = (out[-1][0], end)
            else:
                if out:
                    covered += out[-1][1] - out[-1][0]
                out.append((start, end))
            if most is not None:
                kept = covered + out[-1][1] - out[-1][0]
                # Past the first stretch, a block whose hits so far cover more of it than
                # the share allows will too: stop walking its lines (a block of nothing but
                # hits would otherwise be walked line by line to half its length).
                if kept > limit or (end > _EARLY and kept > MAX_SHARE * end):
                    return None
            # The rest of a hit line is kept whatever else it holds; the next search starts
            # at its line break, which a superset may read as the next line's left edge.
            pos = max(end - 1, pos + 1)
    return out


def _kept_below(block: bytes, start: int, end: int) -> int:
    """Where a hit's kept text ends: past its lines (``start`` to ``end``, past a line
    break), and past the lines that a line among them, or among those added, opens for a
    rule to read (``_lines_opened``). Each line is read once."""
    at = start
    walked = 0  # where the last block scalar's lines end (a block inside it ends there too)
    while at < end:
        nl = block.find(b"\n", at, end)
        line_end = end if nl < 0 else nl + 1
        opened, walked = _lines_opened(block, at, line_end, walked)
        end = max(end, opened)
        at = line_end
    return end


def _lines_opened(block: bytes, line: int, end: int, walked: int = 0) -> tuple[int, int]:
    """``end`` (the end of the line from ``line``, past its break), or past the lines it
    opens: a YAML block scalar's indented and blank lines (``password: |``), a secret's
    triple-quoted string, the line below an access key id (``commands.lines_below``), a
    here-document's first line, an HCL variable block to its default. Read here, not by
    the prefilter's regex, because another find that begins earlier on the line takes
    the regex's match (and, read from each line's start, they cost it a tenth of its
    work). ``walked``: where a block scalar's lines already read end; a line before it is
    in that block, and its own block ends there too (a block of ``key: |`` lines is read
    once, not once a line). Returns the end and the walked end."""
    opened = max(
        lines_below(block, line, end),
        heredoc_below(block, line, end),
        hcl_below(block, line, end),
    )
    if block.find(b"|", line, end) < 0 and block.find(b">", line, end) < 0:
        return opened, walked  # (most hit lines: no regex read)
    text = block[line:end]  # (RE2's \z is the whole text's end: the line alone)
    if _BLOCK_SCALAR_LINE(text, 0, len(text))[0][0] < 0:
        return opened, walked
    if end < walked:
        return max(walked, opened), walked
    size = len(block)
    # A log's prefix before the header's key (``2026-01-02T10:00:00Z password: |``): its
    # lines are those with the same prefix and more blanks after it than before the key,
    # as well as the indented ones (``assignments.block_scalar`` reads one or the other).
    logged = log_prefix(block, line)
    key_indent = 0 if logged is None else _blanks(block, logged[0], end)
    while end < size:
        stop = past_line(block, end)
        if block[end] not in _INDENT and block[end:stop].strip():
            after = -1 if logged is None else after_prefix(block, end, logged[1])
            if after < 0:
                break  # a line that opens with text: the block is over
            if block[after:stop].strip() and _blanks(block, after, stop) <= key_indent:
                break  # a line of the log no deeper than the key
        end = stop  # an indented line, or a blank one
    return max(end, opened), end


def _blanks(block: bytes, at: int, end: int) -> int:
    """How many blanks open ``block[at:end]``."""
    text = block[at:end]
    return len(text) - len(text.lstrip(b" "))


_INDENT = frozenset(b" \t")


def _near(word: Searcher, block: bytes) -> list[tuple[int, int]]:
    """From the line before each line that holds the pair's word to that line's end (its
    line break), merged: every pair match lies in one of them."""
    return _near_places(block, _word_places(word, block))


def _word_places(word: Searcher, block: bytes) -> Iterator[int]:
    """Where the pair's word first starts on each line that holds it."""
    size = len(block)
    pos = 0
    while pos < size:
        at = word(block, pos, size)[0][0]
        if at < 0:
            return
        yield at
        stop = block.find(b"\n", at)  # the line's other places of the word give the same
        pos = size if stop < 0 else stop + 1


def _near_places(block: bytes, places: Iterable[int]) -> list[tuple[int, int]]:
    """``_near``'s stretches from every place where the word starts, in order: each line
    that holds one (the first place on a line stands for the others, as there)."""
    out: list[tuple[int, int]] = []
    size = len(block)
    stop = -1
    for at in places:
        if at <= stop:
            continue  # on the line just taken
        first = block.rfind(b"\n", 0, max(block.rfind(b"\n", 0, at), 0)) + 1
        stop = block.find(b"\n", at)
        stop = size if stop < 0 else stop
        if out and first <= out[-1][1]:
            out[-1] = (out[-1][0], stop)
        else:
            out.append((first, stop))
    return out


def _union(
    one: list[tuple[int, int]], other: list[tuple[int, int]], block: bytes
) -> list[tuple[int, int]]:
    """Two passes' ranges as one list, in order, those that overlap or that only blanks
    separate joined."""
    out: list[tuple[int, int]] = []
    for start, end in sorted(one + other):
        if out and start <= out[-1][1] + _MAX_BLANKS and _joins(block, out[-1][1], start):
            out[-1] = (out[-1][0], max(end, out[-1][1]))
        else:
            out.append((start, end))
    return out


def _joins(block: bytes, end: int, start: int) -> bool:
    """Two hit ranges are one when they touch or only blanks lie between them."""
    return start <= end or block[end:start].isspace()
