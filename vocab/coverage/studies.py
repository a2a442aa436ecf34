"""Two studies with the simulator: a blind rater's own error, and the loop's retry structure against the
failed pile's weights."""

from __future__ import annotations

import numpy as np
import pandas as pd

from vocab import stats
from vocab.coverage.clustered import clustered_shares, simulate_clustered
from vocab.coverage.simulate import simulate_studies, study_piles


def rater_error_table(
    *,
    errors=(0.0, 0.05, 0.1, 0.2),
    theta: float = 0.5,
    q1: float = 0.8,
    q0: float = 0.8,
    attempts: int = 400,
    piles: int = 10,
    sims: int = 2000,
    seed: int = 0,
):
    """How a blind rater's own error rate e biases the corrected rate, and what inverting a known e does.

    The rater flips each verdict with probability e, so its pass share in a pile is e + (1 - 2e) times the
    true one; knowing e (for instance from its disagreement with the script on the decidable checks), each
    share is inverted as (share - e) / (1 - 2e), clipped to [0, 1], before theta is formed.
    """

    rows = []
    for e in errors:
        rng = stats.stream(seed, "rater_error", float(e))  # 0 and 0.0 name the same row
        st = simulate_studies(theta, q1, q0, attempts, piles, sims, rng, rater_error=e)
        _, a, _, b = study_piles(st).shares()
        d = st.defined
        with np.errstate(invalid="ignore", divide="ignore"):
            naive = st.p * a + (1 - st.p) * b
            if e < 0.5:
                a_c, b_c = stats.invert_flip_rate(a, e), stats.invert_flip_rate(b, e)
                fixed = st.p * a_c + (1 - st.p) * b_c
            else:
                fixed = np.full_like(naive, np.nan)
        rows.append(
            {
                "rater_error": e,
                "theta": theta,
                "q1": q1,
                "q0": q0,
                "piles": piles,
                "bias": float(np.mean(naive[d]) - theta),
                "bias_corrected_for_e": float(np.mean(fixed[d]) - theta),
                "rmse": float(np.sqrt(np.mean((naive[d] - theta) ** 2))),
                "rmse_corrected_for_e": float(np.sqrt(np.mean((fixed[d] - theta) ** 2))),
                "sims": sims,
            }
        )
    return pd.DataFrame(rows)


def retry_weighting_table(
    *,
    theta: float = 0.4,
    q1: float = 0.8,
    q0: float = 0.8,
    levels: int = 140,
    max_attempts: int = 3,
    piles: int = 10,
    spread: float = 2.0,
    sims: int = 2000,
    seed: int = 0,
):
    """The study's retry structure, to check seed 000's failed-pile weights.

    Each level has its own difficulty: its attempts are good with probability theta_l ~ Beta(theta·s,
    (1 − theta)·s) (``spread`` s: smaller is more varied). A level is attempted until the critic passes or
    ``max_attempts`` attempts fail. The failed pile draws ``piles`` levels with a failed attempt, one failed
    attempt each; weighted, each counts as its level's number of failed attempts. The target is each
    study's own share of good attempts. Returns the mean bias of theta with and without the weights.
    """

    st = simulate_clustered(
        theta,
        q1,
        q0,
        levels=levels,
        max_attempts=max_attempts,
        piles=piles,
        spread=spread,
        sims=sims,
        rng=np.random.default_rng(seed),
    )
    # (the simulator's stream from the seed alone, not stats.stream: that would move every committed grid point)
    p, truth, defined = st.p, st.truth, st.defined
    _, a, nb, b_weighted = clustered_shares(st)
    with np.errstate(invalid="ignore", divide="ignore"):
        b_plain = np.nansum(st.failed, axis=1) / nb
    rows = []
    for name, b in (("weighted (seed 000)", b_weighted), ("unweighted", b_plain)):
        est = p * a + (1 - p) * b
        rows.append(
            {
                "failed_pile": name,
                "theta": theta,
                "spread": spread,
                "levels": levels,
                "piles": piles,
                "bias": float(np.mean(est[defined] - truth[defined])),
                "rmse": float(np.sqrt(np.mean((est[defined] - truth[defined]) ** 2))),
                "sims": sims,
            }
        )
    return pd.DataFrame(rows)
