"""A benchmark's result names the commit that made it: started on a tree with uncommitted changes it refuses at once
in one line, exit 2, unless told --allow-dirty, and its result then says so."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _common(commit: str, *argv: str) -> subprocess.CompletedProcess:
    code = (
        "import sys; sys.argv = ['bench', *sys.argv[1:]]; sys.path.insert(0, 'benchmarks'); import common; "
        f"common.refuse_dirty({commit!r}, common.ALLOW_DIRTY); print(sys.argv[1:], common.ALLOW_DIRTY)"
    )
    env = {**os.environ, "VOCAB_BENCH_NO_CHECK": "1"}  # the import's own check reads the real tree; this one is told
    return subprocess.run([sys.executable, "-c", code, *argv], cwd=ROOT, capture_output=True, text=True, env=env)


def test_a_dirty_tree_is_refused_in_one_line_and_allowed_when_told():
    refused = _common("abc1234+dirty")
    lines = refused.stderr.strip().splitlines()
    assert refused.returncode == 2 and len(lines) == 1 and "--allow-dirty" in lines[0] and "abc1234+dirty" in lines[0]
    allowed = _common("abc1234+dirty", "--allow-dirty", "--sims", "3")
    assert allowed.returncode == 0 and allowed.stdout.strip() == "['--sims', '3'] True"  # the flag is taken out
    assert _common("abc1234").returncode == 0


def test_a_merge_keeps_the_commit_each_earlier_row_was_measured_at(tmp_path, monkeypatch):
    """bench_needle --merge rewrote the file under the new run's commit: rows measured at a dirty commit then read as
    measured at a clean one. Each kept row names its own commit (its own if it has one, else the file's)."""
    import json

    monkeypatch.setenv("VOCAB_BENCH_NO_CHECK", "1")
    monkeypatch.syspath_prepend(str(ROOT / "benchmarks"))
    sys.modules.pop("common", None)
    import common

    f = tmp_path / "r.json"
    f.write_text(
        json.dumps({"commit": "9ba1dce+dirty", "machine": {"isa": ["avx2"]},
                    "configs": {"a": {"x": 1}, "b": {"x": 2, "commit": "1234567", "machine": {"isa": ["avx512f"]}}}})
    )  # fmt: skip
    assert common.earlier_rows(f, "configs") == {
        "a": {"x": 1, "commit": "9ba1dce+dirty", "machine": common.UNRECORDED},
        "b": {"x": 2, "commit": "1234567", "machine": {"isa": ["avx512f"]}},
    }
    assert common.earlier_rows(tmp_path / "none.json", "configs") == {}
