"""The loop's logic with a stand-in model at the vocab.serving.client boundary, and resume on a run directory."""

from __future__ import annotations

import asyncio
import dataclasses
import json

import pytest

from vocab.cli import main
from vocab.config import LoopConfig, load_config
from vocab.levels import Level
from vocab.loop import run_design, run_level
from vocab.records import RunDirError, load_run, read_jsonl
from vocab.serving.client import CallBudget

from .standin import Fail, StandInModel, grade, writer_of

LEVEL = Level.from_dict(
    {
        "level": 7,
        "tier": 1,
        "seed_word": "stones",
        "words": ["stone", "notes"],
        "settings": {"require_seed_word": False, "max_sentence_words": 16},
    }
)
LOOP = LoopConfig(writers=("w",), critics=("c",), levels="1-3")


class Collect:
    def __init__(self):
        self.results, self.errors = [], []

    def result(self, cell, row):
        self.results.append(row)

    def error(self, cell, row):
        self.errors.append(row)

    def level_done(self, cell):
        pass


def run_one(writer, critic, logged=(), loop=LOOP):
    sink = Collect()
    status = asyncio.run(run_level("r", LEVEL, writer, critic, loop, list(logged), sink))
    return status, sink


def writer():
    return StandInModel("w", lambda role, m, n: writer_of(f"Stone notes, take {n}.", ["stone", "notes"]))


def test_pass_on_attempt_2_with_feedback():
    critic = StandInModel("c", lambda role, m, n: grade(c9="no context") if n == 1 else grade())
    w = writer()
    status, sink = run_one(w, critic)
    assert status == "PASSED"
    assert [r["attempt"] for r in sink.results] == [1, 2]
    assert [r["verdict"] for r in sink.results] == ["FAILED", "PASSED"]
    retry_prompt = w.calls[1]["messages"][-1]["content"]
    assert "check 9 (contextual richness): no context" in retry_prompt
    assert "Stone notes, take 1." in retry_prompt
    assert sink.results[0]["checks"]["9"] == "FAILED" and sink.results[0]["reasons"]["9"] == "no context"


def test_hard_fail_after_three():
    status, sink = run_one(writer(), StandInModel("c", lambda role, m, n: grade(c11="ungrammatical")))
    assert status == "HARD_FAIL" and [r["attempt"] for r in sink.results] == [1, 2, 3]
    assert not sink.errors


def test_check_1_is_out_of_scope_by_default():
    status, _ = run_one(writer(), StandInModel("c", lambda role, m, n: grade(c1="no seed word")))
    assert status == "PASSED"
    loop = dataclasses.replace(LOOP, seed_word_in_scope=True)
    status, _ = run_one(writer(), StandInModel("c", lambda role, m, n: grade(c1="no seed word")), loop=loop)
    assert status == "HARD_FAIL"


def test_error_at_attempt_2_abandons_and_is_logged():
    def critic_answer(role, m, n):
        if n == 2:
            raise Fail("connection reset by peer")
        return grade(c9="vague")

    status, sink = run_one(writer(), StandInModel("c", critic_answer))
    assert status == "ABANDONED"
    assert [r["attempt"] for r in sink.results] == [1]
    (err,) = sink.errors
    assert (err["attempt"], err["role"], err["kind"]) == (2, "critic", "connection")
    assert err["cell"] == "w__c" and err["level"] == 7 and "reset" in err["message"]


def test_malformed_critic_answer_is_an_error_not_a_fail():
    status, sink = run_one(writer(), StandInModel("c", lambda role, m, n: "PASSED, looks great!"))
    assert status == "ABANDONED" and not sink.results
    assert sink.errors[0]["kind"] == "malformed" and sink.errors[0]["role"] == "critic"


def test_critic_answer_missing_a_check_is_a_schema_error():
    bad = grade()
    del bad["12"]
    status, sink = run_one(writer(), StandInModel("c", lambda role, m, n: bad))
    assert status == "ABANDONED" and sink.errors[0]["kind"] == "schema"


def test_writer_error_is_logged_with_role_writer():
    def w(role, m, n):
        raise Fail("refused")

    status, sink = run_one(StandInModel("w", w), StandInModel("c", lambda *a: grade()))
    assert status == "ABANDONED" and sink.errors[0]["role"] == "writer" and sink.errors[0]["attempt"] == 1


def test_resume_continues_from_the_next_attempt():
    critic = StandInModel("c", lambda role, m, n: grade(c9="vague"))
    _, first = run_one(writer(), critic)
    logged = first.results[:1]  # as if the run stopped after attempt 1
    w = writer()
    status, sink = run_one(w, StandInModel("c", lambda role, m, n: grade()), logged=logged)
    assert status == "PASSED" and [r["attempt"] for r in sink.results] == [2]
    assert "Stone notes, take 1." in w.calls[0]["messages"][-1]["content"]  # feedback from the log


