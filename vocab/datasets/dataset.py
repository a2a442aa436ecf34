"""A judgments dataset: what the calibration chain reads, whichever harness made the verdicts.

One row per judged item::

    id        the item (an Inspect sample, a table row, a Vocabscapes attempt)
    group     the unit the judge may have seen several times: a sample with epochs, a level with attempts
    epoch     which time (1, 2, ...): an Inspect epoch, a Vocabscapes attempt
    system    the system under test (the model that answered)
    judge     the judge (the grader model)
    verdict   PASSED, FAILED or UNSCORED (the judge gave no usable verdict: an error, no score, an unparsed
              grade). UNSCORED is its own class: counted and reported, never a FAIL.
    criteria  optional per-criterion verdicts {name: PASSED|FAILED}
    visible   what a blind rater may see {field: text}: the input, the output, a target
    hidden    what must stay hidden: the score, its explanation, the judge's name, anything else

An imported dataset is a directory holding ``dataset.json`` (source, rubric, counts per cell) and its items in
``items.parquet`` (:mod:`vocab.datasets.items`; ``judgments.jsonl`` before 2026-12, still read); the calibration
files follow in ``calibration/`` and ``analysis/`` as for a run. A Vocabscapes run directory
is read as a dataset too (:func:`load_dataset`): its attempts are the judged items, a level is a group, its
cells are system x judge, and nothing about how it is sampled or corrected changes.

Each dataset carries its **rubric** (:class:`JudgeRubric`): what the judge graded, and so what the blind
raters grade. For Vocabscapes the 12 checks (ratings columns ``c1`` ... ``c12``, checks 2-12 decide the
verdict, a script decides checks 2 and 3); for an imported dataset the judge's own question as one verdict
(column ``verdict``), or the criteria the source declares (one column each, all deciding).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from vocab import reprs, stats
from vocab import rubric as vocab_rubric
from vocab.datasets import items
from vocab.datasets.errors import CalibrationError
from vocab.datasets.items import CELL_JOIN, cell_label, cell_of, flatten  # noqa: F401 - a cell's name, named here too
from vocab.datasets.meta import check_counts, check_meta
from vocab.datasets.names import unprintable
from vocab.files import sha256_file
from vocab.layout import RunDir
from vocab.records import load_run, read_json_object, read_jsonl

CLASSES = ("PASSED", "FAILED", "UNSCORED")
DATASET_FILE, JUDGMENTS_FILE = "dataset.json", "judgments.jsonl"
FORMAT_VERSION = "2"  # 1: judgments.jsonl (still read); 2: items.parquet


# --- the rubric a dataset's raters grade -----------------------------------------------------------------


@dataclass(frozen=True)
class Criterion:
    id: str  # the key in a judgment's criteria (Vocabscapes: "1" ... "12"; imported: "verdict" or a name)
    column: str  # the column in a ratings file (Vocabscapes: "c1" ... "c12")
    name: str
    question: str
    kind: str = "judgment"
    optional: bool = False  # a rater may leave it empty (Vocabscapes check 1, decided by the level)


@dataclass(frozen=True)
class JudgeRubric:
    """What the judge graded, so what every blind rater grades."""

    name: str
    version: str
    criteria: tuple[Criterion, ...]
    scope: tuple[str, ...]  # the columns whose PASSED decides the overall verdict
    script: bool = False  # a script rater exists (it decides some criteria mechanically)
    instructions: str = ""  # the text a rater reads before the item

    @property
    def columns(self) -> list[str]:
        return [c.column for c in self.criteria]

    @property
    def ids(self) -> tuple[str, ...]:
        return tuple(c.id for c in self.criteria)

    def as_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["criteria"], d["scope"] = [asdict(c) for c in self.criteria], list(self.scope)
        return d

    @property
    def hash(self) -> str:
        return hashlib.sha256(json.dumps(self.as_dict(), sort_keys=True).encode()).hexdigest()

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> JudgeRubric:
        try:
            crit = tuple(Criterion(**c) for c in d["criteria"])
            r = cls(
                d["name"],
                str(d["version"]),
                crit,
                tuple(d["scope"]),
                bool(d.get("script", False)),
                d.get("instructions", ""),
            )
        except (KeyError, TypeError) as e:
            raise CalibrationError(f"a dataset rubric is malformed ({e})") from None
        if not crit or set(r.scope) - set(r.columns) or len(set(r.columns)) != len(r.columns):
            raise CalibrationError("a dataset rubric needs criteria with distinct columns and a scope among them")
        return r


VOCABSCAPES = JudgeRubric(
    name="vocabscapes",
    version=vocab_rubric.RUBRIC_VERSION,
    criteria=tuple(
        Criterion(c.id, f"c{c.id}", c.name, c.question, c.kind, optional=(c.id == "1")) for c in vocab_rubric.CHECKS
    ),
    scope=tuple(f"c{i}" for i in vocab_rubric.SCOPE_DEFAULT),
    script=True,
    instructions=vocab_rubric.rubric_text(),
)

DEFAULT_QUESTION = "Is the output a correct and acceptable answer to the input (judged against the target, if given)?"


def single_verdict(question: str = DEFAULT_QUESTION, name: str = "judge's question") -> JudgeRubric:
    """The judge's own question as one verdict: the rubric of a dataset whose source declares no criteria."""
    return JudgeRubric(
        name=name,
        version="1",
        criteria=(Criterion("verdict", "verdict", "verdict", question),),
        scope=("verdict",),
        instructions=question,
    )


