"""What every import shares: the limits a file is read within, the import's error, the file checks and the summary
line of an imported dataset."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from vocab import files
from vocab.datasets.dataset import read_meta
from vocab.datasets.errors import CalibrationError
from vocab.layout import RunDir

# the results, test cases or traces a promptfoo, DeepEval or MLflow file may hold (each read whole: a JSON document)
MAX_ROWS = 200_000
MAX_JSON_LOG = 64 * 2**20  # an Inspect .json log (read whole by inspect_ai): convert a larger one to .eval
MAX_MEMBER = 32 * 2**20  # one member of an .eval log (a sample, the header), inflated
MAX_RATIO = 200  # inflated over compressed size, for a member over 1 MiB (JSON logs compress 5-30 times)
MAX_FIELD = 200_000  # characters in one cell
VERDICT_WORDS = {"PASSED": "PASSED", "FAILED": "FAILED", "UNSCORED": "UNSCORED", "": "UNSCORED"}


class JudgmentImportError(CalibrationError):
    """A file that cannot be imported: one line naming the file, the row and the column."""


def first_line(text: Any, limit: int = 160) -> str:
    """A message's or value's first words on one line, cut at ``limit`` characters."""
    return " ".join(str(text).split())[:limit]


def load_json(path: Path) -> Any:
    """A JSON file read whole: a regular file within :data:`MAX_JSON_LOG` bytes whose parsed shape fits memory
    (:func:`vocab.files.parse_json`); any damage (not JSON, not UTF-8, nested too deep) one line naming the file."""
    files.check_file(path, "file", JudgmentImportError)
    return files.read_json(path, MAX_JSON_LOG, "JSON file", JudgmentImportError)


LEFT_OUT = {  # what an import leaves out: the rows that do not ask the judge at all
    "promptfoo": "results of tests without the judge's assertion",
    "mlflow": "traces without the judge's feedback",
    "deepeval": "test cases without the metric",
}


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
        unfinished += f"; {meta['source']['left_out']} {LEFT_OUT.get(meta['source']['kind'], 'rows')} left out"
    if meta["source"].get("overrides"):
        unfinished += (
            f"; {meta['source']['overrides']} of the people's labels override the judge's feedback "
            "(mlflow.override_feedback: the judge's verdict stays the judge's, the override is the label)"
        )
    humans = meta["source"].get("human_labels")
    if humans:
        unfinished += "; " + labels_said(humans, meta["source"].get("labels_used"), RunDir(run_dir).key.exists())
    return (
        f"{run_dir}: {sum(c.values())} judged items ({meta['source']['kind']}): {c['PASSED']} PASSED, "
        f"{c['FAILED']} FAILED, {c['UNSCORED']} UNSCORED (not counted as FAILED){unfinished}"
    )


def labels_said(humans: dict[str, int], used: dict[str, int] | None, sampled: bool) -> str:
    """What an import did with people's labels (``humans``: each person's; ``used``: of items the judge scored, which
    the sample holds, None where not recorded): a label on an item the judge left UNSCORED is in no pile, and is
    said to be left out, never dropped without a word."""
    said = f"labels from people: {', '.join(f'{k} {v}' for k, v in humans.items())}"
    if used is not None:
        left = sum(humans.values()) - sum(used.values())
        if not any(used.values()):
            return (
                f"{said}, every one on an item the judge left UNSCORED: no pile holds one, so none is used "
                "(vocab audit DIR --raters NAMES draws a blind sample to label)"
            )
        if left:
            said += f" ({left} on items the judge left UNSCORED: in no pile, not used)"
    if sampled:
        said += " (the blind sample and its ratings: vocab audit DIR gives the corrected rate)"
    return said
