"""The blind sample, the blinding export, ratings validation, the script rater, the rater's prompt."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from vocab import prompts
from vocab.calibration import (
    KEY_COLUMNS,
    SHEET_COLUMNS,
    CalibrationError,
    draw_sample,
    import_ratings,
    read_sheet,
    script_ratings,
    validate_ratings,
    write_sample,
)
from vocab.sampling.sample import sheet_sha256

SETTINGS = {"require_seed_word": False, "max_sentence_words": 16}


def synthetic_attempts(seed=0, cells=("a__a", "a__b", "b__a", "b__b"), levels=30):
    rng = np.random.default_rng(seed)
    rows = []
    for cell in cells:
        for lv in range(1, levels + 1):
            for n in range(1, 4):
                passed = rng.random() < 0.4
                rows.append(
                    {
                        "cell": cell,
                        "level": lv,
                        "attempt": n,
                        "verdict": "PASSED" if passed else "FAILED",
                        "seed_word": "stones",
                        "words": ["stone", "notes"],
                        "settings": SETTINGS,
                        "sentence": f"Stone notes {lv} {n}.",
                        "answer_key": ["stone", "notes"],
                        "reasons": {"9": f"secret-reason-{cell}"},
                        "writer": cell.split("__")[0],
                    }
                )
                if passed:
                    break
    return pd.DataFrame(rows)


def test_piles_weights_and_columns():
    att = synthetic_attempts()
    s = draw_sample(att, per_pile=10, seed=0)
    assert list(s.key.columns) == KEY_COLUMNS and list(s.sheet.columns) == SHEET_COLUMNS
    counts = s.key.groupby(["cell", "pile"]).size()
    assert (counts == 10).all() and len(counts) == 8
    failed = s.key[s.key.pile == "failed"]
    assert not failed.duplicated(["cell", "level"]).any()  # distinct levels
    for r in failed.itertuples():
        n_failed = ((att.cell == r.cell) & (att.level == r.level) & (att.verdict == "FAILED")).sum()
        assert r.weight == n_failed and r.critic_verdict == "FAILED"
    assert (s.key[s.key.pile == "passed"].weight == 1).all()


def test_sheet_is_blind():
    s = draw_sample(synthetic_attempts(), per_pile=5, seed=0)
    text = s.sheet.to_json()
    for leak in ("a__a", "a__b", "b__a", "b__b", "secret-reason", "PASSED", "FAILED", "attempt", "writer"):
        assert leak not in text
    assert set(s.sheet.columns) == {"blind_id", "seed_word", "words", "settings", "sentence", "answer_key"}


def test_ids_and_order_carry_no_information():
    s = draw_sample(synthetic_attempts(), per_pile=10, seed=0)
    k = s.key
    by_id = k.sort_values("blind_id")
    assert not by_id.cell.is_monotonic_increasing and not by_id.pile.is_monotonic_increasing
    # the sheet's order, seen through the key: shuffled across cells and piles
    in_sheet_order = k.set_index("blind_id").loc[s.sheet.blind_id]
    assert (in_sheet_order.cell != in_sheet_order.cell.shift()).sum() > 20  # 80 rows, 4 cells: not 4 blocks
    assert (in_sheet_order.pile != in_sheet_order.pile.shift()).sum() > 20
    # and the key's own order is (cell, level, attempt): its row k says nothing about sheet row k
    assert k[["cell", "level", "attempt"]].equals(k.sort_values(["cell", "level", "attempt"])[["cell", "level",
                                                                                               "attempt"]])  # fmt: skip
    assert (k.blind_id.to_numpy() != s.sheet.blind_id.to_numpy()).mean() > 0.9


def test_same_seed_same_sample_and_disk_order_does_not_matter():
    att = synthetic_attempts()
    a = draw_sample(att, per_pile=10, seed=3)
    b = draw_sample(att.sample(frac=1, random_state=7), per_pile=10, seed=3)
    pd.testing.assert_frame_equal(a.key, b.key)
    pd.testing.assert_frame_equal(a.sheet, b.sheet)
    c = draw_sample(att, per_pile=10, seed=4)
    assert not a.key.equals(c.key)


def test_write_refuses_to_overwrite_another_sample(tmp_path):
    att = synthetic_attempts()
    write_sample(draw_sample(att, 5, 0), tmp_path)
    write_sample(draw_sample(att, 5, 0), tmp_path)  # the same sample again: fine
    with pytest.raises(CalibrationError, match="holds another sample"):
        write_sample(draw_sample(att, 5, 1), tmp_path)
    sheet = read_sheet(tmp_path)
    assert sheet.words.map(list).iloc[0] == ["stone", "notes"]
    assert json.loads((tmp_path / "calibration" / "blind_sheet.jsonl").read_text().splitlines()[0])["blind_id"]


def ratings_for(ids, value="PASSED"):
    return pd.DataFrame([{"blind_id": i, "c1": "", **{f"c{k}": value for k in range(2, 13)}} for i in ids])


def test_ratings_validation_lists_every_offending_row(tmp_path):
    ids = ["b1", "b2", "b3"]
    validate_ratings(ratings_for(ids), ids)
    bad = ratings_for(["b1", "b1", "b9"])
    bad.loc[0, "c5"] = "MAYBE"
    with pytest.raises(CalibrationError) as e:
        validate_ratings(bad, ids)
    msg = str(e.value)
    for part in ("repeated ids: b1", "unknown ids: b9", "not rated: b2, b3", "c5 is 'MAYBE'"):
        assert part in msg
    empty = ratings_for(ids)
    empty.loc[1, "c9"] = ""
    with pytest.raises(CalibrationError, match="c9"):
        validate_ratings(empty, ids)
    validate_ratings(empty, ids, allow_empty=True)


def test_import_writes_nothing_on_error(tmp_path):
    att = synthetic_attempts()
    write_sample(draw_sample(att, 3, 0), tmp_path)
    ids = list(read_sheet(tmp_path).blind_id)
    src = tmp_path / "mine.csv"
    ratings_for(ids[:-1]).to_csv(src, index=False)
    with pytest.raises(CalibrationError, match="not rated"):
        import_ratings(src, tmp_path, "human")
    assert not (tmp_path / "calibration" / "ratings_human.csv").exists()
    ratings_for(ids).to_csv(src, index=False)
    done = import_ratings(src, tmp_path, "human")
    assert len(pd.read_csv(done.path)) == len(ids)
    # a hand-made file names no sample: taken on its ids, and the import says the sample went unchecked
    assert not done.sample_checked and "could not be checked" in done.text()
    named = ratings_for(ids).assign(sample_sha256=sheet_sha256(tmp_path))
    named.to_csv(src, index=False)
    again = import_ratings(src, tmp_path, "human")
    assert again.sample_checked and again.unchanged and "could not be checked" not in again.text()


def test_script_rater_decides_2_and_3_and_leaves_judgment_empty():
    sheet = pd.DataFrame(
        [
            {
                "blind_id": "b1",
                "seed_word": "stones",
                "words": ["stone", "notes"],
                "settings": SETTINGS,
                "sentence": "The stone notes ring.",
                "answer_key": ["stone"],
            }
        ]
    )
    r = script_ratings(sheet).iloc[0]
    assert (r.c2, r.c3, r.c9, r.c11) == ("PASSED", "FAILED", "", "")
    validate_ratings(script_ratings(sheet), ["b1"], allow_empty=True)


def test_rater_prompt_holds_only_the_blind_fields_and_the_rubric():
    row = {
        "blind_id": "b123456",
        "seed_word": "stones",
        "words": ["stone", "notes"],
        "settings": SETTINGS,
        "sentence": "Stone notes ring.",
        "answer_key": ["stone", "notes"],
    }
    leaky = {
        **row,
        "cell": "smollm2__gemma3",
        "critic_verdict": "FAILED",
        "reasons": {"9": "LEAK"},
        "attempt": 3,
        "writer": "smollm2",
    }
    assert prompts.rater_messages(leaky) == prompts.rater_messages(row)
    text = json.dumps(prompts.rater_messages(row))
    for leak in ("smollm2", "gemma3", "LEAK", "b123456", "attempt 3", "critic"):
        assert leak not in text
    system, user = prompts.rater_messages(row)
    from vocab import rubric

    assert rubric.rubric_text() in system["content"]
    assert "Stone notes ring." in user["content"] and "stone, notes" in user["content"]


def test_llm_rater_sees_blind_rows_resumes_and_logs_errors(tmp_path):
    import asyncio

    from vocab.serving.client import MalformedOutput

    from .standin import StandInModel, grade

    write_sample(draw_sample(synthetic_attempts(), 3, 0), tmp_path)
    ids = list(read_sheet(tmp_path).blind_id)
    from vocab.calibration import rate_with_model

    flaky = {"n": 0}

    def answer(role, messages, n):
        text = json.dumps(messages)
        assert "a__b" not in text and "secret-reason" not in text
        flaky["n"] += 1
        if flaky["n"] == 2:
            raise MalformedOutput("not JSON")
        return grade(c9="vague")

    model = StandInModel("judge", answer)
    first = asyncio.run(rate_with_model(tmp_path, "judge", model))
    assert first.missing == 1 and not (tmp_path / "calibration" / "ratings_judge.csv").exists()
    errs = (tmp_path / "calibration" / "rater_judge_errors.jsonl").read_text().splitlines()
    assert json.loads(errs[0])["kind"] == "malformed"
    second = asyncio.run(rate_with_model(tmp_path, "judge", model))
    assert second.as_dict() == {"rated": len(ids), "missing": 0, "new": 1, "exhausted": 0} and second.complete
    table = pd.read_csv(tmp_path / "calibration" / "ratings_judge.csv", keep_default_na=False)
    assert sorted(table.blind_id) == sorted(ids) and set(table.c9) == {"FAILED"}


def test_llm_rater_retries_a_failed_row_with_a_new_seed_up_to_max_tries(tmp_path):
    import asyncio
    from types import SimpleNamespace

    from vocab.calibration import rate_with_model
    from vocab.config import Sampling
    from vocab.serving.client import TruncatedOutput

    from .standin import StandInModel, grade

    write_sample(draw_sample(synthetic_attempts(), 2, 0), tmp_path)
    seeds = []

    def respond(role, messages, n):
        row_sentence = messages[1]["content"]
        if row_sentence == target["content"]:
            seeds.append(model.calls[-1]["seed"])
            raise TruncatedOutput("finish_reason=length")
        return grade()

    sheet = read_sheet(tmp_path)
    from vocab import prompts as p

    target = p.rater_messages(sheet.iloc[0].to_dict())[1]
    model = StandInModel("judge", respond)
    model.model = SimpleNamespace(sampling=Sampling(seed=0))
    results = [asyncio.run(rate_with_model(tmp_path, "judge", model, max_tries=3)) for _ in range(4)]
    assert [r.missing for r in results] == [1, 1, 1, 1]
    assert results[-1].exhausted == 1 and len(seeds) == 3 == len(set(seeds))  # 3 tries, 3 seeds, then stop
    assert len((tmp_path / "calibration" / "rater_judge_errors.jsonl").read_text().splitlines()) == 3


def test_correction_table_recovers_a_planted_critic():
    """A synthetic run where the truth is known: the rater is perfect, the critic has fixed q1 and q0."""
    from vocab.estimates import comparisons, correction_table, variants

    rng = np.random.default_rng(5)
    rows, truth = [], {}
    for cell, (theta, q1, q0) in {
        "a__a": (0.7, 0.9, 0.6),
        "a__b": (0.7, 0.5, 0.9),
        "b__a": (0.3, 0.8, 0.8),
        "b__b": (0.3, 0.9, 0.3),
    }.items():
        good = rng.random(4000) < theta
        passed = np.where(good, rng.random(4000) < q1, rng.random(4000) > q0)
        for i, (g, pz) in enumerate(zip(good, passed, strict=True)):
            rows.append({"cell": cell, "level": i, "attempt": 1, "verdict": "PASSED" if pz else "FAILED", "good": g})
            truth[(cell, i)] = g
    att = pd.DataFrame(rows)
    # a large sample so the estimate is tight; the failed pile's weights are 1 (one attempt per level)
    picked = []
    for cell, g in att.groupby("cell"):
        for pile, verdict in (("passed", "PASSED"), ("failed", "FAILED")):
            sub = g[g.verdict == verdict].head(400)
            picked += [
                {
                    "blind_id": f"{cell}-{r.level}",
                    "cell": cell,
                    "level": r.level,
                    "attempt": 1,
                    "critic_verdict": verdict,
                    "pile": pile,
                    "weight": 1,
                }
                for r in sub.itertuples()
            ]
    key = pd.DataFrame(picked)
    perfect = pd.DataFrame(
        [
            {
                "blind_id": r.blind_id,
                **{f"c{i}": "PASSED" if truth[(r.cell, r.level)] else "FAILED" for i in range(1, 13)},
            }
            for r in key.itertuples()
        ]
    )
    table = correction_table(att, key, variants({"oracle": perfect}, None), n_boot=300, seed=0)
    assert list(table.rater.unique()) == ["oracle"] and len(table) == 4
    for r in table.itertuples():
        true_theta = att[att.cell == r.cell].good.mean()
        assert abs(r.theta - true_theta) < 0.04, r
        assert r.ci_low <= r.theta <= r.ci_high
    fid = correction_table(att, key, variants({"oracle": perfect}, None), n_boot=2000, seed=0, interval="fiducial")
    pd.testing.assert_series_equal(fid.theta, table.theta)  # same estimate, another interval
    assert ((fid.ci_low <= fid.theta) & (fid.theta <= fid.ci_high)).all() and (fid.ci_high > fid.ci_low).all()
    t = table.set_index("cell")
    assert t.loc["a__b", "q0"] > 0.8 and t.loc["b__b", "q0"] < 0.45  # the planted specificities show
    # writer a (theta 0.7) above writer b (0.3) under either critic, resolved: the rank sets split 1-2 and 3-4
    found = comparisons(att, key, variants({"oracle": perfect}, None), n_boot=1000, seed=0)["oracle"]
    ranks = found.ranks.set_index("cell")
    assert {c: (r.rank_low, r.rank_high) for c, r in ranks.iterrows()} == {
        "a__a": (1, 2), "a__b": (1, 2), "b__a": (3, 4), "b__b": (3, 4)}  # fmt: skip
    gaps = found.self_preference.set_index("writer")
    assert set(gaps.index) == {"a", "b"} and gaps.cross_critic.to_dict() == {"a": "a__b", "b": "b__a"}
    # same writer, same true rate under both critics: the corrected gap holds 0; the raw gap is the critics' own
    # (writer a: critic a passes 0.7·0.9 + 0.3·0.4 = 0.75, critic b 0.7·0.5 + 0.3·0.1 = 0.38)
    assert ((gaps.ci_low <= 0) & (gaps.ci_high >= 0)).all()
    assert gaps.raw_gap["a"] == pytest.approx(0.75 - 0.38, abs=0.03)
    assert gaps.leniency_ci_low["a"] > 0.25  # critic a inflates writer a far more than critic b: resolved


def test_script_variant_replaces_checks_2_and_3():
    from vocab.calibration import rater_passes

    human = pd.DataFrame([{"blind_id": "x", **{f"c{i}": "PASSED" for i in range(1, 13)}}])
    human.loc[0, "c3"] = "FAILED"
    script = pd.DataFrame([{"blind_id": "x", "c2": "PASSED", "c3": "PASSED"}])
    assert not rater_passes(human)["x"] and rater_passes(human, script)["x"]


def _ratings(fail_map: dict[str, list[str]], ids):
    return pd.DataFrame(
        [
            {
                "blind_id": b,
                **{f"c{i}": ("FAILED" if f"c{i}" in fail_map.get(b, []) else "PASSED") for i in range(1, 13)},
            }
            for b in ids
        ]
    )


def test_agreement_tables():
    from vocab.estimates import agreement_table, checks_table, kappa_table, script_adjudication
    from vocab.stats import cohens_kappa

    ids = [f"b{i}" for i in range(8)]
    human = _ratings({"b0": ["c2"], "b1": ["c9"], "b2": ["c9"], "b3": ["c3"]}, ids)
    llm = _ratings({"b1": ["c9"], "b4": ["c11"], "b5": ["c9"]}, ids)
    script = pd.DataFrame([{"blind_id": b, "c2": "PASSED", "c3": "PASSED"} for b in ids])
    ratings = {"human": human, "llm": llm, "script": script}
    k = kappa_table(ratings, script, n_boot=200, seed=0).set_index("variant")
    h = [0, 0, 0, 0, 1, 1, 1, 1]  # the human passes b4-b7; the llm passes b0, b2, b3, b6, b7
    m = [1, 0, 1, 1, 0, 0, 1, 1]
    assert k.loc["raw", "kappa"] == pytest.approx(cohens_kappa(h, m))
    assert k.loc["raw", "agree"] == 3 and k.loc["+script", "agree"] == 5  # b0 and b3 were checks 2/3 only
    c = checks_table(ratings).set_index("check")
    assert c.loc[9, "agree"] == 6 and c.loc[9, "fails_human"] == 2 and c.loc[9, "fails_llm"] == 2
    assert c.loc[2, "kind"] == "decidable" and c.loc[9, "kind"] == "judgment"
    adj = script_adjudication(ratings, script)
    assert list(adj.blind_id) == ["b0", "b3"] and set(adj.matched_script) == {"llm"}
    # by hand, units (human, llm): 1 of (0, 0), 5 mixed, 2 of (1, 1): o00 = 2, o01 = o10 = 5, o11 = 4; n0 = 7,
    # n1 = 9, n = 16; alpha = 1 - (n - 1)(o01 + o10) / (2 n0 n1) = 1 - 15 * 10 / 126 = -4/21
    alpha = agreement_table(ratings, n_boot=50, seed=0).set_index("statistic").loc["Krippendorff's alpha"]
    assert alpha.value == pytest.approx(-4 / 21) and alpha.n == 8


def test_self_preference_on_draws_worked_by_hand():
    """Point-mass draws, so every interval is its point: writer a's own critic passes 0.6 with theta 0.5, the other
    0.5 with theta 0.7: the corrected gap −0.2, the raw gap +0.1, the leniency gap (0.6 − 0.5) − (0.5 − 0.7) = +0.3;
    only a cell named writer__writer has a self-preference row."""
    from vocab.estimates.compare import CellDraws, self_preference_intervals, self_preference_pairs

    def cell(name, p, theta):
        one = np.ones(100)
        return CellDraws(name, p, theta, 0.5, 0.5, (theta, theta), theta * one, p * one, 0.5 * one, 0.5 * one)

    draws = {"a__a": cell("a__a", 0.6, 0.5), "a__b": cell("a__b", 0.5, 0.7), "b__a": cell("b__a", 0.4, 0.505),
             "b__b": cell("b__b", 0.3, 0.2)}  # fmt: skip
    gaps = self_preference_intervals(draws).set_index("writer")
    assert gaps.cross_critic.to_dict() == {"a": "a__b", "b": "b__a"}
    assert gaps.raw_gap.tolist() == pytest.approx([0.1, -0.1])
    assert gaps.difference.tolist() == pytest.approx([-0.2, -0.305])
    assert gaps.leniency_difference.tolist() == pytest.approx([0.3, 0.205])
    assert (gaps.ci_low.tolist(), gaps.ci_high.tolist()) == (pytest.approx([-0.2, -0.305]),) * 2
    assert self_preference_pairs(["x__y", "y__x", "gpt__judge"]) == []


def test_a_critic_that_passes_nothing_is_corrected_by_its_failed_pile_alone():
    """p = 0: no passed pile exists and none is needed: theta = b, q1 = 0, q0 = 1, flagged."""
    from vocab.estimates import correction_table

    attempts = pd.DataFrame({"cell": ["z__z"] * 6, "level": [1, 1, 1, 2, 2, 2], "verdict": ["FAILED"] * 6})
    key = pd.DataFrame(
        {
            "blind_id": [f"b{i}" for i in range(4)],
            "cell": ["z__z"] * 4,
            "pile": ["failed"] * 4,
            "weight": [1, 2, 2, 1],
        }
    )
    ok = pd.Series([1.0, 1.0, 0.0, 0.0], index=key.blind_id)
    row = correction_table(attempts, key, {"r": ok}, n_boot=200).iloc[0]
    assert row.p == 0 and np.isnan(row.a) and row.b == pytest.approx(3 / 6) and row.theta == pytest.approx(0.5)
    assert row.q1 == 0 and row.q0 == 1 and "empty:passed (p = 0)" in row["flags"]
    assert row.ci_low < 0.5 < row.ci_high


def test_check_audit_finds_the_check_a_critic_gets_wrong():
    """A critic that passes check 9 always while the rater fails it on half the rows: check 9 carries the
    error, at a Bonferroni-adjusted level; checks it agrees on do not."""
    from vocab.estimates import check_audit

    rng = np.random.default_rng(0)
    n = 400
    good9 = rng.random(n) < 0.5
    attempts = pd.DataFrame(
        {
            "cell": ["w__c"] * n,
            "level": range(n),
            "verdict": ["PASSED" if i % 2 else "FAILED" for i in range(n)],
            "checks": [{c: "PASSED" for c in map(str, range(1, 13))} for _ in range(n)],
        }
    )
    idx = list(range(0, 40))
    key = pd.DataFrame(
        {
            "blind_id": [f"b{i:03d}" for i in idx],
            "cell": "w__c",
            "pile": ["passed" if i % 2 else "failed" for i in idx],
            "weight": 1,
        }
    )
    ratings = pd.DataFrame({"blind_id": key.blind_id, **{f"c{c}": "PASSED" for c in range(1, 13)}})
    ratings["c9"] = ["PASSED" if good9[i] else "FAILED" for i in idx]
    audit = check_audit(attempts, key, ratings, rater="r", n_boot=500).set_index("check")
    assert len(audit) == 12 and audit.level.iloc[0] == pytest.approx(1 - 0.05 / 12)
    assert audit.loc[9, "carries_error"] and audit.loc[9, "critic_rate"] == 1.0
    assert audit.loc[9, "low"] < audit.loc[9, "rater_rate"] < audit.loc[9, "high"] < 1.0
    assert not audit.drop(index=9).carries_error.any()


def test_rater_error_vs_script_and_its_inversion():
    from vocab.calibration import rater_error_vs_script
    from vocab.estimates import invert_rater_error

    ids = [f"b{i}" for i in range(10)]
    script = pd.DataFrame({"blind_id": ids, "c2": ["PASSED"] * 10, "c3": ["FAILED"] * 10})
    rater = script.assign(c2=["FAILED"] * 2 + ["PASSED"] * 8)  # 2 of 20 decidable verdicts differ
    assert rater_error_vs_script(rater, script) == pytest.approx(0.1)
    corr = pd.DataFrame({"p": [0.5, 0.0], "a": [0.9, np.nan], "b": [0.1, 0.3]})
    theta = invert_rater_error(corr, 0.1)
    assert theta.iloc[0] == pytest.approx(0.5 * 1.0 + 0.5 * 0.0)  # (0.9-0.1)/0.8 = 1, (0.1-0.1)/0.8 = 0
    assert theta.iloc[1] == pytest.approx(0.25)  # p = 0: only b, (0.3-0.1)/0.8
    with pytest.raises(ValueError, match="flip rate"):
        invert_rater_error(corr, 0.5)  # a rater wrong half the time or more cannot be inverted
    # a critic that passed everything has no failed pile (its share is NaN) and needs none: theta = inverted a
    full = invert_rater_error(pd.DataFrame({"p": [1.0], "a": [0.7], "b": [np.nan]}), 0.1)
    assert full.iloc[0] == pytest.approx((0.7 - 0.1) / 0.8)


def test_level_counts_and_the_flag_for_an_interval_without_its_estimate():
    from vocab.estimates.correct import _flags, level_counts
    from vocab.stats import correct

    att = pd.DataFrame({"cell": ["x"] * 4 + ["y"], "level": [1, 1, 1, 2, 1],
                        "verdict": ["FAILED", "FAILED", "PASSED", "PASSED", "FAILED"]})  # fmt: skip
    counts = level_counts(att, "x")
    assert counts.passes.tolist() == [1, 1] and counts.attempts.tolist() == [3, 1]
    c = correct(0.3, 1.0, 0.0)  # theta = 0.3
    assert "outside:theta" in _flags(c, (0.31, 0.5), (0, 1), (0, 1))
    assert "outside:theta" not in _flags(c, (0.3, 0.5), (0, 1), (0, 1))


def _rated_study(seed=0):
    """A sampled study of four cells with three raters of different error rates, rated on every check."""
    att = synthetic_attempts(seed).assign(checks=lambda d: [{c: "PASSED" for c in map(str, range(1, 13))}] * len(d))
    key = draw_sample(att, per_pile=10, seed=seed).key
    rng = np.random.default_rng(seed)
    raters = {}
    for name, flip in (("ann", 0.1), ("bob", 0.3), ("llm", 0.2)):
        truth = key.critic_verdict.eq("PASSED") ^ (rng.random(len(key)) < flip)
        rows = pd.DataFrame({"blind_id": key.blind_id, **{f"c{i}": "PASSED" for i in range(1, 13)}})
        rows["c9"] = np.where(truth, "PASSED", "FAILED")
        rows["c11"] = np.where(rng.random(len(key)) < 0.2, "FAILED", "PASSED")
        raters[name] = rows
    return att, key, raters


def test_a_raters_interval_does_not_depend_on_the_other_raters_or_cells():
    """Each (variant, cell) draws from its own stream: the rows of one rater are the same with or without the
    raters before it, and a cell's row with or without the other cells (both failed while one generator served
    every row in turn). The order raters are given in cannot matter: variants and cells are sorted first."""
    from vocab.estimates import correction_table, variants
    from vocab.stats import INTERVALS

    att, key, raters = _rated_study()
    for interval in INTERVALS:
        both = correction_table(att, key, variants(raters, None), n_boot=300, interval=interval)
        alone = correction_table(att, key, variants({"bob": raters["bob"]}, None), n_boot=300, interval=interval)
        pd.testing.assert_frame_equal(both[both.rater == "bob"].reset_index(drop=True), alone)
        # and a cell's row does not depend on the other cells
        one_cell = correction_table(att, key[key.cell == "b__a"], variants({"bob": raters["bob"]}, None), n_boot=300,
                                    interval=interval)  # fmt: skip
        pd.testing.assert_frame_equal(alone[alone.cell == "b__a"].reset_index(drop=True), one_cell)


def test_the_check_audit_of_a_cell_and_check_does_not_depend_on_the_others():
    from vocab.estimates import check_audit

    att, key, raters = _rated_study(1)
    full = check_audit(att, key, raters["ann"], rater="ann", n_boot=300)
    one_cell = check_audit(att, key[key.cell == "a__b"], raters["ann"], rater="ann", n_boot=300)
    pd.testing.assert_frame_equal(full[full.cell == "a__b"].reset_index(drop=True), one_cell)
    # a check the rater left empty drops out; the others keep their intervals (the Bonferroni level aside)
    fewer = raters["ann"].assign(c5=None)
    part = check_audit(att, key, fewer, rater="ann", n_boot=300, family_alpha=0.05 * 11 / 12)
    cols = ["cell", "check", "rater_rate", "low", "high", "carries_error"]
    pd.testing.assert_frame_equal(full[full.check != 5][cols].reset_index(drop=True), part[cols])


def test_a_pairs_kappa_does_not_depend_on_a_third_rater():
    from vocab.estimates import kappa_table

    _, _, raters = _rated_study(2)
    three = kappa_table(raters, None, n_boot=300)
    two = kappa_table({"bob": raters["bob"], "llm": raters["llm"]}, None, n_boot=300)  # the last pair of three
    pd.testing.assert_frame_equal(
        three[(three.rater_a == "bob") & (three.rater_b == "llm")].reset_index(drop=True), two
    )


def test_the_check_audit_uses_the_default_interval_not_a_collapsed_bootstrap():
    """Unanimous piles: seed 000's percentile bootstrap gives [1, 1], so a critic at 0.99 on a check would carry an
    error for a one-point gap. The default interval keeps the piles' uncertainty: no error is claimed."""
    from vocab.estimates import check_audit

    n = 200
    checks = [{c: ("FAILED" if c == "9" and i == 0 else "PASSED") for c in map(str, range(1, 13))} for i in range(n)]
    att = pd.DataFrame({"cell": "w__c", "level": range(n), "checks": checks,
                        "verdict": ["PASSED" if i % 2 else "FAILED" for i in range(n)]})  # fmt: skip
    key = pd.DataFrame({"blind_id": [f"b{i:02d}" for i in range(20)], "cell": "w__c",
                        "pile": ["passed" if i % 2 else "failed" for i in range(20)], "weight": 1})  # fmt: skip
    ratings = pd.DataFrame({"blind_id": key.blind_id, **{f"c{c}": "PASSED" for c in range(1, 13)}})
    audit = check_audit(att, key, ratings, rater="r", n_boot=1000).set_index("check")
    r9 = audit.loc[9]
    assert r9.critic_rate == pytest.approx(0.995) and r9.rater_rate == 1.0
    assert r9.low < 0.9 and r9.high == 1.0 and not r9.carries_error
    seed = check_audit(att, key, ratings, rater="r", n_boot=1000, interval="seed").set_index("check").loc[9]
    assert seed.low == seed.high == 1.0 and seed.carries_error  # what the collapsed interval claimed
