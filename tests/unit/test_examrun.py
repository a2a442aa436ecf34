"""The exam runner with stand-in judges at the client boundary: items, budget, resume, the probe, tables."""

from __future__ import annotations

import asyncio
import json
from types import SimpleNamespace

import pandas as pd
import pytest

from tests.nbtext import outputs_text
from tests.unit.written_levels import v1_level, v1_levels
from vocab.cli import main
from vocab.config import Sampling
from vocab.exam import jobs, planted, registry, tables, tournament
from vocab.exam import run as examrun
from vocab.records import JsonlWriter, read_jsonl
from vocab.serving.client import CallBudget

from .standin import Fail, StandInModel, grade

GOOD = "Once the sun had set, we could see stars we had never seen before."


def make_run(tmp_path):
    """A run with one critic-PASSED, script-clean answer (level 2, graded by critic b) and one bad one."""
    d = tmp_path / "run"
    d.mkdir()
    (d / "manifest.json").write_text(json.dumps({"run_id": "r", "cells": ["a__b"], "loop": {"max_attempts": 3}}))
    w = JsonlWriter(d / "levels.jsonl")
    levels = {n: v1_level(n) for n in (2, 11)}
    for lv in v1_levels().values():  # the design's levels; answers below for a few
        w.write(lv)
    w.close()
    w = JsonlWriter(d / "results_a__b.jsonl")
    for lv, sentence, key in ((levels[2], GOOD, ["set", "see", "seen"]), (levels[11], "car law", ["car"])):
        w.write(
            {
                "run_id": "r", "cell": "a__b", "writer": "a", "critic": "b", "level": lv["level"], "tier": 1,
                "attempt": 1, "seed_word": lv["seed_word"], "words": lv["words"], "settings": lv["settings"],
                "sentence": sentence, "answer_key": key, "checks": {str(i): "PASSED" for i in range(1, 13)},
                "reasons": {str(i): "" for i in range(1, 13)}, "verdict": "PASSED",
                "usage": {}, "started": "t", "finished": "t",
            }
        )  # fmt: skip
    w.close()
    return d


class FakeClients:
    def __init__(self, models: dict, max_calls: int = 10_000):
        self.budget = CallBudget(max_calls)
        self.models = {}
        for name, respond in models.items():
            m = StandInModel(name, respond, self.budget)
            m.model = SimpleNamespace(sampling=Sampling(temperature=0.0, seed=0))
            self.models[name] = m

    def get(self, name):
        return self.models[name]


def target_of(messages):
    """A judge that reads the sentence and fails check 2 when 'see' is missing: on target for the drop."""
    user = messages[1]["content"]
    sentence = next(line for line in user.splitlines() if line.startswith("Sentence: "))
    return grade(c2="the word see is missing") if " see " not in sentence else grade()


def entry_for(reg, kind, params, judges):
    metrics = examrun.PLANTED_METRICS if kind == "planted" else examrun.PAIRWISE_METRICS
    return registry.register(reg, f"{kind}-t", params, thresholds=examrun.THRESHOLDS, metrics=metrics, judges=judges)


def test_planted_exam_items_tables_and_resume(tmp_path):
    run = make_run(tmp_path)
    params = examrun.planted_params(run, ["b", "pass"], 2, 0, 100, True, 64)
    entry = entry_for(tmp_path / "reg.jsonl", "planted", params, ["b", "pass"])
    clients = FakeClients({"b": lambda r, m, n: target_of(m), "pass": lambda r, m, n: grade()})
    out = asyncio.run(examrun.run_exam("planted", run, entry, clients, ["b", "pass"], params))
    ex = examrun.load_exam(out)
    items, manifest = ex.items, ex.manifest
    assert manifest["status"] == "complete" and manifest["source_kinds"] == {"run": 1, "reference": 1}
    assert set(items.exam_id) == {"planted-t"} and set(items.entry_hash) == {entry["hash"]}
    assert len(items) == manifest["jobs"] and not items.duplicated(["judge", "item_id"]).any()
    table = tables.planted_table(items).set_index(["judge", "target"])
    assert table.loc[("pass", "all"), "verdict_recall"] == 0.0
    assert table.loc[("pass", "all"), "false_positive_rate"] == 0.0
    # the run source's baseline, judged by its own critic b under the run's seed, reproduces PASSED
    assert table.loc[("b", "all"), "n_baselines"] == 1 and table.loc[("b", "all"), "baseline_reproduced"] == 1.0
    assert table.loc[("pass", "all"), "n_baselines"] == 0  # 'pass' did not grade the source in the run
    drop = items[(items.judge == "b") & (items.target == "2") & (items.source_id.str.contains("a__b"))].iloc[0]
    assert drop.checks["2"] == "FAILED" and "see" in drop.sentence.replace(" see ", "")  # 'seen' stays
    assert tables._names_edit(drop.to_dict())
    # the skipped defects are recorded with their reason
    assert set(ex.skipped.why) == {"no mechanical edit"}
    # degenerate judges on the same items: always-FAIL catches everything and fails every control
    deg = tables.planted_degenerate(items).set_index("judge")
    assert deg.loc["always-FAIL", "verdict_recall"] == 1.0 and deg.loc["always-FAIL", "false_positive_rate"] == 1.0
    assert deg.loc["always-PASS", "on_target_recall"] == 0.0
    # a rerun asks nothing again
    calls = sum(len(m.calls) for m in clients.models.values())
    asyncio.run(examrun.run_exam("planted", run, entry, clients, ["b", "pass"], params))
    assert sum(len(m.calls) for m in clients.models.values()) == calls
    assert len(read_jsonl(out / "items.jsonl")) == len(items)


