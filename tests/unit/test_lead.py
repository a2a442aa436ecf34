"""A degenerate rater is not followed (issue #76 item 6): the default rater is one whose verdicts vary where one
exists, said in one line; and self-preference is stated as the interval of its difference of differences. Expected
values are counted from the committed ratings and correction table, not from the code that chooses or contrasts."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from vocab.estimates.compare import cell_draws, self_preference_did
from vocab.estimates.correct import corrected
from vocab.raters.blind import blind_raters
from vocab.stats.differences import contrast_interval

ROOT = Path(__file__).resolve().parents[2]
REFERENCE = ROOT / "data" / "runs" / "reference"
CHECKS = [f"c{i}" for i in range(2, 13)]


def _passes(name: str) -> pd.Series:
    r = pd.read_csv(REFERENCE / "calibration" / f"ratings_{name}.csv", dtype=str)
    return (r[CHECKS] == "PASSED").all(axis=1)


def test_the_rater_first_in_line_who_passed_nothing_does_not_lead():
    gemma, smollm = _passes("gemma3"), _passes("smollm2")
    assert len(gemma) == len(smollm) and gemma.sum() == 0 and 0 < smollm.sum() < len(smollm)  # as the files say
    b = blind_raters(REFERENCE)
    assert b.lead == "smollm2"
    assert b.passed_over == (
        f"the default rater is smollm2, whose verdicts vary: gemma3, first in line, passed none of the {len(gemma)} "
        "rows rated (its rates 0 by construction)"
    )
    assert blind_raters(REFERENCE, ["gemma3"]).lead == "gemma3"  # asked for by name: followed


def test_self_preference_is_the_sum_of_the_writers_leniency_gaps():
    """The difference of differences from the committed correction table's p and theta (L = p − theta):
    L(smollm2, own) − L(smollm2, other) + L(gemma3, own) − L(gemma3, other)."""
    c = corrected(REFERENCE, n_boot=1000)  # p and theta do not depend on the draws
    t = c.table[c.table.rater == "smollm2"].set_index("cell")
    lean = t.p - t.theta
    expected = lean["smollm2__smollm2"] - lean["smollm2__gemma3"] + lean["gemma3__gemma3"] - lean["gemma3__smollm2"]
    did = self_preference_did(cell_draws(c.data, c.key, c.passes["smollm2"], rater="smollm2", n_boot=1000))
    assert did is not None and did["leniency_did"] == pytest.approx(expected, abs=1e-12)
    assert did["ci_low"] <= did["leniency_did"] <= did["ci_high"]


def test_a_contrast_of_draws_is_the_percentile_interval_of_the_signed_sum():
    """Hand-made draws: x1 − x2 + x3 − x4 of constants 0.4, 0.1, 0.3, 0.2 plus uniform noise on the first."""
    d = 1000
    noise = (np.arange(d) + 0.5) / d - 0.5  # uniform on (−0.5, 0.5), evenly
    parts = [0.4 + noise, np.full(d, 0.1), np.full(d, 0.3), np.full(d, 0.2)]
    r = contrast_interval([[0.4], [0.1], [0.3], [0.2]], [p[None] for p in parts], [1, -1, 1, -1])
    assert r.estimate[0] == pytest.approx(0.4 - 0.1 + 0.3 - 0.2)
    # the signed sum's draws are parts[0]'s shifted by −0.1 + 0.3 − 0.2 = 0
    assert (r.low[0], r.high[0]) == pytest.approx(tuple(np.quantile(parts[0], [0.025, 0.975])), abs=1e-12)
