"""Two judges on the same outputs, compared paired (vocab.estimates.paired, `vocab compare --paired`, the gate on q1
and q0 differences): expected values counted from the table's own truth column with pandas, a sample that rates every
output (the differences are then known exactly), and a simulation with a known truth."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from vocab.cli import main
from vocab.coverage.paired import paired_coverage


def _table(path: Path, n: int = 120) -> pd.DataFrame:
    """System S's n outputs judged by A (sensitivity 0.9, specificity 0.9) and B (0.95, 0.6); `truth` is whether
    the output is good (kept hidden: a column the rater does not see)."""
    rng = np.random.default_rng(5)
    rows = []
    for i in range(n):
        good = bool(rng.random() < 0.5)
        for judge, (q1, q0) in (("A", (0.9, 0.9)), ("B", (0.95, 0.6))):
            passed = rng.random() < q1 if good else rng.random() >= q0
            rows.append(
                {
                    "id": f"o{i}",
                    "system": "S",
                    "judge": judge,
                    "verdict": "PASSED" if passed else "FAILED",
                    "input": f"q{i}",
                    "output": f"answer {i}",
                    "truth": int(good),
                }
            )
    frame = pd.DataFrame(rows)
    frame.to_csv(path, index=False)
    return frame


def _audit(tmp: Path, per_pile: int) -> tuple[Path, pd.DataFrame]:
    table = _table(tmp / "two.csv")
    d = tmp / f"audit{per_pile}"
    assert main(["import", "table", str(tmp / "two.csv"), "--run-dir", str(d), "--visible", "input,output"]) == 0
    assert main(["audit", str(d), "--raters", "ann", "--per-pile", str(per_pile)]) == 0
    key = pd.read_csv(d / "calibration" / "key.csv")
    truth = table.drop_duplicates("id").set_index("id").truth
    verdict = np.where(truth.reindex(key.level).to_numpy() == 1, "PASSED", "FAILED")
    pd.DataFrame({"blind_id": key.blind_id, "verdict": verdict}).to_csv(tmp / "ann.csv", index=False)
    assert main(["ratings", "import", str(tmp / "ann.csv"), "--run-dir", str(d), "--rater", "ann"]) == 0
    return d, table


def _truth(table: pd.DataFrame) -> tuple[float, float, float, float]:
    """Each judge's sensitivity and specificity over the outputs, counted from the truth column."""
    out = []
    for judge in ("A", "B"):
        t = table[table.judge == judge]
        good, passed = t.truth == 1, t.verdict == "PASSED"
        out += [float((good & passed).sum() / good.sum()), float((~good & ~passed).sum() / (~good).sum())]
    return tuple(out)


def _run(argv, capsys):
    capsys.readouterr()
    rc = main([*map(str, argv)])
    out = capsys.readouterr()
    return rc, out.out.splitlines(), out.err.splitlines()


@pytest.fixture(scope="module")
def partial(tmp_path_factory):
    return _audit(tmp_path_factory.mktemp("paired"), 20)


def test_every_output_rated_gives_the_true_differences_exactly(tmp_path, capsys):
    """With 200 rows a pile every output is in the sample: the paired q1 and q0 differences are the truth counted
    from the table, their intervals of width 0; the rate is the share of good outputs; the judges' gap is known."""
    d, table = _audit(tmp_path, 200)
    q1a, q0a, q1b, q0b = _truth(table)
    rc, out, err = _run(["compare", d, "--json"], capsys)
    assert rc == 0 and not err
    (r,) = json.loads(out[0])["comparisons"]
    assert r["paired"] is True and (r["a"], r["b"]) == ("S__A", "S__B")
    assert r["q1_difference"] == pytest.approx(q1b - q1a) and r["q0_difference"] == pytest.approx(q0b - q0a)
    assert r["q1_ci_low"] == pytest.approx(r["q1_ci_high"]) and r["q0_ci_low"] == pytest.approx(r["q0_ci_high"])
    p = table.groupby("judge").verdict.apply(lambda v: (v == "PASSED").mean())
    assert r["raw_difference"] == pytest.approx(p["B"] - p["A"]) == pytest.approx(r["leniency_difference"])
    assert r["difference"] == 0.0


