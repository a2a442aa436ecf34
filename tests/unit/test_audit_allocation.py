"""`vocab audit --allocation equal|proportional|pilot` (#65 item 2): the one-command path splits a cell's labels
between the judge's piles as `vocab sample` does; a pilot's second stage is drawn by the audit once the pilot is
rated, a person is handed a packet of the new rows only (`packets/NAME-stage2/`), and that packet's hand-in joins
the pilot's in one ratings file. The rater is the form's own session (RatingSession), the files the ones it writes.
Expected sizes are counted from the files (the key, the ratings) and Neyman's split worked by hand."""

from __future__ import annotations

import hashlib
import json
import math
from pathlib import Path

import pandas as pd
import pytest

from vocab.cli import main

N_ITEMS, BUDGET = 300, 60


def _table(tmp: Path) -> Path:
    """A judge's 300 verdicts: 200 PASSED, 100 FAILED (every third item failed)."""
    t = tmp / "t.csv"
    rows = [{"id": f"i{i}", "system": "s", "judge": "j", "verdict": "PASSED" if i % 3 else "FAILED",
             "input": f"q{i}", "output": f"o{i}"} for i in range(N_ITEMS)]  # fmt: skip
    pd.DataFrame(rows).to_csv(t, index=False)
    return t


def _hashes(d: Path) -> dict[str, str]:
    return {str(p.relative_to(d)): hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(d.rglob("*"))
            if p.is_file()}  # fmt: skip


def _rate(packet: Path, verdict) -> Path:
    """Every row of ``packet`` rated through the form's session, ``verdict(i)`` for the i-th row shown; exported."""
    from vocab.raters.form import RatingSession

    s = RatingSession(packet)
    for i in range(s.n):
        s.save({c.id: verdict(i) for c in s.rubric.criteria})
    return s.export()


def _piles(d: Path) -> dict[str, int]:
    return pd.read_csv(d / "calibration" / "key.csv").pile.value_counts().to_dict()


def test_proportional_splits_the_cells_labels_by_the_piles_shares(tmp_path, capsys):
    d = tmp_path / "d"
    assert main(["audit", str(_table(tmp_path)), "--out", str(d), "--raters", "ann", "--allocation", "proportional",
                 "--budget", "30"]) == 0  # fmt: skip
    out = capsys.readouterr().out
    # by hand: 30 labels at the judge's 200/300 = 2/3 PASSED: 20 from the PASSED pile, 10 from the FAILED
    assert _piles(d) == {"passed": 20, "failed": 10}
    assert "allocation s__j: 30 labels split by the piles' shares: 20 from the PASSED pile, 10 from the FAILED" in out
    stage = json.loads((d / "calibration" / "sample.json").read_text())["stages"][0]
    assert stage["allocation"] == "proportional" and stage["budget"] == 30
    assert stage["rows_per_cell"] == {"s__j": {"passed": 20, "failed": 10}}
    # without --budget: twice --per-pile's labels, split alike (12 + 6 of 18)
    e = tmp_path / "e"
    assert main(["audit", str(tmp_path / "t.csv"), "--out", str(e), "--allocation", "proportional", "--per-pile",
                 "9"]) == 0  # fmt: skip
    assert _piles(e) == {"passed": 12, "failed": 6}


def test_equal_is_still_the_studys_split_and_is_recorded(tmp_path, capsys):
    d = tmp_path / "d"
    assert main(["audit", str(_table(tmp_path)), "--out", str(d), "--raters", "ann"]) == 0
    assert _piles(d) == {"passed": 10, "failed": 10}
    stage = json.loads((d / "calibration" / "sample.json").read_text())["stages"][0]
    assert stage["allocation"] == "equal" and stage["per_pile"] == 10 and stage["budget"] is None


def _neyman(budget: int, p: float, pilot: dict[str, tuple[int, int]]) -> tuple[int, int]:
    """Neyman's split by hand: n_a proportional to p * sigma_a, each sigma from the pilot's (rows, passes) as
    sqrt(s (1 - s)) with s = (k + 1) / (n + 2); never fewer rows than the pilot has."""
    sig = {k: math.sqrt((s := (x + 1) / (n + 2)) * (1 - s)) for k, (n, x) in pilot.items()}
    wa, wb = p * sig["passed"], (1 - p) * sig["failed"]
    n_a = round(budget * wa / (wa + wb))
    n_a = min(max(n_a, pilot["passed"][0]), budget - pilot["failed"][0])
    return n_a, budget - n_a


