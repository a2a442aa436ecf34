"""A sample drawn by strata within each pile (vocab.sampling.strata, vocab.stats.strata): the labels shared out
over a pile's strata, the judge's score in bands, the estimator that weights the strata back, and the draw on an
imported table. Expected values are worked by hand or counted from the table's own file."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from vocab.cli import main
from vocab.datasets.dataset import load_dataset
from vocab.estimates.correct import correction_table
from vocab.sampling.sample import CalibrationError, read_key, write_sample
from vocab.sampling.strata import NO_SCORE, allocate_strata, check_strata, draw_strata, score_bands
from vocab.stats.strata import stratified_correction


def test_labels_are_shared_out_at_least_three_a_stratum_then_by_size():
    # floors of 3 use 12 of 10: every stratum is rated
    assert allocate_strata([100, 50, 30, 20], 10) == [3, 3, 3, 3]
    # a stratum of 2 is taken whole, the other gets the rest
    assert allocate_strata([2, 200], 10) == [2, 8]
    # a pile smaller than the labels is taken whole
    assert allocate_strata([5, 5], 50) == [5, 5]
    # 40: floors 12, then 28 by size 100:50:30:20 = 14, 7, 4.2, 2.8 -> 14, 7, 4, 2 (27), the last one by the
    # remainders of what is left (1 row: 0.5, 0.25, 0.15, 0.1 -> the first)
    assert allocate_strata([100, 50, 30, 20], 40) == [18, 10, 7, 5]


def test_the_judges_score_in_bands_never_splits_equal_scores():
    # ten distinct scores: midpoints 0.05, 0.15, ... 0.95 times 4 bands -> 0, 0, 1, 1, 1, 2, 2, 3, 3, 3
    assert score_bands(range(1, 11)) == ["score 1–2"] * 2 + ["score 3–5"] * 3 + ["score 6–7"] * 2 + ["score 8–10"] * 3
    # four items scored 1 and one scored 2: midpoints 0.4 and 0.9 -> bands 1 and 3, named by their scores
    assert score_bands([1, 1, 1, 1, 2]) == ["score 1"] * 4 + ["score 2"]
    assert score_bands([0.5, float("nan"), float("inf")]) == ["score 0.5", NO_SCORE, NO_SCORE]


def test_strata_rated_whole_leave_no_sampling_error():
    """Every stratum's rows all rated: the share of each pile is counted, and theta's interval is the point. By
    hand: passed strata 3 of 4 and 1 of 2 pass, failed 0 of 3 and 2 of 2; p = 6 / 11; theta = (4 + 2) / 11."""
    passed = [(np.array([1, 1, 1, 0]), 4), (np.array([1, 0]), 2)]
    failed = [(np.array([0, 0, 0]), 3), (np.array([1, 1]), 2)]
    r = stratified_correction(6 / 11, passed, failed, n_draws=500, rng=np.random.default_rng(0))
    assert r.point.theta == pytest.approx(6 / 11) and r.theta_ci == pytest.approx((6 / 11, 6 / 11))
    assert r.point.a == pytest.approx(4 / 6) and r.point.b == pytest.approx(2 / 5)
    assert r.point.q1 == pytest.approx(4 / 6)  # the truly passing items the judge passed: 4 of 6


def _convolved_quantile(parts, q: float) -> float:
    """The q quantile (the lattice point at or below it) of a sum of independent k + BetaBinomial(m, α, β) counts
    over ``total`` items, exactly from scipy's pmfs: ``parts`` [(k, m, α, β)], the last item the total."""
    from scipy.stats import betabinom

    *piles, total = parts
    pmf = np.array([1.0])
    for k, m, a, b in piles:
        pmf = np.convolve(pmf, np.concatenate([np.zeros(k), betabinom.pmf(np.arange(m + 1), m, a, b)]))
    cdf = np.cumsum(pmf)
    return float(np.searchsorted(cdf, q * (1 - 1e-12)) / total)


