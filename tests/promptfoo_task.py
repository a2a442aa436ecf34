"""A small promptfoo eval whose verdicts `vocab import promptfoo` audits: the questions of tests/inspect_task.py,
smollm2 answering, gemma3 grading with promptfoo's `llm-rubric`, beside a plain `icontains` check (so a test has
two assertions and promptfoo's own `success`, their AND, is not the judge's verdict).

The integration test (tests/integration/test_import_promptfoo_real.py) runs it against the embedded vLLM servers
(:func:`eval_command`); the committed results `data/promptfoo/qa_smollm2_gemma3.json` were made by the same command
with 8 questions, with the servers up (`vocab serve`):

    .venv/bin/python tests/promptfoo_task.py 8 data/promptfoo/qa_smollm2_gemma3.json

promptfoo is the npm package, pinned in tests/promptfoo/package.json and installed by `make setup` into
.cache/promptfoo (never globally). It runs offline: no telemetry, update check, sharing or cache. The grader is
held to llm-rubric's answer shape by vLLM's structured output (an OpenAI `json_schema` response format); the tiny
graders rarely write parseable JSON unaided.
"""

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
from qa_questions import QUESTIONS  # noqa: E402

PROMPTFOO = ROOT / ".cache" / "promptfoo" / "node_modules" / ".bin" / "promptfoo"
RUBRIC = "The output answers the question '{{question}}' correctly; the right answer is {{answer}}."
GRADE_SCHEMA = {
    "type": "object",
    "properties": {
        "reason": {"type": "string", "maxLength": 200},  # a short reason: a long one ran out of tokens mid-string
        "pass": {"type": "boolean"},
        "score": {"type": "number"},
    },
    "required": ["reason", "pass", "score"],
    "additionalProperties": False,
}


def config(n: int, answer_port: int = 8101, grade_port: int = 8102) -> dict:
    """The promptfoo config: n questions, each with an llm-rubric (graded by gemma3) and an icontains assertion."""

    def provider(name: str, port: int, max_tokens: int, **extra) -> dict:
        cfg = {"apiBaseUrl": f"http://127.0.0.1:{port}/v1", "apiKey": "local", "temperature": 0, "seed": 0,
               "max_tokens": max_tokens, "maxRetries": 0, **extra}  # fmt: skip
        return {"id": f"openai:chat:{name}", "label": name, "config": cfg}

    grade_format = {"type": "json_schema", "json_schema": {"name": "grade", "strict": True, "schema": GRADE_SCHEMA}}
    return {
        "description": "short questions with known answers: smollm2 answers, gemma3 grades (llm-rubric)",
        "prompts": ["Answer in a few words. {{question}}"],
        "providers": [provider("smollm2", answer_port, 48)],
        "defaultTest": {"options": {"provider": provider("gemma3", grade_port, 200, response_format=grade_format)}},
        "tests": [
            {
                "description": f"q{i:02d}",
                "vars": {"question": q, "answer": a},
                "assert": [
                    {"type": "llm-rubric", "metric": "correct", "value": RUBRIC},
                    {"type": "icontains", "metric": "contains", "value": "{{answer}}"},
                ],  # fmt: skip
            }
            for i, (q, a) in enumerate(QUESTIONS[:n], start=1)
        ],
        "sharing": False,
    }


def eval_command(n: int, work: Path, answer_port: int = 8101, grade_port: int = 8102) -> tuple[list[str], dict]:
    """`promptfoo eval` of this config (written into ``work``), results to ``work/results.json``, as argv and
    environment; each test is asked twice (``--repeat 2``: two epochs, as in the Inspect task). Exit 0: every test
    passed; 100: some failed (the results are written); anything else: a crash."""
    work.mkdir(parents=True, exist_ok=True)
    (work / "promptfooconfig.yaml").write_text(json.dumps(config(n, answer_port, grade_port), indent=1))
    env = {
        **os.environ,
        "PROMPTFOO_DISABLE_TELEMETRY": "1",
        "PROMPTFOO_DISABLE_UPDATE": "1",
        "PROMPTFOO_DISABLE_SHARING": "1",
        "PROMPTFOO_CACHE_ENABLED": "false",
        "PROMPTFOO_CONFIG_DIR": str(work / ".promptfoo"),
        "OPENAI_API_KEY": "local",  # else promptfoo looks for cloud credentials to pick default graders
        "METADATA_SERVER_DETECTION": "none",
        "HTTPS_PROXY": "http://127.0.0.1:9",  # whatever still reaches for the internet fails at once, on loopback
        "NO_PROXY": "127.0.0.1,localhost",
        "REQUEST_TIMEOUT_MS": "900000",
    }
    argv = [str(PROMPTFOO), "eval", "-c", str(work / "promptfooconfig.yaml"), "-o", str(work / "results.json"),
            "--no-cache", "--no-table", "--no-progress-bar", "--no-share", "--max-concurrency", "4",
            "--repeat", "2"]  # fmt: skip
    return argv, env


if __name__ == "__main__":  # python tests/promptfoo_task.py N OUT.json, from the repository root
    n, out = int(sys.argv[1]), Path(sys.argv[2])
    with tempfile.TemporaryDirectory() as tmp:
        argv, env = eval_command(n, Path(tmp))
        r = subprocess.run(argv, env=env)
        if r.returncode not in (0, 100):
            sys.exit(f"promptfoo eval failed (exit {r.returncode})")
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_bytes((Path(tmp) / "results.json").read_bytes())
        print(out)