def test_budget_skips_are_recorded_and_the_exam_is_incomplete(tmp_path):
    run = make_run(tmp_path)
    params = examrun.planted_params(run, ["pass"], 2, 0, 5, True, 64)
    entry = entry_for(tmp_path / "reg.jsonl", "planted", params, ["pass"])
    clients = FakeClients({"pass": lambda r, m, n: grade()}, max_calls=5)
    out = asyncio.run(examrun.run_exam("planted", run, entry, clients, ["pass"], params))
    m = json.loads((out / "exam.json").read_text())
    assert m["counts"]["items"] == 5 and m["counts"]["last_run"]["answered"] == 5 and m["status"] == "incomplete"
    budget = [s for s in read_jsonl(out / "skipped.jsonl") if s["why"] == "budget"]
    assert len(budget) == m["jobs"] - 5 == m["counts"]["budget_skipped"]
    # a rerun of the same exam does not get a fresh budget: the 5 calls already made count
    clients = FakeClients({"pass": lambda r, m, n: grade()}, max_calls=5)
    asyncio.run(examrun.run_exam("planted", run, entry, clients, ["pass"], params))
    assert clients.models["pass"].calls == [] and len(read_jsonl(out / "items.jsonl")) == 5
    assert json.loads((out / "exam.json").read_text())["counts"]["budget_skipped"] == m["jobs"] - 5


def test_a_judges_own_failed_answer_is_final_and_a_lost_call_is_asked_again(tmp_path):
    run = make_run(tmp_path)
    params = examrun.planted_params(run, ["j"], 2, 0, 1000, True, 64)
    entry = entry_for(tmp_path / "reg.jsonl", "planted", params, ["j"])
    first = iter([Fail("connection reset"), "not json at all"])

    def flaky(r, m, n):  # the first call lost to the connection, the second a malformed answer, the rest good
        a = next(first, None)
        if isinstance(a, Exception):
            raise a
        return a if a is not None else grade()

    out = asyncio.run(examrun.run_exam("planted", run, entry, FakeClients({"j": flaky}), ["j"], params))
    m = json.loads((out / "exam.json").read_text())
    assert m["status"] == "incomplete" and m["counts"]["missing"] == 1 and m["counts"]["answer_errors"] == 1
    clients = FakeClients({"j": lambda r, m, n: grade()})
    asyncio.run(examrun.run_exam("planted", run, entry, clients, ["j"], params))
    m = json.loads((out / "exam.json").read_text())
    assert len(clients.models["j"].calls) == 1  # the lost call only; the malformed answer is not asked again
    assert m["status"] == "complete" and m["counts"]["missing"] == 0 and m["counts"]["answer_errors"] == 1
    assert m["counts"]["items"] == m["jobs"] - 1


