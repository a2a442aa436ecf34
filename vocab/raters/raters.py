"""The blind raters and their files: validation and import of a rater's ratings, the script rater, and an
LLM as an isolated blind rater.

A rater's file ``ratings_<rater>.csv`` has ``blind_id`` and one column per criterion of the dataset's rubric
(:mod:`vocab.datasets.dataset`) — for a Vocabscapes run ``c1, ..., c12`` (PASSED or FAILED; ``c1`` may be
empty; the script rater leaves the checks it cannot decide empty), for an imported dataset ``verdict`` or the
criteria its source declares — and an optional ``note``.
"""

from __future__ import annotations

import dataclasses
import hashlib
import io
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from vocab import prompts, rubric, script
from vocab.datasets.dataset import VOCABSCAPES, JudgeRubric, declared_criteria, read_rubric
from vocab.files import (
    check_inside,
    check_writable,
    make_dir,
    read_text,
    write_text_atomic,
)
from vocab.layout import RunDir
from vocab.raters.packet import check_rater_name
from vocab.raters.ratings_file import MAX_RATINGS_BYTES, read_ratings_file  # noqa: F401 (importable here)
from vocab.records import JsonlWriter, read_jsonl
from vocab.rubric import VERDICTS
from vocab.sampling.sample import CalibrationError, earlier_sheet_hashes, read_sheet, sheet_sha256, stage_ids

RATING_COLUMNS = ["blind_id", *VOCABSCAPES.columns]


def rubric_of(ratings: pd.DataFrame) -> JudgeRubric:
    """The rubric a ratings table was made under, from its columns: Vocabscapes' checks when it has them,
    else its own columns as criteria that all decide."""
    if set(VOCABSCAPES.columns) <= set(ratings.columns):
        return VOCABSCAPES
    return declared_criteria([c for c in ratings.columns if c not in ("blind_id", "note")])


# --- ratings -----------------------------------------------------------------------------------------


def validate_ratings(
    ratings: pd.DataFrame,
    sheet_ids: list[str],
    *,
    allow_empty: bool = False,
    rubric: JudgeRubric = VOCABSCAPES,
    partial: bool = False,
) -> pd.DataFrame:
    """Check a ratings table against its sheet and rubric; return it normalised, or raise one error listing
    every offending row: ids missing, unknown or repeated, and labels outside PASSED/FAILED (an optional
    criterion — Vocabscapes' ``c1`` — may be empty, and with ``allow_empty`` — the script rater — any
    undecided one may be). ``partial``: a sheet rated in part is accepted (at least one row)."""
    problems = []
    columns = ["blind_id", *rubric.columns]
    ratings = ratings.copy()
    for crit in rubric.criteria:  # an optional criterion never answered (Label Studio exports no empty choice)
        if crit.optional and crit.column not in ratings.columns:
            ratings[crit.column] = ""
    missing_cols = [c for c in columns if c not in ratings.columns]
    if missing_cols:
        raise CalibrationError(f"missing columns: {', '.join(missing_cols)}")
    r = ratings.copy()
    r["blind_id"] = r["blind_id"].astype(str).str.strip()
    dup = r.blind_id[r.blind_id.duplicated()].unique()
    if len(dup):
        problems.append(f"repeated ids: {', '.join(sorted(dup))}")
    unknown = sorted(set(r.blind_id) - set(sheet_ids))
    if unknown:
        problems.append(f"unknown ids: {', '.join(unknown)}")
    missing = sorted(set(sheet_ids) - set(r.blind_id))
    if partial and not len(r):
        problems.append("no rated rows")
    if missing and not partial:
        problems.append(f"ids of the sheet not rated: {', '.join(missing)} (hand in part of a sheet with --partial)")
    for crit in rubric.criteria:
        col = crit.column
        r[col] = r[col].fillna("").astype(str).str.strip().str.upper()
        ok = r[col].isin(VERDICTS) | ((r[col] == "") & (allow_empty or crit.optional))
        for bid, value in zip(r.blind_id[~ok], r[col][~ok], strict=True):
            problems.append(f"{bid}: {col} is {value!r} (expected PASSED or FAILED)")
    if problems:
        raise CalibrationError(f"ratings rejected ({len(problems)} problems): " + "; ".join(problems))
    return r


