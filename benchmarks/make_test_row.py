"""The `make test` line of docs/benchmarks.md, made from benchmarks/results/make_test.json (which every `make test`
writes from pytest's own reports): ``python benchmarks/make_test_row.py`` prints it, ``--write`` puts it between the
page's ``<!-- make_test: begin -->`` and ``<!-- make_test: end -->`` markers. tests/unit/test_docs.py checks that the
page holds what the committed file says."""

from __future__ import annotations

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RESULT = ROOT / "benchmarks" / "results" / "make_test.json"
PAGE = ROOT / "docs" / "benchmarks.md"
BEGIN, END = "<!-- make_test: begin -->", "<!-- make_test: end -->"


def _minutes(seconds: float) -> str:
    m, s = divmod(round(seconds), 60)
    return f"{m} min {s:02d} s"


def machine_text(machine: dict) -> str:
    isa = machine.get("isa", [])
    kind = "AVX-512" if "avx512f" in isa else "AVX2-only" if "avx2" in isa else "no AVX2"
    return f"{kind} {machine.get('cores')}-core {machine.get('cpu', 'unknown CPU')}"


def row(record: dict) -> str:
    """One line: the run's time, setup and tests apart, the counts, the slowest three, machine, date and commit."""
    counts = record["counts"]
    tested = record["seconds_total"] - record["setup_seconds"]
    slow = ", ".join(f"{t['nodeid'].split('::')[-1]} {t['seconds']:.0f} s" for t in record["tests"][:3])
    failed = [t["nodeid"] for t in record["tests"] if t["outcome"] == "failed"]
    which = f" (failed: {', '.join(failed)})" if failed else ""
    return (
        f"{_minutes(record['seconds_total'])} in all: setup and model preparation {_minutes(record['setup_seconds'])}, "
        f"then {counts['passed']} passed, {counts['failed']} failed{which}, {counts['skipped']} skipped in "
        f"{_minutes(tested)} (slowest: {slow}); {machine_text(record['machine'])}, {record['when'][:10]}, commit "
        f"{record['commit'][:12]}."
    )


def page_with_row(page: str, line: str) -> str:
    head, rest = page.split(BEGIN, 1)
    _, tail = rest.split(END, 1)
    return f"{head}{BEGIN}\n{line}\n{END}{tail}"


def main(argv: list[str]) -> int:
    line = row(json.loads(RESULT.read_text()))
    if argv[1:] == ["--write"]:
        PAGE.write_text(page_with_row(PAGE.read_text(), line))
    print(line)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv))