def test_one_stratum_a_pile_reads_its_ends_from_the_bounding_beta_binomials():
    """With one stratum a pile the estimate is the plain finite correction's, and theta's lower end is the 2.5 %
    quantile of (8 + BetaBinomial(110, 8, 3)) + (3 + BetaBinomial(70, 3, 8)) passes of 200 items (every stratum
    from its lower bounding Beta, its unrated rows completed by a binomial of it), the upper end the 97.5 % quantile
    of the same with Beta(9, 2) and Beta(4, 7): worked exactly from scipy's pmfs, within the draws' error."""
    x, y = np.array([1] * 8 + [0] * 2, float), np.array([1] * 3 + [0] * 7, float)
    r = stratified_correction(0.6, [(x, 120)], [(y, 80)], n_draws=40000, rng=np.random.default_rng(1))
    assert r.point.theta == pytest.approx(0.6 * 0.8 + 0.4 * 0.3)
    low = _convolved_quantile([(8, 110, 8, 3), (3, 70, 3, 8), 200], 0.025)
    high = _convolved_quantile([(8, 110, 9, 2), (3, 70, 4, 7), 200], 0.975)
    assert r.theta_ci == pytest.approx((low, high), abs=0.0051)  # one item of 200, the draws' error


def _table(tmp: Path) -> Path:
    rng = np.random.default_rng(3)
    rows = []
    for i in range(120):
        score = int(rng.integers(1, 11))
        verdict = "PASSED" if score >= 6 else "FAILED"
        rows.append({"id": f"q{i}", "system": "s", "judge": "j", "verdict": verdict, "score": score})
        rows[-1].update({"topic": "ab"[i % 2], "input": f"question {i}", "output": f"answer {i}"})
    t = tmp / "t.csv"
    pd.DataFrame(rows).to_csv(t, index=False)
    return t


@pytest.mark.parametrize("by", ["score", "topic"])
def test_a_table_drawn_by_strata_keeps_each_rows_stratum_and_its_size(tmp_path, by):
    """The table's items drawn by score bands or by a column: each key row names its stratum and how many items of
    its pile the stratum holds (counted from the CSV), every stratum gets its share (at least 3), and a rater who
    agrees with the judge gives the judge's own pass share as theta, counted from the CSV."""
    t = _table(tmp_path)
    d = tmp_path / "d"
    assert main(["import", "table", str(t), "--run-dir", str(d)]) == 0
    data = load_dataset(d)
    write_sample(draw_strata(data, 5, 0, by, d), d)
    key = read_key(d)
    src = pd.read_csv(t)
    src["pile"] = src.verdict.str.lower()
    if by == "topic":
        src["stratum"] = src.topic
    else:
        src["stratum"] = ""
        for _, g in src.groupby("pile"):
            src.loc[g.index, "stratum"] = score_bands(g.score.to_numpy(float))
    sizes = src.groupby(["pile", "stratum"]).size()
    got = key.groupby(["pile", "stratum"]).agg(n=("blind_id", "size"), size=("stratum_size", "first"))
    assert got["size"].to_dict() == sizes.to_dict()
    for pile, g in got.groupby(level="pile"):
        assert g.n.tolist() == allocate_strata(sizes[pile].tolist(), 5)
    agree = key.set_index("blind_id").critic_verdict.eq("PASSED").astype(float)
    table = correction_table(data, key, {"judge-like": agree}, n_boot=400, seed=0)
    assert table.theta.iloc[0] == pytest.approx((src.verdict == "PASSED").mean())
    assert table.ci_low.iloc[0] <= table.theta.iloc[0] <= table.ci_high.iloc[0]
    with pytest.raises(CalibrationError, match="fiducial"):
        correction_table(data, key, {"judge-like": agree}, n_boot=100, seed=0, interval="jeffreys")
    with pytest.raises(CalibrationError, match="superpopulation"):
        correction_table(data, key, {"judge-like": agree}, n_boot=100, seed=0, population="superpopulation")


def test_strata_need_a_score_or_a_column_the_dataset_kept(tmp_path):
    t = _table(tmp_path)
    d = tmp_path / "d"
    assert main(["import", "table", str(t), "--run-dir", str(d)]) == 0
    data = load_dataset(d)
    with pytest.raises(CalibrationError, match="no such column"):
        check_strata(data, "colour", d)
    with pytest.raises(CalibrationError, match="needs 'score' or a column"):
        check_strata(data, " ", d)
    src = pd.read_csv(t).drop(columns=["score"])
    src.to_csv(tmp_path / "u.csv", index=False)
    assert main(["import", "table", str(tmp_path / "u.csv"), "--run-dir", str(tmp_path / "u")]) == 0
    with pytest.raises(CalibrationError, match="no numeric score"):
        check_strata(load_dataset(tmp_path / "u"), "score", tmp_path / "u")


