"""The audit's commands: the one-command audit, its report, the gate for CI and the label planner (audit, report,
gate, plan), each parser beside its command (the chain's steps: :mod:`vocab.cli_chain`)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from vocab.cli_types import (
    UsageError,
    call_budget,
    config_option,
    finite,
    names,
    population_option,
    rater,
    refuse_given,
)


def _pairwise_source(args) -> bool:
    """Whether `vocab audit`'s source is a pairwise dataset, or a table of two systems a row."""
    from vocab.datasets.pairwise import is_pairwise
    from vocab.imports.pairwise_table import pairwise_header

    if args.source.is_dir():
        return is_pairwise(args.source)
    table = args.source_kind in (None, "table") and args.source.suffix.lower() in (".csv", ".jsonl", ".parquet")
    return table and args.source.is_file() and pairwise_header(args.source) is not None


def _audit_pairwise(args) -> int:
    """`vocab audit` of a pairwise dataset (or table): its corrected preferences, as lines or one JSON object."""
    from vocab import stats
    from vocab.estimates.pairwise import pairwise_audit
    from vocab.imports.pairwise_table import import_pairwise_table, pairwise_summary

    refuse_given(
        (
            ("--raters", args.raters),
            ("--llm-raters", args.llm_raters),
            ("--per-pile", args.per_pile),
            ("--allocation", args.allocation),
            ("--budget", args.budget),
            ("--target-half-width", args.target_half_width),
            ("--by", args.by),
            ("--strata", args.strata),
            ("--scorer", args.scorer),
            ("--assertion", args.assertion),
            ("--feedback", args.feedback),
            ("--metric", args.metric),
        ),
        "not yet for a pairwise dataset (its people's labels come in the table's label:NAME columns)",
    )
    if args.population != stats.FINITE:
        refuse_given(
            (("--population", args.population),),
            "a pairwise dataset's shares are of its own items (the finite population) only",
        )
    say = (lambda line: print(line, file=sys.stderr)) if args.json else print
    d = args.source
    if args.source.is_file():
        if args.out is None:
            raise UsageError(f"{args.source} is a file: name a new directory for its dataset with --out")
        d = import_pairwise_table(args.source, args.out)
        say(pairwise_summary(d))
    elif args.out is not None and args.out.resolve() != d.resolve():
        raise UsageError(f"{d} is a directory: it is audited in place (leave out --out)")
    a = pairwise_audit(d, seed=args.seed)
    if args.json:
        print(json.dumps(a.json(args.ties or "half"), indent=1))
    else:
        print("\n".join(a.lines()))
    return 0


def cmd_audit(args) -> int:
    if _pairwise_source(args):
        return _audit_pairwise(args)
    refuse_given((("--ties", args.ties),), "for a pairwise dataset (A, B or tie)")
    from vocab.audit import audit_locked

    raters = names(args.raters, "--raters") if args.raters is not None else ()
    llm = names(args.llm_raters, "--llm-raters") if args.llm_raters is not None else ()
    a = audit_locked(
        args.source,
        args.out,
        raters=raters,
        llm_raters=llm,
        config=args.config,
        per_pile=args.per_pile,
        seed=args.seed,
        max_calls=args.max_calls,
        source_kind=args.source_kind,
        scorer=args.scorer,
        assertion=args.assertion,
        feedback=args.feedback,
        metric=args.metric,
        population=args.population,
        allocation=args.allocation,
        budget=args.budget,
        target_half_width=args.target_half_width,
        by=args.by,
        strata=args.strata,
        say=(lambda line: print(line, file=sys.stderr)) if args.json else print,
    )
    print(json.dumps(a.json(), indent=1) if args.json else "\n".join(a.lines()))
    return 0


def cmd_report(args) -> int:
    from vocab import report

    if not args.run_dir.is_dir():
        raise UsageError(f"{args.run_dir}: not a directory (a run or an imported dataset)")
    from vocab.records import dir_lock

    raters = list(names(args.raters, "--raters")) if args.raters is not None else None
    with dir_lock(args.run_dir):  # read while nobody writes into it
        paths = report.write(args.run_dir, raters, args.out, force=args.force, population=args.population)
    for p in paths:
        print(p)
    return 0


