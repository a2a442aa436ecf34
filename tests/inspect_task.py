"""A small Inspect task whose verdicts `vocab import inspect` audits: 24 short questions with known answers, one
model answers, another grades with Inspect's `model_graded_qa` scorer.

The integration test (tests/integration/test_import_inspect_real.py) runs it with `inspect eval` against the
embedded vLLM servers; the committed log `data/inspect/qa_smollm2_gemma3.eval` was made by the same command
(see that test's `inspect_command`):

    inspect eval tests/inspect_task.py --model openai-api/vllm/smollm2 --epochs 2 --max-tokens 48 \\
        --model-role 'grader={model: openai-api/vllm2/gemma3, ...}' --log-dir data/inspect --log-format eval

Neither tiny model writes Inspect's "GRADE: C" line unaided (every sample comes back unscored); the grader's
ending is constrained with vLLM's `structured_outputs` regex, passed in the grader role's `extra_body`.
"""

from inspect_ai import Task, task
from inspect_ai.dataset import Sample
from inspect_ai.scorer import model_graded_qa
from inspect_ai.solver import generate

QUESTIONS = [
    ("What is 2 + 2?", "4"),
    ("What is the capital of France?", "Paris"),
    ("How many legs does a spider have?", "8"),
    ("What colour is the sky on a clear day?", "blue"),
    ("What is 10 minus 3?", "7"),
    ("Which animal says 'moo'?", "a cow"),
    ("What is the opposite of hot?", "cold"),
    ("How many days are in a week?", "7"),
    ("What is frozen water called?", "ice"),
    ("What is the capital of Italy?", "Rome"),
    ("What is 5 times 2?", "10"),
    ("Which planet do we live on?", "Earth"),
    ("What is the first letter of the English alphabet?", "A"),
    ("How many hours are in a day?", "24"),
    ("What do bees make?", "honey"),
    ("What is the largest ocean on Earth?", "the Pacific Ocean"),
    ("What is 9 plus 1?", "10"),
    ("Which season comes after winter?", "spring"),
    ("What colour are ripe bananas?", "yellow"),
    ("How many wheels does a bicycle have?", "2"),
    ("What is the capital of Japan?", "Tokyo"),
    ("What gas do people breathe in to live?", "oxygen"),
    ("What is half of 8?", "4"),
    ("Which is bigger, an elephant or a mouse?", "an elephant"),
]


@task
def qa(n: int = len(QUESTIONS)):
    """Short questions with known answers, graded by a model (the grader role)."""
    dataset = [Sample(input=q, target=a, id=f"q{i:02d}") for i, (q, a) in enumerate(QUESTIONS[:n], start=1)]
    return Task(dataset=dataset, solver=generate(), scorer=model_graded_qa())
