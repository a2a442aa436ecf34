"""An audit at production scale: 100,000, 1,000,000 and 10,000,000 judged items (two systems, one judge), each
command's wall time and peak resident memory, beside the raw engine on the same file and `truescore audit` on the
same data in the same run.

The table is generated here, deterministically (DuckDB's ``hash`` of the row number, so for one DuckDB version):
``id, system, judge, verdict, input, output, label`` with the judge
right 85 % of the time and a person's label (the truth) on about 400 rows (truescore refuses a row without a
verdict: the unlabelled table, which vocab alone reads, has 2 % empty verdicts, UNSCORED). For
each size, each in its own child process (``/usr/bin/time``: elapsed seconds and maximum resident set size):

- ``engine``: DuckDB alone turning the CSV into Parquet and counting the piles (what the import cannot beat);
- ``import``: ``vocab import table FILE --run-dir D`` (the labels become the sample and its ratings);
- ``audit``: ``vocab audit D`` (the correction and its headline, from the labels);
- ``report``: ``vocab report D``; ``gate``: ``vocab gate D --min-rate 0.5``;
- ``import_unlabelled`` and ``audit_sample``: the same table without its label column imported, then
  ``vocab audit D2 --raters rater-a`` (the blind sample drawn, a packet made);
- ``truescore``: ``truescore audit FILE --judge verdict --gold label --id-column id --json OUT`` (0.7.4, in its own
  venv: ``--truescore PATH``), up to ``--truescore-max`` items.

Run: .venv/bin/python benchmarks/bench_audit_scale.py [--sizes 100000,1000000,10000000] [--truescore BIN]
[--work DIR]; writes benchmarks/results/audit_scale.json.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from common import ROOT, result_record, write_result  # benchmarks/common.py (this script's folder is on sys.path)

VOCAB = str(Path(sys.executable).parent / "vocab")
LABELS = 400


def make_table(path: Path, n: int, labels: bool) -> None:
    """The judged items: a deterministic table of ``n`` rows (a multiplicative hash of the row number decides)."""
    import duckdb

    unscored = "false" if labels else "true"  # truescore takes no row without a verdict: the labelled table has none
    truth = "CASE WHEN ok THEN lower(v) WHEN v = 'PASSED' THEN 'failed' ELSE 'passed' END"
    label = f", CASE WHEN pick < {LABELS / n!r} AND v <> '' THEN {truth} ELSE '' END AS label" if labels else ""

    def u(k: int) -> str:  # a uniform number in [0, 1) from the row number and k: DuckDB's hash (its 53 high bits)
        return f"((hash(i * 8 + {k}) >> 11)::DOUBLE / 9007199254740992.0)"

    duckdb.connect().execute(f"""
        COPY (SELECT id, system, judge, v AS verdict, input, output {label} FROM (
            SELECT i, 'item-' || lpad(i::VARCHAR, 9, '0') AS id,
              CASE WHEN {u(1)} < 0.5 THEN 'model-a' ELSE 'model-b' END AS system,
              'judge-x' AS judge,
              CASE WHEN {unscored} AND {u(2)} < 0.02 THEN '' WHEN {u(3)} < 0.7 THEN 'PASSED'
                ELSE 'FAILED' END AS v,
              {u(4)} < 0.85 AS ok, {u(5)} AS pick,
              'What is ' || i || ' plus ' || (i % 97) || '? Answer with a number.' AS input,
              'The answer is ' || (i + i % 97) || ', because adding them gives that.' AS output
            FROM range({n}) t(i)))
        TO '{path}' (HEADER, DELIMITER ',')""")


ENGINE = """
import duckdb, sys
con = duckdb.connect(config={"memory_limit": "512MB"})
src, out = sys.argv[1], sys.argv[2]
con.execute(f"COPY (SELECT * FROM read_csv('{src}', all_varchar=true)) TO '{out}' (FORMAT parquet, COMPRESSION zstd)")
print(con.execute(f"SELECT system, judge, verdict, count(*) FROM read_parquet('{out}') GROUP BY ALL").fetchall())
"""


def timed(argv: list[str], cwd: Path) -> dict:
    """One command in a child process: its wall time, peak resident memory and exit code."""
    r = subprocess.run(["/usr/bin/time", "-f", "%e %M", *argv], cwd=cwd, capture_output=True, text=True)
    wall, kib = r.stderr.strip().splitlines()[-1].split()
    out = {"seconds": float(wall), "peak_mib": round(int(kib) / 1024, 1), "exit": r.returncode}
    said = [line for line in r.stdout.splitlines() if " judged by " in line or line.startswith(("PASS ", "FAIL "))]
    if said:  # what the command concluded: audit's headline per cell, the gate's checks
        out["said"] = said
    if r.returncode:
        out["stderr"] = " ".join(r.stderr.strip().splitlines()[:-1])[-300:]
    return out


def one_size(n: int, work: Path, truescore: str | None, truescore_max: int) -> dict:
    work.mkdir(parents=True, exist_ok=True)
    table, bare = work / f"items{n}.csv", work / f"items{n}_unlabelled.csv"
    make_table(table, n, labels=True)
    make_table(bare, n, labels=False)
    d, d2 = work / f"d{n}", work / f"d{n}_unlabelled"
    for x in (d, d2):
        shutil.rmtree(x, ignore_errors=True)
    row: dict = {"items": n, "csv_bytes": table.stat().st_size}
    row["engine"] = timed([sys.executable, "-c", ENGINE, str(table), str(work / "engine.parquet")], work)
    row["import"] = timed([VOCAB, "import", "table", str(table), "--run-dir", str(d)], work)
    row["audit"] = timed([VOCAB, "audit", str(d)], work)
    row["report"] = timed([VOCAB, "report", str(d)], work)
    row["gate"] = timed([VOCAB, "gate", str(d), "--min-rate", "0.5"], work)
    row["import_unlabelled"] = timed([VOCAB, "import", "table", str(bare), "--run-dir", str(d2)], work)
    row["audit_sample"] = timed([VOCAB, "audit", str(d2), "--raters", "rater-a"], work)
    if truescore and n <= truescore_max:
        (work / "truescore.json").unlink(missing_ok=True)
        row["truescore"] = timed([truescore, "audit", str(table), "--judge", "verdict", "--gold", "label",
                                  "--id-column", "id", "--json", str(work / "truescore.json")], work)  # fmt: skip
        # truescore exits 2 on a finding (the judge's own rate outside its interval): its report is still written
        report = work / "truescore.json"
        if report.exists():  # what it concluded: its corrected rate (PPI++) and interval, over every item
            c = json.loads(report.read_text())["corrected"]
            row["truescore"]["said"] = {k: c[k] for k in ("point", "low", "high", "method", "n_gold", "n_total")}
        if report.exists() and not row["audit"]["exit"]:
            row["truescore_over_vocab_audit"] = round(row["truescore"]["seconds"] / row["audit"]["seconds"], 2)
    for x in (table, bare, d, d2, work / "engine.parquet", work / "truescore.json"):
        shutil.rmtree(x, ignore_errors=True) if x.is_dir() else x.unlink(missing_ok=True)
    print(row, flush=True)
    return row


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="100000,1000000,10000000")
    ap.add_argument("--truescore", default=None, help="truescore's executable (0.7.4 in a venv of its own)")
    ap.add_argument("--truescore-max", type=int, default=1_000_000, help="the largest size truescore is run at")
    ap.add_argument("--work", default=None, help="a folder for the generated tables (default: a temporary one)")
    args = ap.parse_args()
    work = Path(args.work) if args.work else Path(tempfile.mkdtemp(prefix="vocab-audit-scale-"))
    version = None
    if args.truescore:
        version = subprocess.run([str(Path(args.truescore).parent / "python"), "-c",
                                  "import truescore; print(truescore.__version__)"], capture_output=True,
                                 text=True).stdout.strip() or None  # fmt: skip
    rows = [one_size(int(s), work, args.truescore, args.truescore_max) for s in args.sizes.split(",")]
    result = result_record("audit_scale", truescore=version, labels=LABELS, rows=rows)
    print(write_result("audit_scale", result).relative_to(ROOT))


if __name__ == "__main__":
    main()
