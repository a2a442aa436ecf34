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


# --- promptfoo results -------------------------------------------------------------------------------------

# promptfoo's assertion types whose verdict a model gives (a "not-" prefix negates one); the others are checks
# a script decides (contains, equals, is-json, ...), not a judge
MODEL_GRADED = frozenset({"llm-rubric", "g-eval", "model-graded-closedqa", "model-graded-factuality", "factuality",
                          "answer-relevance", "context-faithfulness", "context-recall", "context-relevance",
                          "conversation-relevance", "search-rubric"})  # fmt: skip
PROMPTFOO_QUESTION = "Does the output meet the rubric for the input?"


def _assertion_name(assertion: Any) -> str:
    """How ``--assertion`` names an assertion: its metric when it has one, else its type."""
    if not isinstance(assertion, dict):
        return ""
    return str(assertion.get("metric") or assertion.get("type") or "")


def _model_graded(assertion: Any) -> bool:
    kind = str(assertion.get("type", "")) if isinstance(assertion, dict) else ""
    return kind.removeprefix("not-") in MODEL_GRADED


def _provider_name(provider: Any) -> str | None:
    if isinstance(provider, str):
        return provider
    if isinstance(provider, dict):
        return provider.get("label") or provider.get("id")
    return None


def _first_line(text: Any, limit: int = 160) -> str:
    return " ".join(str(text).split())[:limit]


