"""Which engine holds an imported dataset's items: pyarrow and DuckDB side by side on the same table of judged
items (bench_audit_scale's, 10,000,000 rows by default), each step in its own child process (``/usr/bin/time``:
elapsed seconds, maximum resident memory):

- ``to_parquet``: the CSV streamed into Parquet (zstd), with the pile counts per (system, judge, verdict);
- ``number_pile``: one cell's PASSED pile numbered in (group, epoch, row) order (the order the sample draws
  positions in) and 10 rows picked at positions, reading the Parquet.

pyarrow runs from ``--pyarrow-python`` (a Python with pyarrow installed, e.g. a venv of its own), so each engine's
process loads its own library only. DuckDB runs with vocab's memory limit
(:data:`vocab.datasets.items.MEMORY_LIMIT`).

Run: .venv/bin/python benchmarks/bench_store_engines.py --pyarrow-python /tmp/pa/bin/python [--items 10000000];
writes benchmarks/results/store_engines.json.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

from bench_audit_scale import make_table, timed
from common import ROOT, result_record, write_result

from vocab.datasets.items import MEMORY_LIMIT

PYARROW_TO_PARQUET = """
import sys, pyarrow as pa, pyarrow.csv as pcsv, pyarrow.parquet as pq
cols = ("id", "system", "judge", "verdict", "input", "output")
r = pcsv.open_csv(sys.argv[1], read_options=pcsv.ReadOptions(block_size=16 << 20),
                  convert_options=pcsv.ConvertOptions(column_types={c: pa.string() for c in cols}))
w, counts = None, {}
for batch in r:
    t = pa.Table.from_batches([batch])
    w = w or pq.ParquetWriter(sys.argv[2], t.schema, compression="zstd")
    w.write_table(t)
    for row in t.group_by(["system", "judge", "verdict"]).aggregate([("id", "count")]).to_pylist():
        k = (row["system"], row["judge"], row["verdict"])
        counts[k] = counts.get(k, 0) + row["id_count"]
w.close()
print(sorted(counts.items()))
"""

PYARROW_NUMBER = """
import sys, pyarrow.compute as pc, pyarrow.parquet as pq
t = pq.read_table(sys.argv[1], columns=["id", "system", "verdict"])
t = t.append_column("row", __import__("pyarrow").array(range(len(t))))
pile = t.filter(pc.and_(pc.equal(t["system"], "model-a"), pc.equal(t["verdict"], "PASSED")))
order = pc.sort_indices(pile, [("id", "ascending"), ("row", "ascending")])
print(pile.take(order.take([5, 77, 3000]))["row"].to_pylist())
"""

DUCKDB_TO_PARQUET = f"""
import sys, duckdb
con = duckdb.connect(config={{"memory_limit": "{MEMORY_LIMIT}"}})
con.execute(f"COPY (SELECT * FROM read_csv('{{sys.argv[1]}}', all_varchar=true)) TO '{{sys.argv[2]}}' (FORMAT parquet, "
            "COMPRESSION zstd)")
print(con.execute(f"SELECT system, judge, verdict, count(*) FROM read_parquet('{{sys.argv[2]}}') GROUP BY ALL "
                  "ORDER BY ALL").fetchall())
"""

DUCKDB_NUMBER = f"""
import sys, duckdb
con = duckdb.connect(config={{"memory_limit": "{MEMORY_LIMIT}"}})
print(con.execute(f"WITH t AS (SELECT id, system, verdict, file_row_number AS row FROM read_parquet('{{sys.argv[1]}}', "
                  "file_row_number=true)), pile AS (SELECT row, row_number() OVER (ORDER BY id, row) - 1 AS pos FROM t "
                  "WHERE system = 'model-a' AND verdict = 'PASSED') SELECT row FROM pile WHERE pos IN (5, 77, 3000) "
                  "ORDER BY pos").fetchall())
"""


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pyarrow-python", required=True, help="a Python with pyarrow installed")
    ap.add_argument("--items", type=int, default=10_000_000)
    ap.add_argument("--work", default=None)
    args = ap.parse_args()
    work = Path(args.work or tempfile.mkdtemp(prefix="vocab-store-engines-"))
    work.mkdir(parents=True, exist_ok=True)
    table = work / "items.csv"
    make_table(table, args.items, labels=False)
    pyarrow_version = subprocess.run([args.pyarrow_python, "-c", "import pyarrow; print(pyarrow.__version__)"],
                                     capture_output=True, text=True).stdout.strip()  # fmt: skip
    import duckdb

    rows = {}
    for engine, python, to_parquet, number in (
        ("pyarrow", args.pyarrow_python, PYARROW_TO_PARQUET, PYARROW_NUMBER),
        ("duckdb", sys.executable, DUCKDB_TO_PARQUET, DUCKDB_NUMBER),
    ):
        out = work / f"{engine}.parquet"
        rows[engine] = {
            "to_parquet": timed([python, "-c", to_parquet, str(table), str(out)], work),
            "number_pile": timed([python, "-c", number, str(out)], work),
            "parquet_bytes": out.stat().st_size if out.exists() else None,
        }
        out.unlink(missing_ok=True)
        print(engine, rows[engine], flush=True)
    table.unlink()
    versions = {"pyarrow": pyarrow_version, "duckdb": duckdb.__version__}
    result = result_record("store_engines", items=args.items, table="bench_audit_scale.make_table, unlabelled",
                           versions=versions, engines=rows)  # fmt: skip
    print(write_result("store_engines", result).relative_to(ROOT))


if __name__ == "__main__":
    main()
