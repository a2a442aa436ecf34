"""The one base of every error that means bad input — a config, level range, file, rating sheet, registry entry,
run directory or argument — as opposed to a bug or an infrastructure fault. The command line turns it into one
line on stderr and exit code 2; each module raises its own subclass, whose message says what to do."""


class InputError(ValueError):
    """Bad input; the message names the problem."""
