"""Agreement between the raters and the critic: kappa and Gwet's AC1 with their intervals, per-check agreement,
script adjudication of the decidable checks, Krippendorff's alpha and AC1 across all raters with intervals."""

from __future__ import annotations

import numpy as np
import pandas as pd

from vocab import stats
from vocab.datasets.dataset import JudgeRubric
from vocab.raters.raters import rater_passes, rubric_of

# --- agreement and adjudication -------------------------------------------------------------------------


def kappa_table(
    ratings: dict[str, pd.DataFrame], script: pd.DataFrame | None, *, n_boot: int = stats.N_DRAWS, seed: int = 0
) -> pd.DataFrame:
    """Cohen's kappa and Gwet's AC1 on the overall verdict between every pair of non-script raters, raw and with
    checks 2 and 3 from the script, with percentile bootstrap intervals over rows. Each statistic of each pair
    and variant resamples from its own stream (:func:`vocab.stats.data_stream` of ``seed`` and the pair's own rows:
    their ids and verdicts, never the raters' names), so a pair's row does not depend on the other raters."""

    names = sorted(n for n in ratings if n != "script")
    rows = []
    for i, ra in enumerate(names):
        for rb in names[i + 1 :]:
            for variant in ("raw", "+script"):
                if variant == "+script" and script is None:
                    continue
                s = script if variant == "+script" else None
                pa, pb = rater_passes(ratings[ra], s), rater_passes(ratings[rb], s)
                ids = sorted(set(pa.index) & set(pb.index))
                if not ids:  # two people who labelled different items: nothing to agree on (no_overlap says so)
                    rows.append(
                        {
                            "rater_a": ra,
                            "rater_b": rb,
                            "variant": variant,
                            "n": 0,
                            "agree": 0,
                            **{c: float("nan") for c in KAPPA_COLUMNS[5:]},
                        }
                    )
                    continue
                x, y = pa.loc[ids].to_numpy(int), pb.loc[ids].to_numpy(int)
                # the pair's own rows (their ids, the two raters' verdicts in either order: both statistics are
                # symmetric), never their names
                content = (ids, *sorted((x, y), key=lambda v: v.tobytes()))
                k = stats.kappa_bootstrap(
                    x, y, n_resamples=n_boot, rng=stats.data_stream(seed, "kappa", variant, *content)
                )
                ac1 = stats.agreement_bootstrap(
                    np.vstack([x, y]),
                    stats.gwet_ac1,
                    n_resamples=n_boot,
                    rng=stats.data_stream(seed, "ac1", variant, *content),
                )
                rows.append(
                    {
                        "rater_a": ra,
                        "rater_b": rb,
                        "variant": variant,
                        "n": len(ids),
                        "agree": int((x == y).sum()),
                        "kappa": k.kappa,
                        "ci_low": k.ci_low,
                        "ci_high": k.ci_high,
                        "ac1": ac1.value,
                        "ac1_low": ac1.ci_low,
                        "ac1_high": ac1.ci_high,
                    }
                )
    return pd.DataFrame(rows, columns=KAPPA_COLUMNS)


def no_overlap(kappa: pd.DataFrame) -> str:
    """The sentence for the pairs of raters who rated no row in common ("" when every pair shares rows)."""
    pairs = sorted({f"{r.rater_a} and {r.rater_b}" for r in kappa.itertuples() if r.n == 0})
    if not pairs:
        return ""
    return (
        f"No rows in common, so no agreement measured: {'; '.join(pairs)} (people who labelled different "
        "items); the correction uses each person's rows, and the pooled rater all of them."
    )


KAPPA_COLUMNS = [
    "rater_a",
    "rater_b",
    "variant",
    "n",
    "agree",
    "kappa",
    "ci_low",
    "ci_high",
    "ac1",
    "ac1_low",
    "ac1_high",
]


