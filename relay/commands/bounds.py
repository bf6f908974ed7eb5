"""Bounds on the numbers a person types: a poll every 0 s, a timeout of -1 or a folder that
already holds something are refused in one line that says the limit, before anything runs.

Pure, but for :func:`empty_folder`, which looks at the folder.
"""

from __future__ import annotations

import argparse
import ipaddress
import math
from collections.abc import Callable
from pathlib import Path
from urllib.parse import urlsplit

from relay.errors import LocalUsageError

# Seconds between two polls of the API at the least: GitHub's budget is 5,000 requests an
# hour (a pass costs a few), a hub on this machine has no one else to serve.
POLL_FLOOR = 5.0
HUB_POLL_FLOOR = 1.0
# and at the most: a day between passes (a larger number is a typo, and a watcher that
# never looks again would hold its jobs' batons unanswered)
POLL_CEILING = 86400.0


def number(
    minimum: float,
    *,
    whole: bool = False,
    unit: str = "",
    above: bool = False,
    maximum: float = math.inf,
) -> Callable[[str], float]:
    """argparse type: a number of at least ``minimum`` (more than it, with ``above``) and
    at most ``maximum``; infinity and NaN never."""
    kind = "a whole number" if whole else "a number"
    unit_word = f" {unit}" if unit else ""
    limit = f"of {'more than' if above else 'at least'} {minimum:g}{unit_word}"
    if not math.isinf(maximum):
        limit = (
            f"of more than {minimum:g} and at most {maximum:g}{unit_word}"
            if above
            else f"from {minimum:g} to {maximum:g}{unit_word}"
        )

    def parse(text: str) -> float:
        try:
            value = float(int(text)) if whole else float(text)
        except ValueError:
            value = math.nan
        if (
            math.isnan(value)
            or math.isinf(value)
            or value < minimum
            or value > maximum
            or (above and value == minimum)
        ):
            raise argparse.ArgumentTypeError(f"{text!r} is not {kind} {limit}")
        return int(value) if whole else value

    parse.__name__ = kind
    return parse


def whole(minimum: int, maximum: float = math.inf) -> Callable[[str], int]:
    """argparse type: a whole number of at least ``minimum`` (and at most ``maximum``)."""
    parse = number(minimum, whole=True, maximum=maximum)
    return lambda text: int(parse(text))


def is_loopback(api_url: str) -> bool:
    """Whether the API is served on this machine (a `relay hub`), by its URL's host."""
    host = urlsplit(api_url).hostname or ""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def poll_floor(api_url: str) -> float:
    """The shortest time between two polls of ``api_url``."""
    return HUB_POLL_FLOOR if is_loopback(api_url) else POLL_FLOOR


def check_poll(flag: str, seconds: float, api_url: str) -> None:
    """Refuse a poll interval below the floor for this API, in one line with the limit."""
    floor = poll_floor(api_url)
    if seconds >= floor:
        return
    where = "a hub on this machine" if is_loopback(api_url) else api_url
    raise LocalUsageError(
        f"{flag} {seconds:g} is too short: at least {floor:g} s between polls of {where}",
        hint=f"give {flag} {floor:g} or more"
        + ("" if is_loopback(api_url) else " (or `relay watch --webhook` to hear at once)"),
    )


def empty_folder(flag: str, folder: Path) -> None:
    """A folder relay is to fill must be new or empty: never a clone, never someone's files."""
    if not folder.exists():
        return
    if not folder.is_dir():
        raise LocalUsageError(
            f"{flag} {folder} is a file, not a folder", hint=f"give {flag} a new folder"
        )
    inside = sorted(p.name for p in folder.iterdir())
    if not inside:
        return
    what = "a git clone" if ".git" in inside else f"not empty ({', '.join(inside[:3])}"
    what += "" if ".git" in inside else (", ...)" if len(inside) > 3 else ")")
    raise LocalUsageError(
        f"{flag} {folder} is {what}: relay writes only into a new or empty folder",
        hint=f"give {flag} a new folder",
    )
