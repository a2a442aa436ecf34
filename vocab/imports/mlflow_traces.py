"""MLflow traces with their feedback as a judgments dataset: `vocab import mlflow`.

MLflow's GenAI evaluation keeps each judge's verdict on the trace it judged, as a *feedback* assessment with its
source (``LLM_JUDGE``, ``CODE`` or ``HUMAN`` and an id), and since MLflow 3 people's labels sit beside it. Read here
in the two shapes MLflow itself writes: the JSON that ``mlflow traces search --experiment-id ID --output json``
prints (``{"traces": [...]}``) and JSON Lines of ``Trace.to_json()``; or, with MLflow installed, straight from a
tracking store (:func:`fetch_traces`).

One item per trace that carries a feedback of the chosen name. Its verdict is the feedback of one non-human source
(the judge): a boolean, a pass or fail word (``--pass-values`` / ``--fail-values``), or a number against
``--pass-at``; a feedback with an error, or without a value, is UNSCORED, never FAILED. The judge's rationale stays
hidden. Feedback of the same name from ``HUMAN`` sources are labels: one rater per source id
(:mod:`vocab.imports.labels` turns them into the sample and its ratings).
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from pathlib import Path
from typing import Any

from vocab import files
from vocab.datasets.dataset import dataset_of, single_verdict
from vocab.datasets.rows import write_dataset
from vocab.datasets.values import as_text
from vocab.files import sha256_file
from vocab.imports import common
from vocab.imports.common import JudgmentImportError, first_line
from vocab.imports.labels import check_labels_fit, labels_used, write_labels
from vocab.layout import RunDir

MLFLOW_PASS = ("yes", "true", "pass", "passed", "correct")
MLFLOW_FAIL = ("no", "false", "fail", "failed", "incorrect")
MLFLOW_QUESTION = "Does the output meet the judge's criterion for this input (see the target, if given)?"
HUMAN = "HUMAN"
MLFLOW_DEFAULT_SOURCE = "default"  # the source id MLflow records when none is given


def load_traces(path: str | Path) -> list[dict]:
    """The traces of a file: ``mlflow traces search --output json``'s object, or JSON Lines of ``Trace.to_json()``.
    Each trace an object with an ``info`` object; anything else is one line naming the file and the trace."""
    path = Path(path)
    raw = files.read_bytes(path, common.MAX_JSON_LOG, "traces file", JudgmentImportError)
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise JudgmentImportError(f"{path}: not UTF-8 text (MLflow writes traces as JSON)") from None
    stripped = text.strip()
    if not stripped:
        raise JudgmentImportError(f"{path}: empty: no traces (mlflow traces search --output json writes them)")
    if stripped.startswith("{") and "\n{" not in stripped:  # one object: the CLI's, or a single trace
        doc = files.parse_json(raw, path, JudgmentImportError)
        traces = doc.get("traces") if isinstance(doc, dict) and "traces" in doc else [doc]
        if isinstance(doc, dict) and doc.get("next_page_token"):
            raise JudgmentImportError(
                f"{path}: one page of the search ({len(traces) if isinstance(traces, list) else '?'} traces; its "
                "next_page_token is set): export them all, mlflow traces search ... --max-results N"
            )
    else:
        files.check_json_cost(raw, path, JudgmentImportError)  # every line's shape at once: together they are held
        traces = []
        for n, line in enumerate(text.splitlines(), start=1):
            if line.strip():
                if len(traces) >= common.MAX_ROWS:
                    raise JudgmentImportError(f"{path}: more than {common.MAX_ROWS} traces")
                try:
                    traces.append(json.loads(line))
                except RecursionError:
                    raise JudgmentImportError(f"{path}: JSON nested too deep to read") from None
                except json.JSONDecodeError as e:
                    raise JudgmentImportError(f"{path}: line {n} is not JSON ({first_line(e)})") from None
    if not isinstance(traces, list):
        raise JudgmentImportError(f"{path}: 'traces' is not a list (mlflow traces search --output json writes one)")
    if len(traces) > common.MAX_ROWS:
        raise JudgmentImportError(f"{path}: more than {common.MAX_ROWS} traces")
    for n, t in enumerate(traces, start=1):
        if not (isinstance(t, dict) and isinstance(t.get("info"), dict)):
            raise JudgmentImportError(
                f"{path}: trace {n} is not an MLflow trace (no 'info' object; export with mlflow traces search "
                "--output json, or one Trace.to_json() a line)"
            )
    return traces


def fetch_traces(tracking_uri: str, experiment_id: str) -> list[dict]:
    """The traces of one experiment from an MLflow tracking store, as dicts (``Trace.to_dict()``); needs MLflow."""
    try:
        import mlflow
    except ImportError:
        raise JudgmentImportError(
            "--tracking-uri reads a store with MLflow itself, which is not installed (pip install -e '.[mlflow]'); "
            "or export the traces (mlflow traces search --experiment-id ID --output json) and import that file"
        ) from None
    mlflow.set_tracking_uri(tracking_uri)
    try:
        found = mlflow.search_traces(
            locations=[str(experiment_id)], return_type="list", max_results=common.MAX_ROWS + 1
        )
    except Exception as e:  # MLflow's own errors: a store it cannot open, an experiment it does not hold
        raise JudgmentImportError(f"{tracking_uri}: experiment {experiment_id}: {first_line(e, 200)}") from None
    if len(found) > common.MAX_ROWS:
        raise JudgmentImportError(f"{tracking_uri}: experiment {experiment_id}: over {common.MAX_ROWS} traces")
    return [t.to_dict() for t in found]


def _assessments(info: dict) -> list[dict]:
    found = info.get("assessments")
    return [a for a in found if isinstance(a, dict)] if isinstance(found, list) else []


def _feedbacks(info: dict, name: str | None = None) -> list[dict]:
    """A trace's feedback assessments (of one name), overridden ones included: a judge's feedback that a person
    overrode (``mlflow.override_feedback``: the judge's marked ``valid: false``, the person's new one naming it in
    ``overrides``) is still what the judge said, and the person's is their label."""
    return [
        a
        for a in _assessments(info)
        if isinstance(a.get("feedback"), dict) and (name is None or a.get("assessment_name") == name)
    ]


