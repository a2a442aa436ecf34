"""An imported dataset's ``dataset.json`` checked before any command trusts it (issue 75, items 6 and 7): each field
the commands read has its type and range (:func:`check_meta`), and the pile counts it keeps are those of the items
it describes, recounted from the store in one scan of two columns (:func:`check_counts`). A hand-edited file (a
count of NaN, -5 or "7", ``items.cells`` a string, ``visible`` a number), or an items file swapped for another
dataset's with its SHA-256 updated, is one line naming the file and the field, never a traceback or a wrong answer.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from vocab.datasets.errors import CalibrationError

COUNTS = ("passed", "failed", "unscored", "groups", "failed_groups")  # each cell's, whole numbers from 0
CLASSES = ("PASSED", "FAILED", "UNSCORED")


def _count(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool) and v >= 0


def check_meta(path: Path, meta: dict[str, Any]) -> None:
    """The fields of ``dataset.json`` (at ``path``) the commands read, each of its type and in its range."""

    def bad(field: str, what: str) -> CalibrationError:
        return CalibrationError(f"{path}: {field} {what}: not a dataset description vocab wrote; import again")

    if not isinstance(meta.get("name"), str):
        raise bad("name", "is not text")
    if not isinstance(meta.get("rubric"), dict):
        raise bad("rubric", "is not an object")
    visible = meta.get("visible")
    if not isinstance(visible, list) or not all(isinstance(f, str) for f in visible):
        raise bad("visible", "is not a list of field names")
    if not isinstance(meta.get("source"), dict):
        raise bad("source", "is not an object")
    held = meta.get("items")
    if held is None:
        return  # a dataset written before 2026-12 (judgments.jsonl): its items are summarized when read
    if "counts" in meta:
        counts = meta["counts"]
        if not isinstance(counts, dict) or not all(_count(counts.get(c)) for c in CLASSES):
            raise bad("counts", "are not whole numbers from 0 for PASSED, FAILED and UNSCORED")
    if not isinstance(held, dict):
        raise bad("items", "is not an object")
    for name in ("sha256", "digest"):
        if not isinstance(held.get(name), str):
            raise bad(f"items.{name}", "is not text")
    cells = held.get("cells")
    if not isinstance(cells, dict) or not cells:
        raise bad("items.cells", "is not an object of cells")
    for cell, c in cells.items():
        if not isinstance(c, dict):
            raise bad(f"items.cells[{cell!r}]", "is not an object")
        for name in COUNTS:
            if not _count(c.get(name)):
                raise bad(f"items.cells[{cell!r}].{name}", f"is {c.get(name)!r}, not a whole number from 0")
        deff = c.get("deff")
        if isinstance(deff, bool) or not isinstance(deff, (int, float)) or not math.isfinite(deff) or deff < 0:
            raise bad(f"items.cells[{cell!r}].deff", f"is {deff!r}, not a design effect")
        if (
            c["failed_groups"] > c["groups"]
            or c["groups"] > c["passed"] + c["failed"]
            or (c["failed_groups"] > c["failed"])
        ):
            raise bad(f"items.cells[{cell!r}]", "counts more groups than its items hold")
    if "counts" in meta:
        summed = {k: sum(c[k.lower()] for c in cells.values()) for k in CLASSES}
        if summed != {k: meta["counts"][k] for k in CLASSES}:
            raise bad("counts", f"are {meta['counts']}, not the sum of its cells' ({summed})")
    reasons = held.get("reasons")
    if reasons is not None and (not isinstance(reasons, dict) or not all(_count(v) for v in reasons.values())):
        raise bad("items.reasons", "are not whole numbers from 0")


def check_counts(path: Path, meta: dict[str, Any], store) -> None:
    """The pile counts ``dataset.json`` (at ``path``) keeps, against the items in ``store`` (an
    :class:`~vocab.datasets.items.Items`), recounted in one scan of their cell and verdict: a hand-edited count, or
    an items file swapped with its SHA-256 updated, is one line."""
    got: dict[str, dict[str, int]] = {}
    for cell, verdict, n in store.con.execute(
        f"SELECT cell, verdict, count(*) FROM {store.src} GROUP BY ALL"
    ).fetchall():
        got.setdefault(cell, {k: 0 for k in ("passed", "failed", "unscored")})[str(verdict).lower()] = int(n)
    kept = {cell: {k: c[k] for k in ("passed", "failed", "unscored")} for cell, c in meta["items"]["cells"].items()}
    kept = {cell: c for cell, c in kept.items() if any(c.values())}
    if got != kept:
        cell = sorted(set(got) ^ set(kept)) or sorted(c for c in got if got[c] != kept.get(c))
        raise CalibrationError(
            f"{path}: its pile counts are not those of the items it describes ({cell[0]!r}: kept "
            f"{kept.get(cell[0])}, counted {got.get(cell[0])}): a hand-edited file, or another dataset's items; "
            "import again into a new directory"
        )
