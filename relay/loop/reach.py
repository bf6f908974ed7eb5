"""Code that reaches into the test runner or the process instead of doing the work.

Ground rules: relay's pytest plugin (``relay/ratchet/pytest_guard.py``) runs in the same
process as the code it judges, so that code can find the plugin and forge its verdict,
and, more simply, code can special-case being under test (``if "pytest" in sys.modules:
return 6``), which no check made at run time can see. So the candidate's text is read
too: a change whose added lines reach into pytest, its plugin manager, relay's guard, the
interpreter's module table, frames, the garbage collector, tracing hooks, raw memory or
the process's exit, or that names the test runner in a string, is never kept on the
gates alone: it goes to a person with the file, line and construct (a hold, not a strike:
such code can be honest, and a wrong rule must not be taught).

What is read: each changed Python file's new text with ``ast``, against the baseline's:
a construct the baseline already had (the same construct, the same code, anywhere in the
file) is credited, so moving code or a baseline that uses ``importlib`` costs nothing;
what is left is what the change added (the lines it added, or an old line an added
alias gives a new meaning). Names are followed through aliases
(``import sys as s``, ``from sys import modules as m``), ``getattr`` with a literal or
folded name (``getattr(sys, "mod" + "ules")``), ``__import__``/``importlib.import_module``
with one, ``sys.modules["..."]``, ``vars(m)``/``m.__dict__`` and re-exports (``os.sys``).
A compiled module (``.pyc``, ``.so``) is always held: Python runs it, relay cannot read it.

Test code (``is_test_file``, and every ``conftest.py``) gets a subset: tests legitimately
import pytest, patch ``sys.modules``, import by name and ``eval``; what no test needs is
to touch pytest's and pluggy's internals (``_pytest``, ``pluggy``; their public names are
in ``pytest``), relay's guard, the garbage collector's object walks, tracing and audit
hooks, ``ctypes``, ``os._exit`` or ``__subclasses__``. (The baseline's tests are judged
again as the baseline wrote them, which is the main defence against a test file.) Nor does a
test need coverage's machinery, with which it could mark lines run that no test ran and keep
"coverage not lower" (``COVERAGE_MACHINERY``: coverage's API and pytest-cov's, the tracer
asked for, code made under a module's file name with ``types.CodeType``, ``marshal``,
``py_compile``, ``code``/``codeop`` or importlib's loaders; ``compile`` under any name but a
``<...>`` pseudo-name; ``co_filename``, ``replace(co_filename=...)`` and any other code
object field given (``CODE_FIELDS``); a string naming coverage's data, reports or tool,
``.coverage``, ``coverage.json``, ``"-m", "coverage"``; ``sqlite3``, the data file's format,
unless the project's own code imports it: ``Plain.uses``). Triage reads HEAD's tests with
the same (``coverage_reaches``). A name built at run time (``import_module(x + "age")``) is
not seen: tests import by name.

Names built from data: outside test code, a name this rule cannot fold to a literal
(``getattr``/``setattr``/``delattr``/``hasattr``, ``inspect.getattr_static``,
``__getattribute__``, ``operator.attrgetter``, ``__import__``/``importlib.import_module``,
``pkgutil.resolve_name``, ``pydoc.locate``, ``sys.modules.get``, ``types.ModuleType``,
``vars()[...]``/``.get(...)``, ``x.__dict__[...]``/``.get(...)``, a key of the environment
however it is reached: ``os.getenv``, ``os.environ``, a copy or an alias of it,
``posix.environ``) is a finding on any base, and so is walking the environment or a
namespace (``for k in os.environ``, ``E.items()``, ``vars(m).items()``,
``list(m.__dict__)``, ``for k in globals()``) or handing ``getattr`` and its kin around:
no static rule can follow data (``bytes([115, 121, 115]).decode()`` is ``"sys"``, reached
through any module that imported sys), so a dynamic name in a change judged by tests is
held for a person. A literal name (``getattr(obj, "name")``, ``os.environ["HOME"]``)
stays free. Plain functions that take attribute or module names are judged the same way
(``functools.update_wrapper``/``wraps`` with ``assigned=``/``updated=`` not a literal
tuple, logging's ``{}``-style format from data, ``module=`` from data, ``enum.global_enum``,
contextlib's redirects subclassed, ``os.path.expandvars``/``expanduser`` of a computed
string), and so is what opens a path hidden from its reader or built from a ``/proc``
piece, or opens, stats or tests a literal absolute path outside the tree (what lies there
differs between the box and the person's machine; ``/dev/null`` is the same everywhere), or
a path that comes to one without being written so: ``..`` pieces above the tree's top
(``os.pardir`` is ``..``; every piece of a join counts, an absolute one starts over), the
file's or the working folder's parents past it, the home folder (``Path.home()``,
``expanduser("~")``), the shared temporary folder, a value of the environment
(``os.environ["HOME"] + "/x"``); and so is finding a host program by name (``shutil.which``).
A literal made unreadable to a person is a finding of its own: character codes made into
text (``bytes([115, 121, 115])``, ``chr(115)``, ``map(chr, ...)``, a function of
the file's that decodes its arguments called with codes), ``bytes.fromhex``, ``base64`` or
``codecs.decode`` of a literal, ``"seludom"[::-1]``; decoding data the code receives is
free. How the process was started (``sys.argv``, ``sys.orig_argv``) is read only in
``if __name__ == "__main__":``; ``posix``/``nt`` are not imported at all; and a string may
not name a gate's tool (``"ruff"``, ``"mypy"``: a word of its own; an ordinary word such
as ``"black"`` or ``"coverage"`` only as the whole string), since code that can tell
which tool runs it can behave for each.

The shape (outside test code): every named look-up above is a list, and a list is beaten
by whatever it does not name (``copyreg``, ``weakref``, ``type(m).__dict__`` bound and read
later), so added code may also import only plain modules (``PLAIN_MODULES``: values in,
values out), the project's own modules and the third-party ones its baseline's code
already imports (``Plain``, computed by the driver), unless the baseline's version of the
same file imported that module already; it may use only a few dunder names
(``DUNDERS_READ``; any dunder method through ``super()`` but what leads to code, frames or
classes; dunder definitions are free), never reach another module through a plain one
(``shutil.os``, ``dataclasses.inspect``) nor a plain module's private name (``random._os``),
and may read ``vars()``/``globals()``/``locals()`` only in place. What the shape alone finds
is said after any more precise finding of the same change.

What it cannot do: see intent. The HMAC guard and the re-run with the baseline's tests
stay as defence in depth, and the README says so.
"""

from __future__ import annotations

import ast
import functools
import re
import sys
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import PurePosixPath

from relay.loop.guard import GATE_TOOLS, is_test_file

# modules (and their attributes) no test needs either: pytest's and pluggy's internals
# (pytest's public API is ``pytest``), raw memory, the collector's object walks, tracing
# and audit hooks, and ending the process behind pytest's back
EVERYWHERE = (
    "_pytest",
    "pluggy",
    "ctypes",
    "gc.get_objects",
    "gc.get_referrers",
    "gc.get_referents",
    "os._exit",
    "sys.settrace",
    "sys.setprofile",
    "sys.addaudithook",
    "sys.monitoring",
    "threading.settrace",
    "threading.setprofile",
    "threading.settrace_all_threads",
    "threading.setprofile_all_threads",
)
# ... and what code under test has no business with: the test runner itself, the module
# table, frames and stacks, import machinery, code objects, exit hooks, dynamic code
SOURCE_ONLY = (
    "pytest",
    "sys.modules",
    "sys._getframe",
    "sys._current_frames",
    "sys.gettrace",
    "sys.getprofile",
    "sys.meta_path",
    "sys.path_hooks",
    "sys.orig_argv",
    "sys.argv",
    "posix",
    "nt",
    "inspect.currentframe",
    "inspect.stack",
    "inspect.trace",
    "inspect.getouterframes",
    "inspect.getinnerframes",
    "traceback.walk_stack",
    "traceback.extract_stack",
    "traceback.format_stack",
    "traceback.print_stack",
    "atexit",
    "runpy",
    "marshal",
    "importlib.util",
    "importlib.machinery",
    "pickle.load",
    "pickle.loads",
    "types.CodeType",
    "types.FunctionType",
    "builtins.__import__",
    "builtins.exec",
    "builtins.eval",
    "__main__",
    "sys.path",
    "zipimport",
)
# ... and, in test code, coverage's own machinery (outside tests each is held already, by
# name or off the plain list): with it, the code coverage measures can mark lines run that
# no test ran (its API and pytest plugin, its tracer asked for by hand, code made under a
# module's file name, a loader that reads other source than the file it names)
COVERAGE_MACHINERY = (
    "coverage", "pytest_cov", "sys.gettrace", "types.CodeType", "marshal", "py_compile",
    "compileall", "code", "codeop", "importlib.abc", "importlib.machinery",
    "importlib._bootstrap", "importlib._bootstrap_external",
)  # fmt: skip
# a code object's fields (``code.replace(co_filename=...)``: code under another file's name
# or lines, which coverage counts as that file's)
CODE_FIELDS = frozenset(
    {"co_argcount", "co_posonlyargcount", "co_kwonlyargcount", "co_nlocals", "co_stacksize",
     "co_flags", "co_firstlineno", "co_code", "co_consts", "co_names", "co_varnames",
     "co_freevars", "co_cellvars", "co_filename", "co_name", "co_qualname", "co_linetable",
     "co_exceptiontable", "co_lnotab"}
)  # fmt: skip
# modules that code under test never hands around as a value
ESCAPES = frozenset(
    {"sys", "gc", "inspect", "builtins", "importlib", "os", "ctypes", "traceback",
     "threading", "_pytest", "pytest", "pluggy", "__main__"}
)  # fmt: skip
# attributes that lead from any object to code, frames or every class, whatever it is
ATTRS_EVERYWHERE = frozenset({"__subclasses__", "co_filename"})
ATTRS_SOURCE = frozenset(
    {"__globals__", "__code__", "__closure__", "__builtins__", "f_back", "f_globals",
     "f_locals", "f_builtins", "f_code", "tb_frame", "gi_frame", "cr_frame", "ag_frame"}
)  # fmt: skip
# modules whose attributes a computed ``getattr`` (or ``__dict__``) could reach into
WATCHED = frozenset(
    {"sys", "os", "gc", "inspect", "builtins", "importlib", "traceback", "threading",
     "types", "ctypes", "_pytest", "pytest", "pluggy", "atexit"}
)  # fmt: skip
# words a string may not hold (case-insensitively): the runner, its settings, relay's guard
WORDS_SOURCE = ("pytest", "pluggy", "conftest", "relay_guard")
# the gates' tools by name (a word of its own in the string: code that knows which tool
# runs it can tell the gates apart); an ordinary word among them only as the whole string
_COMMON_WORDS = frozenset({"black", "coverage", "hypothesis", "tox", "nox", "py"})
TOOL_WORDS = tuple(sorted((GATE_TOOLS | {"black", "isort", "pyflakes"}) - {"py"}))
_TOOL = re.compile(
    r"(?<![a-z0-9])("
    + "|".join(re.escape(w) for w in TOOL_WORDS if w not in _COMMON_WORDS)
    + r")(?![a-z0-9])"
)
WORDS_TESTS = ("_pytest.", "pluggy.", "relay_guard", "relay_pytest")
# coverage's data (``.coverage``, its parallel files, ``.coveragerc``) and reports, its
# pytest plugin, the tool run by name: what edits or names them can mark lines run that
# no test ran, however the code is judged
_COVERAGE_WORDS = re.compile(
    r"\.coverage|(?<![a-z0-9_])coverage\.(?:json|xml|lcov|db|sqlite)|htmlcov|pytest[-_]cov"
    r"|(?:\bimport\s+|\bfrom\s+|-m\s*)coverage\b|^\s*coverage\s*$"
)
# what the project's code must import for its tests to use it: coverage's data file is a
# SQLite database, which a test of a project that uses none has no business opening
TESTS_IF_USED = frozenset({"sqlite3"})
# a process's own files: /proc/self/environ still holds what was removed from os.environ
# (relay's guard settings among it), /proc/<pid>/mem its memory
_PROC = re.compile(r"/proc/.*(?:mem|maps|cmdline|environ)")
_PROC_SOURCE = re.compile(r"^(?:/proc(?:/.*)?|proc|environ|cmdline|mem)$")
# what imports or finds a module (or ``module:attr``) by the name it is given
_IMPORTERS = frozenset(
    {"builtins.__import__", "importlib.import_module", "importlib.__import__",
     "pkgutil.resolve_name", "pydoc.locate", "sys.modules.get"}
)  # fmt: skip
# ... and what makes or runs one from a name: a literal name is judged as it is
_NAMED = frozenset(
    {"types.ModuleType", "importlib.util.find_spec", "importlib.util.spec_from_file_location",
     "importlib.util.spec_from_loader", "importlib.util.module_from_spec",
     "runpy.run_module", "runpy.run_path", "pkgutil.get_loader", "pkgutil.find_loader"}
)  # fmt: skip
_GETTERS = frozenset(
    {"builtins.getattr", "builtins.setattr", "builtins.delattr", "builtins.hasattr",
     "inspect.getattr_static"}
)  # fmt: skip
_SETTERS = frozenset({"builtins.setattr", "builtins.delattr"})
_SCOPES = frozenset({"builtins.globals", "builtins.locals", "builtins.vars"})
# what looks a name up from data: never handed around as a value outside tests
_LOOKERS = frozenset(
    {*_GETTERS, *_IMPORTERS, "operator.attrgetter", "operator.methodcaller",
     "os.path.expandvars", "os.path.expanduser", "functools.update_wrapper", "functools.wraps",
     "builtins.vars", "builtins.globals", "builtins.locals"}
)  # fmt: skip
# the process's environment (and a copy of it): a key read from it must be a literal
_ENVIRON = frozenset({"os.environ", "os.environb", "posix.environ", "nt.environ"})
_ENV_GETS = frozenset(
    {"os.getenv", "os.getenvb", *(f"{e}.{m}" for e in _ENVIRON for m in ("get", "pop")),
     "os.path.expandvars", "os.path.expanduser"}
)  # fmt: skip
# a namespace's mapping (``vars(x)``, ``x.__dict__``, ``globals()``): what reads a key
_MAP_GETS = frozenset({"get", "pop", "setdefault", "__getitem__", "__contains__"})
_ENV_WALKS = frozenset({"keys", "values", "items", "__iter__"})
# a format field's attribute (``{0.sys}``, ``{x.__class__}``): str.format follows it
_FIELD = re.compile(r"\{[\w\[\]]*\.(\w+)")
_ARGV = frozenset({"sys.argv", "sys.orig_argv"})
_LOOPS = (ast.For, ast.AsyncFor, ast.comprehension)
_WALKERS = frozenset({"dict", "list", "sorted", "iter", "set", "tuple", "enumerate", "zip"})
_WRITERS = frozenset(
    {"update", "setdefault", "pop", "popitem", "clear", "__setitem__", "__delitem__"}
)
_BUILTIN_NAMES = frozenset(
    {"__import__", "exec", "eval", "compile", "getattr", "setattr", "delattr", "hasattr",
     "globals", "locals", "vars", "open"}
)  # fmt: skip
COMPILED_SUFFIXES = (".pyc", ".pyo", ".so", ".pyd")
_COOKIE = re.compile(r"^[ \t\f]*#.*?coding[:=][ \t]*([-\w.]+)")
_READ_AS = frozenset({"utf-8", "utf8", "ascii", "us-ascii", "latin-1", "latin1", "iso-8859-1"})
HELD = "the change reaches into the test runner or the process"
STUB_BESIDE = (
    "a stub beside the module it stands for (type checkers read it in place of the"
    " module's code, so their gate no longer checks that code)"
)

