"""When to stop labelling (#65 item 4): the betting confidence sequence holds its truth at every look at once, a
pile labelled whole is known, optional stopping keeps the sequence's coverage, and `vocab audit DIR
--target-half-width H` says per cell whether to stop. Expected values are counted from the files."""

from __future__ import annotations

import hashlib
import json
import math

import numpy as np
import pandas as pd
import pytest

from vocab import stats
from vocab.cli import main
from vocab.coverage.stopping import simulate_stopping
from vocab.estimates.stopping import cell_sequence, pile_sequence


def test_a_pile_labelled_whole_is_known_and_a_sequence_narrows():
    x = np.array([1, 0, 0, 1, 0, 1, 1, 0, 0, 0, 1, 0], dtype=float)  # 5 of 12 pass
    lo, hi = pile_sequence(x, 12)
    assert lo[-1] == pytest.approx(5 / 12) and hi[-1] == pytest.approx(5 / 12)
    assert lo[0] == 0 and hi[0] == 1  # before any label
    # a superpopulation's pile keeps a width after the same labels
    lo_s, hi_s = pile_sequence(x, None)
    assert hi_s[-1] - lo_s[-1] > 0.3 and lo_s[-1] <= 5 / 12 <= hi_s[-1]


def test_the_sequence_misses_its_truth_at_any_look_at_most_alpha_of_the_time():
    """Time-uniform: over random orders of one finite pile of 80 rows (24 pass), the share of orders whose
    sequence excludes 24/80 at *some* look, any of the 80, is within alpha (5 %) give or take the orders' noise."""
    rng = stats.stream(7, "test-stopping", "pile")
    pile = np.array([1.0] * 24 + [0.0] * 56)
    missed = 0
    for _ in range(300):
        lo, hi = pile_sequence(rng.permutation(pile), 80)
        missed += bool(np.any((lo > 0.3 + 1e-12) | (hi < 0.3 - 1e-12)))
    assert missed / 300 <= 0.05 + 2 * math.sqrt(0.05 * 0.95 / 300)


def test_a_cells_rate_combines_its_piles_by_their_sizes():
    """A PASSED pile of 6 rows and a FAILED pile of 4, each labelled whole: theta = (N_a a + N_b b) / N by hand."""
    a = np.array([1, 1, 1, 0, 1, 1], dtype=float)  # 5 of 6
    b = np.array([0, 1, 0, 0], dtype=float)  # 1 of 4
    at = cell_sequence(a, b, 6, 4, stats.FINITE)
    assert at(6, 4) == pytest.approx((0.6, 0.6))
    lo, hi = at(3, 2)
    assert lo <= 0.6 <= hi and hi - lo > 0.2


def test_optional_stopping_keeps_the_sequences_coverage():
    """Stop at the first of 20 looks that meets ±0.1: the sequence still holds the cell's own rate."""
    r = simulate_stopping(0.5, 0.8, 0.8, 400, sims=120, n_boot=200, target=0.1, seed=3)
    assert r["sequence"]["coverage"] >= 0.93
    assert r["sequence"]["labels_median"] >= r["fixed_peeking"]["labels_median"]  # validity at every look costs
    assert {"coverage", "labels_median", "width_median", "met_target"} <= set(r["fixed_peeking"])


def _table(tmp, n: int):
    t = tmp / "t.csv"
    rows = [{"id": f"i{i}", "system": "s", "judge": "j", "verdict": "PASSED" if i % 3 else "FAILED",
             "input": f"q{i}", "output": f"o{i}"} for i in range(n)]  # fmt: skip
    pd.DataFrame(rows).to_csv(t, index=False)
    return t