def test_a_pilot_in_two_stages_with_a_person(tmp_path, capsys):
    d = tmp_path / "d"
    assert main(["audit", str(_table(tmp_path)), "--out", str(d), "--raters", "ann", "--allocation", "pilot",
                 "--budget", str(BUDGET)]) == 0  # fmt: skip
    out = capsys.readouterr().out
    assert _piles(d) == {"passed": 10, "failed": 10}  # the pilot: --per-pile's 10 a pile
    assert f"pilot: rate these 20 rows first; then `vocab audit {d}` draws the rest of each cell's 60 labels" in out
    assert "the second stage asks about" in out and "the pilot's ratings decide" in out
    assert "again to draw the rest of the sample once the pilot is rated" in out

    # ann rates the pilot: FAILED on every other row she is shown, PASSED on the rest
    pilot_csv = _rate(d / "packets" / "ann", lambda i: "FAILED" if i % 2 else "PASSED")
    first = _hashes(d / "packets" / "ann")  # her packet, with the form's files in it
    assert main(["ratings", "import", str(pilot_csv), "--run-dir", str(d), "--rater", "ann", "--partial"]) == 0
    capsys.readouterr()
    key = pd.read_csv(d / "calibration" / "key.csv")
    mine = pd.read_csv(d / "calibration" / "ratings_ann.csv").set_index("blind_id")
    passes = {pile: (len(k), int((mine.loc[k.blind_id, "verdict"] == "PASSED").sum()))
              for pile, k in key.groupby("pile")}  # fmt: skip
    before_ids = set(key.blind_id)

    assert main(["audit", str(d)]) == 0  # the second stage
    out = capsys.readouterr().out
    a, b = _neyman(BUDGET, 200 / 300, passes)
    assert _piles(d) == {"passed": a, "failed": b}, (passes, out)
    assert f"split its 60 labels {a} PASSED + {b} FAILED: {a - 10} more from the PASSED pile, {b - 10} more" in out
    assert "ann-stage2.zip" in out and "ratings ann: 20 of 60 rows" in out
    assert _hashes(d / "packets" / "ann") == first  # the pilot's packet is kept as it was
    new_ids = set(pd.read_csv(d / "calibration" / "key.csv").blind_id) - before_ids
    stage2 = d / "packets" / "ann-stage2"
    shown = [json.loads(line)["blind_id"] for line in (stage2 / "sheet.jsonl").read_text().splitlines()]
    assert set(shown) == new_ids and len(shown) == 40  # the new rows, and only they
    assert json.loads((stage2 / "packet.json").read_text())["stage"] == 2
    assert "part 2 of your rating" in (stage2 / "README.txt").read_text()
    assert ":stage2" in (stage2 / "rate.html").read_text()  # the browser keeps its saves apart from the pilot's

    # the stage's hand-in, whole for its packet, joins the pilot's: no --partial, no --replace
    later_csv = _rate(stage2, lambda i: "FAILED" if i % 4 == 0 else "PASSED")
    assert main(["ratings", "import", str(later_csv), "--run-dir", str(d), "--rater", "ann"]) == 0
    said = capsys.readouterr().out
    assert "60 rated rows (20 of them from the earlier hand-in of the sample's other stage)" in said
    stored = pd.read_csv(d / "calibration" / "ratings_ann.csv").set_index("blind_id")
    assert set(stored.index) == before_ids | new_ids
    assert stored.loc[sorted(before_ids), "verdict"].equals(mine.loc[sorted(before_ids), "verdict"])
    later = pd.read_csv(later_csv).set_index("blind_id")
    assert stored.loc[sorted(new_ids), "verdict"].equals(later.loc[sorted(new_ids), "verdict"])
    # the pilot's file handed in again changes nothing
    assert main(["ratings", "import", str(pilot_csv), "--run-dir", str(d), "--rater", "ann", "--partial"]) == 0
    assert "nothing written" in capsys.readouterr().out

    assert main(["audit", str(d)]) == 0
    out = capsys.readouterr().out
    assert "ratings ann: complete" in out and "against ann's blind ratings (60 of 60 sampled rows)" in out
    assert "next: a report to share" in out


