"""The rubric: 12 checks, one shared text, a stable hash, schemas xgrammar accepts, the pass rule."""

from __future__ import annotations

import jsonschema

from vocab import rubric


def test_twelve_checks_with_kinds():
    assert [c.id for c in rubric.CHECKS] == [str(i) for i in range(1, 13)]
    kinds = {c.id: c.kind for c in rubric.CHECKS}
    assert {k for k, v in kinds.items() if v == "decidable"} == {"1", "2", "3"}
    assert {k for k, v in kinds.items() if v == "mechanical"} == {"4", "6", "7", "8"}
    assert {k for k, v in kinds.items() if v == "judgment"} == {"5", "9", "10", "11", "12"}


def test_text_lists_every_check_and_hash_is_stable():
    text = rubric.rubric_text()
    for c in rubric.CHECKS:
        assert f"{c.id}. " in text and c.question in text
    assert rubric.rubric_hash() == rubric.rubric_hash() and len(rubric.rubric_hash()) == 64


def test_pass_rule_ignores_check_1_by_default():
    all_pass = {c: "PASSED" for c in rubric.CHECK_IDS}
    assert rubric.passes(all_pass)
    assert rubric.passes({**all_pass, "1": "FAILED"})
    assert not rubric.passes({**all_pass, "1": "FAILED"}, scope=rubric.CHECK_IDS)
    assert not rubric.passes({**all_pass, "9": "FAILED"})
    assert not rubric.passes({k: v for k, v in all_pass.items() if k != "12"})  # missing counts as a fail
    assert rubric.failed_checks({**all_pass, "9": "FAILED", "11": "FAILED"}) == ["9", "11"]


def test_schemas_validate_good_and_reject_bad_answers():
    w = rubric.writer_schema(3)
    jsonschema.validate({"sentence": "A stone.", "answer_key": ["stone"]}, w)
    for bad in ({"sentence": "x"}, {"sentence": "x", "answer_key": ["a"] * 6}, {"sentence": "", "answer_key": ["a"]}):
        assert not jsonschema.Draft202012Validator(w).is_valid(bad)
    c = rubric.critic_schema()
    good = {k: {"verdict": "PASSED", "reason": ""} for k in rubric.CHECK_IDS}
    good["9"] = {"verdict": "FAILED", "reason": "no clue to the word"}
    jsonschema.validate(good, c)
    v = jsonschema.Draft202012Validator(c)
    assert not v.is_valid({**good, "2": {"verdict": "PASSED", "reason": "looks fine"}})  # reasons only for fails
    assert not v.is_valid({**good, "2": {"verdict": "FAILED", "reason": ""}})  # a fail needs its reason
    assert not v.is_valid({**good, "2": {"verdict": "FAILED", "reason": "x" * 61}})
    assert not jsonschema.Draft202012Validator(c).is_valid({**good, "3": {"verdict": "MAYBE", "reason": ""}})
    assert not jsonschema.Draft202012Validator(c).is_valid({k: v for k, v in good.items() if k != "5"})


def test_the_plain_words_leave_the_judges_rubric_as_the_reference_run_recorded_it():
    """Every check has a plain question and an example each way; the critic's text and the rubric's hash are the
    ones the reference run's manifest recorded (the plain words are the raters', not the judge's)."""
    import json
    from pathlib import Path

    manifest = json.loads((Path(__file__).resolve().parents[2] / "data/runs/reference/manifest.json").read_text())
    assert rubric.rubric_hash() == manifest["rubric"]["hash"]
    assert set(rubric.GUIDE) == {c.id for c in rubric.CHECKS}
    for g in rubric.GUIDE.values():
        assert g.plain.endswith(("?", ".)")) and g.passing and g.failing and g.passing != g.failing
    assert rubric.MISSING_WORD_RULE not in rubric.rubric_text()
    assert set(rubric.WORD_CHECKS) <= {c.id for c in rubric.CHECKS if c.kind != "decidable"}


def test_one_missing_word_rule_for_every_rater():
    """The form's view, the page's packet, rubric.txt and the LLM raters' instructions carry the same rule, on the
    checks it names; another rubric's criteria carry no plain words."""
    from vocab import prompts
    from vocab.datasets.dataset import VOCABSCAPES, single_verdict
    from vocab.raters.packet import rubric_text

    for cid in rubric.CHECK_IDS:
        got = rubric.guide_of(VOCABSCAPES.name, cid)
        assert got["plain"] == rubric.GUIDE[cid].plain
        assert (got.get("missing") == rubric.MISSING_WORD_RULE) == (cid in rubric.WORD_CHECKS)
    assert rubric.guide_of(single_verdict().name, "verdict") == {}
    assert rubric.MISSING_WORD_RULE in prompts.RATER_SYSTEM
    text = rubric_text(VOCABSCAPES)
    assert rubric.MISSING_WORD_RULE in text and all(g.plain in text for g in rubric.GUIDE.values())
    assert rubric.MISSING_WORD_RULE not in rubric_text(single_verdict())
