"""The documents say what the committed files say: the README is a manual of at most 300 lines, and the `make test`
line of docs/benchmarks.md is the one benchmarks/make_test_row.py makes from the committed make_test.json."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _row_module():
    spec = importlib.util.spec_from_file_location("make_test_row", ROOT / "benchmarks" / "make_test_row.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_the_make_test_line_is_made_from_the_committed_record():
    mod = _row_module()
    record = json.loads(mod.RESULT.read_text())
    page = mod.PAGE.read_text()
    assert mod.page_with_row(page, mod.row(record)) == page, "run: python benchmarks/make_test_row.py --write"
    assert record["commit"] and not record["commit"].endswith("+dirty"), record["commit"]


def test_the_results_table_is_made_from_the_result_files():
    """docs/benchmarks.md's table of results is what benchmarks/results_page.py makes from the committed files."""
    import sys

    spec = importlib.util.spec_from_file_location("results_page", ROOT / "benchmarks" / "results_page.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules["results_page"] = mod  # a dataclass looks its module up there
    spec.loader.exec_module(mod)
    page = mod.PAGE.read_text()
    assert mod.page_with_table(page, mod.table()) == page, "run: python benchmarks/results_page.py --write"
    assert len(mod.ROWS) >= 20 and mod.table().count("\n") == len(mod.ROWS) + 1


def test_the_row_says_what_a_record_holds():
    mod = _row_module()
    record = {"seconds_total": 1750.4, "setup_seconds": 450.0, "counts": {"passed": 600, "failed": 1, "skipped": 0},
              "tests": [{"nodeid": "tests/x.py::test_a", "seconds": 300.2, "outcome": "failed"},
                        {"nodeid": "t::test_b", "seconds": 99.5, "outcome": "passed"}],
              "machine": {"cpu": "AMD EPYC", "cores": 2, "isa": ["avx2"]}, "when": "2026-12-03T18:00:00Z",
              "commit": "abc1234"}  # fmt: skip
    assert mod.row(record) == (
        "29 min 10 s in all: setup and model preparation 7 min 30 s, then 600 passed, 1 failed (failed: "
        "tests/x.py::test_a), 0 skipped in 21 min 40 s (slowest: test_a 300 s, test_b 100 s); AVX2-only 2-core AMD "
        "EPYC, 2026-12-03, commit abc1234."
    )


def test_the_readme_is_a_manual():
    readme = (ROOT / "README.md").read_text()
    assert len(readme.splitlines()) <= 300
    assert "session" not in readme.lower()  # no history of its own making: that lives in git
