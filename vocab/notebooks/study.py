"""The corrected rates and comparisons sections of docs/study.md, written from the reference run by the code that
`vocab compare` and `03_correct` run: every number in them is computed here from the committed run, and the page
holds what this writes (``tests/unit/test_study_page.py``).

    python -m vocab.notebooks.study          # print the sections
    python -m vocab.notebooks.study --write   # rewrite them in docs/study.md
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

from vocab.estimates.compare import comparisons
from vocab.estimates.compare_text import degenerate_text
from vocab.estimates.correct import corrected, variants
from vocab.estimates.what_if import abandoned_bounds
from vocab.raters.blind import blind_raters
from vocab.raters.loaded import load

ROOT = Path(__file__).resolve().parents[2]
RUN = ROOT / "data" / "runs" / "reference"
PAGE = ROOT / "docs" / "study.md"
BEGIN = "<!-- comparisons: written by python -m vocab.notebooks.study --write; do not edit by hand -->"
END = "<!-- end of comparisons -->"
CORRECTED_BEGIN = "<!-- corrected rates: written by python -m vocab.notebooks.study --write; do not edit by hand -->"
CORRECTED_END = "<!-- end of corrected rates -->"
MODELS = {"smollm2": "SmolLM2", "gemma3": "gemma"}


def _pts(x: float) -> str:
    return "undefined" if not np.isfinite(x) else f"{100 * x:+.0f}".replace("-", "−")


def _ci(lo: float, hi: float) -> str:
    return f"[{_pts(lo)}, {_pts(hi)}]"


def _cell(cell: str) -> str:
    writer, critic = cell.split("__")
    return f"{MODELS[writer]} → {MODELS[critic]}"


def section(run_dir: Path = RUN) -> str:
    """The section's Markdown, from the run's correction and comparisons under every rater variant."""
    loaded = load(run_dir)  # the run as vocab compare reads it, without the correction table it does not print
    raters = blind_raters(loaded.dir, read=loaded.ratings)
    script = loaded.ratings("script") if loaded.has("script") else None
    passes = variants(raters.ratings, script, loaded.data.rubric, raters.people)
    found = comparisons(loaded.data, loaded.drawn.key, passes)
    lead = raters.lead
    names = [lead, *sorted(v for v in found if v != lead)]
    flat = {v: degenerate_text(v, *found[v].tally) if found[v].tally else "" for v in names}
    out = []
    if raters.passed_over:
        out.append(
            f"**The default rater is {lead}**, the first whose verdicts vary (`vocab compare "
            f"{run_dir.relative_to(ROOT)}` prints its comparisons): {raters.passed_over.split(': ', 1)[1]}. Every "
            "rate corrected by a rater who "
            "gives every row one verdict is 0 (or 100 %) by construction, every difference between cells +0 and "
            "every leniency the judge's own pass rate: such a rater's rows below are shown marked, not read as "
            "findings."
        )
    # which writer is better: SmolLM2's writing minus gemma's, under each critic
    out.append("")
    rows, resolved = [], []
    for v in names:
        p = found[v].pairs.set_index(["a", "b"])
        cells = []
        for critic in ("gemma3", "smollm2"):
            r = p.loc[(f"gemma3__{critic}", f"smollm2__{critic}")]
            cells.append(f"{_pts(r.difference)} {_ci(r.ci_low, r.ci_high)}")
            if r.resolved:
                resolved.append((v, critic, r))
        rows.append(f"| {v}{' (passes nothing)' if flat[v] else ''} | {cells[0]} | {cells[1]} |")
    said = "resolved under " + ", ".join(sorted({v for v, _, _ in resolved})) if resolved else "not resolved"
    out += [
        f"**Which writer is better: {said}.** Under each critic, SmolLM2's writing minus gemma's (points, 95 %):",
        "",
        "| rater | under the gemma critic | under the SmolLM2 critic |",
        "|---|---|---|",
        *rows,
        "",
    ]
    p = found[lead].pairs.set_index(["a", "b"])
    gaps = [_pts(p.loc[(f"gemma3__{k}", f"smollm2__{k}")].raw_difference) for k in ("gemma3", "smollm2")]
    out.append(
        f"The critics' own gaps are {gaps[0]} (gemma) and {gaps[1]} (SmolLM2) points. With 10 + 10 rows a cell, "
        + ("no rater separates the writers." if not resolved else "the resolved differences are those named above.")
    )
    # which ranks hold
    out.append("")
    sets = {v: {r.cell: (int(r.rank_low), int(r.rank_high)) for r in found[v].ranks.itertuples()} for v in names}
    every = all(lo == 1 and hi == len(s) for s in sets.values() for lo, hi in s.values())
    n_pairs = sum(len(found[v].pairs) for v in names)
    alone = [(v, r) for v in names for r in found[v].pairs.itertuples() if r.resolved]
    if every:
        head = "**Which ranks hold: none.** Under every rater variant each of the four cells has the rank set 1–4"
    else:
        head = "**Which ranks hold.** " + "; ".join(
            f"under {v}'s ratings "
            + ", ".join(
                f"{_cell(k)} {lo}–{hi}" if lo != hi else f"{_cell(k)} {lo}" for k, (lo, hi) in sorted(s.items())
            )
            for v, s in sets.items()
        )
    out.append(
        head
        + f" (family-wise 95 % over the six pairs). Of the {n_pairs} pairwise differences ({len(names)} variants × "
        f"6 pairs) {len(alone)} {'is resolved on its' if len(alone) == 1 else 'are resolved on their'} own"
        + (
            ": "
            + "; ".join(
                f"by {v}'s ratings, {_cell(r.b)} minus {_cell(r.a)}: {_pts(r.difference)} {_ci(r.ci_low, r.ci_high)}"
                for v, r in alone
            )
            if alone
            else ""
        )
        + "."
    )
    # self-preference: the difference of differences of leniency, under the default rater first
    out.append("")
    did = {v: found[v].self_preference_did for v in names}
    d = did[lead]
    shown = d["ci_low"] > 0 or d["ci_high"] < 0
    out += [
        f"**Self-preference: {'shown' if shown else 'not shown'}** ({lead}'s ratings). Per writer, its own model's "
        f"critic minus the other model's critic, under {lead}'s ratings (points, 95 %):",
        "",
        "| writer | raw gap | corrected gap | leniency gap |",
        "|---|---|---|---|",
    ]
    for r in found[lead].self_preference.itertuples():
        out.append(
            f"| {MODELS[r.writer]} | {_pts(r.raw_gap)} | {_pts(r.difference)} {_ci(r.ci_low, r.ci_high)} | "
            f"{_pts(r.leniency_difference)} {_ci(r.leniency_ci_low, r.leniency_ci_high)} |"
        )
    others = [v for v in names if v != lead]
    out += [
        "",
        "A critic that favoured its own model would inflate its own writer more than the other, beyond any leniency "
        "it shows both: self-preference is the difference of differences of these leniency gaps (SmolLM2's plus "
        "gemma's), 0 when the critics differ in leniency alone. Under "
        f"{lead}'s ratings it is {_pts(d['leniency_did'])} points {_ci(d['ci_low'], d['ci_high'])} (raw "
        f"{_pts(d['raw'])}): "
        + (
            f"the interval holds 0, so self-preference is not shown; nor is its absence: the interval runs from "
            f"{_pts(d['ci_low'])} to {_pts(d['ci_high'])} points."
            if not shown
            else "the interval excludes 0."
        )
        + " Under the other variants: "
        + "; ".join(
            f"{v}{' (passes nothing)' if flat[v] else ''} {_pts(did[v]['leniency_did'])} "
            f"{_ci(did[v]['ci_low'], did[v]['ci_high'])}"
            for v in others
        )
        + ".",
    ]
    return "\n".join(out).strip() + "\n"


def _r(x: float) -> str:
    return f"{x:.2f}" if x >= 0.1 or x == 0 else f"{x:.3f}"


def corrected_section(run_dir: Path = RUN) -> str:
    """The corrected rates' section: the script's verdict on checks 2 and 3, each variant's theta and interval, the
    default rater's table and its abandoned-level bounds, from the run's correction (:func:`corrected`)."""
    c = corrected(run_dir)
    t, lead = c.table, c.lead
    s = c.script
    both = int(((s.c2 == "PASSED") & (s.c3 == "PASSED")).sum()) if s is not None else 0
    flat = t[t.theta == 0].groupby("rater").ci_high.agg(["min", "max"])
    scripted = flat.loc[[v for v in flat.index if v.endswith("+script")]]
    out = [
        f"The script passes checks 2 and 3 on only {both} of the {c.n_rows} sampled rows. So every `+script` variant "
        f"gives θ = 0, with intervals (the default, fiducial: see [statistics.md](statistics.md)) reaching "
        f"{_r(scripted['min'].min())}–{_r(scripted['max'].max())}. Every interval here is of the cell's own attempts "
        '(finite piles, `population = "finite"`, '
        "[statistics.md](statistics.md#what-theta-is-the-rate-of-finite-piles-or-a-superpopulation)): the critic's "
        "pass rate p is known, a pile whose every row is labelled is known, and the ends are computed, not drawn "
        "(`vocab.stats.exact`).",
        "",
    ]
    for v in sorted(r for r in flat.index if not r.endswith("+script")):
        out.append(
            f"{v} as a blind rater passes no row (θ = 0, up to {_r(flat.loc[v, 'min'])}–{_r(flat.loc[v, 'max'])}): "
            "0 by construction, not a finding."
        )
    mine = t[t.rater == lead].sort_values("cell")
    out += [
        "",
        f"{lead}, the default rater (its verdicts vary), puts θ between {_r(mine.theta.min())} and "
        f"{_r(mine.theta.max())}:",
        "",
        f"| cell (writer → critic) | raw p | θ with {lead} rating | 95 % interval |",
        "|---|---|---|---|",
        *(
            f"| {_cell(r.cell)} | {_r(r.p)} | {_r(r.theta)} | [{_r(r.ci_low)}, {_r(r.ci_high)}] |"
            for r in mine.itertuples()
        ),
        "",
    ]
    bounds = abandoned_bounds(mine, c.data).sort_values("cell")
    out.append(
        f"Abandoned levels bound θ (`analysis/abandoned_bounds.csv`): with {lead} rating, θ had every abandoned "
        "level failed and had every one passed: "
        + "; ".join(f"{_cell(r.cell)} {_r(r.theta_if_failed)} and {_r(r.theta_if_passed)}" for r in bounds.itertuples())
        + "."
    )
    return "\n".join(out).strip() + "\n"


def page_with_section(page: str, text: str, begin: str = BEGIN, end: str = END) -> str:
    """``page`` with the text between its markers replaced by ``text``."""
    head, rest = page.split(begin, 1)
    _, tail = rest.split(end, 1)
    return f"{head}{begin}\n{text}{end}{tail}"


def page() -> str:
    """docs/study.md as the code writes its generated sections today."""
    text = page_with_section(PAGE.read_text(), corrected_section(), CORRECTED_BEGIN, CORRECTED_END)
    return page_with_section(text, section())


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if "--write" in argv:
        PAGE.write_text(page())
    else:
        sys.stdout.write(corrected_section() + "\n" + section())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