# The shape, outside test code: what added code may import without a person. Every other
# module (``os``, ``sys``, ``inspect``, ``types``, ``importlib``, ``pkgutil``, ``copyreg``,
# ``weakref``, ``pickle``, ``code``, ``operator``, ``subprocess``...) is held unless the
# baseline's version of the same file already imported it; the project's own modules and the
# third-party ones its baseline's code imports (``Plain``) are allowed too. Each entry allows
# its submodules (``json.decoder``) but never a private name (``functools._lru_cache_wrapper``,
# ``random._os``) nor another module reached through it (``logging.sys``, ``shutil.os``).
PLAIN_MODULES = frozenset(
    {
        # numbers: values in, values out
        "math", "cmath", "decimal", "fractions", "numbers", "statistics", "random",
        # text
        "re", "string", "textwrap", "unicodedata", "difflib", "shlex", "fnmatch",
        # data formats and encodings (parsers and codecs of bytes and text)
        "json", "csv", "tomllib", "html", "xml.etree", "base64", "binascii", "struct",
        "zlib", "gzip", "bz2", "lzma", "hashlib", "hmac", "secrets", "uuid", "ipaddress",
        "urllib.parse",
        # dates and times
        "datetime", "time", "calendar", "zoneinfo",
        # containers, iteration, classes and types as the language uses them
        "collections", "heapq", "bisect", "array", "itertools", "functools", "graphlib",
        "enum", "dataclasses", "typing", "typing_extensions", "abc", "contextlib", "copy",
        "pprint", "reprlib", "__future__",
        # files by path (a path is data; the process's own files are judged as strings)
        "pathlib", "os.path", "io", "glob", "tempfile", "shutil",
        # the system's constants (error numbers, file mode bits)
        "errno", "stat",
        # diagnostics a library emits (``logging.config`` and ``logging.currentframe`` are
        # held below: the first imports by name, the second returns a frame)
        "logging", "warnings",
    }
)  # fmt: skip
# Left off on purpose: ``operator`` (``attrgetter``/``methodcaller`` take names),
# ``argparse`` (its ``prog`` and ``parse_args()`` read ``sys.argv``: the runner's name),
# ``os`` (``os.path`` is plain; ``os`` holds the environment, ``_exit``, ``system``).
# Packages an allowed submodule binds as a whole (``import xml.etree.ElementTree`` binds
# ``xml``, whose own namespace holds only its submodules)
PLAIN_PARENTS = frozenset({"xml", "urllib"})
# names in plain modules that still look up, evaluate or reach what the rule holds:
# a string annotation is code to ``typing.get_type_hints`` (and to singledispatch's
# ``register``, which calls it), ``string.Formatter.get_field`` is getattr by name,
# ``logging.config`` imports by name, ``logging.currentframe`` is ``sys._getframe``
PLAIN_BUT = (
    "typing.get_type_hints",
    "typing.ForwardRef",
    "typing.evaluate_forward_ref",
    "typing_extensions.get_type_hints",
    "typing_extensions.get_annotations",
    "typing_extensions.ForwardRef",
    "typing_extensions.evaluate_forward_ref",
    "functools.singledispatch",
    "functools.singledispatchmethod",
    "string.Formatter",
    "logging.config",
    "logging.currentframe",
    "enum.global_enum",
)
# ``enum.global_enum`` writes a class's members into the module its ``__module__`` names;
# ``Enum._convert_`` reads and writes the module it is given by name; contextlib's
# redirects swap the attribute of sys their ``_stream`` names and keep the old value in
# ``_old_targets``: a getattr and setattr on sys by a name of the caller's
ATTRS_PLAIN_BUT = frozenset({"_convert_", "_old_targets"})
_REDIRECTS = frozenset({"contextlib.redirect_stdout", "contextlib.redirect_stderr"})
# calls whose ``module=`` names the module a class claims (enum's functional API,
# ``make_dataclass``, ``namedtuple``): what reads that module's namespace follows it
_MODULE_KEYWORD_FREE = frozenset(
    {"warnings.filterwarnings", "warnings.simplefilter", "warnings.warn_explicit"}
)
STDLIB = frozenset(sys.stdlib_module_names)
# plain functions that get or set attributes by the names a caller hands them: judged
# like ``getattr``/``setattr``, so their names must be a literal tuple of literal strings
# (or the module's own defaults): (function, positions of the name tuples, keywords)
_ATTR_TUPLES: dict[str, tuple[tuple[int, int], tuple[str, str]]] = {
    "functools.update_wrapper": ((2, 3), ("assigned", "updated")),
    "functools.wraps": ((1, 2), ("assigned", "updated")),
}
_ATTR_DEFAULTS = frozenset({"functools.WRAPPER_ASSIGNMENTS", "functools.WRAPPER_UPDATES"})
# logging's ``{}`` style formats a record with ``str.format``, which follows attributes
# and items by the names the format holds: a format from data is a getattr by name
_LOG_FORMATS: dict[str, tuple[int, str, int]] = {
    "logging.Formatter": (0, "fmt", 2),
    "logging.basicConfig": (-1, "format", -1),
}
# a string made unreadable to its reader: what decodes a literal into the text it hides
_UNHIDERS = frozenset(
    {*(f"base64.{n}" for n in ("b64decode", "b32decode", "b32hexdecode", "b16decode",
                               "b85decode", "a85decode", "z85decode", "urlsafe_b64decode",
                               "standard_b64decode", "decodebytes")),
     *(f"binascii.{n}" for n in ("unhexlify", "a2b_hex", "a2b_base64", "a2b_uu", "a2b_qp")),
     "codecs.decode", "codecs.encode", "zlib.decompress", "gzip.decompress",
     "bz2.decompress", "lzma.decompress"}
)  # fmt: skip
# what turns codes or bytes into text: a function of the file's that calls one of these
# on its arguments is a decoder, and calling it with character codes hides a string
_DECODING = frozenset({"bytes", "bytearray", "chr", "decode", "fromhex", "from_bytes"})
# what opens a path: a path hidden from its reader, or built from a /proc piece, is held
_OPENERS = frozenset(
    {"builtins.open", "io.open", "io.FileIO", "os.open", "pathlib.Path", "pathlib.PurePath",
     "pathlib.PosixPath", "pathlib.PurePosixPath", "codecs.open"}
)  # fmt: skip
# what takes a path and looks at the file there: named with an absolute path outside the
# tree (``open("/var/lib/dpkg/status")``), code can tell the box from the person's machine
# and behave for each, so such an added call outside tests is held
_PATH_TAKERS = _OPENERS | frozenset(
    {"os.stat", "os.lstat", "os.access", "os.listdir", "os.scandir", "os.walk", "os.readlink",
     "os.statvfs", "os.chdir", "os.path.exists", "os.path.lexists", "os.path.isfile",
     "os.path.isdir", "os.path.islink", "os.path.ismount", "os.path.getsize",
     "os.path.getmtime", "os.path.getctime", "os.path.getatime", "os.path.realpath",
     "os.path.samefile", "glob.glob", "glob.iglob", "shutil.copy", "shutil.copy2",
     "shutil.copyfile", "shutil.copytree", "shutil.disk_usage", "io.open_code"}
)  # fmt: skip
# what builds a path from its first piece (``os.path.join("/var", x)``)
_JOINERS = frozenset(
    {"os.path.join", "posixpath.join", "os.path.expanduser", "posixpath.expanduser",
     "os.path.expandvars", "posixpath.expandvars", "os.fspath", "os.path.abspath",
     "os.path.normpath", "posixpath.abspath", "posixpath.normpath", "posixpath.realpath"}
)  # fmt: skip
# ... from all its pieces, as ``os.path.join`` does (``..`` climbs, an absolute one starts over)
_PATH_CLASSES = frozenset(
    {"pathlib.Path", "pathlib.PurePath", "pathlib.PosixPath", "pathlib.PurePosixPath"}
)
_JOIN_CALLS = _PATH_CLASSES | {"os.path.join", "posixpath.join"}
# the pieces of a path the os module names: read as the text they stand for
# (``os.path.join(os.pardir, os.pardir)`` is ``"../.."``)
_PATH_WORDS = {
    f"{m}.{name}": text
    for m in ("os", "os.path", "posixpath")
    for name, text in (("pardir", ".."), ("curdir", "."), ("sep", "/"))
}
# what names a folder outside the tree without a path: the home folder (``Path.home()``,
# ``expanduser("~")``) and the shared temporary folder (a fresh ``mkdtemp`` is empty alike
# everywhere; what ``gettempdir`` holds is not)
_HOMES = frozenset({f"{c}.home" for c in _PATH_CLASSES})
_TEMPDIRS = frozenset({"tempfile.gettempdir", "tempfile.gettempdirb"})
# what names the working folder (the tree's top, where the gates run)
_CWDS = frozenset({"os.getcwd", "os.getcwdb", *(f"{c}.cwd" for c in _PATH_CLASSES)})
_EXPANDERS = frozenset(
    {"os.path.expanduser", "posixpath.expanduser", "os.path.expandvars", "posixpath.expandvars"}
)
# a path's methods that keep it where it is (``Path("/etc").resolve()``)
_PATH_KEEPS = frozenset(
    {"resolve", "absolute", "expanduser", "joinpath", "with_name", "with_stem", "with_suffix"}
)
_RESOLVERS = frozenset({"os.path.abspath", "os.path.realpath", "posixpath.abspath",
                        "posixpath.realpath"})  # fmt: skip
