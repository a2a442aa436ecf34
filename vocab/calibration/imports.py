"""Verdicts from other harnesses, as judgments datasets (:mod:`vocab.calibration.dataset`).

``vocab import inspect LOG --run-dir D`` reads an Inspect log (``.eval`` or ``.json``) with inspect_ai's own
reader, one judged item per sample x epoch for one scorer. ``vocab import table FILE --run-dir D`` reads a CSV
or JSON Lines table with these columns:

==================  =========  ===========================================================================
column              required   meaning
==================  =========  ===========================================================================
``id``              yes        the judged item
``system``          yes        the system under test (the model that answered)
``judge``           yes        the judge (the grader)
``verdict``         yes        PASSED, FAILED, or UNSCORED / empty: the judge gave no usable verdict
``group``           no         the unit the judge saw several times (default: the id)
``epoch``           no         1, 2, ... within a group (default 1)
``criterion:NAME``  no         a per-criterion verdict, PASSED or FAILED; the overall verdict must be PASSED
                               exactly when every criterion is
``unscored_reason`` no         why an UNSCORED item has no verdict
visible fields      yes        what a blind rater sees, ``--visible`` (default ``input,output``, and
                               ``target`` when the table has one)
anything else       no         kept hidden (never on the blind sheet)
==================  =========  ===========================================================================

An UNSCORED item is its own class: counted and reported, excluded from the judge's pass rate, bounded in
``03_correct`` (had they all failed / passed), never a FAIL. A bad file gets one line naming the row and the
column, and nothing is written.
"""

from __future__ import annotations

import csv
import hashlib
import json
import math
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from vocab.calibration.dataset import DEFAULT_QUESTION, declared_criteria, read_meta, single_verdict, write_dataset
from vocab.calibration.sample import CalibrationError

MAX_ROWS = 200_000  # a judgments table larger than this is refused before it fills memory
MAX_BYTES = 128 * 2**20  # a table or an Inspect .eval log on disk
MAX_JSON_LOG = 64 * 2**20  # an Inspect .json log (read whole by inspect_ai): convert a larger one to .eval
MAX_MEMBER = 32 * 2**20  # one member of an .eval log (a sample, the header), inflated
MAX_INFLATED = 512 * 2**20  # all members of an .eval log, inflated
MAX_RATIO = 200  # inflated over compressed size, for a member over 1 MiB (JSON logs compress 5-30 times)
MAX_FIELD = 200_000  # characters in one cell
VERDICT_WORDS = {"PASSED": "PASSED", "FAILED": "FAILED", "UNSCORED": "UNSCORED", "": "UNSCORED"}
INSPECT_PASS, INSPECT_FAIL = ("C",), ("I", "P", "N")  # Inspect's CORRECT; INCORRECT, PARTIAL, NOANSWER
INSPECT_QUESTION = "Does the output (the submission) meet the target (the criterion) for the input (the task)?"


class JudgmentImportError(CalibrationError):
    """A file that cannot be imported: one line naming the file, the row and the column."""


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def _check_file(path: Path) -> None:
    if not path.is_file():
        raise JudgmentImportError(f"{path}: no such file")
    if path.stat().st_size > MAX_BYTES:
        raise JudgmentImportError(f"{path}: {path.stat().st_size} bytes; the limit is {MAX_BYTES} (split the file)")


def _check_eval_members(path: Path) -> None:
    """An .eval log is a zip archive: its members' inflated sizes are checked from the archive's directory before
    inspect_ai reads any of them (Python's zip reader stops at the declared size, so the check binds)."""
    try:
        with zipfile.ZipFile(path) as z:
            infos = z.infolist()
    except (zipfile.BadZipFile, OSError) as e:
        raise JudgmentImportError(f"{path}: not an Inspect .eval log (a zip archive: {e})") from None
    total = 0
    for i in infos:
        total += i.file_size
        if i.file_size > MAX_MEMBER:
            raise JudgmentImportError(
                f"{path}: member {i.filename[:60]!r} inflates to {i.file_size:,} bytes, over the {MAX_MEMBER:,} "
                "one member may"
            )
        if i.file_size > 2**20 and i.file_size > MAX_RATIO * max(i.compress_size, 1):
            raise JudgmentImportError(
                f"{path}: member {i.filename[:60]!r} inflates {i.file_size // max(i.compress_size, 1):,} times, over "
                f"the {MAX_RATIO} a log's member may"
            )
    if total > MAX_INFLATED:
        raise JudgmentImportError(f"{path}: inflates to {total:,} bytes, over the {MAX_INFLATED:,} a log may")


