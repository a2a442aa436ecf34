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


# --- one function per figure: tables in, a Figure out; notebooks call them and `save` -------------------


def _labelled(ax, rows, x: str, y: str, real: set[str]) -> None:
    """Scatter the judges; judges at the same point share one label (real judges in red, baselines grey)."""
    groups: dict[tuple[float, float], list[str]] = {}
    for r in rows.itertuples():
        groups.setdefault((round(getattr(r, x), 3), round(getattr(r, y), 3)), []).append(r.judge)
    for (px, py), names in groups.items():
        is_real = any(n in real for n in names)
        ax.scatter(
            px, py, marker="o" if is_real else "x", s=60 if is_real else 30, c="tab:red" if is_real else "0.4", zorder=3
        )
        ax.annotate(
            ", ".join(names),
            (px, py),
            textcoords="offset points",
            xytext=(5, 5 if is_real else -11),
            fontsize=8 if is_real else 7,
            color="k" if is_real else "0.4",
        )


def exam_figure(planted_all, planted_degenerate, pairwise_table, pairwise_judges, tie_min: float, accuracy_min: float):
    """05: the planted-defect exam (recall on target, false positives) and the pairwise exam (tie rate on
    identical pairs, balanced accuracy on known pairs), real judges beside the degenerate ones."""
    import pandas as pd

    fig, axes = plt.subplots(1, 3, figsize=(14, 4))
    both = pd.concat([planted_all, planted_degenerate], ignore_index=True)
    real = set(planted_all.judge)
    _labelled(axes[0], both, "verdict_recall", "on_target_recall", real)
    axes[0].plot([0, 1], [0, 1], ":", c="0.6")
    axes[0].set(
        xlim=(-0.05, 1.15),
        ylim=(-0.05, 1.1),
        xlabel="verdict-label recall",
        ylabel="on-target recall",
        title="planted defects: caught vs caught on target",
    )
    _labelled(axes[1], both, "verdict_recall", "false_positive_rate", real)
    axes[1].set(
        xlim=(-0.05, 1.15),
        ylim=(-0.05, 1.1),
        xlabel="verdict-label recall",
        ylabel="false-positive rate on clean controls",
        title="planted defects: caught vs clean answers failed",
    )
    ax = axes[2]
    ax.axvspan(
        tie_min, 1.05, ymin=(accuracy_min + 0.05) / 1.15, ymax=1, color="tab:green", alpha=0.15,
        label="qualifies (pre-registered)",
    )  # fmt: skip
    _labelled(ax, pairwise_table, "tie_rate", "balanced_accuracy", set(pairwise_judges))
    ax.set(
        xlim=(-0.05, 1.15),
        ylim=(-0.05, 1.1),
        xlabel="tie rate on identical pairs",
        ylabel="order-balanced accuracy on known pairs",
        title="pairwise: honest and discriminating?",
    )
    ax.legend(loc="lower left", fontsize=7)
    fig.tight_layout()
    return fig