# what finds a host program by name: what is installed differs between the box and a
# person's machine, so code can tell them apart by it
_WHICH = frozenset({"shutil.which"})
# the absolute paths every machine has alike (nothing to tell apart)
SAME_EVERYWHERE = frozenset({"/dev/null", "/dev/stdin", "/dev/stdout", "/dev/stderr"})
# dunder names added code may use outside tests: names and strings (``__name__``), the
# class (what it leads to, ``__mro__``, ``__subclasses__``, ``__dict__``, stays held),
# construction, context managers, comparison and text; any other (``__dict__``,
# ``__self__``, ``__func__``, ``__wrapped__``, ``__mro__``, ``__bases__``, ``__reduce__``,
# ``__traceback__``, ``__annotations__``, ``__loader__``...) goes to a person
DUNDERS_READ = frozenset(
    {"__name__", "__qualname__", "__doc__", "__module__", "__class__", "__version__",
     "__all__", "__members__", "__cause__", "__context__", "__file__",
     "__init__", "__new__", "__post_init__", "__init_subclass__", "__set_name__",
     "__enter__", "__exit__", "__aenter__", "__aexit__", "__setattr__", "__delattr__",
     "__eq__", "__ne__", "__lt__", "__le__", "__gt__", "__ge__", "__hash__", "__repr__",
     "__str__", "__format__", "__bool__", "__len__"}
)  # fmt: skip
# ... set (``wrapper.__doc__ = f.__doc__``)
DUNDERS_WRITE = frozenset({"__name__", "__qualname__", "__doc__", "__module__"})
# ... and through ``super()`` any dunder method but what leads to code, frames or classes
DUNDERS_HELD = frozenset(
    {"__dict__", "__self__", "__func__", "__wrapped__", "__mro__", "__bases__", "__base__",
     "__reduce__", "__reduce_ex__", "__traceback__", "__annotations__", "__loader__",
     "__spec__", "__defaults__", "__kwdefaults__", "__closure__", "__globals__",
     "__code__", "__builtins__", "__subclasses__", "__import__"}
)  # fmt: skip
# a module's own dunder names read as plain names (``Path(__file__)``, ``if __name__``)
DUNDER_NAMES = DUNDERS_READ | {"__debug__", "__path__", "__package__", "__cached__"}
# attributes only pytest's and pluggy's objects have (a handler or reporter pytest left
# in reach leads to its config, and from there to every plugin: relay's guard among them)
ATTRS_RUNNER = frozenset({"pluginmanager", "_pluginmanager", "list_name_plugin", "getplugin",
                          "_name2plugin", "get_plugins"})  # fmt: skip


@dataclass(frozen=True)
class Plain:
    """What added code outside tests may import beside ``PLAIN_MODULES``: the project's
    own modules (dotted names, from ``project_modules``) and the third-party top-level
    modules its baseline's code already imports (from ``imported_modules``)."""

    own: frozenset[str] = frozenset()
    credited: frozenset[str] = frozenset()
    uses: frozenset[str] = frozenset()  # the standard library's modules its code imports

    @functools.cached_property
    def tops(self) -> frozenset[str]:
        """The project's own top-level names."""
        return frozenset(m.split(".")[0] for m in self.own)

    @functools.cached_property
    def leaves(self) -> frozenset[str]:
        """The last part of each of the project's module names (``pkg.types``: types)."""
        return frozenset(m.rsplit(".", 1)[-1] for m in self.own)


def project_modules(files: Sequence[str], dirs: frozenset[str]) -> frozenset[str]:
    """The dotted names of the project's own modules (``files``: the tree's paths;
    ``dirs``: the folders the gates import from, ``guard.importable_dirs``): its Python
    files and packages that are not test code, named from the folder they import from;
    never a name the standard library or a gate's tool has."""
    found: set[str] = set()
    for path in files:
        pure = PurePosixPath(path)
        if pure.suffix not in (".py", ".pyi") or is_test_code(path):
            continue
        parts = list(pure.with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        for cut in range(len(parts)):
            where = "/".join(parts[:cut])
            name = parts[cut:]
            if where in dirs and name and all(p.isidentifier() for p in name):
                found.add(".".join(name))
    return frozenset(m for m in found if m.split(".")[0] not in STDLIB | GATE_TOOLS | {"__main__"})


_IMPORT_LINE = re.compile(r"^\s*(?:from\s+([\w.]+)\s+import\b|import\s+([\w., \t]+))")


def imported_modules(lines: Iterable[tuple[str, str]], own: frozenset[str]) -> frozenset[str]:
    """The third-party top-level modules non-test code imports: ``lines`` are (path, an
    import line of that file), as ``git grep`` finds them; the standard library's, the
    project's own (``own``), the gates' tools and private names are never credited."""
    tops = {m.split(".")[0] for m in own}
    found: set[str] = set()
    for path, line in lines:
        if is_test_code(path) or not path.endswith((".py", ".pyi")):
            continue
        found.update(t for t in _import_tops(line) if not t.startswith("_"))
    return frozenset(found - STDLIB - GATE_TOOLS - tops - {"execnet", "relay"})


def imported_stdlib(lines: Iterable[tuple[str, str]]) -> frozenset[str]:
    """The standard library's top-level modules non-test code imports (``lines`` as for
    ``imported_modules``): what its tests may use too (``TESTS_IF_USED``)."""
    found: set[str] = set()
    for path, line in lines:
        if not is_test_code(path) and path.endswith((".py", ".pyi")):
            found.update(t for t in _import_tops(line) if t in STDLIB)
    return frozenset(found)


def imported_names(texts: Iterable[str]) -> frozenset[str]:
    """The top-level module names ``texts`` (Python sources) import, as their import
    lines say (``import a.b``, ``from a import b``: a; relative imports name none)."""
    return frozenset(top for text in texts for line in lines_of(text) for top in _import_tops(line))


def _import_tops(line: str) -> list[str]:
    """The top-level module names one import line names (none for a relative import)."""
    got = _IMPORT_LINE.match(line)
    if not got:
        return []
    names = [got.group(1)] if got.group(1) else got.group(2).split(",")
    tops = [name.strip().split(" ")[0].split(".")[0] for name in names]
    return [top for top in tops if top.isidentifier()]


def off_plain(module: str, plain: Plain) -> str | None:
    """Why importing ``module`` (a dotted name) is off the plain list, or None."""
    top = module.split(".")[0]
    if top not in plain.tops and top not in plain.credited and _entry(module) is None:
        return f"imports {module}, a module off the plain list"
    return past_plain(module, plain)


def past_plain(dotted: str, plain: Plain) -> str | None:
    """What ``dotted`` (``shutil.os.environ``, ``.utils.inspect``) reaches past the
    plain module or the project's own module it starts from, or None (also when it
    starts from neither: its import is judged)."""
    if dotted.startswith("."):  # a relative import: the project's own package
        rest = dotted.lstrip(".").split(".")
        return _through("the package", rest, 0, plain, own=True)
    parts, top = dotted.split("."), dotted.split(".")[0]
    if top in plain.tops:
        return _through(top, parts, 1, plain, own=True)
    entry = None if top in plain.credited else _entry(dotted)
    return _through(entry, parts, len(entry.split(".")), plain) if entry else None


def _entry(dotted: str) -> str | None:
    """The shortest prefix of ``dotted`` that ``PLAIN_MODULES`` lists, or None."""
    parts = dotted.split(".")
    for n in range(1, len(parts) + 1):
        if ".".join(parts[:n]) in PLAIN_MODULES:
            return ".".join(parts[:n])
    return None


def _through(
    entry: str, parts: list[str], at: int, plain: Plain, *, own: bool = False
) -> str | None:
    """What ``parts`` reach past their first ``at`` (``entry``: a plain module, or the
    project's own) that the shape holds: a private name of a plain module, or another
    module it imported (``logging.sys``, ``dataclasses.inspect``), or None."""
    for n in range(at, len(parts)):
        part, sofar = parts[n], ".".join(parts[: n + 1])
        if part.startswith("__") and part.endswith("__"):
            return None  # a dunder: judged as one
        if part.startswith("_") and not own:
            return f"uses {sofar}, a private name of {entry}"
        held = part in STDLIB and _entry(part) is None and sofar not in PLAIN_MODULES
        if own and held and (part in plain.leaves or sofar in plain.own):
            held = False
        if held:
            return f"reaches the module {part} through {'.'.join(parts[:n]) or entry}"
    return None


@dataclass(frozen=True)
class Reach:
    """One construct found: where (``line`` 0 for a whole file) and what; ``shape``: found
    by the plain shape alone (an import, a dunder, a namespace off the plain list), which
    a more precise finding of the same change is said before."""

    path: str
    line: int
    what: str
    shape: bool = False

    def said(self) -> str:
        """``path:line: what``, as a person reads it."""
        return f"{self.path}:{self.line}: {self.what}" if self.line else f"{self.path}: {self.what}"


def is_test_code(path: str) -> bool:
    """Whether ``path`` is test code for this rule: a test file, or any conftest.py."""
    return is_test_file(path) or PurePosixPath(path).name == "conftest.py"


def lines_of(text: str) -> list[str]:
    """``text``'s lines as Python numbers them (``\n``, ``\r\n``, ``\r``; never a form
    feed or U+2028, which ``str.splitlines`` would also split at)."""
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    return lines[:-1] if lines[-1] == "" else lines


def added_lines(before: str | None, after: str) -> frozenset[int]:
    """The 1-based numbers of the lines of ``after`` that ``before`` did not have (all of
    them for a new file): each line's text counted against the baseline's, so a moved
    line is not added (linear, whatever the size of the file)."""
    new = lines_of(after)
    had = Counter(lines_of(before)) if before is not None else Counter()
    added = []
    for number, line in enumerate(new, start=1):
        if had[line] > 0:
            had[line] -= 1
        else:
            added.append(number)
    return frozenset(added)


def reaches(
    path: str, before: str | None, after: str | None, plain: Plain = Plain()
) -> list[Reach]:
    """What the change to ``path`` (a Python source) makes it reach into, by line;
    none when the file is gone or unchanged. Each construct the baseline's text already
    had (the same construct in the same code) is credited once for each time it had it,
    the baseline's own lines first: what is left is new, on an added line or on a line
    the baseline had whose meaning an added line changed (``import sys as x`` above an
    old ``x.modules``). An import off the plain list (``plain``: what beside
    ``PLAIN_MODULES`` is allowed) is credited whenever the baseline's file imported that
    module at all."""
    if after is None:
        return []
    added = added_lines(before, after)
    if not added:
        return []
    test = is_test_code(path)
    found = _cookie(path, after, added)
    try:
        scan = _scan(after, test, plain, len(PurePosixPath(path).parts) - 1)
    except (SyntaxError, ValueError, RecursionError) as err:
        # fail closed: what relay cannot read (newer syntax than relay's Python, nesting
        # too deep) could reach anything
        said = getattr(err, "msg", None) or type(err).__name__
        what = f"relay cannot read it ({said}), so what it reaches is unseen"
        return [*found, Reach(path, min(added), what)]
    now, shaped = scan.found, scan.shaped
    had: frozenset[str] = frozenset()
    try:
        old = _scan(before, test, plain, len(PurePosixPath(path).parts) - 1) if before else None
    except (SyntaxError, ValueError, RecursionError):
        old = None
    credit = Counter(key for _, key, _ in old.found) if old else Counter()
    had = frozenset(old.imported) if old else had
    # the baseline's file imported that module: any import of it is credited
    now = [e for e in now if not (e[1][1].startswith(_MODULE) and e[1][1][len(_MODULE) :] in had)]
    left = []
    for each in now:  # the baseline's own lines use their credit first
        if not each[2] & added and credit[each[1]] > 0:
            credit[each[1]] -= 1
        else:
            left.append(each)
    for line, key, _ in left:
        if credit[key] > 0:
            credit[key] -= 1
        else:
            found.append(Reach(path, line, key[0], key[0] in shaped))
    return sorted(found, key=lambda r: r.line)


def reaches_in(
    changes: Sequence[str],
    texts: Mapping[str, tuple[str | None, str | None]],
    plain: Plain = Plain(),
) -> list[Reach]:
    """Every finding of the change: ``texts`` holds (before, after) of each changed
    Python source (other files are not read here; ``guard.py`` judges the ones that
    configure the gates); a changed compiled module that is there afterwards is one.
    ``plain``: the project's own modules and the third-party ones its code imports."""
    found: list[Reach] = []
    for path in changes:
        if path.endswith(COMPILED_SUFFIXES) and texts.get(path, (None, ""))[1] is not None:
            found.append(Reach(path, 0, "a compiled module (Python runs it; no one can read it)"))
        elif path in texts and path.endswith(".py"):
            found.extend(reaches(path, *texts[path], plain))
    return found


# what a finding in test code says when it reaches coverage's machinery (``_Scan``)
_COVERING = re.compile(
    r"^(?:imports \S+ \((?:" + "|".join(re.escape(m) for m in COVERAGE_MACHINERY) + r")\)"
    r"|uses (?:" + "|".join(re.escape(m) for m in COVERAGE_MACHINERY) + r")$"
    r"|uses \.co_filename$|makes a code object with |compiles code under a file's name"
    r"|hands builtins\.compile around|imports sqlite3 |a string naming coverage's)"
)


def coverage_reaches(path: str, text: str, plain: Plain = Plain()) -> list[Reach]:
    """What test code (``path``, whole: ``text``) does with coverage's machinery: its
    API, its data files and reports, code made under a file's name (``_COVERING``). Triage
    reads HEAD's tests with it: coverage their run measured may hold lines no test ran."""
    if not is_test_code(path) or not path.endswith(".py"):
        return []
    found = reaches(path, None, text, plain)
    return [r for r in found if _COVERING.match(r.what)]


def stubs_beside(changes: Sequence[str], present: Iterable[str]) -> list[Reach]:
    """A stub (``.pyi``) the change adds or edits beside the module it stands for
    (``src/calc.pyi`` by ``src/calc.py``, both in the candidate, ``present``): mypy and
    pyright read a stub in place of its module, so the type gate no longer checks the
    module's code, whatever the stub declares."""
    have = frozenset(present)
    return [
        Reach(path, 0, STUB_BESIDE)
        for path in changes
        if path.endswith(".pyi") and path in have and path[:-1] in have
    ]


def held_reason(found: Sequence[Reach], commit: str = "") -> str:
    """The one line a person reads when a change is held for reaching in (``commit``:
    the candidate, which stays readable in the clone's objects though nothing is kept)."""
    first = next((r for r in found if not r.shape), found[0]).said()
    more = f" (and {len(found) - 1} more)" if len(found) > 1 else ""
    read = f" (`git show {commit[:12]}`)" if commit else ""
    return (
        f"{HELD}: {first}{more}; the gates cannot vouch for such code, so nothing of it was"
        f" kept: a person reads it{read} and decides"
    )


def _cookie(path: str, text: str, added: frozenset[int]) -> list[Reach]:
    """A source encoding relay does not read the text with (``# coding: utf-7``): Python
    would run other code than the text this rule reads."""
    for n, line in enumerate(lines_of(text)[:2], start=1):
        got = _COOKIE.match(line)
        if got and n in added and got.group(1).lower().replace("_", "-") not in _READ_AS:
            return [Reach(path, n, f"a source encoding relay does not read ({got.group(1)})")]
    return []


# --- the scan ---

Key = tuple[str, str]  # (construct, the code that holds it): what the baseline is credited
_MODULE = "module:"  # a key's code for an import off the plain list: credited by module


def _climbs(text: str) -> bool:
    """Whether a relative path's ``..`` pieces take it above where it starts (the tree's
    top, where the gates run): ``"../x"``, ``"a/../../x"``."""
    if text.startswith("/"):
        return False
    level = 0
    for piece in text.split("/"):
        level += -1 if piece == ".." else (0 if piece in ("", ".") else 1)
        if level < 0:
            return True
    return False


def _outside_text(text: str) -> str | None:
    """``text`` when it names a path outside the tree: absolute (but ``/dev/null`` and the
    standard streams, alike everywhere) or climbing above the tree's top."""
    if _climbs(text):  # ``"../../var"``: above the tree the gates run in
        return text
    if text in SAME_EVERYWHERE or not text.startswith("/"):
        return None
    return text


def _join_texts(parts: Sequence[str]) -> str:
    """``parts`` joined as ``os.path.join`` joins them (an absolute one starts over)."""
    text = ""
    for part in parts:
        text = part if part.startswith("/") or not text else f"{text.rstrip('/')}/{part}"
    return text


def _spread(node: ast.expr) -> list[ast.expr]:
    """What ``*node`` hands a call, when it is a literal list (``*[".."] * 9``)."""
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult):
        times = _int(node.right)
        items = _spread(node.left)
        return items * min(times, 64) if times is not None and times > 0 else [node]
    return list(node.elts) if isinstance(node, ast.List | ast.Tuple) else [node]


