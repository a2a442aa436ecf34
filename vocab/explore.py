"""``vocab.open``: a study run or an imported dataset, explored from Python.

>>> import vocab
>>> ref = vocab.open("data/runs/reference")
>>> ref.rate("gemma3 → smollm2", rater="smollm2")
gemma3 → smollm2 under smollm2's ratings: corrected 22.7 % (9.7–44.8 %), the judge's own 38.3 %

Every answer is computed by the functions the CLI, the report and the notebooks call (``vocab.estimates``), from
one read of the directory (:func:`vocab.raters.loaded.load`), and cached on the object: ask twice, computed once.
Tables are tidy DataFrames whose first columns are the answer (the cell as ``writer → critic``, or ``system →
judge`` for an imported dataset, and the rate with its interval as one readable column).
"""

from __future__ import annotations

import html
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from vocab import stats
from vocab.datasets.items import cell_label
from vocab.estimates.agreement import checks_table, kappa_table
from vocab.estimates.compare import Comparisons
from vocab.estimates.compare_dir import compare_dir, resolve_cell
from vocab.estimates.correct import Corrected, corrected
from vocab.estimates.slices import SliceEstimates, slices_dir
from vocab.layout import RunDir
from vocab.raters.loaded import Loaded, load
from vocab.sampling.sample import CalibrationError


def _pct(x: float) -> str:
    return "–" if pd.isna(x) else f"{100 * x:.1f} %"


def _interval(est: float, lo: float, hi: float) -> str:
    return "undefined" if pd.isna(est) else f"{100 * est:.1f} % ({100 * lo:.1f}–{100 * hi:.1f} %)"


@dataclass(frozen=True)
class Rate:
    """One cell's corrected rate under one rater: the answer to "what is cell X's rate under rater R?"."""

    cell: str  # writer → critic (or system → judge)
    rater: str
    judge_rate: float  # the judge's (critic's) own pass rate p
    theta: float  # the corrected rate
    ci_low: float
    ci_high: float
    q1: float  # sensitivity: how often the judge passes what the rater passes
    q0: float  # specificity: how often the judge fails what the rater fails

    def __repr__(self) -> str:
        return (
            f"{self.cell} under {self.rater}'s ratings: corrected {_interval(self.theta, self.ci_low, self.ci_high)}, "
            f"the judge's own {_pct(self.judge_rate)}"
        )

    def _repr_html_(self) -> str:
        return f"<p>{html.escape(repr(self))}</p>"


