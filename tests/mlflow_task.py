"""A small MLflow GenAI evaluation whose traces `vocab import mlflow` audits: the questions of tests/qa_questions.py,
smollm2 answering through ``mlflow.genai.evaluate``, a judge scorer ``correct`` calling gemma3 (feedback from an
``LLM_JUDGE`` source), and human-sourced feedback of the same name on some traces.

The committed exports in `data/mlflow/` were made by this script with the embedded servers up (`vocab serve`), in a
venv holding the pinned MLflow (not one of vocab's dependencies; the unit tests read the committed files only):

    python3.11 -m venv .cache/mlflow-venv && .cache/mlflow-venv/bin/pip install -r requirements/mlflow.txt
    .cache/mlflow-venv/bin/python tests/mlflow_task.py 12 data/mlflow

It writes the two shapes MLflow users have: ``traces.json``, what ``mlflow traces search --experiment-id ID
--output json`` prints (run here as MLflow's own command), and ``traces.jsonl``, one ``Trace.to_json()`` per line
(what a user exports from Python when the CLI cannot serialise their traces).

**The human feedback is not a person's.** MLflow records a label's source type as given; here the labels come from
the answer key (PASSED when the output holds the known answer, case-insensitive), logged with ``source_type
HUMAN`` and ``source_id "answer-key"`` on every other trace, the way a team's reviewers log theirs through
``mlflow.log_feedback``. The import reads them as the blind ratings of a rater named ``answer-key``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
from qa_questions import QUESTIONS  # noqa: E402

FEEDBACK = "correct"
JUDGE_PROMPT = (
    "Question: {question}\nThe right answer: {answer}\nAn answer given: {output}\n\n"
    "Is the answer given correct? Reply yes or no."
)


def run(n: int, out_dir: Path, answer_port: int = 8101, grade_port: int = 8102) -> list[Path]:
    """Evaluate n questions in a fresh local tracking store and export its traces into ``out_dir``."""
    os.environ.update({"MLFLOW_ENABLE_ASYNC_TRACE_LOGGING": "false", "MLFLOW_GENAI_EVAL_MAX_WORKERS": "1"})
    with tempfile.TemporaryDirectory() as work:
        uri = f"sqlite:///{work}/mlflow.db"
        os.environ["MLFLOW_TRACKING_URI"] = uri
        import mlflow
        from mlflow.entities import AssessmentSource, AssessmentSourceType, Feedback
        from mlflow.genai.scorers import scorer
        from openai import OpenAI

        answerer = OpenAI(base_url=f"http://127.0.0.1:{answer_port}/v1", api_key="local", max_retries=0)
        grader = OpenAI(base_url=f"http://127.0.0.1:{grade_port}/v1", api_key="local", max_retries=0)
        mlflow.set_tracking_uri(uri)
        experiment_id = mlflow.create_experiment("qa_smollm2_gemma3", artifact_location=f"{work}/artifacts")
        mlflow.set_experiment(experiment_id=experiment_id)

        @mlflow.trace  # the app's own span is the trace's root (its chat completion, autologged, is a child)
        def predict_fn(question: str) -> str:
            reply = answerer.chat.completions.create(
                model="smollm2", messages=[{"role": "user", "content": f"Answer in a few words. {question}"}],
                temperature=0, seed=0, max_tokens=48,
            )  # fmt: skip
            return reply.choices[0].message.content or ""

        @scorer(name=FEEDBACK)
        def correct(inputs, outputs, expectations) -> Feedback:
            prompt = JUDGE_PROMPT.format(question=inputs["question"], answer=expectations["expected_response"],
                                         output=outputs)  # fmt: skip
            reply = grader.chat.completions.create(
                model="gemma3", messages=[{"role": "user", "content": prompt}], temperature=0, seed=0, max_tokens=4,
                extra_body={"structured_outputs": {"choice": ["yes", "no"]}},
            )  # fmt: skip
            judge = AssessmentSource(source_type=AssessmentSourceType.LLM_JUDGE, source_id="gemma3")
            return Feedback(value=reply.choices[0].message.content, rationale=f"gemma3 replied to: {prompt}",
                            source=judge)  # fmt: skip

        data = [{"inputs": {"question": q}, "expectations": {"expected_response": a}} for q, a in QUESTIONS[:n]]
        mlflow.genai.evaluate(data=data, predict_fn=predict_fn, scorers=[correct])
        traces = sorted(mlflow.search_traces(locations=[experiment_id], return_type="list"),
                        key=lambda t: t.info.request_time)  # fmt: skip
        human = AssessmentSource(source_type=AssessmentSourceType.HUMAN, source_id="answer-key")
        answers = dict(QUESTIONS)
        # every other trace of the app under test (mlflow.genai.evaluate also traces the model calls it autologs,
        # the judge's own among them: those carry no feedback and are no items)
        answered = [t for t in traces if t.info.tags.get("mlflow.traceName") == "predict_fn"]
        for t in answered[::2]:
            question = json.loads(t.info.request_preview or "{}").get("question")
            output = json.loads(t.info.response_preview or '""')
            if question in answers:
                holds = answers[question].lower().removeprefix("a ").removeprefix("an ").removeprefix("the ")
                mlflow.log_feedback(trace_id=t.info.trace_id, name=FEEDBACK, value=holds in str(output).lower(),
                                    source=human)  # fmt: skip
        traces = sorted(mlflow.search_traces(locations=[experiment_id], return_type="list"),
                        key=lambda t: t.info.request_time)  # fmt: skip
        out_dir.mkdir(parents=True, exist_ok=True)
        jsonl = out_dir / "traces.jsonl"
        jsonl.write_text("".join(t.to_json() + "\n" for t in traces))
        cli = Path(sys.executable).with_name("mlflow")
        argv = [str(cli), "traces", "search", "--experiment-id", experiment_id, "--output", "json",
                "--max-results", "1000"]  # fmt: skip
        printed = subprocess.run(argv, capture_output=True, text=True, check=True).stdout
        json.loads(printed)  # MLflow's own output, written as printed
        search = out_dir / "traces.json"
        search.write_text(printed)
    return [search, jsonl]


if __name__ == "__main__":
    for p in run(int(sys.argv[1]), Path(sys.argv[2]).resolve()):
        print(p)
