"""How result objects show themselves: a short text (at most ``MAX_LINES`` lines) and an HTML summary (a headline
and a small table), as xarray's and scikit-learn's objects do in a notebook. Pure formatting: no files, no
statistics."""

from __future__ import annotations

import html

import pandas as pd

MAX_LINES = 20


def text(lines: list[str], more: str = "") -> str:
    """``lines`` cut to :data:`MAX_LINES`, the cut said in the last line (``more``: where to see them all)."""
    if len(lines) <= MAX_LINES:
        return "\n".join(lines)
    kept = lines[: MAX_LINES - 1]
    return "\n".join([*kept, f"… {len(lines) - len(kept)} more lines{more}"])


def summary_html(title: str, lines: list[str], table: pd.DataFrame | None = None, max_rows: int = 12) -> str:
    """A bold headline, a few lines, then ``table`` (at most ``max_rows`` rows shown)."""
    body = "".join(f"<br>{html.escape(x)}" for x in lines[: MAX_LINES - 1])
    shown = "" if table is None or table.empty else table.to_html(max_rows=max_rows, border=0, na_rep="–")
    return f"<div><b>{html.escape(title)}</b>{body}{shown}</div>"