def cmd_gate(args) -> int:
    from vocab.estimates.gate import difference_gate, gate
    from vocab.records import dir_lock

    if not args.run_dir.is_dir():  # before the lock, which would make it
        raise UsageError(f"{args.run_dir}: not a directory (a run or an imported dataset)")

    margins = {
        "min_difference": args.min_difference,
        "min_q1_difference": args.min_q1_difference,
        "min_q0_difference": args.min_q0_difference,
    }
    if args.a is not None or args.b is not None or any(v is not None for v in margins.values()):
        floors = [f for f in ("min_rate", "min_q1", "min_q0", "max_unscored") if getattr(args, f) is not None]
        if args.a is None or args.b is None:
            raise UsageError("a gate on a difference names both cells, --a OLD --b NEW")
        if args.anytime:
            raise UsageError("--anytime holds a cell's --min-rate; a gate on a difference has no sequence yet")
        if floors:
            raise UsageError(
                f"--{floors[0].replace('_', '-')} gates each cell; with --a and --b give "
                "--min-difference, --min-q1-difference or --min-q0-difference"
            )
        with dir_lock(args.run_dir):  # read while nobody writes into it
            g = difference_gate(
                args.run_dir, a=args.a, b=args.b, rater=args.rater, population=args.population, **margins
            )
        print(json.dumps(g.as_dict()) if args.json else g.line())
        return 0 if g.holds else 1
    with dir_lock(args.run_dir):  # read while nobody writes into it
        cells = gate(
            args.run_dir,
            min_rate=args.min_rate,
            min_q1=args.min_q1,
            min_q0=args.min_q0,
            max_unscored=args.max_unscored,
            rater=args.rater,
            population=args.population,
            anytime=args.anytime,
        )
    if args.json:
        print(json.dumps({"holds": all(c.holds for c in cells), "cells": [c.as_dict() for c in cells]}))
    else:
        print("\n".join(c.line() for c in cells))
    return 0 if all(c.holds for c in cells) else 1


def cmd_plan(args) -> int:
    from vocab.coverage.pilot import plan_request

    p = plan_request(
        args.pilot,
        theta=args.theta,
        q1=args.q1,
        q0=args.q0,
        attempts=args.attempts,
        rater=args.rater,
        half_width=args.half_width,
        method=args.method,
        sims=args.sims,
        seed=args.seed,
        n_boot=args.n_boot,
        population=args.population,
        allocation=args.allocation,
    )
    print(json.dumps(p.as_dict()) if args.json else p.text())
    return 0


