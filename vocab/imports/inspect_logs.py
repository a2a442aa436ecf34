"""Inspect logs (``.eval`` or ``.json``) as judgments datasets, read with inspect_ai's own reader:
`vocab import inspect`."""

from __future__ import annotations

import json
import math
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from vocab import files
from vocab.datasets.dataset import single_verdict
from vocab.datasets.rows import write_dataset
from vocab.files import sha256_file
from vocab.imports import common
from vocab.imports.common import JudgmentImportError

INSPECT_PASS, INSPECT_FAIL = ("C",), ("I", "P", "N")  # Inspect's CORRECT; INCORRECT, PARTIAL, NOANSWER
INSPECT_QUESTION = "Does the output (the submission) meet the target (the criterion) for the input (the task)?"


def _check_eval_members(path: Path) -> None:
    """An .eval log is a zip archive: each member's inflated size is checked from the archive's directory before
    inspect_ai reads any of them (Python's zip reader stops at the declared size, so the check binds). The log as a
    whole has no bound: its samples are read and written one at a time."""
    try:
        with zipfile.ZipFile(path) as z:
            infos = z.infolist()
    except (zipfile.BadZipFile, OSError) as e:
        raise JudgmentImportError(f"{path}: not an Inspect .eval log (a zip archive: {e})") from None
    for i in infos:
        if i.file_size > common.MAX_MEMBER:
            raise JudgmentImportError(
                f"{path}: member {i.filename[:60]!r} inflates to {i.file_size:,} bytes, over the {common.MAX_MEMBER:,} "
                "one member may"
            )
        if i.file_size > 2**20 and i.file_size > common.MAX_RATIO * max(i.compress_size, 1):
            raise JudgmentImportError(
                f"{path}: member {i.filename[:60]!r} inflates {i.file_size // max(i.compress_size, 1):,} times, over "
                f"the {common.MAX_RATIO} a log's member may"
            )


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


def inspect_rows(
    path: str | Path,
    scorer: str | None = None,
    pass_values: tuple[str, ...] = INSPECT_PASS,
    fail_values: tuple[str, ...] = INSPECT_FAIL,
    question: str = INSPECT_QUESTION,
    judge: str | None = None,
) -> tuple[Iterator[dict], dict[str, Any]]:
    """Judgment rows (an iterator: the samples are read as it goes) and dataset metadata from an Inspect log, read
    with inspect_ai's reader. The log is checked, and its header read, before this returns."""
    try:
        from inspect_ai.log import read_eval_log, read_eval_log_samples
    except ImportError:
        raise JudgmentImportError(
            "inspect-ai is not installed (pip install inspect-ai; `make setup` installs it)"
        ) from None
    path = Path(path)
    files.check_file(path, "file", JudgmentImportError)  # an .eval log of any size: read a sample at a time
    if zipfile.is_zipfile(path):
        _check_eval_members(path)
    elif path.stat().st_size > common.MAX_JSON_LOG:
        raise JudgmentImportError(
            f"{path}: a .json log of {path.stat().st_size:,} bytes, over the {common.MAX_JSON_LOG:,} read whole; "
            "convert it (inspect log convert --to eval)"
        )
    else:  # read by Python's own parser first: nesting past its depth is refused here (inspect_ai's reader ran out
        # of memory on it) and anything else that is no JSON is left to inspect_ai to name
        data = files.read_bytes(path, common.MAX_JSON_LOG, "JSON log", JudgmentImportError)
        files.check_json_cost(data, path, JudgmentImportError)
        try:
            json.loads(data)
        except RecursionError:
            raise JudgmentImportError(f"{path}: JSON nested too deep to read") from None
        except (ValueError, UnicodeDecodeError):
            pass
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
    from inspect_ai import __version__ as inspect_version

    meta = {
        "name": f"{spec.task}-{spec.eval_id}",
        "source": {
            "kind": "inspect",
            "path": str(path),
            "sha256": sha256_file(path),
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
    return _rows(path, read_eval_log_samples, scorer, pass_values, fail_values, spec, grader_name, header), meta


def _rows(path, read_eval_log_samples, scorer, pass_values, fail_values, spec, grader_name, header):
    """The log's judgment rows, one at a time as inspect_ai reads its samples (an .eval log: one member each)."""
    n = 0
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
        n += 1
        yield (
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
                },
                "hidden": hidden,
            }
        )
    if not n:
        raise JudgmentImportError(f"{path}: the log holds no samples (status {header.status})")


def read_inspect(path: str | Path, **kw) -> tuple[list[dict], dict[str, Any]]:
    """Judgment rows and dataset metadata from an Inspect log, the rows in a list (a log that fits in memory)."""
    rows, meta = inspect_rows(path, **kw)
    return list(rows), meta


def import_inspect(path: str | Path, run_dir: str | Path, **kw) -> Path:
    """`vocab import inspect`: the log's rows written as inspect_ai reads them, a bounded number held at a time."""
    rows, meta = inspect_rows(path, **kw)
    return write_dataset(run_dir, rows, meta)
