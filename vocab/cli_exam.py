"""The teaching and qualifying commands: the judge-bias lesson, the judge exams and their registry, and the coverage
simulations (lesson, exam, coverage, coverage-recheck, coverage-grid), each parser beside its command."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

from vocab.cli_types import UsageError, call_budget, config_option, finite
from vocab.config import load_config

REGISTRY = Path("data/exams/registry.jsonl")


def cmd_lesson(args) -> int:
    from vocab.lesson import State, evaluate

    o = evaluate(State(args.rubric, args.rule, args.order, args.sequence))
    print(json.dumps(o.summary()) if args.json else o.text())
    return 0


def cmd_exam_baselines(args) -> int:
    from vocab.exam.metrics import baseline_lines

    print("\n".join(baseline_lines(as_json=args.json)))
    return 0


def _exam_params(args, kind: str) -> tuple:
    from vocab.exam.run import ExamRequest, exam_params

    cfg = load_config(args.config)
    req = ExamRequest(
        kind,
        str(args.run_dir),
        args.judges,
        sources=getattr(args, "sources", 12),
        pairs=getattr(args, "pairs", 12),
        levels=getattr(args, "levels", 30),
        seed=args.seed,
        max_calls=args.max_calls,
        reference=not args.no_reference,
    )
    return cfg, exam_params(req, cfg)


def cmd_exam_register(args) -> int:
    from vocab.exam.run import register_exam

    _, params = _exam_params(args, args.kind)
    e = register_exam(args.registry, args.id, args.kind, params, args.prediction, args.corrects)
    print(json.dumps({"id": e["id"], "hash": e["hash"]}))
    return 0


def cmd_exam_run(args) -> int:
    from vocab.exam import load_exam
    from vocab.exam.run import run_registered

    cfg, params = _exam_params(args, args.exam_command)
    out = run_registered(args.exam_command, cfg, args.run_dir, params, args.registry)
    m = load_exam(out).manifest
    print(f"{out}: {json.dumps(m['counts'])}")
    return 0 if m["status"] == "complete" else 1  # incomplete (e.g. the budget ran out): resumable


def cmd_coverage(args) -> int:
    from vocab.coverage import coverage
    from vocab.coverage.simulate import check_point

    kw = {
        k: getattr(args, k) for k in ("theta", "q1", "q0", "attempts", "piles", "sims", "seed", "n_boot", "population")
    }
    try:
        check_point(args.method, rater_error=args.rater_error, **kw)
    except ValueError as e:
        raise UsageError(str(e)) from None
    c = coverage(args.method, rater_error=args.rater_error, **kw)
    print(json.dumps(c.as_dict()) if args.json else c)
    return 0


def _command_line() -> str | None:
    """The command as typed, for a result's record (None when vocab was not run as the ``vocab`` command)."""
    return "vocab " + " ".join(sys.argv[1:]) if sys.argv and sys.argv[0].endswith("vocab") else None


def cmd_coverage_grid(args) -> int:
    from vocab.coverage.grid import grid_request, run_grid

    jobs = 2 if args.jobs is None else args.jobs
    spec = grid_request(
        args.methods,
        args.piles,
        args.thetas,
        args.q1s,
        args.q0s,
        args.spreads,
        levels=args.levels,
        max_attempts=args.max_attempts,
        sims=args.sims,
        n_boot=args.n_boot,
        seed=args.seed,
        jobs=jobs,
        scheduler=args.scheduler,
        jobs_given=args.jobs is not None,
        population=args.population,
    )
    t0 = time.perf_counter()
    command = _command_line()
    out = run_grid(spec, args.out, jobs=jobs, force=args.force, command=command, scheduler=args.scheduler)
    print(f"{out}: written in {time.perf_counter() - t0:.0f} s")
    return 0


def cmd_coverage_recheck(args) -> int:
    from vocab.coverage.recheck import run_recheck

    t0 = time.perf_counter()
    command = _command_line()
    out = run_recheck(args.grid, sims=args.sims, seed=args.seed, force=args.force, command=command)
    print(f"{out}: written in {time.perf_counter() - t0:.0f} s")
    return 0


def _exam(q, kind: str) -> None:
    config_option(q)
    q.add_argument("--run-dir", required=True, type=Path, help="the run whose answers are the sources")
    q.add_argument("--judges", default="smollm2,gemma3", help="comma-separated critics (default: both)")
    q.add_argument("--seed", type=int, default=0, help="seed of the draws (default 0)")
    q.add_argument("--max-calls", type=call_budget, default=600, help="the exam's hard call budget (default 600)")
    q.add_argument("--no-reference", action="store_true", help="use the run's answers only")
    q.add_argument("--registry", type=Path, default=REGISTRY, help=f"the registry (default {REGISTRY})")
    if kind in ("planted", "any"):
        q.add_argument("--sources", type=int, default=12, help="planted: sources (default 12)")
    if kind in ("pairwise", "any"):
        q.add_argument("--pairs", type=int, default=12, help="pairwise: pairs per condition (default 12)")
    if kind in ("tournament", "any"):
        q.add_argument("--levels", type=int, default=30, help="tournament: writer-vs-writer levels (default 30)")


