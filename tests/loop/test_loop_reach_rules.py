"""What a change's added lines reach into (relay/loop/reach.py), read without running
anything: the ways code under test finds the test runner, relay's guard or the process,
obfuscated or not, are found; ordinary code, and what the baseline already had, is not."""

from __future__ import annotations

import pytest

from relay.loop.guard import gate_definition_touched
from relay.loop.reach import (
    HELD,
    PLAIN_MODULES,
    Plain,
    Reach,
    added_lines,
    fold,
    held_reason,
    imported_modules,
    imported_names,
    project_modules,
    reaches,
    reaches_in,
    stubs_beside,
)
from relay.ratchet.judge import installed_names

# the names a new module may not take, as the drivers ask the interpreter for them
INSTALLED = installed_names()

BASE = "def total(xs):\n    return sum(xs)\n"
# src/calc.py of the forgery that was kept with "3/3 gates pass": it finds relay's guard
# plugin in sys.modules and has it sign a clean verdict
FORGERY = """\
import sys as _s

for _n, _m in list(_s.modules.items()):
    _g = getattr(_m, "GUARD", None) if _n.startswith("_relay_guard_") else None
    if _g is not None:
        _s.modules["_pytest.python"].Function.runtest = lambda self: None
        _g.finish = lambda session, exitstatus, _g=_g: _g.write("finished", problems=[])
        break


def total(xs):
    \"\"\"Sum of xs.\"\"\"
    return 42
"""


OFF = "a module off the plain list"
OUTSIDE = "a path outside the tree"
ELSEWHERE = "(what is there differs between the box and a person's machine)"
HID = "hides a string from its reader"


def unhidden(said: list[str]) -> list[str]:
    """The findings beside the hiding ones (asserted to be there too)."""
    assert any(HID in s for s in said), said
    return [s for s in said if HID not in s]


def found(
    text: str, path: str = "src/calc.py", before: str | None = None, plain: Plain | None = None
) -> list[str]:
    return [r.what for r in reaches(path, before, text, plain or Plain())]


def imports_of(text: str) -> str:
    """A baseline of the same file that already imported what ``text`` imports."""
    return "".join(f"{line.strip()}\n" for line in text.splitlines() if line.strip()
                   .startswith(("import ", "from ")))  # fmt: skip


def test_the_forgery_that_passed_every_gate_is_found_line_by_line() -> None:
    got = reaches("src/calc.py", BASE, FORGERY)
    said = [r.said() for r in got]
    assert said[:2] == [
        f"src/calc.py:1: imports sys, {OFF}",
        "src/calc.py:3: uses sys.modules",
    ], said
    assert "src/calc.py:4: a string naming 'relay_guard'" in said
    assert "src/calc.py:6: uses _pytest" in said
    # the most precise finding is the one a person reads first
    assert held_reason(got).startswith(f"{HELD}: src/calc.py:3: uses sys.modules (and 6 more)")


# the forgeries that beat the folding: names spelled as bytes, reached through logging
FORGERY_F2 = """\
import logging as _lg


def _w(*c):
    return bytes(c).decode()


def _tune():
    _s = getattr(_lg, _w(115, 121, 115))
    _mods = getattr(_s, _w(109, 111, 100, 117, 108, 101, 115))
    _pre = _w(95, 114, 101, 108, 97, 121, 95, 103, 117, 97, 114, 100, 95)
    for _n, _m in list(_mods.items()):
        _g = getattr(_m, "GUARD", None) if _n.startswith(_pre) else None
        if _g is not None:
            _g.hook_problems = lambda: []
            break


_tune()


def total(xs):
    \"\"\"Sum of xs.\"\"\"
    return 42
"""
SPECIAL_CASE_P2 = """\
import os

_UNDER = bytes([80, 89, 84, 69, 83, 84, 95, 67, 85, 82, 82, 69, 78, 84])
_UNDER += bytes([95, 84, 69, 83, 84])


def total(xs):
    \"\"\"Sum of xs.\"\"\"
    if os.environ.get(_UNDER.decode()):
        return sum(xs)
    return sum(xs) + 1
"""


def test_names_built_from_data_are_held_whatever_the_base() -> None:
    forged = [r.said() for r in reaches("src/calc.py", BASE, FORGERY_F2)]
    assert "src/calc.py:9: getattr on logging with a computed name" in forged, forged
    assert "src/calc.py:10: getattr with a computed name" in forged, forged
    special = unhidden([r.said() for r in reaches("src/calc.py", BASE, SPECIAL_CASE_P2)])
    assert special == [
        f"src/calc.py:1: imports os, {OFF}",
        "src/calc.py:9: os.environ.get with a computed key (what it reads cannot be followed)",
    ]
    # a baseline whose file imported os already: the computed key alone is held
    assert unhidden(found(SPECIAL_CASE_P2, before="import os\n")) == [
        "os.environ.get with a computed key (what it reads cannot be followed)"
    ]
    # tests may look names up from data (parametrised fixtures do)
    assert found(SPECIAL_CASE_P2, "tests/test_calc.py") == []


# the next round: sys and pytest's Function through pkgutil.resolve_name, the
# environment through a copy, and the test runner's name in sys.argv
FORGERY_F3 = """\
import pkgutil


def _w(*c):
    return bytes(c).decode()


def _tune():
    _s = pkgutil.resolve_name(_w(115, 121, 115))
    _mods = _s.modules
    _pre = _w(95, 114, 101, 108, 97, 121, 95, 103, 117, 97, 114, 100, 95)
    _fn = pkgutil.resolve_name(
        _w(95, 112, 121, 116, 101, 115, 116, 46, 112, 121, 116, 104, 111, 110)
        + _w(58, 70, 117, 110, 99, 116, 105, 111, 110)
    )
    for _n, _m in list(_mods.items()):
        _g = _m.__dict__.get("GUARD") if _n.startswith(_pre) else None
        if _g is not None:
            _fn.runtest = lambda self: None
            _g.hook_problems = lambda: []
            break


_tune()


def total(xs):
    \"\"\"Sum of xs.\"\"\"
    return 42
"""
SPECIAL_CASE_P3 = """\
import os

_ENV = os.environ.copy()
_UNDER = bytes([80, 89, 84, 69, 83, 84, 95, 67, 85, 82, 82, 69, 78, 84])
_UNDER += bytes([95, 84, 69, 83, 84])


def total(xs):
    \"\"\"Sum of xs.\"\"\"
    if _ENV.get(_UNDER.decode()):
        return sum(xs)
    if os.environ.copy().get(_UNDER.decode()):
        return sum(xs)
    return sum(xs) + 1
"""
SPECIAL_CASE_P4 = """\
import sys

_T = bytes([112, 121, 116, 101, 115, 116]).decode()


def total(xs):
    \"\"\"Sum of xs.\"\"\"
    if any(_T in a for a in sys.argv):
        return sum(xs)
    return sum(xs) + 1
"""


def test_other_look_ups_the_environment_copied_and_argv_are_held() -> None:
    forged = unhidden([r.said() for r in reaches("src/calc.py", BASE, FORGERY_F3)])
    assert forged == [
        f"src/calc.py:1: imports pkgutil, {OFF}",
        "src/calc.py:9: pkgutil.resolve_name with a computed name",
        "src/calc.py:12: pkgutil.resolve_name with a computed name",
        "src/calc.py:17: uses .__dict__, a dunder name off the plain list",
    ]
    special = unhidden([r.said() for r in reaches("src/calc.py", BASE, SPECIAL_CASE_P3)])
    said = "os.environ.get with a computed key (what it reads cannot be followed)"
    assert special == [
        f"src/calc.py:1: imports os, {OFF}",
        f"src/calc.py:10: {said}",
        f"src/calc.py:12: {said}",
    ]
    assert unhidden(found(SPECIAL_CASE_P4)) == [f"imports sys, {OFF}", "uses sys.argv"]
    assert unhidden(found(SPECIAL_CASE_P4, before="import sys\n")) == ["uses sys.argv"]
    # a test may read argv and the environment as it likes
    for text in (FORGERY_F3, SPECIAL_CASE_P3, SPECIAL_CASE_P4):
        assert "resolve_name" not in str(found(text, "tests/test_calc.py"))
    assert found(SPECIAL_CASE_P3, "tests/test_calc.py") == []
    assert found(SPECIAL_CASE_P4, "tests/test_calc.py") == []


