"""Surviving a usage limit without a person, decided purely: whether a maker hit a wall
whose reset time it can tell, when to resume (just past the reset), the resume's command
line, and the record of a pending resume that `relay loop status` shows and
`relay doctor` checks.

Ground rules: only a time the maker's own output names counts (a ``Retry-After`` in
seconds or as an HTTP date, "resets at 5pm", "resets at 2026-12-02T05:00Z", "try again
in 2 hours", a reset epoch); a wall with no time it can tell is an ordinary transient
failure, retried after a back-off. ``now`` is always given, never read.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from datetime import UTC, datetime, timedelta, timezone, tzinfo

from relay.loop.patterns import later

RESUME_FLAG = "--resume"
RECORD_NAME = "resume.json"  # in the loop's work directory, beside the run lock
MARGIN = timedelta(seconds=60)
HORIZON = timedelta(days=7)  # a "reset" further off than this is not believed
_WALL = later(
    r"usage[ _-]?limit|rate[ _-]?limit|quota|limit (?:reached|exceeded)|too many requests"
    r"|\b429\b|retry-after|out of (?:credits|tokens)",
    re.IGNORECASE,
)
_RETRY_AFTER = later(r"retry-after\s*[:=]\s*\"?([^\r\n\"]+)", re.IGNORECASE)
# the zones a CLI names by abbreviation; an IANA name ("(Europe/Rome)") is looked up
_ABBREVIATIONS = {
    "UTC": 0.0, "GMT": 0.0, "Z": 0.0, "PST": -8.0, "PDT": -7.0, "MST": -7.0, "MDT": -6.0,
    "CST": -6.0, "CDT": -5.0, "EST": -5.0, "EDT": -4.0, "BST": 1.0, "CET": 1.0,
    "CEST": 2.0, "EET": 2.0, "EEST": 3.0, "IST": 5.5, "JST": 9.0, "KST": 9.0,
    "AEST": 10.0, "AEDT": 11.0,
}  # fmt: skip
_ZONE = (
    r"(?:\s*\(?\s*("
    + "|".join(sorted(_ABBREVIATIONS, key=len, reverse=True))
    + r"|[A-Za-z]+/[A-Za-z_]+(?:/[A-Za-z_]+)?)\b\s*\)?)?"
)
# a date and time, then an offset ("+02:00") and/or a zone it names ("Z", "PST",
# "Europe/Rome", "(Europe/Rome)", RFC 9557's "[Europe/Rome]"; capitalised, so that
# "and/or" is no zone)
_ISO = later(
    r"(\d{4}-\d{2}-\d{2})[T ](\d{1,2}):(\d{2})(?::(\d{2})(?:\.\d+)?)?"
    r"(?:\s*([+-]\d{2}:?\d{2}))?"
    r"(?:\s*[(\[]?\s*("
    + "|".join(sorted(_ABBREVIATIONS, key=len, reverse=True))
    + r"|(?-i:[A-Z][A-Za-z]+/[A-Z][A-Za-z_]+(?:/[A-Z][A-Za-z_]+)?))\b\s*[)\]]?)?",
    re.IGNORECASE,
)
_CLOCK = later(
    r"(?:\breset(?:s|ting)?\b|\bagain at\b)[^\n\d]{0,20}?(?:at\s+)?"
    r"(\d{1,2})(?::(\d{2}))?\s*(am|pm)?(?![\d/-])" + _ZONE,
    re.IGNORECASE,
)
_MONTHS = ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec")
_DATED = later(
    r"(?:\breset(?:s|ting)?\b|\bagain at\b)\s+(?:at\s+|on\s+)?"
    rf"({'|'.join(_MONTHS)})[a-z]*\.?\s+(\d{{1,2}})(?:st|nd|rd|th)?,?\s*(?:(\d{{4}}),?\s*)?"
    r"(?:at\s+)?(\d{1,2})(?::(\d{2}))?\s*(am|pm)?" + _ZONE,
    re.IGNORECASE,
)
_AMOUNT = r"\d+(?:\.\d+)?\s*(?:days?|d|hours?|hrs?|h|minutes?|mins?|m|seconds?|secs?|s)\b"
_IN = later(
    rf"(?:try again|retry|resets?|available again)\s+in\s+({_AMOUNT}"
    rf"(?:(?:\s*,\s*|\s+and\s+|\s+){_AMOUNT})*)",
    re.IGNORECASE,
)
_EPOCH = later(r"reset[\w-]*\"?\s*[:=]\s*\"?(\d{10})\b", re.IGNORECASE)
_UNIT = {"d": 86400, "h": 3600, "m": 60, "s": 1}


def usage_wall(
    *, exit_code: int | None, output: str, now: datetime, local: tzinfo = UTC
) -> datetime | None:
    """When a usage or rate limit resets, when a failed run's error says so; else None."""
    if exit_code == 0 or not _WALL().search(output):
        return None
    reset = reset_time(output, now, local=local)
    if reset is None or reset <= now or reset - now > HORIZON:
        return None
    return reset