def test_a_partial_sample_pairs_with_an_interval_holding_the_truth(partial, capsys):
    d, table = partial
    q1a, q0a, q1b, q0b = _truth(table)
    rc, out, _ = _run(["compare", d, "--json"], capsys)
    (r,) = json.loads(out[0])["comparisons"]
    assert rc == 0 and r["paired"] is True
    assert r["q1_ci_low"] <= r["q1_difference"] <= r["q1_ci_high"] and r["q1_ci_high"] > r["q1_ci_low"]
    assert r["q0_ci_low"] <= q0b - q0a <= r["q0_ci_high"]
    rc, out, _ = _run(["compare", d, "--a", "A", "--b", "B", "--paired"], capsys)
    assert rc == 0 and out[1].startswith("B − A on S's same outputs (paired): one rate for both; ")
    assert "(known: both judged every output); sensitivity " in out[1] and "; specificity " in out[1]


def test_the_gate_on_a_paired_specificity_difference(partial, capsys):
    """The gate's exit follows the paired q0 difference's lower bound, as `vocab compare` prints it."""
    d, _ = partial
    _, out, _ = _run(["compare", d, "--json"], capsys)
    low = json.loads(out[0])["comparisons"][0]["q0_ci_low"]
    for margin, code in ((low - 0.01, 0), (low + 0.01, 1)):
        rc, _, _ = _run(["gate", d, "--a", "A", "--b", "B", "--min-q0-difference", round(margin, 4)], capsys)
        assert rc == code


@pytest.mark.parametrize(
    ("argv", "says"),
    [
        (["--paired"], "--paired compares one pair: name it with --a and --b"),
        (["--a", "A", "--b", "B", "--paired", "--population", "superpopulation"], "not the superpopulation"),
    ],
)
def test_bad_pairings_are_one_line_and_exit_2(partial, capsys, argv, says):
    d, _ = partial
    rc, out, err = _run(["compare", d, *argv], capsys)
    assert rc == 2 and not out and len(err) == 1 and says in err[0], err


def test_cells_of_two_systems_are_not_paired(tmp_path, capsys):
    """Two systems judged by one judge share no outputs: compared independently, and --paired refuses them; a
    stratum no one rated is named."""
    rows = [
        {
            "id": f"{s}{i}",
            "system": s,
            "judge": "J",
            "verdict": ["PASSED", "FAILED"][i % 2],
            "input": f"q{i}",
            "output": f"{s} {i}",
        }
        for s in ("x", "y")
        for i in range(20)
    ]
    pd.DataFrame(rows).to_csv(tmp_path / "t.csv", index=False)
    d = tmp_path / "d"
    assert main(["audit", str(tmp_path / "t.csv"), "--out", str(d), "--raters", "ann"]) == 0
    key = pd.read_csv(d / "calibration" / "key.csv")
    pd.DataFrame({"blind_id": key.blind_id, "verdict": "PASSED"}).to_csv(tmp_path / "r.csv", index=False)
    assert main(["ratings", "import", str(tmp_path / "r.csv"), "--run-dir", str(d), "--rater", "ann"]) == 0
    rc, out, _ = _run(["compare", d, "--json"], capsys)
    assert rc == 0 and json.loads(out[0])["comparisons"][0]["paired"] is False
    rc, _, err = _run(["compare", d, "--a", "x", "--b", "y", "--paired"], capsys)
    assert rc == 2 and "do not judge the same outputs" in err[0]


def test_an_unrated_stratum_is_named(tmp_path, capsys):
    d, table = _audit(tmp_path, 20)
    key = pd.read_csv(d / "calibration" / "key.csv")
    both = table.pivot(index="id", columns="judge", values="verdict")
    pf = set(both.index[(both.A == "PASSED") & (both.B == "FAILED")])
    ann = pd.read_csv(tmp_path / "ann.csv")
    keep = ann[~ann.blind_id.isin(key.blind_id[key.level.isin(pf)])]
    keep.to_csv(tmp_path / "short.csv", index=False)
    assert (
        main(
            [
                "ratings",
                "import",
                str(tmp_path / "short.csv"),
                "--run-dir",
                str(d),
                "--rater",
                "ann",
                "--partial",
                "--replace",
            ]
        )
        == 0
    )
    rc, _, err = _run(["compare", d, "--a", "A", "--b", "B", "--paired"], capsys)
    assert rc == 2 and f"the {len(pf)} outputs passed by A and failed by B have no output ann rated" in err[0]
    # without --paired (#76): never the independent comparison, which would difference one rate with itself; one
    # rate, the known gap, and q1 and q0 not identified but bounded by the census of verdicts, with the stratum that
    # leaves them so and what would estimate them; the bound holds the outputs' own differences (from the truth)
    rc, out, _ = _run(["compare", d, "--json"], capsys)
    r = json.loads(out[0])["comparisons"][0]
    assert rc == 0 and r["paired"] is True and r["resolved"] is False and r["difference"] == 0
    assert r["q1_difference"] is None and r["q0_difference"] is None and r["unrated_strata"] == {"PF": len(pf)}
    assert r["raw_difference"] == pytest.approx(((both.B == "PASSED").sum() - (both.A == "PASSED").sum()) / len(both))
    good = table.drop_duplicates("id").set_index("id").truth.reindex(both.index).eq(1)
    passed = both.eq("PASSED")
    q1 = (passed.B[good].mean() - passed.A[good].mean(), r["q1_ci_low"], r["q1_ci_high"])
    q0 = ((~passed.B)[~good].mean() - (~passed.A)[~good].mean(), r["q0_ci_low"], r["q0_ci_high"])
    for truth, lo, hi in (q1, q0):
        assert lo <= truth + 1e-12 and truth - 1e-12 <= hi and hi - lo < 0.5, (truth, lo, hi)
    rc, out, _ = _run(["compare", d], capsys)
    line = next(x for x in out if x.startswith("B − A on S's same outputs (paired): one rate for both"))
    pts = [f"{100 * x:+.0f}".replace("-", "−") for x in (q1[1], q1[2], q0[1], q0[2])]
    assert f"sensitivity between {pts[0]} and {pts[1]} points; specificity between {pts[2]} and {pts[3]}" in line
    assert (f"bounded: ann rated none of the {len(pf)} outputs passed by A and failed by B") in line, line
    assert "rate one output of it to estimate them" in line, line
    assert not any(x.startswith("S → B − S → A") for x in out)  # no difference of the one rate with itself