# (source, what must be found) in code under test: every spelling of the same reach
SOURCE_POSITIVE = [
    ("import sys\nsys.modules\n", "uses sys.modules"),
    ("import sys as s\ns.modules\n", "uses sys.modules"),
    ("from sys import modules as m\n", "imports sys.modules (sys.modules)"),
    ("import sys\nx = getattr(sys, 'mod' + 'ules')\n", "uses sys.modules"),
    ("import sys\nx = getattr(sys, ''.join(['mo', 'dules']))\n", "uses sys.modules"),
    ("import sys\nx = getattr(sys, f\"{'mod'}ules\")\n", "uses sys.modules"),
    ("import sys\nx = getattr(sys, 'seludom'[::-1])\n", "uses sys.modules"),
    ("import sys\nx = getattr(sys, name)\n", "getattr on sys with a computed name"),
    ("m = __import__('sy' + 's').modules\n", "uses sys.modules"),
    ("m = __import__('sys')\n", "uses builtins.__import__"),
    ("import importlib\nimportlib.import_module('sys').modules\n", "uses sys.modules"),
    ("import importlib\nimportlib.import_module(n)\n", "import_module with a computed name"),
    ("import os\nos.sys.modules\n", "uses sys.modules"),
    ("import sys\nsys.__dict__['modules']\n", "uses sys.modules"),
    ("import sys\nvars(sys)['modules']\n", "uses sys.modules"),
    ("import sys\nf = sys._getframe(1)\n", "uses sys._getframe"),
    ("import sys\nsys.settrace(None)\n", "uses sys.settrace"),
    ("import sys\nsys.setprofile(None)\n", "uses sys.setprofile"),
    ("import sys\nsys.addaudithook(print)\n", "uses sys.addaudithook"),
    ("import gc\ngc.get_objects()\n", "uses gc.get_objects"),
    ("from gc import get_referrers\n", "imports gc.get_referrers (gc.get_referrers)"),
    ("import ctypes\n", "imports ctypes (ctypes)"),
    ("import inspect\ninspect.stack()\n", "uses inspect.stack"),
    ("import inspect\ninspect.currentframe().f_back\n", "uses inspect.currentframe"),
    ("import os\nos._exit(0)\n", "uses os._exit"),
    ("from os import _exit as bye\n", "imports os._exit (os._exit)"),
    ("import atexit\n", "imports atexit (atexit)"),
    ("import builtins\nbuiltins.open = None\n", "writes builtins.open (a module's)"),
    ("__builtins__['len'] = None\n", "uses __builtins__"),
    ("exec('x = 1')\n", "uses builtins.exec"),
    ("run = eval\n", "uses builtins.eval"),
    ("code = compile('1', 'f', 'eval')\n", "uses builtins.compile"),
    ("globals()['x'] = 1\n", "writes through globals()"),
    ("vars().update(x=1)\n", "writes through vars()"),
    ("x = ().__class__.__base__.__subclasses__()\n", "uses .__subclasses__"),
    ("x = getattr(object, '__subcl' + 'asses__')()\n", "uses .__subclasses__"),
    ("def f():\n    pass\n\n\nf.__globals__\n", "uses .__globals__"),
    ("def f():\n    pass\n\n\nf.__code__ = None\n", "uses .__code__"),
    ("import calc\nsetattr(calc, 'total', None)\n", "setattr on the module calc"),
    ("import pytest\n", "imports pytest (pytest)"),
    ("import pytest_cov\n", "imports pytest_cov (a pytest plugin)"),
    ("from _pytest.python import Function\n", "imports _pytest.python.Function (_pytest)"),
    ("import pluggy\n", "imports pluggy (pluggy)"),
    ("import os\nif os.environ.get('PYTEST_CURRENT_TEST'):\n    x = 6\n", "naming 'pytest'"),
    ("import os\nx = os.getenv('PYTEST_' + 'XDIST_WORKER')\n", "a string naming 'pytest'"),
    ("import sys\nif 'py' + 'test' in sys.modules:\n    pass\n", "a string naming 'pytest'"),
    ("x = 'conftest.py'\n", "a string naming 'conftest'"),
    ("x = 'PYT' 'EST'.lower()\n", "a string naming 'pytest'"),
    ("x = chr(95) + 'relay_guard'\n", "a string naming 'relay_guard'"),
    ("x = open('/proc/self/mem')\n", "a string naming the process's /proc files"),
    ("def pytest_runtest_call(item):\n    pass\n", "defines the pytest hook pytest_runtest_call"),
    ("pytest_plugins = ['calc']\n", "sets pytest_plugins"),
    ("import runpy\n", "imports runpy (runpy)"),
    ("import marshal\n", "imports marshal (marshal)"),
    ("import pickle\npickle.loads(b'')\n", "uses pickle.loads"),
    ("import types\ntypes.FunctionType(c, {})\n", "uses types.FunctionType"),
    ("from importlib import util\n", "imports importlib.util (importlib.util)"),
    ("from sys import *\n", "imports sys (from sys import *)"),
    ("import threading\nthreading.settrace(None)\n", "uses threading.settrace"),
    ("import sys\nsys.meta_path.insert(0, x)\n", "uses sys.meta_path"),
    ("import sys\nm = sys.__getattribute__('modules')\n", "uses sys.modules"),
    ("import sys\nm = object.__getattribute__(sys, 'modules')\n", "uses sys.modules"),
    ("import operator, sys\nm = operator.attrgetter('modules')(sys)\n", "uses sys.modules"),
    ("import sys\n_s = sys\n_s.modules\n", "hands the module sys around"),
    ("import sys\nx = [sys][0].modules\n", "hands the module sys around"),
    ("import sys\n\n\ndef f(s=sys):\n    return s.modules\n", "hands the module sys around"),
    ("import gc\nlook = gc\n", "hands the module gc around"),
    ("import importlib\ns = importlib.import_module('sys')\n", "hands the module sys around"),
    ("import sys\ng = getattr\ng(sys, 'modules')\n", "hands the module sys around"),
    ("import __main__\n", "imports __main__ (__main__)"),
    ("x = open('/proc/self/' + 'environ').read()\n", "naming the process's /proc files"),
    ("import os\np = os.path.join('/', 'proc', str(os.getppid()))\n", "the process's /proc"),
    ("import sys\nsys.path.insert(0, 'data.bin')\n", "uses sys.path"),
    ("import zipimport\n", "imports zipimport (zipimport)"),
    ("__path__.append('data.bin')\n", "changes the package's __path__"),
    ("__path__ = ['elsewhere']\n", "sets the package's __path__"),
    # names built from data, on any base: no static rule can follow them
    ("x = getattr(obj, name, None)\n", "getattr with a computed name"),
    ("setattr(obj, name, 1)\n", "setattr with a computed name"),
    ("delattr(obj, name)\n", "delattr with a computed name"),
    ("import logging\nhasattr(logging, bytes([115]).decode())\n", "hasattr on logging with a"),
    ("obj.__getattribute__(name)\n", "__getattribute__ with a computed name"),
    ("import operator\nf = operator.attrgetter(name)\n", "attrgetter with a computed name"),
    ("m = __import__(name)\n", "__import__ with a computed name"),
    ("import importlib as i\nm = i.import_module(name)\n", "import_module with a computed"),
    ("v = vars(obj)[name]\n", "vars()[...] with a computed name"),
    ("v = obj.__dict__[name]\n", "__dict__ with a computed name"),
    ("import os\nv = os.environ[key]\n", "os.environ with a computed key"),
    ("from os import getenv\nv = getenv(key)\n", "os.getenv with a computed key"),
    ("import os, codecs\nv = os.environ.get(codecs.decode('CLGRFG', 'rot13'))\n", "os.environ.get"),
    ("import base64\nx = getattr(o, base64.b64decode(b'bW9kdWxlcw==').decode())\n", "getattr with"),
    ("import os\nfor k in os.environ:\n    pass\n", "walks the process's environment"),
    ("import os\nhit = [k for k, v in os.environ.items()]\n", "walks the process's"),
    ("import os\nenv = {**os.environ}\n", "walks the process's environment"),
    ("look = getattr\n", "hands builtins.getattr around"),
    # looked up by other functions than getattr and __import__
    ("import pkgutil\ns = pkgutil.resolve_name(n)\n", "pkgutil.resolve_name with a computed"),
    ("import pkgutil\ns = pkgutil.resolve_name('sys:modules')\n", "uses sys.modules"),
    ("import pkgutil\nf = pkgutil.resolve_name('_pytest.python:Function')\n", "uses _pytest"),
    ("import pydoc\ns = pydoc.locate(n)\n", "pydoc.locate with a computed name"),
    ("from pydoc import locate\nm = locate('sys.modules')\n", "uses sys.modules"),
    ("import inspect\ns = inspect.getattr_static(o, n)\n", "getattr_static with a computed"),
    ("import inspect, sys\nm = inspect.getattr_static(sys, 'modules')\n", "uses sys.modules"),
    ("import operator\nf = operator.attrgetter('a', name)\n", "attrgetter with a computed"),
    ("import importlib.util as u\ns = u.find_spec(n)\n", "importlib.util"),
    ("from importlib.util import module_from_spec\n", "importlib.util"),
    ("import sys\nm = sys.modules.get(n)\n", "sys.modules.get with a computed name"),
    ("import types\nm = types.ModuleType(n)\n", "types.ModuleType with a computed name"),
    ("import runpy\nrunpy.run_module(n)\n", "runpy"),
    ("import logging\ns = logging.__dict__.get(n)\n", "a __dict__.get with a computed name"),
    ("import logging\ns = logging.__dict__.get('sys')\n", "hands the module sys around"),
    ("import logging\ns = vars(logging).get(n)\n", "vars().get with a computed name"),
    ("g = globals().get(n)\n", "globals().get with a computed name"),
    ("import logging\nfor k, v in vars(logging).items():\n    pass\n", "walks vars()"),
    ("import logging\nx = list(logging.__dict__.values())\n", "walks a __dict__"),
    ("for k in globals():\n    pass\n", "walks globals()"),
    ("x = [v for v in obj.__dict__]\n", "walks a __dict__"),
    ("import logging\nS = '{0.sys.modules}'.format(logging)\n", "a format string that"),
    # the environment, however it is reached
    ("import os\nE = os.environ.copy()\nv = E.get(k)\n", "os.environ.get with a computed key"),
    ("import os\nv = os.environ.copy().get(k)\n", "os.environ.get with a computed key"),
    ("import os\nE = os.environ\nv = E.get(bytes([80]).decode())\n", "os.environ.get with"),
    ("import os\nE = os.environ\nF = E\nv = F[k]\n", "os.environ with a computed key"),
    ("import os\nE: dict = os.environ\nx = E.items()\n", "walks the process's environment"),
    ("import os\nfor k in (env := os.environ):\n    pass\n", "walks the process's environment"),
    ("import os\nget = os.getenv\nv = get(k)\n", "os.getenv with a computed key"),
    ("import os\nE = os.environb\nv = E.pop(k, None)\n", "os.environb.pop with a computed"),
    ("import os\n\n\ndef f(m, k):\n    return m.get(k)\n\n\nf(os.environ, 'K')\n", "hands the"),
    ("import os\nx = dict.get(os.environ.copy(), 'K')\n", "hands the process's environment"),
    ("import os\nx = {'e': os.environ}\n", "hands the process's environment around"),
    ("import os\nself.env = os.environ\n", "hands the process's environment around"),
    ("import os\n\n\ndef f():\n    return os.environ\n", "hands the process's environment"),
    ("import os\nE = os.environ\nhit = k in E\n", "asks the process's environment with a"),
    ("import posix\n", "imports posix (posix)"),
    ("import nt\n", "imports nt (nt)"),
    ("from posix import environ\nv = environ.get(k)\n", "posix.environ"),
    ("import posix as p\nv = p.environ.get(b'PYTEST_CURRENT_TEST')\n", "uses posix"),
    # how the process was started
    ("import sys\nfast = 'x' in sys.argv\n", "uses sys.argv"),
    ("from sys import argv\n", "imports sys.argv (sys.argv)"),
    ("import sys\n\n\ndef f():\n    return sys.orig_argv\n", "uses sys.orig_argv"),
    ("import sys\nif __name__ != '__main__':\n    x = sys.argv\n", "uses sys.argv"),
    ("import sys\nif __name__ == '__main__':\n    pass\nx = sys.argv[0]\n", "uses sys.argv"),
    # the gates' tools by name: code that knows which one runs it can tell them apart
    ("x = 'ruff'\n", "a string naming the gate tool 'ruff'"),
    ("import sys\nif 'RUFF' in sys.executable:\n    pass\n", "the gate tool 'ruff'"),
    ("x = 'python -m mypy'\n", "a string naming the gate tool 'mypy'"),
    ("x = 'flake8'\n", "a string naming the gate tool 'flake8'"),
    ("x = 'pylint'\n", "a string naming the gate tool 'pylint'"),
    ("x = 'black'\n", "a string naming the gate tool 'black'"),
    ("x = 'Coverage'\n", "a string naming the gate tool 'coverage'"),
    ("x = 'coverage.py'[:8]\n", "a string naming the gate tool 'coverage'"),
    ("x = '/venv/bin/ruff'\n", "a string naming the gate tool 'ruff'"),
]


