"""Answers that quote the judge (#47): found in the answer's fields only, flagged in the key (stored for a new
draw, from the sheet for a key drawn before), counted in the report; the rows themselves never change."""

from __future__ import annotations

import shutil
from pathlib import Path

import pandas as pd

from vocab import prompts
from vocab.calibration import draw_sample, read_key, read_sheet, write_sample
from vocab.sampling.quotes import judge_quotes, quotes_text

ROOT = Path(__file__).resolve().parents[2]
REFERENCE = ROOT / "data" / "runs" / "reference"


def test_what_counts_as_quoting_the_judge():
    retry = prompts.writer_messages(
        {"seed_word": "stones", "words": ["stone", "notes"], "settings": {"max_sentence_words": 16}},
        {"sentence": "Stone notes.", "failed": ["3"], "reasons": {"3": "key wrong"}},
    )[1]["content"]
    echoed = retry.split("\n", 3)[-1]  # an answer that repeats the retry prompt's lines after the level's facts
    assert "the retry prompt" in judge_quotes({"sentence": echoed}) and "check by number" in judge_quotes(
        {"sentence": echoed}
    )
    assert judge_quotes({"sentence": "Ok.", "answer_key": ["stone", "PASSED"]}) == "a verdict word"
    assert judge_quotes({"output": "Check 3 (grammar): fine"}) == "a rubric check by number"
    # prose is not the judge: lower case, a word inside another, the input's fields
    assert judge_quotes({"sentence": "She passed the test and failed to notice the FAILEDX sign."}) == ""
    assert judge_quotes({"input": "Did it PASS?", "output": "Yes."}) == ""
    assert judge_quotes({"output": "A FAIL-SAFE switch."}) == "" and judge_quotes({"output": "It FAILED."}) != ""


def test_the_reference_sample_flags_the_rows_the_issue_found():
    key = read_key(REFERENCE)
    assert "quotes_judge" not in pd.read_csv(REFERENCE / "calibration" / "key.csv").columns  # drawn before it
    flagged = key[key.quotes_judge != ""]
    assert set(flagged.blind_id) == {"bb60d52", "bf50b9c", "b261561"}
    sheet = read_sheet(REFERENCE).set_index("blind_id")
    assert "A grader failed it on these checks" in sheet.loc["bb60d52", "sentence"]  # rated as written: unredacted
    line = quotes_text(key, {"gemma3": set(key.blind_id), "ann": {"bb60d52", "b0"}})
    assert line.startswith("3 of the 67 sampled answers quote the judge") and line.endswith("rated: ann 1, gemma3 3.")
    assert quotes_text(key[key.quotes_judge == ""], {}).startswith("No answer in the 64-row sample")


def test_a_new_draw_stores_the_flag_and_an_older_key_is_never_rewritten(tmp_path):
    run = tmp_path / "run"
    shutil.copytree(REFERENCE / "calibration", run / "calibration")
    for f in ("manifest.json",):
        shutil.copy(REFERENCE / f, run / f)
    before = (run / "calibration" / "key.csv").read_bytes()
    # the same sample written again over a key drawn before quotes_judge: same sample, bytes untouched
    key = read_key(run)
    sheet = read_sheet(run)
    from vocab.sampling.sample import Sample

    write_sample(Sample(key, sheet), run)
    assert (run / "calibration" / "key.csv").read_bytes() == before
    # a fresh draw writes the column
    att = pd.DataFrame(
        [{"cell": "a__b", "level": lv, "attempt": 1, "verdict": v, "seed_word": "s", "words": ["s"],
          "settings": {}, "sentence": "It FAILED." if lv == 1 else "Fine.", "answer_key": ["s"]}
         for lv, v in ((1, "PASSED"), (2, "PASSED"), (3, "FAILED"), (4, "FAILED"))]
    )  # fmt: skip
    fresh = tmp_path / "fresh"
    write_sample(draw_sample(att, per_pile=2, seed=0), fresh)
    stored = pd.read_csv(fresh / "calibration" / "key.csv", keep_default_na=False)
    assert dict(zip(stored.level, stored.quotes_judge, strict=True)) == {1: "a verdict word", 2: "", 3: "", 4: ""}
    assert read_key(fresh).equals(stored)