def test_the_paired_differences_hold_the_truth_and_are_narrower():
    """Simulated studies with a known truth: the paired q1 and q0 differences hold the study's own in at least
    93 % of 900 studies, narrower than the independent ones; at a nominal 50 % they hold far less often."""
    r = paired_coverage(0.5, (0.9, 0.9), (0.95, 0.6), outputs=200, piles=50, sims=900, seed=2, n_boot=800)
    assert r.defined >= 890 and r.q1_coverage >= 0.93 and r.q0_coverage >= 0.93, r
    assert r.q1_width < r.independent_q1_width and r.q0_width < r.independent_q0_width
    narrow = paired_coverage(
        0.5, (0.9, 0.9), (0.95, 0.6), outputs=200, piles=50, sims=900, seed=2, n_boot=800, confidence=0.5
    )
    assert narrow.q1_coverage < 0.7 and narrow.q0_coverage < 0.7


def test_the_docs_paired_line_is_what_vocab_prints(partial, capsys):
    """docs/audit.md's paired line was printed on this module's table at 20 rows a pile."""
    d, _ = partial
    text = (Path(__file__).resolve().parents[2] / "docs" / "audit.md").read_text()
    shown = text.split("The line reads\n\n```text\n", 1)[1].split("\n```", 1)[0]
    rc, out, _ = _run(["compare", d], capsys)
    assert rc == 0 and shown == out[1]


def test_the_reports_comparisons_show_the_paired_differences(partial, capsys, tmp_path):
    d, _ = partial
    _, out, _ = _run(["compare", d, "--json"], capsys)
    r = json.loads(out[0])["comparisons"][0]
    assert main(["report", str(d), "--out", str(tmp_path / "report")]) == 0
    text = (tmp_path / "report" / "report.md").read_text()
    row = next(line for line in text.splitlines() if line.startswith("| S → B − S → A |"))

    def pts(x):
        return f"{100 * x:+.0f}".replace("-", "−")

    assert "| the same outputs (paired) | — |" in row
    assert f"| {pts(r['q1_difference'])} [{pts(r['q1_ci_low'])}, {pts(r['q1_ci_high'])}] |" in row
    assert row.endswith(f"| {pts(r['q0_difference'])} [{pts(r['q0_ci_low'])}, {pts(r['q0_ci_high'])}] |")


def test_outputs_one_judge_left_unscored_are_not_paired(tmp_path, capsys):
    """B leaves 15 of the outputs unscored: the two cells no longer hold the same outputs, so the pair is compared
    independently, and --paired says why it cannot pair them."""
    table = _table(tmp_path / "two.csv")
    drop = (table.judge == "B") & table.id.isin([f"o{i}" for i in range(15)])
    table.loc[drop, "verdict"] = ""
    table.to_csv(tmp_path / "gaps.csv", index=False)
    d = tmp_path / "gaps"
    assert main(["import", "table", str(tmp_path / "gaps.csv"), "--run-dir", str(d), "--visible", "input,output"]) == 0
    assert main(["audit", str(d), "--raters", "ann", "--per-pile", "20"]) == 0
    key = pd.read_csv(d / "calibration" / "key.csv")
    pd.DataFrame({"blind_id": key.blind_id, "verdict": "PASSED"}).to_csv(tmp_path / "r.csv", index=False)
    assert main(["ratings", "import", str(tmp_path / "r.csv"), "--run-dir", str(d), "--rater", "ann"]) == 0
    rc, out, _ = _run(["compare", d, "--json"], capsys)
    assert rc == 0 and json.loads(out[0])["comparisons"][0]["paired"] is False
    rc, _, err = _run(["compare", d, "--a", "A", "--b", "B", "--paired"], capsys)
    assert rc == 2 and "the same outputs scored by both" in err[0]