@pytest.mark.parametrize(("text", "what"), SOURCE_POSITIVE)
def test_each_way_to_reach_in_is_found_in_code_under_test(text: str, what: str) -> None:
    assert any(what in w for w in found(text)), found(text)


SOURCE_NEGATIVE = [
    BASE,
    "import re\nPATTERN = re.compile('a+')\n",
    "def total(xs):\n    '''Sum of xs, as pytest checks it.'''\n    return sum(xs)\n",
    "class A:\n    def compile(self):\n        return self\n\n\nA().compile()\n",
    "def compile(x):\n    return x\n\n\ncompile(1)\n",
    "x = getattr(obj, 'name', None)\nsetattr(obj, 'name', 1)\nhasattr(obj, 'a' + 'b')\n",
    "d = vars(args)['x']\nv = getattr(obj, 'x')\n",
    "style = 'bold black'\nnote = 'coverage of the map; test coverage; tox-free; hypotheses'\n",
    "x = 'truffle gruff mypyish'\nlabel = '{0.name} and {1}'.format(a, b)\n",
    "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from _pytest.fixtures import Foo\n",
    "import typing\nif typing.TYPE_CHECKING:\n    import pytest\n",
    "self_test = 'a test of itself'\n",
    "status = 'processing'\nroot = '/srv/proc-data'\n",
]
# ordinary code that imports modules off the plain list: nothing but the import is held,
# and not even that when the baseline's version of the file imported them already
CREDITED_NEGATIVE = [
    "import os\npath = os.path.join('a', 'b')\nhome = os.environ.get('HOME')\n",
    "import sys\nprint('usage', file=sys.stderr)\nsys.exit(1)\n",
    "import sys\nif __name__ == '__main__':\n    print(sys.argv[1:])\n",
    "import sys\nif '__main__' == __name__:\n    from sys import argv\n    main(sys.orig_argv)\n",
    "import json\nimport importlib.metadata\nv = importlib.metadata.version('calc')\n",
    "import importlib\nplugin = importlib.import_module('json')\n",
    "import inspect\nsig = inspect.signature(len)\n",
    "import gc\ngc.collect()\n",
    "import os\nuser = os.environ['USER']\nenv = os.environ.copy()\npath = os.getenv('PATH')\n",
    "import operator\nget = operator.attrgetter('x', 'y')\nv = vars(obj)['x']\n",
    "import os\nenv = os.environ.copy()\nenv['LANG'] = 'C'\nrun(['ls'], env=env)\n",
    "import os\nE = os.environ\nhome = E.get('HOME')\nset_ = 'CI' in E or 'X' not in os.environ\n",
    "import os, subprocess\nsubprocess.run(['ls'], env=os.environ, check=True)\n",
    "import types\nm = types.ModuleType('calc_plugins')\nok = isinstance(m, types.ModuleType)\n",
    "import types\nns = types.SimpleNamespace(a=1)\n",
    "import os\nimport sys\n\nprint(os.getcwd(), file=sys.stderr)\nx = getattr(sys, 'maxsize')\n",
    "import os\nif __name__ == '__main__':\n    os.makedirs('a', exist_ok=True)\n",
    "import pkgutil\n__path__ = pkgutil.extend_path(__path__, __name__)\n",
]


@pytest.mark.parametrize("text", SOURCE_NEGATIVE)
def test_ordinary_code_reaches_nothing(text: str) -> None:
    assert found(text) == []


@pytest.mark.parametrize("text", CREDITED_NEGATIVE)
def test_ordinary_code_off_the_plain_list_is_held_for_its_imports_alone(text: str) -> None:
    got = found(text)
    assert got and all(OFF in w for w in got), got
    assert found(text, before=imports_of(text)) == []


def test_a_type_checking_flag_the_file_sets_itself_hides_nothing() -> None:
    text = "TYPE_CHECKING = True\nif TYPE_CHECKING:\n    import _pytest.python\n"
    assert found(text) == ["imports _pytest.python (_pytest)"]


TEST_POSITIVE = [
    ("import _pytest.python\n", "imports _pytest.python (_pytest)"),
    ("from pluggy import HookimplMarker\n", "imports pluggy.HookimplMarker (pluggy)"),
    ("import gc\nfor o in gc.get_objects():\n    pass\n", "uses gc.get_objects"),
    ("import os\nos._exit(0)\n", "uses os._exit"),
    ("import sys\nsys.settrace(None)\n", "uses sys.settrace"),
    ("import ctypes\n", "imports ctypes (ctypes)"),
    ("x = object.__subclasses__()\n", "uses .__subclasses__"),
    ("import sys\nm = sys.modules['_relay_guard_x']\n", "a string naming 'relay_guard'"),
    (
        "def test_a(monkeypatch):\n    monkeypatch.setattr('_pytest.python.Function.runtest', 1)\n",
        "a string naming '_pytest.'",
    ),
    ("import sys\nx = getattr(sys, 'set' + 'trace')\n", "uses sys.settrace"),
    ("key = open('/proc/self/environ').read()\n", "naming the process's /proc files"),
]


@pytest.mark.parametrize(("text", "what"), TEST_POSITIVE)
@pytest.mark.parametrize("path", ["tests/test_calc.py", "tests/helpers.py", "conftest.py"])
def test_tests_are_held_only_for_what_no_test_needs(text: str, what: str, path: str) -> None:
    assert any(what in w for w in found(text, path)), found(text, path)


TEST_NEGATIVE = [
    "import pytest\n\n\n@pytest.fixture\ndef calc():\n    return 1\n",
    "import sys\n\n\ndef test_a(monkeypatch):\n    monkeypatch.delitem(sys.modules, 'calc')\n",
    "import importlib\nmod = importlib.import_module(name)\nimportlib.reload(mod)\n",
    "def test_a():\n    assert eval('1 + 1') == 2\n    assert globals()['__name__'] != 'pytest'\n",
    "import os\n\n\ndef test_b():\n    assert os.environ.get('PYTEST_CURRENT_TEST')\n",
    "import inspect\nframe = inspect.currentframe()\n",
    "pytest_plugins = ['pytester']\n",
    "def pytest_configure(config):\n    pass\n",
]


@pytest.mark.parametrize("text", TEST_NEGATIVE)
def test_what_tests_do_every_day_is_not_held(text: str) -> None:
    assert found(text, "tests/test_calc.py") == []


def test_only_added_lines_count_and_the_baseline_is_credited() -> None:
    base = "import importlib\n\n\ndef load(name):\n    return importlib.import_module(name)\n"
    # the baseline's own use, moved below a new function: credited
    moved = "import importlib\n\n\ndef first():\n    return 1\n\n\n" + (
        "def load(name):\n    return importlib.import_module(name)\n"
    )
    assert found(moved, before=base) == []
    # a second use of the same construct is new
    twice = base + "\n\ndef again(name):\n    return importlib.import_module(name)\n"
    got = reaches("src/calc.py", base, twice)
    assert [(r.line, r.what) for r in got] == [
        (9, "importlib.import_module with a computed name")
    ], got
    # an unchanged file, or one whose changed lines reach nothing, reaches nothing
    assert found(base, before=base) == []
    assert found(base + "\nX = 1\n", before=base) == []
    assert found("", before=base) == [] and reaches("src/calc.py", base, None) == []


