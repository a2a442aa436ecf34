"""`make bench`: every benchmark, each writing benchmarks/results/<name>.json where it has one.

The ones without servers first (bench_full_design.py reads the reference run that `make demo-full` made); then
the harness against a raw generator (it starts the embedded servers, or uses running ones) and the engines side
by side (it starts and stops vLLM and llama-server itself, so no `vocab serve` may be running); then the serving
path's own (needle, sampler, rerun, profile: each starts and stops its servers).
bench_loop.py (sequential vs concurrent loop) is run on its own.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).parent
SCRIPTS = ("bench_levels.py", "bench_bootstrap.py", "bench_simulate.py", "bench_plan.py", "bench_anchors.py",
           "bench_grid_dask.py",
           "bench_full_design.py", "bench_batch_invariance.py", "bench_bandwidth.py", "bench_harness.py",
           "bench_engines.py", "bench_needle.py", "bench_sampler.py", "bench_rerun.py", "bench_profile.py")  # fmt: skip
MERGE = ("bench_needle.py", "bench_rerun.py")  # rows measured earlier (other configurations) are kept
for script in SCRIPTS:
    subprocess.run([sys.executable, str(HERE / script), *(["--merge"] if script in MERGE else [])], check=True)