# --- tables ------------------------------------------------------------------------------------------------


def _table_rows(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """(row number, row) from a CSV or JSON Lines file, streamed; row 1 is the first data row."""
    suffix = path.suffix.lower()
    if suffix == ".csv":
        csv.field_size_limit(MAX_FIELD)
        with path.open(newline="", encoding="utf-8-sig") as f:  # a spreadsheet's byte-order mark is not a column
            reader = csv.DictReader(f)
            try:
                for n, row in enumerate(reader, start=1):
                    if None in row:
                        raise JudgmentImportError(f"{path}: row {n}: more fields than the header has columns")
                    if any(v is None for v in row.values()):
                        raise JudgmentImportError(f"{path}: row {n}: fewer fields than the header has columns")
                    yield n, row
            except csv.Error as e:
                raise JudgmentImportError(f"{path}: row {reader.line_num}: {e}") from None
            except UnicodeDecodeError:
                raise JudgmentImportError(f"{path}: not UTF-8 text") from None
    elif suffix in (".jsonl", ".ndjson"):
        with path.open("rb") as f:
            for n, raw in enumerate(f, start=1):
                if len(raw) > MAX_FIELD * 4:
                    raise JudgmentImportError(f"{path}: row {n}: a line of {len(raw)} bytes is longer than the limit")
                if not raw.strip():
                    continue
                try:
                    obj = json.loads(raw)
                except (json.JSONDecodeError, UnicodeDecodeError) as e:
                    raise JudgmentImportError(f"{path}: row {n}: not a JSON object ({e})") from None
                if not isinstance(obj, dict):
                    raise JudgmentImportError(f"{path}: row {n}: not a JSON object")
                yield n, obj
    else:
        raise JudgmentImportError(f"{path}: expected a .csv or .jsonl file")


# columns that carry the judge's side of a row: showing any of them to a blind rater would break the blinding
RESERVED = ("id", "system", "judge", "verdict", "group", "epoch", "criteria")


def _text(value: Any) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def read_table(
    path: str | Path, visible: list[str] | None = None, question: str = DEFAULT_QUESTION
) -> tuple[list[dict], dict[str, Any]]:
    """Judgment rows and dataset metadata from a table; raises :class:`JudgmentImportError` on the first problem."""
    path = Path(path)
    _check_file(path)
    rows: list[dict] = []
    seen: dict[tuple, int] = {}
    criteria: list[str] | None = None
    vis = visible
    reserved = sorted(v for v in vis or () if v in RESERVED or v.startswith("criterion:"))
    if reserved:
        raise JudgmentImportError(
            f"--visible {','.join(vis)}: {', '.join(reserved)} can never be shown to a blind rater"
        )
    for n, raw in _table_rows(path):
        if n > MAX_ROWS:
            raise JudgmentImportError(f"{path}: more than {MAX_ROWS} rows; split the file")
        if vis is None:
            vis = ["input", "output"] + (["target"] if "target" in raw else [])
        if criteria is None:
            criteria = sorted(k.split(":", 1)[1] for k in raw if k.startswith("criterion:"))
            if any(not c for c in criteria):
                raise JudgmentImportError(f"{path}: column 'criterion:' has no criterion name")
        for col in ("id", "system", "judge", "verdict", *vis):
            if col not in raw:
                raise JudgmentImportError(f"{path}: row {n}: no column {col!r}")
        for col in ("id", "system", "judge"):
            if not _text(raw[col]).strip():
                raise JudgmentImportError(f"{path}: row {n}, column {col!r}: empty")
        verdict = VERDICT_WORDS.get(_text(raw["verdict"]).strip().upper())
        if verdict is None:
            raise JudgmentImportError(
                f"{path}: row {n}, column 'verdict': {_text(raw['verdict'])[:40]!r} is not PASSED, FAILED, UNSCORED "
                "or empty"
            )
        epoch_text = _text(raw.get("epoch", "1")).strip() or "1"
        if (
            not (epoch_text.isascii() and epoch_text.isdigit() and len(epoch_text) <= 7)
            or not 1 <= int(epoch_text) <= 10**6
        ):
            raise JudgmentImportError(
                f"{path}: row {n}, column 'epoch': {epoch_text[:40]!r} is not a whole number >= 1"
            )
        crit = {}
        for c in criteria:
            col = f"criterion:{c}"
            if col not in raw:
                raise JudgmentImportError(f"{path}: row {n}: no column {col!r}")
            value = _text(raw[col]).strip().upper()
            if value not in ("PASSED", "FAILED") and not (verdict == "UNSCORED" and value == ""):
                raise JudgmentImportError(f"{path}: row {n}, column {col!r}: {value[:40]!r} is not PASSED or FAILED")
            crit[c] = value
        if criteria and verdict != "UNSCORED" and (verdict == "PASSED") != all(v == "PASSED" for v in crit.values()):
            raise JudgmentImportError(
                f"{path}: row {n}, column 'verdict': {verdict} does not follow from the criteria "
                "(PASSED exactly when every criterion is)"
            )
        ident = (_text(raw["system"]), _text(raw["judge"]), _text(raw["id"]), int(epoch_text))
        if ident in seen:
            raise JudgmentImportError(
                f"{path}: row {n}, column 'id': {ident[2]!r} repeats row {seen[ident]} (same system, judge, epoch)"
            )
        seen[ident] = n
        known = {"id", "system", "judge", "verdict", "group", "epoch", "unscored_reason", *vis}
        hidden = {k: raw[k] for k in raw if k not in known and not k.startswith("criterion:")}
        if verdict == "UNSCORED":
            hidden["unscored_reason"] = _text(raw.get("unscored_reason", "")).strip() or "unscored"
        rows.append(
            {
                "id": ident[2],
                "group": _text(raw.get("group", "")).strip() or ident[2],
                "epoch": ident[3],
                "system": ident[0],
                "judge": ident[1],
                "verdict": verdict,
                "criteria": crit if verdict != "UNSCORED" else {},
                "visible": {f: _text(raw[f]) for f in vis},
                "hidden": hidden,
            }
        )
    if not rows:
        raise JudgmentImportError(f"{path}: no rows")
    rub = declared_criteria(criteria, question) if criteria else single_verdict(question)
    meta = {
        "name": path.stem,
        "source": {"kind": "table", "path": str(path), "sha256": _sha256(path)},
        "rubric": rub.as_dict(),
        "visible": list(vis),
    }
    return rows, meta


def import_table(
    path: str | Path, run_dir: str | Path, visible: list[str] | None = None, question: str = DEFAULT_QUESTION
) -> Path:
    rows, meta = read_table(path, visible, question)
    return write_dataset(run_dir, rows, meta)


# --- Inspect logs ------------------------------------------------------------------------------------------


def _grade(value: Any) -> str | None:
    """An Inspect score value as the text the pass/fail lists name: "C", "1", "0.5"; None if it has none."""
    if isinstance(value, bool):
        return "1" if value else "0"
    if isinstance(value, (int, float)):
        if isinstance(value, float) and not math.isfinite(value):
            return None
        return str(int(value)) if float(value).is_integer() else repr(float(value))
    if isinstance(value, str):
        return value.strip()
    return None  # a list or a dict of values: a scorer this import does not map


def _message_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    return "\n".join(getattr(c, "text", "") or "" for c in content or [])


def _input_text(value: Any) -> str:
    if isinstance(value, str):
        return value
    return "\n\n".join(f"{m.role}: {_message_text(m.content)}" for m in value)


def _samples(read_eval_log_samples, path: Path):
    """The log's samples one at a time; only inspect_ai's reading of them is caught (it raises many kinds on a
    damaged log), as one JudgmentImportError with the cause kept. What the caller does with a sample is not."""
    it = iter(read_eval_log_samples(str(path), all_samples_required=False))
    while True:
        try:
            s = next(it)
        except StopIteration:
            return
        except Exception as e:
            raise JudgmentImportError(
                f"{path}: cannot read the samples ({type(e).__name__}: {' '.join(str(e).split())[:160]})"
            ) from e
        yield s


def read_inspect(
    path: str | Path,
    scorer: str | None = None,
    pass_values: tuple[str, ...] = INSPECT_PASS,
    fail_values: tuple[str, ...] = INSPECT_FAIL,
    question: str = INSPECT_QUESTION,
    judge: str | None = None,
) -> tuple[list[dict], dict[str, Any]]:
    """Judgment rows and dataset metadata from an Inspect log, read with inspect_ai's reader."""
    try:
        from inspect_ai.log import read_eval_log, read_eval_log_samples
    except ImportError:
        raise JudgmentImportError(
            "inspect-ai is not installed (pip install inspect-ai; `make setup` installs it)"
        ) from None
    path = Path(path)
    _check_file(path)
    if zipfile.is_zipfile(path):
        _check_eval_members(path)
    elif path.stat().st_size > MAX_JSON_LOG:
        raise JudgmentImportError(
            f"{path}: a .json log of {path.stat().st_size:,} bytes, over the {MAX_JSON_LOG:,} read whole; convert it "
            "(inspect log convert --to eval)"
        )
    overlap = set(pass_values) & set(fail_values)
    if overlap:
        raise JudgmentImportError(f"score values both passing and failing: {', '.join(sorted(overlap))}")
    try:
        header = read_eval_log(str(path), header_only=True)
    except Exception as e:  # inspect_ai raises many kinds on a file that is not a log
        raise JudgmentImportError(
            f"{path}: not an Inspect log ({type(e).__name__}: {' '.join(str(e).split())[:160]})"
        ) from e
    spec = header.eval
    scorers = [s.name for s in (spec.scorers or [])] or [
        s.name for s in (header.results.scores if header.results else [])
    ]
    if scorer is None:
        if len(scorers) != 1:
            raise JudgmentImportError(
                f"{path}: choose a scorer with --scorer (the log has: {', '.join(scorers) or 'none'})"
            )
        scorer = scorers[0]
    elif scorers and scorer not in scorers:
        raise JudgmentImportError(f"{path}: no scorer {scorer!r} (the log has: {', '.join(scorers)})")
    roles = spec.model_roles or {}
    grader = roles.get("grader")
    grader_name = judge or (grader.model if grader is not None and hasattr(grader, "model") else None) or spec.model
    rows = []
    for s in _samples(read_eval_log_samples, path):
        score = (s.scores or {}).get(scorer)
        grade = _grade(score.value) if score is not None else None
        if s.error is not None:
            verdict, why = "UNSCORED", "error"
        elif score is None:
            verdict, why = "UNSCORED", "no_score"
        elif grade is None:
            verdict, why = "UNSCORED", score.reason or "unparsed"
        elif grade in pass_values:
            verdict, why = "PASSED", None
        elif grade in fail_values:
            verdict, why = "FAILED", None
        else:
            verdict, why = "UNSCORED", f"unmapped:{grade[:20]}"
        target = s.target if isinstance(s.target, str) else "\n".join(s.target)
        hidden = {
            "score": grade,
            "answer": score.answer if score is not None else None,
            "explanation": score.explanation if score is not None else None,
            "scorer": scorer,
            "grader": grader_name,
            "error": s.error.message if s.error is not None else None,
        }
        if why:
            hidden["unscored_reason"] = why
        rows.append(
            {
                "id": f"{s.id}:{s.epoch}",
                "group": str(s.id),
                "epoch": int(s.epoch),
                "system": spec.model,
                "judge": grader_name,
                "verdict": verdict,
                "criteria": {},
                "visible": {
                    "input": _input_text(s.input),
                    "target": target,
                    "output": s.output.completion if s.output else "",
                },  # fmt: skip
                "hidden": hidden,
            }
        )
        if len(rows) > MAX_ROWS:
            raise JudgmentImportError(f"{path}: more than {MAX_ROWS} samples x epochs")
    if not rows:
        raise JudgmentImportError(f"{path}: the log holds no samples (status {header.status})")
    from inspect_ai import __version__ as inspect_version

    meta = {
        "name": f"{spec.task}-{spec.eval_id}",
        "source": {
            "kind": "inspect",
            "path": str(path),
            "sha256": _sha256(path),
            "status": header.status,
            "task": spec.task,
            "eval_id": spec.eval_id,
            "model": spec.model,
            "grader": grader_name,
            "scorer": scorer,
            "pass_values": list(pass_values),
            "fail_values": list(fail_values),
            "inspect_ai": inspect_version,
        },
        "rubric": single_verdict(question, name=f"{scorer}'s question").as_dict(),
        "visible": ["input", "target", "output"],
    }
    return rows, meta


def import_inspect(path: str | Path, run_dir: str | Path, **kw) -> Path:
    rows, meta = read_inspect(path, **kw)
    return write_dataset(run_dir, rows, meta)


def summary(run_dir: str | Path) -> str:
    """One line: what an import holds, by class."""
    meta = read_meta(run_dir)
    c = meta["counts"]
    status = meta["source"].get("status")
    unfinished = (
        f"; the eval's status is {status!r}: it did not finish, and samples it never reached are not here"
        if status not in (None, "success")
        else ""
    )
    return (
        f"{run_dir}: {sum(c.values())} judged items ({meta['source']['kind']}): {c['PASSED']} PASSED, "
        f"{c['FAILED']} FAILED, {c['UNSCORED']} UNSCORED (not counted as FAILED){unfinished}"
    )
