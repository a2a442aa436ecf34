"""The blind raters of a run or dataset as the correction reads them: each rater's kind (a person, an LLM vocab ran,
the script), the pooled rater of several people (:data:`PEOPLE`: per row the majority of the people who rated it,
a tie half), and the lead rater the headline, the gate and the planner read by default."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from vocab.datasets.dataset import JudgeRubric
from vocab.datasets.names import PEOPLE
from vocab.layout import RunDir
from vocab.raters.packet import llm_raters
from vocab.raters.raters import coverage_text, rater_passes, read_ratings
from vocab.sampling.sample import CalibrationError

__all__ = ["PEOPLE", "BlindRaters", "blind_raters", "pooled_passes", "rater_kind"]


def rater_kind(run_dir: str | Path, name: str, machines: set[str] | None = None) -> str:
    """``script``, ``llm`` (a model vocab ran as a rater here: its log ``rater_<name>.jsonl``) or ``person`` (any
    other file of ratings: a hand-in, a form's, Label Studio's, people's labels found in the source). ``machines``:
    :func:`vocab.raters.packet.llm_raters` of ``run_dir``, as the caller read them (by default read here)."""

    if name == "script":
        return "script"
    return "llm" if name in (llm_raters(run_dir) if machines is None else machines) else "person"


def pooled_passes(
    ratings: dict[str, pd.DataFrame], script: pd.DataFrame | None = None, rubric: JudgeRubric | None = None
) -> pd.Series:
    """The pooled verdict of several people per blind id: each person's verdict (their file holds their latest
    label of a row), then the majority of those who rated the row; an exact tie counts the row half PASSED, half
    FAILED (0.5). With ``script``, checks 2 and 3 are the script's, as in :func:`rater_passes`."""
    votes = pd.concat([rater_passes(r, script, rubric).astype(float) for r in ratings.values()], axis=1)
    share = votes.mean(axis=1)  # over the people who rated the row (NaN: did not)
    return share.where(share == 0.5, (share > 0.5).astype(float)).sort_index()


@dataclass(frozen=True)
class BlindRaters:
    """The blind raters of a run or dataset as the correction reads them: each rater's ratings, their kinds, and
    the default rater of the headline, the gate and the planner: people before any LLM or script rater —
    :data:`PEOPLE` when two or more people rated, the one person when one did, else the rater with most rows, then by
    name — passing over a rater whose verdicts do not vary (every row passed, or none) where one whose verdicts vary
    exists (#76 item 6), with one line saying so (``passed_over``)."""

    ratings: dict[str, pd.DataFrame]
    kinds: dict[str, str]
    lead: str
    passed_over: str = ""  # why the first in line does not lead ("" when it does)

    @property
    def people(self) -> list[str]:
        return sorted(n for n, k in self.kinds.items() if k == "person")

    @property
    def pooled(self) -> bool:
        return len(self.people) >= 2

    def rows(self, name: str) -> int:
        """How many rows of the sheet ``name`` rated (the pooled rater: the rows any person rated)."""
        if name == PEOPLE:
            return len(set().union(*(set(self.ratings[n].blind_id) for n in self.people)))
        return len(self.ratings[name])

    def passes(self, name: str, script: pd.DataFrame | None = None, rubric: JudgeRubric | None = None) -> pd.Series:
        if name == PEOPLE:
            return pooled_passes({n: self.ratings[n] for n in self.people}, script, rubric)
        return rater_passes(self.ratings[name], script, rubric)

    def coverage(self, n_rows: int, partial: bool = True) -> str:
        """:func:`coverage_text`, with the pooled rater's rows and whom it pools; ``partial``: mark a rater who rated
        part of the sheet (not for labels found in the source, which nobody was asked to give on every row)."""
        text = coverage_text(self.ratings, n_rows)
        if not partial:
            text = text.replace(" (partial)", "")
        if self.pooled:
            text += f"; {PEOPLE} {self.rows(PEOPLE)}/{n_rows} (pooled from {', '.join(self.people)})"
        return text


