"""A small Inspect task whose verdicts `vocab import inspect` audits: 24 short questions with known answers, one
model answers, another grades with Inspect's `model_graded_qa` scorer.

The integration test (tests/integration/test_import_inspect_real.py) runs it with `inspect eval` against the
embedded vLLM servers (:func:`eval_command`); the committed log `data/inspect/qa_smollm2_gemma3.eval` was made by
the same command with 8 questions, with the servers up (`vocab serve`):

    .venv/bin/python tests/inspect_task.py 8 data/inspect/qa_smollm2_gemma3.eval

Neither tiny model writes Inspect's "GRADE: C" line unaided (every sample comes back unscored); the grader's
ending is constrained with vLLM's `structured_outputs` regex, passed in the grader role's `extra_body`.
"""

import os
import subprocess
import sys
import tempfile
from pathlib import Path

from inspect_ai import Task, task
from inspect_ai.dataset import Sample
from inspect_ai.scorer import model_graded_qa
from inspect_ai.solver import generate

sys.path.insert(0, str(Path(__file__).resolve().parent))  # inspect eval loads this file by its path
from qa_questions import QUESTIONS  # noqa: E402


@task
def qa(n: int = len(QUESTIONS)):
    """Short questions with known answers, graded by a model (the grader role)."""
    dataset = [Sample(input=q, target=a, id=f"q{i:02d}") for i, (q, a) in enumerate(QUESTIONS[:n], start=1)]
    return Task(dataset=dataset, solver=generate(), scorer=model_graded_qa())


GRADE_REGEX = "[A-Za-z0-9 ,.]+\nGRADE: [CI]"  # the grader's reasoning, then Inspect's grade line


def eval_command(n: int, log_dir: Path, answer_port: int = 8101, grade_port: int = 8102) -> tuple[list[str], dict]:
    """`inspect eval` of this task, smollm2 answering and gemma3 grading (the embedded servers), seeded,
    2 epochs, as argv and environment."""
    env = {**os.environ, "VLLM_BASE_URL": f"http://127.0.0.1:{answer_port}/v1", "VLLM_API_KEY": "local",
           "VLLM2_BASE_URL": f"http://127.0.0.1:{grade_port}/v1", "VLLM2_API_KEY": "local"}  # fmt: skip
    grader = (
        "grader={model: openai-api/vllm2/gemma3, max_tokens: 64, temperature: 0, seed: 0, "
        f"extra_body: {{structured_outputs: {{regex: {GRADE_REGEX!r}}}}}}}"
    ).replace("'", '"')
    argv = [str(Path(sys.executable).with_name("inspect")), "eval", "tests/inspect_task.py", "-T", f"n={n}",
            "--model", "openai-api/vllm/smollm2", "--epochs", "2", "--max-tokens", "48", "--temperature", "0",
            "--seed", "0", "--model-role", grader, "--log-dir", str(log_dir), "--log-format", "eval",
            "--display", "none"]  # fmt: skip
    return argv, env


if __name__ == "__main__":  # python tests/inspect_task.py N OUT.eval, from the repository root
    n, out = int(sys.argv[1]), Path(sys.argv[2])
    with tempfile.TemporaryDirectory() as tmp:
        argv, env = eval_command(n, Path(tmp))
        subprocess.run(argv, env=env, check=True)
        (log,) = Path(tmp).glob("*.eval")
        out.write_bytes(log.read_bytes())
        print(out)