def check_provenance(df: pd.DataFrame, path, run_dir, rater: str) -> bool:
    """A ratings file from the form names its rater and the sample it was rated on (columns ``rater`` and
    ``sample_sha256``, the sha256 of the blind sheet its packet was cut from): an import under another rater's name,
    or into a run whose sample is another (two audits' packets can share blind ids), is refused. A file without
    them (written by hand) cannot be checked so: False then, and the import says so."""
    if "sample_sha256" in df.columns:
        hashes = set(df.sample_sha256)
        here = sheet_sha256(run_dir)
        # a pilot's extension keeps its first stage's rows valid: the sheets it grew from count as this sample
        known = {here, *earlier_sheet_hashes(run_dir)}
        if len(hashes) != 1 or not hashes <= known:
            shown = ", ".join(sorted(h[:12] for h in hashes))
            raise CalibrationError(
                f"{path} was rated on another sample (sheet {shown}), not {run_dir}'s ({(here or 'none')[:12]}): "
                "import it into the run or dataset its packet was cut from"
            )
    if "rater" in df.columns and set(df.rater) != {rater}:
        named = sorted(set(df.rater) - {""})
        unnamed = int((df.rater == "").sum())
        if unnamed and named == [rater]:
            raise CalibrationError(
                f"{path} names its rater {rater} on {len(df) - unnamed} rows and none on "
                f"{unnamed}: a file of one rater names them on every row (export it again)"
            )
        said = ", ".join(named)[:80] + (f" and {unnamed} rows naming no rater" if unnamed else "")
        raise CalibrationError(f"{path} was rated by {said.removeprefix(' and ')}, not {rater}")
    return "sample_sha256" in df.columns


@dataclass(frozen=True)
class HandIn:
    """What one ``vocab ratings import`` did: the file written, the rows it rates, and against the earlier hand-in
    of the same rater (kept in ``calibration/history/`` before it is replaced) the rows dropped and changed."""

    path: Path
    rows: int
    earlier: Path | None = None  # where the replaced file was kept
    dropped: tuple[str, ...] = ()
    changed: tuple[str, ...] = ()
    unchanged: bool = False
    sample_checked: bool = True  # False: the file names no sample (sample_sha256), so only its ids were checked
    kept: int = 0  # rows of the sample's other stages the earlier file rated, kept beside this stage's hand-in

    def text(self) -> str:
        if self.unchanged:
            s = f"{self.path}: the same {self.rows} rated rows as already stored; nothing written"
        else:
            s = f"{self.path}: {self.rows} rated rows"
            if self.kept:
                s += f" ({self.kept} of them from the earlier hand-in of the sample's other stage)"
            if self.earlier is not None:
                s += f"; the earlier hand-in is kept as {self.earlier}"
                s += f" ({len(self.changed)} rows changed, {len(self.dropped)} dropped)"
        if not self.sample_checked:
            s += (
                "\nnote: the file names no sample (sample_sha256, which the form's ratings.csv carries): its blind "
                "ids match this run's sheet, but that it was rated on this sample could not be checked"
            )
        return s