def declared_criteria(names: list[str], question: str = DEFAULT_QUESTION) -> JudgeRubric:
    """The criteria a source declares, one column each; every one must pass for the overall verdict. A name with a
    control or format character is refused in one line (it prints as something else, and names a stream of its
    own in the per-check audit)."""
    for n in names:
        bad = unprintable(str(n))
        if bad is not None:
            raise CalibrationError(
                f"criterion {str(n)[:60]!r} holds the control character U+{ord(bad):04X}, which "
                "prints as something else in tables and files; rename it"
            )
    crit = tuple(Criterion(n, n, n, f"{question} Criterion: {n}.") for n in names)
    return JudgeRubric("declared criteria", "1", crit, tuple(names), instructions=question)


# --- a judgments dataset ---------------------------------------------------------------------------------

VOCABSCAPES_VISIBLE = ("seed_word", "words", "settings", "sentence", "answer_key")


@dataclass
class Dataset:
    """A run or an imported dataset, as the calibration chain reads it. An imported dataset's items stay in their
    store (:attr:`items`, :mod:`vocab.datasets.items`): :attr:`cells` holds what the correction needs of them, and
    :attr:`attempts` reads them all into a frame only when asked (the notebooks)."""

    run_dir: Path
    kind: str  # "run" (a Vocabscapes run) or "judgments" (imported)
    name: str
    status: str
    rubric: JudgeRubric
    visible: tuple[str, ...]  # the blind sheet's fields, after blind_id
    _attempts: pd.DataFrame | None  # one row per item with a verdict: cell, level (= group), attempt (= epoch), ...
    _unscored: pd.DataFrame | None  # imported items without a usable verdict (empty for a run)
    manifest: dict[str, Any] = field(default_factory=dict)
    outcomes: pd.DataFrame | None = None  # a run's (cell, level) statuses
    max_attempts: int | None = None
    items: Any = None  # an imported dataset's :class:`~vocab.datasets.items.Items`
    _cells: pd.DataFrame | None = None

    def _all(self) -> None:
        frame = flatten(self.items.all(), self.rubric, self.visible)
        scored = frame.verdict != "UNSCORED"
        cols = ["cell", "level", "attempt", "id", "system", "judge", "verdict", "checks", *self.visible]
        self._attempts = frame.loc[scored, cols].reset_index(drop=True)
        uns = frame.loc[~scored].reset_index(drop=True)
        self._unscored = uns if len(uns) else pd.DataFrame(columns=[*cols, "reason"])

    @property
    def attempts(self) -> pd.DataFrame:
        """Every item with a verdict, in (cell, level, attempt) order: a frame of them all (read on first use)."""
        if self._attempts is None:
            self._all()
        return self._attempts

    @property
    def unscored(self) -> pd.DataFrame:
        if self._unscored is None:
            self._all()
        return self._unscored

    @property
    def cells(self) -> pd.DataFrame:
        """Per cell (its name the index, sorted): ``attempts`` (items with a verdict), ``passed``, ``failed``,
        ``unscored``, ``groups`` (with a verdict), ``failed_groups``, ``deff`` (the design effect of the judge's
        pass rate over groups, :func:`vocab.stats.design_effect`). Every cell, those whose items were all lost
        too (``attempts`` 0)."""
        if self._cells is None:
            if self.items is not None:
                per = self.manifest["items"]["cells"]
                frame = pd.DataFrame.from_dict(per, orient="index")
            else:
                frame = cells_table(self.attempts)
                lost = self.lost().set_index("cell").lost
                frame = frame.reindex(sorted(set(frame.index) | set(lost.index)))
                frame["unscored"] = lost.reindex(frame.index).fillna(0)
                frame = frame.fillna({"passed": 0, "failed": 0, "groups": 0, "failed_groups": 0, "deff": 1.0})
            frame = frame.astype({k: "int64" for k in ("passed", "failed", "unscored", "groups", "failed_groups")})
            frame.insert(0, "attempts", frame.passed + frame.failed)
            self._cells = frame.sort_index()
        return self._cells

    def __repr__(self) -> str:
        return (
            f"<{self.describe()}; {len(self.cells)} cells: {', '.join(cell_label(c) for c in self.cells.index[:6])}"
            + (" …>" if len(self.cells) > 6 else ">")
        )

    def _repr_html_(self) -> str:
        table = self.cells[["attempts", "passed", "failed", "unscored"]].rename(index=cell_label)
        return reprs.summary_html(self.describe(), [f"rubric: {len(self.rubric.criteria)} checks"], table)

    def describe(self) -> str:
        if self.kind == "run":
            return f"run {self.name}: status {self.status}, {len(self.attempts)} attempts with a verdict"
        c = self.cells
        if self.items is not None and self.manifest["items"].get("reasons") is not None:
            reasons = pd.Series(self.manifest["items"]["reasons"], dtype=int).sort_index()
        else:
            reasons = self.unscored.reason.value_counts().sort_index() if len(self.unscored) else pd.Series(dtype=int)
        why = ", ".join(f"{k} {v}" for k, v in reasons.items())
        return (
            f"dataset {self.name} ({self.manifest['source']['kind']}): {int(c.attempts.sum())} items with a verdict, "
            f"{int(c.unscored.sum())} unscored" + (f" ({why})" if why else "") + " — unscored items are not FAILs"
        )

    def lost(self) -> pd.DataFrame:
        """Per cell: the units lost before a verdict and how many failed attempts they would add had they
        failed (a run: its abandoned levels, each up to the loop's attempt budget; an imported dataset: its
        unscored items, one each)."""
        if self.kind != "run":
            c = self.cells
            lost = c.unscored.astype(int).tolist()
            return pd.DataFrame(
                {"cell": list(c.index), "lost": lost, "failed_if": lost}, columns=["cell", "lost", "failed_if"]
            )
        rows = []
        for cell in sorted(set(self.attempts.cell)):
            lost = self.outcomes[(self.outcomes.cell == cell) & (self.outcomes.status == "ABANDONED")]
            rows.append(
                {
                    "cell": cell,
                    "lost": len(lost),
                    "failed_if": int((self.max_attempts - lost.attempts).clip(lower=1).sum()),
                }
            )
        return pd.DataFrame(rows, columns=["cell", "lost", "failed_if"])

    @property
    def lost_label(self) -> str:
        return "abandoned_levels" if self.kind == "run" else "unscored_items"