def blind_raters(
    run_dir: str | Path, wanted: list[str] | None = None, *, purpose: str = "nothing to correct", read=None
) -> BlindRaters:
    """The blind raters' ratings of a run or dataset (the script's left out: it adjudicates, it is no blind
    rater), ``wanted`` ones or all (``people`` among them: the pooled rater, with every person it pools), with their
    kinds and the lead rater. One line when there is no sample, a wanted rater has not rated, or none has;
    ``purpose`` ends that last line. ``read``: a rater's name to their ratings (a command's
    :meth:`vocab.raters.loaded.Loaded.ratings`; by default :func:`read_ratings` here)."""
    run_dir = Path(run_dir)
    layout = RunDir(run_dir)
    if not layout.key.exists():
        raise CalibrationError(f"{run_dir}: no blind sample yet (vocab audit / vocab sample first)")
    found = sorted(RunDir.rater_of(f) for f in layout.ratings_files())
    if any(n.lower() == PEOPLE for n in found):
        raise CalibrationError(
            f"{layout.ratings(PEOPLE)}: {PEOPLE} is the pooled rater of everyone's labels, "
            "computed from their files; rename this rater's file (and name) to keep it"
        )

    machines = llm_raters(run_dir)  # their logs read once, not once a rater
    kinds = {n: rater_kind(run_dir, n, machines) for n in found if n != "script"}
    people = sorted(n for n, k in kinds.items() if k == "person")
    names = [n for n in (wanted or found) if n != "script"]
    if PEOPLE in names:
        if len(people) < 2:
            raise CalibrationError(
                f"{run_dir}: {PEOPLE} pools two or more people's ratings; here "
                f"{len(people)} ({', '.join(people) or 'none'})"
            )
        names = sorted({*(n for n in names if n != PEOPLE), *people})
    missing = [n for n in names if n not in found]
    if missing:
        raise CalibrationError(f"{run_dir}: no ratings from {', '.join(missing)} (rated: {', '.join(found) or 'none'})")
    if not names:
        raise CalibrationError(f"{run_dir}: no blind ratings yet, so {purpose} (hand in ratings first)")
    ratings = {n: (read or (lambda r: read_ratings(run_dir, r)))(n) for n in names}
    chosen = BlindRaters(ratings, {n: kinds[n] for n in names}, "")
    if wanted and len(wanted) == 1 and wanted[0] != PEOPLE:
        return dataclasses.replace(chosen, lead=wanted[0])
    # people first (all of them pooled when two or more rated; one person, however few rows they cover beside a
    # model's), then the machine raters, the one with most rows first, then by name
    line = [PEOPLE] if chosen.pooled else list(chosen.people)
    line += sorted((n for n in names if chosen.kinds[n] != "person"), key=lambda n: (-len(ratings[n]), n))
    varied = [n for n in line if not _one_verdict(chosen.passes(n))]
    lead = varied[0] if varied else line[0]
    note = ""
    if lead != line[0]:  # a rater whose every verdict is one would make every rate 0 (or 1) by construction
        v = chosen.passes(line[0])
        said = "none" if v.sum() == 0 else "every one"
        by = "0" if v.sum() == 0 else "100 %"
        note = (
            f"the default rater is {lead}, whose verdicts vary: {line[0]}, first in line, passed {said} of the "
            f"{len(v.dropna())} rows rated (its rates {by} by construction)"
        )
    return dataclasses.replace(chosen, lead=lead, passed_over=note)


def _one_verdict(passes: pd.Series) -> bool:
    """Every rated row has one verdict (all passed, or none): a rater whose rates are 0 or 1 by construction."""
    v = passes.dropna()
    return len(v) > 0 and (float(v.sum()) == 0 or float(v.sum()) == len(v))
