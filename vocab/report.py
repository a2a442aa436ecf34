"""`vocab report DIR`: a self-contained, shareable report of one audit — ``report.html`` (CSS inline, the figure
embedded as a data URI, no request leaves the reader's machine) and ``report.md`` — made by the same functions
as the notebooks (``estimates.correction_table``, ``kappa_table``, ``agreement_table``, ``abandoned_bounds``),
never a second implementation.

On top, the sentences a team lead can quote, one per cell: what the judge says and what the blind raters say,
with the interval. Then the corrected rates of every rater variant with q1/q0 and flags, a figure of both, the
raters' coverage (partial hand-ins marked), agreement between raters, the units lost before a verdict and the
rate had they all failed or passed, and the provenance (source and its hash, judge, rubric, versions).
The output holds no clock time, so the same inputs give the same bytes.
"""

from __future__ import annotations

import contextlib
import io
from pathlib import Path

import numpy as np
import pandas as pd

from vocab import figures, stats
from vocab.datasets.items import cell_label
from vocab.errors import InputError
from vocab.estimates import correct, what_if
from vocab.estimates import scores as sc
from vocab.estimates.agreement import agreement_table, kappa_table, no_overlap
from vocab.estimates.compare import comparisons
from vocab.estimates.compare_text import degenerate_text, rank_line, unrated_sentence
from vocab.estimates.pooled import pooled_lines
from vocab.layout import RunDir
from vocab.raters.blind import PEOPLE
from vocab.records import dir_lock, versions, write_bytes_atomic, write_text_atomic
from vocab.report_page import (  # noqa: F401 (importable here)
    CSP,
    CSS,
    SCORE_FIGURE,
    SCORES_TITLE,
    Report,
    to_html,
    to_markdown,
)
from vocab.sampling.labelled import labels_note
from vocab.sampling.quotes import quotes_text
from vocab.sampling.strata import strata_notes

FLAG_MEANINGS = {
    "unstable": "the interval of q1 or q0 spans more than half of [0, 1]: too few rows in a pile",
    "outside": "the randomised interval left out its own estimate (widened to hold it)",
    "ceiling": "a pile graded all one way forces q1 or q0 to its bound",
}


def _num(x: float) -> str:
    """A rate in percent: whole numbers, one decimal under 10 % (so 1 pass in 400 is 0.3 %, not 0 %)."""
    v = 100 * x
    return f"{v:.1f}".removesuffix(".0") if 0 < v < 9.95 else f"{v:.0f}"


def _pct(x: float) -> str:
    return "–" if pd.isna(x) else f"{_num(x)} %"


def _coefficient(value: float, lo: float, hi: float) -> str:
    """An agreement coefficient with its interval, two decimals (κ runs from -1 to 1: no percent)."""
    return "–" if pd.isna(value) else f"{value:.2f} ({lo:.2f} to {hi:.2f})"


def _interval(lo: float, hi: float) -> str:
    return "–" if pd.isna(lo) else f"{_num(lo)}–{_num(hi)} %"


CORRECTED_TEXT = (
    "Each rater variant's bias-corrected rate θ (the critic's raw rate p corrected by the blind ratings of its PASSED "
    "and FAILED piles) with its 95 % interval, and the critic's sensitivity q1 and specificity q0 as that rater "
    "measures them."
)
CORRECTED_TEXT_IMPORTED = (
    "Each rater's bias-corrected rate θ (the judge's raw rate p over its items, corrected by the rater's verdicts on "
    "the sampled items of its PASSED and FAILED piles) with its 95 % interval, and the judge's sensitivity q1 and "
    "specificity q0 as that rater measures them."
)
POPULATION_TEXT = {
    "finite": (
        " θ is the share of these {units} that pass: the {judge}'s verdicts on all of them are known, so p carries no "
        "error, and a pile rated in full carries none either."
    ),
    "superpopulation": (
        " θ is the rate of the process that made these {units} (p drawn as a sample of it), each pile as if "
        "infinite: the wider question."
    ),
}
NOT_BLIND = (
    "Not blind: these labels were given in the source, not drawn or blinded by vocab, and the people may have seen the "
    "judge's verdict. The correction assumes that, within each pile, which items were labelled does not depend on "
    "whether the judge was right; labels the people gave after seeing the verdict may lean towards it."
)


