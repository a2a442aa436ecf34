"""`vocab audit`: from a judge's verdicts (the committed Inspect log, a table) to packets, and after a hand-in to the
corrected rate; nothing written is redrawn on the second pass; bad input is one line."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pandas as pd
import pytest

from vocab.cli import main

ROOT = Path(__file__).resolve().parents[2]
LOG = ROOT / "data" / "inspect" / "qa_smollm2_gemma3.eval"
PROMPTFOO = ROOT / "data" / "promptfoo" / "qa_smollm2_gemma3.json"


def _hashes(d: Path) -> dict[str, str]:
    return {
        str(p.relative_to(d)): hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(d.rglob("*")) if p.is_file()
    }


def _ann_hands_in_all_passed_and_audits_again(d: Path, tmp_path: Path, capsys, raters: str) -> str:
    sheet = pd.read_csv(d / "calibration" / "blind_sheet.csv")
    rated = tmp_path / "ann.csv"
    pd.DataFrame({"blind_id": sheet.blind_id, "verdict": "PASSED"}).to_csv(rated, index=False)
    assert main(["ratings", "import", str(rated), "--run-dir", str(d), "--rater", "ann"]) == 0
    capsys.readouterr()
    assert main(["audit", str(d), "--raters", raters]) == 0
    return capsys.readouterr().out


def test_an_inspect_log_to_packets_then_to_a_corrected_rate(tmp_path, capsys):
    d = tmp_path / "audit"
    assert main(["audit", str(LOG), "--out", str(d), "--raters", "ann,bob"]) == 0
    out = capsys.readouterr().out
    assert (d / "packets" / "ann" / "packet.json").exists() and (d / "packets" / "bob" / "packet.json").exists()
    assert "ratings ann: none" in out and "next: hand each packet" in out and "the pass rate is" not in out
    before = _hashes(d)
    # ann hands in a complete sheet: every row graded as the truth her sheet shows (here: all PASSED)
    out = _ann_hands_in_all_passed_and_audits_again(d, tmp_path, capsys, "ann,bob")
    assert "ratings ann: complete" in out and "ratings bob: none" in out
    headline = [line for line in out.splitlines() if "the pass rate is" in line]
    assert headline and all("against ann's blind ratings (11 of 11 sampled rows) the pass rate is 100 %" in line
                            for line in headline), headline  # fmt: skip
    after = _hashes(d)
    assert {k: v for k, v in after.items() if k in before} == before  # the sample and packets were not redrawn
    assert set(after) - set(before) == {"calibration/ratings_ann.csv"}


def test_promptfoo_results_to_packets_then_to_a_corrected_rate(tmp_path, capsys):
    """The committed promptfoo results (a .json, told apart from an Inspect log by its contents): the judge's
    llm-rubric verdicts to a packet, and after a hand-in to the headline."""
    d = tmp_path / "audit"
    assert main(["audit", str(PROMPTFOO), "--out", str(d), "--raters", "ann", "--per-pile", "4"]) == 0
    out = capsys.readouterr().out
    assert "16 judged items (promptfoo): 2 PASSED, 14 FAILED" in out and "ann.zip" in out
    # before the sample: what 4 rows a pile would give at the judge's rate and a stated guess. By hand: the judge
    # passed 2 of 16, so 4 rows a pile draw 2 + 4 = 6 labels (the sample below has 6 rows); the half-width is what
    # `vocab coverage` says for those guesses, the command a user checks it with; like with like: both for the finite
    # population, the audit's default and `vocab coverage`'s
    assert ("plan smollm2__gemma3: 16 judged, the judge says 12%; 4 rows a pile (6 labels here: 2 of the 2 PASSED, "
            "4 of the 14 FAILED)") in out  # fmt: skip
    cov = ["coverage", "--method", "fiducial", "--theta", str(2 / 16), "--q1", ".9", "--q0", ".9", "--attempts", "16",
           "--piles", "4", "--sims", "300", "--seed", "0", "--n-boot", "300", "--json"]  # fmt: skip
    assert main(cov) == 0
    half = json.loads(capsys.readouterr().out)["mean_width"] / 2
    assert f"give about ±{half:.2f} if the judge is right 90% of the time" in out
    assert (d / "packets" / "ann.zip").exists()
    sheet = pd.read_csv(d / "calibration" / "blind_sheet.csv")
    assert list(sheet.columns) == ["blind_id", "input", "output", "rubric"]  # no verdict, reason or grader
    out = _ann_hands_in_all_passed_and_audits_again(d, tmp_path, capsys, "ann")
    assert "plan smollm2__gemma3" not in out  # the sample was drawn: no plan for it any more
    assert "smollm2 judged by gemma3: the judge says 12 %; against ann's blind ratings (6 of 6" in out, out
    # the same file said to be an Inspect log is refused by Inspect's reader, in one line
    assert main(["audit", str(PROMPTFOO), "--out", str(tmp_path / "e"), "--source", "inspect"]) == 2
    assert "not an Inspect log" in capsys.readouterr().err and not (tmp_path / "e").exists()


def test_a_table_source_with_a_known_rater_reports_at_once(tmp_path, capsys):
    t = tmp_path / "t.csv"
    rows = [{"id": f"i{i}", "system": "s", "judge": "j", "verdict": "PASSED" if i % 3 else "FAILED", "input": "q",
             "output": f"o{i}"} for i in range(60)]  # fmt: skip
    pd.DataFrame(rows).to_csv(t, index=False)
    assert main(["audit", str(t), "--out", str(tmp_path / "d"), "--raters", "ann", "--per-pile", "5"]) == 0
    assert "blind sample: 10 rows" in capsys.readouterr().out


def test_each_cells_headline_counts_its_own_rows(tmp_path, capsys):
    """#76: three systems under one judge, 5 rows a pile each; ann rates all of one cell's rows and 4 of another's.
    Each headline counts the rows its own rate reads, of the rows sampled from that cell (counted from key.csv),
    not the whole sheet's."""
    t = tmp_path / "t.csv"
    rows = [{"id": f"i{i}", "system": f"s{i % 3}", "judge": "j", "verdict": "PASSED" if i % 2 else "FAILED",
             "input": "q", "output": f"o{i}"} for i in range(90)]  # fmt: skip
    pd.DataFrame(rows).to_csv(t, index=False)
    d = tmp_path / "d"
    assert main(["audit", str(t), "--out", str(d), "--raters", "ann", "--per-pile", "5"]) == 0
    key = pd.read_csv(d / "calibration" / "key.csv", dtype=str)
    cells = {c: list(k.sort_values(["pile", "blind_id"]).blind_id) for c, k in key.groupby("cell")}
    assert sorted(cells) == ["s0__j", "s1__j", "s2__j"] and all(len(v) == 10 for v in cells.values())
    mine = cells["s0__j"] + cells["s1__j"][:4] + cells["s1__j"][-4:]  # s1: 4 rows of each pile; s2: none
    rated = tmp_path / "ann.csv"
    pd.DataFrame({"blind_id": mine, "verdict": "PASSED"}).to_csv(rated, index=False)
    assert main(["ratings", "import", str(rated), "--run-dir", str(d), "--rater", "ann", "--partial"]) == 0
    capsys.readouterr()
    assert main(["audit", str(d)]) == 0
    out = capsys.readouterr().out
    assert "s0 judged by j: the judge says 50 %; against ann's blind ratings (10 of 10 sampled rows)" in out, out
    assert "s1 judged by j: the judge says 50 %; against ann's blind ratings (8 of 10 sampled rows)" in out, out
    assert "(18 of 30 sampled rows)" not in out


