"""A small DeepEval test run whose verdicts `vocab import deepeval` audits: the questions of tests/qa_questions.py,
smollm2 answering, a G-Eval "Correctness" metric graded by gemma3 through DeepEval's custom-model hook.

The committed run `data/deepeval/qa_smollm2_gemma3.json` is the `test_run_*.json` that DeepEval's
``evaluate(..., display_config=DisplayConfig(results_folder=DIR))`` wrote when this script ran with the embedded
servers up (`vocab serve`), in a venv holding the pinned DeepEval (it is not one of vocab's dependencies; the unit
tests read the committed file only):

    python3.11 -m venv .cache/deepeval-venv && .cache/deepeval-venv/bin/pip install -r requirements/deepeval.txt
    .cache/deepeval-venv/bin/python tests/deepeval_task.py 12 data/deepeval/qa_smollm2_gemma3.json

The grader is held to G-Eval's answer shape (a reason and a score) by vLLM's structured output: the schema DeepEval
asks for goes to the server as an OpenAI ``json_schema`` response format. A grading call that fails (a timeout, a
reply the schema does not parse) is recorded by DeepEval as the metric's ``error`` (``ErrorConfig(ignore_errors=
True)``): the import reads such a case as UNSCORED. DeepEval runs offline here: telemetry off, no Confident AI.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
from qa_questions import QUESTIONS  # noqa: E402

CRITERIA = (
    "Determine whether the actual output answers the input correctly. The expected output is the right answer; "
    "an answer that states it in other words is correct."
)


def run(n: int, out: Path, answer_port: int = 8101, grade_port: int = 8102) -> Path:
    """Answer n questions with smollm2, grade each with G-Eval (gemma3), and copy DeepEval's test run to ``out``."""
    os.environ.update({"DEEPEVAL_TELEMETRY_OPT_OUT": "1", "DEEPEVAL_DISABLE_DOTENV": "1",
                       "DEEPEVAL_NO_INSPECT_PROMPT": "1", "DEEPEVAL_GRPC_LOGGING": "0"})  # fmt: skip
    from deepeval import evaluate
    from deepeval.evaluate import AsyncConfig, CacheConfig, DisplayConfig, ErrorConfig
    from deepeval.metrics import GEval
    from deepeval.models import DeepEvalBaseLLM
    from deepeval.test_case import LLMTestCase, LLMTestCaseParams
    from openai import OpenAI

    def client(port: int) -> OpenAI:
        return OpenAI(base_url=f"http://127.0.0.1:{port}/v1", api_key="local", max_retries=0, timeout=300)

    class Served(DeepEvalBaseLLM):
        """A model of the embedded vLLM servers as DeepEval's judge, seeded, greedy, held to the asked schema."""

        def __init__(self, name: str, port: int):
            self.name, self.port = name, port
            super().__init__(name)

        def load_model(self):
            return client(self.port)

        def generate(self, prompt: str, schema=None):
            fmt = None
            if schema is not None:
                shape = schema.model_json_schema()
                for prop in shape.get("properties", {}).values():  # short texts: long ones ran out of tokens
                    if prop.get("type") == "string":
                        prop["maxLength"] = 300
                    if prop.get("type") == "array" and prop.get("items", {}).get("type") == "string":
                        prop.update(maxItems=4)
                        prop["items"]["maxLength"] = 150
                spec = {"name": schema.__name__, "strict": True, "schema": shape}
                fmt = {"type": "json_schema", "json_schema": spec}
            reply = self.model.chat.completions.create(
                model=self.name, messages=[{"role": "user", "content": prompt}], temperature=0, seed=0,
                max_tokens=400, **({"response_format": fmt} if fmt else {}),
            )  # fmt: skip
            text = reply.choices[0].message.content or ""
            return schema.model_validate_json(text) if schema is not None else text

        async def a_generate(self, prompt: str, schema=None):
            return self.generate(prompt, schema)

        def get_model_name(self) -> str:
            return self.name

    answerer = client(answer_port)
    cases = []
    for i, (question, answer) in enumerate(QUESTIONS[:n], start=1):
        reply = answerer.chat.completions.create(
            model="smollm2", messages=[{"role": "user", "content": f"Answer in a few words. {question}"}],
            temperature=0, seed=0, max_tokens=48,
        )  # fmt: skip
        output = reply.choices[0].message.content or ""
        cases.append(LLMTestCase(name=f"q{i:02d}", input=question, actual_output=output, expected_output=answer))
    metric = GEval(
        name="Correctness", criteria=CRITERIA, model=Served("gemma3", grade_port), threshold=0.5, async_mode=False,
        evaluation_params=[LLMTestCaseParams.INPUT, LLMTestCaseParams.ACTUAL_OUTPUT, LLMTestCaseParams.EXPECTED_OUTPUT],
    )  # fmt: skip
    with tempfile.TemporaryDirectory() as work:
        os.chdir(work)  # DeepEval keeps its .deepeval/ cache in the working directory
        evaluate(
            test_cases=cases, metrics=[metric],
            async_config=AsyncConfig(run_async=False), cache_config=CacheConfig(write_cache=False, use_cache=False),
            error_config=ErrorConfig(ignore_errors=True),
            display_config=DisplayConfig(results_folder=str(Path(work) / "results"), print_results=False,
                                         show_indicator=False, inspect_after_run=False),
        )  # fmt: skip
        (written,) = sorted((Path(work) / "results").glob("test_run_*.json"))
        json.loads(written.read_text())  # DeepEval's own file, copied as it is
        out.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(written, out)
    return out


if __name__ == "__main__":
    print(run(int(sys.argv[1]), Path(sys.argv[2]).resolve()))
