"""The calibration's error: a typed InputError the CLI prints as one line with exit code 2."""

from vocab.errors import InputError


class CalibrationError(InputError):
    """A sample that would overwrite another, or a ratings file that does not fit its sheet."""