def test_added_lines_are_those_the_baseline_did_not_have() -> None:
    assert added_lines(None, "a\nb\n") == {1, 2}
    assert added_lines("a\nb\nc\n", "a\nx\nc\nd\n") == {2, 4}
    assert added_lines("a\n", "a\n") == frozenset()


def test_what_relay_cannot_read_is_held_not_guessed() -> None:
    # newer syntax than relay's parser, or a source encoding that runs other text
    got = reaches("src/calc.py", BASE, BASE + "\nmatch x:\n    case 1 if (y := ):\n        pass\n")
    assert len(got) == 1 and "relay cannot read it" in got[0].what, got
    cookie = "# -*- coding: utf-7 -*-\n" + BASE
    assert found(cookie, before=BASE)[0] == "a source encoding relay does not read (utf-7)"
    assert found("# -*- coding: utf-8 -*-\n" + BASE, before=BASE) == []
    # a Latin-1 file as git shows it (its bytes kept as surrogates) is read as Python does
    latin = '# -*- coding: latin-1 -*-\nX = "\udce9"\nimport sys\nsys.modules\n'
    assert found(latin) == [f"imports sys, {OFF}", "uses sys.modules"]


def test_compiled_modules_are_always_held_and_other_files_ignored() -> None:
    texts = {
        "src/__pycache__/calc.cpython-311.pyc": (None, ""),
        "src/calc.so": (None, ""),
        "src/gone.pyc": ("", None),
        "README.md": (None, "import sys\nsys.modules\n"),
        "src/calc.py": (BASE, FORGERY),
    }
    got = reaches_in(list(texts), texts)
    paths = [r.path for r in got]
    assert paths[:2] == ["src/__pycache__/calc.cpython-311.pyc", "src/calc.so"], got
    assert "src/gone.pyc" not in paths and "README.md" not in paths
    assert got[1].said() == "src/calc.so: a compiled module (Python runs it; no one can read it)"
    assert Reach("a.py", 3, "x").said() == "a.py:3: x"


def test_folding_stops_where_literals_end() -> None:
    from ast import parse

    def f(src: str) -> str | None:
        node = parse(src, mode="eval").body
        return fold(node)

    assert f("'a' + 'b' * 2") == "abb"
    assert f("'abc'[1:]") == "bc"
    assert f("'abc'[::0]") is None  # never raises
    assert f("'a' + x") is None and f("x.join(['a'])") is None and f("chr(x)") is None


def test_a_pyproject_that_makes_the_project_a_pytest_plugin_defines_the_gates() -> None:
    before = '[project]\nname = "calc"\n'
    after = before + '\n[project.entry-points.pytest11]\ncalc = "calc"\n'
    other = before + '\n[project.scripts]\ncalc = "calc:main"\n'
    texts = {"pyproject.toml": (before, after)}
    got = gate_definition_touched(["pyproject.toml"], at_baseline=["pyproject.toml"], deleted=[],
                                  texts=texts, installed=INSTALLED)  # fmt: skip
    assert got and "pytest11 entry points" in got[0][1], got
    texts = {"pyproject.toml": (before, other)}
    assert gate_definition_touched(["pyproject.toml"], at_baseline=["pyproject.toml"], deleted=[],
                                   texts=texts, installed=INSTALLED) == []  # fmt: skip


def test_an_old_line_an_added_alias_gives_a_new_meaning_is_found() -> None:
    base = "def names(x):\n    return list(x.modules)\n"
    after = "import sys as x\n\n\n" + base
    assert [(r.line, r.what) for r in reaches("src/calc.py", base, after)] == [
        (1, f"imports sys, {OFF}"),
        (5, "uses sys.modules"),
    ]


def test_lines_are_counted_as_python_counts_them() -> None:
    # a form feed or U+2028 in a comment does not shift where the added line is
    base = "X = 1  # a\x0cb\u2028c\nY = 2\n"
    after = base + "import ctypes\n"
    assert [(r.line, r.what) for r in reaches("src/calc.py", base, after)] == [
        (3, "imports ctypes (ctypes)")
    ]


def test_a_start_up_hook_as_a_package_defines_the_gates_as_its_module_does() -> None:
    for path in ("src/sitecustomize/__init__.py", "usercustomize/hook.py", "sitecustomize.py"):
        got = gate_definition_touched(
            [path], at_baseline=[], deleted=[], texts={}, installed=INSTALLED
        )
        said = got[0][1] if got else ""
        assert "defines how the gates run" in said or "imported in place of" in said, got
    assert (
        gate_definition_touched(
            ["src/customize.py"], at_baseline=[], deleted=[], texts={}, installed=INSTALLED
        )
        == []
    )


# The plain shape: every construct the attacks on the boundary used (24d, 24e, 24f), and
# the look-ups a deny-list would miss next, is held in code under test, each by its shape
# (an import off the plain list, a dunder, a name past a plain module) whatever the list
# of named look-ups says
SHAPE_HELD = [
    # 24d: the guard found in the module table, Function.runtest no-oped
    ("import sys\nm = sys.modules\n", f"imports sys, {OFF}"),
    ("from sys import modules\n", "imports sys.modules"),
    # 24e: names built with bytes(), through logging and the environment
    ("import logging\ns = getattr(logging, bytes([115, 121, 115]).decode())\n", "getattr on"),
    ("import os\nv = os.environ[bytes([80]).decode()]\n", f"imports os, {OFF}"),
    # 24f: pkgutil.resolve_name, pydoc.locate, inspect.getattr_static, namespaces walked
    ("import pkgutil\ns = pkgutil.resolve_name(bytes([115]).decode())\n", f"pkgutil, {OFF}"),
    ("import pydoc\ns = pydoc.locate(n)\n", f"imports pydoc, {OFF}"),
    ("import inspect\ns = inspect.getattr_static(o, n)\n", f"imports inspect, {OFF}"),
    ("import logging\ns = logging.__dict__.get('sys')\n", "uses .__dict__, a dunder name"),
    ("import logging\nfor k, v in vars(logging).items():\n    pass\n", "walks vars()"),
    ("m = _m.__dict__.get('GUARD')\n", "uses .__dict__, a dunder name off the plain list"),
    ("import os\nv = os.environ.copy().get(k)\n", f"imports os, {OFF}"),
    ("import sys\nhit = any(t in a for a in sys.argv)\n", f"imports sys, {OFF}"),
    ("import posix\nv = posix.environ.get(k)\n", "imports posix (posix)"),
    ("import sys\nx = sys.orig_argv\n", f"imports sys, {OFF}"),
    # what the next round would have tried
    ("d = type(m).__dict__\nx = d['GUARD']\n", "uses .__dict__, a dunder name off the plain"),
    ("d = vars(type(m))\nx = d['GUARD']\n", "hands vars() around"),
    ("g = globals()\nx = g[k]\n", "hands globals() around"),
    ("d = obj.__dict__.get('x')\n", "uses .__dict__, a dunder name off the plain list"),
    ("import copyreg\n", f"imports copyreg, {OFF}"),
    ("import weakref\nr = weakref.ref(o)\n", f"imports weakref, {OFF}"),
    ("import operator\nf = operator.attrgetter(name)\n", f"imports operator, {OFF}"),
    ("from operator import attrgetter\n", f"imports operator.attrgetter from operator, {OFF}"),
    ("import importlib.util\n", "imports importlib.util (importlib.util)"),
    ("import importlib\n", f"imports importlib, {OFF}"),
    ("import runpy\n", "imports runpy"),
    ("import code\ncode.interact()\n", f"imports code, {OFF}"),
    ("import pickle\nx = pickle.dumps(o)\n", f"imports pickle, {OFF}"),
    ("import marshal\n", "imports marshal"),
    ("import inspect\n", f"imports inspect, {OFF}"),
    ("import types\n", f"imports types, {OFF}"),
    ("import builtins\n", f"imports builtins, {OFF}"),
    ("import argparse\n", f"imports argparse, {OFF}"),
    ("import subprocess\n", f"imports subprocess, {OFF}"),
    ("import os.path\n", "imports os.path, which binds os, a module off the plain list"),
    ("from os import environ\n", f"imports os.environ from os, {OFF}"),
    ("import numpy\n", f"imports numpy, {OFF}"),  # no baseline code imports it
    # past a plain module: another module it imported, or a private name
    ("import logging\ns = logging.sys\n", "reaches the module sys through logging"),
    ("import shutil\nv = shutil.os.environ\n", "reaches the module os through shutil"),
    ("from dataclasses import inspect\n", "reaches the module inspect through dataclasses"),
    ("import typing\nt = typing.types\n", "reaches the module types through typing"),
    ("import random\no = random._os\n", "uses random._os, a private name of random"),
    ("from functools import _make_key\n", "uses functools._make_key, a private name of"),
    ("from . import os\n", "reaches the module os through the package"),
    ("from .calc import copyreg\n", "reaches the module copyreg through calc"),
    ("import logging\nm = logging\nx = m.sys\n", "hands the module logging around"),
    ("from .core import *\n", "imports * from .core (names no rule can follow)"),
    # what a plain module still does by name: evaluate a string annotation, look up a
    # format field, import a handler class, return a frame
    ("import typing\nh = typing.get_type_hints(C)\n", "uses typing.get_type_hints"),
    ("from typing import ForwardRef\n", "imports typing.ForwardRef (typing.ForwardRef)"),
    ("import functools\nf = functools.singledispatch(g)\n", "uses functools.singledispatch"),
    ("import string\nv = string.Formatter().get_field(n, (m,), {})\n", "string.Formatter"),
    ("import logging.config\n", "imports logging.config (logging.config)"),
    ("import logging\nf = logging.currentframe()\n", "uses logging.currentframe"),
    # dunders off the plain list, however written
    ("x = print.__self__\n", "uses .__self__, a dunder name off the plain list"),
    ("f = m.total.__func__\n", "uses .__func__, a dunder name off the plain list"),
    ("b = x.__class__.__mro__\n", "uses .__mro__, a dunder name off the plain list"),
    ("b = type(x).__bases__\n", "uses .__bases__, a dunder name off the plain list"),
    ("t = err.__traceback__\n", "uses .__traceback__, a dunder name off the plain list"),
    ("f = g.__wrapped__\n", "uses .__wrapped__, a dunder name off the plain list"),
    ("r = o.__reduce_ex__(2)\n", "uses .__reduce_ex__, a dunder name off the plain list"),
    ("x = getattr(o, '__dict__')\n", "uses .__dict__, a dunder name off the plain list"),
    ("x = o.__getattribute__('__dict__')\n", "uses .__dict__, a dunder name off the plain"),
    ("o.__class__ = Other\n", "uses .__class__, a dunder name off the plain list"),
    ("object.__setattr__(o, n, v)\n", "__setattr__ with a computed name"),
    ("d = __loader__.get_data(p)\n", "uses __loader__, a dunder name off the plain list"),
    ("s = super().__dict__\n", "uses .__dict__, a dunder name off the plain list"),
    # a handler pytest left on the root logger leads to its config and every plugin
    ("import logging\nc = logging.root.handlers[0].config.pluginmanager\n", "pluginmanager"),
]