def _source(a: dict) -> tuple[str, str]:
    s = a.get("source") if isinstance(a.get("source"), dict) else {}
    return str(s.get("source_type") or ""), str(s.get("source_id") or "")


def _default_override(a: dict) -> bool:
    """An override recorded under MLflow's default source (``mlflow.override_feedback`` without ``source=``)."""
    kind, source_id = _source(a)
    return bool(a.get("overrides")) and kind != HUMAN and source_id in (MLFLOW_DEFAULT_SOURCE, "")


def check_people_named(traces: list[dict], where: str, feedback: str) -> None:
    """Every person's feedback of ``feedback`` names its person: HUMAN feedback without a source id (or with MLflow's
    default id "default", which ``AssessmentSource(source_type="HUMAN")`` records when given none), and an override
    recorded under MLflow's default source, cannot be told apart from another person's, so they are refused (never
    merged into one rater, never dropped)."""
    anonymous, overrides = [], []
    for n, t in enumerate(traces, start=1):
        trace_id = str(t["info"].get("trace_id") or f"trace-{n}")[:40]
        for a in _feedbacks(t["info"], feedback):
            kind, source_id = _source(a)
            if kind == HUMAN and source_id.strip() in ("", MLFLOW_DEFAULT_SOURCE):
                anonymous.append(trace_id)
            elif _default_override(a):
                overrides.append(trace_id)
    if anonymous:
        raise JudgmentImportError(
            f"{where}: {len(anonymous)} feedback from people with no source id (traces {', '.join(anonymous[:3])}"
            f"{', ...' if len(anonymous) > 3 else ''}): several people cannot be told apart; log each person's "
            "feedback with source=AssessmentSource(source_type='HUMAN', source_id=<who>) and export again"
        )
    if overrides:
        raise JudgmentImportError(
            f"{where}: {len(overrides)} overrides recorded under MLflow's default source (traces "
            f"{', '.join(overrides[:3])}{', ...' if len(overrides) > 3 else ''}): whose correction it is cannot be "
            "told; override with source=AssessmentSource(source_type='HUMAN', source_id=<who>) and export again"
        )


def _judge_feedback(a: dict) -> bool:
    """A feedback from a non-human source with an id: a judge's (an LLM's or code's); an override under MLflow's
    default source is a person's correction nobody named (:func:`check_people_named`), no judge's."""
    kind, source_id = _source(a)
    return kind != HUMAN and bool(source_id) and not _default_override(a)


def _latest(found: list[dict]) -> dict:
    """Of one source's feedback of one name on one trace, the last written."""
    return max(
        found,
        key=lambda a: (str(a.get("last_update_time") or a.get("create_time") or ""), str(a.get("assessment_id") or "")),
    )


