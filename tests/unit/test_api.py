"""The Python API a researcher explores with (`vocab.open`): its documented examples executed, every result object
short as text and a summary as HTML."""

from __future__ import annotations

import doctest
from pathlib import Path

import pytest

import vocab
from vocab import explore
from vocab.sampling.sample import CalibrationError

REPO = Path(__file__).resolve().parents[2]
FLAGS = doctest.NORMALIZE_WHITESPACE | doctest.ELLIPSIS


@pytest.fixture()
def at_root(monkeypatch):
    monkeypatch.chdir(REPO)


def test_every_example_in_docs_api_runs_as_printed(at_root):
    result = doctest.testfile(str(REPO / "docs" / "api.md"), module_relative=False, optionflags=FLAGS)
    assert result.attempted >= 8 and result.failed == 0


def test_every_example_in_the_module_runs_as_printed(at_root):
    result = doctest.testmod(explore, optionflags=FLAGS, globs={"ref": vocab.open("data/runs/reference")})
    assert result.attempted >= 4 and result.failed == 0


def test_vocab_exposes_open_and_says_what_it_is():
    assert "open" in vocab.__all__ and vocab.open is explore.open and "vocab.open" in vocab.__doc__
    assert "open" in dir(vocab)
    with pytest.raises(AttributeError):
        vocab.nothing_here  # noqa: B018


def test_the_rate_is_the_reports_own(at_root):
    """The number the API gives is the one `vocab report` wrote (corrected.csv, committed with the run)."""
    import pandas as pd

    ref = vocab.open("data/runs/reference")
    committed = pd.read_csv(REPO / "data/runs/reference/analysis/correction.csv")
    row = committed[(committed.rater == "smollm2") & (committed.cell == "gemma3__smollm2")].iloc[0]
    got = ref.rate("gemma3__smollm2", rater="smollm2")
    assert (round(got.theta, 6), round(got.ci_low, 6), round(got.ci_high, 6)) == (
        round(row.theta, 6),
        round(row.ci_low, 6),
        round(row.ci_high, 6),
    )


def _objects():
    ref = vocab.open(REPO / "data/runs/reference")
    imported = vocab.open(REPO / "data/format1/labelled")
    return {
        "opened run": ref,
        "opened dataset": imported,
        "dataset": ref.data,
        "corrected": ref._corrected(),
        "comparisons": ref.comparisons("smollm2"),
        "rate": ref.rate("smollm2 → gemma3", "smollm2"),
    }


def test_every_result_object_is_short_as_text_and_a_summary_as_html():
    for name, obj in _objects().items():
        text = repr(obj)
        assert 1 <= len(text.splitlines()) <= 20, name
        assert len(text) < 4000, name
        page = obj._repr_html_()
        assert page.startswith("<") and len(page) < 20_000, name


def test_a_bad_question_is_one_line(at_root):
    ref = vocab.open("data/runs/reference")
    with pytest.raises(CalibrationError, match="no blind rater 'human'"):
        ref.rates("human")
    with pytest.raises(CalibrationError, match="no cell 'nobody'"):
        ref.rate("nobody")
    with pytest.raises(CalibrationError, match="not a directory"):
        vocab.open("data/runs/nowhere")


def test_the_controls_redraw_the_notebooks_own_table(monkeypatch, at_root):
    """03's controls run the correction the notebook's cells run: changing the interval shows that table."""
    import IPython.display

    from vocab.estimates.correct import correction_table, variants
    from vocab.notebooks.controls import correction_controls
    from vocab.notebooks.views import rates_view

    ref = vocab.open("data/runs/reference")
    c = ref._corrected()
    passes = variants(c.ratings, c.script, ref.data.rubric)
    shown = []
    monkeypatch.setattr(IPython.display, "display", shown.append)
    box = correction_controls(
        ref.data.attempts, c.key, passes, n_boot=400, seed=0, interval="fiducial", population="finite"
    )
    interval, population, rater = box.children[0].children
    assert shown == []  # nothing drawn until a control changes
    rater.value = "smollm2"
    interval.value = "jeffreys"
    expected = correction_table(ref.data.attempts, c.key, {"smollm2": passes["smollm2"]}, n_boot=400, seed=0,
                                interval="jeffreys", population="finite")  # fmt: skip
    assert shown[-1].equals(rates_view(expected))
    assert "smollm2" in set(shown[-1].rater) and len(shown) == 2


def test_the_coverage_controls_simulate_the_grids_own_point(monkeypatch):
    """08's controls run coverage_grid at the grid's seed: a point they simulate is the grid's own row."""
    import IPython.display

    from vocab.coverage import coverage_grid
    from vocab.notebooks.controls import coverage_controls

    shown = []
    monkeypatch.setattr(IPython.display, "display", shown.append)
    box = coverage_controls(methods=("fiducial",), levels=20, n_boot=50, seed=3, sims=20)
    (theta, q), (pile, spread, run) = box.children[0].children, box.children[1].children
    theta.value, q.value, pile.value, spread.value = 0.3, 0.9, 5, float("inf")
    assert shown == []  # a click simulates, not a slider
    run.click()
    expected = coverage_grid(methods=("fiducial",), piles=(5,), thetas=(0.3,), q1s=(0.9,), q0s=(0.9,),
                             spreads=(float("inf"),), levels=20, sims=20, seed=3, n_boot=50)  # fmt: skip
    assert len(shown) == 1 and shown[0].equals(expected.round(3))


def test_an_audit_shows_itself_as_the_command_prints_it(tmp_path):
    """`vocab audit`'s result in a notebook: its lines (what the command prints), short, and as HTML; its next step
    names the auditor's notebook for an imported dataset."""
    import shutil

    from vocab.audit import audit

    d = tmp_path / "d"
    shutil.copytree(REPO / "data/audits/mlflow-reviewers", d)
    a = audit(d, say=lambda _: None)
    text = repr(a)
    assert text.splitlines()[0] == f"audit of {d} (20 sampled rows)" and len(text.splitlines()) <= 20
    assert "ratings carol: 2 of 20 rows" in a.lines() and "10_audit.ipynb" in a.next_step
    assert a._repr_html_().startswith("<div><b>audit of")


def test_reading_it_says_the_direction_the_committed_table_shows(at_root):
    """03's closing lines against the committed correction.csv: a judge's rate above the interval is called
    inflating, below it deflating, inside it undecided (never "no bias"); gemma3, who passed none of its rows, is
    named first."""
    import pandas as pd

    ref = vocab.open("data/runs/reference")
    table = pd.read_csv(REPO / "data/runs/reference/analysis/correction.csv")
    for rater in ("smollm2", "gemma3"):
        text = explore.reading(ref, rater)
        for r in table[table.rater == rater].itertuples():
            line = next(x for x in text.splitlines() if x.startswith(f"- **{r.cell.replace('__', ' → ')}**"))
            word = "**inflates**" if r.p > r.ci_high else "**deflates**" if r.p < r.ci_low else "cannot tell"
            assert word in line and "no bias" not in line, line
    assert explore.reading(ref, "gemma3").startswith("- **gemma3 passed none of its 67 rated rows**")