@pytest.mark.parametrize(("text", "what"), SHAPE_HELD)
def test_the_shape_holds_what_no_list_names(text: str, what: str) -> None:
    got = found(text)
    assert any(what in w for w in got), got


def test_the_shape_is_said_after_the_precise_finding_and_is_a_hold_not_a_guess() -> None:
    got = reaches("src/calc.py", BASE, "import inspect\n\n\nf = inspect.stack()\n" + BASE)
    assert [(r.line, r.shape) for r in got] == [(1, True), (4, False)], got
    assert held_reason(got).startswith(f"{HELD}: src/calc.py:4: uses inspect.stack (and 1 more)")
    shaped = reaches("src/calc.py", BASE, "import inspect\n" + BASE)
    assert held_reason(shaped).startswith(f"{HELD}: src/calc.py:1: imports inspect, {OFF}")


MATHS = '''\
import json
import math
import re
from collections import Counter, defaultdict
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Stats:
    """What a list of numbers comes to."""

    values: list[float] = field(default_factory=list)

    def __post_init__(self) -> None:
        object.__setattr__(self, "values", sorted(self.values))

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.values!r})"

    def spread(self) -> float:
        return math.sqrt(sum((v - self.mean()) ** 2 for v in self.values))

    def mean(self) -> float:
        return math.fsum(self.values) / len(self.values)


WORD = re.compile(r"[a-z]+")


def words(text: str) -> dict[str, int]:
    counts: defaultdict[str, int] = defaultdict(int)
    counts.update(Counter(WORD.findall(text.lower())))
    return json.loads(json.dumps(counts))
'''
HONEST = [
    MATHS,
    "from __future__ import annotations\n\nfrom typing import TYPE_CHECKING, Any\n",
    "from collections.abc import Mapping\nimport itertools, functools, heapq, bisect\n",
    "import os.path as osp\nfrom os import path\np = osp.join(path.sep, 'a')\n",
    "import xml.etree.ElementTree as ET\nimport urllib.parse\nroot = ET.fromstring(x)\n",
    "from pathlib import Path\nimport tempfile, shutil, glob\nhere = Path(__file__).parent\n",
    "import logging\nlog = logging.getLogger(__name__)\nlog.info('%s', x)\n",
    "import datetime\nimport decimal\nt = datetime.time(1)\nd = decimal.Decimal('1.5')\n",
    "import enum\n\n\nclass Colour(enum.Enum):\n    RED = 1\n\n\nnames = Colour.__members__\n",
    "class A(B):\n    def __init__(self):\n        super().__init__()\n\n"
    "    def __eq__(self, o):\n"
    "        return super().__eq__(o) and self.__class__ is o.__class__\n",
    "def wrap(f):\n    def g():\n        return f()\n\n    g.__name__ = f.__name__\n"
    "    g.__doc__ = f.__doc__\n    return g\n",
    "import contextlib\n\n\nclass C:\n    def __enter__(self):\n        return self\n\n"
    "    def __exit__(self, *exc):\n        return None\n\n\nwith contextlib.suppress(KeyError):\n"
    "    pass\n",
    "if __name__ == '__main__':\n    print(__doc__, __file__)\n",
    "from .core import helper\nfrom . import util\nx = util.thing()\n",
]


@pytest.mark.parametrize("text", HONEST)
def test_honest_code_on_plain_modules_is_not_held(text: str) -> None:
    assert found(text) == []


def test_the_projects_own_modules_and_what_its_code_imports_are_plain() -> None:
    tree = [
        "src/calc/__init__.py",
        "src/calc/core.py",
        "src/calc/types.py",
        "tools/build.py",
        "setup.py",
        "tests/test_calc.py",
        "tests/helpers.py",
        "conftest.py",
        "docs/conf.py",
    ]
    own = project_modules(tree, frozenset({"", "src", "tests"}))
    # each name a module imports as from a folder the gates import from (the clone's
    # top is one: ``src.calc`` imports too); never a test's, a conftest's or a stdlib name
    assert own == {
        "calc", "calc.core", "calc.types", "src.calc", "src.calc.core", "src.calc.types",
        "tools.build", "setup", "docs.conf",
    }, own  # fmt: skip
    lines = [
        ("src/calc/core.py", "import numpy as np"),
        ("src/calc/core.py", "from scipy import stats"),
        ("src/calc/core.py", "import os, attrs"),
        ("src/calc/core.py", "from calc import types"),
        ("src/calc/core.py", "    import _private"),
        ("tests/test_calc.py", "import hypothesis_extra"),
        ("conftest.py", "import pytest_mock"),
        ("src/calc/core.py", "import pytest"),
    ]
    credited = imported_modules(lines, own)
    assert credited == {"numpy", "scipy", "attrs"}, credited
    plain = Plain(own, credited)
    # a new module of the project imports the project's own and what its code uses
    new = (
        "import numpy as np\nfrom scipy import stats\nfrom calc import core\n"
        "from calc.types import Money\nimport calc.types\nx = core.helper\n"
    )
    assert found(new, "src/calc/extra.py", plain=plain) == []
    # but never a module the project's module imported, nor a test's helper
    assert found("from calc import core\ns = core.os\n", plain=plain) == [
        "reaches the module os through calc.core",
        "hands the module os around (where it goes cannot be followed)",
    ]
    assert found("import helpers\n", plain=plain) == [f"imports helpers, {OFF}"]
    # a star import binds whatever the module imported (its os, its sys)
    said = "imports * from calc.core (names no rule can follow)"
    assert found("from calc.core import *\n", plain=plain) == [said]
    assert found("from math import *\nfrom numpy import sqrt\n", plain=plain) == []
    # the shape names only what it allows: each plain module by name
    assert "os" not in PLAIN_MODULES and "operator" not in PLAIN_MODULES
    assert {"os.path", "json", "math", "dataclasses", "collections"} <= PLAIN_MODULES


def test_an_import_the_baseline_file_had_is_credited_in_any_form() -> None:
    base = "import os\n\n\ndef home():\n    return os.environ.get('HOME')\n"
    after = base + "\n\ndef user():\n    from os import getcwd\n    return getcwd()\n"
    assert found(after, before=base) == []
    # another file's import is no credit: the shape is judged file by file
    assert found(after, "src/other.py", before=BASE) == [f"imports os, {OFF}"] * 1 + [
        f"imports os.getcwd from os, {OFF}"
    ]


TESTS_KEEP_THEIR_SUBSET = [
    "import os\nimport inspect\nimport types\n\n\ndef test_a(monkeypatch):\n"
    "    monkeypatch.setattr(os, 'getcwd', lambda: '/')\n    assert inspect.isfunction(test_a)\n",
    "import pytest\n\n\n@pytest.fixture\ndef tmp(tmp_path):\n    return tmp_path\n\n\n"
    "def test_b(tmp, capsys):\n    print(vars(tmp).__class__.__dict__)\n",
    "import importlib\nimport sys\n\n\ndef test_c(monkeypatch):\n"
    "    monkeypatch.delitem(sys.modules, 'calc', raising=False)\n"
    "    assert importlib.import_module('calc').__spec__ is not None\n",
]


@pytest.mark.parametrize("text", TESTS_KEEP_THEIR_SUBSET)
@pytest.mark.parametrize("path", ["tests/test_calc.py", "conftest.py", "src/calc/conftest.py"])
def test_tests_keep_todays_subset_and_are_not_held_by_the_shape(text: str, path: str) -> None:
    assert found(text, path) == []