def reset_time(output: str, now: datetime, *, local: tzinfo = UTC) -> datetime | None:
    """The reset time the output names, the latest when it names several (the wall that
    lasts longest is the one in the way); None when it names none. A time is read in the
    zone it names ("5pm (Europe/Rome)", "8:19 PM PST", "+02:00"), in ``local`` when it
    names none (a CLI prints the clock of the machine it runs on)."""
    found = [
        t
        for t in (
            _retry_after(output, now),
            _iso(output, local),
            _relative(output, now),
            _epoch(output),
            _clock(output, now, local),
            _dated(output, now, local),
        )
        if t is not None
    ]
    return max(found) if found else None


def _retry_after(output: str, now: datetime) -> datetime | None:
    times = []
    for match in _RETRY_AFTER().finditer(output):
        value = match.group(1).strip()
        if value.isdigit():
            times.append(now + timedelta(seconds=int(value)))
            continue
        from email.utils import parsedate_to_datetime  # when a date is said (email's stack)

        try:
            when = parsedate_to_datetime(value)
        except (TypeError, ValueError):
            continue
        times.append(when if when.tzinfo else when.replace(tzinfo=UTC))
    return max(times) if times else None


def _iso(output: str, local: tzinfo) -> datetime | None:
    times = []
    for line in output.splitlines():
        if not re.search(r"reset|retry|again|until|limit", line, re.IGNORECASE):
            continue
        for m in _ISO().finditer(line):
            day, hour, minute, second, offset, name = m.groups()
            try:
                base = datetime.fromisoformat(f"{day}T{int(hour):02d}:{minute}:{second or '00'}")
            except ValueError:
                continue
            # an offset says the instant; else the zone it names, never local in its place
            zone = _offset(offset) if offset else named_zone(name, local)
            if zone is not None:
                times.append(base.replace(tzinfo=zone))
    return max(times) if times else None


def _offset(text: str) -> tzinfo:
    """A numeric offset, "+02:00" or "-0500"."""
    sign = 1 if text[0] == "+" else -1
    digits = text[1:].replace(":", "")
    return timezone(sign * timedelta(hours=int(digits[:2]), minutes=int(digits[2:])))


def _relative(output: str, now: datetime) -> datetime | None:
    times = []
    for match in _IN().finditer(output):
        total = 0.0
        for amount, unit in re.findall(r"(\d+(?:\.\d+)?)\s*([dhms])", match.group(1).lower()):
            total += float(amount) * _UNIT[unit]
        if total:
            times.append(now + timedelta(seconds=total))
    return max(times) if times else None


def _epoch(output: str) -> datetime | None:
    times = [datetime.fromtimestamp(int(m.group(1)), UTC) for m in _EPOCH().finditer(output)]
    return max(times) if times else None


def named_zone(text: str | None, local: tzinfo) -> tzinfo | None:
    """The zone a reset time names (``local`` when it names none); None when it names one
    relay does not know, so that no time is guessed."""
    if text is None:
        return local
    offset = _ABBREVIATIONS.get(text.upper())
    if offset is not None:
        return UTC if offset == 0 else timezone(timedelta(hours=offset))
    from zoneinfo import ZoneInfo, ZoneInfoNotFoundError  # when a zone is named (the tz data)

    try:
        return ZoneInfo(text)
    except (ZoneInfoNotFoundError, ValueError):
        return None


