"""The planted-defect builder: one asserted edit per variant, the script sees the decidable defects."""

from __future__ import annotations

import json

import pytest

from tests.unit.written_levels import v1_level, v1_levels
from vocab import script
from vocab.exam import planted
from vocab.exam.planted import PlantError, Source, build, replace_once
from vocab.levels import GENERATOR_VERSION, generate


def source(level: int, sentence: str, key: list[str]) -> Source:
    return Source(f"t-{level}", "reference", v1_level(level), sentence, key)


CATS = source(
    103, "The cast had to act beside a real cat, though the director hated cats.", ["cast", "act", "cat", "cats"]
)


def test_replace_once_needs_exactly_one_whole_word_span():
    assert replace_once("we see the seen", "see", "SEE") == "we SEE the seen"  # 'seen' is not 'see'
    with pytest.raises(PlantError, match="occurs 2 times"):
        replace_once("a cat and a cat", "cat", "dog")
    with pytest.raises(PlantError, match="occurs 0 times"):
        replace_once("a category", "cat", "dog")


def test_every_reference_answer_builds_a_full_set():
    refs = planted.reference_answers(v1_levels())
    assert len(refs) >= 12
    for src in refs:
        variants, skipped = build(src)
        kinds = [v.kind for v in variants]
        assert kinds.count("control") == 1 and kinds.count("baseline") == 1
        targets = {v.target for v in variants if v.kind == "defect"} | {s["target"] for s in skipped}
        assert targets == set(planted.DEFECTS)  # every defect type is built or skipped with a reason
        assert all(s["reason"] for s in skipped)
        for v in variants:
            assert (v.sentence, v.answer_key) != (src.sentence, src.answer_key) or v.kind == "baseline"


def test_decidable_defects_are_real_defects_by_the_script():
    variants, _ = build(CATS)
    lv = CATS.level
    by = {v.target or v.kind: v for v in variants}

    def verdict(v, check):
        return script.adjudicate(lv["words"], v.sentence, v.answer_key, lv["settings"]).checks[check]

    assert verdict(by["baseline"], "2") == "PASSED" and verdict(by["baseline"], "3") == "PASSED"
    assert verdict(by["control"], "2") == "PASSED" and verdict(by["control"], "3") == "PASSED"
    assert verdict(by["2"], "2") == "FAILED"
    assert verdict(by["3"], "3") == "FAILED"
    assert verdict(by["7"], "7") == "FAILED"
    assert verdict(by["8"], "8") == "FAILED"
    assert verdict(by["10"], "10") == "FAILED"
    assert by["5"].sentence.count("cats") == 2  # 'cat' is left only inside 'cats'
    assert verdict(by["5"], "2") == "FAILED"
    assert by["4"].sentence.count("Act") == 1 and by["6"].edited_word == "act"
    assert by["11"].span == {"old": "act beside", "new": "beside act"}


def test_a_source_without_a_single_editable_target_is_refused():
    src = source(11, "Car, law and war; a car.", ["car", "law", "war"])
    with pytest.raises(PlantError):
        planted.build(source(11, "War war law law car car.", ["car", "law", "war"]))
    variants, _ = build(src)  # 'law' occurs once after the first word
    assert {v.edited_word for v in variants if v.target == "2"} == {"law"}


def test_a_failing_reference_answer_is_refused(tmp_path):
    bad = tmp_path / "answers.jsonl"
    bad.write_text(
        '{"level": 11, "generator_version": "1.0.0", "sentence": "A car.", "answer_key": ["car", "law", "war"]}\n'
    )
    with pytest.raises(PlantError, match="fails script checks"):
        planted.reference_answers(v1_levels(), bad)
    bad.write_text(
        '{"level": 11, "sentence": "After the war, a new law let every family own a car.", "answer_key": []}\n'
    )
    with pytest.raises(PlantError, match="answers.jsonl:1: .*names no generator_version"):
        planted.reference_answers(v1_levels(), bad)


def test_draw_does_not_depend_on_pool_order():
    refs = planted.reference_answers(v1_levels())
    a = planted.draw_sources(refs, 5, seed=3)
    b = planted.draw_sources(refs[::-1], 5, seed=3)
    assert [s.source_id for s in a] == [s.source_id for s in b]
    assert len({s.source_id for s in a}) == 5
    assert [s.source_id for s in planted.draw_sources(refs, 5, seed=4)] != [s.source_id for s in a]


def test_reference_answers_are_read_against_the_runs_own_levels(tmp_path):
    """Each answer names the generator version whose level it answers: on levels a newer generator made under the
    same numbers, generator 1.0.0's answers are left out and only that generator's own answers are read."""
    v1 = planted.reference_answers(v1_levels())
    assert v1 and all(src.level == v1_level(src.level["level"]) for src in v1)
    lines = [json.loads(x) for x in planted.REFERENCE_ANSWERS.read_text().splitlines()]
    fresh = {d["level"]: generate(d["level"]).as_dict() for d in lines}
    v2 = planted.reference_answers(fresh)
    assert v2 and {s.level["generator_version"] for s in v2} == {GENERATOR_VERSION}
    assert {s.source_id for s in v2} == {
        f"ref-{d['level']:04d}" for d in lines if d["generator_version"] == GENERATOR_VERSION
    }
    assert not {s.sentence for s in v2} & {s.sentence for s in v1}
    # an answer that claims the new generator but was written for the old words is refused
    moved = tmp_path / "answers.jsonl"
    moved.write_text(json.dumps({**next(d for d in lines if d["level"] == 11), "generator_version": GENERATOR_VERSION}))
    with pytest.raises(PlantError, match="written for other words"):
        planted.reference_answers({11: generate(11).as_dict()}, moved)
    assert planted.reference_answers({}) == []  # a run without those levels gets none
