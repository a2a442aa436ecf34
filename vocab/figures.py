"""One helper that writes every figure: PNG and PDF into ``figures/``, byte-identical on rerun."""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

# Fixed metadata: no creation date, no software version, so a rerun writes the same bytes.
_PNG_META = {"Software": None}
_PDF_META = {"Creator": None, "Producer": None, "CreationDate": None}


def style() -> None:
    plt.rcParams.update(
        {
            "figure.dpi": 100,
            "savefig.dpi": 120,
            "font.size": 9,
            "axes.grid": True,
            "grid.alpha": 0.3,
            "svg.hashsalt": "vocab",
            "pdf.fonttype": 42,
        }
    )


def save(fig, name: str, out_dir: str | Path = "../figures") -> list[Path]:
    """Write ``<out_dir>/<name>.png`` and ``.pdf``, close the figure, return the paths."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    png, pdf = out / f"{name}.png", out / f"{name}.pdf"
    fig.savefig(png, metadata=_PNG_META, bbox_inches="tight")
    fig.savefig(pdf, metadata=_PDF_META, bbox_inches="tight")
    plt.close(fig)
    return [png, pdf]