def _run(argv, capsys):
    capsys.readouterr()
    rc = main([*map(str, argv)])
    out = capsys.readouterr()
    return rc, out.out.splitlines(), out.err.splitlines()


def _rate_like_truth(d: Path, src: pd.DataFrame, tmp: Path) -> pd.DataFrame:
    """ann's ratings of the sample: the table's hidden truth column, read from the CSV by each row's item."""
    key = pd.read_csv(d / "calibration" / "key.csv", dtype={"level": str})
    truth = src.set_index("id").truth.reindex(key.level).to_numpy()
    f = tmp / "ann.csv"
    pd.DataFrame({"blind_id": key.blind_id, "verdict": truth}).to_csv(f, index=False)
    assert main(["ratings", "import", str(f), "--run-dir", str(d), "--rater", "ann"]) == 0
    return key


def test_vocab_audit_draws_by_strata_then_corrects_compares_and_slices_by_them(tmp_path, capsys):
    """The documented flow: `vocab audit t.csv --out d --raters ann --strata score` prints each pile's strata
    (their items and rows, counted from the CSV), ann's hand-in, then `vocab audit d` a corrected rate per cell and
    `vocab compare d --json` their difference; --by on a first call draws by slice (each slice a cell of --per-pile
    rows a pile), and a stratified sample slices by its own column only."""
    rng = np.random.default_rng(4)
    rows = []
    for system in ("base", "best"):
        for i in range(150):
            score = int(rng.integers(1, 11))
            truth = "PASSED" if rng.random() < score / 10 else "FAILED"
            rows.append({"id": f"{system}-{i}", "system": system, "judge": "j", "score": score, "truth": truth,
                         "verdict": "PASSED" if score >= 5 else "FAILED", "topic": "abc"[i % 3],
                         "input": f"q{i}", "output": f"{system} answer {i}"})  # fmt: skip
    src = pd.DataFrame(rows)
    src.to_csv(tmp_path / "t.csv", index=False)
    d = tmp_path / "d"
    rc, out, err = _run(["audit", tmp_path / "t.csv", "--out", d, "--raters", "ann", "--strata", "score"], capsys)
    assert rc == 0, err
    lines = [line for line in out if line.startswith("strata base → j PASSED")]
    passed = src[(src.system == "base") & (src.verdict == "PASSED")]
    bands = pd.Series(score_bands(passed.score.to_numpy(float))).value_counts()
    assert len(lines) == 1 and all(f"{name} {n} items" in lines[0] for name, n in bands.items()), (lines, bands)
    assert any(line.startswith("blind sample:") and "strata of score" in line for line in out)
    key = _rate_like_truth(d, src, tmp_path)
    base_passed = key[(key.cell == "base__j") & (key.pile == "passed")]
    assert base_passed.groupby("stratum").stratum_size.first().to_dict() == bands.to_dict()
    rc, out, err = _run(["audit", d], capsys)
    assert rc == 0, err
    heads = [line for line in out if " judged by " in line]
    assert len(heads) == 2 and all("against ann's blind ratings" in h for h in heads), out
    assert "Drawn by strata: each pile's rows were drawn stratum by stratum (bands of the judge's score)" in "\n".join(
        out
    )
    # what reads each pile as drawn whole says it cannot: the stopping rule, the gate's --anytime, the planner
    rc, out, _ = _run(["audit", d, "--target-half-width", "0.1"], capsys)
    stops = [line for line in out if line.startswith("stopping ")]
    assert (
        rc == 0
        and len(stops) == 2
        and all("no anytime-valid interval for a sample drawn by strata" in s for s in stops)
    )
    rc, out, _ = _run(["gate", d, "--min-rate", "0", "--anytime"], capsys)
    assert rc == 1 and all("anytime-valid lower bound undefined" in line for line in out), out
    rc, _, err = _run(["plan", d, "--half-width", "0.1"], capsys)
    assert rc == 2 and len(err) == 1 and "plans a sample drawn per pile" in err[0], err
    rc, out, err = _run(["compare", d, "--json"], capsys)
    assert rc == 0, err
    import json

    got = json.loads("\n".join(out))
    (pair,) = got["comparisons"]
    assert pair["ci_low"] <= pair["difference"] <= pair["ci_high"]
    # slicing a sample drawn by score bands by another column would mix rows drawn at different rates
    for cmd in (["compare", d, "--by", "topic"], ["audit", d, "--by", "topic"], ["audit", d, "--by", "score"]):
        rc, _, err = _run(cmd, capsys)
        assert rc == 2 and len(err) == 1 and "drawn by bands of the judge's score" in err[0], (cmd, err)
    # a pilot extends piles drawn whole; the audit's score curve is drawn (score bands never split a score)
    rc, _, err = _run(["sample", "--run-dir", d, "--allocation", "pilot", "--budget", "60", "--rater", "ann"], capsys)
    assert rc == 2 and len(err) == 1 and "a pilot allocation extends a sample drawn per pile" in err[0], err
    assert len(pd.read_csv(d / "calibration" / "key.csv")) == len(key)
    assert main(["report", str(d), "--out", str(tmp_path / "r")]) == 0
    assert "people's pass share at each score" in (tmp_path / "r" / "report.md").read_text()
    # --strata again on the kept sample, another one: refused; the same: kept
    rc, _, err = _run(["audit", d, "--strata", "topic"], capsys)
    assert rc == 2 and "applies on the first call" in err[0], err
    # --by on a first call: each slice x pile gets --per-pile rows (or all it holds), counted from the CSV
    d2 = tmp_path / "d2"
    rc, out, err = _run(["audit", tmp_path / "t.csv", "--out", d2, "--raters", "ann", "--by", "topic", "--per-pile",
                         "6"], capsys)  # fmt: skip
    assert rc == 0, err
    key2 = pd.read_csv(d2 / "calibration" / "key.csv", dtype={"level": str, "stratum": str})
    sizes = src.assign(pile=src.verdict.str.lower(), cell=src.system + "__j").groupby(["cell", "pile", "topic"]).size()
    drawn = key2.groupby(["cell", "pile", "stratum"]).size()
    assert drawn.to_dict() == {k: min(6, n) for k, n in sizes.items()}
    key2 = _rate_like_truth(d2, src, tmp_path)
    rc, out, err = _run(["audit", d2, "--by", "topic"], capsys)
    assert rc == 0 and any(line.startswith("slices by topic") for line in out), (out, err)
    # rows at one score were drawn at per-topic rates: the report reads no curve from them, and says why
    assert main(["report", str(d2), "--out", str(tmp_path / "r2")]) == 0
    md = (tmp_path / "r2" / "report.md").read_text()
    assert "the sample was drawn by strata of topic" in md and "people's pass share at each score" not in md
    # bob rates every row but one stratum's: that cell gets no rate, and the audit says which stratum
    skip = key2[(key2.cell == "base__j") & (key2.pile == "passed") & (key2.stratum == "b")]
    rest = key2[~key2.blind_id.isin(skip.blind_id)]
    truth = src.set_index("id").truth.reindex(rest.level).to_numpy()
    pd.DataFrame({"blind_id": rest.blind_id, "verdict": truth}).to_csv(tmp_path / "bob.csv", index=False)
    assert (
        main(["ratings", "import", str(tmp_path / "bob.csv"), "--run-dir", str(d2), "--rater", "bob", "--partial"]) == 0
    )
    os.remove(d2 / "calibration" / "ratings_ann.csv")
    rc, out, err = _run(["audit", d2], capsys)
    said = f"base → j: no rate yet: bob has rated none of the {len(skip)} rows of its PASSED pile's stratum b"
    assert rc == 0 and any(line.startswith(said) for line in out), out
    assert not any(line.startswith("base judged by j") for line in out)