def import_ratings(
    path: str | Path, run_dir: str | Path, rater: str, *, partial: bool = False, replace: bool = False
) -> HandIn:
    """Validate a ratings CSV against the run's blind sheet and store it as ratings_<rater>.csv. On any
    problem nothing is written. ``partial``: a sheet rated in part (a human rater's hand-in so far); the
    notebooks say how many rows each rater covers. The name follows the form's rule and may not be a machine
    rater's (``script``, an LLM rater of the run): their files are written by ``vocab calibrate`` / ``vocab rate``
    alone, never replaced by an import.

    A later hand-in of the same rater keeps the earlier file in ``calibration/history/`` (named by its hash), and
    one that would drop rows the earlier file rated is refused unless ``replace`` says so."""

    check_rater_name(rater, run_dir)
    df = read_ratings_file(path)
    checked = check_provenance(df, path, run_dir, rater)
    sheet, rub = read_sheet(run_dir), read_rubric(run_dir)
    kept = _other_stages(run_dir, rater, df)
    valid = validate_ratings(df, list(sheet.blind_id), rubric=rub, partial=partial or kept is not None)
    cols = ["blind_id", *rub.columns] + (["note"] if "note" in valid.columns else [])
    if kept is not None:  # a later stage's packet rates its own rows: the earlier file's other rows stay
        cols = list(dict.fromkeys([*cols, *(["note"] if "note" in kept.columns else [])]))
        both = pd.concat([kept.reindex(columns=cols), valid.reindex(columns=cols)], ignore_index=True).fillna("")
        order = {b: i for i, b in enumerate(sheet.blind_id.astype(str))}
        valid = both.sort_values("blind_id", key=lambda c: c.map(order), kind="stable").reset_index(drop=True)
        missing = sorted(set(sheet.blind_id.astype(str)) - set(valid.blind_id))
        if missing and not partial:
            raise CalibrationError(
                f"ids of the sheet not rated: {', '.join(missing)} (hand in part of a sheet with --partial)"
            )
    h = store_ratings(run_dir, rater, valid[cols], rub, replace=replace, sample_checked=checked)
    return dataclasses.replace(h, kept=len(kept) if kept is not None else 0)


def _other_stages(run_dir, rater: str, df: pd.DataFrame) -> pd.DataFrame | None:
    """A sample grown by a pilot's extension is rated in stages, each from its own packet: a hand-in whose rows all
    lie in one stage replaces the earlier file's rows of that stage only. The earlier file's rows of the other
    stages (None when there are none to keep: one stage, no earlier file, or a hand-in that spans stages)."""

    if not RunDir(run_dir).ratings(rater).exists() or "blind_id" not in df.columns:
        return None
    stages = [set(s) for s in stage_ids(run_dir)]
    ids = set(df.blind_id.astype(str).str.strip())
    mine = [s for s in stages if ids & s]
    if len(stages) < 2 or len(mine) != 1 or not ids <= mine[0]:
        return None
    old = read_ratings(run_dir, rater)
    old = old[~old.blind_id.astype(str).isin(mine[0])]
    return old if len(old) else None


def store_ratings(
    run_dir: str | Path, rater: str, valid: pd.DataFrame, rub, *, replace: bool = False, sample_checked: bool = True
) -> HandIn:
    """``calibration/ratings_<rater>.csv`` written with ``valid`` (checked ratings): the same rows again write
    nothing; different ones keep the earlier file in ``calibration/history/`` (named by its hash) before it is
    replaced, and one that would drop rows the earlier file rated is refused unless ``replace``. Every place is
    checked before anything is written."""

    out = RunDir(run_dir).ratings(rater)
    body = valid.to_csv(index=False)
    check_writable(out, run_dir, CalibrationError)
    if not out.exists():
        write_text_atomic(out, body, run_dir, CalibrationError)
        return HandIn(out, len(valid), sample_checked=sample_checked)
    before = read_text(out, MAX_RATINGS_BYTES, "ratings file", CalibrationError)
    if before == body:
        return HandIn(out, len(valid), unchanged=True, sample_checked=sample_checked)
    old = pd.read_csv(io.StringIO(before), dtype=str, keep_default_na=False).set_index("blind_id")
    new = valid.set_index("blind_id")
    dropped = tuple(sorted(set(old.index) - set(new.index)))
    both = sorted(set(old.index) & set(new.index))
    shared = [c for c in rub.columns if c in old.columns]
    changed = tuple(b for b in both if not old.loc[b, shared].equals(new.loc[b, shared]))
    if dropped and not replace:
        raise CalibrationError(
            f"{out} rates {len(dropped)} rows this hand-in does not ({', '.join(dropped[:5])}"
            f"{', ...' if len(dropped) > 5 else ''}): hand in the whole sheet, or --replace to replace it"
        )
    digest = hashlib.sha256(before.encode()).hexdigest()[:12]
    history = RunDir(run_dir).history
    earlier = history / f"ratings_{rater}.{digest}.csv"
    check_writable(earlier, run_dir, CalibrationError)
    make_dir(history, run_dir, CalibrationError)
    if not earlier.exists():
        write_text_atomic(earlier, before, run_dir, CalibrationError)
    write_text_atomic(out, body, run_dir, CalibrationError)
    return HandIn(out, len(valid), earlier, dropped, changed, sample_checked=sample_checked)