def test_a_pilot_waits_for_its_ratings(tmp_path, capsys):
    d = tmp_path / "d"
    assert main(["audit", str(_table(tmp_path)), "--out", str(d), "--raters", "ann", "--allocation", "pilot",
                 "--budget", "50", "--per-pile", "6"]) == 0  # fmt: skip
    capsys.readouterr()
    from vocab.raters.form import RatingSession

    s = RatingSession(d / "packets" / "ann")
    for _ in range(5):
        s.save({c.id: "PASSED" for c in s.rubric.criteria})
    assert main(["ratings", "import", str(s.export()), "--run-dir", str(d), "--rater", "ann", "--partial"]) == 0
    capsys.readouterr()
    before = _hashes(d)
    assert main(["audit", str(d)]) == 0
    out = capsys.readouterr().out
    assert "pilot: ann has rated 5 of the pilot's 12 rows" in out and _piles(d) == {"passed": 6, "failed": 6}
    assert {k: v for k, v in _hashes(d).items() if k in before} == before


@pytest.mark.parametrize(
    "extra, words",
    [
        (["--allocation", "bogus"], "invalid choice: 'bogus'"),
        (["--budget", "30"], "--budget is for --allocation proportional or pilot"),
        (["--allocation", "pilot"], "--allocation pilot needs --budget"),
        (["--allocation", "pilot", "--budget", "20"], "leaves nothing after the pilot's 20 labels"),
        (["--allocation", "proportional", "--per-pile", "5", "--budget", "30"], "--per-pile and --budget: give one"),
        (["--allocation", "proportional", "--budget", "3"], "--budget must be at least 4"),
        (["--raters", "ann-stage2"], "names a later stage's packet"),
    ],
)
def test_bad_allocation_options_are_one_line_and_write_nothing(tmp_path, capsys, extra, words):
    t = _table(tmp_path)
    before = _hashes(tmp_path)
    assert main(["audit", str(t), "--out", str(tmp_path / "d"), *extra]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and words in err[0], err
    assert _hashes(tmp_path) == before and not (tmp_path / "d").exists()


def test_a_drawn_sample_keeps_its_allocation(tmp_path, capsys):
    d = tmp_path / "d"
    assert main(["audit", str(_table(tmp_path)), "--out", str(d), "--allocation", "pilot", "--budget", "60"]) == 0
    capsys.readouterr()
    before = _hashes(d)
    for extra in (["--allocation", "proportional"], ["--allocation", "pilot", "--budget", "80"]):
        assert main(["audit", str(d), *extra]) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and "drawn with allocation pilot, budget 60: it is kept" in err[0], err
    assert _hashes(d) == before
    assert main(["audit", str(d), "--allocation", "pilot", "--budget", "60"]) == 0  # the same: nothing new


def test_a_second_extension_gives_a_third_packet_and_the_sequence_reads_stage_by_stage(tmp_path, capsys):
    """After the second stage is rated, `vocab sample --allocation pilot` grows the sample again: ann's first two
    packets stay as they were and a third holds the newest rows only. The anytime-valid interval reads ann's labels
    in the order she gave them: her pilot packet's order, then each later packet's (worked here from the packets'
    own sheets), not one shuffle of the grown sheet."""
    from vocab import stats
    from vocab.estimates.stopping import cell_sequence

    d = tmp_path / "d"
    assert main(["audit", str(_table(tmp_path)), "--out", str(d), "--raters", "ann", "--allocation", "pilot",
                 "--budget", "40"]) == 0  # fmt: skip
    first = _rate(d / "packets" / "ann", lambda i: "FAILED" if i % 3 == 0 else "PASSED")
    assert main(["ratings", "import", str(first), "--run-dir", str(d), "--rater", "ann", "--partial"]) == 0
    assert main(["audit", str(d)]) == 0
    second = _rate(d / "packets" / "ann-stage2", lambda i: "FAILED" if i % 2 else "PASSED")
    assert main(["ratings", "import", str(second), "--run-dir", str(d), "--rater", "ann"]) == 0
    kept = {k: _hashes(d / "packets" / k) for k in ("ann", "ann-stage2")}
    assert main(["sample", "--run-dir", str(d), "--budget", "70", "--allocation", "pilot", "--rater", "ann"]) == 0
    capsys.readouterr()
    assert main(["audit", str(d), "--raters", "ann"]) == 0
    out = capsys.readouterr().out
    assert "ann-stage3.zip" in out and {k: _hashes(d / "packets" / k) for k in kept} == kept
    assert "ratings ann: 40 of 70 rows" in out and "next: hand each packet to its rater (ann)" in out
    third = _rate(d / "packets" / "ann-stage3", lambda i: "PASSED")
    assert main(["ratings", "import", str(third), "--run-dir", str(d), "--rater", "ann"]) == 0
    capsys.readouterr()
    assert main(["audit", str(d), "--target-half-width", "0.01"]) == 0
    line = next(x for x in capsys.readouterr().out.splitlines() if x.startswith("stopping s → j"))
    # by hand: ann's labels per pile in the order of her three packets' sheets
    key = pd.read_csv(d / "calibration" / "key.csv").set_index("blind_id")
    mine = pd.read_csv(d / "calibration" / "ratings_ann.csv").set_index("blind_id").verdict.eq("PASSED")
    order = [json.loads(x)["blind_id"] for k in ("ann", "ann-stage2", "ann-stage3")
             for x in (d / "packets" / k / "sheet.jsonl").read_text().splitlines()]  # fmt: skip
    assert len(order) == len(key) == 70
    seqs = {p: [float(mine[b]) for b in order if key.pile[b] == p] for p in ("passed", "failed")}
    lo, hi = cell_sequence(seqs["passed"], seqs["failed"], 200, 100, stats.FINITE)(*map(len, seqs.values()))
    assert f"anytime-valid 95 % interval {lo:.3f}–{hi:.3f}" in line, line


def test_after_an_extension_the_next_step_waits_for_the_new_rows(tmp_path, capsys):
    """ann's pilot handed in as a file with no packet of hers: the extension's rows are hers to rate too, and the
    audit does not call the sample done."""
    d = tmp_path / "d"
    assert main(["audit", str(_table(tmp_path)), "--out", str(d), "--allocation", "pilot", "--budget", "40"]) == 0
    sheet = pd.read_csv(d / "calibration" / "blind_sheet.csv")
    rated = tmp_path / "ann.csv"
    pd.DataFrame({"blind_id": sheet.blind_id, "verdict": "PASSED"}).to_csv(rated, index=False)
    assert main(["ratings", "import", str(rated), "--run-dir", str(d), "--rater", "ann"]) == 0
    capsys.readouterr()
    assert main(["audit", str(d)]) == 0
    out = capsys.readouterr().out
    assert "ratings ann: 20 of 40 rows" in out and "next: a report to share" not in out
    assert f"`vocab ratings import ratings.csv --run-dir {d} --rater ann --partial`" in out


def test_a_judge_with_one_pile_gives_it_every_label(tmp_path, capsys):
    t = tmp_path / "t.csv"
    pd.DataFrame([{"id": f"i{i}", "system": "s", "judge": "j", "verdict": "PASSED", "input": "q", "output": f"o{i}"}
                  for i in range(50)]).to_csv(t, index=False)  # fmt: skip
    d = tmp_path / "d"
    assert main(["audit", str(t), "--out", str(d), "--allocation", "proportional", "--budget", "20"]) == 0
    assert _piles(d) == {"passed": 20}
    assert "20 labels split by the piles' shares: 20 from the PASSED pile, 0 from the FAILED" in capsys.readouterr().out


def test_an_allocation_for_a_labelled_source_is_refused_and_its_import_not_kept(tmp_path, capsys):
    t = tmp_path / "t.csv"
    rows = [{"id": f"i{i}", "system": "s", "judge": "j", "verdict": "PASSED" if i % 2 else "FAILED", "input": "q",
             "output": f"o{i}", "label": "PASSED"} for i in range(30)]  # fmt: skip
    pd.DataFrame(rows).to_csv(t, index=False)
    assert main(["audit", str(t), "--out", str(tmp_path / "d"), "--allocation", "proportional", "--budget", "20"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "drawn with allocation labels: it is kept" in err[0], err
    assert not (tmp_path / "d").exists()
