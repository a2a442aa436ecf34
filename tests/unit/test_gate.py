"""`vocab gate`: exit 0 when every cell's bounds clear the thresholds, 1 when one does not, 2 on bad input; its
bounds are the report's numbers, its unscored shares counted here from the files themselves."""

from __future__ import annotations

import collections
import json
import re
import shlex
from pathlib import Path

import pandas as pd
import pytest

from tests.stored import stored_items
from vocab.cli import main

ROOT = Path(__file__).resolve().parents[2]
LOG = ROOT / "data" / "inspect" / "qa_smollm2_gemma3.eval"
REFERENCE = ROOT / "data" / "runs" / "reference"


@pytest.fixture(scope="module")
def audited(tmp_path_factory) -> Path:
    """The committed Inspect log audited, ann's hand-in: every third row FAILED, the rest PASSED."""
    tmp = tmp_path_factory.mktemp("gate")
    d = tmp / "audit"
    assert main(["audit", str(LOG), "--out", str(d)]) == 0
    sheet = pd.read_csv(d / "calibration" / "blind_sheet.csv")
    f = tmp / "ann.csv"
    verdicts = ["FAILED" if i % 3 == 0 else "PASSED" for i in range(len(sheet))]
    pd.DataFrame({"blind_id": sheet.blind_id, "verdict": verdicts}).to_csv(f, index=False)
    assert main(["ratings", "import", str(f), "--run-dir", str(d), "--rater", "ann"]) == 0
    return d


def _gate(argv, capsys) -> tuple[int, list[str], list[str]]:
    capsys.readouterr()
    rc = main(["gate", *map(str, argv)])
    out = capsys.readouterr()
    return rc, out.out.splitlines(), out.err.splitlines()


def test_the_gate_opens_and_shuts_on_either_side_of_each_bound(audited, tmp_path, capsys):
    """The bounds `vocab report` writes at full precision (report/corrected.csv, another command): the gate says
    the same value, and holds with a threshold 1e-9 below it (exit 0), not 1e-9 above (exit 1)."""
    assert main(["report", str(audited), "--out", str(tmp_path / "report")]) == 0
    table = pd.read_csv(tmp_path / "report" / "corrected.csv", float_precision="round_trip")
    row = table.query("rater == 'ann'").iloc[0].to_dict()
    row = {k: (float(v) if isinstance(v, float) else v) for k, v in row.items()}  # repr: a plain float's digits
    assert 0 < row["ci_low"] < 1 and 0 < row["q1_low"] < 1 and 0 < row["q0_low"] < 1  # ann's verdicts are mixed
    for flag, bound, check in (("--min-rate", row["ci_low"], "rate"), ("--min-q1", row["q1_low"], "q1"),
                               ("--min-q0", row["q0_low"], "q0")):  # fmt: skip
        rc, out, _ = _gate([audited, flag, repr(bound), "--json"], capsys)
        said = json.loads(out[0])["cells"][0]["checks"][0]
        assert said["check"] == check and said["lower_bound"] == bound, (said, bound)
        rc, out, err = _gate([audited, flag, repr(bound - 1e-9)], capsys)
        assert rc == 0 and len(out) == 1 and out[0].startswith("PASS ") and "holds" in out[0] and not err, out
        rc, out, err = _gate([audited, flag, repr(bound + 1e-9)], capsys)
        assert rc == 1 and out[0].startswith("FAIL ") and "does not hold" in out[0] and f"{bound:.3f}" in out[0], out
    # several thresholds: one that fails shuts the gate, and the line says which
    rc, out, _ = _gate([audited, "--min-rate", 0, "--min-q1", repr(row["q1_low"] + 1e-9)], capsys)
    assert rc == 1 and "rate's lower bound" in out[0] and out[0].count("does not hold") == 1


def _table(tmp_path: Path, cells: dict[str, list[str]]) -> Path:
    """A judgments table: per system (one judge, J), its items' verdicts."""
    rows = [{"id": f"{sys_}-{i}", "system": sys_, "judge": "J", "verdict": v, "input": f"q{i}", "output": f"a{i}"}
            for sys_, verdicts in cells.items() for i, v in enumerate(verdicts)]  # fmt: skip
    f = tmp_path / "t.csv"
    pd.DataFrame(rows).to_csv(f, index=False)
    return f


