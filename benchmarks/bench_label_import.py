"""A table labelled on every row, imported: `vocab import table` of 1,000,000 rows each with a person's label (the
labelled rows are the blind sample and that person's ratings: a million-row key, sheet and ratings file), beside the
import of the same table without its label column (issue 75, item 2: 20,000 labelled rows took 11 s and 100,000 took
131 s before; 200,000 gave no answer in 300 s).

The table is generated here, deterministically, as the campaign that found it (``cases4.py``, ``many_labels``):
``id, system, judge, verdict, input, output, label:ann``, two systems, one judge, the verdicts PASSED, FAILED, PASSED
in turn and ann's labels the same turn shifted by one (so she disagrees with the judge on two rows in three). Each
import runs in its own child process (``/usr/bin/time``: elapsed seconds and maximum resident set size), the
unlabelled first; the labelled import's sample is counted from its files afterwards.

Run: .venv/bin/python benchmarks/bench_label_import.py [--rows 1000000] [--work DIR]; writes
benchmarks/results/label_import.json.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
from pathlib import Path

from bench_audit_scale import timed  # benchmarks/bench_audit_scale.py: a command's seconds and peak memory
from common import ROOT, result_record, write_result  # benchmarks/common.py (this script's folder is on sys.path)

VOCAB = str(Path(sys.executable).parent / "vocab")
TARGET = {"seconds": 60, "peak_mib": 1024}  # issue 75: a labelled million-row table within 60 s and 1 GiB


def make_table(path: Path, n: int, labels: bool) -> None:
    """``n`` rows: ids r0, r1, ...; systems sys0, sys1 in turn; the verdicts PASSED, FAILED, PASSED in turn; ann's
    label (with ``labels``) the verdict of the next row in that turn."""
    verdicts = ("PASSED", "FAILED", "PASSED")
    with path.open("w") as f:
        f.write("id,system,judge,verdict,input,output" + (",label:ann\n" if labels else "\n"))
        for i in range(n):
            label = f",{verdicts[(i + 1) % 3]}" if labels else ""
            f.write(f"r{i},sys{i % 2},judgeX,{verdicts[i % 3]},question {i},answer {i}{label}\n")


def lines(path: Path) -> int:
    with path.open("rb") as f:
        return sum(1 for _ in f) - 1  # its header


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--work", default=None, help="a folder for the generated tables (default: a temporary one)")
    args = ap.parse_args()
    work = Path(args.work) if args.work else Path(tempfile.mkdtemp(prefix="vocab-label-import-"))
    work.mkdir(parents=True, exist_ok=True)
    n = args.rows
    table, bare = work / "labelled.csv", work / "unlabelled.csv"
    make_table(table, n, labels=True)
    make_table(bare, n, labels=False)
    d, d2 = work / "labelled", work / "unlabelled"
    for x in (d, d2):
        shutil.rmtree(x, ignore_errors=True)
    row: dict = {"rows": n, "labels": n, "csv_bytes": table.stat().st_size}
    row["import_unlabelled"] = timed([VOCAB, "import", "table", str(bare), "--run-dir", str(d2)], work)
    row["import_labelled"] = timed([VOCAB, "import", "table", str(table), "--run-dir", str(d)], work)
    cal = d / "calibration"
    if (cal / "key.csv").exists():  # what the labelled import wrote: its sample and ann's ratings, a row a label
        row["sample_rows"] = lines(cal / "key.csv")
        row["ratings_rows"] = lines(cal / "ratings_ann.csv")
    row["within_target"] = all(row["import_labelled"].get(k, float("inf")) <= v for k, v in TARGET.items())
    if not args.work:
        shutil.rmtree(work, ignore_errors=True)
    print(row, flush=True)
    result = result_record("label_import", target=TARGET, rows=[row])
    print(write_result("label_import", result).relative_to(ROOT))


if __name__ == "__main__":
    main()
