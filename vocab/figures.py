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


def coverage_methods_figure(grid, methods):
    """08: coverage of the nominal 95 % interval per method (columns) and pile size (rows); within a panel,
    the critic (q1 = q0, and the levels' spread where the grid varies it) against the true theta."""
    import seaborn as sns

    spreads = "spread" in grid and grid.spread.nunique() > 1  # the heterogeneity axis, when the grid has one
    grid = grid.assign(
        critic=[f"q1=q0={a:g}" + (f", spread {s:g}" if spreads else "") for a, s in
                zip(grid.q1, grid.get("spread", grid.q1), strict=True)]
    )  # fmt: skip
    ns = sorted(grid.piles.unique())
    fig, axes = plt.subplots(len(ns), len(methods), figsize=(3.6 * len(methods), 2.6 * len(ns)), squeeze=False)
    for i, n in enumerate(ns):
        for j, m in enumerate(methods):
            g = grid[(grid.piles == n) & (grid.method == m)]
            ax = axes[i][j]
            ax.grid(False)
            sns.heatmap(
                g.pivot_table(index="critic", columns="theta", values="coverage"), ax=ax, vmin=0.6, vmax=1.0,
                cmap="RdYlGn", annot=True, fmt=".2f", cbar=False,
            )  # fmt: skip
            ax.set(title=f"{m}, piles of {n}", xlabel="true theta" if i == len(ns) - 1 else "", ylabel="")
    fig.tight_layout()
    return fig


def within_by_regime_figure(table):
    """08: per regime (pile size, level heterogeneity), the share of full-grid points where each method's coverage lies
    within 95 ± 2 % (``coverage.within_by_regime``)."""
    fig, ax = plt.subplots(figsize=(7, 3))
    table.plot.bar(ax=ax, rot=0)
    ax.set(
        ylabel="share of grid points within 95 ± 2 %",
        xlabel="",
        ylim=(0, 1),
        title="full grid: where each interval is honest",
    )
    ax.legend(fontsize=7)
    return fig


# --- 06: the paper's calibration figures, from 03's and 04's tables ------------------------------------


def _variant_palette(variants):
    import seaborn as sns

    return dict(zip(variants, sns.color_palette("colorblind", len(variants)), strict=True))


def raw_vs_corrected_figure(corr):
    """06: per cell, the critic's raw pass rate beside each rater variant's corrected theta with its interval."""
    import numpy as np

    cells, variants = sorted(corr.cell.unique()), sorted(corr.rater.unique())
    palette = _variant_palette(variants)
    fig, ax = plt.subplots(figsize=(6.5, 4))
    width = 0.8 / (len(variants) + 1)
    x = np.arange(len(cells))
    raw = corr.drop_duplicates("cell").set_index("cell").loc[cells, "p"]
    ax.bar(x - 0.4 + width / 2, raw, width, color="0.6", label="raw p (critic)")
    for i, v in enumerate(variants):
        g = corr[corr.rater == v].set_index("cell").reindex(cells)
        xs = x - 0.4 + width * (i + 1.5)
        ax.bar(xs, g.theta, width, color=palette[v], label=f"theta ({v})")
        yerr = [(g.theta - g.ci_low).clip(lower=0), (g.ci_high - g.theta).clip(lower=0)]
        ax.errorbar(xs, g.theta, yerr=yerr, fmt="none", ecolor="k", lw=0.8, capsize=2)
    ax.set_xticks(x, cells, rotation=15)
    ax.set(ylim=(0, 1), ylabel="pass rate", title="critic's raw pass rate vs bias-corrected rate (95% interval)")
    ax.legend(fontsize=7, ncol=2)
    return fig


