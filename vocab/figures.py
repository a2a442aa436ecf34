"""The project's figures: one style, one palette, one function per figure (tables in, a Figure out), and one
helper that writes PNG and PDF into ``figures/``, byte-identical on rerun.

The style is made for a paper column: Okabe-Ito's colour-blind-safe palette, used the same way everywhere (a
rater, an interval method, a cell or a check kind keeps its colour in every figure: :func:`color`), human labels
("writer → critic": :func:`cell_label`), a constrained layout so that nothing lies outside the figure, and
intervals drawn as points with whiskers, so that a value of 0 is as visible as any other.
"""

from __future__ import annotations

import hashlib
import io
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.lines import Line2D  # noqa: E402
from matplotlib.patches import Patch  # noqa: E402
from matplotlib.ticker import FuncFormatter, NullFormatter  # noqa: E402

from vocab.files import write_bytes_atomic  # noqa: E402

# Fixed metadata: no creation date, no software version, so a rerun writes the same bytes.
_PNG_META = {"Software": None}
_PDF_META = {"Creator": None, "Producer": None, "CreationDate": None}

# Okabe & Ito (2008), "Color Universal Design": distinguishable under the common colour-vision deficiencies.
OKABE_ITO = {
    "orange": "#E69F00",
    "sky blue": "#56B4E9",
    "bluish green": "#009E73",
    "yellow": "#F0E442",
    "blue": "#0072B2",
    "vermillion": "#D55E00",
    "reddish purple": "#CC79A7",
    "black": "#000000",
    "grey": "#999999",
}
_O = OKABE_ITO
# Every named thing that figures show, with its one colour. Rater variants "<rater>+script" take their rater's
# colour (the marker tells them apart); a name not listed here takes a palette colour from its own hash.
COLORS = {
    # raters
    "smollm2": _O["blue"],
    "gemma3": _O["vermillion"],
    "script": _O["black"],
    # interval methods
    "fiducial": _O["blue"],
    "jeffreys": _O["sky blue"],
    "ppi": _O["bluish green"],
    "seed": _O["orange"],
    "attempt-boot": _O["reddish purple"],
    "oracle": _O["grey"],
    # cells (writer__critic)
    "smollm2__smollm2": _O["blue"],
    "smollm2__gemma3": _O["sky blue"],
    "gemma3__smollm2": _O["orange"],
    "gemma3__gemma3": _O["vermillion"],
    # rubric check kinds
    "decidable": _O["bluish green"],
    "mechanical": _O["sky blue"],
    "judgment": _O["orange"],
    # the critic's raw rate, beside corrected ones
    "raw p": _O["grey"],
}
_SPARE = [_O["reddish purple"], _O["bluish green"], _O["orange"], _O["sky blue"], _O["yellow"]]


def color(name: str) -> str:
    """The colour ``name`` has in every figure (a rater variant ``x+script`` has ``x``'s)."""
    base = name.removesuffix("+script")
    if base in COLORS:
        return COLORS[base]
    return _SPARE[int(hashlib.sha256(base.encode()).hexdigest(), 16) % len(_SPARE)]


def marker(variant: str) -> str:
    """A rater variant's marker: filled circle for the rater alone, open square where the script adjudicates."""
    return "s" if variant.endswith("+script") else "o"


def cell_label(cell: str) -> str:
    """``gemma3__smollm2`` → ``gemma3 → smollm2`` (writer → critic)."""
    writer, _, critic = cell.partition("__")
    return f"{writer} → {critic}" if critic else cell


def variant_label(variant: str) -> str:
    """A rater variant as the tables name it, spelt out: ``smollm2+script`` → ``smollm2 + script``."""
    return variant.replace("+", " + ")


def style() -> None:
    plt.rcParams.update(
        {
            "figure.dpi": 100,
            "savefig.dpi": 150,
            "font.size": 8,
            "axes.titlesize": 9,
            "axes.labelsize": 8,
            "legend.fontsize": 7,
            "xtick.labelsize": 7,
            "ytick.labelsize": 7,
            # lines and bars without a named colour (00's tiers) take the same palette, in Okabe-Ito's order
            "axes.prop_cycle": matplotlib.cycler(
                color=[
                    _O[k]
                    for k in (
                        "blue",
                        "orange",
                        "bluish green",
                        "vermillion",
                        "reddish purple",
                        "sky blue",
                        "yellow",
                        "black",
                    )
                ]
            ),
            "axes.grid": True,
            "grid.alpha": 0.3,
            "axes.spines.top": False,
            "axes.spines.right": False,
            "figure.constrained_layout.use": True,
            "svg.hashsalt": "vocab",
            "pdf.fonttype": 42,
        }
    )