def _verdict(value: Any, pass_values, fail_values, pass_at: float | None, where: str) -> str:
    """PASSED or FAILED for a feedback's value; UNSCORED for a number that is not finite (NaN is no verdict)."""
    if isinstance(value, bool):
        return "PASSED" if value else "FAILED"
    if isinstance(value, (int, float)):
        if not math.isfinite(value):
            return "UNSCORED"
        if pass_at is None:
            raise JudgmentImportError(
                f"{where}: a numeric feedback ({value!r}); give --pass-at, the lowest passing "
                "(vocab import mlflow FILE --pass-at X, then vocab audit DIR)"
            )
        return "PASSED" if value >= pass_at else "FAILED"
    if isinstance(value, str):
        word = value.strip().lower()
        if word in pass_values:
            return "PASSED"
        if word in fail_values:
            return "FAILED"
        raise JudgmentImportError(
            f"{where}: feedback value {first_line(value, 40)!r} is neither a pass value ({', '.join(pass_values)}) "
            f"nor a fail value ({', '.join(fail_values)}): say which with --pass-values / --fail-values"
        )
    raise JudgmentImportError(f"{where}: a feedback value of type {type(value).__name__} is not a verdict")


def _io(trace: dict) -> tuple[Any, Any]:
    """The trace's request and response: its root span's inputs and outputs (whole), else the trace's metadata,
    else its previews (MLflow cuts those)."""
    spans = trace.get("data", {}).get("spans") if isinstance(trace.get("data"), dict) else None
    for s in spans if isinstance(spans, list) else []:
        attrs = s.get("attributes") if isinstance(s, dict) and isinstance(s.get("attributes"), dict) else None
        if attrs is not None and not s.get("parent_span_id") and "mlflow.spanInputs" in attrs:
            return _decoded(attrs.get("mlflow.spanInputs")), _decoded(attrs.get("mlflow.spanOutputs"))
    info = trace["info"]
    meta = info.get("trace_metadata") if isinstance(info.get("trace_metadata"), dict) else {}
    request = meta.get("mlflow.traceInputs", info.get("request_preview"))
    response = meta.get("mlflow.traceOutputs", info.get("response_preview"))
    return _decoded(request), _decoded(response)


def _decoded(v: Any) -> Any:
    if isinstance(v, str):
        try:
            return files.loads_bounded(v)
        except ValueError:  # not JSON, nested too deep or too large once parsed: the text as it is
            return v
    return v


def _shown(v: Any) -> str:
    """What a rater reads of a request or response: a chat request's messages and a chat completion's answer (a
    trace whose root is an autologged model call), a lone field's text, a string as it is, else JSON."""
    if isinstance(v, dict) and isinstance(v.get("messages"), list):
        said = [m for m in v["messages"] if isinstance(m, dict) and isinstance(m.get("content"), str)]
        if said:
            return "\n\n".join(f"{m.get('role', '')}: {m['content']}" if len(said) > 1 else m["content"] for m in said)
    if isinstance(v, dict) and isinstance(v.get("choices"), list) and v["choices"]:
        first = v["choices"][0]
        message = first.get("message") if isinstance(first, dict) else None
        if isinstance(message, dict) and isinstance(message.get("content"), str):
            return message["content"]
    if isinstance(v, dict) and len(v) == 1:
        v = next(iter(v.values()))
    return as_text(v)


def rater_name(source_id: str) -> str:
    """A human source's id as a rater's name (a letter, then letters, digits, '-' or '_', at most 40): other
    characters become '-', e.g. ann@example.com -> ann-example-com."""
    name = re.sub(r"[^A-Za-z0-9_-]+", "-", source_id).strip("-_")[:40]
    return name if name[:1].isalpha() else f"h-{name}"[:40]


