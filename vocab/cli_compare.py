"""`vocab compare DIR`: every pair of cells with its corrected difference, the judge's leniency difference and the
rank sets (:mod:`vocab.estimates.compare`); the parser beside its command."""

from __future__ import annotations

import json
from pathlib import Path

from vocab.cli_types import population_option, rater


def add_compare(sub) -> None:
    co = sub.add_parser("compare", help="differences between cells with intervals, the judge's leniency, rank sets")
    co.add_argument("run_dir", type=Path, help="an audited run or dataset (blind ratings handed in)")
    co.add_argument("--a", help="the pair's first cell (system → judge, system__judge, or a system or judge name)")
    co.add_argument("--b", help="the pair's second cell: the difference is b − a (default: every pair)")
    co.add_argument(
        "--rater", type=rater, help="whose blind ratings (a variant of the report's table; default its lead rater)"
    )
    co.add_argument(
        "--by", metavar="COLUMN", help="slices: each cell split by a column the dataset kept (a run: tier or tier-band)"
    )
    co.add_argument(
        "--paired",
        action="store_true",
        help="the pair's two judges on the same outputs, compared paired (refused when they are not)",
    )
    co.add_argument("--seed", type=int, default=0)
    population_option(co)
    co.add_argument("--json", action="store_true", help="one JSON object instead of a line per pair")
    co.set_defaults(func=cmd_compare)


def cmd_compare(args) -> int:
    from vocab.estimates.compare_dir import compare_dir
    from vocab.estimates.compare_text import lines
    from vocab.records import dir_lock

    if args.by is not None:
        from vocab.datasets.errors import CalibrationError
        from vocab.estimates import slices

        if args.a is not None or args.b is not None or args.paired:
            raise CalibrationError("--by compares every slice: give it without --a, --b and --paired")
        with dir_lock(args.run_dir):
            found = slices.slices_dir(
                args.run_dir, args.by, rater=args.rater, seed=args.seed, population=args.population
            )
        print(json.dumps(found.as_dict()) if args.json else "\n".join(slices.lines(found)))
        return 0
    with dir_lock(args.run_dir):  # read while nobody writes into it
        found = compare_dir(
            args.run_dir,
            rater=args.rater,
            a=args.a,
            b=args.b,
            seed=args.seed,
            population=args.population,
            paired=args.paired,
        )
    print(json.dumps(found.as_dict()) if args.json else "\n".join(lines(found)))
    return 0