def _joined_items(
    sep: object, items: ast.expr, outside: Callable[[ast.expr], str | None]
) -> str | None:
    """``_outside`` of ``sep.join(items)`` (``"/".join(["", "etc"])``,
    ``"/".join([".."] * 9)``): judged by its first item."""
    elts = _spread(items)
    if elts == [items] or not elts:
        return None
    first = elts[0]
    if isinstance(sep, str) and sep.startswith("/") and fold(first) == "":
        return sep + "..."
    return outside(first)


@functools.lru_cache(maxsize=8)
def _scan(text: str, test: bool, plain: Plain, depth: int | None = None) -> _Scan:
    """Each construct in ``text``: ``found`` holds (line, key, the lines its code spans);
    ``depth``: how many folders deep the file lies in the tree. Kept for the same
    arguments (the scan reads nothing else, and no one changes a scan once made): a kept
    candidate's file is the next iteration's baseline, scanned once, not twice."""
    # as bytes, so that Python's own reading applies (its coding cookie; git's text of a
    # file that is not UTF-8 holds its bytes as surrogates)
    tree = ast.parse(text.encode("utf-8", "surrogateescape"))
    scan = _Scan(test, tree, plain, depth)
    scan.walk(tree)
    return scan


def _span(node: ast.AST) -> frozenset[int]:
    start = getattr(node, "lineno", 0)
    return frozenset(range(start, (getattr(node, "end_lineno", None) or start) + 1))


def _matches(qual: str, entries: Sequence[str]) -> str | None:
    for entry in entries:
        if qual == entry or qual.startswith(entry + "."):
            return entry
    return None


def _rebased(qual: str) -> str:
    """A watched module reached through another's namespace (``os.sys``,
    ``logging.sys.modules``) is that module."""
    parts = qual.split(".")
    for n in range(len(parts) - 1, 0, -1):
        if parts[n] in WATCHED and parts[n] not in ("types",):
            return ".".join(parts[n:])
    return qual


def fold(node: ast.AST) -> str | None:
    """The string an expression of literals comes to (``"mod" + "ules"``, ``f"a{'b'}"``,
    ``"".join(["a", "b"])``, ``"selud"[::-1]``, ``chr(95)``), or None."""
    if isinstance(node, ast.Constant):
        return node.value if isinstance(node.value, str) else None
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        left, right = fold(node.left), fold(node.right)
        return left + right if left is not None and right is not None else None
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult):
        text, times = fold(node.left), node.right
        if text is not None and isinstance(times, ast.Constant) and isinstance(times.value, int):
            return text * min(times.value, 64)
        return None
    if isinstance(node, ast.JoinedStr):
        parts = [
            fold(v.value) if isinstance(v, ast.FormattedValue) else fold(v) for v in node.values
        ]
        return "".join(p for p in parts if p is not None) if None not in parts else None
    if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Slice):
        text = fold(node.value)
        nums: list[int | None] = []
        for bound in (node.slice.lower, node.slice.upper, node.slice.step):
            value = _int(bound)
            if (bound is not None and value is None) or (value == 0 and bound is node.slice.step):
                return None
            nums.append(value)
        return None if text is None else text[slice(*nums)]
    if isinstance(node, ast.Call) and not node.keywords:
        func = node.func
        if isinstance(func, ast.Attribute) and func.attr == "join" and len(node.args) == 1:
            sep, items = fold(func.value), node.args[0]
            if sep is not None and isinstance(items, (ast.List, ast.Tuple)):
                parts = [fold(e) for e in items.elts]
                return sep.join(p for p in parts if p is not None) if None not in parts else None
        if isinstance(func, ast.Attribute) and func.attr in ("lower", "upper") and not node.args:
            text = fold(func.value)
            return None if text is None else getattr(text, func.attr)()
        if isinstance(func, ast.Name) and func.id == "chr" and len(node.args) == 1:
            code = _int(node.args[0])
            return chr(code) if code is not None and 0 <= code < 0x110000 else None
    return None


def _int(node: ast.expr | None) -> int | None:
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        inner = _int(node.operand)
        return None if inner is None else -inner
    if isinstance(node, ast.Constant) and isinstance(node.value, int):
        return node.value
    return None


def _is_div(node: ast.AST | None) -> bool:
    return isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div)


def _is_main(test: ast.expr) -> bool:
    """``__name__ == "__main__"``, either way round."""
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1):
        return False
    sides = [test.left, test.comparators[0]]
    named = any(isinstance(s, ast.Name) and s.id == "__name__" for s in sides)
    return isinstance(test.ops[0], ast.Eq) and named and any(fold(s) == "__main__" for s in sides)


def _type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


class _PathWords(ast.NodeTransformer):
    """Reads ``os.pardir``, ``os.curdir`` and ``os.sep`` (however imported) as the text
    they stand for, so that what folds a path folds them too."""

    def __init__(self, scan: _Scan) -> None:
        self.scan = scan

    def _word(self, node: ast.Name | ast.Attribute) -> ast.AST:
        text = _PATH_WORDS.get(self.scan.qual(node) or "")
        if text is None or not isinstance(node.ctx, ast.Load):
            return self.generic_visit(node)
        return ast.copy_location(ast.Constant(text), node)

    def visit_Name(self, node: ast.Name) -> ast.AST:
        return self._word(node)

    def visit_Attribute(self, node: ast.Attribute) -> ast.AST:
        return self._word(node)