@pytest.mark.parametrize(
    "extra, words",
    [
        (["--strata", "score", "--allocation", "pilot", "--budget", "40"], "--strata shares each pile's"),
        (["--by", "topic", "--allocation", "proportional", "--budget", "40"], "--by on a first call draws"),
        (["--strata", "score", "--by", "topic"], "--by 'topic' slices a sample drawn by strata of 'topic' only"),
        (["--strata", "score", "--population", "superpopulation"], "leave out --population"),
        (["--strata", "colour"], "--strata 'colour': the dataset kept no such column"),
        (["--strata", ""], "needs 'score' or a column"),
    ],
)
def test_strata_refused_in_one_line_with_nothing_kept(tmp_path, capsys, extra, words):
    t = _table(tmp_path)
    rc, _, err = _run(["audit", t, "--out", tmp_path / "d", "--raters", "ann", *extra], capsys)
    assert rc == 2 and len(err) == 1 and words in err[0], err
    assert not (tmp_path / "d").exists()


def test_strata_on_a_study_run_is_refused(tmp_path, capsys):
    import shutil

    run = tmp_path / "reference"
    ref = Path(__file__).resolve().parents[2] / "data" / "runs" / "reference"
    shutil.copytree(ref, run, ignore=shutil.ignore_patterns("notebooks", "figures", "calibration"))
    before = sorted(p.name for p in run.iterdir())
    rc, _, err = _run(["audit", run, "--strata", "score"], capsys)
    assert rc == 2 and len(err) == 1 and "seed 000's design" in err[0], err
    assert sorted(p.name for p in run.iterdir()) == before