def headline_lines(run_dir: str | Path, c) -> list[str]:
    """The report's headline, a line per cell, from a correction (:func:`vocab.estimates.correct.corrected`): the
    judge's rate and the corrected one with its interval, by the lead rater and the others; what `vocab audit`
    prints without building the rest of the report."""

    corr, lead, n_rows = c.table, c.lead, c.n_rows
    names = [*c.ratings, *([PEOPLE] if c.raters.pooled else [])]
    headline = []
    stages = c.loaded.stages if c.loaded is not None else None  # as the command read them
    labelled = labels_note(run_dir, stages) is not None  # people's labels found in the source, not a draw of vocab's
    kind = "labels in the source (not drawn by vocab)" if labelled else "blind ratings"
    rated = set(c.passes[lead].dropna().index) if c.passes is not None and lead in c.passes else None
    pooled = pooled_lines(c) if c.passes is not None and lead in c.passes else {}
    done = set()
    for r in corr[corr.rater == lead].itertuples():
        if r.cell in pooled:  # judges on the same outputs: their one rate, once
            if pooled[r.cell] not in done:
                headline.append(pooled[r.cell])
                done.add(pooled[r.cell])
            continue
        writer, _, judge = r.cell.partition("__")
        # the cell's own rows: those its rate reads, of those sampled from it (not the whole sheet's)
        mine = c.key.blind_id[c.key.cell == r.cell] if c.key is not None else None
        of = (int(mine.isin(rated).sum()), len(mine)) if mine is not None and rated is not None else None
        of = of or (c.raters.rows(lead), n_rows)
        others = [o for o in corr[(corr.cell == r.cell) & corr.rater.isin(names) & (corr.rater != lead)].itertuples()]
        headline.append(
            f"{writer} judged by {judge}: the judge says {_pct(r.p)}; against "
            + (
                f"the {kind} of {', '.join(c.raters.people)} pooled ({PEOPLE}: the majority of those who rated each "
                "row; "
                if lead == PEOPLE
                else f"{lead}'s {kind} ("
            )
            + f"{of[0]} of {of[1]} {'labelled' if labelled else 'sampled'} rows) the pass rate is "
            f"{_pct(r.theta)} "
            f"({_interval(r.ci_low, r.ci_high)}, 95 %)"
            + "".join(f"; against {o.rater}'s, {_pct(o.theta)} ({_interval(o.ci_low, o.ci_high)})" for o in others)
            + "."
        )
    if labelled:  # said at the top, before any number is quoted without it
        headline.append(NOT_BLIND)
    if c.raters is not None and c.raters.passed_over:  # the rater first in line gave one verdict throughout
        headline.append(c.raters.passed_over[0].upper() + c.raters.passed_over[1:] + ".")
    for name in [lead, *(n for n in names if n != lead)]:  # a rater whose every verdict is one: named, not followed
        v = c.passes[name].dropna() if c.passes is not None and name in c.passes else None
        kind = c.raters.kinds.get(name.split("+")[0], "person") if c.raters is not None else ""
        flag = degenerate_text(name, len(v), float(v.sum()), kind == "person") if v is not None else ""
        if flag and name in set(corr.rater):
            headline.append(flag + ".")

    headline += strata_notes(run_dir, c.key, c.passes.get(lead), lead, stages)
    return headline