def _rate(d: Path, tmp_path: Path, rows=None) -> None:
    sheet = pd.read_csv(d / "calibration" / "blind_sheet.csv")
    sheet = sheet if rows is None else sheet[sheet.blind_id.isin(rows)]
    f = tmp_path / "ann.csv"
    pd.DataFrame({"blind_id": sheet.blind_id, "verdict": "PASSED"}).to_csv(f, index=False)
    assert main(["ratings", "import", str(f), "--run-dir", str(d), "--rater", "ann", "--partial"]) == 0


def test_the_unscored_share_is_counted_from_the_files(tmp_path, capsys):
    """Per cell, the UNSCORED items among all its items, counted from items.parquet; a cell whose items are all
    UNSCORED is gated too (no bound of it is defined: it does not hold)."""
    f = _table(tmp_path, {"A": ["PASSED", "FAILED"] * 6 + ["UNSCORED"] * 3, "B": ["UNSCORED"] * 4})
    d = tmp_path / "d"
    assert main(["audit", str(f), "--out", str(d)]) == 0
    _rate(d, tmp_path)
    rows = stored_items(d)
    share = {c: sum(r["verdict"] == "UNSCORED" for r in rows if r["system"] == c) / sum(r["system"] == c for r in rows)
             for c in ("A", "B")}  # fmt: skip
    assert share == {"A": 0.2, "B": 1.0}
    rc, out, _ = _gate([d, "--max-unscored", 0.2, "--json"], capsys)
    found = {c["cell"]: c for c in json.loads(out[0])["cells"]}
    assert rc == 1 and found["A__J"]["holds"] and not found["B__J"]["holds"]
    assert {k: v["checks"][0]["unscored_share"] for k, v in found.items()} == {"A__J": 0.2, "B__J": 1.0}
    rc, out, _ = _gate([d, "--max-unscored", 0.19], capsys)
    assert rc == 1 and all(line.startswith("FAIL ") for line in out) and len(out) == 2
    rc, out, _ = _gate([d, "--min-rate", 0], capsys)  # B has no rated row: its rate's bound is undefined
    assert rc == 1 and out[0].startswith("PASS A → J") and out[1].startswith("FAIL B → J") and "undefined" in out[1]


def test_a_cell_the_rater_did_not_cover_does_not_pass(tmp_path, capsys):
    """ann rated every row of A but only the passed pile of B: B's rate cannot be corrected, and the gate says so
    (it left such a cell out and exited 0)."""
    f = _table(tmp_path, {"A": ["PASSED", "FAILED"] * 8, "B": ["PASSED", "FAILED"] * 8})
    d = tmp_path / "d"
    assert main(["audit", str(f), "--out", str(d)]) == 0
    key = pd.read_csv(d / "calibration" / "key.csv")
    _rate(d, tmp_path, set(key.blind_id[(key.cell == "A__J") | (key.pile == "passed")]))
    rc, out, _ = _gate([d, "--min-rate", 0.01], capsys)
    assert rc == 1 and len(out) == 2 and out[0].startswith("PASS A → J") and out[1].startswith("FAIL B → J")


def test_a_runs_unscored_share_is_its_abandoned_levels(capsys):
    """On the reference run: a level with no PASSED attempt and fewer than 3 attempts was abandoned, counted here from
    levels.jsonl and the results files; the gate's share is that count over the design's levels, per cell."""
    levels = [json.loads(line)["level"] for line in (REFERENCE / "levels.jsonl").read_text().splitlines()]
    expected = {}
    for f in sorted(REFERENCE.glob("results_*.jsonl")):
        verdicts = collections.defaultdict(list)
        for line in f.read_text().splitlines():
            r = json.loads(line)
            verdicts[r["level"]].append(r["verdict"])
        lost = sum(1 for lv in levels if "PASSED" not in verdicts[lv] and len(verdicts[lv]) < 3)
        expected[f.stem.removeprefix("results_")] = lost / len(levels)
    assert 0 < min(expected.values()) < max(expected.values())
    rc, out, _ = _gate([REFERENCE, "--max-unscored", 1, "--json"], capsys)
    got = {c["cell"]: c["checks"][0]["unscored_share"] for c in json.loads(out[0])["cells"]}
    assert rc == 0 and got == pytest.approx(expected)
    middle = sorted(expected.values())[1]
    rc, out, _ = _gate([REFERENCE, "--max-unscored", middle], capsys)
    assert rc == 1 and sum(line.startswith("PASS ") for line in out) == 2 and len(out) == 4