def test_the_audit_says_stop_once_every_row_is_labelled(tmp_path, capsys):
    """24 items, 10 a pile: all 16 PASSED and 8 FAILED items are in the sample; ann labels every one, so the rate
    is known: the count of her PASSED labels over 24, at a half-width of 0."""
    d = tmp_path / "d"
    assert main(["audit", str(_table(tmp_path, 24)), "--out", str(d), "--raters", "ann", "--per-pile", "16"]) == 0
    sheet = pd.read_csv(d / "calibration" / "blind_sheet.csv")
    assert len(sheet) == 24
    verdicts = ["PASSED" if i % 4 else "FAILED" for i in range(24)]
    rated = tmp_path / "ann.csv"
    pd.DataFrame({"blind_id": sheet.blind_id, "verdict": verdicts}).to_csv(rated, index=False)
    assert main(["ratings", "import", str(rated), "--run-dir", str(d), "--rater", "ann"]) == 0
    capsys.readouterr()
    assert main(["audit", str(d), "--target-half-width", "0.05"]) == 0
    out = capsys.readouterr().out
    theta = verdicts.count("PASSED") / 24
    assert (f"stopping s → j (ann, 24 labels): stop: ±0.000 meets ±0.05 (anytime-valid 95 % interval "
            f"{theta:.3f}–{theta:.3f}") in out  # fmt: skip
    # the gate holds the floor with the same sequence: here the rate itself, known
    assert main(["gate", str(d), "--min-rate", f"{theta - 0.01:.3f}", "--anytime"]) == 0
    assert f"rate's anytime-valid lower bound {theta:.3f} ≥ {theta - 0.01:g}: holds" in capsys.readouterr().out
    assert main(["gate", str(d), "--min-rate", f"{theta + 0.01:.3f}", "--anytime"]) == 1
    capsys.readouterr()
    for extra in (["--min-q1", "0.5", "--anytime"], ["--a", "x", "--b", "y", "--min-difference", "0", "--anytime"]):
        assert main(["gate", str(d), *extra]) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and "--anytime" in err[0], err


def test_the_audit_says_keep_labelling_on_a_few_labels(tmp_path, capsys):
    d = tmp_path / "d"
    assert main(["audit", str(_table(tmp_path, 300)), "--out", str(d), "--raters", "ann", "--per-pile", "5"]) == 0
    sheet = pd.read_csv(d / "calibration" / "blind_sheet.csv")
    rated = tmp_path / "ann.csv"
    pd.DataFrame({"blind_id": sheet.blind_id, "verdict": "PASSED"}).to_csv(rated, index=False)
    assert main(["ratings", "import", str(rated), "--run-dir", str(d), "--rater", "ann"]) == 0
    capsys.readouterr()
    assert main(["audit", str(d), "--target-half-width", "0.1"]) == 0
    out = capsys.readouterr().out
    line = next(x for x in out.splitlines() if x.startswith("stopping s → j"))
    assert "(ann, 10 labels): keep labelling" in line and "the fixed-sample interval" in line