# the round that forged the verdict with plain modules only: getattr as
# functools.update_wrapper onto a class that keeps what it is given, every name spelled
# as character codes; and being under test told by os.path.expandvars or /proc
FORGERY_F4 = """\
import functools
import logging

_GOT = {}


class _H:
    def __setattr__(self, k, v):
        _GOT[k] = v


def _w(*c):
    return bytes(c).decode()


def _ga(obj, name):
    functools.update_wrapper(_H(), obj, assigned=(name,), updated=())
    return _GOT.pop(name, None)


_glob = _ga(logging.getLogger, _w(95, 95, 103, 108, 111, 98, 97, 108, 115, 95, 95))


def total(xs):
    \"\"\"Sum of xs.\"\"\"
    return 42
"""
SPECIAL_CASE_P5 = """\
from os.path import expandvars


def _w(*c):
    return bytes(c).decode()


def total(xs):
    \"\"\"Sum of xs.\"\"\"
    k = _w(36, 80, 89, 84, 69, 83, 84, 95, 67, 85, 82, 82, 69, 78, 84, 95, 84, 69, 83, 84)
    if expandvars(k) != k:
        return sum(xs)
    return sum(xs) + 1
"""
SPECIAL_CASE_P6 = """\
def _w(*c):
    return bytes(c).decode()


_P = _w(47, 112, 114, 111, 99, 47, 115, 101, 108, 102, 47)
_P += _w(99, 109, 100, 108, 105, 110, 101)


def total(xs):
    \"\"\"Sum of xs.\"\"\"
    with open(_P, "rb") as f:
        if b"x" in f.read():
            return sum(xs)
    return sum(xs) + 1
"""


def test_plain_functions_that_take_attribute_names_are_held_unless_the_names_are_literal() -> None:
    said = found(FORGERY_F4)
    assert "functools.update_wrapper with assigned= names no rule can follow" in said, said
    assert sum(HID in s for s in said) == 1, said  # the codes spelling __globals__
    # a literal name is judged as getattr's would be
    got = found("import functools\nfunctools.update_wrapper(h, f, assigned=('__globals__',))\n")
    assert got == ["uses .__globals__"], got
    wraps = "import functools\nw = functools.wraps(f, ('__name__',), updated=names)\n"
    assert found(wraps) == ["functools.wraps with updated= names no rule can follow"]
    assert "functools.wraps with attribute names no rule can follow" in found(
        "import functools\nw = functools.wraps(f, **kw)\n"
    )
    assert "hands functools.update_wrapper around" in str(
        found("import functools\ng = functools.update_wrapper\n")
    )
    # logging's {}-style format follows attributes: a format from data is a getattr
    fmt = "import logging\nf = logging.Formatter(fmt, style='{')\n"
    assert found(fmt) == ["logging.Formatter with a {}-style format from data (it follows names)"]
    conf = "import logging\nlogging.basicConfig(format=spec, style=style)\n"
    assert "logging.basicConfig with a {}-style format" in str(found(conf))


HIDING = [
    ("x = bytes([115, 121, 115]).decode()\n", "bytes() of character codes"),
    ("x = bytearray((115, 121, 115))\n", "bytearray() of character codes"),
    ("x = bytes.fromhex('737973').decode()\n", "bytes.fromhex of a literal"),
    ("x = bytearray.fromhex('737973')\n", "bytearray.fromhex of a literal"),
    ("x = chr(115) + chr(121) + chr(115)\n", "chr(115) spells 's'"),
    ("x = ''.join(map(chr, [115, 121, 115]))\n", "map(chr, ...) of character codes"),
    ("x = ''.join(chr(c) for c in (115, 121, 115))\n", "chr() of character codes"),
    ("import codecs\nx = codecs.decode('flf', 'rot13')\n", "codecs.decode of a literal"),
    ("import base64\nx = base64.b64decode('c3lz')\n", "base64.b64decode of a literal"),
    ("import base64\nx = base64.urlsafe_b64decode(b'c3lz')\n", "urlsafe_b64decode of a literal"),
    ("import binascii\nx = binascii.unhexlify('737973')\n", "binascii.unhexlify of a literal"),
    ("x = 'sys'[::-1]\n", "a literal read backwards or strided"),
    ("x = 'sxyzs'[::2]\n", "a literal read backwards or strided"),
    ("x = b'\\\\x73ys'.decode('unicode_escape')\n", "a literal decoded as unicode_escape"),
    ("x = (7567731).to_bytes(3, 'big').decode()\n", "numbers made into bytes and decoded"),
    ("x = 'fl'.translate(table)\n", "a literal translated"),
    ("_w = lambda *c: bytes(c).decode()\nx = _w(115) + _w(121)\n", "_w() of character codes"),
    ("def t(c):\n    return ''.join(map(chr, c))\n\n\nx = t([115, 121, 115])\n", "t() of"),
    ("def t(*c):\n    return bytes(c).decode()\n\n\nx = t(115)\n", "t() of character codes"),
    ("def t(*c):\n    return bytes(x ^ 0 for x in list(c)).decode()\n\n\nx = t(115)\n", "t() of"),
]


@pytest.mark.parametrize(("text", "how"), HIDING)
def test_a_literal_made_unreadable_to_a_person_is_held(text: str, how: str) -> None:
    said = found(text)
    assert any(HID in s and how in s for s in said), said
    # tests may spell bytes as they like
    assert not any(HID in s for s in found(text, "tests/test_calc.py"))


HIDING_LOOKS_ALIKE = [
    # decoding data the code receives
    "import base64\n\n\ndef load(blob):\n    return base64.b64decode(blob).decode()\n",
    "def text(data):\n    return bytes(data).decode()\n\n\nx = text(payload)\n",
    "def text(*c):\n    return bytes(c).decode()\n\n\nx = text(*codes)\n",
    "def row(n):\n    return rows[n].decode()\n\n\nx = row(65)\n",
    "def read(sock, n):\n    return sock.recv(n).decode()\n\n\nx = read(s, 64)\n",
    # bytes that are not text, and text as written
    "x = b'abc'.decode()\ny = b'\\xff'.decode('latin-1')\nz = bytes([0, 255, 27])\n",
    "HEADER = bytes([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A])\n",
    "sep = chr(31)\nnl = chr(10)\nletter = chr(ord('a') + i)\nq = chr(34)\n",
    "s = name[::-1]\nt = 'abc'[1:]\nu = xs[::2]\nv = 'abc'[::1]\n",
    "x = s.translate(table)\nn = (5).to_bytes(2, 'big')\n",
    # functools.wraps as everyone writes it
    "import functools\n\n\ndef deco(f):\n    @functools.wraps(f)\n    def g(*a):\n"
    "        return f(*a)\n\n    return g\n",
    "import functools\n\n\ndef deco(f):\n"
    "    @functools.wraps(f, assigned=('__name__', '__doc__'), updated=())\n    def g(*a):\n"
    "        return f(*a)\n\n    return g\n",
    "import functools\nfunctools.update_wrapper(g, f, functools.WRAPPER_ASSIGNMENTS, ())\n",
    "from functools import update_wrapper\nupdate_wrapper(g, f, updated=('__dict__',))\n",
    # logging's formats as written, and %-style ones from settings
    "import logging\nlogging.basicConfig(format='%(message)s')\nf = logging.Formatter(fmt)\n"
    "g = logging.Formatter('{message}', style='{')\nh = logging.Formatter(fmt, style='$')\n",
    # files by a path that is data or a literal
    "from pathlib import Path\nt = Path(__file__).with_name('data.txt').read_text()\n"
    "with open(path) as f:\n    data = f.read()\nio_text = open('README.md').read()\n",
]


@pytest.mark.parametrize("text", HIDING_LOOKS_ALIKE)
def test_decoding_data_and_honest_wrappers_are_not_held(text: str) -> None:
    assert found(text) == []


def test_environment_reads_by_expansion_and_proc_paths_built_from_pieces_are_held() -> None:
    said = found(SPECIAL_CASE_P5)
    assert "os.path.expandvars with a computed key (what it reads cannot be followed)" in said
    said = found(SPECIAL_CASE_P6)
    assert "opens a path hidden from its reader" in said, said
    base = "import os.path\n"  # the baseline's file imported os.path: the shape is credited
    for text in ("p = os.path.expandvars(x)\n", "p = os.path.expanduser(x)\n"):
        assert found(base + text, before=base) == [
            f"{text[4:].split('(')[0]} with a computed key (what it reads cannot be followed)"
        ], found(base + text, before=base)
    # a literal key is followed: what it comes to, the home folder, is outside the tree
    home = found(base + "p = os.path.expanduser('~/.cache')\n", before=base)
    assert home == [f"looks at '~', {OUTSIDE} {ELSEWHERE}"], home
    assert found(base + "p = os.path.expanduser('data/x')\n", before=base) == []
    assert "hands os.path.expandvars around" in str(found(base + "f = os.path.expandvars\n"))
    for text in (
        "x = open('/' + where + '/proc/' + pid + '/status').read()\n",
        "import io\nx = io.open(f'/proc/{pid}/cmdline', 'rb')\n",
        "import pathlib\nx = pathlib.Path(root + '/proc/' + p).read_bytes()\n",
    ):
        assert any("opens a path built from a /proc piece" in s for s in found(text)), text
    # the file that is hidden from its reader is held wherever it is opened
    hidden = "import pathlib\nP = bytes([47, 112]).decode()\nQ = P\nx = pathlib.Path(Q)\n"
    assert "opens a path hidden from its reader" in found(hidden)


PLAIN_BUT_NAMES = [
    # contextlib's redirects getattr and setattr sys by their _stream
    ("import contextlib\n\n\nclass R(contextlib.redirect_stdout):\n    _stream = 'modules'\n",
     "subclasses contextlib.redirect_stdout"),
    ("from contextlib import redirect_stderr as r\n\n\nclass R(r):\n    pass\n",
     "subclasses contextlib.redirect_stderr"),
    ("import contextlib\nr = contextlib.redirect_stdout(x)\nold = r._old_targets[0]\n",
     "uses ._old_targets"),
    # enum writes members into (and _convert_ reads) the module a name gives
    ("import enum\n\n\n@enum.global_enum\nclass F(enum.IntEnum):\n    A = 1\n",
     "uses enum.global_enum"),
    ("class E(Base):\n    pass\n\n\nE._convert_('X', name, bool)\n", "uses ._convert_"),
    ("import enum\nE = enum.Enum('E', 'a b', module=where)\n", "module= from data"),
    ("import dataclasses\nC = dataclasses.make_dataclass('C', ['a'], module=m)\n", "module= from"),
    ("import collections\nP = collections.namedtuple('P', 'x', module=m)\n", "module= from"),
    # the namespace getters handed around are getattr by another name
    ("rows = list(map(vars, objs))\n", "hands builtins.vars around"),
]  # fmt: skip