def agreement_table(
    ratings: dict[str, pd.DataFrame], rubric: JudgeRubric | None = None, *, n_boot: int = stats.N_DRAWS, seed: int = 0
) -> pd.DataFrame:
    """Across all non-script raters (two or more) on the overall verdict: Krippendorff's alpha (nominal) and
    Gwet's AC1, each with a percentile bootstrap interval over rows. Where one verdict dominates, kappa and
    alpha collapse towards 0 (or below) even when raters mostly agree; AC1's chance agreement does not grow
    with the imbalance, so it stays near the raw agreement. Each statistic resamples from its own stream (``seed``,
    its name and the rows it resamples, not the raters' names)."""
    names = sorted(n for n in ratings if n != "script")
    passes = pd.DataFrame({n: rater_passes(ratings[n], rubric=rubric) for n in names}).dropna()
    data = passes.T.astype(float).to_numpy()
    rows = []
    for name, fn in (("Krippendorff's alpha", stats.krippendorff_alpha_nominal), ("Gwet's AC1", stats.gwet_ac1)):
        if passes.empty:  # no row rated by every rater (people who labelled different items): said, not computed
            rows.append(
                {
                    "statistic": name,
                    "raters": len(names),
                    "n": 0,
                    "agree_all": 0,
                    "value": float("nan"),
                    "ci_low": float("nan"),
                    "ci_high": float("nan"),
                }
            )
            continue
        # the raters' verdicts in a canonical order (both statistics are symmetric in the raters), never their names
        rows_ = sorted(data, key=lambda v: v.tobytes())
        rng = stats.data_stream(seed, "agreement", name, list(passes.index), *rows_)
        a = stats.agreement_bootstrap(data, fn, n_resamples=n_boot, rng=rng)
        rows.append(
            {
                "statistic": name,
                "raters": len(names),
                "n": a.n_units,
                "agree_all": int((passes.nunique(axis=1) == 1).sum()),
                "value": a.value,
                "ci_low": a.ci_low,
                "ci_high": a.ci_high,
            }
        )
    return pd.DataFrame(rows)


def checks_table(ratings: dict[str, pd.DataFrame], rubric: JudgeRubric | None = None) -> pd.DataFrame:
    """Per check (criterion of the rubric): the number of rows every non-script rater agrees on, and each
    rater's fails."""
    names = sorted(n for n in ratings if n != "script")
    rubric = rubric or rubric_of(ratings[names[0]])
    frames = {n: ratings[n].set_index("blind_id").sort_index() for n in names}
    ids = sorted(set.intersection(*(set(f.index) for f in frames.values()))) if frames else []
    rows = []
    for c in rubric.criteria:
        col = c.column
        values = pd.DataFrame({n: frames[n].loc[ids, col] for n in names})
        rows.append(
            {
                "check": int(c.id) if c.id.isdigit() else c.id,
                "name": c.name,
                "kind": c.kind,
                "n": len(ids),
                "agree": int((values.nunique(axis=1) == 1).sum()),
                **{f"fails_{n}": int((values[n] == "FAILED").sum()) for n in names},
            }
        )
    return pd.DataFrame(rows)


def script_adjudication(ratings: dict[str, pd.DataFrame], script: pd.DataFrame | None) -> pd.DataFrame:
    """Rows where the non-script raters disagree on check 2 or 3, and which of them matched the script
    (empty without a script rater)."""
    if script is None:
        return pd.DataFrame(columns=["check", "blind_id", "script", "matched_script"])
    names = sorted(n for n in ratings if n != "script")
    s = script.set_index("blind_id")
    rows = []
    for col in ("c2", "c3"):
        values = pd.DataFrame({n: ratings[n].set_index("blind_id")[col] for n in names}).dropna()
        disputed = values[values.nunique(axis=1) > 1]
        for bid, r in disputed.sort_index().iterrows():
            truth = s.loc[bid, col]
            rows.append(
                {
                    "check": int(col[1:]),
                    "blind_id": bid,
                    "script": truth,
                    **{n: r[n] for n in names},
                    "matched_script": ",".join(n for n in names if r[n] == truth),
                }
            )
    return pd.DataFrame(rows)