def add_exam(sub) -> None:
    """The lesson, the exams and the coverage simulations on the subparsers ``sub``."""
    from vocab import stats
    from vocab.coverage import METHODS
    from vocab.coverage.grid import GRID_METHODS
    from vocab.lesson import ORDERS, RUBRICS, RULES, SEQUENCES
    from vocab.stats import DEFAULT_INTERVAL

    ls = sub.add_parser("lesson", help="the judge-bias lesson's toy judge for one state")
    ls.add_argument("--rubric", choices=tuple(RUBRICS), default="accuracy-first")
    ls.add_argument("--rule", choices=RULES, default="rubric")
    ls.add_argument("--order", choices=ORDERS, default="a-first")
    ls.add_argument("--sequence", choices=SEQUENCES, default="forward")
    ls.add_argument("--json", action="store_true", help="one JSON object")
    ls.set_defaults(func=cmd_lesson)

    ex = sub.add_parser("exam", help="the judge qualification exam")
    exsub = ex.add_subparsers(dest="exam_command", required=True, parser_class=type(ex))
    bl = exsub.add_parser("baselines", help="the degenerate judges' metrics (random: expected values)")
    bl.add_argument("--json", action="store_true", help="one JSON object per judge")
    bl.set_defaults(func=cmd_exam_baselines)
    rg = exsub.add_parser("register", help="pre-register an exam: parameters, metrics, thresholds, judges")
    rg.add_argument("kind", choices=("planted", "pairwise", "tournament"))
    rg.add_argument("--id", required=True, help="the entry's id, also the results directory's name")
    rg.add_argument("--prediction", help="what you expect, recorded so that it can turn out wrong")
    rg.add_argument("--corrects", help="the id of the entry this one corrects")
    _exam(rg, "any")
    rg.set_defaults(func=cmd_exam_register)
    for kind, what in (
        ("planted", "run a registered planted-defect exam"),
        ("pairwise", "run a registered pairwise exam (null and known-answer pairs)"),
        ("tournament", "run a registered writer tournament: pairwise critic judgments"),
    ):
        q = exsub.add_parser(kind, help=what)
        _exam(q, kind)
        q.set_defaults(func=cmd_exam_run, writes_run_dir=True)

    cv = sub.add_parser("coverage", help="simulate the study: coverage, width and bias of an interval method")
    cv.add_argument("--method", choices=METHODS, default=DEFAULT_INTERVAL, help=f"(default {DEFAULT_INTERVAL}: 03's)")
    cv.add_argument("--piles", type=int, default=10, help="rows per pile (default 10)")
    cv.add_argument("--theta", type=finite, required=True, help="the writer's true pass rate")
    cv.add_argument("--q1", type=finite, required=True, help="the critic's sensitivity")
    cv.add_argument("--q0", type=finite, required=True, help="the critic's specificity")
    cv.add_argument("--attempts", type=int, default=400, help="logged attempts behind p (default 400)")
    cv.add_argument("--sims", type=int, default=2000, help="simulated studies (default 2000)")
    cv.add_argument("--seed", type=int, default=0)
    cv.add_argument("--n-boot", type=int, default=1000, help="bootstrap resamples per study (default 1000)")
    cv.add_argument("--rater-error", type=finite, default=0.0, help="the blind rater's own error rate")
    cv.add_argument(
        "--population",
        choices=stats.POPULATIONS,
        default=stats.DEFAULT_POPULATION,
        help="what the interval aims at: each study's own attempts, p known and each pile finite (finite, default: "
        "what reports print and `vocab plan` plans), or the writer's rate theta (superpopulation, seed 000's)",
    )
    cv.add_argument("--json", action="store_true")
    cv.set_defaults(func=cmd_coverage)

    rc = sub.add_parser(
        "coverage-recheck",
        help="simulate again the grid points where simulation error can decide the bar (08 reads GRID_recheck.csv)",
    )
    rc.add_argument("grid", type=Path, help="a grid's CSV (its JSON beside it), e.g. data/coverage/full_grid.csv")
    rc.add_argument("--sims", type=int, default=8000, help="fresh studies a point (default 8000)")
    rc.add_argument("--seed", type=int, default=1, help="seed of the fresh studies (default 1, not the grid's)")
    rc.add_argument("--force", action="store_true", help="replace an existing recheck")
    rc.set_defaults(func=cmd_coverage_recheck)

    cg = sub.add_parser("coverage-grid", help="the coverage grid of interval methods (level-clustered) into a CSV")
    methods = ",".join(GRID_METHODS)
    cg.add_argument("--methods", default=methods, help=f"comma-separated (default {methods})")
    cg.add_argument("--piles", default="10,20,40")
    cg.add_argument("--thetas", default="0.1,0.2,0.3,0.4,0.5,0.6,0.7,0.8,0.9")
    cg.add_argument("--q1s", default="0.1,0.5,0.8,0.95,1.0")
    cg.add_argument("--q0s", default="0.1,0.5,0.8,0.95,1.0")
    cg.add_argument("--spreads", default="2,inf", help="level heterogeneity: small is varied, inf none")
    cg.add_argument("--levels", type=int, default=140, help="levels per simulated study (default 140, the design's)")
    cg.add_argument("--max-attempts", type=int, default=3, help="attempts per level (default 3)")
    cg.add_argument("--sims", type=int, default=2000)
    cg.add_argument("--n-boot", type=int, default=1000)
    cg.add_argument("--seed", type=int, default=0)
    cg.add_argument(
        "--population",
        choices=stats.POPULATIONS,
        default=stats.SUPERPOPULATION,
        help="what the intervals aim at: the writer's rate over levels (superpopulation, default: the "
        "bar's grid) or each study's own attempts (finite, the report's default)",
    )
    cg.add_argument(
        "--jobs",
        type=int,
        default=None,
        help="worker processes (default 2; with --scheduler local: workers; not with a cluster's address)",
    )
    cg.add_argument(
        "--scheduler",
        help="run on a Dask cluster: its scheduler's address (tcp://HOST:8786), or local "
        "for a local one; default: a local process pool",
    )
    cg.add_argument("--out", required=True, type=Path, help="the CSV to write (a .json with the command beside it)")
    cg.add_argument("--force", action="store_true", help="replace an existing CSV")
    cg.set_defaults(func=cmd_coverage_grid)