def test_pairwise_exam_metrics_and_determinism_probe(tmp_path):
    run = make_run(tmp_path)
    params = examrun.pairwise_params(run, ["first", "flaky"], 3, 0, 1000, True)
    entry = entry_for(tmp_path / "reg.jsonl", "pairwise", params, ["first", "flaky"])

    def first(role, messages, n):
        label = "A" if "Answer A:" in messages[1]["content"] else "1"
        return {"reason": "", "winner": label}

    clients = FakeClients({"first": first, "flaky": lambda r, m, n: {"reason": f"call {n}", "winner": "tie"}})
    out = asyncio.run(examrun.run_exam("pairwise", run, entry, clients, ["first", "flaky"], params))
    items = examrun.load_exam(out).items
    assert len(items) == 2 * 3 * 2 * 4  # judges x pairs x conditions x variants
    t = tables.pairwise_table(items).set_index("judge")
    assert t.loc["first", "balanced_accuracy"] == 0.5 and t.loc["first", "tie_rate"] == 0.0
    assert t.loc["first", "first_slot_rate"] == 1.0 and t.loc["first", "position_consistency"] == 0.0
    assert t.loc["flaky", "tie_rate"] == 1.0 and t.loc["flaky", "balanced_accuracy"] == 0.0
    assert t.loc["always-first", "balanced_accuracy"] == 0.5 and not t.qualifies.any()
    probe = tables.determinism(items)
    # null pairs: the two orders give byte-identical prompts, asked with the same seed
    assert len(probe) == 2 * 3 * 2 and set(probe.n) == {2}
    assert probe[probe.judge == "first"].identical.all()
    assert not probe[probe.judge == "flaky"].identical.any()  # its reason changes per call: reported


def test_cli_refuses_an_unregistered_exam_and_writes_nothing(tmp_path, capsys):
    run = make_run(tmp_path)
    reg = tmp_path / "reg.jsonl"
    rc = main(["exam", "planted", "--run-dir", str(run), "--registry", str(reg), "--judges", "smollm2"])
    err = capsys.readouterr().err
    assert rc == 2 and "no registered exam entry" in err and len(err.strip().splitlines()) == 1
    assert not (run / "exams").exists()
    args = ["--run-dir", str(run), "--registry", str(reg), "--judges", "smollm2", "--sources", "3"]
    assert main(["exam", "register", "planted", "--id", "p1", *args]) == 0
    capsys.readouterr()
    # registered with 3 sources; asking for 4 is refused
    rc = main(["exam", "planted", *args[:-1], "4"])
    assert rc == 2 and "no registered exam entry" in capsys.readouterr().err
    assert main(["exam", "register", "planted", "--id", "p1", *args]) == 2  # ids are not reused
    assert "already registered" in capsys.readouterr().err
    assert main(["exam", "planted", "--run-dir", str(tmp_path), "--registry", str(reg)]) == 2
    assert "not a run directory" in capsys.readouterr().err
    assert main(["exam", "planted", *args, "--judges", "nobody"]) == 2
    capsys.readouterr()
    # a registered pairwise exam on a pool of one answer: refused in one line, nothing judged
    few = ["--run-dir", str(run), "--registry", str(reg), "--judges", "smollm2", "--no-reference", "--pairs", "2"]
    assert main(["exam", "register", "pairwise", "--id", "w1", *few]) == 0
    capsys.readouterr()
    assert main(["exam", "pairwise", *few]) == 2
    err = capsys.readouterr().err
    assert "needs at least 2 answers" in err and len(err.strip().splitlines()) == 1
    assert not (run / "exams" / "w1" / "items.jsonl").exists()


def test_pool_has_reference_answers_only_when_asked(tmp_path):
    run = make_run(tmp_path)
    assert [s.kind for s in examrun.source_pool(run, False)] == ["run"]
    assert len(examrun.source_pool(run, True)) == 1 + len(planted.reference_answers(v1_levels()))


@pytest.mark.parametrize("base", [0, 7])
def test_identical_prompts_share_a_seed(base):
    m = [{"role": "user", "content": "x"}]
    assert jobs.prompt_seed(m, base) == jobs.prompt_seed(list(m), base)
    assert jobs.prompt_seed(m, base) != jobs.prompt_seed([{"role": "user", "content": "y"}], base)
    assert jobs.prompt_seed(m, None) is None


def test_notebook_05_reports_any_exam(tmp_path):
    """Notebook 05 runs on exams from stand-in judges: tables, probe and figure, with the registry checked."""
    from pathlib import Path

    from vocab.nb import execute

    run, reg = make_run(tmp_path), tmp_path / "reg.jsonl"
    pp = examrun.planted_params(run, ["b"], 2, 0, 100, True, 64)
    pe = entry_for(reg, "planted", pp, ["b"])
    wp = examrun.pairwise_params(run, ["b"], 2, 0, 100, True)
    we = entry_for(reg, "pairwise", wp, ["b"])

    def judge(role, messages, n):
        if "Answer A:" in messages[1]["content"] or "Answer 1:" in messages[1]["content"]:
            return {"reason": "", "winner": "tie"}
        return target_of(messages)

    clients = FakeClients({"b": judge})
    asyncio.run(examrun.run_exam("planted", run, pe, clients, ["b"], pp))
    asyncio.run(examrun.run_exam("pairwise", run, we, clients, ["b"], wp))
    nb = Path(__file__).resolve().parents[2] / "notebooks" / "05_exam.ipynb"
    params = {"run_dir": str(run), "planted_exam": pe["id"], "pairwise_exam": we["id"]}
    params |= {"registry_path": str(reg), "figures_dir": str(tmp_path / "fig")}
    execute(nb, params, tmp_path / "05.ipynb")
    assert sorted(p.name for p in (tmp_path / "fig").iterdir()) == ["05_exam.pdf", "05_exam.png"]
    text = outputs_text(tmp_path / "05.ipynb")  # what it printed: its source holds both phrases in f-strings
    assert "registry: 2 entries, chain intact" in text and "groups of identical requests; mismatches: 0" in text


