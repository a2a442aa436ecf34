"""The study simulator: seeded, unbiased where it should be, and the seed interval's coverage measured."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest

from vocab.simulate import coverage, seed_interval, simulate_studies


def test_seeded_and_deterministic():
    a = coverage("seed", theta=0.4, q1=0.8, q0=0.7, attempts=200, piles=10, sims=300, seed=1, n_boot=200)
    b = coverage("seed", theta=0.4, q1=0.8, q0=0.7, attempts=200, piles=10, sims=300, seed=1, n_boot=200)
    assert a == b


def test_critic_pass_rate_and_piles_follow_the_truth():
    rng = np.random.default_rng(0)
    st = simulate_studies(0.3, 0.9, 0.6, 5000, 10, 200, rng)
    assert st.p.mean() == pytest.approx(0.3 * 0.9 + 0.7 * 0.4, abs=0.005)
    # a perfect rater on the passed pile recovers the critic's precision theta*q1/p
    assert np.nanmean(st.passed) == pytest.approx(0.27 / 0.55, abs=0.03)


def test_large_piles_cover_close_to_nominal():
    c = coverage("seed", theta=0.5, q1=0.8, q0=0.8, attempts=20_000, piles=150, sims=400, seed=0, n_boot=400)
    assert 0.91 <= c.coverage <= 0.99 and abs(c.bias) < 0.01


def test_the_study_regime_under_covers():
    """Ten-row piles with p held fixed: the nominal 95 % interval covers well under 95 % of the time."""
    c = coverage("seed", theta=0.5, q1=0.8, q0=0.8, attempts=400, piles=10, sims=1500, seed=0, n_boot=500)
    assert c.coverage < 0.92 and c.defined == 1500


def test_short_piles_are_resampled_within_their_own_size():
    rng = np.random.default_rng(2)
    st = simulate_studies(0.5, 1.0, 0.02, 30, 10, 50, rng)  # the critic fails almost nothing
    est, lo, hi = seed_interval(st, 200, rng)
    short = st.defined & np.isnan(st.failed[:, -1])
    assert short.any() and np.all((lo[short] <= est[short] + 1e-12) & (est[short] <= hi[short] + 1e-12))


def test_cli_and_bad_input():
    cmd = [
        sys.executable,
        "-m",
        "vocab.cli",
        "coverage",
        "--method",
        "seed",
        "--piles",
        "10",
        "--theta",
        "0.5",
        "--q1",
        "0.8",
        "--q0",
        "0.8",
        "--attempts",
        "100",
        "--sims",
        "200",
        "--seed",
        "0",
        "--n-boot",
        "200",
        "--json",
    ]
    out = json.loads(subprocess.run(cmd, capture_output=True, text=True, check=True).stdout)
    assert {"coverage", "mean_width", "bias", "sims"} <= set(out) and out["sims"] == 200
    bad = subprocess.run(cmd[:-1] + ["--theta", "1.5", "--json"], capture_output=True, text=True)
    assert bad.returncode == 2 and "theta must lie in [0, 1]" in bad.stderr