# --- run_design on a run directory -------------------------------------------------------------------


class StandInClients:
    """The part of vocab.serving.client.Clients that run_design uses, with stand-in models."""

    def __init__(self, models: dict, budget: CallBudget):
        self.models, self.budget = models, budget

    def get(self, name):
        m = self.models[name]
        m.model = dataclasses.make_dataclass("M", [("sampling", object, None), ("concurrency", int, 2)])()
        return m


@pytest.fixture
def cfg(tmp_path):
    p = tmp_path / "c.toml"
    p.write_text(
        '[models.w]\nkind = "endpoint"\nbase_url = "http://127.0.0.1:9/v1"\n'
        '[models.c]\nkind = "endpoint"\nbase_url = "http://127.0.0.1:9/v1"\n'
    )
    return load_config(p)


def design_run(cfg, run_dir, critic_fn, budget=100, retry=False, loop=LOOP):
    b = CallBudget(budget)
    clients = StandInClients(
        {
            "w": StandInModel("w", lambda r, m, n: writer_of("Stone.", ["stone"]), b),
            "c": StandInModel("c", critic_fn, b),
        },
        b,
    )
    return asyncio.run(run_design(cfg, loop, run_dir, clients, retry_abandoned=retry, progress=False))


def test_design_run_writes_a_complete_run_directory(cfg, tmp_path):
    run_dir = tmp_path / "run"
    s = design_run(cfg, run_dir, lambda r, m, n: grade(c9="vague") if n % 2 else grade())
    assert s.statuses["w__c"].get("PENDING") is None
    m = json.loads((run_dir / "manifest.json").read_text())
    assert m["status"] == "complete" and m["cells"] == ["w__c"] and m["rubric"]["hash"]
    assert [lv["level"] for lv in read_jsonl(run_dir / "levels.jsonl")] == [1, 2, 3]
    run = load_run(run_dir)
    assert set(run.outcomes.status) <= {"PASSED", "HARD_FAIL"} and len(run.outcomes) == 3
    assert len(run.attempts) == len(read_jsonl(run_dir / "results_w__c.jsonl"))


def test_budget_exhaustion_abandons_and_retry_completes(cfg, tmp_path):
    run_dir = tmp_path / "run"
    s = design_run(cfg, run_dir, lambda r, m, n: grade(), budget=3)  # 1.5 attempts' worth of calls
    assert s.statuses["w__c"]["ABANDONED"] >= 1
    errs = read_jsonl(run_dir / "errors.jsonl")
    assert errs and {e["kind"] for e in errs} == {"budget"}
    # without --retry-abandoned nothing is redone
    s2 = design_run(cfg, run_dir, lambda r, m, n: grade())
    assert s2.attempts_new == 0
    s3 = design_run(cfg, run_dir, lambda r, m, n: grade(), retry=True)
    assert s3.statuses["w__c"] == {"PASSED": 3}
    resumed = json.loads((run_dir / "manifest.json").read_text())["resumed"]
    assert len(resumed) == 2 and all({"time", "git_commit", "versions"} <= set(r) for r in resumed)
    rows = read_jsonl(run_dir / "results_w__c.jsonl")
    assert sorted((r["level"], r["attempt"]) for r in rows) == [(1, 1), (2, 1), (3, 1)]  # no duplicates


def test_retry_abandoned_asks_again_only_what_the_infrastructure_lost(cfg, tmp_path):
    run_dir = tmp_path / "run"
    answers = iter([Fail("connection reset"), "not json at all"])

    def first(r, m, n):  # one level lost to a dropped connection, one to the model's malformed answer, one passes
        a = next(answers, None)
        if isinstance(a, Exception):
            raise a
        return a if a is not None else grade()

    s = design_run(cfg, run_dir, first)
    assert s.statuses["w__c"] == {"ABANDONED": 2, "PASSED": 1}
    s2 = design_run(cfg, run_dir, lambda r, m, n: grade(), retry=True)
    assert s2.attempts_new == 1 and s2.errors_new == 0  # the connection's level; the malformed answer is kept
    assert s2.kept_abandoned == 1 and "1 levels abandoned by the model's own answer" in s2.text()
    run = load_run(run_dir)
    assert sorted(run.outcomes.status) == ["ABANDONED", "PASSED", "PASSED"]
    assert list(run.outcomes[run.outcomes.status == "ABANDONED"].error_kind) == ["malformed"]
    assert sorted(e["kind"] for e in read_jsonl(run_dir / "errors.jsonl")) == ["connection", "malformed"]


