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
           "bench_compare.py", "bench_grid_dask.py", "bench_grid_worker.py", "bench_store_engines.py",
           "bench_audit_scale.py", "bench_label_import.py", "bench_page.py", "bench_full_design.py",
           "bench_batch_invariance.py", "bench_bandwidth.py", "bench_harness.py", "bench_engines.py",
           "bench_needle.py", "bench_sampler.py", "bench_rerun.py", "bench_profile.py")  # fmt: skip
MERGE = ("bench_needle.py", "bench_rerun.py")  # rows measured earlier (other configurations) are kept
ARGS = {"bench_grid_dask.py": ["--thetas", "0.1,0.2,0.3,0.4,0.5,0.6,0.7,0.8,0.9"],  # the full grid, as README reports
        # pyarrow in a venv of its own (each engine's process loads its own library only); truescore as make bench
        # installs it
        "bench_store_engines.py": ["--pyarrow-python", str(HERE.parent / ".cache" / "pyarrow" / "bin" / "python")],
        "bench_audit_scale.py": ["--truescore", str(Path(sys.executable).parent / "truescore")]}  # fmt: skip
for script in SCRIPTS:
    extra = [*(["--merge"] if script in MERGE else []), *ARGS.get(script, [])]
    subprocess.run([sys.executable, str(HERE / script), *extra], check=True)