def build(
    run_dir: str | Path,
    raters: list[str] | None = None,
    *,
    seed: int = 0,
    n_boot: int = stats.N_DRAWS,
    population: str = stats.DEFAULT_POPULATION,
) -> Report:
    run_dir = Path(run_dir)
    c = correct.corrected(run_dir, raters, seed=seed, n_boot=n_boot, population=population)
    data, ratings, script, n_rows, corr = c.data, c.ratings, c.script, c.n_rows, c.table
    names = [*ratings, *([PEOPLE] if c.raters.pooled else [])]
    study = data.kind == "run"  # a Vocabscapes run speaks of the critic and levels; an imported dataset of its judge
    headline = headline_lines(run_dir, c)
    note = labels_note(run_dir, c.loaded.stages)
    labelled = note is not None
    rep = Report(f"Judge audit: {data.name}", headline, table=corr.reset_index(drop=True))
    table = pd.DataFrame(
        {
            "rater": corr.rater,
            "system → judge": [c.replace("__", " → ") for c in corr.cell],
            "judge's rate p": corr.p.map(_pct),
            "corrected θ": corr.theta.map(_pct),
            "95 % interval": [_interval(lo, hi) for lo, hi in zip(corr.ci_low, corr.ci_high, strict=True)],
            "q1 (sensitivity)": [
                f"{_pct(q)} ({_interval(lo, hi)})" for q, lo, hi in zip(corr.q1, corr.q1_low, corr.q1_high, strict=True)
            ],
            "q0 (specificity)": [
                f"{_pct(q)} ({_interval(lo, hi)})" for q, lo, hi in zip(corr.q0, corr.q0_low, corr.q0_high, strict=True)
            ],
            "flags": corr["flags"].fillna(""),
        }
    )
    flags = sorted({f.split(":")[0] for fl in corr["flags"].fillna("") for f in fl.split(";") if f})
    rep.sections.append(
        (
            "Corrected pass rates",
            (CORRECTED_TEXT if study else CORRECTED_TEXT_IMPORTED)
            + POPULATION_TEXT[c.population].format(
                units="attempts" if study else "items", judge="critic" if study else "judge"
            )
            + "".join(f" {f}: {FLAG_MEANINGS[f]}." for f in flags if f in FLAG_MEANINGS),
            table,
        )
    )
    comparisons_section(rep, c, study)
    scores_section(rep, c)
    rep.sections.append(
        (
            "Raters (labels not blinded by vocab)" if labelled else "Blind raters",
            (
                f"Items labelled of the {n_rows} labelled items: "
                if labelled
                else f"Rows rated of the {n_rows}-row blind sample: "
            )
            + c.raters.coverage(n_rows, partial=not labelled)
            + ("; the script rater decides the checks a script can." if script is not None else ".")
            + (f" {note}" if note else "")
            + (
                f" {n} of the people's labels override the judge's feedback (the judge's verdict stays the judge's)."
                if (n := ((data.manifest or {}).get("source") or {}).get("overrides"))
                else ""
            )
            + f" {quotes_text(c.key, {n: set(r.blind_id) for n, r in ratings.items()}, study)}",
            None,
        )
    )
    if len(names) >= 2:
        k = kappa_table(ratings, script, n_boot=n_boot, seed=seed)
        a = agreement_table(ratings, data.rubric, n_boot=n_boot, seed=seed)
        shown_k = pd.DataFrame(
            {
                "raters": [f"{x} and {y}" for x, y in zip(k.rater_a, k.rater_b, strict=True)],
                "variant": k.variant,
                "rows in common": k.n,
                "agreeing": k.agree,
                "Cohen's κ (95 %)": [_coefficient(*v) for v in zip(k.kappa, k.ci_low, k.ci_high, strict=True)],
                "Gwet's AC1 (95 %)": [_coefficient(*v) for v in zip(k.ac1, k.ac1_low, k.ac1_high, strict=True)],
            }
        )
        shown_a = pd.DataFrame(
            {
                "statistic": a.statistic,
                "raters": a.raters,
                "rows every rater rated": a.n,
                "all agreeing": a.agree_all,
                "value (95 %)": [_coefficient(*v) for v in zip(a.value, a.ci_low, a.ci_high, strict=True)],
            }
        )
        rep.sections.append(
            (
                "Agreement between raters",
                "Cohen's κ and Gwet's AC1 per pair (95 % intervals):" + (f" {no_overlap(k)}" if no_overlap(k) else ""),
                shown_k,
            )
        )
        rep.sections.append(("", "Across all raters, Krippendorff's α and Gwet's AC1:", shown_a))
    lost = what_if.abandoned_bounds(corr[corr.rater.isin(names)], data)
    if len(lost) and lost[data.lost_label].sum() > 0:
        unit = "abandoned levels" if study else "unscored items"
        shown = pd.DataFrame(
            {
                "rater": lost.rater,
                "system → judge": [c.replace("__", " → ") for c in lost.cell],
                ("attempts" if study else "items"): lost.attempts,
                unit: lost[data.lost_label],
                "corrected θ": lost.theta.map(_pct),
                "θ had they all failed": lost.theta_if_failed.map(_pct),
                "θ had they all passed": lost.theta_if_passed.map(_pct),
                "95 % interval, widened by them": [
                    _interval(lo, hi) for lo, hi in zip(lost.ci_low_if_failed, lost.ci_high_if_passed, strict=True)
                ],
            }
        )
        rep.sections.append(
            (
                "Lost before a verdict" if study else "Items without a verdict",
                (
                    "Units with no verdict (abandoned levels) are never counted as FAILED; θ had every one of them "
                    "failed or passed:"
                    if study
                    else "Items the judge left unscored (an error, no value) are never "
                    "counted as FAILED; θ had every one of them failed or passed:"
                ),
                shown,
            )
        )
    rep.figure_png = _figure(corr, "critic" if study else "judge")
    m = data.manifest or {}
    rep.provenance = {
        "dataset": f"{data.kind} {data.name} ({data.status})",
        "source": _source_text(m.get("source") or {}) if data.kind == "judgments" else None,
        "config": m.get("config", {}).get("path") if data.kind == "run" else None,
        "code": m.get("git_commit", ""),
        "rubric": f"{data.rubric.name} {data.rubric.version} ({data.rubric.hash[:12]})",
        "blind sample": f"{n_rows} rows, calibration/key.csv sha256 " + c.loaded.drawn.key_sha256[:16],
        "interval": "fiducial (vocab.stats.DEFAULT_INTERVAL), seed " + str(seed),
        "report made by": f"vocab {versions()['vocab']}",
    }
    rep.provenance = {k: v for k, v in rep.provenance.items() if v}
    return rep


