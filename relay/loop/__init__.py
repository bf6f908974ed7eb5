"""The loop around the relay, as pure functions: the spine files under ``docs/loop/`` read
and written, failures sorted into categories, checkers' verdicts read as untrusted data,
and the ratchet's next move decided from what was observed.

Ground rules: nothing here runs a command, reads a clock or touches a disk; the driver in
``relay.ratchet`` observes, calls these functions and carries out what they return. Every
spine file is markdown for people first; a file relay cannot read raises
:class:`relay.errors.SpineFileError` naming the file and the line.
"""
