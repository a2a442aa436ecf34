"""`vocab sample --budget N --allocation equal|proportional|pilot`: equal reproduces today's sample, proportional
splits by the piles' shares, pilot extends a rated sample without touching what was rated; the allocation is
recorded."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pandas as pd
import pytest

from vocab.calibration import draw_sample, load_dataset
from vocab.cli import main
from vocab.sampling import sample as sm

from .test_bad_inputs import refused, run  # noqa: F401 (run: a fixture)

ROOT = Path(__file__).resolve().parents[2]
REFERENCE = ROOT / "data" / "runs" / "reference"


@pytest.fixture
def rated(run) -> Path:  # noqa: F811
    """test_bad_inputs' copy of the reference run: results, sample and ratings."""
    return run


@pytest.fixture
def bare(run) -> Path:  # noqa: F811
    """The same without a sample."""
    shutil.rmtree(run / "calibration")
    return run


def test_an_equal_budget_of_20_is_the_reference_sample():
    data = load_dataset(REFERENCE)
    sizes = sm.pile_sizes(data.attempts, 20, "equal")
    assert set(sizes.values()) == {(10, 10)}
    by_budget = draw_sample(data.attempts, 10, 0, data.visible, sizes=sizes)
    assert by_budget.key.equals(draw_sample(data.attempts, 10, 0, data.visible).key)
    committed = pd.read_csv(REFERENCE / "calibration" / "key.csv")  # its ids were drawn at random (before 2026-12)
    rows = ["cell", "level", "attempt", "pile", "weight"]
    assert by_budget.key[rows].astype(str).values.tolist() == committed[rows].astype(str).values.tolist()


def test_proportional_splits_each_cell_by_its_pass_rate_and_is_recorded(bare):
    assert main(["sample", "--run-dir", str(bare), "--budget", "24", "--allocation", "proportional"]) == 0
    key = pd.read_csv(bare / "calibration" / "key.csv")
    att = load_dataset(bare).attempts
    manifest = json.loads((bare / "calibration" / "sample.json").read_text())
    (stage,) = manifest["stages"]
    assert stage["allocation"] == "proportional" and stage["budget"] == 24 and stage["stage"] == "draw"
    for cell, a in att.groupby("cell"):
        want = sm.allocate(24, float((a.verdict == "PASSED").mean()), "proportional")
        piles = key[key.cell == cell].pile.value_counts()
        failed_levels = a[a.verdict == "FAILED"].level.nunique()
        passed = int((a.verdict == "PASSED").sum())
        assert (piles.get("passed", 0), piles.get("failed", 0)) == (min(want[0], passed), min(want[1], failed_levels))
        assert stage["rows_per_cell"][cell] == {"passed": want[0], "failed": want[1]}


def test_a_pilot_extension_keeps_the_rated_rows_and_adds_by_the_raters_disagreement(rated):
    cal = rated / "calibration"
    key0, sheet0 = pd.read_csv(cal / "key.csv"), (cal / "blind_sheet.jsonl").read_text()
    ratings0 = (cal / "ratings_gemma3.csv").read_bytes()
    assert main(["sample", "--run-dir", str(rated), "--budget", "30", "--allocation", "pilot", "--rater",
                 "gemma3"]) == 0  # fmt: skip
    key = pd.read_csv(cal / "key.csv")
    assert (cal / "blind_sheet.jsonl").read_text().startswith(sheet0)  # the rated rows first, unchanged
    assert (cal / "ratings_gemma3.csv").read_bytes() == ratings0
    assert set(key0.blind_id) < set(key.blind_id) and key.blind_id.is_unique
    merged = key.merge(key0, on=["blind_id", "cell", "level", "attempt", "pile", "weight", "critic_verdict"])
    assert len(merged) == len(key0)  # every pilot row kept as it was
    (stage,) = json.loads((cal / "sample.json").read_text())["stages"]
    assert stage["pilot_rater"] == "gemma3" and stage["added"] == len(key) - len(key0)
    for cell, k in key.groupby("cell"):
        want = stage["rows_per_cell"][cell]
        assert sum(want.values()) == 30
        assert (k.pile == "passed").sum() <= want["passed"] and (k.pile == "failed").sum() <= want["failed"]
    # no row twice: a passed attempt at most once, a failed level at most once
    assert not key[key.pile == "passed"].duplicated(["cell", "level", "attempt"]).any()
    assert not key[key.pile == "failed"].duplicated(["cell", "level"]).any()
    jsonl = [json.loads(x)["blind_id"] for x in (cal / "blind_sheet.jsonl").read_text().splitlines() if x]
    assert list(pd.read_csv(cal / "blind_sheet.csv").blind_id) == jsonl
    # the script rater covers the new rows too (its verdicts adjudicate every rater's), and the chain still runs
    assert set(pd.read_csv(cal / "ratings_script.csv").blind_id) == set(jsonl)
    assert main(["report", str(rated)]) == 0