@dataclass
class Opened:
    """A run or an imported dataset, read once. Ask it for rates, comparisons, agreement, slices and the report."""

    dir: Path
    loaded: Loaded
    seed: int = 0
    n_boot: int = stats.N_DRAWS
    population: str = stats.DEFAULT_POPULATION
    _cache: dict = field(default_factory=dict, repr=False)

    # --- what it holds ----------------------------------------------------------------------------------------

    @property
    def data(self):
        """The :class:`~vocab.datasets.dataset.Dataset` (its items, cells, rubric)."""
        return self.loaded.data

    @property
    def kind(self) -> str:
        """``run`` (a Vocabscapes study: writer → critic) or ``judgments`` (an imported dataset: system → judge)."""
        return self.data.kind

    @property
    def raters(self) -> list[str]:
        """The blind raters with ratings here (the script among them where the rubric has one)."""
        return [RunDir.rater_of(p) for p in RunDir(self.loaded.dir).ratings_files()]

    def _corrected(self) -> Corrected:
        if "corrected" not in self._cache:
            self._cache["corrected"] = corrected(
                self.dir, None, seed=self.seed, n_boot=self.n_boot, population=self.population, loaded=self.loaded
            )
        return self._cache["corrected"]

    # --- the answers ------------------------------------------------------------------------------------------

    def rates(self, rater: str | None = None) -> pd.DataFrame:
        """Every cell's corrected rate under ``rater`` (default: the lead rater, people first) — or under every
        rater variant with ``rater="all"``: the cell, the rater, the judge's own rate, the corrected rate with its
        95 % interval as text, then the numbers (``p``, ``theta``, ``ci_low``, ``ci_high``, ``q1``, ``q0`` ...).

        >>> ref.rates("smollm2").loc["gemma3 → smollm2", "corrected"]
        '22.7 % (9.7–44.8 %)'
        """
        c = self._corrected()
        table = c.table if rater == "all" else c.table[c.table.rater == c.rater(rater, self.dir)]
        shown = table.assign(
            judge=[_pct(p) for p in table.p],
            corrected=[
                _interval(t, lo, hi) for t, lo, hi in zip(table.theta, table.ci_low, table.ci_high, strict=True)
            ],
        )
        shown.index = pd.Index([cell_label(x) for x in table.cell], name="cell")
        first = ["rater", "judge", "corrected"]
        return shown[[*first, *(k for k in table.columns if k not in (*first, "cell"))]]

    def rate(self, cell: str, rater: str | None = None) -> Rate:
        """One cell's corrected rate under ``rater`` (default: the lead rater). ``cell`` as shown
        (``gemma3 → smollm2``) or as stored (``gemma3__smollm2``)."""
        c = self._corrected()
        name = c.rater(rater, self.dir)
        key = resolve_cell(cell, sorted(c.table.cell.unique()), self.dir)
        row = c.table[(c.table.rater == name) & (c.table.cell == key)]
        if row.empty:
            raise CalibrationError(f"{self.dir}: {name}'s ratings cannot correct {cell_label(key)} (no rated row)")
        r = row.iloc[0]
        return Rate(cell_label(key), name, r.p, r.theta, r.ci_low, r.ci_high, r.q1, r.q0)

    def comparisons(self, rater: str | None = None, a: str | None = None, b: str | None = None) -> Comparisons:
        """Every pair of cells (or the pair b − a) under ``rater``: differences, the judge's leniency gap and
        rank sets, with intervals (what ``vocab compare`` prints)."""
        k = ("comparisons", rater, a, b)
        if k not in self._cache:
            self._cache[k] = compare_dir(
                self.dir, rater=rater, a=a, b=b, seed=self.seed, n_boot=self.n_boot, population=self.population
            )
        return self._cache[k]

    def agreement(self) -> pd.DataFrame:
        """Cohen's κ and Gwet's AC1 between every pair of blind raters (raw and with the script's checks), with
        intervals; κ is undefined (NaN) where a rater gave one verdict to every row."""
        if "agreement" not in self._cache:
            ratings, script = self._ratings()
            if len(ratings) < 2:
                raise CalibrationError(f"{self.dir}: agreement needs two blind raters (rated: {', '.join(ratings)})")
            self._cache["agreement"] = kappa_table(ratings, script, n_boot=self.n_boot, seed=self.seed)
        return self._cache["agreement"]

    def check_disagreements(self) -> pd.DataFrame:
        """The rubric's checks, those the blind raters disagree on most first: rows rated by all, rows on which
        they disagree, and each rater's fails."""
        ratings, _ = self._ratings()
        if len(ratings) < 2:
            raise CalibrationError(f"{self.dir}: disagreement needs two blind raters (rated: {', '.join(ratings)})")
        t = checks_table(ratings, self.data.rubric)  # e.g. ref.check_disagreements().name[0] == "answer key accuracy"
        t.insert(4, "disagree", t.n - t.agree)
        return t.sort_values(["disagree", "check"], ascending=[False, True], key=None).reset_index(drop=True)

    def script_disagreements(self) -> pd.DataFrame:
        """The sampled rows where the judge's verdict on a decidable check differs from the script's (the script
        knows the answer): cell, blind id, check, the judge's and the script's verdicts, the sentence."""
        ratings = self.loaded.ratings("script") if self.loaded.has("script") else None
        if ratings is None:
            raise CalibrationError(f"{self.dir}: no script ratings (only Vocabscapes' rubric has a script)")
        key = self.loaded.drawn.key
        att = self.data.attempts.set_index(["cell", "level", "attempt"])
        script = ratings.set_index("blind_id")
        rows = []
        decidable = [c for c in self.data.rubric.criteria if c.kind == "decidable"]
        for r in key.itertuples(index=False):
            a = att.loc[(r.cell, r.level, r.attempt)]
            for c in decidable:
                judge, truth = a.checks.get(c.id), script.at[r.blind_id, c.column]
                if isinstance(truth, str) and truth and judge and judge != truth:
                    rows.append(
                        {
                            "cell": cell_label(r.cell),
                            "blind_id": r.blind_id,
                            "check": f"{c.id} {c.name}",
                            "judge": judge,
                            "script": truth,
                            "sentence": a.get("sentence", ""),
                        }
                    )
        return pd.DataFrame(rows, columns=["cell", "blind_id", "check", "judge", "script", "sentence"])

    def slices(self, by: str, rater: str | None = None) -> SliceEstimates:
        """Each cell's rate per value of column ``by`` (an imported dataset's column), with intervals."""
        return slices_dir(self.dir, by, rater=rater, seed=self.seed, n_boot=self.n_boot, population=self.population)

    def headline(self) -> list[str]:
        """The report's headline, a sentence per cell: the judge's rate and the corrected one, by whose labels."""
        from vocab import report  # deferred: the report's page and figure are loaded only when one is asked for

        return report.headline_lines(self.dir, self._corrected())

    def report_markdown(self) -> str:
        """The shareable report as Markdown (what ``report.md`` holds, its provenance left out), to read inline."""
        from vocab import report, report_page  # deferred: as above

        rep = report.build(self.dir, None, seed=self.seed, n_boot=self.n_boot, population=self.population)
        text = report_page.to_markdown(rep)
        return text.split("\n## Provenance")[0]

    def report(self, out_dir: str | Path | None = None) -> list[Path]:
        """Write the shareable report (``report.html``, ``report.md``, ``report.png``, ``corrected.csv``) into
        ``out_dir`` (default ``<dir>/report``); returns the paths."""
        from vocab import report  # deferred: the report's page and figure are loaded only when one is written

        return report.write(self.dir, None, out_dir, population=self.population)

    def figure(self, name: str, rater: str | None = None):
        """One of the study's figures drawn from these results (a matplotlib Figure, shown inline in a notebook):
        ``raw_vs_corrected`` and ``sensitivity_specificity`` (every rater variant), ``differences`` and
        ``rank_sets`` (``rater``'s comparisons, default the lead rater)."""
        from vocab import figures  # deferred: matplotlib is loaded only when a figure is asked for

        judge = "critic" if self.kind == "run" else "judge"
        table = self._corrected().table
        if name == "raw_vs_corrected":
            return figures.raw_vs_corrected_figure(table, judge)
        if name == "sensitivity_specificity":
            return figures.sensitivity_specificity_figure(table)
        found = self.comparisons(rater)
        if name == "differences":
            return figures.differences_figure(found.pairs, judge)
        if name == "rank_sets":
            return figures.rank_sets_figure(table, found.ranks)
        raise CalibrationError(
            f"no figure {name!r} (known: raw_vs_corrected, sensitivity_specificity, differences, rank_sets)"
        )

    def _ratings(self):
        c = self._corrected()
        ratings = {n: r for n, r in c.ratings.items() if n != "script"}
        return ratings, c.script

    # --- display ----------------------------------------------------------------------------------------------

    def _lines(self) -> list[str]:
        d = self.data
        cells = d.cells
        words = "writer → critic" if d.kind == "run" else "system → judge"
        n = f"{len(cells)} cell{'s' if len(cells) != 1 else ''}"
        head = f"{'run' if d.kind == 'run' else 'dataset'} {d.name} ({self.dir}): {n} ({words})"
        items = f"{int(cells.attempts.sum())} {'attempts' if d.kind == 'run' else 'items'} with a verdict"
        sample = self.loaded.drawn.key if RunDir(self.loaded.dir).key.exists() else None
        rated = (
            f"; {len(sample)} sampled rows, rated by {', '.join(self.raters) or 'nobody yet'}"
            if sample is not None
            else ""
        )
        return [head, items + rated]

    def __repr__(self) -> str:
        return "\n".join(self._lines())

    def _repr_html_(self) -> str:
        lines = self._lines()
        table = self.data.cells[["attempts", "passed", "failed", "unscored"]].copy()
        table.index = [cell_label(x) for x in table.index]
        return f"<p><b>{html.escape(lines[0])}</b><br>{html.escape(lines[1])}</p>" + table.to_html(
            max_rows=20, border=0
        )


