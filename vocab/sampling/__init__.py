"""The stratified blind sample of a dataset's items (``sample``): rows drawn per cell from the judge's PASSED and
FAILED piles, each given a blind id, written as the sheet the raters see and the key that stays behind, extended in
stages (a pilot's second stage), and which answers quote a grade (``quotes``).

Below it :mod:`vocab.datasets`; above it :mod:`vocab.raters` (who rates the sheet)."""

from vocab.sampling.sample import (
    KEY_COLUMNS,
    SHEET_COLUMNS,
    Sample,
    allocate,
    draw,
    draw_sample,
    pile_sizes,
    read_key,
    read_sheet,
    write_sample,
)

__all__ = [
    "KEY_COLUMNS",
    "SHEET_COLUMNS",
    "Sample",
    "allocate",
    "draw",
    "draw_sample",
    "pile_sizes",
    "read_key",
    "read_sheet",
    "write_sample",
]
