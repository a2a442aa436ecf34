"""Rerun agreement on two hand-made run directories whose differences are known."""

from __future__ import annotations

import json

import pytest

from vocab import rerun
from vocab.records import JsonlWriter, RunDirError, load_run

CELLS = ["w__c", "w__w"]
PASS = {str(i): "PASSED" for i in range(1, 13)}
FAIL = {**PASS, "2": "FAILED"}


def fingerprint(prompt="p" * 64):
    return {
        "rubric": {"version": "1.0", "hash": "r" * 64},
        "prompts": {"critic": prompt, "writer": "w" * 64, "version": "1.0"},
        "models": {"w": {"asset": "a"}, "c": {"asset": "b"}},
        "cells": CELLS,
        "levels_sha256": "x",
        "loop": {"max_attempts": 3, "writer_max_tokens": 200, "critic_max_tokens": 768, "seed_word_in_scope": False},
    }


def level(n, words=("car", "law", "war")):
    return {"level": n, "tier": 1, "seed_word": "crawl", "words": list(words), "settings": {}}


def attempt(cell, lv, n, sentence, checks):
    w, c = cell.split("__")
    verdict = "PASSED" if all(v == "PASSED" for v in checks.values()) else "FAILED"
    return {
        "run_id": "r",
        "cell": cell,
        "writer": w,
        "critic": c,
        "level": lv,
        "tier": 1,
        "attempt": n,
        "sentence": sentence,
        "answer_key": ["car", "law", "war"],
        "checks": checks,
        "verdict": verdict,
    }


def error(cell, lv, n, role, kind):
    return {
        "run_id": "r",
        "cell": cell,
        "level": lv,
        "attempt": n,
        "role": role,
        "kind": kind,
        "message": "m",
        "time": "t",
        "usage": None,
    }


def write_run(d, levels, attempts, errors, fp=None):
    d.mkdir()
    manifest = {
        "run_id": d.name,
        "cells": CELLS,
        "loop": {"max_attempts": 3},
        "status": "complete",
        "fingerprint": fp or fingerprint(),
        "design": {"levels": [lv["level"] for lv in levels]},
    }
    (d / "manifest.json").write_text(json.dumps(manifest))
    for name, rows in [("levels.jsonl", levels), ("errors.jsonl", errors)] + [
        (f"results_{c}.jsonl", [a for a in attempts if a["cell"] == c]) for c in CELLS
    ]:
        w = JsonlWriter(d / name)
        for r in rows:
            w.write(r)
        w.close()
    return load_run(d)


@pytest.fixture
def pair(tmp_path):
    """Level 1: identical in both cells. Level 2 (w__c): the writer's second sentence differs, so the rerun
    passes on attempt 2 where the run went on to a Hard FAIL. Level 3 (w__c): same sentence, one verdict
    differs. Level 3 (w__w): the same truncation in both. Level 4 is not in the rerun."""
    levels = [level(1), level(2), level(3), level(4)]
    same = [attempt(c, 1, 1, "A car.", PASS) for c in CELLS]
    run_att = [
        *same,
        attempt("w__c", 2, 1, "x", FAIL),
        attempt("w__c", 2, 2, "y", FAIL),
        attempt("w__c", 2, 3, "z", FAIL),
        attempt("w__c", 3, 1, "s", FAIL),
        attempt("w__c", 3, 2, "s2", PASS),
        attempt("w__w", 2, 1, "q", PASS),
        attempt("w__c", 4, 1, "only", PASS),
    ]
    re_att = [
        *same,
        attempt("w__c", 2, 1, "x", FAIL),
        attempt("w__c", 2, 2, "y-other", PASS),
        attempt("w__c", 3, 1, "s", PASS),
        attempt("w__w", 2, 1, "q", PASS),
    ]
    trunc = [error("w__w", 3, 1, "writer", "truncated")]
    a = write_run(tmp_path / "run", levels, run_att, trunc)
    b = write_run(tmp_path / "rerun", levels[:3], re_att, trunc)
    return a, b


def test_attempts_and_levels_agree_where_the_calls_did(pair):
    a, b = pair
    att = rerun.attempt_agreement(a, b).set_index(["cell", "level", "attempt"])
    assert 4 not in att.index.get_level_values("level")  # only the rerun's levels
    assert att.loc[("w__c", 1, 1), "same"] and att.loc[("w__w", 3, 1), "same"]  # the truncation reproduced
    assert not att.loc[("w__c", 2, 2), "writer_same"] and not att.loc[("w__c", 2, 2), "same"]
    assert att.loc[("w__c", 3, 1), "writer_same"] and not att.loc[("w__c", 3, 1), "critic_same"]
    assert not att.loc[("w__c", 2, 3), "in_rerun"] and not att.loc[("w__c", 2, 3), "same"]  # only the run reached it
    lev = rerun.level_agreement(a, b).set_index(["cell", "level"])
    assert lev.same.to_dict() == {
        ("w__c", 1): True,
        ("w__c", 2): False,
        ("w__c", 3): False,
        ("w__w", 1): True,
        ("w__w", 2): True,
        ("w__w", 3): True,
    }
    assert lev.loc[("w__c", 2), ["status_run", "status_rerun"]].tolist() == ["HARD_FAIL", "PASSED"]
    s = rerun.summary(a, b).set_index("cell")
    # 9 attempts reached, 2 by one run only; 6 with a result in both; identical: 4 results and the truncation
    assert s.loc["all", "attempts"] == 9 and s.loc["all", "only_one_run"] == 2
    assert s.loc["all", "attempt_same"] == pytest.approx(5 / 9)
    assert s.loc["all", "writer_same"] == pytest.approx(5 / 6) and s.loc["all", "critic_same"] == pytest.approx(4 / 6)
    assert s.loc["all", "level_same"] == pytest.approx(4 / 6) and s.loc["w__w", "level_same"] == 1.0
    div = rerun.first_divergence(a, b)
    assert div.to_dict(orient="records") == [
        {"cell": "w__c", "level": 2, "attempt": 2, "diverged": "writer"},
        {"cell": "w__c", "level": 3, "attempt": 1, "diverged": "critic"},
    ]


def test_a_rerun_made_otherwise_is_refused(tmp_path):
    a = write_run(tmp_path / "run", [level(1)], [], [])
    b = write_run(tmp_path / "other-prompt", [level(1)], [], [], fingerprint(prompt="q" * 64))
    with pytest.raises(RunDirError, match="not a rerun .* prompts differ"):
        rerun.summary(a, b)
    c = write_run(tmp_path / "other-words", [level(1, ("cat", "act", "tac"))], [], [])
    with pytest.raises(RunDirError, match="level 1 is not the run's level 1"):
        rerun.attempt_agreement(a, c)
    d = write_run(tmp_path / "unfinished", [level(1)], [attempt("w__c", 1, 1, "s", FAIL)], [])
    with pytest.raises(RunDirError, match="pending"):
        rerun.summary(a, d)


def test_duplicate_requests_inside_one_run(tmp_path):
    atts = [
        attempt("w__c", 1, 1, "same", FAIL),
        attempt("w__w", 1, 1, "same", FAIL),
        attempt("w__c", 2, 1, "one", FAIL),
        attempt("w__w", 2, 1, "two", FAIL),
        attempt("w__c", 3, 1, "alone", FAIL),
        attempt("w__c", 1, 2, "later", FAIL),
    ]
    run = write_run(tmp_path / "run", [level(1), level(2), level(3)], atts, [])
    d = rerun.duplicate_requests(run)
    assert d.to_dict(orient="records") == [{"writer": "w", "levels": 2, "identical": 0.5}]