def _hour(hour: str, minute: str | None, half: str | None) -> tuple[int, int] | None:
    h, mins = int(hour), int(minute or 0)
    if half:
        if not 1 <= h <= 12:
            return None
        h = h % 12 + (12 if half.lower() == "pm" else 0)
    elif minute is None:
        return None  # a bare number ("resets 5") is no time
    if h > 23 or mins > 59:
        return None
    return h, mins


def _clock(output: str, now: datetime, local: tzinfo) -> datetime | None:
    """ "resets at 5pm" / "resets 17:30 (UTC)" / "resets 4:50am (Europe/Rome)": the next
    such time after ``now``, in the zone it names."""
    times = []
    for match in _CLOCK().finditer(output):
        hour, minute, half, zone_name = match.groups()
        at_hour = _hour(hour, minute, half)
        zone = named_zone(zone_name, local)
        if at_hour is None or zone is None:
            continue
        there = now.astimezone(zone)
        at = there.replace(hour=at_hour[0], minute=at_hour[1], second=0, microsecond=0)
        if at <= now:
            at = (at.replace(tzinfo=None) + timedelta(days=1)).replace(tzinfo=zone)
        times.append(at.astimezone(UTC))
    return max(times) if times else None


def _dated(output: str, now: datetime, local: tzinfo) -> datetime | None:
    """ "try again at Jul 5th, 2026 8:19 PM" / "resets Feb 7, 11am (Asia/Seoul)": that day
    and time in the zone it names (this year, or the next when that day is past)."""
    times = []
    for match in _DATED().finditer(output):
        month, day, year, hour, minute, half, zone_name = match.groups()
        at_hour = _hour(hour, minute, half or None) if (half or minute) else None
        zone = named_zone(zone_name, local)
        if at_hour is None or zone is None:
            continue
        number = _MONTHS.index(month.lower()[:3]) + 1
        there = now.astimezone(zone)
        try:
            at = datetime(int(year or there.year), number, int(day), *at_hour, tzinfo=zone)
            if year is None and at <= now:
                at = at.replace(year=at.year + 1)
        except ValueError:
            continue
        times.append(at.astimezone(UTC))
    return max(times) if times else None


def resume_time(reset: datetime) -> datetime:
    """When the resume fires: a minute past the reset, on the next whole minute (every
    scheduler counts in minutes), in UTC."""
    at = (reset + MARGIN).astimezone(UTC)
    if at.second or at.microsecond:
        at = at.replace(second=0, microsecond=0) + timedelta(minutes=1)
    return at


def resume_args(args: Sequence[str]) -> tuple[str, ...]:
    """`relay loop run`'s arguments for the resume: the same ones, with ``--resume``."""
    kept = tuple(a for a in args if a != RESUME_FLAG)
    return (*kept, RESUME_FLAG)


@dataclass(frozen=True)
class PendingResume:
    """A registered one-shot resume: which entry, where, when, and why."""

    label: str
    scheduler: str
    at: str  # ISO 8601, UTC
    argv: tuple[str, ...]
    reason: str
    registered: str


def render_record(record: PendingResume) -> str:
    """The record's file text (JSON)."""
    data = asdict(record)
    data["argv"] = list(record.argv)
    return json.dumps(data, indent=2) + "\n"


def parse_record(text: str) -> PendingResume | None:
    """The record, or None when the text is not one."""
    try:
        data = json.loads(text)
        return PendingResume(
            label=str(data["label"]),
            scheduler=str(data["scheduler"]),
            at=str(data["at"]),
            argv=tuple(str(a) for a in data["argv"]),
            reason=str(data["reason"]),
            registered=str(data["registered"]),
        )
    except (ValueError, KeyError, TypeError):
        return None


def record_problems(
    record: PendingResume, *, present: bool, detail: str, now: datetime
) -> list[str]:
    """What is wrong with a pending resume: its entry missing from the scheduler, or its
    time long past (it should have fired and removed itself)."""
    problems = []
    try:
        at = datetime.fromisoformat(record.at)
    except ValueError:
        return [f"the pending resume's time {record.at!r} is unreadable; remove it"]
    if not present:
        problems.append(f"the resume for {record.at} is not registered ({detail})")
    if now - at > timedelta(minutes=30):
        problems.append(f"the resume for {record.at} is overdue; it did not fire or not finish")
    return problems
