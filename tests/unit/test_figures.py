"""Every figure is a function of tables that returns a Figure; saving it twice writes the same bytes. And the defects
a reviewer stops at, caught without a person: a legend whose colours are not its artists', tick labels or
annotations that run into each other, text outside the figure, a legend on the data, ties drawn as ranks, a colour
scale that makes over-coverage look best."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from matplotlib.figure import Figure

from vocab import figures

CORR = pd.DataFrame(
    [
        {"rater": r, "cell": c, "p": p, "theta": t, "ci_low": t - 0.1, "ci_high": t + 0.1, "q1": 0.8, "q1_low": 0.6,
         "q1_high": 0.9, "q0": q0, "q0_low": 0.5, "q0_high": 0.95}
        for r in ("a", "a+script") for c, p, t, q0 in (("x__x", 0.5, 0.3, 0.7), ("x__y", 0.2, 0.25, None))
    ]
)  # fmt: skip


RANKS = pd.DataFrame({"rater": ["a", "a", "a+script", "a+script"], "cell": ["x__x", "x__y"] * 2,
                      "theta": [0.3, 0.25] * 2, "rank_low": [1, 1, 1, 2], "rank_high": [2, 2, 1, 2]})  # fmt: skip
PAIRS = pd.DataFrame({"rater": ["a", "a+script"], "a": ["x__x"] * 2, "b": ["x__y"] * 2, "difference": [-0.05, -0.3],
                      "ci_low": [-0.3, -0.4], "ci_high": [0.2, -0.2], "raw_difference": [-0.3] * 2})  # fmt: skip


def _figures():
    checks = pd.DataFrame({"check": [1, 2, 3], "kind": ["mechanical", "decidable", "judgment"], "agree": [5, 9, 3],
                           "n": [10, 10, 10]})  # fmt: skip
    grid = pd.DataFrame([{"method": m, "piles": 10, "theta": th, "q1": 0.8, "coverage": 0.9} for m in ("seed", "ppi")
                         for th in (0.2, 0.5)])  # fmt: skip
    by_tier = pd.DataFrame({"n_words": [3, 4], "mean_zipf": [5, 4], "min_zipf": [4, 3], "mean_length": [3, 4]},
                           index=[1, 2])  # fmt: skip
    settings = pd.DataFrame(
        {"seed_length": [5, 6], "min_zipf": [3.5, 3.4], "max_sentence_words": [16, 15]}, index=[1, 2]
    )
    # the committed exam's layout: labels at the right edge, a degenerate judge beside a real one
    planted = pd.DataFrame({"judge": ["j", "k"], "verdict_recall": [1.0, 0.84], "on_target_recall": [0.76, 0.84],
                            "false_positive_rate": [1.0, 0.75]})  # fmt: skip
    degenerate = pd.DataFrame(
        {"judge": ["always-FAIL", "always-PASS", "random"], "verdict_recall": [1.0, 0.0, 1.0],
         "on_target_recall": [1.0, 0.0, 0.5], "false_positive_rate": [1.0, 0.0, 1.0]}
    )  # fmt: skip
    pairwise = pd.DataFrame(
        {"judge": ["j", "k", "always-first", "always-tie", "random"], "tie_rate": [0.0, 0.125, 0.0, 1.0, 0.33],
         "balanced_accuracy": [0.52, 0.48, 0.5, 0.0, 0.33]}
    )  # fmt: skip
    # the full grid's shape: six regimes (their labels long enough to collide when written on one line), four
    # methods, one of them at 0.98 where a legend inside the axes would sit on it
    regimes = pd.DataFrame({m: [0.98, 0.9, 0.3, 0.2, 0.5, 0.7] for m in ("fiducial", "jeffreys", "ppi", "seed")},
                           index=[f"n={n}, spread={s}" for n in (10, 20, 40) for s in ("2", "inf")])  # fmt: skip
    return {  # name: (a function that draws it, its number of axes)
        "raw_vs_corrected": (lambda: figures.raw_vs_corrected_figure(CORR), 1),
        "sensitivity_specificity": (lambda: figures.sensitivity_specificity_figure(CORR), 2),
        "check_agreement": (lambda: figures.check_agreement_figure(checks), 1),
        "rank_sets": (lambda: figures.rank_sets_figure(CORR, RANKS), 1),
        "differences": (lambda: figures.differences_figure(PAIRS), 1),
        "coverage_methods": (lambda: figures.coverage_methods_figure(grid, ("seed", "ppi")), 3),  # and the colour bar
        "within_by_regime": (lambda: figures.within_by_regime_figure(regimes), 1),
        "difficulty": (lambda: figures.difficulty_figure(by_tier, settings), 3),
        "exam": (lambda: figures.exam_figure(planted, degenerate, pairwise, ["j", "k"], 0.9, 0.8), 3),
    }


@pytest.mark.parametrize("name", list(_figures()))
def test_figure_functions_return_figures_that_save_byte_stably(name, tmp_path):
    figures.style()
    draw, n_axes = _figures()[name]
    fig = draw()
    assert isinstance(fig, Figure) and len(fig.axes) == n_axes
    first = [p.read_bytes() for p in figures.save(fig, name, tmp_path / "a")]  # save closes the figure
    again = [p.read_bytes() for p in figures.save(draw(), name, tmp_path / "b")]
    assert first == again


# --- what a reviewer would stop at ---------------------------------------------------------------------------


def _drawn(name):
    figures.style()
    fig = _figures()[name][0]()
    fig.canvas.draw()
    return fig


def _hex(c) -> str:
    from matplotlib.colors import to_hex

    return to_hex(c, keep_alpha=False)


def _handle_color(h) -> str:
    from matplotlib.collections import Collection
    from matplotlib.lines import Line2D

    if isinstance(h, Line2D):
        return _hex(h.get_color())
    if isinstance(h, Collection):
        return _hex(h.get_edgecolor()[0] if len(h.get_facecolor()) == 0 else h.get_facecolor()[0])
    return _hex(h.get_facecolor())


def _colors_named(fig, label: str) -> set[str]:
    """The colours of every artist that carries ``label`` (as its label, its container's label, or its gid)."""
    from matplotlib.container import BarContainer, ErrorbarContainer

    out = set()
    for ax in fig.axes:
        for c in ax.containers:
            if c.get_label() != label:
                continue
            if isinstance(c, BarContainer):
                out |= {_hex(p.get_facecolor()) for p in c.patches}
            elif isinstance(c, ErrorbarContainer):
                out.add(_hex(c.lines[0].get_color()))
        for a in [*ax.lines, *ax.collections, *ax.patches]:
            if a.get_label() == label or a.get_gid() == label:
                out.add(_handle_color(a))
    return out


def _legends(fig):
    return [*fig.legends, *(ax.get_legend() for ax in fig.axes if ax.get_legend() is not None)]


LEGENDED = [
    "raw_vs_corrected",
    "sensitivity_specificity",
    "check_agreement",
    "rank_sets",
    "differences",
    "within_by_regime",
]


@pytest.mark.parametrize("name", LEGENDED)
def test_every_legend_entry_has_the_colour_of_the_artists_it_names(name):
    fig = _drawn(name)
    entries = [
        (h, t.get_text()) for lg in _legends(fig) for h, t in zip(lg.legend_handles, lg.get_texts(), strict=True)
    ]
    assert entries
    for handle, label in entries:
        named = _colors_named(fig, label)
        assert named == {_handle_color(handle)}, (label, named, _handle_color(handle))


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    import matplotlib.pyplot as plt

    plt.close("all")


def _tick_labels(axis) -> list:
    """The tick labels drawn: matplotlib keeps labels for ticks beyond the view limits, which it does not draw."""
    lo, hi = sorted(axis.get_view_interval())
    return [t.label1 for t, loc in zip(axis.get_major_ticks(), axis.get_majorticklocs(), strict=False)
            if lo - 1e-9 <= loc <= hi + 1e-9 and t.label1.get_visible()]  # fmt: skip


def _boxes(texts, renderer):
    return [(t.get_text(), t.get_window_extent(renderer)) for t in texts if t.get_visible() and t.get_text().strip()]


def _overlaps(boxes) -> list[tuple[str, str]]:
    return [(a, b) for i, (a, ba) in enumerate(boxes) for b, bb in boxes[i + 1 :] if ba.overlaps(bb)]


@pytest.mark.parametrize("name", list(_figures()))
def test_no_two_tick_labels_or_annotations_collide_and_every_text_is_inside_the_figure(name):
    fig = _drawn(name)
    r = fig.canvas.get_renderer()
    drawn = []
    for ax in fig.axes:
        for labels in (_tick_labels(ax.xaxis), _tick_labels(ax.yaxis), ax.texts):
            assert _overlaps(_boxes(labels, r)) == [], name
            drawn += labels
        drawn += [ax.title, ax.xaxis.label, ax.yaxis.label]
    drawn += [t for lg in _legends(fig) for t in (*lg.get_texts(), lg.get_title())]
    for ax in fig.axes:  # an annotation stays inside its own axes (it spilled into the next panel)
        frame = ax.get_window_extent(r).padded(1)
        for text, box in _boxes(ax.texts, r):
            assert frame.contains(box.x0, box.y0) and frame.contains(box.x1, box.y1), (name, text)
    inside = fig.bbox.padded(1)
    for text, box in _boxes(drawn, r):
        assert inside.contains(box.x0, box.y0) and inside.contains(box.x1, box.y1), (name, text)


@pytest.mark.parametrize("name", LEGENDED)
def test_no_legend_sits_on_the_data(name):
    fig = _drawn(name)
    r = fig.canvas.get_renderer()
    for lg in _legends(fig):
        box = lg.get_window_extent(r)
        for ax in fig.axes:
            for p in ax.patches:
                if p.get_width() and p.get_height():
                    assert not box.overlaps(p.get_window_extent(r)), name
            for line in ax.lines:
                xy = ax.transData.transform(line.get_xydata())
                assert not any(box.contains(x, y) for x, y in xy), name


def test_the_bug_the_check_legend_had_is_caught():
    """The old legend drew empty bars for its kinds, so every entry took the colour cycle's first blue."""
    fig = _drawn("check_agreement")
    handles = fig.legends[0].legend_handles
    assert len({_handle_color(h) for h in handles}) == 3


def test_rank_sets_are_drawn_as_sets_and_differences_beside_the_raw_gap():
    """Each cell's rank set is a segment from its low to its high rank in its variant's column, the raw rank a point
    (cells at p 0.6, 0.5, 0.2: ranks 1, 2, 3); each difference's interval in points, the raw gap a grey bar."""
    figures.style()
    corr = pd.DataFrame([{"rater": "r", "cell": c, "p": p, "theta": t, "ci_low": 0, "ci_high": 1}
                         for c, p, t in (("a__a", 0.6, 0.0), ("a__b", 0.5, 0.0), ("b__a", 0.2, 0.4))])  # fmt: skip
    ranks = pd.DataFrame({"rater": "r", "cell": ["a__a", "a__b", "b__a"], "theta": [0.0, 0.0, 0.4],
                          "rank_low": [2, 2, 1], "rank_high": [3, 3, 2]})  # fmt: skip
    ax = figures.rank_sets_figure(corr, ranks).axes[0]
    segments = sorted((ln.get_ydata()[0], ln.get_ydata()[1]) for ln in ax.lines if len(ln.get_xdata()) == 2)
    assert segments == [(1, 2), (2, 3), (2, 3)]
    raw = sorted(ln.get_ydata()[0] for ln in ax.lines if len(ln.get_xdata()) == 1 and round(ln.get_xdata()[0]) == 0)
    assert raw == [1, 2, 3]
    pairs = pd.DataFrame({"rater": "r", "a": ["a__a"], "b": ["b__a"], "difference": [0.4], "ci_low": [-0.1],
                          "ci_high": [0.7], "raw_difference": [-0.4]})  # fmt: skip
    ax = figures.differences_figure(pairs).axes[0]
    bar = ax.collections[0].get_segments()[0]
    assert bar[0][0] == pytest.approx(-40)  # the raw gap, in points
    (xs,) = {tuple(np.round(seg[:, 0], 6)) for c in ax.collections[1:] for seg in c.get_segments()} or {()}
    assert xs == (-10, 70)  # the corrected difference's interval, in points


def test_the_coverage_scale_is_centred_on_the_nominal_level():
    from matplotlib.colors import to_rgb

    figures.style()
    grid = pd.DataFrame([{"method": "m", "piles": 10, "theta": th, "q1": 0.8, "coverage": c}
                         for th, c in ((0.2, 0.95), (0.4, 0.99), (0.6, 0.85), (0.8, 0.96))])  # fmt: skip
    fig = figures.coverage_methods_figure(grid, ("m",))
    image = fig.axes[0].images[0]
    rgb = [to_rgb(image.cmap(image.norm(v))) for v in (0.95, 0.99, 0.85)]
    assert min(rgb[0]) > 0.9  # the nominal level is (near) white
    assert rgb[1][2] > rgb[1][0]  # over-coverage blue
    assert rgb[2][0] > rgb[2][2]  # under-coverage red
    outlined = [p for p in fig.axes[0].patches if not p.get_fill()]
    assert len(outlined) == 2  # 0.95 and 0.96 lie within 95 ± 2 %; 0.99 and 0.85 do not


def test_each_name_keeps_its_colour_and_cells_read_writer_to_critic():
    assert figures.color("smollm2+script") == figures.color("smollm2") != figures.color("gemma3")
    # a name not listed takes a spare colour from its own text: the same in another process with another hash seed
    import subprocess
    import sys

    other = subprocess.run([sys.executable, "-c", "from vocab import figures; print(figures.color('someone-new'))"],
                           env={**__import__("os").environ, "PYTHONHASHSEED": "123"}, capture_output=True, text=True,
                           check=True).stdout.strip()  # fmt: skip
    assert figures.color("someone-new") == other and other in figures._SPARE
    for group in (["smollm2", "gemma3", "script"], ["fiducial", "jeffreys", "ppi", "seed", "attempt-boot"],
                  ["smollm2__smollm2", "smollm2__gemma3", "gemma3__smollm2", "gemma3__gemma3"],
                  ["decidable", "mechanical", "judgment"]):  # fmt: skip
        assert len({figures.color(n) for n in group}) == len(group)
    assert figures.cell_label("gemma3__smollm2") == "gemma3 → smollm2"


def test_a_shown_figure_is_two_outputs_so_jupyterlab_shows_the_image_and_its_numbers(tmp_path):
    """JupyterLab renders only the richest form of one output: the PNG and the numbers it draws must be two outputs
    (the PNG's bytes as saved; a table, as HTML and text, holding the drawn points counted here)."""
    from IPython.core.interactiveshell import InteractiveShell
    from IPython.utils.capture import capture_output

    from vocab.notebooks.show import show

    InteractiveShell.instance()  # the display publisher a kernel has

    fig = Figure()
    ax = fig.add_subplot()
    ax.set_title("three points")
    ax.plot([1, 2, 3], [0.25, 0.5, 0.75], "o")
    shown = show(fig, "probe", tmp_path)
    with capture_output() as cap:
        shown._ipython_display_()
    image, table = cap.outputs
    assert image.data["image/png"] == (tmp_path / "probe.png").read_bytes()
    assert "text/html" not in image.data
    assert "three points" in table.data["text/html"] and "<table" in table.data["text/html"]
    row = table.data["text/plain"].splitlines()[1].split()
    assert row[-6:] == ["1", "3", "6.0", "1.5", "0.25", "0.75"], row  # artists, points, Σx, Σy, min y, max y
