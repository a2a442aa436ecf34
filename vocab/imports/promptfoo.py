"""promptfoo results files (``promptfoo eval -o results.json``) as judgments datasets: `vocab import promptfoo`."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from vocab.datasets.dataset import single_verdict
from vocab.datasets.rows import write_dataset
from vocab.datasets.values import as_text
from vocab.files import sha256_file
from vocab.imports import common
from vocab.imports.common import JudgmentImportError, first_line

# promptfoo's assertion types whose verdict a model gives (a "not-" prefix negates one); the others are checks
# a script decides (contains, equals, is-json, ...), not a judge
MODEL_GRADED = frozenset(
    {
        "llm-rubric",
        "g-eval",
        "model-graded-closedqa",
        "model-graded-factuality",
        "factuality",
        "answer-relevance",
        "context-faithfulness",
        "context-recall",
        "context-relevance",
        "conversation-relevance",
        "search-rubric",
    }
)
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
    """A provider's name: itself when a string, else its label or id where that is a string (or a number, as
    text); anything else (a list, an object) names nothing."""
    if isinstance(provider, str):
        return provider or None
    if isinstance(provider, dict):
        for key in ("label", "id"):
            v = provider.get(key)
            if isinstance(v, str) and v:
                return v
            if isinstance(v, (int, float)) and not isinstance(v, bool):
                return str(v)
    return None


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
    doc = common.load_json(path)
    summary_ = doc.get("results") if isinstance(doc, dict) else None
    results = summary_.get("results") if isinstance(summary_, dict) else None
    if not isinstance(results, list):
        raise JudgmentImportError(
            f"{path}: not a promptfoo results file (no results.results list; promptfoo eval -o FILE.json writes one)"
        )
    if summary_.get("version") not in (2, 3):
        raise JudgmentImportError(f"{path}: promptfoo results version {summary_.get('version')!r} (2 or 3 are read)")
    if len(results) > common.MAX_ROWS:
        raise JudgmentImportError(f"{path}: more than {common.MAX_ROWS} results")
    for n, r in enumerate(results, start=1):
        if not isinstance(r, dict):
            raise JudgmentImportError(f"{path}: result {n} is not an object")
    config = doc.get("config") if isinstance(doc.get("config"), dict) else {}

    def components(r: dict) -> list[dict]:
        g = r.get("gradingResult")
        comps = g.get("componentResults") if isinstance(g, dict) else None
        return [c for c in comps if isinstance(c, dict)] if isinstance(comps, list) else []

    graded = sorted(
        {
            _assertion_name(c.get("assertion"))
            for r in results
            for c in components(r)
            if _model_graded(c.get("assertion"))
        }
    )
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
        response = r.get("response") if isinstance(r.get("response"), dict) else {}
        failed_call = r.get("failureReason") == 2 or bool(response.get("error"))
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
            verdict, why = "UNSCORED", "error: " + first_line(response.get("error") or r.get("error"))
        elif meta_c.get("graderError"):
            verdict, why = "UNSCORED", "grader_error: " + first_line(c.get("reason", ""))
        elif not isinstance(c.get("pass"), bool):
            verdict, why = "UNSCORED", "no_verdict"
        else:
            verdict, why = ("PASSED" if c["pass"] else "FAILED"), None
        system = _provider_name(r.get("provider")) or "unknown"
        grader = (
            judge
            or _provider_name(spec.get("provider"))
            or _provider_name(
                (test.get("options") or {}).get("provider") if isinstance(test.get("options"), dict) else None
            )
            or default_grader
            or "promptfoo's default grader"
        )
        h = vars_hash(r, test)[:10]
        desc = str(test.get("description") or "")
        # an item is a test: its description where that names one test, with its vars' hash where it names several
        item = (desc if len(described.get(desc, ())) == 1 else f"{desc} [vars:{h}]") if desc else f"vars:{h}"
        label = (r.get("prompt") or {}).get("label") if isinstance(r.get("prompt"), dict) else None
        if len(labels) > 1:
            item = f"{item} / prompt {labels.index(label) + 1}"
        key = (system, grader, str(item))
        epochs[key] = epochs.get(key, 0) + 1  # a repeated test (promptfoo --repeat) is another epoch of the item
        # a provider's response object holds the output; some write the output itself as the response (a string)
        output = (
            r["response"]
            if isinstance(r.get("response"), str)
            else ((r.get("response") or {}).get("output") if isinstance(r.get("response"), dict) else None)
        )
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
                "visible": {
                    "input": as_text((r.get("prompt") or {}).get("raw") if isinstance(r.get("prompt"), dict) else None),
                    "output": as_text(output),
                    "rubric": as_text(rubric),
                },
                "hidden": hidden,
            }
        )
        for field_name, value in rows[-1]["visible"].items():
            if len(value) > common.MAX_FIELD:
                raise JudgmentImportError(
                    f"{path}: result {n}: its {field_name} is over {common.MAX_FIELD:,} characters"
                )
    if not rows:
        raise JudgmentImportError(f"{path}: no result asks the assertion {assertion!r}")
    meta_doc = doc.get("metadata") if isinstance(doc.get("metadata"), dict) else {}
    meta = {
        "name": str(config.get("description") or doc.get("evalId") or path.stem)[:120],
        "source": {
            "kind": "promptfoo",
            "path": str(path),
            "sha256": sha256_file(path),
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
