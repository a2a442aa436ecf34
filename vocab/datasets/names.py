"""Rater names: one rule everywhere a name enters (the form, the packet, `vocab ratings import`, the labels a
source already holds). The rule for a run's machine raters is :func:`vocab.raters.packet.check_rater_name`'s."""

from __future__ import annotations

import re

from vocab.datasets.errors import CalibrationError

NAME = re.compile(r"[A-Za-z][A-Za-z0-9_-]{0,39}")  # matched whole (fullmatch: no trailing newline)
STAGE = re.compile(r"(.+)-stage([1-9][0-9]*)")  # a later stage's packet folder, packets/NAME-stageK/ (fullmatch)
PEOPLE = "people"  # the pooled rater of every person's labels (vocab.raters.raters): computed, never a file


def check_name(name: str) -> str:
    """A letter, then letters, digits, '-' or '_', at most 40; not a later stage's packet (``NAME-stageK``), nor the
    pooled rater's (:data:`PEOPLE`). CalibrationError naming the problem otherwise."""
    if not isinstance(name, str) or not NAME.fullmatch(name):
        raise CalibrationError(
            f"rater name {name!r}: use a letter, then letters, digits, '-' or '_' (at most 40), e.g. jane-doe"
        )
    if STAGE.fullmatch(name):
        raise CalibrationError(
            f"rater name {name!r}: a name ending -stageK names a later stage's packet; choose another"
        )
    if name.lower() == PEOPLE:
        raise CalibrationError(f"rater name {name!r} is the pooled rater of everyone's labels; choose another")
    return name
