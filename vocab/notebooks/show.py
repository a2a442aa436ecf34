"""A figure shown in the notebook, saved beside it, and the numbers it draws as text a regression check compares.

nbval skips images, so a notebook that only saved its figures could redraw them with every check green.
:func:`show` saves the figure (PNG and PDF through :func:`vocab.figures.save`) and returns a :class:`Shown`: the
notebook displays the saved PNG inline (``_repr_png_``) and, as text nbval compares, every panel's drawn numbers
(:func:`drawn`: the coordinates of its lines, markers, error bars and bars, counted and summed). A changed plotted
number changes that text; ``tests/unit/test_committed_figures.py`` compares the committed PNGs themselves.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
from matplotlib.collections import Collection
from matplotlib.lines import Line2D
from matplotlib.patches import Rectangle

from vocab import figures


def _points(artist) -> np.ndarray:
    """The (x, y) data coordinates an artist draws (empty when it draws none)."""
    if isinstance(artist, Line2D):
        xy = np.asarray(artist.get_xydata(), dtype=float)
    elif isinstance(artist, Collection):
        segments = artist.get_segments() if hasattr(artist, "get_segments") else []
        if len(segments):
            xy = np.concatenate([np.asarray(s, dtype=float).reshape(-1, 2) for s in segments])
        else:
            xy = np.asarray(artist.get_offsets(), dtype=float)
    elif isinstance(artist, Rectangle):
        xy = np.array([[artist.get_x(), artist.get_height()]], dtype=float)
    else:
        return np.empty((0, 2))
    xy = np.asarray(xy, dtype=float).reshape(-1, 2)
    return xy[np.isfinite(xy).all(axis=1)]


def drawn(fig) -> pd.DataFrame:
    """One row a panel: its title (or y label), how many artists and points it draws, and their coordinates'
    sums, minimum and maximum of y: a changed plotted number changes the row."""
    rows = []
    for i, ax in enumerate(fig.axes):
        artists = [*ax.lines, *ax.collections, *(p for p in ax.patches if isinstance(p, Rectangle))]
        pts = [p for p in (_points(a) for a in artists) if len(p)]
        xy = np.concatenate(pts) if pts else np.empty((0, 2))
        label = ax.get_title() or ax.get_ylabel() or f"panel {i + 1}"
        rows.append(
            {
                "panel": label[:40],
                "artists": len(pts),
                "points": len(xy),
                "x_sum": round(float(xy[:, 0].sum()), 4) if len(xy) else np.nan,
                "y_sum": round(float(xy[:, 1].sum()), 4) if len(xy) else np.nan,
                "y_min": round(float(xy[:, 1].min()), 4) if len(xy) else np.nan,
                "y_max": round(float(xy[:, 1].max()), 4) if len(xy) else np.nan,
            }
        )
    return pd.DataFrame(rows)


@dataclass(frozen=True)
class Shown:
    """A saved figure: displayed inline as its PNG; its text is where it went and the numbers it draws."""

    name: str
    paths: tuple[Path, ...]
    numbers: pd.DataFrame

    def _repr_png_(self) -> bytes:
        return self.paths[0].read_bytes()

    def _ipython_display_(self) -> None:
        """Two outputs: the PNG (with where it went as its text), then the numbers it draws as a table that
        JupyterLab renders (HTML) and nbval compares (HTML and text)."""
        from IPython.display import publish_display_data  # deferred: IPython only when a notebook displays it

        head = f"{self.name}: {', '.join(p.name for p in self.paths)} in {self.paths[0].parent}"
        publish_display_data({"image/png": self._repr_png_(), "text/plain": head})
        table = self.numbers.head(15)
        more = f"… and {len(self.numbers) - 15} more panels" if len(self.numbers) > 15 else ""
        caption = f"<p>the numbers <code>{self.name}</code> draws, a row a panel{'; ' + more if more else ''}</p>"
        publish_display_data(
            {
                "text/html": caption + table.to_html(index=False, na_rep="–"),
                "text/plain": "\n".join(x for x in (table.to_string(index=False), more) if x),
            }
        )

    def __repr__(self) -> str:
        head = f"{self.name}: {', '.join(p.name for p in self.paths)} in {self.paths[0].parent}"
        table = self.numbers.head(15).to_string(index=False)
        more = f"\n… and {len(self.numbers) - 15} more panels" if len(self.numbers) > 15 else ""
        return f"{head}\n{table}{more}"


def show(fig, name: str, out_dir: str | Path) -> Shown:
    """Save ``fig`` as ``<out_dir>/<name>.png`` and ``.pdf`` (closing it) and return what the notebook displays."""
    numbers = drawn(fig)
    return Shown(name, tuple(figures.save(fig, name, out_dir)), numbers)