def read_promptfoo(
    path: str | Path, assertion: str | None = None, question: str = PROMPTFOO_QUESTION, judge: str | None = None
) -> tuple[list[dict], dict[str, Any]]:
    """Judgment rows and dataset metadata from a promptfoo results file (``promptfoo eval -o results.json``).

    One judged item per result row (test x prompt x provider), the verdict being the ``pass`` of ONE assertion's
    component result — by default the file's single model-graded assertion (``llm-rubric`` and kin) — never
    promptfoo's ``success``, which is the AND of every assertion of the test. A row whose call failed (promptfoo's
    failure reason 2, a response error), or whose grader gave no parseable answer (``metadata.graderError``, which
    promptfoo records as ``pass: false``), is UNSCORED with its reason, never FAILED. A row of a test without that
    assertion is not an item of this judge: left out, and counted. The grader's reason is kept hidden."""
    path = Path(path)
    _check_file(path)
    if path.stat().st_size > MAX_JSON_LOG:
        raise JudgmentImportError(f"{path}: {path.stat().st_size:,} bytes, over the {MAX_JSON_LOG:,} read whole")
    try:
        doc = json.loads(path.read_bytes())
    except (ValueError, UnicodeDecodeError) as e:
        raise JudgmentImportError(f"{path}: not JSON ({_first_line(e, 120)})") from None
    summary_ = doc.get("results") if isinstance(doc, dict) else None
    results = summary_.get("results") if isinstance(summary_, dict) else None
    if not isinstance(results, list):
        raise JudgmentImportError(
            f"{path}: not a promptfoo results file (no results.results list; promptfoo eval -o FILE.json writes one)"
        )
    if summary_.get("version") not in (2, 3):
        raise JudgmentImportError(f"{path}: promptfoo results version {summary_.get('version')!r} (2 or 3 are read)")
    if len(results) > MAX_ROWS:
        raise JudgmentImportError(f"{path}: more than {MAX_ROWS} results")
    for n, r in enumerate(results, start=1):
        if not isinstance(r, dict):
            raise JudgmentImportError(f"{path}: result {n} is not an object")
    config = doc.get("config") if isinstance(doc.get("config"), dict) else {}

    def components(r: dict) -> list[dict]:
        g = r.get("gradingResult")
        comps = g.get("componentResults") if isinstance(g, dict) else None
        return [c for c in comps if isinstance(c, dict)] if isinstance(comps, list) else []

    graded = sorted({_assertion_name(c.get("assertion")) for r in results for c in components(r)
                     if _model_graded(c.get("assertion"))})  # fmt: skip
    names = sorted({_assertion_name(c.get("assertion")) for r in results for c in components(r)} - {""})
    if assertion is None:
        if len(graded) != 1:
            raise JudgmentImportError(
                f"{path}: choose the judge's assertion with --assertion (model-graded ones here: "
                f"{', '.join(graded) or 'none'}; all: {', '.join(names) or 'none'})"
            )
        assertion = graded[0]
    elif assertion not in names:
        raise JudgmentImportError(f"{path}: no assertion {assertion!r} (by metric or type: {', '.join(names)})")
    default_test = config.get("defaultTest") if isinstance(config.get("defaultTest"), dict) else {}
    options = default_test.get("options") if isinstance(default_test.get("options"), dict) else {}
    default_grader = _provider_name(options.get("provider"))
    default_asserts = default_test.get("assert") if isinstance(default_test.get("assert"), list) else []

    def declares(test: dict) -> bool:
        """Whether a test asks the judge's assertion (a failed call has no component results to say so)."""
        own = test.get("assert") if isinstance(test.get("assert"), list) else []
        return any(_assertion_name(a) == assertion for a in [*default_asserts, *own])

    def vars_hash(r: dict, test: dict) -> str:
        vars_ = r.get("vars") if isinstance(r.get("vars"), dict) else test.get("vars", {})
        return hashlib.sha256(json.dumps(vars_, sort_keys=True, ensure_ascii=False, default=str).encode()).hexdigest()

    labels = []  # the distinct prompts, in order: an item is a test under one prompt
    described: dict[str, set[str]] = {}  # a description -> the tests (by vars) that carry it
    for r in results:
        label = (r.get("prompt") or {}).get("label") if isinstance(r.get("prompt"), dict) else None
        if label not in labels:
            labels.append(label)
        test = r.get("testCase") if isinstance(r.get("testCase"), dict) else {}
        if test.get("description"):
            described.setdefault(str(test["description"]), set()).add(vars_hash(r, test))
    rows, epochs, left_out, kinds = [], {}, 0, set()
    for n, r in enumerate(results, start=1):
        test = r.get("testCase") if isinstance(r.get("testCase"), dict) else {}
        mine = [c for c in components(r) if _assertion_name(c.get("assertion")) == assertion]
        failed_call = r.get("failureReason") == 2 or bool((r.get("response") or {}).get("error"))
        if not mine and not (failed_call and declares(test)):
            left_out += 1  # this test does not ask the judge (or its assertions never ran)
            continue
        if len(mine) > 1:
            raise JudgmentImportError(
                f"{path}: result {n}: {len(mine)} assertions named {assertion!r} in one test; give each a metric "
                "and choose one with --assertion"
            )
        c = mine[0] if mine else {}
        spec = c.get("assertion") if isinstance(c.get("assertion"), dict) else {}
        kinds.add(str(spec.get("type", "")))
        meta_c = c.get("metadata") if isinstance(c.get("metadata"), dict) else {}
        if failed_call:
            verdict, why = "UNSCORED", "error: " + _first_line((r.get("response") or {}).get("error") or r.get("error"))
        elif meta_c.get("graderError"):
            verdict, why = "UNSCORED", "grader_error: " + _first_line(c.get("reason", ""))
        elif not isinstance(c.get("pass"), bool):
            verdict, why = "UNSCORED", "no_verdict"
        else:
            verdict, why = ("PASSED" if c["pass"] else "FAILED"), None
        system = _provider_name(r.get("provider")) or "unknown"
        grader = judge or _provider_name(spec.get("provider")) or _provider_name(
            (test.get("options") or {}).get("provider") if isinstance(test.get("options"), dict) else None
        ) or default_grader or "promptfoo's default grader"  # fmt: skip
        h = vars_hash(r, test)[:10]
        desc = str(test.get("description") or "")
        # an item is a test: its description where that names one test, with its vars' hash where it names several
        item = (desc if len(described.get(desc, ())) == 1 else f"{desc} [vars:{h}]") if desc else f"vars:{h}"
        label = (r.get("prompt") or {}).get("label") if isinstance(r.get("prompt"), dict) else None
        if len(labels) > 1:
            item = f"{item} / prompt {labels.index(label) + 1}"
        key = (system, grader, str(item))
        epochs[key] = epochs.get(key, 0) + 1  # a repeated test (promptfoo --repeat) is another epoch of the item
        output = (r.get("response") or {}).get("output") if isinstance(r.get("response"), dict) else None
        rubric = meta_c.get("renderedAssertionValue") or spec.get("value") or ""
        hidden = {
            "reason": c.get("reason"),
            "score": c.get("score"),
            "assertion": spec.get("type"),
            "metric": spec.get("metric"),
            "grader": grader,
            "promptfoo_success": r.get("success"),
            "promptfoo_result_id": r.get("id"),
            "latency_ms": r.get("latencyMs"),
            "error": r.get("error") if failed_call else None,
        }
        if why:
            hidden["unscored_reason"] = why
        rows.append(
            {
                "id": f"{item}:{epochs[key]}",
                "group": str(item),
                "epoch": epochs[key],
                "system": system,
                "judge": grader,
                "verdict": verdict,
                "criteria": {},
                "visible": {"input": _text((r.get("prompt") or {}).get("raw") if isinstance(r.get("prompt"), dict)
                                           else None), "output": _text(output), "rubric": _text(rubric)},
                "hidden": hidden,
            }
        )  # fmt: skip
        for field_name, value in rows[-1]["visible"].items():
            if len(value) > MAX_FIELD:
                raise JudgmentImportError(f"{path}: result {n}: its {field_name} is over {MAX_FIELD:,} characters")
    if not rows:
        raise JudgmentImportError(f"{path}: no result asks the assertion {assertion!r}")
    meta_doc = doc.get("metadata") if isinstance(doc.get("metadata"), dict) else {}
    meta = {
        "name": str(config.get("description") or doc.get("evalId") or path.stem)[:120],
        "source": {
            "kind": "promptfoo",
            "path": str(path),
            "sha256": _sha256(path),
            "eval_id": doc.get("evalId"),
            "promptfoo": meta_doc.get("promptfooVersion"),
            "results_version": summary_.get("version"),
            "assertion": assertion,
            "assertion_types": sorted(kinds - {""}),
            "grader": sorted({r["judge"] for r in rows}),
            "results": len(results),
            "left_out": left_out,
        },
        "rubric": single_verdict(question, name=f"{assertion}'s rubric").as_dict(),
        "visible": ["input", "output", "rubric"],
    }
    return rows, meta


def import_promptfoo(path: str | Path, run_dir: str | Path, **kw) -> Path:
    rows, meta = read_promptfoo(path, **kw)
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
    if meta["source"].get("left_out"):
        unfinished += f"; {meta['source']['left_out']} results of tests without the judge's assertion left out"
    return (
        f"{run_dir}: {sum(c.values())} judged items ({meta['source']['kind']}): {c['PASSED']} PASSED, "
        f"{c['FAILED']} FAILED, {c['UNSCORED']} UNSCORED (not counted as FAILED){unfinished}"
    )
