"""Every committed figure is what its notebook draws from the committed data.

nbval compares text, not images: a notebook could redraw its figures while every cell's text stays the same. Here
each figure-making notebook runs with its committed parameters into a scratch folder (``figures_dir``), and every
PNG it draws is compared with the committed one by matplotlib's own image comparison (RMS tolerance, as pytest-mpl
does). A scratch copy of the committed tables with one plotted number changed must fail the comparison.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pandas as pd
import papermill as pm
import pytest
from matplotlib.testing.compare import compare_images

REPO = Path(__file__).resolve().parents[2]
TOLERANCE = 2.0  # RMS over 0-255 pixel values: antialiasing differences pass, a moved marker does not
FIGURE_NOTEBOOKS = ("00_levels", "05_exam", "06_figures", "08_coverage")


def _draw(notebook: str, figures_dir: Path, **parameters) -> list[Path]:
    figures_dir.mkdir(parents=True, exist_ok=True)
    pm.execute_notebook(
        str(REPO / "notebooks" / f"{notebook}.ipynb"),
        str(figures_dir / f"{notebook}.ipynb"),
        parameters={"figures_dir": str(figures_dir), **parameters},
        cwd=str(REPO / "notebooks"),
        kernel_name="python3",
        progress_bar=False,
    )
    return sorted(figures_dir.glob("*.png"))


@pytest.mark.parametrize("notebook", FIGURE_NOTEBOOKS)
def test_committed_figures_are_what_the_notebook_draws(notebook, tmp_path):
    drawn = _draw(notebook, tmp_path)
    committed = sorted((REPO / "figures").glob(f"{notebook[:2]}_*.png"))
    assert [p.name for p in drawn] == [p.name for p in committed]
    for new, old in zip(drawn, committed, strict=True):
        assert compare_images(str(old), str(new), tol=TOLERANCE) is None, f"{old.name} is not what {notebook} draws"


def test_a_changed_plotted_number_fails_the_comparison(tmp_path):
    analysis = tmp_path / "analysis"
    shutil.copytree(REPO / "data" / "runs" / "reference" / "analysis", analysis)
    corr = pd.read_csv(analysis / "correction.csv")
    row = corr.index[(corr.rater == "smollm2") & (corr.cell == "smollm2__smollm2")][0]
    corr.loc[row, "theta"] = corr.loc[row, "theta"] + 0.2  # one plotted number, moved
    corr.to_csv(analysis / "correction.csv", index=False, float_format="%.6f")
    drawn = {p.name: p for p in _draw("06_figures", tmp_path / "figures", analysis_dir=str(analysis))}
    old = REPO / "figures" / "06_raw_vs_corrected.png"
    assert compare_images(str(old), str(drawn[old.name]), tol=TOLERANCE) is not None
    untouched = REPO / "figures" / "06_check_agreement.png"  # drawn from checks.csv, which did not change
    assert compare_images(str(untouched), str(drawn[untouched.name]), tol=TOLERANCE) is None