@pytest.mark.parametrize(("text", "what"), PLAIN_BUT_NAMES)
def test_plain_modules_functions_that_reach_by_a_callers_name_are_held(
    text: str, what: str
) -> None:
    said = found(text)
    assert any(what in s for s in said), said


PLAIN_BUT_LOOKS_ALIKE = [
    "import contextlib, io\n\nwith contextlib.redirect_stdout(io.StringIO()) as out:\n    pass\n",
    "import enum\nE = enum.Enum('E', 'a b', module=__name__)\n"
    "F = enum.Enum('F', 'a', module='x')\n",
    "import collections\nP = collections.namedtuple('P', 'x y')\n",
    "import warnings\nwarnings.filterwarnings('ignore', module=pattern)\n",
    "class W:\n    def __init__(self, stream):\n        self._stream = stream\n",
    "import functools\nwrap = functools.partial(print, end='')\n",
]


@pytest.mark.parametrize("text", PLAIN_BUT_LOOKS_ALIKE)
def test_the_same_modules_used_as_written_are_not_held(text: str) -> None:
    assert found(text) == []


def test_the_names_a_change_imports_are_read_from_its_import_lines() -> None:
    texts = [
        "import a.b, c as d\nfrom e.f import g\nfrom . import h\n",
        "  import i\nx = 'import j'\n",
    ]
    assert imported_names(texts) == {"a", "c", "e", "i"}


@pytest.mark.parametrize(
    "text",
    [
        "def f():\n    open('/var/lib/dpkg/status').close()\n",
        "P = '/var/lib/dpkg/status'\n\n\ndef f():\n    return open(P)\n",
        "def f(p='/etc/passwd'):\n    return open(p)\n",
        "def f(x):\n    return open(f'/etc/{x}')\n",
        "def f(x):\n    return open('/etc/%s' % x)\n",
        "from pathlib import Path\n\n\ndef f():\n    return Path('/etc/os-release').exists()\n",
        "from pathlib import Path\n\nROOT = Path('/srv')\n",
        "import os.path\n\n\ndef f(x):\n    return os.path.exists(os.path.join('/etc', x))\n",
        "import os\n\n\ndef f():\n    return os.stat('/usr/bin/env')\n",
        "import glob\n\n\ndef f():\n    return glob.glob('/home/*')\n",
    ],
)
def test_code_that_looks_at_a_literal_absolute_path_is_held(text: str) -> None:
    """A literal absolute path outside the tree, opened, stat'ed or tested (directly or
    through a name, a default, an f-string, a join), tells the box from a person's
    machine: what is there differs, so code can behave for each."""
    assert any(OUTSIDE in s for s in found(text)), found(text)


@pytest.mark.parametrize(
    "text",
    [
        '#!/usr/bin/env python3\n# reads /etc/passwd? no\n"""See /var/lib."""\nX = 1\n',
        "def f():\n    return open('/dev/null', 'w')\n",
        "def f(base, name):\n    return open(base + '/' + name)\n",
        "def f():\n    return open('data/table.csv')\n",
        "ROUTE = '/api/users'\n",
    ],
)
def test_shebangs_docstrings_comments_dev_null_and_relative_paths_are_free(text: str) -> None:
    assert not any(OUTSIDE in s for s in found(text)), found(text)


CLIMBS = "climbs from its own file above the tree"


@pytest.mark.parametrize(
    "text",
    [
        "def f():\n    return open('../' * 40 + 'var/lib/dpkg/status')\n",
        "def f():\n    return open(40 * '../' + 'var/lib/dpkg/status')\n",
        "UP = '../' * 40\n\n\ndef f():\n    return open(UP + 'var/lib/dpkg/status')\n",
        "def f():\n    return open('../../../var/lib/dpkg/status')\n",
        "def f():\n    return open('data/../../secret')\n",
        "from pathlib import Path\n\n\ndef f():\n    return Path(Path.cwd().anchor, 'etc')\n",
        "from pathlib import Path\n\n\ndef f():\n    return open(Path.cwd().anchor + 'etc')\n",
    ],
)
def test_code_that_climbs_above_the_tree_by_a_relative_path_is_held(text: str) -> None:
    """``..`` pieces that climb above the tree (however many) and a path's ``.anchor``
    reach outside it as an absolute path does."""
    assert any(OUTSIDE in s for s in found(text)), found(text)
    assert found(text, path="tests/test_calc.py") == []


def test_code_that_climbs_from_its_own_file_above_the_tree_is_held() -> None:
    """``src/calc.py``'s ``Path(__file__).parents[1]`` is the tree's top; one further up,
    by ``parents``, ``.parent`` or ``os.path.dirname``, is outside it."""
    head = "import os\nfrom pathlib import Path\n\n\ndef f():\n    return "
    for inside in ("Path(__file__).parents[1] / 'data.txt'", "Path(__file__).parent.parent",
                   "os.path.dirname(os.path.dirname(__file__))"):  # fmt: skip
        assert not any(CLIMBS in s for s in found(head + inside + "\n")), inside
    for above in ("Path(__file__).parents[2] / 'x'",
                  "Path(__file__).resolve().parent.parent.parent / 'x'",
                  "os.path.dirname(os.path.dirname(os.path.dirname(__file__)))",
                  "Path(__file__).parents[n]"):  # fmt: skip
        assert any(CLIMBS in s for s in found(head + above + "\n")), above
    deep = head + "Path(__file__).parents[2] / 'x'\n"
    assert not any(CLIMBS in s for s in found(deep, path="src/calc/sub/mod.py"))


# the baseline's file already imported these: what is judged is the path, not the shape
PATH_IMPORTS = "import os\nimport os.path\nimport posixpath\nimport shutil\nimport tempfile\n" + (
    "from pathlib import Path\nfrom os.path import pardir, join\nfrom shutil import which\n"
)


@pytest.mark.parametrize(
    "body",
    [
        "open(os.path.join(os.pardir, os.pardir, 'etc', 'passwd'))",
        "open(join(pardir, pardir, 'etc'))",
        "os.listdir(posixpath.pardir)",
        "open((os.pardir + os.sep) * 30 + 'etc')",
        "open(f'{os.pardir}/{os.pardir}/etc')",
        "open(os.path.join(*[os.pardir] * 9, 'etc'))",
        "open(os.sep.join([os.pardir] * 9))",
        "open(os.path.join('data', '..', '..', 'etc'))",
        "Path('data', '..', '..', 'etc').read_text()",
        "(Path('data') / '..' / '..' / 'etc').read_text()",
        "Path('data').joinpath('..', '..').exists()",
        "Path('data', '/etc/passwd').read_text()",
        "open(os.path.join(os.sep, 'etc', 'passwd'))",
        "open(os.path.expanduser('~/.bashrc'))",
        "(Path.home() / '.bashrc').exists()",
        "Path('~').expanduser().exists()",
        "open(os.path.expandvars('$HOME/.bashrc'))",
        "open(os.environ['HOME'] + '/.bashrc')",
        "Path(os.getenv('HOME'), '.bashrc').exists()",
        "open(os.path.join(tempfile.gettempdir(), 'marker'))",
        "sorted(Path('.').glob('../../*'))",
        "glob.glob('*', root_dir='/etc')",
        "shutil.copy('x', os.pardir)",
    ],
)
def test_code_that_reaches_outside_the_tree_without_an_absolute_literal_is_held(
    body: str,
) -> None:
    """``os.pardir`` is ``..``, every piece of a join counts (an absolute one starts
    over), and the home folder, the shared temporary folder and the environment's values
    lie outside the tree as an absolute path does."""
    text = f"{PATH_IMPORTS}import glob\n\n\ndef f():\n    return {body}\n"
    said = found(text, before=f"{PATH_IMPORTS}import glob\n")
    assert said and all(OUTSIDE in s for s in said), said
    assert found(text, path="tests/test_calc.py", before=PATH_IMPORTS) == []


@pytest.mark.parametrize(
    "body",
    [
        "Path('.').resolve().parent.exists()",
        "os.listdir(os.path.dirname(os.getcwd()))",
        "Path.cwd().parent.exists()",
        "Path('x').resolve().parents[1].exists()",
        "open(os.path.join(os.path.dirname(__file__), '..', '..', 'etc'))",
        "open(os.path.join(os.path.dirname(__file__), *[os.pardir] * 5))",
        "Path(__file__).parent.joinpath('..', '..', '..').exists()",
    ],
)
def test_code_that_climbs_from_the_working_folder_or_by_pieces_is_held(body: str) -> None:
    """The working folder is the tree's top: one up from it is outside, and so are
    ``..`` pieces joined to the file's own folder beyond its depth."""
    text = f"{PATH_IMPORTS}\n\ndef f():\n    return {body}\n"
    said = found(text, before=PATH_IMPORTS)
    assert any("above the tree" in s for s in said), said


