"""Judges on the same outputs share one corrected rate (issue #76 items 3 and 7): printed once, pooled from every
labelled row of those outputs, post-stratified by the pattern of the judges' verdicts. Expected values are counted
from the table's own truth column with pandas, or come from a simulation with a known truth."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from vocab.cli import main
from vocab.coverage.pooled import pooled_coverage
from vocab.estimates.correct import corrected
from vocab.estimates.pooled import groups, pool, pooled_rate

JUDGES = (("A", (0.9, 0.9)), ("B", (0.95, 0.6)), ("C", (0.7, 0.8)))


def _audit(tmp: Path, per_pile: int, n: int = 90) -> tuple[Path, pd.DataFrame]:
    """System S's n outputs judged by A, B and C; ann labels every sampled row with the table's truth."""
    rng = np.random.default_rng(7)
    rows = []
    for i in range(n):
        good = bool(rng.random() < 0.55)
        for judge, (q1, q0) in JUDGES:
            passed = rng.random() < q1 if good else rng.random() >= q0
            rows.append({"id": f"o{i}", "system": "S", "judge": judge, "verdict": "PASSED" if passed else "FAILED",
                         "input": f"q{i}", "output": f"answer {i}", "truth": int(good)})  # fmt: skip
    table = pd.DataFrame(rows)
    table.to_csv(tmp / "three.csv", index=False)
    d = tmp / f"audit{per_pile}"
    assert main(["import", "table", str(tmp / "three.csv"), "--run-dir", str(d), "--visible", "input,output"]) == 0
    assert main(["audit", str(d), "--raters", "ann", "--per-pile", str(per_pile)]) == 0
    key = pd.read_csv(d / "calibration" / "key.csv")
    truth = table.drop_duplicates("id").set_index("id").truth
    verdict = np.where(truth.reindex(key.level).to_numpy() == 1, "PASSED", "FAILED")
    pd.DataFrame({"blind_id": key.blind_id, "verdict": verdict}).to_csv(tmp / "ann.csv", index=False)
    assert main(["ratings", "import", str(tmp / "ann.csv"), "--run-dir", str(d), "--rater", "ann"]) == 0
    return d, table


@pytest.fixture(scope="module")
def sampled(tmp_path_factory):
    return _audit(tmp_path_factory.mktemp("pooled"), 16, n=60)


def test_every_output_labelled_gives_the_true_share_exactly(tmp_path):
    d, table = _audit(tmp_path, 40, n=30)
    c = corrected(d)
    (cells,) = groups(c.data, c.key)
    r = pooled_rate(c.data, c.key, c.passes["ann"], cells)
    truth = table.drop_duplicates("id").truth.mean()
    assert cells == ("S__A", "S__B", "S__C") and r.outputs == 30 and r.labelled == 30
    assert r.theta == pytest.approx(truth) and r.ci_low == pytest.approx(truth) and r.ci_high == pytest.approx(truth)


def test_the_pooled_rate_is_the_patterns_shares_weighted_by_their_outputs(sampled, capsys):
    """The point: each pattern of the three judges' verdicts (counted from the table) weighted by its outputs, its
    share of good outputs among the labelled ones (the key's rows joined to the truth column); printed once."""
    d, table = sampled
    c = corrected(d)
    r = pooled_rate(c.data, c.key, c.passes["ann"], ("S__A", "S__B", "S__C"))
    wide = table.pivot(index="id", columns="judge", values="verdict").map(lambda v: v[0])
    pattern = wide.A + wide.B + wide.C
    truth = table.drop_duplicates("id").set_index("id").truth
    labelled = pd.read_csv(d / "calibration" / "key.csv").level.unique()
    frame = pd.DataFrame({"h": pattern, "good": truth.reindex(pattern.index), "lab": pattern.index.isin(labelled)})
    assert frame.groupby("h").lab.any().all()  # every pattern labelled at 16 rows a pile: all three judges pooled
    expected = (frame.groupby("h").size() * frame[frame.lab].groupby("h").good.mean()).sum() / len(frame)
    assert r.used == ("S__A", "S__B", "S__C") and r.theta == pytest.approx(expected)
    assert r.ci_low <= r.theta <= r.ci_high
    capsys.readouterr()
    assert main(["audit", str(d)]) == 0
    out = capsys.readouterr().out
    assert out.count("one rate for them all") == 1 and "S judged by A, B, C (the same 60 outputs)" in out
    assert "against ann's blind ratings" not in out  # no rate per judge
    # the gate holds each judge's floor by that one rate's lower end (the pooled interval), not a per-judge rate
    capsys.readouterr()
    assert main(["gate", str(d), "--min-rate", f"{r.ci_low - 1e-6:.9f}"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 3 and all(f"labels pooled) {r.ci_low:.3f} ≥" in x for x in lines), lines
    assert main(["gate", str(d), "--min-rate", f"{r.ci_low + 1e-3:.9f}"]) == 1


def test_a_pattern_without_a_label_pools_fewer_judges():
    """Two judges: B's pattern FP holds outputs none of which was drawn; the rate then stands on A's piles alone
    (A's own corrected rate, hand-computed: FAILED pile 1 of 2 good over 3 outputs, PASSED 2 of 2 over 2)."""
    marks = np.array([list(p) for p in ("PP", "PF", "FF", "FF", "FP")])
    sampled = np.array([[1, 0], [1, 0], [1, 0], [1, 0], [0, 0]], dtype=bool)
    values = np.array([1.0, 1.0, 1.0, 0.0, np.nan])
    used, outputs, labelled, est, lo, hi = pool(marks, sampled, values, 1000, 0, 0.95)
    assert used == [0] and outputs == 5 and labelled == 4
    assert est == pytest.approx((2 * 1.0 + 3 * 0.5) / 5) and lo <= est <= hi


def test_the_pooled_interval_covers_in_a_small_simulation():
    """A slice of benchmarks/bench_pooled.py: three judges, 350 outputs, 10 rows a pile, 100 studies."""
    r = pooled_coverage(0.55, [j for _, j in JUDGES], outputs=350, per_pile=10, sims=100, seed=1, n_draws=500)
    assert r["defined"] >= 95 and r["coverage"] >= 0.9


def test_the_pooled_rate_does_not_hang_on_the_judges_names_or_order():
    """Three judges of 300 simulated outputs, 4 labels a pile each: the judges listed in any of four orders pool
    the same judges' piles and print the same rate and interval (the choice is the data's, not the names')."""
    import numpy as np

    from vocab.estimates.pooled import pool

    rng = np.random.default_rng(1)
    good = rng.random(300) < 0.6
    verdicts = []
    for q1, q0 in ((0.9, 0.9), (0.8, 0.95), (0.95, 0.7)):
        u = rng.random(300)
        verdicts.append(np.where(good, u < q1, u >= q0))
    marks = np.where(np.array(verdicts).T, "P", "F")
    sampled = np.zeros((300, 3), bool)
    for j, v in enumerate(verdicts):
        for pile in (v, ~v):
            sampled[rng.choice(np.flatnonzero(pile), 4, replace=False), j] = True
    labels = np.where(sampled.any(axis=1), good.astype(float), np.nan)
    got = set()
    for order in ([0, 1, 2], [0, 2, 1], [1, 2, 0], [2, 1, 0]):
        used, *rest = pool(marks[:, order], sampled[:, order], labels, 2000, 0, 0.95)
        got.add((tuple(sorted(order[i] for i in used)), *rest))
    assert len(got) == 1, got
