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

An imported dataset is a directory holding ``dataset.json`` (source, rubric, counts) and ``judgments.jsonl``;
the calibration files follow in ``calibration/`` and ``analysis/`` as for a run. A Vocabscapes run directory
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

from vocab import rubric as vocab_rubric
from vocab.calibration.errors import CalibrationError
from vocab.records import read_json_object, write_text_atomic

CLASSES = ("PASSED", "FAILED", "UNSCORED")
DATASET_FILE, JUDGMENTS_FILE = "dataset.json", "judgments.jsonl"
FORMAT_VERSION = "1"


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
            r = cls(d["name"], str(d["version"]), crit, tuple(d["scope"]), bool(d.get("script", False)),
                    d.get("instructions", ""))  # fmt: skip
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
    """The criteria a source declares, one column each; every one must pass for the overall verdict."""
    crit = tuple(Criterion(n, n, n, f"{question} Criterion: {n}.") for n in names)
    return JudgeRubric("declared criteria", "1", crit, tuple(names), instructions=question)


# --- a judgments dataset ---------------------------------------------------------------------------------

VOCABSCAPES_VISIBLE = ("seed_word", "words", "settings", "sentence", "answer_key")


@dataclass
class Dataset:
    """A run or an imported dataset, as the calibration notebooks read it."""

    run_dir: Path
    kind: str  # "run" (a Vocabscapes run) or "judgments" (imported)
    name: str
    status: str
    rubric: JudgeRubric
    visible: tuple[str, ...]  # the blind sheet's fields, after blind_id
    attempts: pd.DataFrame  # one row per item with a verdict: cell, level (= group), attempt (= epoch), verdict, ...
    unscored: pd.DataFrame  # imported items without a usable verdict (empty for a run)
    manifest: dict[str, Any] = field(default_factory=dict)
    outcomes: pd.DataFrame | None = None  # a run's (cell, level) statuses
    max_attempts: int | None = None

    def describe(self) -> str:
        if self.kind == "run":
            return f"run {self.name}: status {self.status}, {len(self.attempts)} attempts with a verdict"
        reasons = self.unscored.reason.value_counts().sort_index() if len(self.unscored) else pd.Series(dtype=int)
        why = ", ".join(f"{k} {v}" for k, v in reasons.items())
        return (
            f"dataset {self.name} ({self.manifest['source']['kind']}): {len(self.attempts)} items with a verdict, "
            f"{len(self.unscored)} unscored" + (f" ({why})" if why else "") + " — unscored items are not FAILs"
        )

    def lost(self) -> pd.DataFrame:
        """Per cell: the units lost before a verdict and how many failed attempts they would add had they
        failed (a run: its abandoned levels, each up to the loop's attempt budget; an imported dataset: its
        unscored items, one each)."""
        cells = sorted(set(self.attempts.cell) | set(self.unscored.get("cell", pd.Series(dtype=str))))
        rows = []
        for cell in cells:
            if self.kind == "run":
                lost = self.outcomes[(self.outcomes.cell == cell) & (self.outcomes.status == "ABANDONED")]
                rows.append({"cell": cell, "lost": len(lost),
                             "failed_if": int((self.max_attempts - lost.attempts).clip(lower=1).sum())})  # fmt: skip
            else:
                n = int((self.unscored.cell == cell).sum()) if len(self.unscored) else 0
                rows.append({"cell": cell, "lost": n, "failed_if": n})
        return pd.DataFrame(rows, columns=["cell", "lost", "failed_if"])

    @property
    def lost_label(self) -> str:
        return "abandoned_levels" if self.kind == "run" else "unscored_items"


MAX_NAME = 200  # characters in a system's or a judge's name
CELL_JOIN = "__"  # a cell's name: its system and its judge, joined


def cell_of(system: str, judge: str) -> str:
    """The cell of a (system, judge) pair. No name holds :data:`CELL_JOIN` or begins or ends with ``_`` (an import
    refuses it), so the first ``__`` of a cell's name is where its system ends and two pairs never share a cell:
    `a__b` judged by `c` and `a` judged by `b__c` would both be `a__b__c`, `a_` judged by `b` and `a` judged by `_b`
    both `a___b`."""
    return f"{system}{CELL_JOIN}{judge}"


def _unprintable(name: str) -> str | None:
    """The first character of ``name`` that is a control or format character (NUL, a right-to-left override), else
    None: such a name prints as something else in every table, figure and file name."""
    import unicodedata

    return next((c for c in name if unicodedata.category(c) in ("Cc", "Cf")), None)


def check_cell_names(rows: list[dict[str, Any]]) -> None:
    """Every row's system and judge usable in a cell's name, else one line naming the first that is not: at most
    :data:`MAX_NAME` characters, no ``__`` in it and no ``_`` at either end, no control or format character."""
    for r in rows:
        for role in ("system", "judge"):
            name = str(r.get(role, ""))
            item = str(r.get("id", "?"))[:40]
            if len(name) > MAX_NAME:
                raise CalibrationError(
                    f"{role} of item {item!r} is {len(name):,} characters long; a name names a cell in every table "
                    f"and figure: at most {MAX_NAME} (rename it)"
                )
            shown = name if len(name) <= 60 else name[:57] + "..."
            if CELL_JOIN in name or name.startswith("_") or name.endswith("_"):
                raise CalibrationError(
                    f"{role} {shown!r} (item {item!r}) holds {CELL_JOIN!r} or begins or ends with '_': a cell's name "
                    f"joins a system to its judge with {CELL_JOIN!r}, and two pairs would share a cell; rename it"
                )
            bad = _unprintable(name)
            if bad is not None:
                raise CalibrationError(
                    f"{role} {shown!r} (item {item!r}) holds the control character U+{ord(bad):04X}, which prints "
                    "as something else in tables, figures and file names; rename it"
                )


