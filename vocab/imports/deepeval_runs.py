"""DeepEval test runs as judgments datasets: `vocab import deepeval`.

DeepEval writes a test run's JSON where ``evaluate(..., display_config=DisplayConfig(results_folder=DIR))`` says
(``DIR/test_run_*.json``) and, after ``deepeval test run``, into ``.deepeval/.latest_test_run.json`` (the same run
under a ``testRunData`` key). Each test case lists its metrics' results (``metricsData``: ``name``, ``threshold``,
``success``, ``score``, ``reason``, ``error``). One item per test case for one metric: its verdict the metric's
``success``; a metric with an ``error`` (DeepEval records ``success: false`` beside it) or without a ``success`` is
UNSCORED, never FAILED; the score, the reason and the judge's logs stay hidden from raters.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from vocab.datasets.dataset import single_verdict
from vocab.datasets.rows import write_dataset
from vocab.datasets.values import as_text
from vocab.files import sha256_file
from vocab.imports import common
from vocab.imports.common import JudgmentImportError, first_line

DEEPEVAL_QUESTION = "Does the output meet the metric's criterion for this input (see the target, if given)?"


def _metric_name(name: str) -> str:
    """A metric's short name: DeepEval calls a G-Eval metric "Correctness [GEval]"; --metric may say Correctness."""
    return name.split(" [", 1)[0]


def load_test_run(path: str | Path) -> dict:
    path = Path(path)
    doc = common.load_json(path)
    if isinstance(doc, dict) and isinstance(doc.get("testRunData"), dict):
        doc = doc["testRunData"]  # .deepeval/.latest_test_run.json
    cases = doc.get("testCases") if isinstance(doc, dict) else None
    if not isinstance(cases, list):
        raise JudgmentImportError(
            f"{path}: not a DeepEval test run (no testCases list; DisplayConfig(results_folder=DIR) writes one)"
        )
    if not cases and doc.get("conversationalTestCases"):
        raise JudgmentImportError(
            f"{path}: conversational test cases only; their turns are not read (single-turn test cases are)"
        )
    if not cases:
        raise JudgmentImportError(f"{path}: no test cases in it (an empty test run)")
    if len(cases) > common.MAX_ROWS:
        raise JudgmentImportError(f"{path}: more than {common.MAX_ROWS} test cases")
    for n, c in enumerate(cases, start=1):
        if not isinstance(c, dict):
            raise JudgmentImportError(f"{path}: test case {n} is not an object")
        if not isinstance(c.get("metricsData") or [], list):
            raise JudgmentImportError(f"{path}: test case {n}: metricsData is not a list")
    return doc


def read_deepeval(
    path: str | Path,
    metric: str | None = None,
    judge: str | None = None,
    system: str | None = None,
    question: str = DEEPEVAL_QUESTION,
) -> tuple[list[dict], dict[str, Any]]:
    """Judgment rows and dataset metadata from a DeepEval test run's JSON, for one metric (``metric``: its name as
    DeepEval writes it, or without the bracketed kind; needed when the run has several)."""
    path = Path(path)
    doc = load_test_run(path)
    cases = doc["testCases"]

    def results(c: dict) -> list[dict]:
        return [m for m in c.get("metricsData") or [] if isinstance(m, dict) and isinstance(m.get("name"), str)]

    names = sorted({m["name"] for c in cases for m in results(c)})
    if not names:
        raise JudgmentImportError(f"{path}: no test case holds a metric's result (metricsData is empty)")
    if metric is None:
        if len(names) != 1:
            raise JudgmentImportError(f"{path}: choose the metric with --metric (here: {', '.join(names) or 'none'})")
        metric = names[0]
    else:
        matching = [n for n in names if metric in (n, _metric_name(n))]
        if len(matching) != 1:
            found = "none" if not matching else f"several: {', '.join(matching)}"
            raise JudgmentImportError(f"{path}: metric {metric!r} matches {found} (metrics: {', '.join(names)})")
        metric = matching[0]
    hyper = doc.get("hyperparameters") if isinstance(doc.get("hyperparameters"), dict) else {}
    run_system = system or str(hyper.get("model") or "unknown")
    named = [str(c.get("name") or "") for c in cases]
    rows, left_out, judges = [], 0, set()
    for n, c in enumerate(cases, start=1):
        mine = [m for m in results(c) if m["name"] == metric]
        if not mine:
            left_out += 1
            continue
        if len(mine) > 1:
            raise JudgmentImportError(f"{path}: test case {n}: metric {metric!r} appears {len(mine)} times")
        m = mine[0]
        if m.get("error"):
            verdict, why = "UNSCORED", "error: " + first_line(m["error"])
        elif not isinstance(m.get("success"), bool):
            verdict, why = "UNSCORED", "no_verdict"
        else:
            verdict, why = ("PASSED" if m["success"] else "FAILED"), None
        grader = judge or str(m.get("evaluationModel") or "deepeval's default judge")
        judges.add(grader)
        name = named[n - 1]
        item = name if name and named.count(name) == 1 else f"{name or 'test case'} #{c.get('order', n - 1)}"
        context = c.get("retrievalContext") or c.get("context") or []
        visible = {
            "input": as_text(c.get("input")),
            "target": as_text(c.get("expectedOutput")),
            "context": "\n\n".join(map(as_text, context)) if isinstance(context, list) else as_text(context),
            "output": as_text(c.get("actualOutput")),
        }
        hidden = {
            "score": m.get("score"),
            "threshold": m.get("threshold"),
            "reason": m.get("reason"),
            "strict_mode": m.get("strictMode"),
            "deepeval_success": c.get("success"),
            "order": c.get("order"),
            "error": m.get("error"),
        }
        if why:
            hidden["unscored_reason"] = why
        rows.append(
            {
                "id": item,
                "group": item,
                "epoch": 1,
                "system": run_system,
                "judge": grader,
                "verdict": verdict,
                "criteria": {},
                "visible": visible,
                "hidden": hidden,
            }
        )
        for field_name, value in visible.items():
            if len(value) > common.MAX_FIELD:
                raise JudgmentImportError(
                    f"{path}: test case {n}: its {field_name} is over {common.MAX_FIELD:,} characters"
                )
    if not rows:
        raise JudgmentImportError(f"{path}: no test case has the metric {metric!r}")
    if len({r["id"] for r in rows}) != len(rows):
        raise JudgmentImportError(f"{path}: two test cases share a name and an order; name them apart")
    shown = ["input", *(f for f in ("target", "context") if any(r["visible"][f] for r in rows)), "output"]
    for r in rows:
        r["visible"] = {k: r["visible"][k] for k in shown}
    meta = {
        "name": str(doc.get("identifier") or path.stem)[:120],
        "source": {
            "kind": "deepeval",
            "path": str(path),
            "sha256": sha256_file(path),
            "metric": metric,
            "judge": sorted(judges),
            "test_cases": len(cases),
            "left_out": left_out,
        },
        "rubric": single_verdict(question, name=f"{_metric_name(metric)}'s criterion").as_dict(),
        "visible": shown,
    }
    return rows, meta


def import_deepeval(path: str | Path, run_dir: str | Path, **kw) -> Path:
    rows, meta = read_deepeval(path, **kw)
    return write_dataset(run_dir, rows, meta)
