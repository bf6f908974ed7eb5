"""Honest pytest set-ups pass relay's pytest plugin untouched and their failing tests are
read as pytest names them. Each project below is run as the ratchet runs a gate (relay's
plugin loaded, a JUnit report asked for): tests in several folders (the canary runs under
each folder's first module, and must leave none of them set up under the next), xdist's
workers (which run the tests they are sent, in an order the canary cannot know), a
timeout, xfail and skip in all their forms, parameter ids with ``::`` and brackets,
unittest's TestCase with subTest and a failing setUpClass, doctests, a package's
conftest.py whose hooks reorder, mark and add to reports, a fixture that fails in setup or
teardown, ``-x`` and ``-k``."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
from loop_project import FILES, PY

from relay.loop.contract import Gate
from relay.ratchet.measure import measure

PLAIN = f"{PY} -m pytest -q -p no:cacheprovider"
D = textwrap.dedent
TWO_FILES = {
    "tests/test_a.py": "def test_a():\n    assert True\n\n\ndef test_b():\n    assert False\n",
    "tests/test_b.py": "def test_c():\n    assert True\n",
}
XFAIL = D(
    """\
    import pytest


    @pytest.mark.xfail
    def test_xfail_failing():
        assert False


    @pytest.mark.xfail
    def test_xfail_passing():
        assert True


    @pytest.mark.xfail(strict=True)
    def test_strict_passing():
        assert True


    @pytest.mark.xfail(strict=True)
    def test_strict_failing():
        assert False


    @pytest.mark.xfail(raises=KeyError)
    def test_other_error():
        raise ValueError


    def test_imperative():
        pytest.xfail("later")


    @pytest.mark.xfail(run=False)
    def test_not_run():
        assert False
    """
)
SKIPS = {
    "tests/test_a.py": D(
        """\
        import sys

        import pytest

        pytestmark = pytest.mark.skipif(sys.platform == "none", reason="never")


        @pytest.mark.skip
        def test_skipped():
            assert False


        def test_imperative():
            pytest.skip("later")


        def test_bad():
            assert False
        """
    ),
    "tests/test_b.py": "import pytest\n\npytestmark = pytest.mark.skip\n\n\n"
    "def test_x():\n    assert False\n",
    "tests/test_c.py": "import pytest\n\npytest.skip('all', allow_module_level=True)\n\n\n"
    "def test_y():\n    assert False\n",
    "tests/more/test_d.py": "import pytest\n\npytest.importorskip('no_such_module_here')\n\n\n"
    "def test_z():\n    assert False\n",
}
IDS = D(
    """\
    import pytest


    @pytest.mark.parametrize("x", [1, 2, 3], ids=["a::b", "c[d]", "e f"])
    def test_ids(x):
        assert x != 2


    @pytest.mark.parametrize("x", ["a::b", "[x]", "é"])
    def test_values(x):
        assert x != "[x]"


    class TestIn:
        @pytest.mark.parametrize("y", [0, 1])
        def test_in(self, y):
            assert y
    """
)
UNITTEST = D(
    """\
    import unittest


    class T(unittest.TestCase):
        def test_ok(self):
            self.assertTrue(True)

        def test_sub(self):
            for i in range(3):
                with self.subTest(i=i):
                    self.assertNotEqual(i, 1)

        def test_fail(self):
            self.assertEqual(1, 2)

        @unittest.skip("later")
        def test_skip(self):
            pass

        @unittest.expectedFailure
        def test_expected(self):
            self.assertEqual(1, 2)


    class U(unittest.TestCase):
        @classmethod
        def setUpClass(cls):
            raise RuntimeError("no class")

        def test_u(self):
            pass


    class W(unittest.TestCase):
        def test_w(self):
            pass

        def tearDown(self):
            raise RuntimeError("no teardown")
    """
)
DOCTEST = 'def add(a, b):\n    """\n    >>> add(1, 2)\n    3\n    >>> add(1, 1)\n    3\n    """\n'
PACKAGE_CONFTEST = D(
    """\
    import pytest


    def pytest_collection_modifyitems(config, items):
        items.reverse()
        for item in items:
            item.add_marker(pytest.mark.slow)


    @pytest.fixture
    def broken():
        raise RuntimeError("no setup")


    @pytest.fixture
    def untidy():
        yield 1
        raise RuntimeError("no teardown")


    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_makereport(item, call):
        outcome = yield
        report = outcome.get_result()
        report.sections.append(("extra", "said"))
        report.user_properties.append(("when", report.when))


    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_protocol(item, nextitem):
        return (yield)
    """
)
PACKAGE = {
    "tests/__init__.py": "",
    "tests/pkg/__init__.py": "",
    "tests/pkg/conftest.py": PACKAGE_CONFTEST,
    "tests/pkg/test_n.py": "def test_ok():\n    assert True\n\n\ndef test_setup(broken):\n"
    "    pass\n\n\ndef test_teardown(untidy):\n    assert untidy\n\n\n"
    "def test_fail():\n    assert False\n",
    "tests/test_top.py": "def test_top():\n    assert True\n",
}
# a conftest.py that keeps each phase's report on its item for a fixture to read (as
# pytest's documentation shows), with the new-style wrapper
KEEPS_REPORTS = D(
    """\
    import pytest


    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_makereport(item, call):
        report = yield
        setattr(item, "report_" + report.when, report)
        return report


    @pytest.fixture(autouse=True)
    def said(request):
        yield
        if request.node.report_call.failed:
            print("failed")
    """
)
ROOT_CONFTEST = {
    "conftest.py": "import pytest\n\n\n@pytest.fixture\ndef one():\n    return 1\n",
    "tests/test_a.py": "def test_a(one):\n    assert one == 2\n",
    "tests/sub/test_s.py": "def test_s(one):\n    assert one\n",
}
# a folder's conftest.py that skips its tests where there is no database, one that fails
# them where there is no docker (relay's canary under it is stopped too), a top conftest.py
# that skips every test, and a package whose setup_module must run once
NEEDS_DB = {
    "tests/test_a.py": "def test_a():\n    assert False\n",
    "tests/db/conftest.py": "import os\n\nimport pytest\n\n\ndef pytest_runtest_setup(item):\n"
    "    if not os.environ.get('NO_SUCH_DATABASE'):\n        pytest.skip('needs a database')\n",
    "tests/db/test_db.py": "def test_db():\n    assert False\n",
}
NEEDS_DOCKER = {
    "tests/test_a.py": "def test_a():\n    assert False\n",
    "tests/docker/conftest.py": "def pytest_runtest_setup(item):\n"
    "    raise RuntimeError('needs docker')\n",
    "tests/docker/test_d.py": "def test_d():\n    assert True\n",
}
SKIPS_ALL = {
    "tests/conftest.py": "import pytest\n\n\ndef pytest_runtest_setup(item):\n"
    "    pytest.skip('later')\n",
    **NEEDS_DOCKER,
}
SET_UP_ONCE = {
    "tests/__init__.py": "",
    "tests/pkg/__init__.py": "DONE = []\n\n\ndef setup_module():\n    DONE.append(1)\n",
    "tests/pkg/test_p.py": "from tests.pkg import DONE\n\n\ndef test_once():\n"
    "    assert DONE == [1]\n",
    "tests/test_top.py": "def test_top():\n    assert True\n",
}
SUBTESTS = D(
    """\
    def test_s(subtests):
        for i in range(3):
            with subtests.test(msg="each", i=i):
                assert i != 1


    def test_all(subtests):
        for i in range(3):
            with subtests.test(i=i):
                assert i < 5
    """
)
SLOW = {
    "tests/test_a.py": "import time\n\n\ndef test_slow():\n    time.sleep(30)\n\n\n"
    "def test_quick():\n    assert True\n",
    "tests/more/test_b.py": "def test_b():\n    assert True\n",
}
CASES = {
    "xdist": (TWO_FILES, "-p xdist -n 2", ["tests/test_a.py::test_b"]),
    "xdist-loadfile": (TWO_FILES, "-p xdist -n 2 --dist loadfile", ["tests/test_a.py::test_b"]),
    "timeout": (SLOW, "-p timeout --timeout 2", ["tests/test_a.py::test_slow"]),
    "xfail": (
        {"tests/test_x.py": XFAIL},
        "",
        ["tests/test_x.py::test_other_error", "tests/test_x.py::test_strict_passing"],
    ),
    "skip": (SKIPS, "", ["tests/test_a.py::test_bad"]),
    "ids": (
        {"tests/test_p.py": IDS},
        "",
        [
            "tests/test_p.py::TestIn::test_in[0]",
            "tests/test_p.py::test_ids[c[d]]",
            "tests/test_p.py::test_values[[x]]",
        ],
    ),
    "unittest": (
        {"tests/test_u.py": UNITTEST},
        "",
        [
            f"tests/test_u.py::{t}"
            for t in ("T::test_fail", "T::test_sub", "U::test_u", "W::test_w")
        ],
    ),
    "doctest": (
        {
            "src/calc.py": DOCTEST + "    return a + b\n",
            "tests/more/test_b.py": "def test_b():\n    '''\n    >>> 1\n    1\n    '''\n",
        },
        "--doctest-modules src tests",
        ["src/calc.py::calc.add"],
    ),
    "package-conftest": (
        PACKAGE,
        "",
        [f"tests/pkg/test_n.py::{t}" for t in ("test_fail", "test_setup", "test_teardown")],
    ),
    "keeps-reports": (
        {"tests/conftest.py": KEEPS_REPORTS, **TWO_FILES},
        "--junitxml=own.xml",
        ["tests/test_a.py::test_b"],
    ),
    "stop-early": (TWO_FILES, "-x", ["tests/test_a.py::test_b"]),
    "select": (TWO_FILES, "-k 'test_b or test_c'", ["tests/test_a.py::test_b"]),
    "root-conftest": (ROOT_CONFTEST, "", ["tests/test_a.py::test_a"]),
    "skipped-folder": (NEEDS_DB, "", ["tests/test_a.py::test_a"]),
    "skipped-folder-xdist": (NEEDS_DB, "-p xdist -n 2", ["tests/test_a.py::test_a"]),
    "package-set-up-once": (SET_UP_ONCE, "", []),
    "failed-folder": (
        NEEDS_DOCKER,
        "",
        ["tests/test_a.py::test_a", "tests/docker/test_d.py::test_d"],
    ),
    "skips-all": (SKIPS_ALL, "", ["tests/docker/test_d.py::test_d"]),
}
if int(pytest.__version__.split(".")[0]) >= 9:  # pytest's own subtests fixture
    CASES["subtests"] = (
        {"tests/test_s.py": SUBTESTS, "tests/test_u.py": UNITTEST},
        "-p xdist -n 2",
        [f"tests/test_u.py::{t}" for t in ("T::test_fail", "T::test_sub", "U::test_u", "W::test_w")]
        + ["tests/test_s.py::test_s"],
    )


@pytest.fixture(autouse=True)
def _quick_pytest(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PYTHONDONTWRITEBYTECODE", "1")
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")


@pytest.mark.parametrize("case", list(CASES))
def test_an_honest_pytest_set_up_is_no_tampering_and_its_failures_are_read(
    tmp_path: Path, case: str
) -> None:
    files, options, failing = CASES[case]
    for name, text in {**FILES, **files}.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text, encoding="utf-8")
    gates = [Gate("test", f"{PLAIN} {options}".strip())]
    got = measure(tmp_path, gates, timeout=120, coverage_report=None, stop_at_failure=False)
    checks = got.checks[0]
    assert checks.tampered == "", checks
    assert sorted({f.removeprefix("test ") for f, _ in checks.failing}) == sorted(failing), checks


FAILS = "def test_a():\n    assert False\n"
# ... and a folder's conftest.py that skips only relay's canary (told by its name) and calls
# none of the rest
SKIPS_CANARY = """\
import re

import pytest


def pytest_runtest_setup(item):
    if re.fullmatch(r"test_[0-9a-f]{12}", item.name):
        pytest.skip("not mine")


@pytest.hookimpl(tryfirst=True)
def pytest_pyfunc_call(pyfuncitem):
    return True
"""


def test_a_conftest_that_skips_only_the_canary_is_tampering(tmp_path: Path) -> None:
    red = {"tests/sub/conftest.py": SKIPS_CANARY, "tests/sub/test_a.py": FAILS}
    for name, text in {**FILES, **red}.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text, encoding="utf-8")
    got = measure(tmp_path, [Gate("test", PLAIN)], timeout=120, coverage_report=None,
                  stop_at_failure=False)  # fmt: skip
    assert got.checks[0].tampered == (
        "the test run was tampered with: tests/sub/test_a.py::test_a passed, but a hook"
        " stopped relay's canary in its setup there"
    ), got