def cells_table(attempts: pd.DataFrame) -> pd.DataFrame:
    """Per cell of a frame of attempts (each with a verdict): passed, failed, groups, failed_groups and deff, as
    :attr:`Dataset.cells` holds them (the level counts as :func:`vocab.estimates.correct.level_counts` makes
    them, so the design effect is the same number)."""

    rows = {}
    for cell, a in attempts.groupby("cell", sort=True):
        passed = a.verdict.eq("PASSED")
        levels = a.assign(passed=passed).groupby("level", sort=True).passed.agg(passes="sum", attempts="size")
        rows[cell] = {
            "passed": int(passed.sum()),
            "failed": int((a.verdict == "FAILED").sum()),
            "groups": len(levels),
            "failed_groups": int(a.level[a.verdict == "FAILED"].nunique()),
            "deff": float(stats.design_effect(levels.passes, levels.attempts)),
        }
    return pd.DataFrame.from_dict(rows, orient="index", columns=["passed", "failed", "groups", "failed_groups", "deff"])


def is_imported(run_dir: str | Path) -> bool:
    return (Path(run_dir) / DATASET_FILE).exists()


def read_meta(run_dir: str | Path) -> dict[str, Any]:
    """An imported dataset's ``dataset.json``; a damaged one (cut, not JSON, not UTF-8) is one line."""
    meta = read_json_object(
        Path(run_dir) / DATASET_FILE,
        ("rubric", "visible", "name"),
        "a dataset description",
        "import again into a new directory",
        CalibrationError,
    )
    items = meta.get("items")
    if not (isinstance(items, dict) and {"sha256", "cells", "digest"} <= set(items)) and not isinstance(
        meta.get("judgments_sha256"), str
    ):
        raise CalibrationError(
            f"{Path(run_dir) / DATASET_FILE} is not a dataset description vocab wrote: import "
            "again into a new directory"
        )
    check_meta(Path(run_dir) / DATASET_FILE, meta)  # each field the commands read, of its type and range
    return meta