def test_two_judges_of_one_sample_drawn_by_strata_are_compared_independently(tmp_path, capsys):
    """Two judges scored the same outputs; drawn by strata, their rows are no simple random sample of each pile, so
    `vocab compare` compares them independently (paired: false) and --paired says why, in one line."""
    import json

    rng = np.random.default_rng(5)
    rows = []
    for i in range(80):
        truth = rng.random() < 0.5
        for judge, noise in (("j1", 2), ("j2", 4)):
            score = int(np.clip(round(5 + (3 if truth else -3) + rng.normal(0, noise)), 0, 10))
            rows.append({"id": f"o{i}", "system": "s", "judge": judge, "score": score, "input": f"q{i}",
                         "output": f"answer {i}", "truth": "PASSED" if truth else "FAILED",
                         "verdict": "PASSED" if score >= 5 else "FAILED"})  # fmt: skip
    src = pd.DataFrame(rows)
    src.to_csv(tmp_path / "t.csv", index=False)
    d = tmp_path / "d"
    rc, _, err = _run(["audit", tmp_path / "t.csv", "--out", d, "--raters", "ann", "--strata", "score"], capsys)
    assert rc == 0, err
    key = pd.read_csv(d / "calibration" / "key.csv", dtype={"level": str})
    truth = src.drop_duplicates("id").set_index("id").truth.reindex(key.level).to_numpy()
    pd.DataFrame({"blind_id": key.blind_id, "verdict": truth}).to_csv(tmp_path / "ann.csv", index=False)
    assert main(["ratings", "import", str(tmp_path / "ann.csv"), "--run-dir", str(d), "--rater", "ann"]) == 0
    rc, out, err = _run(["compare", d, "--json"], capsys)
    assert rc == 0, err
    (pair,) = json.loads("\n".join(out))["comparisons"]
    assert pair["paired"] is False
    rc, _, err = _run(["compare", d, "--a", "j1", "--b", "j2", "--paired"], capsys)
    assert rc == 2 and len(err) == 1 and "drawn by strata: --paired needs each pile drawn whole" in err[0], err


def test_a_refused_strata_keeps_the_audit_already_there(tmp_path, capsys):
    """`vocab audit FILE --out DIR` into a directory an earlier audit made: a refusal leaves it, ratings and all."""
    t = _table(tmp_path)
    d = tmp_path / "d"
    assert main(["audit", str(t), "--out", str(d), "--raters", "ann", "--strata", "score"]) == 0
    before = sorted(str(p.relative_to(d)) for p in d.rglob("*"))
    for extra in (["--strata", "topic"], ["--strata", "nosuch"], ["--by", "nosuch"]):
        rc, _, err = _run(["audit", t, "--out", d, "--raters", "ann", *extra], capsys)
        assert rc == 2 and len(err) == 1, (extra, err)
        assert sorted(str(p.relative_to(d)) for p in d.rglob("*")) == before, extra