class _Scan:
    """One file's constructs; names are followed through the whole file's imports
    (scopes are not told apart: an alias anywhere counts everywhere)."""

    def __init__(
        self, test: bool, tree: ast.Module, plain: Plain = Plain(), depth: int | None = None
    ) -> None:
        self.test = test
        self.depth = depth  # the file's folders below the tree's top (None: not known)
        self.plain = plain
        self.modules = (
            (*EVERYWHERE, *COVERAGE_MACHINERY) if test else (*EVERYWHERE, *SOURCE_ONLY, *PLAIN_BUT)
        )
        self.attrs = (
            ATTRS_EVERYWHERE
            if test
            else ATTRS_EVERYWHERE | ATTRS_SOURCE | ATTRS_RUNNER | ATTRS_PLAIN_BUT
        )
        self.imported: set[str] = set()  # every module the file imports (and their parents)
        self.raw: dict[str, str] = {}  # a name an import binds: the module path it names
        self.shaped: set[str] = set()  # what the plain shape alone found
        self.words = WORDS_TESTS if test else WORDS_SOURCE
        self.aliases: dict[str, str] = {}
        self.module_names: set[str] = set()
        self.bound: set[str] = set()
        self.found: list[tuple[int, Key, frozenset[int]]] = []
        self._seen: set[tuple[int, str]] = set()
        self.docstrings: set[int] = set()
        self.type_checking_bound = False
        self.main = 0  # inside ``if __name__ == "__main__":`` (how a script was started is its own)
        self.decoders: set[str] = set()  # the file's functions that turn codes into text
        self.hidden_names: set[str] = set()  # names bound to a string hidden from its reader
        for node in ast.walk(tree):
            self._learn(node)
        self._learn_environ(tree)
        self.outside_names: dict[str, str] = {}  # names bound to a path outside the tree
        if not test:
            _PathWords(self).visit(tree)
            self._learn_hiding(tree)
            self._learn_outside(tree)

    def _learn_outside(self, tree: ast.Module) -> None:
        """The names bound to an absolute path outside the tree (``P = "/etc/x"``, a
        parameter's default ``path="/etc/x"``), wherever they are used."""
        changed = True
        while changed:  # ``a = "/etc"; b = a + "/x"``: until nothing new is learnt
            changed = False
            for node in ast.walk(tree):
                pairs: list[tuple[ast.expr, ast.expr]] = []
                if isinstance(node, ast.Assign | ast.AugAssign | ast.AnnAssign) and node.value:
                    targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                    pairs += [(t, node.value) for t in _flat(list(targets))]
                elif isinstance(node, ast.arguments):
                    given = [*node.posonlyargs, *node.args]
                    given = given[len(given) - len(node.defaults) :]
                    pairs += [
                        (ast.Name(a.arg), d) for a, d in zip(given, node.defaults, strict=True)
                    ]
                    pairs += [
                        (ast.Name(a.arg), d)
                        for a, d in zip(node.kwonlyargs, node.kw_defaults, strict=True)
                        if d is not None
                    ]
                for target, value in pairs:
                    if not isinstance(target, ast.Name) or target.id in self.outside_names:
                        continue
                    where = self._outside(value)
                    if where is not None:
                        self.outside_names[target.id] = where
                        changed = True

    def _outside(self, node: ast.expr) -> str | None:
        """The path outside the tree (the tree's own is never written literally) that
        ``node`` starts with or comes to, or None: an absolute one, one whose ``..`` climb
        above the tree's top, the home folder (``~``), the shared temporary folder or a
        value of the environment (``$HOME``); through concatenation, f-strings,
        ``%``/``.format``, every piece of ``os.path.join``/``Path(...)``/``/``/``joinpath``
        (``os.pardir`` read as ``..``), a path's methods and names bound to one.
        ``/dev/null`` and the standard streams are the same everywhere."""
        text = fold(node)
        if text is not None:
            return _outside_text(text)
        if self._above_tree(node):
            return ast.unparse(node)
        pieces = self._pieces(node)
        if len(pieces) > 1:
            return self._joined_outside(pieces)
        if isinstance(node, ast.JoinedStr):
            first = node.values[0] if node.values else None
            if isinstance(first, ast.Constant):
                return self._outside(first)
            return self._outside(first.value) if isinstance(first, ast.FormattedValue) else None
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult):  # ``"../" * 40``
            return self._outside(node.left) or self._outside(node.right)
        if isinstance(node, ast.BinOp):
            return self._outside(node.left)
        if isinstance(node, ast.Name):
            return self.outside_names.get(node.id)
        if isinstance(node, ast.Attribute) and node.attr in ("anchor", "root"):  # "/"
            return "/"
        if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Attribute):
            parts = node.value.attr == "parts" and self._ups(node.value.value) is not None
            if parts and _int(node.slice) in (0, None):
                return "/"  # an absolute path's first part: its root
        if isinstance(node, ast.Attribute) and node.attr in ("parent", "parents"):
            return self._outside(node.value)
        if isinstance(node, ast.Subscript) and self.qual(node.value) in _ENVIRON:
            return f"${fold(node.slice) or '...'}"  # ``os.environ["HOME"]``
        if isinstance(node, ast.Subscript):
            return self._outside(node.value)  # ``p.parents[0]``
        if isinstance(node, ast.NamedExpr):
            return self._outside(node.value)
        if isinstance(node, ast.Call):
            return self._outside_call(node)
        return None

    def _outside_call(self, node: ast.Call) -> str | None:
        """``_outside`` of a call: what a path taker or builder is given, what a path's
        method keeps (``.resolve()``), the home and temporary folders, the environment."""
        func = node.func
        qual = self.qual(func)
        attr = func.attr if isinstance(func, ast.Attribute) else None
        first = node.args[0] if node.args else None
        if qual in _HOMES:
            return "~"
        if qual in _TEMPDIRS:
            return "$TMPDIR"
        if qual in _ENV_GETS and qual not in _EXPANDERS:  # ``os.environ.get("HOME")``
            return f"${(fold(first) if first is not None else None) or '...'}"
        method = qual not in _EXPANDERS and attr == "expanduser" and not node.args
        if method and isinstance(func, ast.Attribute):
            qual, first = "os.path.expanduser", func.value  # ``Path("~").expanduser()``
        if qual in _EXPANDERS and first is not None:
            text = self._text(first)
            if text is None and method:
                return "~"  # ``Path(x).expanduser()``: x may start with ~
            if text is None:
                return None  # ``expanduser(x)``: a computed key, a finding of its own
            if qual.endswith("user") and text.startswith("~"):
                return "~"
            if qual.endswith("vars") and "$" in text:
                return text
            return self._outside(first)
        if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Constant):
            if func.attr == "format":
                return self._outside(func.value)
            if func.attr == "join" and node.args:
                return _joined_items(func.value.value, node.args[0], self._outside)
            return None
        if qual in _PATH_TAKERS or qual in _JOINERS:  # every path it is given
            for arg in (*node.args, *(k.value for k in node.keywords)):
                where = self._outside(arg.value if isinstance(arg, ast.Starred) else arg)
                if where is not None:
                    return where
            return None
        if not isinstance(func, ast.Attribute):
            return None
        if attr in ("glob", "rglob") and first is not None:  # ``p.glob("../../*")``
            return self._outside(first) or self._outside(func.value)
        return self._outside(func.value) if attr in _PATH_KEEPS else None

    def _pieces(self, node: ast.expr) -> list[ast.expr]:
        """The pieces a path joins (``os.path.join(a, b)``, ``Path(a, b)``, ``a / b``,
        ``p.joinpath(a, b)``, ``*[os.pardir] * 9``), or ``[node]`` for anything else."""
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div):
            return [*self._pieces(node.left), *self._pieces(node.right)]
        if not isinstance(node, ast.Call) or node.keywords:
            return [node]
        func = node.func
        if self.qual(func) in _JOIN_CALLS:
            given: list[ast.expr] = []
        elif isinstance(func, ast.Attribute) and func.attr == "joinpath":
            given = self._pieces(func.value)
        else:
            return [node]
        for arg in node.args:
            if isinstance(arg, ast.Starred):
                given.extend(_spread(arg.value))
            else:
                given.extend(self._pieces(arg))
        return given

    def _text(self, node: ast.expr) -> str | None:
        """The text a path of literal pieces comes to (``Path()`` is ``""``), or None."""
        parts = [fold(p) for p in self._pieces(node)]
        if None in parts:
            return None
        return _join_texts([p for p in parts if p is not None])

    def _joined_outside(self, pieces: list[ast.expr]) -> str | None:
        """``_outside`` of a path's pieces joined: a piece outside on its own (an absolute
        one starts over, ``Path("data", HOME)``), or the literal pieces climbing above the
        tree (``os.path.join("a", "..", "..")``); a piece no rule folds (``x``) leaves
        what follows it unjudged until an absolute one."""
        text: str | None = ""
        for n, piece in enumerate(pieces):
            part = fold(piece)
            if part is None:
                where = self._outside(piece)
                if where is not None:
                    return where
                text = None
            elif part.startswith("/") or n == 0:
                text = part
            elif text is not None:
                text = _join_texts([text, part])
            if text is not None and _outside_text(text) is not None:
                return text
        return None

    def _above_tree(self, node: ast.expr) -> bool:
        """Whether ``node`` climbs from the file's own path or the working folder above
        the tree's top (``Path(__file__).parents[k]``, ``.parent``, ``os.path.dirname`` or
        ``..`` pieces beyond the file's depth; ``Path.cwd().parent``); outside tests only."""
        if self.test or self.depth is None:
            return False
        up = self._ups(node)
        return up is not None and up > self.depth + 1

    def _ups(self, node: ast.expr) -> int | None:
        """How many folders up from ``__file__`` ``node`` is (the working folder, the
        tree's top, is ``depth + 1``), or None when it is not the file's path or the working
        folder climbed."""
        if isinstance(node, ast.Name):
            return 0 if node.id == "__file__" else None
        pieces = self._pieces(node)
        if len(pieces) > 1:
            return self._climbed(self._ups(pieces[0]), pieces[1:])
        if isinstance(node, ast.Attribute) and node.attr == "parent":
            inner = self._ups(node.value)
            return None if inner is None else inner + 1
        if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Attribute):
            if node.value.attr != "parents":
                return None
            inner = self._ups(node.value.value)
            k = node.slice
            if inner is None:
                return None
            if isinstance(k, ast.Constant) and isinstance(k.value, int):
                return inner + k.value + 1 if k.value >= 0 else 10**6  # [-1]: the root
            return 10**6  # an index no reading bounds: as far as it goes
        if isinstance(node, ast.Call):
            func = node.func
            qual = self.qual(func)
            if qual in _CWDS and self.depth is not None:
                return self.depth + 1
            if isinstance(func, ast.Attribute) and func.attr in ("resolve", "absolute"):
                return self._resolved(func.value)
            if qual in _OPENERS and node.args:  # ``Path(__file__)``
                return self._ups(node.args[0])
            if qual in ("os.path.dirname", "posixpath.dirname") and node.args:
                inner = self._ups(node.args[0])
                return None if inner is None else inner + 1
            if qual in _RESOLVERS and node.args:
                return self._resolved(node.args[0])
        return None

    def _resolved(self, node: ast.expr) -> int | None:
        """``_ups`` of ``node`` made absolute: a relative path of literal pieces starts
        at the working folder (``Path(".").resolve().parent``)."""
        up = self._ups(node)
        text = self._text(node) if up is None and self.depth is not None else None
        if text is None or text.startswith("/") or self.depth is None:
            return up
        return self._climbed(self.depth + 1, [ast.Constant(text)])

    def _climbed(self, up: int | None, pieces: list[ast.expr]) -> int | None:
        """``up`` moved by the pieces joined to it (``..`` one up, a name one down);
        past the tree's top at any point is as far as it goes."""
        if up is None or self.depth is None:
            return None
        for piece in pieces:
            part = fold(piece)
            if part is None:
                if self._outside(piece) is not None:
                    return 10**6
                up -= 1  # a folder below, as code that joins a name means it
                continue
            if part.startswith("/"):
                return None  # an absolute piece starts over: judged as such
            for each in part.split("/"):
                up += 1 if each == ".." else 0 if each in ("", ".") else -1
                if up > self.depth + 1:
                    return 10**6
        return up

    def _learn_hiding(self, tree: ast.Module) -> None:
        """The file's decoders (a function or lambda that calls ``bytes``, ``chr``,
        ``.decode``... on its own parameters) and the names bound to a hidden string
        (``_P = _w(47, 112)``; ``_P += ...``), wherever they are used."""
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                if _decodes_params(node.args, node):
                    self.decoders.add(node.name)
            elif (
                isinstance(node, ast.Assign)
                and isinstance(node.value, ast.Lambda)
                and _decodes_params(node.value.args, node.value)
            ):
                self.decoders.update(
                    t.id for t in _flat(list(node.targets)) if isinstance(t, ast.Name)
                )
        changed = True
        while changed:  # ``a = _w(115); b = a``: until nothing new is learnt
            changed = False
            for node in ast.walk(tree):
                if isinstance(node, ast.Assign | ast.AugAssign | ast.AnnAssign) and node.value:
                    targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                    if not self._hidden_in(node.value):
                        continue
                    for target in _flat(list(targets)):
                        if isinstance(target, ast.Name) and target.id not in self.hidden_names:
                            self.hidden_names.add(target.id)
                            changed = True

    def _hidden_in(self, node: ast.expr) -> bool:
        """Whether ``node`` holds a string hidden from its reader (``_hides``), or a name
        bound to one."""
        for each in ast.walk(node):
            if isinstance(each, ast.Name) and each.id in self.hidden_names:
                return True
            if isinstance(each, ast.expr) and self._hides(each):
                return True
        return False

    def _hides(self, node: ast.expr) -> str | None:
        """How ``node`` makes a literal unreadable to a person, or None: character codes
        made into text (``bytes([115, 121, 115])``, ``chr(115)``, ``map(chr, [...])``, a
        decoder of the file's called with codes), a literal decoded (``bytes.fromhex``,
        ``base64.b64decode``, ``codecs.decode(.., "rot13")``, ``b"..".decode("hex-ish")``)
        or read backwards (``"seludom"[::-1]``). Decoding data the code receives is free."""
        if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Slice):
            step = node.slice.step
            text = isinstance(node.value, ast.Constant) and isinstance(
                node.value.value, str | bytes
            )
            if step is not None and (text or fold(node.value) is not None) and _int(step) != 1:
                return "a literal read backwards or strided"
            return None
        if not isinstance(node, ast.Call):
            return None
        func = node.func
        name = func.id if isinstance(func, ast.Name) and func.id not in self.bound else None
        first = node.args[0] if node.args else None
        if name in ("bytes", "bytearray") and first is not None and _codes(first, least=2):
            return f"{name}() of character codes"
        if name == "chr" and first is not None:
            code = _int(first)
            spelt = chr(code) if code is not None and 32 < code < 127 else ""
            if spelt and (spelt.isalnum() or spelt in "_./$"):
                return f"chr({code}) spells {spelt!r}"
        chr_map = name == "map" and len(node.args) == 2 and getattr(first, "id", None) == "chr"
        if chr_map and _codes(node.args[1], least=2):
            return "map(chr, ...) of character codes"
        if isinstance(func, ast.Name) and func.id in self.decoders:
            codes = node.args and all(_codes(a, least=1) for a in node.args)
            if codes and not node.keywords:
                return f"{func.id}() of character codes"
        attr = func.attr if isinstance(func, ast.Attribute) else None
        on = func.value if isinstance(func, ast.Attribute) else None
        literal = first is not None and (_literal(first) or fold(first) is not None)
        if attr == "fromhex" and isinstance(on, ast.Name) and literal:
            return f"{on.id}.fromhex of a literal"
        q = self.qual(func)
        if q in _UNHIDERS and literal:
            return f"{q} of a literal"
        if attr == "decode" and on is not None:
            how = fold(first) if first is not None else "utf-8"
            plain = (how or "").lower().replace("_", "-") in (*_READ_AS, "utf-8")
            if isinstance(on, ast.Constant) and isinstance(on.value, bytes) and not plain:
                return f"a literal decoded as {how or 'a computed codec'}"
            made = any(
                isinstance(n, ast.Attribute) and n.attr in ("to_bytes", "pack")
                for n in ast.walk(on)
            )
            if made and all(_literal(a) for c in ast.walk(on) if isinstance(c, ast.Call)
                            for a in c.args):  # fmt: skip
                return "numbers made into bytes and decoded"
        if attr == "translate" and isinstance(on, ast.Constant) and isinstance(on.value, str):
            return "a literal translated"
        return None

    def _learn_environ(self, tree: ast.Module) -> None:
        """Names bound to the environment or its getters (``E = os.environ``,
        ``env = os.environ.copy()``, ``get = os.getenv``) stand for it everywhere."""
        binds: list[tuple[str, ast.expr]] = []
        for node in ast.walk(tree):
            if isinstance(node, ast.Assign):
                names = [t for t in _flat(node.targets) if isinstance(t, ast.Name)]
                binds += [(t.id, node.value) for t in names]
            elif (
                isinstance(node, (ast.AnnAssign, ast.NamedExpr))
                and node.value is not None
                and isinstance(node.target, ast.Name)
            ):
                binds.append((node.target.id, node.value))
        changed = True
        while changed:  # ``E = os.environ; F = E``: until nothing new is learnt
            changed = False
            for name, value in binds:
                q = self.qual(value)
                if (
                    q is not None
                    and (q in _ENVIRON or q in _ENV_GETS)
                    and self.aliases.get(name) != q
                ):
                    self.aliases[name] = q
                    changed = True

    def _learn(self, node: ast.AST) -> None:
        if isinstance(node, ast.Import | ast.ImportFrom):
            self._learn_import(node)
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.asname:
                    self.aliases[alias.asname] = alias.name
                    self.module_names.add(alias.asname)
                else:
                    top = alias.name.split(".")[0]
                    self.aliases[top] = top
                    self.module_names.add(top)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            for alias in node.names:
                if alias.name != "*":
                    self.aliases[alias.asname or alias.name] = f"{node.module}.{alias.name}"
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            self.bound.add(node.name)
        elif isinstance(node, ast.arg):
            self.bound.add(node.arg)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            self.type_checking_bound |= node.id == "TYPE_CHECKING"
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            for stmt in node.body:
                if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant):
                    self.docstrings.add(id(stmt.value))

    def _learn_import(self, node: ast.Import | ast.ImportFrom) -> None:
        """What the file imports (credit for the plain shape) and what each name an
        import binds stands for, unrebased (``from . import x``: ``.x``)."""
        if isinstance(node, ast.Import):
            for alias in node.names:
                parts = alias.name.split(".")
                self.imported.update(".".join(parts[: n + 1]) for n in range(len(parts)))
                bound = alias.asname or parts[0]
                self.raw[bound] = alias.name if alias.asname else parts[0]
            return
        base = "." * node.level + (node.module or "")
        if node.module and not node.level:
            parts = node.module.split(".")
            self.imported.update(".".join(parts[: n + 1]) for n in range(len(parts)))
        for alias in node.names:
            if alias.name != "*":
                sep = "" if base.endswith(".") else "."
                self.raw[alias.asname or alias.name] = f"{base}{sep}{alias.name}"
                if not node.level:
                    self.imported.add(f"{base}{sep}{alias.name}")

    def raw_path(self, node: ast.AST) -> str | None:
        """The dotted path an expression names from a name an import binds, as written
        (``logging.sys.modules``, never rebased), or None."""
        if isinstance(node, ast.Name):
            return self.raw.get(node.id)
        if isinstance(node, ast.Attribute):
            base = self.raw_path(node.value)
            return f"{base}.{node.attr}" if base else None
        return None

    # what an expression names: a dotted path from a module, or None
    def qual(self, node: ast.AST) -> str | None:
        if isinstance(node, ast.Name):
            if node.id in self.aliases:
                return _rebased(self.aliases[node.id])
            if node.id in ("__builtins__", "builtins"):
                return "builtins"
            if node.id in _BUILTIN_NAMES and node.id not in self.bound:
                return f"builtins.{node.id}"
            return None
        if isinstance(node, ast.Attribute):
            base = self.qual(node.value)
            return _rebased(f"{base}.{node.attr}") if base else None
        if isinstance(node, ast.NamedExpr):
            return self.qual(node.value)
        if isinstance(node, ast.Call) and not node.args and isinstance(node.func, ast.Attribute):
            on = self.qual(node.func.value)  # ``os.environ.copy()`` is the environment too
            return on if node.func.attr == "copy" and on in _ENVIRON else None
        if isinstance(node, ast.Call) and node.args:
            func = self.qual(node.func)
            if func in _IMPORTERS:
                name = fold(node.args[0])  # ``pkgutil.resolve_name("a.b:c")`` is a.b.c
                return _rebased(name.replace(":", ".")) if name else None
            if func in ("builtins.getattr", "inspect.getattr_static") and len(node.args) >= 2:
                base, name = self.qual(node.args[0]), fold(node.args[1])
                return _rebased(f"{base}.{name}") if base and name else None
            if func == "builtins.vars" and len(node.args) == 1:
                base = self.qual(node.args[0])
                return f"{base}.__dict__" if base else None
            return self._looked_up(node)
        return self._indexed(node)

    def _looked_up(self, node: ast.Call) -> str | None:
        """``m.__getattribute__("x")``, ``object.__getattribute__(m, "x")`` and
        ``operator.attrgetter("x")(m)``: ``m.x``."""
        func, base, name = node.func, None, None
        if isinstance(func, ast.Attribute) and func.attr == "get" and node.args:
            mapping = self.qual(func.value)  # ``m.__dict__.get("x")``, ``vars(m).get("x")``
            if mapping and mapping.endswith(".__dict__"):
                base, name = mapping[: -len(".__dict__")], fold(node.args[0])
        elif isinstance(func, ast.Attribute) and func.attr in ("__getattribute__", "__getattr__"):
            if len(node.args) == 1:
                base, name = self.qual(func.value), fold(node.args[0])
            elif len(node.args) == 2:
                base, name = self.qual(node.args[0]), fold(node.args[1])
        elif isinstance(func, ast.Call) and func.args and len(node.args) == 1:
            getter = self.qual(func.func) == "operator.attrgetter"
            base = self.qual(node.args[0]) if getter else None
            name = fold(func.args[0]) if getter else None
        return _rebased(f"{base}.{name}") if base and name else None

    def _indexed(self, node: ast.AST) -> str | None:
        if isinstance(node, ast.Subscript):
            base, key = self.qual(node.value), fold(node.slice)
            if base == "sys.modules" and key:
                return _rebased(key)
            if base and base.endswith(".__dict__") and key:
                return _rebased(f"{base[: -len('.__dict__')]}.{key}")
        return None

    def walk(self, node: ast.AST, parent: ast.AST | None = None) -> None:
        if isinstance(node, ast.If) and _type_checking(node.test) and not self.type_checking_bound:
            for orelse in node.orelse:  # what only a type checker reads never runs
                self.walk(orelse, node)
            return
        main = isinstance(node, ast.If) and _is_main(node.test)
        self.main += main
        for child in ast.iter_child_nodes(node):
            self.walk(child, node)
        self.main -= main
        self.check(node)
        if isinstance(node, ast.Attribute) and not self.test:
            self._parents_walked(node, parent)
        outer = isinstance(node, ast.BinOp) and _is_div(node) and not _is_div(parent)
        if outer and isinstance(node, ast.expr) and not self.test:  # ``Path("a") / ".."``
            self._looks_outside(node)
        if isinstance(node, ast.Name | ast.Attribute) and self.test:
            called = isinstance(parent, ast.Call) and parent.func is node
            if not called and self.qual(node) == "builtins.compile":
                self.add(
                    node, "hands builtins.compile around (what it compiles cannot be followed)"
                )
        if isinstance(node, ast.expr) and not self.test:
            self._escapes(node, parent)
            self._environ_escapes(node, parent)
            self._namespace_escapes(node, parent)

    def _parents_walked(self, node: ast.Attribute, parent: ast.AST | None) -> None:
        """``Path(__file__).parents`` (or the working folder's) anywhere but indexed in
        place: walked, listed or handed on, it reaches up to the root."""
        indexed = isinstance(parent, ast.Subscript) and parent.value is node
        if node.attr == "parents" and not indexed and self._ups(node.value) is not None:
            self.add(
                node,
                "walks its own file's or the working folder's parents up to the root (what"
                " is there differs between the box and a person's machine)",
            )

    def _environ_escapes(self, node: ast.expr, parent: ast.AST | None) -> None:
        """The environment handed on (``f(os.environ, key)``, ``[os.environ]``,
        ``self.env = os.environ``) or asked about with a computed key (``k in E``): what
        reads it there cannot be followed. Read in place, bound to a name (followed),
        walked (a finding of its own) or given to a child as ``env=`` it is judged."""
        if self.qual(node) not in _ENVIRON:
            return
        if isinstance(parent, ast.Attribute | ast.Subscript) and parent.value is node:
            return
        if isinstance(parent, ast.keyword) and parent.arg == "env":
            return
        if isinstance(parent, ast.Assign) and all(isinstance(t, ast.Name) for t in parent.targets):
            return
        if isinstance(parent, ast.AnnAssign | ast.NamedExpr) and isinstance(
            parent.target, ast.Name
        ):
            return
        unpacked = isinstance(parent, ast.Dict) and any(
            k is None and v is node for k, v in zip(parent.keys, parent.values, strict=True)
        )
        walker = isinstance(parent, ast.Call) and (
            isinstance(parent.func, ast.Name) and parent.func.id in _WALKERS
        )
        if isinstance(parent, _LOOPS) or unpacked or walker:
            return  # walked: said where it is walked
        if isinstance(parent, ast.Compare) and node is not parent.left:
            if all(isinstance(o, ast.In | ast.NotIn) for o in parent.ops) and fold(parent.left):
                return  # ``"HOME" in os.environ``
            self.add(parent, "asks the process's environment with a computed key")
            return
        self.add(node, "hands the process's environment around (what reads it cannot be followed)")

    def _escapes(self, node: ast.expr, parent: ast.AST | None) -> None:
        """A watched module handed around as a value (``s = sys``, ``f(sys)``,
        ``[sys][0]``): where it goes cannot be followed, so that is a finding itself; and,
        by the plain shape, any module an import binds (``m = logging; m.sys``)."""
        if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
            return
        q = self.qual(node)
        if q in _LOOKERS and isinstance(node, ast.Name | ast.Attribute):
            if not (isinstance(parent, ast.Call) and parent.func is node):
                self.add(node, f"hands {q} around (what it looks up cannot be followed)")
            return
        bound = isinstance(node, ast.Name) and node.id in self.module_names
        if q is None or (q not in ESCAPES and not bound):
            return
        if isinstance(parent, ast.Attribute) and parent.value is node:
            return  # ``sys.x``: judged by what it names
        if isinstance(parent, ast.Call) and node in parent.args[:2]:
            func = self.qual(parent.func)
            looked = isinstance(parent.func, ast.Attribute) and parent.func.attr in (
                "__getattribute__",
                "__getattr__",
            )
            if func in _GETTERS or func == "builtins.vars" or looked:
                return  # ``getattr(sys, ...)``: judged by the name it looks up
            if isinstance(parent.func, ast.Call) and self.qual(parent.func.func) == (
                "operator.attrgetter"
            ):
                return
        said = f"hands the module {q} around (where it goes cannot be followed)"
        self.add(node, said, shape=q not in ESCAPES)

    def add(self, node: ast.AST, what: str, *, shape: bool = False) -> None:
        if shape:
            self.shaped.add(what)
        line = getattr(node, "lineno", 0)
        if (line, what) in self._seen:  # an outer node repeats what its inner one said
            return
        self._seen.add((line, what))
        self.found.append((line, (what, ast.dump(node)), _span(node)))

    def _used_only(self, node: ast.Import | ast.ImportFrom, module: str) -> None:
        """A module test code may import only where the project's code does (coverage's
        data file is a SQLite database)."""
        top = module.split(".")[0]
        if self.test and top in TESTS_IF_USED and top not in self.plain.uses:
            self.add(
                node,
                f"imports {module} (coverage's data is a {top} database, and the project's"
                " code uses none)",
            )

    def check(self, node: ast.AST) -> None:
        if isinstance(node, ast.Import):
            for alias in node.names:
                self._used_only(node, alias.name)
                hit = _matches(alias.name, self.modules)
                if not hit and not self.test and alias.name.startswith(("pytest", "_pytest")):
                    hit = "a pytest plugin"
                if hit:
                    self.add(node, f"imports {alias.name} ({hit})")
                elif not self.test:
                    self._plain_import(node, alias.name, None if alias.asname else alias.name)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            self._used_only(node, node.module)
            for alias in node.names:
                full = node.module if alias.name == "*" else f"{node.module}.{alias.name}"
                hit = _matches(_rebased(full), self.modules)
                hit = None if self.main and hit in _ARGV else hit
                if alias.name == "*" and node.module.split(".")[0] in WATCHED and not self.test:
                    hit = hit or f"from {node.module} import *"
                if hit or (alias.name in self.attrs):
                    self.add(node, f"imports {full} ({hit or alias.name})")
                elif not self.test:
                    self._plain_from(node, node.module, full)
        elif isinstance(node, ast.ImportFrom) and not self.test:
            base = "." * node.level + (node.module or "")
            for alias in node.names:
                sep = "" if base.endswith(".") else "."
                why = past_plain(f"{base}{sep}{alias.name}", self.plain)
                if alias.name == "*":
                    self.add(node, f"imports * from {base} (names no rule can follow)", shape=True)
                elif why:
                    self.add(node, why, shape=True)
        elif isinstance(node, (ast.Name, ast.Attribute, ast.Call, ast.Subscript)):
            self._named(node)
        if isinstance(node, (ast.Attribute,)) and node.attr in self.attrs:
            self.add(node, f"uses .{node.attr}")
        elif isinstance(node, ast.Attribute) and not self.test:
            self._shape(node)
        if isinstance(node, ast.Call):
            self._call(node)
        if isinstance(node, ast.Subscript) and not self.test:
            self._computed_index(node)
        if isinstance(node, ast.Subscript | ast.Attribute | ast.Call) and self._above_tree(node):
            named = any(isinstance(n, ast.Name) and n.id == "__file__" for n in ast.walk(node))
            self.add(
                node,
                f"climbs from {'its own file' if named else 'the working folder'} above the tree"
                " (what is there differs between the box and a person's machine)",
            )
        iterated = getattr(node, "iter", None) if isinstance(node, _LOOPS) else None
        if iterated is not None and not self.test and self.qual(iterated) in _ENVIRON:
            self.add(iterated, "walks the process's environment")
        elif iterated is not None and not self.test and self._namespace(iterated):
            self.add(iterated, f"walks {self._namespace(iterated)}")
        if isinstance(node, ast.Dict) and not self.test:
            pairs = zip(node.keys, node.values, strict=True)
            if any(k is None and self.qual(v) in _ENVIRON for k, v in pairs):  # ``{**os.environ}``
                self.add(node, "walks the process's environment")
        if isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Delete)):
            self._writes(node)
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and not self.test:
            self._hook(node)
        if isinstance(node, ast.ClassDef) and not self.test:
            self._redirect(node)
        if isinstance(node, ast.expr) and id(node) not in self.docstrings:
            self._words(node)
        if isinstance(node, ast.expr) and not self.test:
            how = self._hides(node) or _chr_comprehension(node)
            if how:
                self.add(node, f"hides a string from its reader ({how}): a person reads it")

    def _plain_import(self, node: ast.Import, module: str, binds: str | None) -> None:
        """``import module`` off the plain shape (``binds``: the name when the import
        binds its top-level package, as ``import os.path`` binds ``os``)."""
        why, key = off_plain(module, self.plain), module
        top = module.split(".")[0]
        bound = binds is not None and top != module and top not in PLAIN_PARENTS
        if why is None and bound and off_plain(top, self.plain):
            why, key = f"imports {module}, which binds {top}, a module off the plain list", top
        if why:
            self.add_module(node, why, key)

    def _plain_from(self, node: ast.ImportFrom, module: str, full: str) -> None:
        """``from module import name`` off the plain shape; ``from module import *`` of
        anything but a plain module (what it binds, ``os`` or ``sys`` among its names, no
        rule can follow)."""
        if full == module and module.split(".")[0] in self.plain.tops | self.plain.credited:
            star = f"imports * from {module} (names no rule can follow)"
            self.add_module(node, star, f"{module}.*")
            return
        why = off_plain(full, self.plain)
        if why is None:
            return
        whole = off_plain(module, self.plain)
        if whole and whole.startswith("imports "):
            why, full = f"imports {full} from {module}, a module off the plain list", module
        self.add_module(node, why, full)

    def add_module(self, node: ast.AST, what: str, module: str) -> None:
        """A finding credited whenever the baseline's file imported ``module``."""
        line = getattr(node, "lineno", 0)
        self.shaped.add(what)
        if (line, what) not in self._seen:
            self._seen.add((line, what))
            self.found.append((line, (what, _MODULE + module), _span(node)))

    def _shape(self, node: ast.Attribute) -> None:
        """An attribute outside tests: a dunder off the plain list (``x.__dict__``,
        ``f.__self__``), or a name past a plain module (``shutil.os``, ``random._os``)."""
        name = node.attr
        if _is_dunder(name):
            on = node.value
            on_super = (
                isinstance(on, ast.Call) and isinstance(on.func, ast.Name) and on.func.id == "super"
            )
            if isinstance(node.ctx, ast.Load):
                allowed = name not in DUNDERS_HELD if on_super else name in DUNDERS_READ
            else:
                allowed = name in DUNDERS_WRITE
            if not allowed:
                self.add(node, f"uses .{name}, a dunder name off the plain list", shape=True)
            return
        raw = self.raw_path(node)
        why = past_plain(raw, self.plain) if raw else None
        if why:
            self.add(node, why, shape=True)

    def _dunder_name(self, node: ast.Name) -> None:
        """A module-level dunder read as a name (``__loader__``, ``__spec__``;
        ``__builtins__`` is said as such)."""
        name = node.id
        read = isinstance(node.ctx, ast.Load) and name not in (*DUNDER_NAMES, "__builtins__")
        if _is_dunder(name) and read:
            self.add(node, f"uses {name}, a dunder name off the plain list", shape=True)

    def _namespace_escapes(self, node: ast.expr, parent: ast.AST | None) -> None:
        """``vars(x)``, ``globals()``, ``locals()`` (a namespace as a mapping) anywhere
        but read in place: bound to a name, handed on, copied or returned, it is read
        where no rule follows (``d = vars(type(m)); d[k]``)."""
        if not (isinstance(node, ast.Call) and self._scope(node)):
            return
        if isinstance(parent, ast.Subscript) and parent.value is node:
            return  # ``vars(x)["a"]``: judged by its key (``_computed_index``)
        read = (*_MAP_GETS, *_ENV_WALKS, *_WRITERS)
        if isinstance(parent, ast.Attribute) and parent.value is node and parent.attr in read:
            return  # judged by what it reads, walks or writes
        asked = parent.ops if isinstance(parent, ast.Compare) and node is not parent.left else []
        if asked and all(isinstance(o, ast.In | ast.NotIn) for o in asked):
            return  # ``"a" in vars(x)``
        if isinstance(parent, _LOOPS) or _called(parent) in _WALKERS:
            return  # walked: said where it is walked
        said = f"hands {self._scope(node)}() around (a namespace read where no rule follows)"
        self.add(node, said, shape=True)

    def _redirect(self, node: ast.ClassDef) -> None:
        """A subclass of contextlib's redirects: its ``_stream`` names the attribute of
        sys it reads and swaps (``_stream = "modules"``)."""
        for base in node.bases:
            q = self.qual(base)
            if q in _REDIRECTS:
                self.add(node, f"subclasses {q} (its _stream names the sys attribute it swaps)")

    def _hook(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        if node.name.startswith("pytest_"):  # code under test as a pytest plugin
            self.add(node, f"defines the pytest hook {node.name}")

    def _named(self, node: ast.expr) -> None:
        if isinstance(node, ast.Name) and not self.test:
            self._dunder_name(node)
        q = self.qual(node)
        if not q:
            return
        hit = _matches(q, self.modules)
        if hit and not (self.main and hit in _ARGV):
            self.add(node, f"uses {hit}")
        if isinstance(node, ast.Name) and node.id == "__builtins__" and not self.test:
            self.add(node, "uses __builtins__")
        parts = q.split(".")
        if len(parts) > 1 and parts[-1] in self.attrs:
            self.add(node, f"uses .{parts[-1]}")
        if not self.test and parts[0] in WATCHED and "__dict__" in parts[1:]:
            self.add(node, f"uses {parts[0]}.__dict__")
        if q == "builtins.compile" and "compile" not in self.bound and not self.test:
            self.add(node, "uses builtins.compile")
        if q in _WHICH and not self.test:
            self.add(
                node,
                f"finds a host program by name ({q}: what is installed differs between the"
                " box and a person's machine)",
            )

    def _call(self, node: ast.Call) -> None:
        func = self.qual(node.func)
        if func == "builtins.compile" and self.test:
            self._compiled(node)
        made = sorted({k.arg for k in node.keywords if k.arg in CODE_FIELDS})
        if made:  # ``code.replace(co_filename=...)``: code under another file's name or lines
            self.add(node, f"makes a code object with {', '.join(made)}")
        if func in _IMPORTERS and not self.test and not (node.args and fold(node.args[0])):
            self.add(node, f"{func} with a computed name")  # a literal one is judged by name
        if func in _GETTERS and len(node.args) >= 2:
            base, name = self.qual(node.args[0]), fold(node.args[1])
            if name in self.attrs:
                self.add(node, f"uses .{name}")
            elif name and not self.test:
                self._dunder_looked_up(node, name, writes=func in _SETTERS)
            elif name is None and not self.test:
                where = f" on {base}" if base else ""
                self.add(node, f"{func.split('.')[1]}{where} with a computed name")
            if func == "builtins.setattr" and not self.test and self._module(node.args[0]):
                self.add(node, f"setattr on the module {self.qual(node.args[0])}")
        if not self.test:
            self._computed(node, func)
            self._named_by_caller(node, func)
        on = node.func.value if isinstance(node.func, ast.Attribute) else None
        if isinstance(on, ast.Name) and on.id == "__path__" and not self.test:
            self.add(node, "changes the package's __path__ (where its modules come from)")
        writer = isinstance(node.func, ast.Attribute) and node.func.attr in _WRITERS
        scope = self._scope(node.func.value) if isinstance(node.func, ast.Attribute) else None
        if writer and scope and not self.test:
            self.add(node, f"writes through {scope}()")

    def _compiled(self, node: ast.Call) -> None:
        """``compile`` in test code under a name that is not a pseudo-name (``<string>``):
        coverage counts the lines what it makes runs as the lines of the file it names."""
        named = node.args[1] if len(node.args) > 1 else None
        named = next((k.value for k in node.keywords if k.arg == "filename"), named)
        name = fold(named) if named is not None else None
        spread = any(isinstance(a, ast.Starred) for a in node.args) or any(
            k.arg is None for k in node.keywords
        )
        if spread or name is None or not (name.startswith("<") and name.endswith(">")):
            said = repr(name) if name is not None else "a name no rule can follow"
            self.add(
                node,
                f"compiles code under a file's name ({said}: coverage counts what it runs"
                " as that file's lines)",
            )

    def _computed(self, node: ast.Call, func: str | None) -> None:
        """A name looked up from data, outside tests: ``m.__getattribute__(name)``,
        ``operator.attrgetter(name)``, ``os.getenv(name)``; and the environment walked."""
        callee = node.func
        if isinstance(callee, ast.Attribute) and callee.attr in ("__getattribute__", "__getattr__"):
            named = node.args[-1] if node.args and len(node.args) <= 2 else None
            if named is None or fold(named) is None:
                self.add(node, f"{callee.attr} with a computed name")
            else:
                self._dunder_looked_up(node, fold(named) or "", writes=False)
        if isinstance(callee, ast.Attribute) and callee.attr in ("__setattr__", "__delattr__"):
            at = len(node.args) - (2 if callee.attr == "__setattr__" else 1)
            named = node.args[at] if 0 <= at < 2 else None
            if named is None or fold(named) is None:
                self.add(node, f"{callee.attr} with a computed name")
            else:
                self._dunder_looked_up(node, fold(named) or "", writes=True)
        if func in ("operator.attrgetter", "operator.methodcaller"):
            names = node.args if func == "operator.attrgetter" else node.args[:1]
            if not names or any(fold(a) is None for a in names):
                self.add(node, f"{func} with a computed name")
        if func in _ENV_GETS and (not node.args or fold(node.args[0]) is None):
            self.add(node, f"{func} with a computed key (what it reads cannot be followed)")
        on = callee.value if isinstance(callee, ast.Attribute) else None
        if on is not None and node_attr(callee) in _ENV_WALKS and self.qual(on) in _ENVIRON:
            self.add(node, "walks the process's environment")  # ``os.environ.items()``
        walker = isinstance(callee, ast.Name) and callee.id in _WALKERS
        if walker and node.args and self.qual(node.args[0]) in _ENVIRON:
            self.add(node, "walks the process's environment")
        space = self._namespace(on) if on is not None else None
        if space and node_attr(callee) in _ENV_WALKS:  # ``vars(m).items()``
            self.add(node, f"walks {space}")
        computed = not node.args or fold(node.args[0]) is None
        if space and node_attr(callee) in _MAP_GETS and computed:
            self.add(node, f"{space}.{node_attr(callee)} with a computed name")
        if walker and node.args and self._namespace(node.args[0]):
            self.add(node, f"walks {self._namespace(node.args[0])}")
        if func in _NAMED and (not node.args or fold(node.args[0]) is None):
            self.add(node, f"{func} with a computed name")  # what it makes cannot be followed

    def _named_by_caller(self, node: ast.Call, func: str | None) -> None:
        """Plain functions that reach what the names they are given name: ``functools.
        update_wrapper``/``wraps`` (getattr and setattr by ``assigned``/``updated``),
        logging's ``{}``-style format (``str.format`` follows attributes), and what opens
        a path hidden from its reader or built from a /proc piece."""
        for keyword in node.keywords:
            value = keyword.value
            own = isinstance(value, ast.Name) and value.id == "__name__"
            named = keyword.arg == "module" and fold(value) is None and not own
            if named and func not in _MODULE_KEYWORD_FREE:
                self.add(node, "module= from data (a class claiming a module by its name)")
        if func in _ATTR_TUPLES:
            at, words = _ATTR_TUPLES[func]
            given = [
                (node.args[i], w) for i, w in zip(at, words, strict=True) if i < len(node.args)
            ]
            given += [(k.value, k.arg) for k in node.keywords if k.arg in words]
            if any(k.arg is None for k in node.keywords) or any(
                isinstance(a, ast.Starred) for a in node.args
            ):
                self.add(node, f"{func} with attribute names no rule can follow")
            for value, word in given:
                if self.qual(value) in _ATTR_DEFAULTS:
                    continue
                names = value.elts if isinstance(value, ast.Tuple | ast.List) else None
                folded = [fold(e) for e in names] if names is not None else [None]
                if None in folded:
                    self.add(node, f"{func} with {word}= names no rule can follow")
                    continue
                for name in folded:
                    if name in self.attrs:
                        self.add(node, f"uses .{name}")
                    elif name and not (word == "updated" and name == "__dict__"):
                        self._dunder_looked_up(node, name, writes=True)
        if func in _LOG_FORMATS:
            fmt_at, word, style_at = _LOG_FORMATS[func]
            fmt = node.args[fmt_at] if 0 <= fmt_at < len(node.args) else None
            fmt = next((k.value for k in node.keywords if k.arg == word), fmt)
            style = node.args[style_at] if 0 <= style_at < len(node.args) else None
            style = next((k.value for k in node.keywords if k.arg == "style"), style)
            braces = style is not None and fold(style) not in ("%", "$")
            if braces and (fmt is None or fold(fmt) is None):
                self.add(node, f"{func} with a {{}}-style format from data (it follows names)")
        attr = node_attr(node.func)
        looks = func in _PATH_TAKERS or func in _HOMES or func in _EXPANDERS
        if not self.test and (looks or attr in ("expanduser", "glob", "rglob", "joinpath")):
            self._looks_outside(node)
        if func in _OPENERS and node.args:
            path = node.args[0]
            pieces = [
                n.value.lower() for n in ast.walk(path)
                if isinstance(n, ast.Constant) and isinstance(n.value, str)
            ]  # fmt: skip
            if self._hidden_in(path):
                self.add(node, "opens a path hidden from its reader")
            elif any("/proc" in p or p.startswith("proc/") or p == "proc" for p in pieces):
                self.add(node, "opens a path built from a /proc piece (the process's own files)")

    def _looks_outside(self, node: ast.expr) -> None:
        """A path outside the tree looked at, opened or built (``_outside``)."""
        where = self._outside(node)
        if where is not None:
            self.add(
                node,
                f"looks at {where!r}, a path outside the tree (what is there differs"
                " between the box and a person's machine)",
            )

    def _dunder_looked_up(self, node: ast.Call, name: str, *, writes: bool) -> None:
        """``getattr(x, "__dict__")`` is ``x.__dict__``: judged as the dunder it names."""
        if not _is_dunder(name):
            return
        if name not in (DUNDERS_WRITE if writes else DUNDERS_READ):
            self.add(node, f"uses .{name}, a dunder name off the plain list", shape=True)

    def _namespace(self, node: ast.expr) -> str | None:
        """``x.__dict__``, ``vars(x)``, ``globals()``, ``locals()``: a namespace's mapping,
        which holds every name its owner reaches (a module's: sys, os, ...)."""
        if isinstance(node, ast.Attribute) and node.attr == "__dict__":
            return "a __dict__"
        scope = self._scope(node)
        return f"{scope}()" if scope else None

    def _computed_index(self, node: ast.Subscript) -> None:
        """``os.environ[key]``, ``vars(x)[key]``, ``x.__dict__[key]``, ``globals()[key]``
        with a key no rule can fold."""
        if fold(node.slice) is not None:
            return
        on = node.value
        if self.qual(on) in _ENVIRON:
            self.add(node, "os.environ with a computed key (what it reads cannot be followed)")
        elif isinstance(on, ast.Attribute) and on.attr == "__dict__":
            self.add(node, "__dict__ with a computed name")
        elif isinstance(on, ast.Call) and self.qual(on.func) in _SCOPES:
            self.add(node, f"{self.qual(on.func)}()[...] with a computed name")

    def _writes(self, node: ast.stmt) -> None:
        if self.test:
            return
        targets: list[ast.expr]
        if isinstance(node, (ast.Assign, ast.Delete)):
            targets = list(node.targets)
        elif isinstance(node, (ast.AugAssign, ast.AnnAssign)):
            targets = [node.target]
        else:
            return
        for target in _flat(targets):
            if isinstance(target, ast.Name) and target.id == "pytest_plugins":
                self.add(target, "sets pytest_plugins")
            elif isinstance(target, ast.Name) and target.id == "__path__" and not _extends(node):
                self.add(target, "sets the package's __path__ (where its modules come from)")
            elif isinstance(target, ast.Attribute) and self._module(target.value):
                self.add(target, f"writes {self.qual(target.value)}.{target.attr} (a module's)")
            elif isinstance(target, ast.Subscript):
                scope = self._scope(target.value)
                if scope:
                    self.add(target, f"writes through {scope}()")
                elif self.qual(target.value) in ("builtins", "builtins.__dict__"):
                    self.add(target, "writes builtins")

    def _module(self, node: ast.expr) -> bool:
        """Whether ``node`` is a module: one the file imports whole, or one looked up."""
        if isinstance(node, ast.Name):
            return node.id in self.module_names or node.id == "__builtins__"
        q = self.qual(node)
        looked_up = isinstance(node, ast.Call | ast.Subscript)
        return q is not None and (q.split(".")[0] in WATCHED or looked_up)

    def _scope(self, node: ast.expr) -> str | None:
        if isinstance(node, ast.Call):
            q = self.qual(node.func)
            if q in _SCOPES:
                return q.split(".")[1]
        return None

    def _words(self, node: ast.expr) -> None:
        text = fold(node)
        if not text:
            return
        low = text.lower()
        for word in self.words:
            if word in low:
                self.add(node, f"a string naming {word!r}")
                return
        tool = _TOOL.search(low)
        if not self.test and (tool or low.strip() in _COMMON_WORDS - {"py"}):
            said = tool.group(1) if tool else low.strip()
            self.add(node, f"a string naming the gate tool {said!r}")
            return
        if _COVERAGE_WORDS.search(low):
            self.add(node, "a string naming coverage's data, reports or tool")
            return
        fields = [] if self.test else _FIELD.findall(text)  # ``"{0.sys.modules}".format(m)``
        if any(f in WATCHED or f.startswith("__") or f == "modules" for f in fields):
            self.add(node, "a format string that reaches into a module's attributes")
            return
        if _PROC.search(low) or (not self.test and _PROC_SOURCE.match(low)):
            self.add(node, "a string naming the process's /proc files")


def _codes(node: ast.expr, *, least: int) -> bool:
    """Whether ``node`` is printable character codes: an int literal (``least`` 1), or a
    list or tuple of at least ``least`` of them."""
    items = node.elts if isinstance(node, ast.List | ast.Tuple) else [node]
    if len(items) < least or (least > 1 and items == [node]):
        return False
    return all(
        isinstance(i, ast.Constant) and type(i.value) is int and 32 <= i.value < 127 for i in items
    )


def _literal(node: ast.expr) -> bool:
    """A literal made of constants only (``b"..."``, ``"..."``, ``(1, 2)``, ``0x73``)."""
    return all(
        isinstance(n, ast.Constant | ast.Tuple | ast.List | ast.Load | ast.UnaryOp | ast.USub)
        for n in ast.walk(node)
    )


def _decodes_params(args: ast.arguments, body: ast.AST) -> bool:
    """Whether a function turns its own parameters into text: ``bytes(c).decode()``,
    ``"".join(map(chr, c))``, ``chr(c)``, ``bytes.fromhex(c)`` on a parameter."""
    params = {a.arg for a in (*args.posonlyargs, *args.args, *args.kwonlyargs)}
    params |= {a.arg for a in (args.vararg, args.kwarg) if a is not None}
    for node in ast.walk(body):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        named = func.id if isinstance(func, ast.Name) else func.attr if isinstance(
            func, ast.Attribute
        ) else None  # fmt: skip
        chr_map = named == "map" and node.args and getattr(node.args[0], "id", None) == "chr"
        if named not in _DECODING and not chr_map:
            continue
        used = [*node.args, *([func.value] if isinstance(func, ast.Attribute) else [])]
        if any(_of_params(u, params) for u in used):
            return True
    return False


_DATA_ONLY = frozenset(
    {"list", "tuple", "iter", "reversed", "bytes", "bytearray", "map", "chr", "ord", "int",
     "str", "sum", "range", "zip", "sorted"}
)  # fmt: skip


def _of_params(node: ast.expr, params: set[str]) -> bool:
    """Whether ``node`` is made of the parameters alone (``c``, ``*c``, ``list(c)``,
    ``(x ^ 1 for x in c)``): what reads anything else (``sock.recv(n)``, ``rows[n]``)
    decodes data of its own, not the codes it is handed."""
    bound = {
        n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)
    }
    seen = False
    for each in ast.walk(node):
        if isinstance(each, ast.Name):
            if each.id in params:
                seen = True
            elif each.id not in bound and each.id not in _DATA_ONLY:
                return False
        elif _reads_more(each):
            return False
    return seen