def read_mlflow(
    traces: list[dict],
    origin: dict[str, Any],
    *,
    feedback: str | None = None,
    judge: str | None = None,
    pass_values=MLFLOW_PASS,
    fail_values=MLFLOW_FAIL,
    pass_at: float | None = None,
    system: str | None = None,
    question: str = MLFLOW_QUESTION,
) -> tuple[list[dict], dict[str, Any], dict[str, dict[str, str]]]:
    """Judgment rows, dataset metadata and the human labels (item id -> rater -> PASSED/FAILED) of MLflow traces.
    ``origin``: where they came from (a file's path and hash, or a store's URI and experiment)."""
    where = origin.get("path") or f"{origin.get('tracking_uri')} experiment {origin.get('experiment_id')}"
    pass_values = tuple(v.lower() for v in pass_values)
    fail_values = tuple(v.lower() for v in fail_values)
    both = set(pass_values) & set(fail_values)
    if both:
        raise JudgmentImportError(f"{sorted(both)[0]!r} is both a pass and a fail value")
    if not traces:
        raise JudgmentImportError(f"{where}: no traces in it (mlflow traces search --output json writes them)")
    judged: dict[str, set[str]] = {}  # feedback name -> its non-human sources
    for t in traces:
        for a in _feedbacks(t["info"]):
            if _judge_feedback(a):
                judged.setdefault(str(a.get("assessment_name")), set()).add(_source(a)[1])
    if feedback is None:
        if not judged:
            raise JudgmentImportError(
                f"{where}: no trace holds feedback from a judge (a non-human source with an id); "
                "log the judge's feedback first (mlflow.genai.evaluate, or mlflow.log_feedback)"
            )
        if len(judged) != 1:
            raise JudgmentImportError(
                f"{where}: choose the judge's feedback with --feedback (named by a non-human source here: "
                f"{', '.join(sorted(judged)) or 'none'})"
            )
        (feedback,) = judged
    elif feedback not in judged:
        raise JudgmentImportError(
            f"{where}: no feedback named {feedback!r} from a non-human source (there are: "
            f"{', '.join(sorted(judged)) or 'none'})"
        )
    check_people_named(traces, where, feedback)
    sources = sorted(judged[feedback])
    if judge is None:
        if len(sources) != 1:
            raise JudgmentImportError(
                f"{where}: feedback {feedback!r} comes from several judges "
                f"({', '.join(sources)}): choose one with --judge"
            )
        (judge,) = sources
    elif judge not in sources:
        raise JudgmentImportError(f"{where}: no judge {judge!r} gave feedback {feedback!r} ({', '.join(sources)})")
    rows, labels, left_out, humans, names, unjudged_labels, overrides = [], {}, 0, {}, {}, 0, 0
    for n, t in enumerate(traces, start=1):
        info = t["info"]
        mine = _feedbacks(info, feedback)
        by_judge = [a for a in mine if _judge_feedback(a) and _source(a)[1] == judge]
        if not by_judge:  # not an item of this judge (another judge's, or the judge's own autologged call, say)
            left_out += 1
            unjudged_labels += any(_source(a)[0] == HUMAN for a in mine)
            continue
        trace_id = str(info.get("trace_id") or f"trace-{n}")
        at = f"{where}: trace {trace_id[:40]}"
        fb = _latest(by_judge)["feedback"]
        if fb.get("error"):
            err = fb["error"] if isinstance(fb["error"], dict) else {"error_message": fb["error"]}
            verdict = "UNSCORED"
            why = f"error: {first_line(err.get('error_code') or '')} {first_line(err.get('error_message') or '')}"
        elif fb.get("value") is None:
            verdict, why = "UNSCORED", "no_value"
        else:
            verdict = _verdict(fb["value"], pass_values, fail_values, pass_at, at)
            why = "not_finite: the feedback's value is not a number" if verdict == "UNSCORED" else None
        # a person's label: their latest feedback still valid (one they overrode themselves is not)
        for source_id in sorted({_source(a)[1] for a in mine if _source(a)[0] == HUMAN}):
            theirs = [a for a in mine if _source(a) == (HUMAN, source_id) and a.get("valid") is not False]
            label = _latest(theirs)["feedback"] if theirs else {}
            if label.get("error") or label.get("value") is None:
                continue
            label_verdict = _verdict(label["value"], pass_values, fail_values, pass_at, at)
            if label_verdict == "UNSCORED":
                continue
            name = rater_name(source_id)
            if names.setdefault(name, source_id) != source_id:
                raise JudgmentImportError(
                    f"{where}: human sources {names[name]!r} and {source_id!r} share the "
                    f"rater name {name!r}; rename one"
                )
            labels.setdefault(trace_id, {})[name] = label_verdict
            humans[name] = humans.get(name, 0) + 1
            overrides += bool(_latest(theirs).get("overrides"))
        request, response = _io(t)
        meta_t = info.get("trace_metadata") if isinstance(info.get("trace_metadata"), dict) else {}
        tags = info.get("tags") if isinstance(info.get("tags"), dict) else {}
        expected = [
            a["expectation"].get("value")
            for a in _assessments(info)
            if isinstance(a.get("expectation"), dict) and a.get("valid") is not False
        ]
        hidden = {
            "trace_id": trace_id,
            "rationale": _latest(by_judge).get("rationale"),
            "overridden": _latest(by_judge).get("valid") is False,
            "feedback_value": fb.get("value"),
            "state": info.get("state"),
            "request_time": info.get("request_time"),
        }
        if why:
            hidden["unscored_reason"] = why
        row_system = system or str(meta_t.get("mlflow.modelId") or tags.get("mlflow.traceName") or "unknown")
        rows.append(
            {
                "id": trace_id,
                "group": trace_id,
                "epoch": 1,
                "system": row_system,
                "judge": judge,
                "verdict": verdict,
                "criteria": {},
                "visible": {
                    "input": _shown(request),
                    "target": _shown(expected[0] if len(expected) == 1 else expected or ""),
                    "output": _shown(response),
                },
                "hidden": hidden,
            }
        )
        for field_name, value in rows[-1]["visible"].items():
            if len(value) > common.MAX_FIELD:
                raise JudgmentImportError(f"{at}: its {field_name} is over {common.MAX_FIELD:,} characters")
    if len({r["id"] for r in rows}) != len(rows):
        raise JudgmentImportError(f"{where}: a trace id appears twice (two exports joined?)")
    visible = ["input", "target", "output"] if any(r["visible"]["target"] for r in rows) else ["input", "output"]
    for r in rows:
        r["visible"] = {k: r["visible"][k] for k in visible}
    meta = {
        "name": str(origin.get("name") or feedback)[:120],
        "source": {
            **origin,
            "kind": "mlflow",
            "feedback": feedback,
            "judge_source": judge,
            "traces": len(traces),
            "left_out": left_out,
            "human_labels": dict(sorted(humans.items())),
            "human_sources": dict(sorted(names.items())),
            "labels_on_traces_left_out": unjudged_labels,
            "overrides": overrides,  # people's labels that override the judge's feedback (mlflow.override_feedback)
        },
        "rubric": single_verdict(question, name=f"{feedback}'s criterion").as_dict(),
        "visible": visible,
    }
    return rows, meta, labels