def read_ratings(
    run_dir: str | Path, rater: str, *, sheet_ids: list[str] | None = None, rubric: JudgeRubric | None = None
) -> pd.DataFrame:
    """``calibration/ratings_<rater>.csv``, checked against the sheet under the dataset's rubric (a partial
    file, imported with ``--partial``, is read as it is: :func:`coverage_text` says how much it covers).
    ``sheet_ids`` and ``rubric``: the sheet's ids and the rubric as the caller read them (by default read here)."""

    path = RunDir(run_dir).ratings(rater)
    if not path.exists():
        raise CalibrationError(f"{path}: no such ratings file (rate the sheet first: vocab rate / vocab calibrate)")
    check_inside(path, run_dir, CalibrationError)  # a rater's file is the run's own, not a link to another's
    df = read_ratings_file(path)
    sheet_ids = list(read_sheet(run_dir).blind_id) if sheet_ids is None else sheet_ids
    rub = read_rubric(run_dir) if rubric is None else rubric
    try:
        return validate_ratings(df, sheet_ids, allow_empty=(rater == "script"), rubric=rub, partial=True)
    except CalibrationError as e:  # a stored file, damaged since: named, with what is wrong in it
        problem = " ".join(str(e).split())[:300]
        raise CalibrationError(
            f"{path}: a stored ratings file that does not fit the sample ({problem}): hand the rater's file in again "
            "(vocab ratings import), or move it away"
        ) from None


def coverage_text(ratings: dict[str, pd.DataFrame], n_rows: int) -> str:
    """Each rater's share of the sheet, e.g. ``smollm2 63/63, human 12/63 (partial)``."""
    return ", ".join(
        f"{n} {len(r)}/{n_rows}" + (" (partial)" if len(r) < n_rows else "") for n, r in sorted(ratings.items())
    )


def script_ratings(sheet: pd.DataFrame) -> pd.DataFrame:
    """The script rater: checks 2 and 3 for every row, and the mechanical ones it can decide; the rest
    empty."""
    rows = []
    for r in sheet.itertuples(index=False):
        v = script.adjudicate(list(r.words), r.sentence, list(r.answer_key), dict(r.settings), r.seed_word)
        rows.append({"blind_id": r.blind_id, **{f"c{k}": (val or "") for k, val in v.checks.items()}})
    return pd.DataFrame(rows, columns=RATING_COLUMNS)


# --- the LLM blind rater -----------------------------------------------------------------------------


@dataclass(frozen=True)
class RaterProgress:
    """Where an LLM blind rater stands on a sheet after one pass of :func:`rate_with_model`."""

    rated: int  # rows with an answer
    missing: int  # rows without one
    new: int  # answers this pass added
    exhausted: int  # missing rows that have used up their tries

    @property
    def complete(self) -> bool:
        return self.missing == 0

    def as_dict(self) -> dict[str, int]:
        return dataclasses.asdict(self)


