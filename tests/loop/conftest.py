"""The loop tests write nothing outside pytest's temporary directory.

Hypothesis would otherwise keep its example database and its constants cache in
``.hypothesis/`` of the working tree; the examples worth keeping are pinned in the tests.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import settings
from hypothesis.configuration import set_hypothesis_home_dir

settings.register_profile("relay-loop", database=None)
settings.load_profile("relay-loop")


@pytest.fixture(autouse=True, scope="session")
def _hypothesis_home(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """Point hypothesis's storage at a session temporary directory."""
    home = tmp_path_factory.mktemp("hypothesis")
    set_hypothesis_home_dir(home)
    yield home
    set_hypothesis_home_dir(None)