@pytest.mark.parametrize(
    ("extra", "words"),
    [
        (["--budget", "20", "--per-pile", "10"], "give one"),
        (["--allocation", "proportional"], "--allocation needs --budget"),
        (["--budget", "3", "--allocation", "proportional"], "at least 4"),
        (["--budget", "30", "--rater", "gemma3"], "only with --allocation pilot"),
        (["--budget", "30", "--allocation", "pilot", "--rater", "nobody"], "no ratings from nobody"),
        (["--budget", "12", "--allocation", "pilot", "--rater", "gemma3"], "more than the budget"),
        (["--budget", "30", "--allocation", "proportional"], "holds another sample"),
    ],
)
def test_bad_allocations_are_refused(rated, capsys, extra, words):
    refused(["sample", "--run-dir", str(rated), *extra], capsys, [rated], words)


def test_a_pilot_needs_every_pilot_row_rated(rated, capsys):
    cal = rated / "calibration"
    r = pd.read_csv(cal / "ratings_gemma3.csv")
    r.iloc[:5].to_csv(cal / "ratings_gemma3.csv", index=False)
    refused(["sample", "--run-dir", str(rated), "--budget", "30", "--allocation", "pilot", "--rater", "gemma3"],
            capsys, [rated], "needs them all")  # fmt: skip


def test_02_draws_the_same_allocated_sample_as_the_command_line(bare, tmp_path):
    from vocab.nb import execute

    other = tmp_path / "other"
    shutil.copytree(bare, other)
    assert main(["sample", "--run-dir", str(other), "--budget", "24", "--allocation", "proportional"]) == 0
    nb = Path(__file__).resolve().parents[2] / "notebooks" / "02_sample.ipynb"
    execute(nb, {"run_dir": str(bare), "budget": 24, "allocation": "proportional"}, tmp_path / "02.ipynb")
    assert (bare / "calibration" / "key.csv").read_text() == (other / "calibration" / "key.csv").read_text()


def test_a_hand_in_stamped_with_the_pilots_sheet_still_imports_after_the_extension(rated, capsys):
    """The form stamps ratings.csv with its packet's sheet hash; a pilot's extension rewrites the sheet, and the
    first stage's rows stay valid: a rater who rated them hands in afterwards and is not refused."""
    from vocab.raters.form import RatingSession
    from vocab.raters.packet import make_packet

    s = RatingSession(make_packet(rated, "bob"))
    for _ in range(3):
        s.save({c.id: "PASSED" for c in s.rubric.criteria})
    stamped = s.export()
    assert main(["sample", "--run-dir", str(rated), "--budget", "30", "--allocation", "pilot", "--rater",
                 "gemma3"]) == 0  # fmt: skip
    capsys.readouterr()
    assert main(["ratings", "import", str(stamped), "--run-dir", str(rated), "--rater", "bob", "--partial"]) == 0


def test_a_split_past_a_piles_rows_gives_the_rest_to_the_other_pile():
    """A cell of 40 attempts: 10 PASSED on 10 levels, 30 FAILED on 5 levels (the FAILED pile draws a level at a
    time, so it holds 5 rows). Proportional at 20: p = 0.25, so 5 + 15 by hand; the FAILED pile gives 5, and the 10
    rows it cannot give go to the PASSED pile, which holds 10: 10 + 5. The equal split stays seed 000's 10 + 10."""
    rows = [{"cell": "w__c", "level": lv, "attempt": 1, "verdict": "PASSED"} for lv in range(10)]
    rows += [{"cell": "w__c", "level": 10 + i % 5, "attempt": 1 + i // 5, "verdict": "FAILED"} for i in range(30)]
    attempts = pd.DataFrame(rows)
    assert sm.allocate(20, 0.25, "proportional") == (5, 15)
    assert sm.pile_sizes(attempts, 20, "proportional") == {"w__c": (10, 5)}
    assert sm.pile_sizes(attempts, 20, "equal") == {"w__c": (10, 10)}
    assert sm.fit((16, 4), (8, 2)) == (8, 2)  # both piles full: what is left over is left
    assert sm.fit((2, 18), (30, 5)) == (15, 5)
