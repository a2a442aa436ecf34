"""Run every benchmark that needs no server and print one JSON line each.

The loop benchmark (bench_loop.py) needs the embedded servers (`vocab serve`) and is run on its own.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).parent
for script in ("bench_levels.py", "bench_bootstrap.py", "bench_simulate.py"):
    subprocess.run([sys.executable, str(HERE / script)], check=True)