def import_mlflow(
    path: str | Path | None,
    run_dir: str | Path,
    *,
    tracking_uri: str | None = None,
    experiment_id: str | None = None,
    seed: int = 0,
    notes: list[str] | None = None,
    **kw,
) -> Path:
    """`vocab import mlflow`: a file of traces, or a tracking store's experiment, to a judgments dataset; the human
    labels among them to its sample and ratings (:func:`vocab.imports.labels.write_labels`; what it did
    to people's files is added to ``notes``)."""

    if (path is None) == (tracking_uri is None):
        raise JudgmentImportError("give a traces file, or --tracking-uri with --experiment-id, not both")
    if path is not None:
        path = Path(path)
        traces = load_traces(path)
        origin = {"path": str(path), "sha256": sha256_file(path), "name": path.stem}
    else:
        if not experiment_id:
            raise JudgmentImportError("--tracking-uri needs --experiment-id")
        traces = fetch_traces(tracking_uri, experiment_id)
        digest = hashlib.sha256(json.dumps(traces, sort_keys=True, default=str).encode()).hexdigest()
        origin = {
            "tracking_uri": tracking_uri,
            "experiment_id": str(experiment_id),
            "sha256": digest,
            "name": f"experiment {experiment_id}",
        }
    rows, meta, labels = read_mlflow(traces, origin, **kw)
    if not rows:
        raise JudgmentImportError(f"{origin.get('path') or tracking_uri}: no trace carries the judge's feedback")
    check_labels_fit(run_dir, labels)
    if labels:  # the sample's folder can be made, before the dataset is written
        files.check_writable(RunDir(run_dir).key, run_dir, JudgmentImportError)
    scored = {r["id"] for r in rows if r["verdict"] != "UNSCORED"} & set(labels)
    meta["source"]["labels_used"] = labels_used(labels, scored)

    def with_labels(published: dict) -> None:
        """People's labels written before ``dataset.json`` lands: part of the import's commit."""
        said = write_labels(
            run_dir, labels, seed=seed, source="MLflow feedback from HUMAN sources", data=dataset_of(run_dir, published)
        )
        if notes is not None:
            notes.extend(said)

    # labels of items the judge left UNSCORED alone fill no pile
    return write_dataset(run_dir, rows, meta, before_publish=with_labels if scored else None)
