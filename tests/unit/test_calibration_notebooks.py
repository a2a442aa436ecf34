"""Notebooks 02, 03, 04 and 06 on a synthetic run directory whose true pass rate is known.

Each attempt is secretly good or bad; the critic passes good ones with probability 0.9 and bad ones with
0.3, so its raw rate overstates the truth. A perfect blind rater must pull the corrected rate back to the
truth, and the script must agree with it on checks 2 and 3 (a bad sentence lacks a target word).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from tests.nbtext import outputs_text
from vocab.calibration import read_key
from vocab.estimates import CORRECTION_COLUMNS, KAPPA_COLUMNS
from vocab.nb import execute
from vocab.records import JsonlWriter

NB = Path(__file__).resolve().parents[2] / "notebooks"
SETTINGS = {"require_seed_word": False, "max_sentence_words": 16}
GOOD, BAD = "A stone fell on the notes {}.", "A stone fell on {}."


def synthetic_run(root: Path, levels: int = 80, seed: int = 1) -> tuple[Path, dict[str, float]]:
    rng = np.random.default_rng(seed)
    d = root / "run"
    d.mkdir()
    cells = ["a__a", "a__b"]
    manifest = {
        "run_id": "synthetic",
        "cells": cells,
        "loop": {"max_attempts": 3},
        "status": "complete",
        "rubric": {"version": "1.0", "hash": "0" * 64},
        "design": {"levels": list(range(1, levels + 1)), "generator_version": "1.0.0"},
        "models": {"a": {"request_model": "a"}, "b": {"request_model": "b"}},
    }
    (d / "manifest.json").write_text(json.dumps(manifest))
    lw = JsonlWriter(d / "levels.jsonl")
    for n in range(1, levels + 1):
        lw.write({"level": n, "tier": 1, "seed_word": "stones", "words": ["stone", "notes"], "settings": SETTINGS})
    lw.close()
    truth = {}
    for cell in cells:
        good_rate = 0.25 if cell == "a__a" else 0.45
        w = JsonlWriter(d / f"results_{cell}.jsonl")
        good_n = total = 0
        for lv in range(1, levels + 1):
            for n in range(1, 4):
                good = rng.random() < good_rate
                passed = rng.random() < (0.9 if good else 0.3)
                tag = f"{cell} {lv} {n}"
                sentence = (GOOD if good else BAD).format(tag.replace("__", " ").replace(" ", "x"))
                w.write(
                    {
                        "run_id": "synthetic", "cell": cell, "writer": "a", "critic": cell[-1], "level": lv,
                        "tier": 1, "attempt": n, "seed_word": "stones", "words": ["stone", "notes"],
                        "settings": SETTINGS, "sentence": sentence, "answer_key": ["stone", "notes"],
                        "checks": {}, "reasons": {}, "verdict": "PASSED" if passed else "FAILED",
                        "usage": {}, "started": "t", "finished": "t",
                    }
                )  # fmt: skip
                good_n += good
                total += 1
                if passed:
                    break
        w.close()
        truth[cell] = good_n / total
    (d / "errors.jsonl").write_text("")
    return d, truth


def rate(sheet: pd.DataFrame, flip: float, seed: int) -> pd.DataFrame:
    """A rater that passes good sentences and fails bad ones on check 2, flipping a share ``flip``."""
    rng = np.random.default_rng(seed)
    rows = []
    for r in sheet.itertuples():
        good = "notes" in r.sentence
        if rng.random() < flip:
            good = not good
        row = {"blind_id": r.blind_id, **{f"c{i}": "PASSED" for i in range(1, 13)}}
        if not good:
            row["c2"] = "FAILED"
        rows.append(row)
    return pd.DataFrame(rows)


@pytest.fixture(scope="module")
def chain(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("chain")
    d, truth = synthetic_run(tmp)
    execute(NB / "02_sample.ipynb", {"run_dir": str(d), "per_pile": 15, "seed": 3}, tmp / "02.ipynb")
    sheet = pd.read_json(d / "calibration" / "blind_sheet.jsonl", lines=True)
    rate(sheet, 0.0, 0).to_csv(d / "calibration" / "ratings_oracle.csv", index=False)
    rate(sheet, 0.2, 1).to_csv(d / "calibration" / "ratings_noisy.csv", index=False)
    from vocab.calibration import script_ratings

    script_ratings(sheet).to_csv(d / "calibration" / "ratings_script.csv", index=False)
    params = {"run_dir": str(d), "raters": "oracle,noisy", "n_boot": 400, "seed": 0, "output_dir": str(d / "analysis")}
    execute(NB / "03_correct.ipynb", params, tmp / "03.ipynb")
    execute(NB / "04_agreement.ipynb", params, tmp / "04.ipynb")
    execute(NB / "06_figures.ipynb", {"run_dir": str(d), "figures_dir": str(tmp / "fig")}, tmp / "06.ipynb")
    return d, truth, tmp


def test_02_writes_a_weighted_stratified_sample(chain):
    d, _, _ = chain
    key = read_key(d)
    assert list(key.columns) == ["blind_id", "cell", "level", "attempt", "critic_verdict", "pile", "weight",
                                 "quotes_judge"]  # fmt: skip
    assert (key.groupby(["cell", "pile"]).size() == 15).all()
    assert set(key[key.pile == "passed"].weight) == {1} and key[key.pile == "failed"].weight.max() > 1


def test_03_corrects_the_raw_rate_towards_the_truth(chain):
    d, truth, _ = chain
    corr = pd.read_csv(d / "analysis" / "correction.csv")
    assert list(corr.columns) == CORRECTION_COLUMNS
    assert set(corr.rater) == {"oracle", "oracle+script", "noisy", "noisy+script"}
    oracle = corr[corr.rater == "oracle"].set_index("cell")
    for cell, t in truth.items():
        r = oracle.loc[cell]
        assert r.p > t + 0.05  # the critic overstates ...
        assert r.ci_low <= t <= r.ci_high  # ... and the perfect rater's interval covers the truth
        assert abs(r.theta - t) < abs(r.p - t)
        assert r.shift_points == pytest.approx(100 * (r.theta - r.p), abs=1e-3)
    # the script decides check 2 exactly like the oracle: the +script variant of the oracle has the same estimates
    # (its interval draws from a stream of its own, so a randomised interval's ends differ)
    estimates = ["cell", "p", "a", "b", "theta", "shift_points", "q1", "q0"]
    pd.testing.assert_frame_equal(
        corr[corr.rater == "oracle"][estimates].reset_index(drop=True),
        corr[corr.rater == "oracle+script"][estimates].reset_index(drop=True),
    )
    # ... and repairs the noisy rater's check-2 flips
    assert (d / "analysis" / "correction_seed.csv").exists() and (d / "analysis" / "check_audit.csv").exists()
    bounds = pd.read_csv(d / "analysis" / "abandoned_bounds.csv")  # no level was abandoned: bounds = theta
    assert (bounds.abandoned_levels == 0).all() and np.allclose(bounds.theta_if_failed, bounds.theta_if_passed)
    noisy_fix = corr[corr.rater == "noisy+script"].set_index("cell").theta
    assert np.allclose(noisy_fix.to_numpy(), oracle.theta.to_numpy(), atol=1e-9)


def test_04_kappa_checks_and_adjudication(chain):
    d, _, tmp = chain
    kappa = pd.read_csv(d / "analysis" / "kappa.csv")
    assert list(kappa.columns) == KAPPA_COLUMNS
    raw, fixed = kappa.set_index("variant").loc["raw"], kappa.set_index("variant").loc["+script"]
    assert raw.kappa < 0.9 and fixed.kappa == pytest.approx(1.0) and fixed.agree == fixed.n == 60
    assert raw.ac1_low <= raw.ac1 <= raw.ac1_high and fixed.ac1 == pytest.approx(1.0)
    overall = pd.read_csv(d / "analysis" / "agreement.csv").set_index("statistic")
    assert list(overall.index) == ["Krippendorff's alpha", "Gwet's AC1"] and (overall.raters == 2).all()
    assert (overall.ci_low <= overall.value).all() and (overall.value <= overall.ci_high).all()
    # with two raters, AC1 across raters is the pairwise AC1 of the raw variant
    assert overall.loc["Gwet's AC1", "value"] == pytest.approx(raw.ac1, abs=1e-6)
    checks = pd.read_csv(d / "analysis" / "checks.csv")
    assert list(checks.columns[:5]) == ["check", "name", "kind", "n", "agree"]
    assert {"fails_oracle", "fails_noisy"} <= set(checks.columns)
    c2 = checks.set_index("check").loc[2]
    assert c2.agree < c2.n and checks.set_index("check").loc[5].agree == c2.n
    # the adjudication's summary, as printed: the rows where the raters split on check 2, and who matched the script
    text = outputs_text(tmp / "04.ipynb")
    assert "matched" in text and "oracle" in text and "noisy" in text


def test_06_writes_every_figure_byte_stably(chain, tmp_path):
    d, _, tmp = chain
    names = [
        "06_raw_vs_corrected",
        "06_sensitivity_specificity",
        "06_check_agreement",
        "06_rank_sets",
        "06_differences",
    ]
    first = {p.name: p.read_bytes() for p in (tmp / "fig").iterdir()}
    assert set(first) == {f"{n}.{e}" for n in names for e in ("png", "pdf")}
    execute(NB / "06_figures.ipynb", {"run_dir": str(d), "figures_dir": str(tmp_path)}, tmp_path / "06.ipynb")
    assert {p.name: p.read_bytes() for p in tmp_path.glob("06_*")} == first


def test_03_runs_with_seed_000s_interval(chain, tmp_path):
    """The parameter the notebook documents: `-p interval seed`, run on a copy of the run (the chain's files stay
    as the other tests read them). Its interval is checked against scipy's percentile bootstrap of the same two
    piles (each resampled on its own, weights travelling with their rows, p fixed): an independent implementation,
    so the match is to the resampling error of 4,000 draws, not to the digit."""
    import shutil

    from scipy.stats import bootstrap

    d, _, _ = chain
    run = tmp_path / "run"
    shutil.copytree(d, run)
    # seed 000's interval as published: infinite piles (its column, correction_seed.csv, is the superpopulation's)
    params = {"run_dir": str(run), "raters": "oracle", "n_boot": 4000, "seed": 0, "interval": "seed",
              "population": "superpopulation", "output_dir": str(run / "analysis")}  # fmt: skip
    execute(NB / "03_correct.ipynb", params, tmp_path / "03.ipynb")
    nb = json.loads((tmp_path / "03.ipynb").read_text())
    errors = [o for c in nb["cells"] for o in c.get("outputs", []) if o.get("output_type") == "error"]
    assert not errors
    corr = pd.read_csv(run / "analysis" / "correction.csv")
    assert corr.equals(pd.read_csv(run / "analysis" / "correction_seed.csv"))  # one method, one table
    key = read_key(run)
    ratings = pd.read_csv(run / "calibration" / "ratings_oracle.csv").set_index("blind_id")
    passes = ratings[[f"c{i}" for i in range(2, 13)]].eq("PASSED").all(axis=1)
    attempts = pd.concat(pd.read_json(f, lines=True) for f in sorted(run.glob("results_*.jsonl")))
    row = corr[corr.rater == "oracle"].set_index("cell")
    for cell, k in key.groupby("cell"):
        att = attempts[attempts.cell == cell].dropna(subset=["verdict"])
        p = float((att.verdict == "PASSED").mean())
        x = passes.loc[k[k.pile == "passed"].blind_id].to_numpy(float)
        fp = k[k.pile == "failed"]
        y, w = passes.loc[fp.blind_id].to_numpy(float), fp.weight.to_numpy(float)
        theta = p * x.mean() + (1 - p) * (y * w).sum() / w.sum()
        assert row.loc[cell, "p"] == pytest.approx(p, abs=1e-6)
        assert row.loc[cell, "theta"] == pytest.approx(theta, abs=1e-6)

        def statistic(xs, iy, p=p, y=y, w=w):
            iy = iy.astype(int)
            return p * xs.mean() + (1 - p) * (y[iy] * w[iy]).sum() / w[iy].sum()

        ref = bootstrap((x, np.arange(len(y))), statistic, n_resamples=4000, method="percentile", vectorized=False,
                        rng=np.random.default_rng(1))  # fmt: skip
        lo, hi = ref.confidence_interval
        assert row.loc[cell, "ci_low"] == pytest.approx(lo, abs=0.03)
        assert row.loc[cell, "ci_high"] == pytest.approx(hi, abs=0.03)


def test_the_default_interval_is_one_name_everywhere():
    from vocab.cli import build_parser
    from vocab.estimates import INTERVALS
    from vocab.stats import DEFAULT_INTERVAL

    assert INTERVALS[0] == DEFAULT_INTERVAL
    args = build_parser().parse_args(["coverage", "--theta", ".5", "--q1", ".8", "--q0", ".8"])
    assert args.method == DEFAULT_INTERVAL
    params = json.loads((NB / "03_correct.ipynb").read_text())["cells"][1]
    assert "parameters" in params["metadata"]["tags"]
    assert f'interval = "{DEFAULT_INTERVAL}"' in "".join(params["source"])