def save(fig, name: str, out_dir: str | Path = "../figures") -> list[Path]:
    """Write ``<out_dir>/<name>.png`` and ``.pdf`` (each whole or not at all), close the figure, return the paths."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    paths = [out / f"{name}.png", out / f"{name}.pdf"]
    for path, meta in zip(paths, (_PNG_META, _PDF_META), strict=True):
        fig.savefig(buf := io.BytesIO(), format=path.suffix[1:], metadata=meta, bbox_inches="tight")
        write_bytes_atomic(path, buf.getvalue())  # a reader never sees half a figure
    plt.close(fig)
    return paths


# --- one function per figure: tables in, a Figure out; notebooks call them and `save` -------------------


def _labelled(ax, rows, x: str, y: str, real: set[str]) -> None:
    """Scatter the judges; judges at the same point share one label (real judges in their colours, the degenerate
    baselines grey crosses)."""
    groups: dict[tuple[float, float], list[str]] = {}
    for r in rows.itertuples():
        groups.setdefault((round(getattr(r, x), 3), round(getattr(r, y), 3)), []).append(r.judge)
    for (px, py), names in groups.items():
        reals = [n for n in names if n in real]
        c = color(reals[0]) if reals else _O["grey"]
        ax.scatter(px, py, marker="o" if reals else "x", s=40 if reals else 20, c=c, zorder=3)
        right = px > 0.6  # a label near the right edge reads leftwards, inside its axes
        ax.annotate(
            ", ".join(names),
            (px, py),
            textcoords="offset points",
            ha="right" if right else "left",
            xytext=(-5 if right else 5, 4 if reals else -16),
            fontsize=7 if reals else 6,
            color="black" if reals else "0.35",
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
        ylim=(-0.14, 1.1),
        xlabel="verdict-label recall",
        ylabel="on-target recall",
        title="planted defects: caught vs caught on target",
    )
    _labelled(axes[1], both, "verdict_recall", "false_positive_rate", real)
    axes[1].set(
        xlim=(-0.05, 1.15),
        ylim=(-0.14, 1.1),
        xlabel="verdict-label recall",
        ylabel="false-positive rate on clean controls",
        title="planted defects: caught vs clean answers failed",
    )
    ax = axes[2]
    qualifies = {"color": _O["bluish green"], "alpha": 0.15, "lw": 0, "label": "qualifies (pre-registered)"}
    ax.fill_between([tie_min, 1.05], accuracy_min, 1.1, **qualifies)
    _labelled(ax, pairwise_table, "tie_rate", "balanced_accuracy", set(pairwise_judges))
    ax.set(
        xlim=(-0.05, 1.15),
        ylim=(-0.14, 1.1),
        xlabel="tie rate on identical pairs",
        ylabel="order-balanced accuracy on known pairs",
        title="pairwise: honest and discriminating?",
    )
    ax.legend(loc="lower left", fontsize=7)
    return fig


NOMINAL, BAND = 0.95, 0.02  # the interval's nominal coverage, and the band around it that counts as honest


def coverage_methods_figure(grid, methods):
    """08: coverage of the nominal 95 % interval per method (columns) and pile size (rows); within a panel,
    the critic (q1 = q0, and the levels' spread where the grid varies it) against the true theta. A diverging
    scale centred on 0.95: under-coverage red, over-coverage blue (wide intervals are not "better"); cells within
    95 ± 2 % are outlined."""
    import numpy as np
    from matplotlib.colors import TwoSlopeNorm
    from matplotlib.patches import Rectangle

    spreads = "spread" in grid and grid.spread.nunique() > 1  # the heterogeneity axis, when the grid has one
    grid = grid.assign(
        critic=[
            f"q1=q0={a:g}" + (f", spread {s:g}" if spreads else "")
            for a, s in zip(grid.q1, grid.get("spread", grid.q1), strict=True)
        ]
    )
    ns = sorted(grid.piles.unique())
    norm = TwoSlopeNorm(vmin=0.6, vcenter=NOMINAL, vmax=1.0)
    cmap = plt.get_cmap("RdBu")
    fig, axes = plt.subplots(
        len(ns), len(methods), figsize=(2.3 * len(methods) + 0.8, 1.9 * len(ns) + 0.4), squeeze=False
    )
    image = None
    for i, n in enumerate(ns):
        for j, m in enumerate(methods):
            g = grid[(grid.piles == n) & (grid.method == m)]
            table = g.pivot_table(index="critic", columns="theta", values="coverage")
            ax = axes[i][j]
            ax.grid(False)
            image = ax.imshow(table.to_numpy(), cmap=cmap, norm=norm, aspect="auto")
            for (r, c), v in np.ndenumerate(table.to_numpy()):
                if np.isnan(v):
                    continue
                text = f"{v:.2f}"
                shown, ink = (
                    "1" if text == "1.00" else text.removeprefix("0"),
                    "white" if abs(v - NOMINAL) > 0.12 else "black",
                )
                ax.text(c, r, shown, ha="center", va="center", fontsize=5.5, color=ink)
                if abs(v - NOMINAL) <= BAND + 1e-9:
                    ax.add_patch(Rectangle((c - 0.5, r - 0.5), 1, 1, fill=False, lw=0.8, ec="black"))
            ax.set_xticks(range(table.shape[1]), [f"{t:g}" for t in table.columns])
            ax.set_yticks(range(table.shape[0]), table.index if j == 0 else [""] * table.shape[0])
            ax.set(title=f"{m}, piles of {n}", xlabel="true theta" if i == len(ns) - 1 else "")
    bar = fig.colorbar(image, ax=axes, shrink=0.8, label="coverage of the 95 % interval")
    for level, width in ((NOMINAL - BAND, 0.6), (NOMINAL, 1.2), (NOMINAL + BAND, 0.6)):  # the band, outlined
        bar.ax.axhline(level, color="black", lw=width)
    return fig


def within_by_regime_figure(table):
    """08: per regime (pile size, level heterogeneity), the share of full-grid points where each method's coverage lies
    within 95 ± 2 % (``coverage.within_by_regime``)."""
    import numpy as np

    methods = list(table.columns)
    fig, ax = plt.subplots(figsize=(7, 3))
    x = np.arange(len(table))
    width = 0.8 / len(methods)
    for i, m in enumerate(methods):
        ax.bar(x - 0.4 + width * (i + 0.5), table[m], width, color=color(m), label=m)
    ax.set_xticks(
        x,
        [
            str(r).replace(", ", "\n").replace("spread=inf", "no spread").replace("spread=", "spread ")
            for r in table.index
        ],
    )
    ax.set(
        ylabel="share of grid points\nwithin 95 ± 2 %", ylim=(0, 1), title="full grid: where each interval is honest"
    )
    fig.legend(loc="outside right upper", title="interval")
    return fig


def anchors_figure(result: dict):
    """08: ``benchmarks/results/anchors.json``: per method (rows), each point's coverage of its target (left; the line
    at 0.93: under it an interval misleads; theta, or for "these items" the population's own share) and its mean
    width over vocab's at the same point (right, where both answer); points where a method answers in fewer than
    half the studies are left out."""
    import numpy as np
    import pandas as pd

    rows = pd.DataFrame(result["rows"])
    rows = rows[rows.defined >= rows.sims / 2]
    keys = ["theta", "q1", "q0", "attempts", "budget"]
    vocab = rows[rows.method == "vocab"].set_index(keys).mean_width
    methods = [m for m in result["methods"] if m in set(rows.method)]
    fig, (ax_c, ax_w) = plt.subplots(1, 2, figsize=(9, 0.45 * len(methods) + 1.2), sharey=True)
    jitter = np.random.default_rng(0)  # a figure's own stream: the points' vertical spread only
    for i, m in enumerate(methods):
        g = rows[rows.method == m].set_index(keys)
        y = i + jitter.uniform(-0.2, 0.2, len(g))
        ax_c.scatter(g.coverage, y, s=9, color=color(m), alpha=0.7)
        both = g.index.intersection(vocab.index)
        ax_w.scatter(
            (g.mean_width[both] / vocab[both]).to_numpy(), y[g.index.isin(both)], s=9, color=color(m), alpha=0.7
        )
    ax_c.axvline(0.93, color="0.3", lw=0.8, ls="--")
    ax_c.axvline(0.95, color="0.6", lw=0.8)
    ax_w.axvline(1.0, color="0.6", lw=0.8)
    targets = result.get("targets", {})  # a method that aims at the population's own share says so
    ax_c.set_yticks(
        range(len(methods)), [m + (" (these items)" if targets.get(m) == "own share" else "") for m in methods]
    )
    ax_c.invert_yaxis()
    ax_c.set(xlabel="coverage of the nominal 95 % interval", title="covers?")
    ax_w.set(xlabel="mean width / vocab's at the same point (log; width 0 not shown)", xscale="log", title="how wide?")
    ax_w.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
    ax_w.xaxis.set_minor_formatter(NullFormatter())
    return fig


# --- 06: the paper's calibration figures, from 03's and 04's tables ------------------------------------


def _forest(ax, corr, cells, variants, col: str, lo: str, hi: str) -> None:
    """Per cell (rows, top to bottom), each variant's estimate as a point with its interval, offset a little."""
    import numpy as np

    y = np.arange(len(cells))[::-1]
    step = 0.7 / max(len(variants), 1)
    for i, v in enumerate(variants):
        g = corr[corr.rater == v].set_index("cell").reindex(cells)
        ys = y + 0.35 - step * (i + 0.5)
        ok = g[col].notna().to_numpy()
        err = [(g[col] - g[lo]).clip(lower=0)[ok], (g[hi] - g[col]).clip(lower=0)[ok]]
        ax.errorbar(
            g[col][ok],
            ys[ok],
            xerr=err,
            fmt=marker(v),
            color=color(v),
            mfc="white" if "+" in v else color(v),
            ms=4,
            lw=1,
            capsize=1.5,
            label=variant_label(v),
        )
    ax.set_yticks(y, [cell_label(c) for c in cells])
    ax.set_ylim(-0.5, len(cells) - 0.5)
    ax.set_xlim(-0.03, 1.03)


def raw_vs_corrected_figure(corr, judge: str = "critic"):
    """06: per cell (writer → critic), each rater variant's bias-corrected theta with its 95 % interval, and the
    critic's raw pass rate p beside them (a grey bar). ``judge``: what the legend calls the grader (an imported
    dataset's report says "judge")."""
    import numpy as np

    cells, variants = sorted(corr.cell.unique()), sorted(corr.rater.unique())
    fig, ax = plt.subplots(figsize=(5.5, 0.55 * len(cells) * max(len(variants), 2) / 2 + 1.2))
    raw = corr.drop_duplicates("cell").set_index("cell").loc[cells, "p"]
    y = np.arange(len(cells))[::-1]
    ax.vlines(raw.to_numpy(), y - 0.42, y + 0.42, color=color("raw p"), lw=2.5, label=f"raw p (the {judge})")
    _forest(ax, corr, cells, variants, "theta", "ci_low", "ci_high")
    ax.set(xlabel="pass rate", title="raw pass rate vs bias-corrected theta (95 % interval)")
    fig.legend(loc="outside lower center", ncol=min(len(variants) + 1, 3), title="rater (theta)")
    return fig


def sensitivity_specificity_figure(corr):
    """06: the critic's sensitivity q1 and specificity q0 per cell and rater variant, with intervals."""
    cells, variants = sorted(corr.cell.unique()), sorted(corr.rater.unique())
    fig, axes = plt.subplots(1, 2, figsize=(7, 0.55 * len(cells) * max(len(variants), 2) / 2 + 1.2), sharey=True)
    panels = [("q1", "q1_low", "q1_high", "sensitivity q1"), ("q0", "q0_low", "q0_high", "specificity q0")]
    for ax, (col, lo, hi, title) in zip(axes, panels, strict=True):
        _forest(ax, corr, cells, variants, col, lo, hi)
        ax.set(title=title, xlabel="rate")
    handles, labels = axes[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="outside lower center", ncol=min(len(variants), 4), title="rater")
    return fig


def check_agreement_figure(checks):
    """06: per rubric check, the share of rows all raters agree on (04's checks table), coloured by its kind."""
    fig, ax = plt.subplots(figsize=(5.5, 2.8))
    share = checks.agree / checks.n
    bars = ax.bar(checks.check.astype(str), share, color=[color(k) for k in checks.kind])
    for bar, kind in zip(bars, checks.kind, strict=True):
        bar.set_gid(kind)  # the legend's entries are proxies: each bar says which one names it
    kinds = list(dict.fromkeys(checks.kind))  # the kinds present, in the checks' order
    handles = [Patch(facecolor=color(k), label=k) for k in kinds]
    ax.set(
        ylim=(0, 1),
        xlabel="rubric check",
        ylabel="share of rows\nall raters agree on",
        title=f"per-check agreement ({checks.n.iloc[0]} rows)",
    )
    fig.legend(handles=handles, loc="outside right upper", title="check kind")
    return fig


def rank_sets_figure(corr, ranks):
    """06: each cell's rank set (1 = highest) under each rater variant, from simultaneous 95 % intervals over every
    pairwise difference (``estimates.comparisons``' ranks table), beside its rank by the raw p (a point: p has no
    labels to set it against). A set that spans several ranks is a rank the labels do not settle."""
    import numpy as np

    cells, variants = sorted(corr.cell.unique()), sorted(ranks.rater.unique())
    raw = corr.drop_duplicates("cell").set_index("cell").p
    raw_rank = {c: 1 + int((raw > raw[c]).sum()) for c in cells}
    fig, ax = plt.subplots(figsize=(6, 3))
    step = 0.6 / max(len(cells), 1)
    for k, cell in enumerate(cells):
        dx = (k - (len(cells) - 1) / 2) * step
        ax.plot(0 + dx, raw_rank[cell], "o", color=color(cell), ms=5, zorder=3, gid=cell_label(cell))
        for j, v in enumerate(variants, start=1):
            r = ranks[(ranks.rater == v) & (ranks.cell == cell)]
            if r.empty:
                continue
            lo, hi = int(r.rank_low.iloc[0]), int(r.rank_high.iloc[0])
            ax.plot([j + dx, j + dx], [lo, hi], "-", color=color(cell), lw=3, solid_capstyle="round", zorder=2)
            ax.plot(j + dx, (lo + hi) / 2, marker(v), color=color(cell), mfc="white", ms=4, zorder=3)
    ax.set_xticks(range(len(variants) + 1), ["raw p", *[variant_label(v) for v in variants]])
    ax.set(ylabel="rank (1 = highest)", title="each cell's rank set (family-wise 95 %), and its raw rank")
    ax.set_ylim(len(cells) + 0.5, 0.5)
    ax.set_yticks(np.arange(1, len(cells) + 1))
    handles = [Line2D([], [], color=color(c), marker="o", ms=5, lw=3, label=cell_label(c)) for c in cells]
    fig.legend(handles=handles, loc="outside right upper", title="writer → critic")
    return fig


def differences_figure(pairs, judge: str = "critic"):
    """06: a forest of every pair's difference b − a under each rater variant: the corrected difference with its
    95 % interval beside the raw difference p_b − p_a (a grey bar), in points; a dashed line at 0 (an interval
    that crosses it is not resolved)."""
    import numpy as np

    labels = [f"{cell_label(b)}\n− {cell_label(a)}" for a, b in dict.fromkeys(zip(pairs.a, pairs.b, strict=True))]
    keys = list(dict.fromkeys(zip(pairs.a, pairs.b, strict=True)))
    variants = sorted(pairs.rater.unique())
    fig, ax = plt.subplots(figsize=(6, 0.5 * len(keys) * max(len(variants), 2) / 2 + 1.4))
    y = np.arange(len(keys))[::-1]
    raw = pairs.drop_duplicates(["a", "b"]).set_index(["a", "b"]).raw_difference
    ax.vlines(
        100 * raw.loc[keys].to_numpy(),
        y - 0.42,
        y + 0.42,
        color=color("raw p"),
        lw=2.5,
        label=f"raw p_b − p_a (the {judge})",
    )
    step = 0.7 / max(len(variants), 1)
    for i, v in enumerate(variants):
        g = pairs[pairs.rater == v].set_index(["a", "b"]).reindex(keys)
        ys = y + 0.35 - step * (i + 0.5)
        ok = g.difference.notna().to_numpy()
        d, lo, hi = (100 * g[c][ok] for c in ("difference", "ci_low", "ci_high"))
        ax.errorbar(
            d,
            ys[ok],
            xerr=[(d - lo).clip(lower=0), (hi - d).clip(lower=0)],
            fmt=marker(v),
            color=color(v),
            mfc="white" if "+" in v else color(v),
            ms=4,
            lw=1,
            capsize=1.5,
            label=variant_label(v),
        )
    ax.axvline(0, color="black", lw=0.8, ls="--")
    ax.set_yticks(y, labels, fontsize=7)
    ax.set_ylim(-0.5, len(keys) - 0.5)
    ax.set(xlabel="difference b − a (points)", title="differences between cells: corrected (95 %) and raw")
    fig.legend(loc="outside lower center", ncol=min(len(variants) + 1, 3), title="rater (corrected)")
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
    return fig
