"""MLflow traces in the shape a team's labelling leaves them: a judge's feedback of every class and several people's.

`data/mlflow/reviewers.json` (and `.jsonl`) were made by this script with the pinned MLflow (requirements/mlflow.txt),
no model needed: each trace is a real ``@mlflow.trace`` call whose answer is canned, and every assessment is logged
through MLflow's own API (``log_feedback``, ``override_feedback``), so the files hold what MLflow writes:

    python3.11 -m venv .cache/mlflow-venv && .cache/mlflow-venv/bin/pip install -r requirements/mlflow.txt
    .cache/mlflow-venv/bin/python tests/mlflow_reviewers_task.py data/mlflow

What the 24 traces carry (the tests count every class from the files themselves):

- the judge ``gemma3`` (``LLM_JUDGE``) gives feedback ``correct`` on every trace: "yes" or "no", an error
  (``AssessmentError``) on two, and a null value on two (a NaN cannot be exported: MLflow 3.17.2's protobuf JSON
  refuses it, in `mlflow traces search --output json` and in ``Trace.to_json()`` alike);
- two reviewers, ``ann@example.com`` and ``bob@example.com`` (``HUMAN``), label different traces (MLflow's usual
  shape), overlapping on four, where they disagree on two; ann relabels one trace (her later label counts);
- a third person, ``carol``, overrides the judge's feedback on two traces (``override_feedback`` with her source);
- one trace carries feedback of another name (``tone``) from an unnamed person: not the judge's feedback, left alone.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

N = 24
ERRORS, NULLS = {3, 17}, {8, 20}  # the judge's feedback: an error; a null value
ANN = set(range(0, 14))  # ann labels traces 0-13, bob 10-23: both on 10-13
BOB = set(range(10, 24))
DISAGREE = {11, 13}  # of the overlap, where bob says the opposite of ann
RELABEL = 5  # ann labels it twice: first FAILED, then PASSED
OVERRIDES = {6, 22}  # carol overrides the judge's verdict


def main(out_dir: str) -> None:
    os.environ["MLFLOW_ENABLE_ASYNC_TRACE_LOGGING"] = "false"  # each trace in the store before its feedback
    import mlflow
    from mlflow.entities import AssessmentError, AssessmentSource

    out = Path(out_dir)
    tmp = Path(tempfile.mkdtemp(prefix="mlflow-reviewers-"))
    mlflow.set_tracking_uri(f"sqlite:///{tmp}/mlflow.db")
    experiment = mlflow.set_experiment("reviewers")

    @mlflow.trace(name="predict_fn")
    def predict_fn(question: str) -> str:
        return f"answer to {question}"

    judge = AssessmentSource(source_type="LLM_JUDGE", source_id="gemma3")
    for i in range(N):
        predict_fn(f"question {i}")
        trace_id = mlflow.get_last_active_trace_id()
        right = i % 3 != 0  # the answer key: two in three answers are right
        said = "yes" if (right if i % 5 else not right) else "no"  # the judge errs on every fifth trace
        if i in ERRORS:
            fb = mlflow.log_feedback(
                trace_id=trace_id,
                name="correct",
                source=judge,
                error=AssessmentError(error_code="RATE_LIMIT", error_message="429 slow down"),
            )
        elif i in NULLS:
            fb = mlflow.log_feedback(trace_id=trace_id, name="correct", source=judge, value=None)
        else:
            fb = mlflow.log_feedback(
                trace_id=trace_id, name="correct", source=judge, value=said, rationale="the judge's reason"
            )
        for who, theirs in (("ann@example.com", ANN), ("bob@example.com", BOB)):
            if i in theirs:
                label = right if not (who.startswith("bob") and i in DISAGREE) else not right
                if who.startswith("ann") and i == RELABEL:
                    mlflow.log_feedback(
                        trace_id=trace_id,
                        name="correct",
                        value=not label,
                        source=AssessmentSource(source_type="HUMAN", source_id=who),
                    )
                    time.sleep(0.01)  # the relabel is later
                mlflow.log_feedback(
                    trace_id=trace_id,
                    name="correct",
                    value=label,
                    source=AssessmentSource(source_type="HUMAN", source_id=who),
                )
        if i in OVERRIDES and i not in ERRORS | NULLS:
            mlflow.override_feedback(
                trace_id=trace_id,
                assessment_id=fb.assessment_id,
                value=right,
                rationale="carol's correction",
                source=AssessmentSource(source_type="HUMAN", source_id="carol"),
            )
        if i == 1:
            mlflow.log_feedback(
                trace_id=trace_id,
                name="tone",
                value="polite",
                source=AssessmentSource(source_type="HUMAN", source_id="default"),
            )
    out.mkdir(parents=True, exist_ok=True)
    cli = Path(sys.executable).parent / "mlflow"
    printed = subprocess.run(
        [
            str(cli),
            "traces",
            "search",
            "--experiment-id",
            experiment.experiment_id,
            "--output",
            "json",
            "--max-results",
            "1000",
        ],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "MLFLOW_TRACKING_URI": f"sqlite:///{tmp}/mlflow.db"},
    ).stdout
    assert len(json.loads(printed)["traces"]) == N
    (out / "reviewers.json").write_text(printed)  # MLflow's own output, as printed
    traces = mlflow.search_traces(locations=[experiment.experiment_id], return_type="list", max_results=1000)
    (out / "reviewers.jsonl").write_text("".join(t.to_json() + "\n" for t in traces))


if __name__ == "__main__":
    main(sys.argv[1])