def is_imported(run_dir: str | Path) -> bool:
    return (Path(run_dir) / DATASET_FILE).exists()


def read_meta(run_dir: str | Path) -> dict[str, Any]:
    """An imported dataset's ``dataset.json``; a damaged one (cut, not JSON, not UTF-8) is one line."""
    return read_json_object(Path(run_dir) / DATASET_FILE, ("rubric", "visible", "name", "judgments_sha256"),
                            "a dataset description", "import again into a new directory", CalibrationError)  # fmt: skip


def _judgments_match(path: Path, sha256: str) -> bool:
    return path.is_file() and hashlib.sha256(path.read_bytes()).hexdigest() == sha256


def name_dataset(run_dir: str | Path, name: str) -> None:
    """An imported dataset's name (its report's title), written into ``dataset.json``."""
    from vocab.files import write_text_atomic

    path = Path(run_dir) / DATASET_FILE
    meta = read_meta(run_dir)
    if meta.get("name") != name:
        write_text_atomic(path, json.dumps({**meta, "name": name}, indent=2, ensure_ascii=False) + "\n",
                          run_dir, CalibrationError)  # fmt: skip


def read_rubric(run_dir: str | Path) -> JudgeRubric:
    """The rubric the raters of ``run_dir`` grade: an imported dataset's own, else Vocabscapes'."""
    if is_imported(run_dir):
        return JudgeRubric.from_dict(read_meta(run_dir)["rubric"])
    return VOCABSCAPES


def load_dataset(run_dir: str | Path) -> Dataset:
    """A run directory or an imported dataset, for the calibration chain."""
    run_dir = Path(run_dir)
    if not is_imported(run_dir):
        from vocab.records import load_run

        run = load_run(run_dir)
        m = run.manifest
        return Dataset(run_dir, "run", m["run_id"], m["status"], VOCABSCAPES, VOCABSCAPES_VISIBLE, run.attempts,
                       pd.DataFrame(columns=["cell", "level", "attempt", "reason"]), m, run.outcomes,
                       m["loop"]["max_attempts"])  # fmt: skip
    from vocab.records import read_jsonl

    meta = read_meta(run_dir)
    path = run_dir / JUDGMENTS_FILE
    if not _judgments_match(path, meta["judgments_sha256"]):
        raise CalibrationError(
            f"{path} is not the file {DATASET_FILE} describes (missing, cut or replaced): import again into a new "
            "directory"
        )
    rows = read_jsonl(path)
    rub = JudgeRubric.from_dict(meta["rubric"])
    visible = tuple(meta["visible"])
    scored, unscored = [], []
    for r in rows:
        flat = {
            "cell": cell_of(r["system"], r["judge"]),
            "level": str(r["group"]),
            "attempt": int(r["epoch"]),
            "id": str(r["id"]),
            "system": r["system"],
            "judge": r["judge"],
            "verdict": r["verdict"],
            "checks": dict(r.get("criteria") or {}) or {c.id: r["verdict"] for c in rub.criteria},
            **{f: r["visible"].get(f, "") for f in visible},
        }
        if r["verdict"] == "UNSCORED":
            unscored.append({**flat, "reason": r.get("hidden", {}).get("unscored_reason", "unscored")})
        else:
            scored.append(flat)
    cols = ["cell", "level", "attempt", "id", "system", "judge", "verdict", "checks", *visible]
    att = pd.DataFrame(scored, columns=cols).sort_values(["cell", "level", "attempt"], kind="stable")
    uns = pd.DataFrame(unscored, columns=[*cols, "reason"])
    return Dataset(run_dir, "judgments", meta["name"], "complete", rub, visible, att.reset_index(drop=True), uns, meta)


def write_dataset(run_dir: str | Path, rows: list[dict[str, Any]], meta: dict[str, Any]) -> Path:
    """Write an imported dataset: ``judgments.jsonl`` then ``dataset.json`` (last: its presence marks a
    complete import). A directory holding a run, or another dataset, is never overwritten; the same import
    again is a no-op."""
    run_dir = Path(run_dir)
    check_cell_names(rows)
    for name in (JUDGMENTS_FILE, DATASET_FILE):  # what a killed import left: its hidden temporary files
        for stale in run_dir.glob(f".{name}.*.tmp"):
            stale.unlink(missing_ok=True)
    body = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows)
    counts = {c: sum(r["verdict"] == c for r in rows) for c in CLASSES}
    meta = {**meta, "format_version": FORMAT_VERSION, "counts": counts,
            "judgments_sha256": hashlib.sha256(body.encode()).hexdigest()}  # fmt: skip
    if (run_dir / "manifest.json").exists():
        raise CalibrationError(f"{run_dir} holds a run; import into a directory of its own")
    if (run_dir / DATASET_FILE).exists():
        if read_meta(run_dir).get("judgments_sha256") == meta["judgments_sha256"]:
            path = run_dir / JUDGMENTS_FILE  # the same import again: a damaged judgments.jsonl is written anew
            if not _judgments_match(path, meta["judgments_sha256"]):
                write_text_atomic(path, body)
            return run_dir
        raise CalibrationError(f"{run_dir} holds another dataset; import into a new directory")
    run_dir.mkdir(parents=True, exist_ok=True)
    write_text_atomic(run_dir / JUDGMENTS_FILE, body)
    write_text_atomic(run_dir / DATASET_FILE, json.dumps(meta, indent=2, ensure_ascii=False) + "\n")
    return run_dir