def open(
    path: str | Path, *, seed: int = 0, n_boot: int = stats.N_DRAWS, population: str = stats.DEFAULT_POPULATION
) -> Opened:
    """Open a study run (``manifest.json``) or an imported dataset (``dataset.json``) to explore it.

    ``seed``, ``n_boot`` and ``population`` are the correction's (as ``vocab audit`` takes them)."""
    d = Path(path)
    if not d.is_dir():
        raise CalibrationError(f"{d}: not a directory (a run or an imported dataset)")
    return Opened(d, load(d), seed, n_boot, population)


def reading(opened: Opened, rater: str | None = None, table: pd.DataFrame | None = None) -> str:
    """The closing "Reading it" of a notebook, as Markdown written from the computed results: per cell the judge's
    rate against the corrected one, the direction the judge errs in and whether the interval shows it, and a rater
    whose labels are all one way named as such. ``table``: a correction table the notebook computed with other
    settings (its interval method), read instead of the default correction's."""
    c = opened._corrected()
    name = c.rater(rater, opened.dir)
    judge = "critic" if opened.kind == "run" else "judge"
    t = (c.table if table is None else table).query("rater == @name")
    verb = "pass" if name == "people" else "passes"
    verb_f = "fail" if name == "people" else "fails"
    passes = c.passes.get(name) if c.passes else None
    out = []
    if passes is not None and len(passes) and passes.nunique() == 1:
        said = "passed every one" if passes.iloc[0] else "passed none"
        out.append(
            f"- **{name} {said} of its {len(passes)} rated rows**: its corrected rates are "
            f"{'1' if passes.iloc[0] else '0'} by construction, not a finding; read another rater's instead."
        )
    for r in t.itertuples():
        cell = cell_label(r.cell)
        if pd.isna(r.theta):
            out.append(f"- **{cell}**: {name}'s labels leave a pile unrated, so the rate is undefined: label it first.")
            continue
        gap = 100 * (r.p - r.theta)
        if r.p > r.ci_high:
            verdict = f"the {judge} **inflates** it by {gap:.0f} points (its own rate lies above the interval)"
        elif r.p < r.ci_low:
            verdict = f"the {judge} **deflates** it by {-gap:.0f} points (its own rate lies below the interval)"
        else:
            verdict = (
                f"the {judge}'s own rate lies inside the interval: these labels cannot tell whether it inflates or "
                "deflates the rate (an absence of bias is not shown either)"
            )
        errs = ""
        if not (pd.isna(r.q1) or pd.isna(r.q0)):
            worse = "passing what they fail" if (1 - r.q0) > (1 - r.q1) else "failing what they pass"
            errs = (
                f" It passes {100 * r.q1:.0f} % of what {name} {verb} (q1) and fails {100 * r.q0:.0f} % of what "
                f"{name} {verb_f} (q0): by these point estimates it errs more by {worse}."
            )
        out.append(
            f"- **{cell}**: the {judge} passes {100 * r.p:.1f} %; against {name}'s labels the rate is "
            f"{100 * r.theta:.1f} % ({100 * r.ci_low:.1f}–{100 * r.ci_high:.1f} %, 95 %), so {verdict}.{errs}"
        )
    where = "docs/study.md" if opened.kind == "run" else "docs/audit.md"
    out.append(
        f"\nThe method and its caveats: [{where}](../{where}); "
        "the statistics: [docs/statistics.md](../docs/statistics.md)."
    )
    return "\n".join(out)
