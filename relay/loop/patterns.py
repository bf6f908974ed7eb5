"""Regular expressions compiled when first used, not when their module is imported.

A pattern read only on a rare path (a failed maker's output searched for a usage wall, a
checker's answer for instructions) would cost every `relay loop run` its compiling at
start-up; such a module holds ``later(pattern, flags)`` and calls it where it reads.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable


def later(pattern: str, flags: int = 0) -> Callable[[], re.Pattern[str]]:
    """``pattern`` with ``flags``, compiled at the first call and kept."""
    return functools.partial(_compiled, pattern, flags)


@functools.cache
def _compiled(pattern: str, flags: int) -> re.Pattern[str]:
    return re.compile(pattern, flags)