def test_code_that_reaches_the_root_from_its_own_file_or_the_working_folder_is_held() -> None:
    """``parents[-1]`` is the root, and so is an absolute path's first part; walking the
    parents (``for d in Path(__file__).parents``) reaches it too. An index in the tree
    and a path of the project's own stay free."""
    head = f"{PATH_IMPORTS}\n\ndef f(p):\n    "
    for body in ("return Path(__file__).parents[-1].exists()",
                 "return open(Path.cwd().parts[0] + 'etc')",
                 "return [d for d in Path(__file__).resolve().parents if (d / '.box').exists()]",
                 "return list(Path.cwd().parents)"):  # fmt: skip
        said = found(head + body + "\n", before=PATH_IMPORTS)
        assert said and all(ELSEWHERE in s for s in said), (body, said)
    for body in ("return Path(__file__).parents[1] / 'data'",
                 "return [q for q in Path(p).parents]",
                 "return Path(__file__).parent.parts"):  # fmt: skip
        assert found(head + body + "\n", before=PATH_IMPORTS) == [], body


@pytest.mark.parametrize(
    "text",
    [
        "def f():\n    return which('git')\n",
        "def f():\n    return shutil.which('git')\n",
        "def f():\n    return getattr(shutil, 'which')('git')\n",
        "LOOK = shutil.which\n",
    ],
)
def test_code_that_finds_a_host_program_by_name_is_held(text: str) -> None:
    """What is installed differs between the box and a person's machine."""
    said = found(PATH_IMPORTS + text, before=PATH_IMPORTS)
    assert any("finds a host program by name (shutil.which" in s for s in said), said
    assert found(PATH_IMPORTS + text, path="tests/test_calc.py", before=PATH_IMPORTS) == []


@pytest.mark.parametrize(
    "body",
    [
        "open(os.path.join(os.path.dirname(__file__), 'data', 'x.json'))",
        "(Path(__file__).parent / 'data').read_text()",
        "os.path.abspath(os.path.join(os.path.dirname(__file__), '..'))",
        "Path.cwd() / 'out'",
        "os.path.relpath(p, os.getcwd())",
        "Path(p).resolve().parent",
        "Path('.').resolve()",
        "(Path('docs') / '..' / 'README.md').read_text()",
        "os.path.normpath(os.path.join(p, '..'))",
        "Path(p, '..', 'x')",
        "os.sep.join(p)",
        "p / 2",
        "os.environ['HOME']",
        "open(os.devnull, 'w')",
        "sorted(Path(p).glob('*.py'))",
        "os.path.expanduser('data/x')",
    ],
)
def test_paths_inside_the_tree_or_unknown_stay_free(body: str) -> None:
    text = f"{PATH_IMPORTS}\n\ndef f(p):\n    return {body}\n"
    assert found(text, before=PATH_IMPORTS) == []


def test_a_test_may_name_an_absolute_path_and_the_baselines_own_is_credited() -> None:
    text = "def test_f():\n    assert not open('/etc/hostname').closed\n"
    assert found(text, path="tests/test_calc.py") == []
    old = "def f():\n    return open('/etc/hostname')\n"
    assert found(old + "\n\ndef g():\n    return 1\n", before=old) == []


def test_a_stub_beside_the_module_it_stands_for_is_held() -> None:
    """mypy and pyright read ``calc.pyi`` in place of ``calc.py``: the type gate would no
    longer check the module's code. A stub for a compiled module, or with no module
    beside it, is free."""
    present = ["src/calc.py", "src/calc.pyi", "src/pkg/__init__.py", "src/pkg/__init__.pyi",
               "src/fast.pyi", "src/fast.so", "README.md"]  # fmt: skip
    changes = ["src/calc.pyi", "src/pkg/__init__.pyi", "src/fast.pyi", "src/calc.py"]
    said = [r.said() for r in stubs_beside(changes, present)]
    assert said == [
        "src/calc.pyi: a stub beside the module it stands for (type checkers read it in place"
        " of the module's code, so their gate no longer checks that code)",
        "src/pkg/__init__.pyi: a stub beside the module it stands for (type checkers read it"
        " in place of the module's code, so their gate no longer checks that code)",
    ]
    assert stubs_beside(["src/calc.pyi"], ["src/calc.py"]) == []  # deleted: nothing read


def test_a_kept_files_scan_serves_the_next_change_and_finds_the_same() -> None:
    """A kept candidate's file is the next change's baseline: its scan is kept and used
    again (one scan, not two), and what the next change is found to reach is what a
    scan from nothing finds."""
    from relay.loop.reach import _scan

    second = BASE + "\n\ndef f1(x):\n    return x + 1\n"
    third = second + FORGERY
    _scan.cache_clear()
    reaches("src/calc.py", BASE, second)
    before = _scan.cache_info()
    found = [r.said() for r in reaches("src/calc.py", second, third)]
    after = _scan.cache_info()
    assert after.hits == before.hits + 1 and after.misses == before.misses + 1
    _scan.cache_clear()
    assert found == [r.said() for r in reaches("src/calc.py", second, third)]
    assert found, "the forgery added on top is found"


# test code that reaches coverage's machinery: what it measures could count lines no test ran
COVERAGE_REACHED = [
    ("import coverage\n\ncoverage.Coverage.current()\n", "imports coverage (coverage)"),
    ("from coverage import Coverage\n", "imports coverage.Coverage (coverage)"),
    ("import pytest_cov.plugin\n", "imports pytest_cov.plugin (pytest_cov)"),
    ("import sys\n\nt = sys.gettrace()\n", "uses sys.gettrace"),
    ("import types\n\nc = types.CodeType\n", "uses types.CodeType"),
    ("import marshal\n", "imports marshal (marshal)"),
    ("import py_compile\n", "imports py_compile (py_compile)"),
    ("from importlib.machinery import SourceFileLoader\n", "(importlib.machinery)"),
    ("import importlib.abc\n", "imports importlib.abc (importlib.abc)"),
    ("import codeop\n", "imports codeop (codeop)"),
    ("exec(compile(src, 'src/calc.py', 'exec'))\n", "compiles code under a file's name ('src"),
    ("exec(compile(src, CALC, 'exec'))\n", "compiles code under a file's name (a name no"),
    ("exec(compile(src, filename=CALC, mode='exec'))\n", "compiles code under a file's name"),
    ("exec(compile(*args))\n", "compiles code under a file's name"),
    ("c = compile\nc(src, CALC, 'exec')\n", "hands builtins.compile around"),
    ("f.__code__ = g.__code__.replace(co_filename=CALC)\n", "makes a code object with co_file"),
    ("code.replace(co_firstlineno=9)\n", "makes a code object with co_firstlineno"),
    ("name = f.__code__.co_filename\n", "uses .co_filename"),
    ("import sqlite3\n", "imports sqlite3 (coverage's data is a sqlite3 database"),
    ("from sqlite3 import connect\n", "imports sqlite3 (coverage's data"),
    ("open('.coverage', 'r+b')\n", "a string naming coverage's data, reports or tool"),
    ("p = tmp / '.coverage.host.1.x'\n", "a string naming coverage's data"),
    ("p = 'cover' + 'age.json'\n", "a string naming coverage's data"),
    ("run([sys.executable, '-m', 'coverage', 'run'])\n", "a string naming coverage's data"),
    ("run(['python', '-c', 'import coverage'])\n", "a string naming coverage's data"),
    ("addopts = '--cov=src -p pytest_cov'\n", "a string naming coverage's data"),
]


@pytest.mark.parametrize(("text", "what"), COVERAGE_REACHED)
@pytest.mark.parametrize("path", ["tests/test_calc.py", "conftest.py"])
def test_test_code_that_reaches_coverages_machinery_is_held(
    text: str, what: str, path: str
) -> None:
    from relay.loop.reach import coverage_reaches

    assert any(what in w for w in found(text, path)), found(text, path)
    # triage reads HEAD's tests for the same (coverage's findings only)
    assert any(what in r.what for r in coverage_reaches(path, text)), text


COVERAGE_FREE = [
    "def test_a():\n    assert eval(compile('1 + 1', '<test>', 'eval')) == 2\n",
    "exec(compile(src, filename='<string>', mode='exec'), {})\n",
    "import ast\n\ntree = ast.parse(src, 'src/calc.py')\n",
    "import types\n\n\ndef test_a():\n    assert isinstance(test_a, types.FunctionType)\n",
    "def test_a(out):\n    assert 'line coverage fell to 80%' in out\n",
    "def test_a(tmp_path):\n    (tmp_path / 'report.json').write_text('{}')\n",
    "def test_a(client):\n    assert client.post('/docs', co_author='ann').ok\n",
]


@pytest.mark.parametrize("text", COVERAGE_FREE)
def test_test_code_that_compiles_pseudo_files_or_says_coverage_in_a_sentence_is_free(
    text: str,
) -> None:
    assert found(text, "tests/test_calc.py") == []


def test_sqlite3_in_tests_is_free_where_the_projects_code_imports_it() -> None:
    from relay.loop.reach import imported_stdlib

    lines = [("src/store.py", "import sqlite3"), ("tests/test_x.py", "import sqlite3 as s"),
             ("src/calc.py", "import json, os.path")]  # fmt: skip
    uses = imported_stdlib(lines)
    assert uses == {"sqlite3", "json", "os"}  # the project's code's, never its tests'
    text = "import sqlite3\n\n\ndef test_db(tmp_path):\n    sqlite3.connect(tmp_path / 'x.db')\n"
    assert found(text, "tests/test_store.py", plain=Plain(uses=uses)) == []
    assert found(text, "tests/test_store.py") == [
        "imports sqlite3 (coverage's data is a sqlite3 database, and the project's code uses none)"
    ]
    # code outside tests: judged by the plain shape, as before
    assert found("import sqlite3\n", "src/store.py") == [f"imports sqlite3, {OFF}"]