def _reads_more(node: ast.AST) -> bool:
    """An attribute, item, lambda or a call of anything but a data-only builtin."""
    if isinstance(node, ast.Attribute | ast.Subscript | ast.Lambda | ast.NamedExpr):
        return True
    return isinstance(node, ast.Call) and getattr(node.func, "id", None) not in _DATA_ONLY


def _chr_comprehension(node: ast.expr) -> str | None:
    """``"".join(chr(c) for c in [115, 121, 115])``: codes walked into characters."""
    if not isinstance(node, ast.GeneratorExp | ast.ListComp | ast.SetComp):
        return None
    spells = any(
        isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id == "chr"
        for n in ast.walk(node.elt)
    )
    if spells and any(_codes(g.iter, least=2) for g in node.generators):
        return "chr() of character codes"
    return None


def _called(node: ast.AST | None) -> str | None:
    """The plain name a call calls (``list(x)``: list), or None."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
        return node.func.id
    return None


def _is_dunder(name: str) -> bool:
    return len(name) > 4 and name.startswith("__") and name.endswith("__")


def node_attr(node: ast.expr) -> str | None:
    """The attribute ``node`` names (``x.items`` is ``items``), or None."""
    return node.attr if isinstance(node, ast.Attribute) else None


def _extends(node: ast.stmt) -> bool:
    """``__path__ = pkgutil.extend_path(__path__, __name__)``: a namespace package's idiom."""
    value = getattr(node, "value", None)
    func = value.func if isinstance(value, ast.Call) else None
    return isinstance(func, ast.Attribute) and func.attr == "extend_path"


def _flat(targets: list[ast.expr]) -> Iterator[ast.expr]:
    for target in targets:
        if isinstance(target, (ast.Tuple, ast.List)):
            yield from _flat(list(target.elts))
        elif isinstance(target, ast.Starred):
            yield from _flat([target.value])
        else:
            yield target