def _source_text(source: dict) -> str:
    """An imported dataset's source as the report's provenance reads it: each field in words, ``name value``."""

    def value(v):
        if isinstance(v, dict):
            return ", ".join(f"{k} {value(x)}" for k, x in v.items()) or "none"
        return "none" if v in (None, "") else str(v)

    return "; ".join(f"{k.replace('_', ' ')}: {value(v)}" for k, v in source.items())


def comparisons_section(rep: Report, c, study: bool) -> None:
    """Every pair of cells the lead rater corrects (`vocab compare`'s numbers, the same draws): the difference with
    its interval, the judge's own gap, how much more it inflates one than the other, and the rank sets."""

    found = comparisons(
        c.data, c.key, c.passes, raters=[c.lead], seed=c.seed, n_boot=c.n_boot, population=c.population
    )[c.lead]
    if found.pairs.empty:
        return
    p = found.pairs
    judge = "critic" if study else "judge"

    def pts(x: float) -> str:
        return "undefined" if not np.isfinite(x) else f"{100 * x:+.0f}".replace("-", "−")

    table = pd.DataFrame(
        {
            "b − a": [f"{cell_label(b)} − {cell_label(a)}" for a, b in zip(p.a, p.b, strict=True)],
            "difference (95 %), points": [
                f"{pts(d)} [{pts(lo)}, {pts(hi)}]" for d, lo, hi in zip(p.difference, p.ci_low, p.ci_high, strict=True)
            ],
            "resolved": p.resolved.map({True: "yes", False: "no"}),
            f"the {judge}'s own gap": p.raw_difference.map(pts),
            f"how much more the {judge} inflates b (95 %)": [
                f"{pts(d)} [{pts(lo)}, {pts(hi)}]"
                for d, lo, hi in zip(p.leniency_difference, p.leniency_ci_low, p.leniency_ci_high, strict=True)
            ],
        }
    )
    if p.paired.any():  # two judges on the same outputs: one rate, a known gap, paired q1 and q0 differences
        table.loc[p.paired.to_numpy(), ["difference (95 %), points", "resolved"]] = ["the same outputs (paired)", "—"]
        for q, name in (("q1", "sensitivity"), ("q0", "specificity")):
            table[f"{name} b − a (95 %), paired"] = [
                (
                    f"bounded [{pts(lo)}, {pts(hi)}] (below)"
                    if (a, b) in found.unrated
                    else f"{pts(d)} [{pts(lo)}, {pts(hi)}]"
                )
                if pr
                else ""
                for a, b, pr, d, lo, hi in zip(
                    p.a, p.b, p.paired, p[f"{q}_difference"], p[f"{q}_ci_low"], p[f"{q}_ci_high"], strict=True
                )
            ]
    undefined = "".join(
        f" {cell_label(r['b'])} − {cell_label(r['a'])}: {unrated_sentence(r, found.unrated[(r['a'], r['b'])], c.lead)}."
        for r in p.to_dict("records")
        if (r["a"], r["b"]) in found.unrated
    )
    ranks = "; ".join(rank_line(r) for r in found.ranks.itertuples())
    rep.sections.append(
        (
            "Comparisons",
            f"Against {c.lead}'s ratings, every pair of cells: the corrected difference with its 95 % interval "
            f"(resolved "
            f"when it excludes 0), the {judge}'s own gap, and how many points more the {judge} inflates b than a "
            f"(p − θ, differenced). Ranks as sets, from simultaneous 95 % intervals over every pair: {ranks}."
            + undefined,
            table,
        )
    )


