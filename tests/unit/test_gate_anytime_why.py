"""`vocab gate --anytime` says why a cell's anytime-valid bound is undefined (issue 75, item 9), as `vocab audit
--target-half-width` does: it said "undefined ... does not hold" and exited 1 with no reason."""

from __future__ import annotations

import csv
import json

from vocab.cli import main


def test_an_undefined_anytime_bound_gives_its_reason(tmp_path, capsys):
    """Two people's labels from the table: the lead rater is their pool, for which no confidence sequence exists
    (a tie counts 1/2); each cell's line and its JSON say so and name the way out (--rater)."""
    path = tmp_path / "t.csv"
    with path.open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["id", "system", "judge", "verdict", "input", "output", "label:ann", "label:bob"])
        for i in range(40):
            v = ("PASSED", "FAILED")[i % 2]
            w.writerow([f"r{i}", f"s{i % 2}", "j", v, f"q{i}", f"a{i}", ("PASSED", "FAILED")[i % 3 == 0], v])
    d = tmp_path / "d"
    assert main(["import", "table", str(path), "--run-dir", str(d)]) == 0
    capsys.readouterr()
    assert main(["gate", str(d), "--anytime", "--min-rate", "0.1"]) == 1
    lines = capsys.readouterr().out.strip().splitlines()
    assert len(lines) == 2  # s0 and s1, each judged by j
    assert all("undefined (no anytime-valid interval for pooled labels" in line and "--rater" in line for line in lines)
    assert main(["gate", str(d), "--anytime", "--min-rate", "0.1", "--json"]) == 1
    cells = json.loads(capsys.readouterr().out)["cells"]
    assert all("pooled labels" in c["checks"][0]["why_undefined"] for c in cells)
    assert main(["gate", str(d), "--anytime", "--min-rate", "0.1", "--rater", "ann"]) in (0, 1)
    assert "undefined" not in capsys.readouterr().out  # one person's labels have a sequence