def sensitivity_specificity_figure(corr):
    """06: the critic's sensitivity q1 and specificity q0 per cell and rater variant, with intervals."""
    import numpy as np

    cells, variants = sorted(corr.cell.unique()), sorted(corr.rater.unique())
    palette = _variant_palette(variants)
    x = np.arange(len(cells))
    fig, axes = plt.subplots(1, 2, figsize=(9, 3.5), sharey=True)
    panels = [("q1", "q1_low", "q1_high", "sensitivity q1"), ("q0", "q0_low", "q0_high", "specificity q0")]
    for ax, (col, lo, hi, title) in zip(axes, panels, strict=True):
        width = 0.8 / len(variants)
        for i, v in enumerate(variants):
            g = corr[corr.rater == v].set_index("cell").reindex(cells)
            xs = x - 0.4 + width * (i + 0.5)
            ax.bar(xs, g[col], width, color=palette[v], label=v)
            ok = g[col].notna()
            yerr = [(g[col] - g[lo]).clip(lower=0)[ok], (g[hi] - g[col]).clip(lower=0)[ok]]
            ax.errorbar(xs[ok], g[col][ok], yerr=yerr, fmt="none", ecolor="k", lw=0.8, capsize=2)
        ax.set_xticks(x, cells, rotation=15)
        ax.set(ylim=(0, 1.05), title=title)
    axes[0].legend(fontsize=7)
    return fig


CHECK_KIND_COLORS = {"decidable": "tab:green", "mechanical": "tab:blue", "judgment": "tab:orange"}


def check_agreement_figure(checks):
    """06: per rubric check, the share of rows all raters agree on (04's checks table), coloured by its kind."""
    fig, ax = plt.subplots(figsize=(6.5, 3.2))
    share = checks.agree / checks.n
    ax.bar(checks.check.astype(str), share, color=[CHECK_KIND_COLORS[k] for k in checks.kind])
    for k, c in CHECK_KIND_COLORS.items():
        ax.bar([], [], color=c, label=k)
    ax.set(
        ylim=(0, 1),
        xlabel="rubric check",
        ylabel="share of rows all raters agree on",
        title=f"per-check agreement ({checks.n.iloc[0]} rows)",
    )
    ax.legend(fontsize=7)
    return fig


def rank_stability_figure(corr, ranks):
    """06: each cell's rank by raw p and by each rater variant's corrected theta (``calibration.rank_table``)."""
    import seaborn as sns

    cells, variants = sorted(corr.cell.unique()), sorted(corr.rater.unique())
    raw_rank = corr.drop_duplicates("cell").sort_values(["p", "cell"], ascending=[False, True]).cell.tolist()
    columns = ["raw p", *variants]
    fig, ax = plt.subplots(figsize=(6.5, 3.2))
    for cell, color in zip(cells, sns.color_palette("tab10", len(cells)), strict=True):
        ys = [raw_rank.index(cell) + 1]
        ys += [int(ranks[(ranks.rater == v) & (ranks.cell == cell)]["rank"].iloc[0]) for v in variants]
        ax.plot(range(len(columns)), ys, "o-", color=color, label=cell)
    ax.set_xticks(range(len(columns)), columns, rotation=15)
    ax.set(ylabel="rank", title="each cell's rank, raw and corrected")
    ax.invert_yaxis()
    ax.set_yticks(range(1, len(cells) + 1))
    ax.legend(fontsize=7, bbox_to_anchor=(1.02, 1), loc="upper left")
    return fig


def difficulty_figure(by_tier, settings):
    """00: per tier, the sizes (seed length, target words, mean word length), the words' rarity against the
    tier's floor, and the sentence word limit; ``by_tier`` from the design's levels, ``settings`` from
    ``levels.tier_table``."""
    fig, axes = plt.subplots(1, 3, figsize=(10, 3))
    axes[0].plot(by_tier.index, settings.seed_length, "o-", label="seed length")
    axes[0].plot(by_tier.index, by_tier.n_words, "s-", label="target words")
    axes[0].plot(by_tier.index, by_tier.mean_length, "^-", label="mean word length")
    axes[0].set(xlabel="tier", title="size")
    axes[0].legend()
    axes[1].plot(by_tier.index, by_tier.mean_zipf, "o-", label="mean of the words")
    axes[1].plot(by_tier.index, by_tier.min_zipf, "s-", label="rarest word")
    axes[1].plot(by_tier.index, settings.min_zipf, "k--", label="floor")
    axes[1].set(xlabel="tier", ylabel="Zipf frequency", title="rarity")
    axes[1].legend()
    axes[2].plot(by_tier.index, settings.max_sentence_words, "o-")
    axes[2].set(xlabel="tier", ylabel="words", title="sentence word limit (check 10)")
    fig.tight_layout()
    return fig