def make_two_writer_run(tmp_path):
    """Writers a (long sentences) and b (two words) on levels 2, 11 and 16, each graded by critic a."""
    d = tmp_path / "run2"
    d.mkdir()
    (d / "manifest.json").write_text(
        json.dumps({"run_id": "r2", "cells": ["a__a", "b__a"], "loop": {"max_attempts": 3}})
    )
    levels = {n: v1_level(n) for n in (2, 11, 16)}
    w = JsonlWriter(d / "levels.jsonl")
    for lv in v1_levels().values():  # the design's levels; answers below for a few
        w.write(lv)
    w.close()
    for writer in ("a", "b"):
        w = JsonlWriter(d / f"results_{writer}__a.jsonl")
        for lv in levels.values():
            sentence = " ".join(["The", *lv["words"], "were", "all", "here."]) if writer == "a" else "Two words."
            w.write(
                {
                    "run_id": "r2", "cell": f"{writer}__a", "writer": writer, "critic": "a", "level": lv["level"],
                    "tier": 1, "attempt": 1, "seed_word": lv["seed_word"], "words": lv["words"],
                    "settings": lv["settings"], "sentence": sentence, "answer_key": lv["words"],
                    "checks": {}, "reasons": {}, "verdict": "FAILED", "usage": {}, "started": "t", "finished": "t",
                }
            )  # fmt: skip
        w.close()
    return d


def test_writer_tournament_ratings_and_biases(tmp_path):
    run = make_two_writer_run(tmp_path)
    params = tournament.tournament_params(run, ["longer", "first"], 3, 0, 1000, True)
    entry = registry.register(
        tmp_path / "reg.jsonl",
        "t",
        params,
        thresholds={},
        metrics=tournament.TOURNAMENT_METRICS,
        judges=["first", "longer"],
    )

    def longer(role, messages, n):
        lines = messages[1]["content"].splitlines()
        a = next(x for x in lines if x.startswith("Answer A: "))
        b = next(x for x in lines if x.startswith("Answer B: "))
        return {"reason": "", "winner": "A" if len(a.split()) > len(b.split()) else "B"}

    clients = FakeClients({"longer": longer, "first": lambda r, m, n: {"reason": "", "winner": "A"}})
    out = asyncio.run(examrun.run_exam("tournament", run, entry, clients, ["first", "longer"], params))
    items = examrun.load_exam(out).items
    refs = {s.level["level"] for s in planted.reference_answers(v1_levels())} & {2, 11, 16}
    n_pairs = 3 + 2 * len(refs)  # a vs b on 3 levels; the reference vs each writer where it has an answer
    assert len(items) == 2 * 2 * n_pairs  # judges x orders x pairs
    ratings, biases = tournament.tournament_table(items, n_boot=200)
    b = biases.set_index("judge")
    assert b.loc["longer", "prefers_longer"] == 1.0 and b.loc["longer", "position_consistency"] == 1.0
    assert b.loc["first", "first_slot_rate"] == 1.0 and b.loc["first", "position_consistency"] == 0.0
    r = ratings.set_index(["judge", "player"])
    for judge in ("first", "longer"):  # Elo is zero-sum: the ratings always add up to 1000 per player
        assert ratings[ratings.judge == judge].elo_forward.sum() == pytest.approx(1000 * 3)
    elo = r.loc["longer"].elo_forward  # the reference answers are longest, b's two words shortest
    assert elo["reference"] > elo["a"] > elo["b"]
    # the always-first judge splits every pair: every player scores exactly half its games
    assert (ratings[ratings.judge == "first"].score * 2 == ratings[ratings.judge == "first"].games).all()
    # 'longer' always beats b with a: no finite Bradley-Terry fit, reported rather than invented
    assert r.loc[("longer", "b"), "bt_note"] and pd.isna(r.loc[("longer", "b"), "bt_rating"])