def _rater_lines(path: Path, keys: tuple[str, ...]) -> list[dict]:
    """A rater's log, each line an object with ``keys`` (a damaged one is one line naming the file, never a
    KeyError later)."""

    rows = read_jsonl(path)
    for i, r in enumerate(rows, 1):
        if not all(k in r for k in keys) or not isinstance(r.get("checks", {}), dict):
            raise CalibrationError(
                f"{path}: record {i} is not a rater's answer ({', '.join(keys)}); move the file away to rate again"
            )
    return rows


async def rate_with_model(
    run_dir: str | Path, rater: str, model, *, max_tokens: int | None = None, max_tries: int = 3
) -> RaterProgress:
    """Grade every blind-sheet row with ``model`` (a vocab.serving.client.ModelClient, or a test's stand-in).

    Each answer is appended to ``calibration/rater_<rater>.jsonl`` as it arrives and each failed call to
    ``calibration/rater_<rater>_errors.jsonl`` with its kind, so a rerun grades only what is missing. When
    every row has an answer, ``ratings_<rater>.csv`` is written (checked like any imported file).

    Retry policy: a row whose call failed is asked again on the next call of this function, up to
    ``max_tries`` calls in all (counted from the errors file), each try with its own seed derived from the
    row and the try number — the same seed would repeat a seeded model's failure exactly.
    """
    import asyncio
    from datetime import UTC, datetime

    # deferred: the model client (openai, httpx) loads only when a model is called
    from vocab.serving.client import ModelCallError

    sheet, rub = read_sheet(run_dir), read_rubric(run_dir)
    answers_path, errors_path = RunDir(run_dir).rater_log(rater), RunDir(run_dir).rater_errors(rater)
    done = {a["blind_id"] for a in _rater_lines(answers_path, ("blind_id", "checks"))}
    tries: dict[str, int] = {}
    for e in _rater_lines(errors_path, ("blind_id",)):
        tries[e["blind_id"]] = tries.get(e["blind_id"], 0) + 1
    answers, errors = JsonlWriter(answers_path), JsonlWriter(errors_path)
    schema = rubric.critic_schema(rub.ids)
    visible = [c for c in sheet.columns if c != "blind_id"]

    def messages(row: dict) -> list[dict[str, str]]:
        if rub is VOCABSCAPES or rub == VOCABSCAPES:
            return prompts.rater_messages(row)
        return prompts.judgment_rater_messages(rub, {f: row[f] for f in visible})

    base = getattr(getattr(model, "model", None), "sampling", None)

    async def one(row: dict) -> None:
        sampling = None
        if base is not None and base.seed is not None:
            n = tries.get(row["blind_id"], 0)
            digest = hashlib.sha256(f"{base.seed}:{row['blind_id']}:{n}".encode()).digest()
            sampling = dataclasses.replace(base, seed=int.from_bytes(digest[:4], "little") & 0x7FFFFFFF)
        try:
            r = await model.structured(messages(row), schema, "rating", max_tokens=max_tokens, sampling=sampling)
        except ModelCallError as e:
            errors.write(
                {
                    "blind_id": row["blind_id"],
                    "rater": rater,
                    "model": model.name,
                    "kind": e.kind,
                    "message": e.message,
                    "time": datetime.now(UTC).isoformat(timespec="seconds"),
                }
            )
            return
        answers.write(
            {
                "blind_id": row["blind_id"],
                "rater": rater,
                "model": model.name,
                "checks": {c: r.value[c]["verdict"] for c in rub.ids},
                "reasons": {c: r.value[c]["reason"] for c in rub.ids},
                "usage": r.usage.as_dict(),
            }
        )

    try:
        todo = [
            row
            for row in sheet.to_dict(orient="records")
            if row["blind_id"] not in done and tries.get(row["blind_id"], 0) < max_tries
        ]
        await asyncio.gather(*(one(row) for row in todo))
    finally:
        answers.close()
        errors.close()
    got = {a["blind_id"]: a for a in _rater_lines(answers_path, ("blind_id", "checks"))}
    missing = [b for b in sheet.blind_id if b not in got]
    if not missing:
        table = pd.DataFrame(
            [{"blind_id": b, **{c.column: got[b]["checks"][c.id] for c in rub.criteria}} for b in sheet.blind_id],
            columns=["blind_id", *rub.columns],
        )
        validate_ratings(table, list(sheet.blind_id), rubric=rub)
        table.to_csv(RunDir(run_dir).ratings(rater), index=False)
    tries = {}
    for e in _rater_lines(errors_path, ("blind_id",)):
        tries[e["blind_id"]] = tries.get(e["blind_id"], 0) + 1
    exhausted = sum(tries.get(b, 0) >= max_tries for b in missing)
    return RaterProgress(len(got), len(missing), len(got) - len(done), exhausted)


