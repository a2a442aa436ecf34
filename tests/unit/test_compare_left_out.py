"""`vocab compare` names every cell it leaves out, and why (issue 75, item 3): a cell whose pile no person labelled
cannot be corrected, and the pairs, the ranks and `--json` omitted it without a word (while `--a/--b` and the gate
refuse it in one line, naming it)."""

from __future__ import annotations

import csv
import json

from vocab.cli import main


def test_a_cell_compare_cannot_correct_is_named_with_why(tmp_path, capsys):
    """Three systems judged by j; ann labelled every row of s0 and s1, and only the PASSED rows of s2: s2's FAILED
    pile has no labelled row (counted from the file below)."""
    path = tmp_path / "t.csv"
    rows = []
    for i in range(60):
        system, verdict = f"s{i % 3}", ("PASSED", "FAILED")[(i // 3) % 2]
        label = "" if system == "s2" and verdict == "FAILED" else ("PASSED", "FAILED")[i % 5 == 0]
        rows.append([f"r{i}", system, "j", verdict, f"q{i}", f"a{i}", label])
    with path.open("w", newline="") as f:
        csv.writer(f).writerows([["id", "system", "judge", "verdict", "input", "output", "label:ann"], *rows])
    assert sum(1 for r in rows if r[1] == "s2" and r[3] == "FAILED") == 10  # the pile nobody labelled
    d = tmp_path / "d"
    assert main(["import", "table", str(path), "--run-dir", str(d)]) == 0
    capsys.readouterr()
    assert main(["compare", str(d)]) == 0
    out = capsys.readouterr().out
    assert "left out (cannot be corrected): s2 → j (no row of its FAILED pile rated by ann)" in out, out
    assert "s1 → j − s0 → j" in out  # the pair that can be compared still is
    assert main(["compare", str(d), "--json"]) == 0
    got = json.loads(capsys.readouterr().out)
    assert got["left_out"] == [{"cell": "s2__j", "why": "no row of its FAILED pile rated by ann"}]
    assert {r["cell"] for r in got["ranks"]} == {"s0__j", "s1__j"}


def test_compare_reads_the_samples_record(tmp_path, capsys):
    """Issue 75, item 5: calibration/sample.json cut in half was never read by `vocab compare`, which answered in
    full where the gate, the audit and the report refuse it; now it is one line naming the file."""
    path = tmp_path / "t.csv"
    with path.open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["id", "system", "judge", "verdict", "input", "output", "label:ann"])
        for i in range(40):
            w.writerow([f"r{i}", f"s{i % 2}", "j", ("PASSED", "FAILED")[(i // 2) % 2], "q", "a", "PASSED"])
    d = tmp_path / "d"
    assert main(["import", "table", str(path), "--run-dir", str(d)]) == 0
    record = d / "calibration" / "sample.json"
    record.write_bytes(record.read_bytes()[: len(record.read_bytes()) // 2])
    capsys.readouterr()
    for argv in (["compare", str(d)], ["compare", str(d), "--json"], ["gate", str(d), "--min-rate", "0.1"]):
        assert main(argv) == 2
        err = capsys.readouterr().err.strip()
        assert len(err.splitlines()) == 1 and "sample.json" in err, (argv, err)
