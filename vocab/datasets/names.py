"""Names: a rater's, one rule everywhere a name enters (the form, the packet, `vocab ratings import`, the labels a
source already holds; the rule for a run's machine raters is :func:`vocab.raters.packet.check_rater_name`'s), and a
system's or a judge's, which name a cell (:func:`check_cell_names`)."""

from __future__ import annotations

import re
import unicodedata
from typing import Any

from vocab.datasets.errors import CalibrationError
from vocab.datasets.items import CELL_JOIN

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


MAX_NAME = 200  # characters in a system's or a judge's name


def unprintable(name: str) -> str | None:
    """The first character of ``name`` that is a control or format character (NUL, a right-to-left override), else
    None: such a name prints as something else in every table, figure and file name."""
    return next((c for c in name if unicodedata.category(c) in ("Cc", "Cf")), None)


def check_cell_names(rows: list[dict[str, Any]]) -> None:
    """Every row's system and judge usable in a cell's name, else one line naming the first that is not: at most
    :data:`MAX_NAME` characters, no ``__`` in it and no ``_`` at either end, no control or format character."""
    for r in rows:
        for role in ("system", "judge"):
            name = str(r.get(role, ""))
            item = str(r.get("id", "?"))[:40]
            if len(name) > MAX_NAME:
                raise CalibrationError(
                    f"{role} of item {item!r} is {len(name):,} characters long; a name names a cell in every table "
                    f"and figure: at most {MAX_NAME} (rename it)"
                )
            shown = name if len(name) <= 60 else name[:57] + "..."
            if CELL_JOIN in name or name.startswith("_") or name.endswith("_"):
                raise CalibrationError(
                    f"{role} {shown!r} (item {item!r}) holds {CELL_JOIN!r} or begins or ends with '_': a cell's name "
                    f"joins a system to its judge with {CELL_JOIN!r}, and two pairs would share a cell; rename it"
                )
            bad = unprintable(name)
            if bad is not None:
                raise CalibrationError(
                    f"{role} {shown!r} (item {item!r}) holds the control character U+{ord(bad):04X}, which prints "
                    "as something else in tables, figures and file names; rename it"
                )