@pytest.mark.parametrize(
    "argv, words",
    [
        (["audit", "{tmp}/x.txt", "--out", "{tmp}/d"], "unknown kind of source"),
        (["audit", str(LOG)], "name a new directory for its dataset with --out"),
        (["audit", "{tmp}/none.eval", "--out", "{tmp}/d"], "no such file"),
        (["audit", str(LOG), "--out", "{tmp}/d", "--raters", "1bad"], "rater name"),
        (["audit", str(LOG), "--out", "{tmp}/d", "--raters", "script"], "machine rater"),
        (["audit", str(LOG), "--out", "{tmp}/d", "--raters", ","], "none empty"),
        (["audit", str(LOG), "--out", "{tmp}/d", "--per-pile", "0"], "--per-pile must be positive"),
        (["audit", "{tmp}", "--out", "{tmp}/d"], "audited in place"),
        (["audit", "{tmp}"], "neither a run"),
    ],
)
def test_bad_input_to_audit_is_one_line_and_writes_nothing(tmp_path, capsys, argv, words):
    (tmp_path / "x.txt").write_text("hello")
    before = _hashes(tmp_path)
    assert main([a.format(tmp=tmp_path) for a in argv]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and words in err[0], err
    assert _hashes(tmp_path) == before and not (tmp_path / "d").exists()
