"""One error tree for relay, with stable codes and exit statuses mapped in one place.

Local misuse (bad flags, a missing token) is the user's to fix; remote misbehaviour (a hub
that is down, a malformed comment) is the other side's. Both carry a one-line message that
says what is wrong and what to do.
"""

from __future__ import annotations


class RelayError(Exception):
    """Base of every error relay raises on purpose; ``str(err)`` is the one-line message."""

    code: str = "relay-error"
    exit_status: int = 1

    def __init__(
        self, message: str, *, hint: str | None = None, typed: tuple[str, ...] = ()
    ) -> None:
        self.message = message
        self.hint = hint
        # words of the person's own command line the message quotes (an address, a port):
        # shown as typed, since masking what she just typed only hides which one is wrong
        self.typed = typed
        super().__init__(message if hint is None else f"{message} — {hint}")


class LocalUsageError(RelayError):
    """The caller asked for something that cannot be done as asked."""

    code = "usage"
    exit_status = 2


class ConfigError(LocalUsageError):
    """Local configuration (token, clone, master section) is missing or wrong."""

    code = "config"


class SpineFileError(ConfigError):
    """A file of the loop's spine (docs/loop/) cannot be read; the message names the file
    and the line, so a person can fix a hand edit."""

    code = "spine-file"

    def __init__(self, name: str, line: int, problem: str) -> None:
        self.name = name
        self.line = line
        super().__init__(f"{name}:{line}: {problem}", hint=f"fix {name} by hand and run again")


class ContractError(ConfigError):
    """The run contract (docs/loop/CONTRACT.md) is not fit to run under; names the field."""

    code = "contract"


class RemoteProtocolError(RelayError):
    """The other side (hub, GitHub, a comment) sent something relay cannot accept."""

    code = "remote-protocol"
    exit_status = 3


class RemoteUnavailable(RelayError):
    """The API or the git remote could not be reached or kept failing."""

    code = "remote-unavailable"
    exit_status = 4


class Conflict(RelayError):
    """Someone else acted first (a claim ref exists, a push was rejected too often)."""

    code = "conflict"
    exit_status = 5


class Interrupted(RelayError):
    """A person stopped a command that was only waiting (Ctrl-C); nothing was changed."""

    code = "interrupted"
    exit_status = 130