@pytest.mark.parametrize("h", ["0", "0.7", "nan", "-0.1"])
def test_a_bad_target_is_one_line(tmp_path, capsys, h):
    assert main(["audit", str(_table(tmp_path, 30)), "--out", str(tmp_path / "d"), "--target-half-width", h]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--target-half-width" in err[0], err
    assert not (tmp_path / "d").exists()


def test_no_sequence_for_pooled_people_or_a_superpopulation(tmp_path, capsys):
    """Two people (a tie counts 1/2) and the superpopulation (the judge's rate is uncertain too): the line says why
    there is no anytime-valid interval, and the gate refuses --anytime for the superpopulation."""
    d = tmp_path / "d"
    assert main(["audit", str(_table(tmp_path, 60)), "--out", str(d), "--per-pile", "5"]) == 0
    sheet = pd.read_csv(d / "calibration" / "blind_sheet.csv")
    for name, v in (("ann", "PASSED"), ("bob", "FAILED")):
        f = tmp_path / f"{name}.csv"
        pd.DataFrame({"blind_id": sheet.blind_id, "verdict": v}).to_csv(f, index=False)
        assert main(["ratings", "import", str(f), "--run-dir", str(d), "--rater", name]) == 0
    capsys.readouterr()
    assert main(["audit", str(d), "--target-half-width", "0.1"]) == 0
    assert "(people, 10 labels): no anytime-valid interval for pooled labels" in capsys.readouterr().out
    assert main(["audit", str(d), "--target-half-width", "0.1", "--population", "superpopulation"]) == 0
    assert "no anytime-valid interval for a superpopulation" in capsys.readouterr().out
    assert main(["gate", str(d), "--min-rate", "0.1", "--anytime", "--population", "superpopulation"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--anytime holds the finite population's rate" in err[0], err


def _sequence_line(d, order: list[str], verdict: dict[str, str], n_passed: int, n_failed: int) -> tuple[float, float]:
    """The anytime-valid interval of the labels in ``order`` (the sequence's arithmetic is checked by hand above;
    here the order is what is tested): each pile's labels in that order, the piles' sizes counted from the table."""
    key = pd.read_csv(d / "calibration" / "key.csv", dtype=str).set_index("blind_id")
    x = {p: [float(verdict[b] == "PASSED") for b in order if b in verdict and key.pile[b] == p] for p in key.pile}
    at = cell_sequence(np.array(x["passed"]), np.array(x["failed"]), n_passed, n_failed, stats.FINITE)
    return at(len(x["passed"]), len(x["failed"]))


def _shown(packet) -> list[str]:
    """The rows in the order the packet shows them: its sheet.jsonl's, line by line."""
    return [json.loads(line)["blind_id"] for line in (packet / "sheet.jsonl").read_text().splitlines()]


def _said(out: str) -> str:
    return next(x for x in out.splitlines() if x.startswith("stopping s → j"))


def test_the_rule_reads_labels_in_the_packets_order_for_the_samples_own_seed(tmp_path, capsys):
    """#76: a sample drawn with --seed 1 shows ann her rows in her order for seed 1 (packet.json's order_seed, its
    sheet.jsonl); she rates them in that order and hands them in 10 at a time. `vocab audit DIR --target-half-width`
    (the correction's seed 0) and `vocab gate --anytime` read the sequence in that order, not re-sorted by seed 0."""
    d = tmp_path / "d"
    argv = ["audit", str(_table(tmp_path, 300)), "--out", str(d), "--raters", "ann", "--per-pile", "30", "--seed", "1"]
    assert main(argv) == 0
    assert json.loads((d / "packets" / "ann" / "packet.json").read_text())["order_seed"] == 1
    shown = _shown(d / "packets" / "ann")
    rng = np.random.default_rng(11)
    verdict = {b: "PASSED" if rng.random() < 0.6 else "FAILED" for b in shown}
    for t in (10, 20, 30, 40, 50):  # her hand-ins so far, each the rows she has rated, in the packet's order
        f = tmp_path / f"ann{t}.csv"
        pd.DataFrame({"blind_id": shown[:t], "verdict": [verdict[b] for b in shown[:t]]}).to_csv(f, index=False)
        assert main(["ratings", "import", str(f), "--run-dir", str(d), "--rater", "ann", "--partial"]) == 0
    handed = {b: verdict[b] for b in shown[:50]}
    lo, hi = _sequence_line(d, shown, handed, 200, 100)  # 200 PASSED items (i % 3 != 0) and 100 FAILED
    resorted = _sequence_line(d, _seed0_order(shown), handed, 200, 100)
    assert f"{resorted[0]:.3f}–{resorted[1]:.3f}" != f"{lo:.3f}–{hi:.3f}"  # the order matters for these labels
    capsys.readouterr()
    assert main(["audit", str(d), "--target-half-width", "0.01"]) == 0
    line = _said(capsys.readouterr().out)
    assert "(ann, 50 labels): keep labelling" in line and f"interval {lo:.3f}–{hi:.3f}," in line, (line, lo, hi)
    assert main(["gate", str(d), "--min-rate", f"{lo - 0.0005:.4f}", "--anytime"]) == 0
    assert f"rate's anytime-valid lower bound {lo:.3f}" in capsys.readouterr().out


def _seed0_order(ids: list[str]) -> list[str]:
    """The order the rule read before #76: ann's order for seed 0 (sha256('0:ann') seeding numpy's permutation of
    the sorted ids, as packet.json's "order" field spells it)."""
    rng = np.random.default_rng(int.from_bytes(hashlib.sha256(b"0:ann").digest()[:8], "little"))
    s = sorted(ids)
    return [s[i] for i in rng.permutation(len(s))]


def test_a_person_handed_no_packet_is_read_in_the_order_of_their_hand_in(tmp_path, capsys):
    """Labels imported for a person who was handed no packet: the sequence reads them in their file's order."""
    d = tmp_path / "d"
    assert main(["audit", str(_table(tmp_path, 300)), "--out", str(d), "--per-pile", "30"]) == 0
    sheet = pd.read_csv(d / "calibration" / "blind_sheet.csv", dtype=str)
    rng = np.random.default_rng(12)
    order = [sheet.blind_id[i] for i in rng.permutation(len(sheet))][:45]
    verdict = {b: "PASSED" if rng.random() < 0.6 else "FAILED" for b in order}
    f = tmp_path / "ann.csv"
    pd.DataFrame({"blind_id": order, "verdict": [verdict[b] for b in order]}).to_csv(f, index=False)
    assert main(["ratings", "import", str(f), "--run-dir", str(d), "--rater", "ann", "--partial"]) == 0
    lo, hi = _sequence_line(d, order, verdict, 200, 100)
    resorted = _sequence_line(d, _seed0_order(list(sheet.blind_id)), verdict, 200, 100)
    assert f"{resorted[0]:.3f}–{resorted[1]:.3f}" != f"{lo:.3f}–{hi:.3f}"
    capsys.readouterr()
    assert main(["audit", str(d), "--target-half-width", "0.01"]) == 0
    line = _said(capsys.readouterr().out)
    assert "(ann, 45 labels)" in line and f"interval {lo:.3f}–{hi:.3f}," in line, (line, lo, hi)


def test_a_spent_sample_says_how_to_draw_more_and_the_next_stage_is_read_after_the_first(tmp_path, capsys):
    """Every sampled row rated and the interval still too wide: the line gives the command that draws more rows
    (a pilot's extension); that command works, the new rows get a packet of their own, and the sequence reads the
    first packet's rows, then the second's, each in the order its packet shows them."""
    d = tmp_path / "d"
    assert main(["audit", str(_table(tmp_path, 300)), "--out", str(d), "--raters", "ann", "--per-pile", "5"]) == 0
    first = _shown(d / "packets" / "ann")
    verdict = {b: ("PASSED", "FAILED")[i % 2] for i, b in enumerate(first)}
    f = tmp_path / "ann1.csv"
    pd.DataFrame({"blind_id": first, "verdict": [verdict[b] for b in first]}).to_csv(f, index=False)
    assert main(["ratings", "import", str(f), "--run-dir", str(d), "--rater", "ann"]) == 0
    capsys.readouterr()
    assert main(["audit", str(d), "--target-half-width", "0.1"]) == 0
    line = _said(capsys.readouterr().out)
    half = float(line.split("keep labelling: ±")[1].split(" ")[0])
    budget = math.ceil(10 * (half / 0.1) ** 2)  # ten labels times the square of how much too wide
    command = f"vocab sample --run-dir {d} --allocation pilot --budget {budget} --rater ann"
    assert "every sampled row of this cell is rated, so more must be drawn" in line and f"`{command}`" in line, line
    assert main(command.split()[1:]) == 0
    assert len(pd.read_csv(d / "calibration" / "blind_sheet.csv")) == budget
    assert main(["audit", str(d), "--raters", "ann"]) == 0
    second = _shown(d / "packets" / "ann-stage2")
    assert len(second) == budget - 10
    verdict.update({b: ("FAILED", "PASSED", "PASSED")[i % 3] for i, b in enumerate(second)})
    f = tmp_path / "ann2.csv"
    pd.DataFrame({"blind_id": second, "verdict": [verdict[b] for b in second]}).to_csv(f, index=False)
    assert main(["ratings", "import", str(f), "--run-dir", str(d), "--rater", "ann", "--partial"]) == 0
    lo, hi = _sequence_line(d, first + second, verdict, 200, 100)
    capsys.readouterr()
    assert main(["audit", str(d), "--target-half-width", "0.01"]) == 0
    line = _said(capsys.readouterr().out)
    assert f"(ann, {budget} labels)" in line and f"interval {lo:.3f}–{hi:.3f}," in line, (line, lo, hi)