def test_an_undefined_paired_difference_has_no_interval():
    """Every rated output good (theta 1): specificity is undefined for both judges, and so is its interval."""
    from vocab.estimates.paired import Shared, paired_comparison

    sizes = {"PP": 30, "PF": 5, "FP": 5, "FF": 10}
    stratum = {(f"o{i}", "1"): s for i, s in enumerate(["PP"] * 30 + ["PF"] * 5 + ["FP"] * 5 + ["FF"] * 10)}
    shared = Shared("S__A", "S__B", sizes, stratum)
    key = pd.DataFrame({"blind_id": [f"b{i}" for i in range(50)], "cell": "S__A",
                        "level": [f"o{i}" for i in range(50)], "attempt": 1})  # fmt: skip
    r = paired_comparison(shared, key, pd.Series(1.0, index=key.blind_id), rater="ann", n_boot=500)
    assert not np.isfinite(r["q0_difference"]) and np.isnan(r["q0_ci_low"]) and np.isnan(r["q0_ci_high"])
    assert r["q1_difference"] == pytest.approx((5 - 5) / 50) and r["q1_ci_low"] == r["q1_ci_high"]


def test_two_judges_that_mostly_agree_are_never_compared_as_independent(tmp_path, capsys):
    """#76: two judges whose verdicts differ on 6 of 400 outputs, 10 labels a pile: no output where they disagree
    is in the sample, so the paired q1 and q0 differences are not identified. The census of verdicts bounds them:
    `vocab compare` prints the bound (holding the outputs' own differences, counted from the truth: B misses 3 of the
    good outputs A passes, and passes 3 of the bad ones A fails), names the strata (counted from the table) whose
    labels would estimate them, prints no difference of the one rate, and never ranks the two cells apart."""
    rng = np.random.default_rng(3)
    good = rng.random(400) < 0.5
    a_pass = good.copy()
    b_pass = good.copy()
    b_pass[np.flatnonzero(good)[:3]] = False  # B fails 3 good outputs A passes
    b_pass[np.flatnonzero(~good)[:3]] = True  # and passes 3 bad ones A fails
    rows = [{"id": f"o{i}", "system": "S", "judge": j, "verdict": "PASSED" if v[i] else "FAILED", "input": f"q{i}",
             "output": f"answer {i}"} for i in range(400) for j, v in (("A", a_pass), ("B", b_pass))]  # fmt: skip
    pd.DataFrame(rows).to_csv(tmp_path / "t.csv", index=False)
    d = tmp_path / "d"
    assert main(["import", "table", str(tmp_path / "t.csv"), "--run-dir", str(d), "--visible", "input,output"]) == 0
    assert main(["audit", str(d), "--raters", "ann", "--per-pile", "10"]) == 0
    key = pd.read_csv(d / "calibration" / "key.csv")
    verdict = np.where(good[key.level.str[1:].astype(int)], "PASSED", "FAILED")
    pd.DataFrame({"blind_id": key.blind_id, "verdict": verdict}).to_csv(tmp_path / "ann.csv", index=False)
    assert main(["ratings", "import", str(tmp_path / "ann.csv"), "--run-dir", str(d), "--rater", "ann"]) == 0
    sampled = set(key.level)
    pf = {f"o{i}" for i in range(400) if a_pass[i] and not b_pass[i]}
    fp = {f"o{i}" for i in range(400) if b_pass[i] and not a_pass[i]}
    assert len(pf) == len(fp) == 3 and not (pf | fp) & sampled  # this seed's sample holds none of them
    rc, out, _ = _run(["compare", d], capsys)
    assert rc == 0
    line = next(x for x in out if x.startswith("B − A on S's same outputs (paired): one rate for both"))
    said = ("bounded: ann rated none of the 3 outputs passed by A and failed by B nor of the 3 outputs failed by A and "
            "passed by B")  # fmt: skip
    assert said in line and "rate one output of each to estimate them" in line, line
    rc, js, _ = _run(["compare", d, "--json"], capsys)
    r = json.loads(js[0])["comparisons"][0]
    truth = {"q1": -3 / good.sum(), "q0": -3 / (~good).sum()}
    for q in ("q1", "q0"):
        assert r[f"{q}_difference"] is None and r[f"{q}_ci_low"] <= truth[q] <= r[f"{q}_ci_high"], r
        assert r[f"{q}_ci_high"] - r[f"{q}_ci_low"] < 0.06, r  # 6 disagreements of 400 bound it closely
    assert "B passes 0 points more than A" in line  # 200 − 200 passes of 400: known
    assert not any("resolved" in x for x in out), out
    # one rate: never ranked apart, and with no other cell nothing to rank, so no ranks line (the JSON ties them)
    assert not any(x.startswith("ranks: ") for x in out), out
    rc, js, _ = _run(["compare", d, "--json"], capsys)
    assert [(r["rank_low"], r["rank_high"]) for r in json.loads(js[0])["ranks"]] == [(1, 2), (1, 2)]
    # the gate on their q1 difference reads the bound's lower end, and says why it is a bound; so does the report
    rc, out, _ = _run(["gate", d, "--a", "A", "--b", "B", "--min-q1-difference", "-0.5"], capsys)
    assert rc == 0 and f"the q1 difference's lower bound {r['q1_ci_low']:+.3f} ≥ -0.5: holds" in out[0], out
    assert said in out[0], out
    rc, out, _ = _run(["gate", d, "--a", "A", "--b", "B", "--min-q1-difference", "0"], capsys)
    assert rc == 1, out  # B is the less sensitive: its bound does not clear 0
    assert main(["report", str(d), "--out", str(tmp_path / "r")]) == 0
    md = (tmp_path / "r" / "report.md").read_text()
    assert "S → B − S → A: Sensitivity between" in md and "bounded: ann rated none" in md
    assert "| the same outputs (paired) | — |" in md and "bounded [" in md