def test_an_undefined_bound_does_not_hold():
    from vocab.estimates.gate import CellGate, Check

    g = CellGate("a__b", "ann", (Check("q1", 0.5, float("nan"), False),))
    assert not g.holds and "undefined" in g.line() and g.as_dict()["checks"][0]["lower_bound"] is None


@pytest.mark.parametrize(
    "argv, words",
    [
        (["{d}"], "give at least one threshold"),
        (["{d}", "--min-rate", "1.5"], "--min-rate must be a share between 0 and 1"),
        (["{d}", "--max-unscored", "-0.1"], "--max-unscored must be a share"),
        (["{d}", "--min-q0", "nan"], "argument --min-q0: a finite number, got 'nan'"),
        (["{d}", "--min-rate", "x"], "argument --min-rate: a number, got 'x'"),
        (["{d}", "--min-rate", ".5", "--rater", "zed"], "no blind rater 'zed' (known: ann)"),
        (["{tmp}/none", "--min-rate", ".5"], "not a directory"),
        (["{tmp}/unrated", "--min-rate", ".5"], "no blind ratings yet"),
    ],
)
def test_bad_input_to_the_gate_is_one_line_exit_2_and_nothing_written(audited, tmp_path, capsys, argv, words):
    if "{tmp}/unrated" in argv:
        assert main(["audit", str(LOG), "--out", str(tmp_path / "unrated")]) == 0
    before = sorted((p.relative_to(audited), p.stat().st_mtime_ns) for p in audited.rglob("*"))
    rc, out, err = _gate([a.format(d=audited, tmp=tmp_path) for a in argv], capsys)
    assert rc == 2 and not out and len(err) == 1 and words in err[0], err
    assert sorted((p.relative_to(audited), p.stat().st_mtime_ns) for p in audited.rglob("*")) == before


def _block(lang: str, first: str) -> str:
    text = (ROOT / "docs" / "audit.md").read_text()
    blocks = re.findall(rf"```{lang}\n(.*?)```", text, flags=re.S)
    (block,) = [b for b in blocks if b.startswith(first)]
    return block


def test_the_docs_gate_example_is_what_the_gate_prints(capsys, monkeypatch):
    monkeypatch.chdir(ROOT)
    lines = _block("sh", "$ vocab gate").splitlines()
    argv = shlex.split(lines[0].removeprefix("$ vocab "))
    rc, out, _ = _gate(argv[1:], capsys)
    assert out == lines[1 : lines.index("$ echo $?")] and lines[-1] == str(rc) == "1"


def test_the_docs_pytest_example_runs(audited):
    """The docs' pytest test, pointed at an audited dataset: it passes with the bars at 0 and fails, naming what
    does not hold, with the bars at 1."""
    code = _block("python", "from vocab.estimates.gate import gate").replace("data/audits/my-task", str(audited))
    assert "min_rate=0.6, min_q0=0.7" in code
    for bar, holds in (("0", True), ("1", False)):
        namespace: dict = {}
        exec(
            compile(code.replace("min_rate=0.6, min_q0=0.7", f"min_rate={bar}, min_q0={bar}"), "audit.md", "exec"),
            namespace,
        )
        if holds:
            namespace["test_the_judge_clears_the_bar"]()
        else:
            with pytest.raises(AssertionError, match="does not hold"):
                namespace["test_the_judge_clears_the_bar"]()
