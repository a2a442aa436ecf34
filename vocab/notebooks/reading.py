"""The closing "Reading it" of the agreement notebook (04), written from its computed tables: every number in it
comes from them, and where a statistic is undefined it says why. (The correction's is
:func:`vocab.explore.reading`.)"""

from __future__ import annotations

import pandas as pd


def _f(x: float, digits: int = 2) -> str:
    return "undefined" if pd.isna(x) else f"{x:.{digits}f}"


def agreement_reading(kappa: pd.DataFrame, passes: dict[str, int], n_rows: int, script_agreement=None) -> str:
    """Markdown: each pair's agreement with its denominators, κ and AC1 with their intervals (and why κ is
    undefined where it is), any rater whose verdicts do not vary, and each rater's agreement with the script."""
    out = []
    for name, k in sorted(passes.items()):
        if k in (0, n_rows):
            out.append(
                f"- **{name} passed {'none' if k == 0 else 'every one'} of the {n_rows} rows**: its verdict does not "
                "vary, so chance agreement with it is all the agreement there is — κ with it is 0 or undefined by "
                "construction, not a finding about the other rater."
            )
    for r in kappa.itertuples():
        share = f"{100 * r.agree / r.n:.0f} %" if r.n else "–"
        head = f"- **{r.rater_a} and {r.rater_b}** ({r.variant}): agree on {r.agree} of {r.n} rows ({share})"
        if pd.isna(r.kappa):
            why = (
                "; κ is undefined: on these rows both gave one verdict to every row, so the agreement expected by "
                "chance is all of it and there is no variation left to measure"
            )
        else:
            why = f"; κ = {_f(r.kappa)} ({_f(r.ci_low)} to {_f(r.ci_high)})"
        out.append(f"{head}{why}; Gwet's AC1 = {_f(r.ac1)} ({_f(r.ac1_low)} to {_f(r.ac1_high)}), which stays defined.")
    if script_agreement is not None and len(script_agreement):
        for r in script_agreement.itertuples():
            out.append(
                f"- **{r.rater} against the script** (which knows the answer): check 2 right on {r.c2} of {r.n} rows, "
                f"check 3 on {r.c3} of {r.n}."
            )
    out.append("\nWhat the study concludes from this: [docs/study.md](../docs/study.md).")
    return "\n".join(out)