def _file_sha256(path: Path) -> str | None:
    return sha256_file(path) if path.is_file() else None


def _judgments_match(path: Path, sha256: str) -> bool:
    return _file_sha256(path) == sha256


def read_rubric(run_dir: str | Path) -> JudgeRubric:
    """The rubric the raters of ``run_dir`` grade: an imported dataset's own, else Vocabscapes'."""
    if is_imported(run_dir):
        return JudgeRubric.from_dict(read_meta(run_dir)["rubric"])
    return VOCABSCAPES


def _legacy_items(run_dir: Path, meta: dict[str, Any]):
    """A dataset written before 2026-12 (``judgments.jsonl``): its items in memory, in the items' columns, with
    the summary an import keeps today."""

    path = run_dir / JUDGMENTS_FILE
    if not _judgments_match(path, meta["judgments_sha256"]):
        raise CalibrationError(
            f"{path} is not the file {DATASET_FILE} describes (missing, cut or replaced): import again into a new "
            "directory"
        )
    con = items.connect()
    con.register("legacy_items", items.rows_frame(read_jsonl(path)))
    return items.Items(con, "legacy_items"), items.summarize(con, "legacy_items")


def load_dataset(run_dir: str | Path) -> Dataset:
    """A run directory (:func:`run_dataset`) or an imported dataset (:func:`imported_dataset`), for the calibration
    chain: which one, told by its ``dataset.json``."""
    return imported_dataset(run_dir) if is_imported(run_dir) else run_dataset(run_dir)


def run_dataset(run_dir: str | Path) -> Dataset:
    """A Vocabscapes run (:func:`vocab.records.load_run`) as the chain's dataset: its attempts are the judged items,
    a level is a group, its critic the judge."""

    run = load_run(run_dir)
    m = run.manifest
    return Dataset(
        Path(run_dir),
        "run",
        m["run_id"],
        m["status"],
        VOCABSCAPES,
        VOCABSCAPES_VISIBLE,
        run.attempts,
        pd.DataFrame(columns=["cell", "level", "attempt", "reason"]),
        m,
        run.outcomes,
        m["loop"]["max_attempts"],
    )


def imported_dataset(run_dir: str | Path) -> Dataset:
    """An imported dataset: ``dataset.json`` and its items, queried where they lie (the items file is checked against
    the SHA-256 ``dataset.json`` keeps: a read of the file, not of its rows into memory). A dataset whose recorded
    labels are not there (:func:`check_labels_kept`) is refused."""

    run_dir = Path(run_dir)
    meta = read_meta(run_dir)
    check_labels_kept(run_dir, meta)
    return dataset_of(run_dir, meta)