def scores_section(rep: Report, c) -> None:
    """Where the judge logged a number beside its verdicts (:mod:`vocab.estimates.scores`): per cell, people's pass
    share at each score with its isotonic fit and band, and the score at which the judge would pass the corrected
    share."""

    got = sc.sample_scores(c.data, c.key)
    if got.dropna().empty:
        return
    if refused := sc.curve_refused(c.data.run_dir):
        rep.sections.append((SCORES_TITLE, refused, None))
        return
    people = c.passes[c.lead]
    theta = c.table[c.table.rater == c.lead].set_index("cell")
    rows, said, curves = [], [], {}
    for cell in sorted(c.key.cell.unique()):
        ids = c.key.blind_id[c.key.cell == cell].astype(str)
        cur = sc.curve(got.reindex(ids), people.reindex(ids))
        if cur.empty:
            continue
        curves[cell] = cur
        for r in cur.itertuples():
            rows.append(
                {
                    "system → judge": cell.replace("__", " → "),
                    "score": f"{r.score:g}",
                    "rated rows": r.rows,
                    "people pass": _pct(r.people_pass),
                    "fitted (95 % band)": f"{_pct(r.fit)} ({_interval(r.fit_low, r.fit_high)})",
                }
            )
        if cell in theta.index and np.isfinite(theta.theta[cell]):
            t, share = sc.threshold(c.data, cell, float(theta.theta[cell]))
            th, pj = _pct(theta.theta[cell]), _pct(theta.p[cell])
            said.append(
                f"{cell.replace('__', ' → ')}: passing the items scored {t:g} or more would pass "
                f"{_pct(share)} of them, nearest the corrected rate {th} (its verdicts pass {pj})"
            )
    if not rows:
        return
    rep.sections.append(
        (
            SCORES_TITLE,
            f"The judge logged a score beside its verdicts. Against {c.lead}'s ratings: people's pass share at each "
            "score the sample holds, fitted non-decreasing in the score (isotonic regression), with a band that holds "
            "the true share at every score at once with 95 % probability (each score's exact interval, shared out over "
            "the scores and bounded by the curve's rise). " + ("; ".join(said) + "." if said else ""),
            pd.DataFrame(rows),
        )
    )
    rep.score_png = _score_figure(curves)


