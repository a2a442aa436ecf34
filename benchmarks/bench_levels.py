"""Level generator throughput: index build time, then levels per second over 10,000 consecutive levels.

Run: .venv/bin/python benchmarks/bench_levels.py [--levels 10000]
Prints one JSON object. A measurement, not a test: nothing here asserts a speed.
"""

from __future__ import annotations

import argparse
import json
import time


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--levels", type=int, default=10_000)
    ap.add_argument("--start", type=int, default=1)
    args = ap.parse_args()
    from vocab import levels

    t0 = time.perf_counter()
    lex = levels.lexicon()
    build = time.perf_counter() - t0
    t1 = time.perf_counter()
    for n in range(args.start, args.start + args.levels):
        levels.generate(n, lex)
    gen = time.perf_counter() - t1
    print(
        json.dumps(
            {
                "benchmark": "levels",
                "lexicon_words": len(lex.words),
                "index_build_s": round(build, 3),
                "levels": args.levels,
                "generate_s": round(gen, 3),
                "levels_per_s": round(args.levels / gen, 1),
            }
        )
    )


if __name__ == "__main__":
    main()