async def rate_until_complete(
    run_dir: str | Path, rater: str, model, *, max_tokens: int | None = None
) -> RaterProgress:
    """The retry policy: passes of :func:`rate_with_model` until every row has an answer or every missing row
    has used its tries (each try with a new seed)."""
    while True:
        progress = await rate_with_model(run_dir, rater, model, max_tokens=max_tokens)
        if progress.missing == progress.exhausted:
            return progress


def write_script_ratings(run_dir: str | Path, sheet: pd.DataFrame | None = None) -> Path:
    """The script rater on the run's blind sheet, into ``calibration/ratings_script.csv`` (validated). Only
    Vocabscapes has one: an imported dataset's judge asked a question no script decides. ``sheet``: the sheet as
    the caller read it (by default read here)."""
    if not read_rubric(run_dir).script:
        raise CalibrationError(f"{run_dir}: this dataset's rubric has no script rater")
    sheet = read_sheet(run_dir) if sheet is None else sheet
    table = validate_ratings(script_ratings(sheet), list(sheet.blind_id), allow_empty=True)
    out = RunDir(run_dir).script_ratings
    table.to_csv(out, index=False)
    return out


def rater_error_vs_script(ratings: pd.DataFrame, script: pd.DataFrame) -> float:
    """A rater's disagreement rate with the script on the checks the script decides for every row (2, 3):
    the only error of a blind rater that can be measured without another rater."""
    r = ratings.set_index("blind_id")
    s = script.set_index("blind_id").loc[r.index]  # a partial rater: the rows it rated
    return float(((r.c2 != s.c2).sum() + (r.c3 != s.c3).sum()) / (2 * len(s)))


SCOPE_COLUMNS = [f"c{i}" for i in range(2, 13)]


def rater_passes(
    ratings: pd.DataFrame, script: pd.DataFrame | None = None, rubric: JudgeRubric | None = None
) -> pd.Series:
    """Per blind id: does the rater pass the row (every criterion of the rubric's scope PASSED: c2-c12 for
    Vocabscapes)? With ``script``, checks 2 and 3 are the script's verdicts instead of the rater's."""
    rubric = rubric or rubric_of(ratings)
    r = ratings.set_index("blind_id")[list(rubric.scope)].copy()
    if script is not None:
        s = script.set_index("blind_id")
        r["c2"], r["c3"] = s.loc[r.index, "c2"], s.loc[r.index, "c3"]
    return (r == "PASSED").all(axis=1)


def rate_with_config(cfg, run_dir, model: str, rater: str, *, max_tokens, max_calls: int | None):
    """`vocab rate`: ``model`` of ``cfg`` rates the blind sheet as ``rater`` (:func:`rate_with_model`), within
    ``max_calls`` calls."""
    import asyncio

    # deferred: the model client (openai, httpx) loads only when a model is called
    from vocab.serving.client import Clients

    cfg.model(model)

    async def go():
        async with Clients.from_config(cfg, max_calls) as clients:
            return await rate_with_model(run_dir, rater, clients.get(model), max_tokens=max_tokens)

    return asyncio.run(go())