def add_audit(sub) -> None:
    """The audit, report, gate and plan commands on the subparsers ``sub``."""
    from vocab.coverage import METHODS
    from vocab.imports.registry import NAMES as HARNESS_NAMES
    from vocab.imports.registry import files_text
    from vocab.stats import DEFAULT_INTERVAL

    au = sub.add_parser("audit", help="a judge's verdicts to blind raters' packets, and back to a corrected rate")
    config_option(au)
    au.add_argument("source", type=Path, help=f"{files_text()}, or a run/dataset dir")
    kinds = "what a file is (default: by its suffix; a .json is told apart by its contents)"
    au.add_argument("--source", dest="source_kind", choices=HARNESS_NAMES, help=kinds)
    au.add_argument("--out", type=Path, help="a new directory for a file's dataset (a directory is audited in place)")
    au.add_argument("--raters", help="comma-separated human raters: a packet each")
    au.add_argument("--llm-raters", help="comma-separated models of the config as isolated blind raters (servers up)")
    au.add_argument(
        "--per-pile",
        type=int,
        default=None,
        help="rows per pile per cell (default 10; with --allocation pilot, the pilot's)",
    )
    au.add_argument(
        "--allocation",
        choices=("equal", "proportional", "pilot"),
        default=None,
        help="how a cell's labels are split between the judge's PASSED and FAILED piles: equal (the "
        "default, --per-pile each), proportional (--budget split by the piles' shares) or pilot "
        "(--per-pile each first, then the rest of --budget by the spread the pilot's ratings show)",
    )
    au.add_argument(
        "--budget",
        type=int,
        default=None,
        help="labels per cell in all (proportional: default twice --per-pile; pilot: needed)",
    )
    au.add_argument(
        "--target-half-width",
        type=finite,
        default=None,
        help="with ratings: per cell whether to stop labelling, by an interval valid however often it is read",
    )
    au.add_argument(
        "--by",
        metavar="COLUMN",
        help="with ratings: each cell's slices by a column the dataset kept (a run: tier or tier-band); on an "
        "imported dataset's first call the sample is drawn by slice and pile, --per-pile rows each",
    )
    au.add_argument(
        "--strata",
        metavar="score|COLUMN",
        help="first call, an imported dataset: draw each pile by strata, bands of the judge's score or a column's "
        "values (--per-pile rows a pile shared over its strata, at least 3 each); the rate weights them back",
    )
    au.add_argument("--json", action="store_true", help="the rates as one JSON object (the steps' lines go to stderr)")
    au.add_argument(
        "--ties",
        choices=("half", "dropped"),
        help="a pairwise dataset's --json: the win rate counts a tie half a win (default) or drops ties",
    )
    au.add_argument("--seed", type=int, default=0)
    au.add_argument("--max-calls", type=call_budget, default=None)
    au.add_argument("--scorer", help="Inspect: the scorer whose grades are the verdicts")
    au.add_argument("--assertion", help="promptfoo: the judge's assertion, by metric or type")
    au.add_argument("--feedback", help="MLflow: the judge's feedback name")
    au.add_argument("--metric", help="DeepEval: the judge's metric")
    population_option(au)
    au.set_defaults(func=cmd_audit)

    rp = sub.add_parser("report", help="a self-contained report.html and report.md of an audit (run or dataset)")
    rp.add_argument("run_dir", type=Path, help="a run or dataset directory with a blind sample and ratings")
    rp.add_argument("--raters", help="comma-separated raters (default: every rater with a ratings file)")
    rp.add_argument("--out", type=Path, help="where to write (default: <run_dir>/report)")
    rp.add_argument("--force", action="store_true", help="replace a report already in --out")
    population_option(rp)
    rp.set_defaults(func=cmd_report)

    ga = sub.add_parser("gate", help="exit 0 when every cell's interval clears the thresholds, 1 when one does not")
    ga.add_argument("run_dir", type=Path, help="an audited run or dataset (blind ratings handed in)")
    for flag, what in (
        ("--min-rate", "the corrected pass rate's 95 %% interval"),
        ("--min-q1", "the judge's sensitivity q1 (its interval)"),
        ("--min-q0", "the judge's specificity q0 (its interval)"),
    ):
        ga.add_argument(flag, type=finite, help=f"a floor for the lower end of {what}")
    ga.add_argument("--max-unscored", type=finite, help="a ceiling for the share of units lost before a verdict")
    ga.add_argument(
        "--anytime",
        action="store_true",
        help="hold --min-rate with the interval valid however often it is read (a gate run after every batch)",
    )
    ga.add_argument(
        "--rater", type=rater, help="whose blind ratings (a variant of the report's table; default its lead rater)"
    )
    ga.add_argument("--a", help="with --b: gate on the difference b − a (e.g. the old system)")
    ga.add_argument("--b", help="the new system: b − a's interval against the --min-*-difference margins")
    for flag, what in (
        ("--min-difference", "b − a's corrected rates"),
        ("--min-q1-difference", "b − a's q1"),
        ("--min-q0-difference", "b − a's q0"),
    ):
        ga.add_argument(flag, type=finite, help=f"a margin for the lower end of {what} (negative: non-inferiority)")
    ga.add_argument("--json", action="store_true", help="one JSON object instead of a line per cell")
    population_option(ga)
    ga.set_defaults(func=cmd_gate)

    pl = sub.add_parser("plan", help="how many rows per pile a target half-width needs, by simulation")
    pl.add_argument(
        "pilot",
        nargs="?",
        type=Path,
        help="a run or dataset with some blind ratings: its estimates are the guesses (per cell)",
    )
    pl.add_argument("--theta", type=finite, help="a guess of the true pass rate")
    pl.add_argument("--q1", type=finite, help="a guess of the critic's sensitivity")
    pl.add_argument("--q0", type=finite, help="a guess of the critic's specificity")
    pl.add_argument("--attempts", type=int, help="judged items (attempts) in the cell")
    pl.add_argument(
        "--rater", type=rater, help="with a pilot: whose ratings (default: the people, else the rater with most rows)"
    )
    pl.add_argument("--half-width", type=finite, required=True, help="the target: mean half-width of the interval")
    pl.add_argument("--method", choices=METHODS, default=DEFAULT_INTERVAL, help=f"(default {DEFAULT_INTERVAL})")
    pl.add_argument("--sims", type=int, default=1000, help="simulated studies per size tried (default 1000)")
    pl.add_argument("--n-boot", type=int, default=1000, help="draws per interval (default 1000)")
    pl.add_argument("--seed", type=int, default=0)
    pl.add_argument(
        "--allocation",
        choices=("equal", "proportional", "pilot"),
        default="equal",
        help="equal: plan rows a pile (the default); proportional or pilot: plan a cell's labels, split by the piles' "
        "shares or by Neyman's split at the spreads the guesses (or the pilot's ratings) give",
    )
    pl.add_argument("--json", action="store_true")
    population_option(pl)
    pl.set_defaults(func=cmd_plan)