def check_labels_kept(run_dir: str | Path, meta: dict[str, Any]) -> None:
    """People's labels that ``dataset.json`` records are part of the dataset: its sample (``calibration/key.csv``,
    ``sample.json``) and each labelling person's ratings file must be there. A labelled import cut short before it
    wrote them (before 2026-12-07 they came after ``dataset.json``), or a ``calibration/`` moved away, would
    otherwise pass for an unlabelled dataset and have a fresh sample drawn over the lost labels: one line saying to
    run the import again (it restores them). ``source.labels_used`` (person -> labels of items the judge scored, the
    ones the sample holds) names what the import wrote; a dataset imported before it was kept needs its key."""
    source = meta.get("source") if isinstance(meta.get("source"), dict) else {}
    layout = RunDir(run_dir)
    used = source.get("labels_used")
    if used is None:  # imported before 2026-12-07: labels of unscored items alone make no sample; the key is checked
        said = source.get("human_labels")
        if not isinstance(said, dict) or not any(said.values()):
            return
        need, people = [layout.key], said
    elif not isinstance(used, dict) or not all(isinstance(v, int) and v >= 0 for v in used.values()):
        raise CalibrationError(
            f"{layout.root / DATASET_FILE}: source.labels_used is not a count of labels per person: "
            "import again into a new directory"
        )
    else:
        people = {n: k for n, k in used.items() if k}
        if not people:
            return
        need = [layout.key, layout.sample_meta, *(layout.ratings(n) for n in sorted(people))]
    missing = [p for p in need if not p.exists()]
    if missing:
        raise CalibrationError(
            f"{run_dir}: {DATASET_FILE} records people's labels ({', '.join(f'{n} {k}' for n, k in people.items())}) "
            f"but {missing[0].relative_to(layout.root).as_posix()} is missing (an import cut short, or calibration/ "
            f"moved away): run the same `vocab import` into {run_dir} again to restore them"
        )


def dataset_of(run_dir: str | Path, meta: dict[str, Any]) -> Dataset:
    """An imported dataset from its ``dataset.json``'s content ``meta`` (read, or about to be written by an import
    whose items are in place)."""

    run_dir = Path(run_dir)
    if "items" not in meta:
        store, summary = _legacy_items(run_dir, meta)
        meta = {**meta, "items": summary}
    else:
        store = items.Items(items.connect(), _items_source(run_dir, meta["items"]))
        check_counts(run_dir / DATASET_FILE, meta, store)  # the counts kept are the items' own, recounted
    rub = JudgeRubric.from_dict(meta["rubric"])
    return Dataset(
        run_dir, "judgments", meta["name"], "complete", rub, tuple(meta["visible"]), None, None, meta, items=store
    )


def item_files(run_dir: str | Path, held: dict[str, Any]) -> list[Path]:
    """An imported dataset's items files (``dataset.json``'s ``items``: ``items.parquet``, or the parts of a table
    imported on Dask), each checked against the SHA-256 ``dataset.json`` keeps of it (a read of the file, not of
    its rows into memory)."""

    parts = held.get("parts")
    if isinstance(parts, list):
        named = [(p.get("file"), p.get("sha256")) if isinstance(p, dict) else (None, None) for p in parts]
    else:
        named = [(held.get("file", items.ITEMS_FILE), held["sha256"])]
    paths = []
    for name, sha256 in named:
        path = Path(run_dir) / str(name)
        if (
            not isinstance(name, str)
            or Path(name).is_absolute()
            or ".." in Path(name).parts
            or _file_sha256(path) != sha256
        ):
            raise CalibrationError(
                f"{path} is not the file {DATASET_FILE} describes (missing, cut or replaced): "
                "import again into a new directory"
            )
        paths.append(path)
    return paths


def _items_source(run_dir: Path, held: dict[str, Any]) -> str:
    """The dataset's items for DuckDB: its items files (:func:`item_files`) read as one table."""

    paths = item_files(run_dir, held)
    if "parts" not in held:
        return items.parquet_source(paths[0])
    return f"read_parquet([{', '.join(items.source_literal(p) for p in paths)}], {items.NO_HIVE})"


def judgment_rows(run_dir: str | Path, limit: int | None = None) -> list[dict[str, Any]]:
    """An imported dataset's judged items as the importers made them (id, group, epoch, system, judge, verdict,
    criteria, visible, hidden), in the source's order: the first ``limit`` (all without one)."""
    return rows_of(load_dataset(run_dir).items.in_source_order(limit))


def rows_of(frame: pd.DataFrame) -> list[dict[str, Any]]:
    """A frame in the items' columns as judgment rows, the importers' shape (JSON fields parsed)."""
    names = ("id", "group", "epoch", "system", "judge", "verdict")
    return [
        dict(zip(names, (r.id, r.level, int(r.attempt), r.system, r.judge, r.verdict), strict=True))
        | {k: json.loads(getattr(r, k)) for k in ("criteria", "visible", "hidden")}
        for r in frame.itertuples(index=False)
    ]
