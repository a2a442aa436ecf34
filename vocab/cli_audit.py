"""The commands of the calibration chain and the audit (sample, rate, packet, form, ratings, import, audit,
report, gate, plan): each parses its options and calls one library function (:mod:`vocab.cli` runs them)."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

from vocab.cli_types import UsageError, call_budget, config_option, finite, names, population_option
from vocab.config import load_config
from vocab.layout import RunDir


def cmd_sample(args) -> int:
    from vocab.cluster import check_scheduler
    from vocab.raters.chain import sample_step

    jobs = check_scheduler(args.scheduler, args.jobs)
    for line in sample_step(args.run_dir, per_pile=args.per_pile, budget=args.budget, allocation=args.allocation,
                            rater=args.rater, seed=args.seed, scheduler=args.scheduler, jobs=jobs):  # fmt: skip
        print(line)
    return 0


def cmd_calibrate(args) -> int:
    from vocab.raters.chain import calibrate_run

    cfg = load_config(args.config)
    raters = [r.strip() for r in args.raters.split(",") if r.strip()]
    for r in raters:
        cfg.model(r)
    complete = calibrate_run(cfg, args.run_dir, raters, args.max_calls, print, args.per_pile, args.seed)
    return 0 if len(complete) == len(raters) else 1


def _imported(out, args, notes: list[str] = ()) -> int:
    """An import's last step: the dataset named (``--name``, the report's title), and what it holds said."""
    from vocab.datasets.dataset import name_dataset
    from vocab.imports import summary

    if args.name is not None:
        name_dataset(out, args.name)
    print("\n".join([summary(out), *notes]))
    return 0


def cmd_import_inspect(args) -> int:
    from vocab.imports import INSPECT_FAIL, INSPECT_PASS, INSPECT_QUESTION, import_inspect

    passes = names(args.pass_values, "--pass-values") if args.pass_values is not None else INSPECT_PASS
    fails = names(args.fail_values, "--fail-values") if args.fail_values is not None else INSPECT_FAIL
    out = import_inspect(args.log, args.run_dir, scorer=args.scorer, pass_values=passes, fail_values=fails,
                         question=args.question or INSPECT_QUESTION, judge=args.judge)  # fmt: skip
    return _imported(out, args)


def cmd_import_promptfoo(args) -> int:
    from vocab.imports import PROMPTFOO_QUESTION, import_promptfoo

    out = import_promptfoo(args.results, args.run_dir, assertion=args.assertion,
                           question=args.question or PROMPTFOO_QUESTION, judge=args.judge)  # fmt: skip
    return _imported(out, args)


def cmd_import_table(args) -> int:
    from vocab.datasets.dataset import DEFAULT_QUESTION
    from vocab.imports import import_table

    visible = list(names(args.visible, "--visible")) if args.visible is not None else None
    words = {k: names(v, f"--{k.replace('_', '-')}") for k in ("pass_values", "fail_values")
             if (v := getattr(args, k)) is not None}  # fmt: skip
    notes: list[str] = []
    if args.file.is_dir():  # a table held as Parquet parts: imported on Dask
        from vocab.cluster import check_scheduler
        from vocab.imports.parts import import_parts

        jobs = check_scheduler(args.scheduler or "local", args.jobs)
        out = import_parts(args.file, args.run_dir, visible, args.question or DEFAULT_QUESTION, seed=args.seed,
                           notes=notes, scheduler=args.scheduler or "local", jobs=jobs, rater=args.rater,
                           pass_at=args.pass_at, **words)  # fmt: skip
        return _imported(out, args, notes)
    if (args.scheduler is not None or args.jobs is not None) and args.file.is_file():
        raise UsageError(f"--scheduler, --jobs: for a folder of Parquet parts; {args.file} is one file "
                         "(imported on this machine)")  # fmt: skip
    out = import_table(args.file, args.run_dir, visible, args.question or DEFAULT_QUESTION, seed=args.seed,
                       notes=notes, rater=args.rater, pass_at=args.pass_at, **words)  # fmt: skip
    return _imported(out, args, notes)


def cmd_import_mlflow(args) -> int:
    from vocab.imports.mlflow_traces import MLFLOW_FAIL, MLFLOW_PASS, MLFLOW_QUESTION, import_mlflow

    passes = names(args.pass_values, "--pass-values") if args.pass_values is not None else MLFLOW_PASS
    fails = names(args.fail_values, "--fail-values") if args.fail_values is not None else MLFLOW_FAIL
    notes: list[str] = []
    out = import_mlflow(args.traces, args.run_dir, tracking_uri=args.tracking_uri, experiment_id=args.experiment_id,
                        seed=args.seed, notes=notes, feedback=args.feedback, judge=args.judge, pass_values=passes,
                        fail_values=fails, pass_at=args.pass_at, system=args.system,
                        question=args.question or MLFLOW_QUESTION)  # fmt: skip
    return _imported(out, args, notes)


def cmd_import_deepeval(args) -> int:
    from vocab.imports.deepeval_runs import DEEPEVAL_QUESTION, import_deepeval

    out = import_deepeval(args.file, args.run_dir, metric=args.metric, judge=args.judge, system=args.system,
                          question=args.question or DEEPEVAL_QUESTION)  # fmt: skip
    return _imported(out, args)


def cmd_rate(args) -> int:
    from vocab.raters.raters import rate_with_config, write_script_ratings

    if not RunDir(args.run_dir).sheet.exists():
        raise UsageError(f"{args.run_dir}: no calibration/blind_sheet.jsonl (draw the sample first: vocab sample)")
    if args.model == "script":
        print(write_script_ratings(args.run_dir))
        return 0
    progress = rate_with_config(load_config(args.config), args.run_dir, args.model, args.rater or args.model,
                                max_tokens=args.max_tokens, max_calls=args.max_calls)  # fmt: skip
    print(json.dumps(progress.as_dict()))
    return 0 if progress.complete else 1


def cmd_packet(args) -> int:
    from vocab.raters.packet import make_packet

    if args.format == "label-studio":
        from vocab.raters.label_studio import make_label_studio_packet

        out = make_label_studio_packet(args.run_dir, args.rater, seed=args.seed)
        print(f"{out}: a Label Studio project for rater {args.rater} (README.txt says how to load it and hand in "
              "the export)")  # fmt: skip
        return 0
    out = make_packet(args.run_dir, args.rater, seed=args.seed)
    print(f"{out}: the packet of rater {args.rater}. Hand the rater {out.with_suffix('.zip')}: they unzip it and "
          f"open {out.name}/rate.html in a browser (README.txt says how; vocab users may use vocab form "
          f"{out.name}.zip); nothing of the run is in it")  # fmt: skip
    return 0


def cmd_form(args) -> int:
    from vocab.raters.form import lab_argv, open_packet

    packet, notes = open_packet(args.packet, args.into, same_machine=args.same_machine)
    for note in notes:
        print(note, file=sys.stderr)
    argv = lab_argv(packet, args.port, no_browser=args.no_browser, token=args.token)
    os.execv(argv[0], argv)  # JupyterLab takes over this process: Ctrl-C stops it as usual


def cmd_ratings_import(args) -> int:
    from vocab.raters.raters import import_ratings

    try:
        print(import_ratings(args.file, args.run_dir, args.rater, partial=args.partial, replace=args.replace).text())
    except FileNotFoundError as e:
        raise UsageError(f"{e.filename or args.file}: no such file") from None
    return 0


def cmd_audit(args) -> int:
    from vocab.audit import audit_locked

    raters = names(args.raters, "--raters") if args.raters is not None else ()
    llm = names(args.llm_raters, "--llm-raters") if args.llm_raters is not None else ()
    a = audit_locked(args.source, args.out, raters=raters, llm_raters=llm, config=args.config, per_pile=args.per_pile,
                     seed=args.seed, max_calls=args.max_calls, source_kind=args.source_kind, scorer=args.scorer,
                     assertion=args.assertion, feedback=args.feedback, metric=args.metric,
                     population=args.population, allocation=args.allocation, budget=args.budget,
                     target_half_width=args.target_half_width, by=args.by,
                     strata=args.strata)  # fmt: skip
    for name, state in sorted(a.rated.items()):
        print(f"ratings {name}: {state}")
    print("\n".join([*a.headline, *a.comparisons, *a.slices, *a.stopping, f"next: {a.next_step}"]))
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
        g = difference_gate(args.run_dir, a=args.a, b=args.b, rater=args.rater, population=args.population, **margins)
        print(json.dumps(g.as_dict()) if args.json else g.line())
        return 0 if g.holds else 1
    cells = gate(args.run_dir, min_rate=args.min_rate, min_q1=args.min_q1, min_q0=args.min_q0,
                 max_unscored=args.max_unscored, rater=args.rater, population=args.population,
                 anytime=args.anytime)  # fmt: skip
    if args.json:
        print(json.dumps({"holds": all(c.holds for c in cells), "cells": [c.as_dict() for c in cells]}))
    else:
        print("\n".join(c.line() for c in cells))
    return 0 if all(c.holds for c in cells) else 1


def cmd_plan(args) -> int:
    from vocab.coverage.plan import plan_request

    p = plan_request(args.pilot, theta=args.theta, q1=args.q1, q0=args.q0, attempts=args.attempts, rater=args.rater,
                     half_width=args.half_width, method=args.method, sims=args.sims, seed=args.seed,
                     n_boot=args.n_boot, population=args.population, allocation=args.allocation)  # fmt: skip
    print(json.dumps(p.as_dict()) if args.json else p.text())
    return 0


def add_audit_parser(sub, cli) -> None:
    """`vocab audit`'s parser on the subparsers ``sub`` (its command: ``cli.cmd_audit``)."""
    from vocab.imports.registry import NAMES as HARNESS_NAMES
    from vocab.imports.registry import files_text

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
    au.add_argument("--seed", type=int, default=0)
    au.add_argument("--max-calls", type=call_budget, default=None)
    au.add_argument("--scorer", help="Inspect: the scorer whose grades are the verdicts")
    au.add_argument("--assertion", help="promptfoo: the judge's assertion, by metric or type")
    au.add_argument("--feedback", help="MLflow: the judge's feedback name")
    au.add_argument("--metric", help="DeepEval: the judge's metric")
    population_option(au)
    au.set_defaults(func=cli.cmd_audit)