def test_an_incompatible_config_is_refused(cfg, tmp_path):
    run_dir = tmp_path / "run"
    design_run(cfg, run_dir, lambda r, m, n: grade())
    with pytest.raises(RunDirError, match="different setup"):
        design_run(cfg, run_dir, lambda r, m, n: grade(), loop=dataclasses.replace(LOOP, max_attempts=5))
    with pytest.raises(RunDirError, match="different setup"):
        design_run(cfg, run_dir, lambda r, m, n: grade(), loop=dataclasses.replace(LOOP, levels="1-4"))


def test_a_non_run_directory_is_refused(cfg, tmp_path):
    d = tmp_path / "notes"
    d.mkdir()
    (d / "x.txt").write_text("mine")
    with pytest.raises(RunDirError, match="not a run directory"):
        design_run(cfg, d, lambda r, m, n: grade())
    assert (d / "x.txt").read_text() == "mine"


def test_a_file_as_run_dir_is_one_line_and_exit_2(cfg, tmp_path, capsys):
    f = tmp_path / "notes.txt"
    f.write_text("mine")
    with pytest.raises(RunDirError, match="is a file"):
        design_run(cfg, f, lambda r, m, n: grade())
    cfg_path = tmp_path / "c.toml"  # the fixture's config, run through the command line
    assert main(["run", "--config", str(cfg_path), "--run-dir", str(f), "--levels", "1-3"]) == 2
    err = capsys.readouterr().err
    assert "is a file" in err and len(err.strip().splitlines()) == 1
    assert f.read_text() == "mine"


def test_unterminated_last_line_is_ignored_and_repaired(cfg, tmp_path):
    run_dir = tmp_path / "run"
    design_run(cfg, run_dir, lambda r, m, n: grade(c9="x"), loop=dataclasses.replace(LOOP, max_attempts=1))
    p = run_dir / "results_w__c.jsonl"
    n = len(read_jsonl(p))
    with p.open("a") as f:
        f.write('{"run_id": "r", "cell": "w__c", "lev')  # a killed writer's half line
    assert len(read_jsonl(p)) == n
    design_run(cfg, run_dir, lambda r, m, n: grade(), loop=dataclasses.replace(LOOP, max_attempts=1))
    assert len(read_jsonl(p)) == n and p.read_text().endswith("\n")


def test_sigterm_marks_the_run_interrupted_and_exits(tmp_path):
    import signal
    import subprocess
    import sys
    import time

    from .fault_server import FaultServer

    with FaultServer(stall_s=30) as server:
        cfg = tmp_path / "c.toml"
        cfg.write_text(
            f'[models.w]\nkind = "endpoint"\nmodel = "stall"\nbase_url = "{server.base_url}"\n'
            '[loop]\nwriters = ["w"]\ncritics = ["w"]\nlevels = "1-2"\n'
        )
        run_dir = tmp_path / "run"
        p = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "vocab.cli",
                "run",
                "--config",
                str(cfg),
                "--run-dir",
                str(run_dir),
                "--no-progress",
            ],
            stderr=subprocess.PIPE,
            text=True,
        )
        deadline = time.monotonic() + 30
        while not server.requests and time.monotonic() < deadline:
            time.sleep(0.1)
        assert server.requests, "the run never called the model"
        p.send_signal(signal.SIGTERM)
        _, err = p.communicate(timeout=20)
    assert p.returncode == 130 and "interrupted" in err
    assert json.loads((run_dir / "manifest.json").read_text())["status"] == "interrupted"


def test_loop_overrides_validate_the_design_before_anything_runs(cfg):
    from vocab.config import ConfigError, loop_with_overrides

    loop = loop_with_overrides(cfg, writers="w", critics="c", levels="1-3", max_attempts=2)
    assert loop.writers == ("w",) and loop.critics == ("c",) and loop.levels == "1-3" and loop.max_attempts == 2
    assert loop_with_overrides(cfg, tiers="1-2", per_tier=3).levels is None  # tiers replace a level range
    for bad in ({"levels": "0-3"}, {"tiers": "1-40"}, {"per_tier": 0}, {"writers": "nobody"}):
        with pytest.raises(ConfigError):
            loop_with_overrides(cfg, **bad)


def test_the_demo_plans_its_notebooks_by_what_the_run_has(tmp_path):
    from vocab.demo import DEMO_NOTEBOOKS, notebook_plan

    full = notebook_plan(tmp_path, ["a", "b"], pending=0)
    assert [n for n, p, _ in full] == list(DEMO_NOTEBOOKS) and all(p is not None for _, p, _ in full)
    assert dict((n, p) for n, p, _ in full)["03_correct"]["raters"] == "a,b"
    one = {n: p for n, p, _ in notebook_plan(tmp_path, ["a"], pending=0)}
    assert one["04_agreement"] is None and one["03_correct"] is not None  # kappa needs two raters
    pending = {n: p for n, p, _ in notebook_plan(tmp_path, [], pending=3)}
    assert pending["02_sample"] is None and pending["01_run"] == {"run_dir": str(tmp_path)}