def _score_figure(curves: dict[str, pd.DataFrame]) -> bytes:
    import matplotlib.pyplot as plt

    figures.style()
    fig, ax = plt.subplots(figsize=(6, 3.6))
    for cell, cur in curves.items():
        line = ax.step(cur.score, cur.fit, where="post", label=cell.replace("__", " → "))[0]
        ax.fill_between(cur.score, cur.fit_low, cur.fit_high, step="post", alpha=0.2, color=line.get_color())
        ax.scatter(cur.score, cur.people_pass, s=12 + 6 * cur.rows, color=line.get_color(), alpha=0.7)
    ax.set(xlabel="the judge's score", ylabel="people's pass share", ylim=(-0.03, 1.03))
    ax.legend(fontsize=8)
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=110, bbox_inches="tight", metadata={"Software": None})
    plt.close(fig)
    return buf.getvalue()


def _figure(corr: pd.DataFrame, judge: str = "critic") -> bytes:
    figures.style()
    fig = figures.raw_vs_corrected_figure(corr, judge)
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=110, bbox_inches="tight", metadata={"Software": None})
    import matplotlib.pyplot as plt

    plt.close(fig)
    return buf.getvalue()


REPORT_FILES = ("report.html", "report.md", "report.png", "corrected.csv")


class ReportError(InputError):
    """A report that would replace another, or be written where no directory can be: one line, exit 2."""


def write(
    run_dir: str | Path,
    raters: list[str] | None = None,
    out_dir: str | Path | None = None,
    *,
    force: bool = False,
    population: str = stats.DEFAULT_POPULATION,
) -> list[Path]:
    """Write ``report.html``, ``report.md``, the figure the Markdown links (``report.png``) and the corrected-rate
    table at full precision (``corrected.csv``: what the report rounds, and the bounds ``vocab gate`` holds to) into
    ``out_dir`` (default ``<run_dir>/report``, remade on every call); returns the paths. A named ``out_dir`` that
    already holds a report (perhaps another dataset's) is refused unless ``force``; the directory is locked while
    it is written, and each file is written whole or not at all."""

    out = Path(out_dir) if out_dir is not None else RunDir(run_dir).report
    if out.exists() and not out.is_dir():
        raise ReportError(f"--out {out}: a file, not a directory")
    held = [f for f in REPORT_FILES if (out / f).exists()]
    if out_dir is not None and held and not force:
        raise ReportError(f"--out {out} holds a report already ({', '.join(held)}); pass --force to replace it")
    rep = build(run_dir, raters, population=population)
    same = out.exists() and out.resolve() == Path(run_dir).resolve()  # the caller holds the run's own lock
    with contextlib.nullcontext(out) if same else dir_lock(out):
        if out_dir is not None and not force and not held and any((out / f).exists() for f in REPORT_FILES):
            raise ReportError(f"--out {out}: another report was written there meanwhile; pass --force to replace it")
        write_bytes_atomic(out / "report.png", rep.figure_png or b"")
        if rep.score_png:
            write_bytes_atomic(out / SCORE_FIGURE, rep.score_png)
        elif (out / SCORE_FIGURE).is_file():  # an earlier report's curve, of scores this one does not hold
            (out / SCORE_FIGURE).unlink()
        write_text_atomic(out / "report.html", to_html(rep))
        write_text_atomic(out / "report.md", to_markdown(rep, "report.png"))
        write_text_atomic(out / "corrected.csv", rep.table.to_csv(index=False))
    return [out / f for f in REPORT_FILES] + ([out / SCORE_FIGURE] if rep.score_png else [])
