"""Level generator: index build time, levels per second after it, and each tier's fill share, for this tree and
for a baseline revision side by side in one run (each in a fresh process, so neither warms the other's caches).

Run: .venv/bin/python benchmarks/bench_levels.py [--levels 10000] [--baseline 7a8e28f]
The baseline is the generator as it stood at that git revision (7a8e28f: generator 1.0.0, the wordfreq+web2
lexicon). Then `vocab levels 1-1000000` streamed to /dev/null in a child process: its wall time and peak memory.
Prints one JSON object and writes it to benchmarks/results/levels.json. A measurement, not a test:
nothing here asserts a speed.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from common import result_record, write_result  # benchmarks/common.py (this script's folder is on sys.path)

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
DEFAULT_BASELINE = "7a8e28f"


def _module(source: str | None):
    """vocab.levels from the work tree (None) or from a file holding a revision's copy."""
    if source is None:
        from vocab import levels

        return levels
    spec = importlib.util.spec_from_file_location("baseline_levels", source)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod  # dataclasses look their module up there
    spec.loader.exec_module(mod)
    return mod


def _fill_shares(mod, lex) -> list[float]:
    """Per tier, the share of its seed words with at least n_words + 2 candidate targets."""
    from vocab.lexicon import Lexicon, pools_of

    # The baseline has no pools: compute them with this tree's pair finder on the baseline's own lexicon.
    lx = Lexicon(lex.words, lex.zipf, lex.counts, lex.lengths, lex.info)
    out = []
    for t in range(1, mod.N_TIERS + 1):
        (pool,) = pools_of([mod.tier_settings(t)], lx)
        out.append(round(len(pool.fillable) / len(pool.seeds), 4) if len(pool.seeds) else 0.0)
    return out


def measure(source: str | None, n_levels: int, start: int) -> dict:
    t0 = time.perf_counter()
    mod = _module(source)
    lex = mod.lexicon()
    build = time.perf_counter() - t0
    t1 = time.perf_counter()
    for n in range(start, start + n_levels):
        mod.generate(n, lex)
    gen = time.perf_counter() - t1
    return {
        "generator_version": mod.GENERATOR_VERSION,
        "lexicon_words": len(lex.words),
        "index_build_s": round(build, 3),
        "generate_s": round(gen, 3),
        "levels_per_s": round(n_levels / gen, 1),
        "fill_share_by_tier": _fill_shares(mod, lex),
    }


def _git(*args: str) -> str:
    return subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True, check=True).stdout


_STREAM = """
import json, resource, subprocess, sys, time
t0 = time.perf_counter()
subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, check=True)
print(json.dumps({"seconds": time.perf_counter() - t0,
                  "peak_kib": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss}))
"""


def stream_million(levels: str = "1-1000000") -> dict:
    """``vocab levels 1-1000000`` as a user runs it (output to /dev/null): wall time and peak resident memory,
    measured by a fresh parent process whose only child it is (``ru_maxrss`` of its children)."""
    vocab = Path(sys.executable).with_name("vocab")
    out = subprocess.run([sys.executable, "-c", _STREAM, str(vocab), "levels", levels], capture_output=True, text=True,
                         check=True, cwd=ROOT)  # fmt: skip
    m = json.loads(out.stdout)
    return {"levels": levels, "seconds": round(m["seconds"], 1), "peak_rss_mib": round(m["peak_kib"] / 1024, 1)}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--levels", type=int, default=10_000)
    ap.add_argument("--start", type=int, default=1)
    ap.add_argument("--baseline", default=DEFAULT_BASELINE, help="git revision of the baseline generator")
    ap.add_argument("--one", help=argparse.SUPPRESS)  # internal: measure one generator in this process
    args = ap.parse_args()
    if args.one is not None:
        print(json.dumps(measure(args.one or None, args.levels, args.start)))
        return
    with tempfile.TemporaryDirectory() as tmp:
        old = Path(tmp) / "levels_baseline.py"
        old.write_text(_git("show", f"{args.baseline}:vocab/levels.py"))
        runs = {}
        for name, src in (("baseline", str(old)), ("current", "")):
            cmd = [sys.executable, __file__, "--one", src, "--levels", str(args.levels), "--start", str(args.start)]
            out = subprocess.run(cmd, capture_output=True, text=True, check=True, cwd=ROOT)
            runs[name] = json.loads(out.stdout.strip().splitlines()[-1])
    result = result_record(
        "levels",
        levels=args.levels,
        start=args.start,
        baseline_revision=args.baseline,
        baseline=runs["baseline"],
        current=runs["current"],
        ratio=round(runs["current"]["levels_per_s"] / runs["baseline"]["levels_per_s"], 1),
        index_build_ratio=round(runs["current"]["index_build_s"] / runs["baseline"]["index_build_s"], 2),
        stream=stream_million(),
    )
    write_result("levels", result)
    print(json.dumps(result))


if __name__ == "__main__":
    main()