def test_cells_known_to_share_one_rate_are_never_ranked_apart():
    """By hand: cell 0's draws all near 0.2, cell 1's near 0.8; apart they rank 2 and 1; tied (one rate), each
    may rank 1 or 2."""
    from vocab.stats.differences import rank_sets

    draws = np.stack([np.linspace(0.15, 0.25, 400), np.linspace(0.75, 0.85, 400)])[None]
    est = np.array([[0.2, 0.8]])
    apart = rank_sets(est, draws)
    assert apart.low.tolist() == [[2, 1]] and apart.high.tolist() == [[2, 1]]
    tied = rank_sets(est, draws, tied=[True])
    assert tied.low.tolist() == [[1, 1]] and tied.high.tolist() == [[2, 2]] and np.isnan(tied.pair_low).all()


def test_an_unrated_stratum_bounds_the_differences_at_its_corners():
    """100 outputs both pass (all good), 96 both fail (all bad), 4 only B passes and none of those rated: B's
    sensitivity exceeds A's by 0 (the 4 bad) up to 4/104 (the 4 good, A then missing 4 of 104); B's specificity falls
    short of A's by 0 up to 4/100 — worked out by hand from the counts."""
    from vocab.stats.paired_bounds import bounded_differences

    sizes = {h: np.array([n]) for h, n in (("PP", 100), ("PF", 0), ("FP", 4), ("FF", 96))}
    draws = {"PP": np.ones((1, 50)), "PF": np.zeros((1, 50)), "FP": np.full((1, 50), np.nan), "FF": np.zeros((1, 50))}
    got = bounded_differences(sizes, draws, 0.025)
    assert np.allclose([got["q1"][0][0], got["q1"][1][0]], [0.0, 4 / 104])
    assert np.allclose([got["q0"][0][0], got["q0"][1][0]], [-4 / 100, 0.0])


def test_judges_that_mostly_agree_are_bounded_in_every_study_and_the_bound_holds():
    """Judge B is judge A's verdict turned on about 3 % of 400 outputs (simulated, known truth): the disagreement
    strata are unrated in most studies, where the paired comparison is undefined; the bound holds the study's own q1
    and q0 differences in at least 93 % of all 300 studies and is narrow (the few disagreements bound it)."""
    r = paired_coverage(
        0.5, (0.85, 0.85), None, outputs=400, piles=10, sims=300, seed=4, n_boot=400, copies=(0.0075, 0.03)
    )
    assert r.counted == 300 and r.bounded > 150, r
    assert r.bounded_q1_coverage >= 0.93 and r.bounded_q0_coverage >= 0.93, r
    assert r.bounded_q1_width < 0.1 < r.independent_q1_width, r
