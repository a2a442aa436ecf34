"""The command line's commands and options (argparse), apart from what the commands do (:mod:`vocab.cli`)."""

from __future__ import annotations

from pathlib import Path

from vocab.cli_audit import add_audit_parser
from vocab.cli_types import (
    call_budget,
    dataset_name,
    finite,
    population_option,
    port,
    rater,
)
from vocab.cli_types import config_option as _config

REGISTRY = Path("data/exams/registry.jsonl")


def _design(p) -> None:
    p.add_argument("--levels", help="an explicit level range instead of the design, e.g. 1-10")
    p.add_argument("--tiers", help="the design's tiers (default from config: 1-28)")
    p.add_argument("--per-tier", type=int, help="levels per tier (default from config: 5)")
    p.add_argument("--design-seed", type=int, help="seed of the design draw (default from config: 0)")
    p.add_argument("--writers", help="comma-separated writer models (default from config)")
    p.add_argument("--critics", help="comma-separated critic models (default from config)")
    p.add_argument("--max-attempts", type=int, help="attempts per level before a Hard FAIL (default 3)")
    p.add_argument(
        "--retry-abandoned",
        action="store_true",
        help="rerun the levels that an infrastructure fault or the call budget abandoned (a level the model's "
        "own answer abandoned, truncated, malformed or off the schema, is not asked again)",
    )
    p.add_argument("--max-calls", type=call_budget, help="hard call budget for this process (default from config)")
    p.add_argument("--no-progress", action="store_true", help="no progress bars")


def _importer(isub, name: str, help_: str, source: str, func, **source_kw):
    """An import's parser with what every import takes: its source, a new --run-dir, the judge's --question."""
    p = isub.add_parser(name, help=help_)
    p.add_argument(source, type=Path, **source_kw)
    p.add_argument("--run-dir", required=True, type=Path, help="a new directory for the dataset")
    p.add_argument("--question", help="the judge's question, as the blind raters will read it")
    p.add_argument("--name", type=dataset_name, help="the dataset's name, the report's title (default: the file's)")
    p.set_defaults(func=func, writes_run_dir=True)
    return p


def _exam(q, kind: str) -> None:
    _config(q)
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


def add_commands(sub, cli) -> None:
    """Every command on the subparsers ``sub``; each calls its ``cmd_*`` function in the module ``cli``."""
    from vocab.coverage import METHODS
    from vocab.imports.mlflow_traces import MLFLOW_FAIL, MLFLOW_PASS
    from vocab.lesson import ORDERS, RUBRICS, RULES, SEQUENCES
    from vocab.stats import DEFAULT_INTERVAL

    models = sub.add_parser("models", help="embedded model assets")
    msub = models.add_subparsers(dest="models_command", required=True, parser_class=type(models))
    prep = msub.add_parser("prepare", help="turn each embedded GGUF into a folder vLLM can serve (idempotent)")
    _config(prep)
    prep.add_argument("--force", action="store_true", help="rebuild even when the folder is up to date")
    prep.set_defaults(func=cli.cmd_models_prepare)

    serve = sub.add_parser("serve", help="start one vllm serve per served model; Ctrl-C stops them")
    _config(serve)
    serve.add_argument("--profile", choices=("cpu", "gpu"), help="override the config's serving profile")
    serve.add_argument("--dry-run", action="store_true", help="print the commands and environment only")
    serve.add_argument("--model", action="append", help="serve only this model (repeatable)")
    serve.set_defaults(func=cli.cmd_serve)

    rt = sub.add_parser("roundtrip", help="one structured call through each model (servers must be up)")
    _config(rt)
    rt.add_argument("--model", action="append", help="only this model (repeatable)")
    rt.set_defaults(func=cli.cmd_roundtrip)

    demo = sub.add_parser("demo", help="the main job: prepare models, serve, run the design, stop, notebooks")
    _config(demo)
    demo.add_argument("--profile", choices=("cpu", "gpu"), help="override the config's serving profile")
    demo.add_argument("--run-dir", type=Path, default=Path("data/runs/demo"), help="default: data/runs/demo")
    _design(demo)
    demo.set_defaults(func=cli.cmd_demo, writes_run_dir=True)

    run = sub.add_parser("run", help="run (or resume) the writer x critic design into a run directory")
    _config(run)
    run.add_argument("--run-dir", required=True, type=Path, help="the run directory, e.g. data/runs/my-run")
    _design(run)
    run.set_defaults(func=cli.cmd_run, writes_run_dir=True)

    sm = sub.add_parser("sample", help="draw the stratified blind sample and write the blinding export")
    sm.add_argument("--run-dir", required=True, type=Path)
    sm.add_argument("--per-pile", type=int, default=None, help="rows per pile per cell (default 10)")
    sm.add_argument("--budget", type=int, help="rows per cell, split between the piles by --allocation")
    sm.add_argument("--allocation", choices=("equal", "proportional", "pilot"), default=None,
                    help="equal (default: half a pile), proportional (in proportion to the piles' shares of the "
                         "attempts) or pilot (extends a rated sample: the pilot rater's disagreement per pile "
                         "splits the budget)")  # fmt: skip
    sm.add_argument(
        "--rater", type=rater, help="pilot: whose ratings allocate the budget (default: the rater with most rows)"
    )
    sm.add_argument("--seed", type=int, default=0)
    _dask(sm, "number an imported dataset's piles on a Dask cluster")
    sm.set_defaults(func=cli.cmd_sample, writes_run_dir=True)

    cal = sub.add_parser("calibrate", help="draw the blind sample and rate it: the script (if any) and LLM raters")
    _config(cal)
    cal.add_argument("run_dir", type=Path, help="a run directory or an imported dataset")
    cal.add_argument("--raters", required=True, help="comma-separated model names from the config")
    cal.add_argument("--per-pile", type=int, default=10, help="rows per pile per cell (default 10)")
    cal.add_argument("--seed", type=int, default=0)
    cal.add_argument("--max-calls", type=call_budget, default=None)
    cal.set_defaults(func=cli.cmd_calibrate, writes_run_dir=True)

    im = sub.add_parser("import", help="verdicts from another harness as a judgments dataset")
    isub = im.add_subparsers(dest="import_command", required=True, parser_class=type(im))
    ii = _importer(isub, "inspect", "an Inspect log (.eval or .json): one item per sample x epoch", "log",
                   cli.cmd_import_inspect)  # fmt: skip
    ii.add_argument("--scorer", help="the scorer whose verdicts to audit (needed when the log has several)")
    ii.add_argument("--pass-values", help="score values that mean PASSED (default C)")
    ii.add_argument("--fail-values", help="score values that mean FAILED (default I,P,N); others are UNSCORED")
    ii.add_argument("--judge", help="the judge's name (default: the log's grader role, else its model)")
    ip = _importer(isub, "promptfoo", "a promptfoo results file (promptfoo eval -o results.json)", "results",
                   cli.cmd_import_promptfoo)  # fmt: skip
    ip.add_argument("--assertion", help="the judge's assertion, by metric or type (default: the one model-graded)")
    ip.add_argument("--judge", help="the judge's name (default: the assertion's grading provider)")
    it = _importer(isub, "table", "a CSV, JSON Lines or Parquet table, or a folder of Parquet parts (columns: "
                   "vocab/imports/__init__.py)",
                   "file", cli.cmd_import_table)  # fmt: skip
    it.add_argument("--visible", help="columns a blind rater sees (default input,output[,target])")
    it.add_argument(
        "--rater",
        type=rater,
        default="person",
        help="whose labels a column named label holds (default person; label:NAME columns name theirs)",
    )
    it.add_argument("--pass-values", help="other words that mean PASSED, in the verdict and label columns")
    it.add_argument("--fail-values", help="other words that mean FAILED, in the verdict and label columns")
    it.add_argument("--pass-at", type=finite, help="a numeric verdict passes at this value or above")
    it.add_argument("--seed", type=int, default=0, help="seed of the labelled sample's blind ids and order")
    _dask(it, "a folder of Parquet parts is imported on a Dask cluster (default local)")
    ml = _importer(isub, "mlflow", "MLflow traces with their feedback (mlflow traces search --output json, or "
                   "Trace.to_json() a line)", "traces", cli.cmd_import_mlflow, nargs="?",
                   help="the exported traces (or --tracking-uri)")  # fmt: skip
    ml.add_argument("--tracking-uri", help="read an MLflow tracking store instead (needs MLflow: the mlflow extra)")
    ml.add_argument("--experiment-id", help="with --tracking-uri: the experiment whose traces to read")
    ml.add_argument("--feedback", help="the judge's feedback name (default: the one a non-human source gave)")
    ml.add_argument("--judge", help="the judge's source id (default: the one non-human source of that feedback)")
    ml.add_argument("--pass-values", help=f"feedback words that mean PASSED (default {','.join(MLFLOW_PASS)})")
    ml.add_argument("--fail-values", help=f"feedback words that mean FAILED (default {','.join(MLFLOW_FAIL)})")
    ml.add_argument("--pass-at", type=finite, help="a numeric feedback passes at this value or above")
    ml.add_argument("--system", help="the system under test (default: the trace's model id, else its name)")
    ml.add_argument("--seed", type=int, default=0, help="seed of the labelled sample's blind ids and order")
    de = _importer(isub, "deepeval", "a DeepEval test run (test_run_*.json, .deepeval/.latest_test_run.json)", "file",
                   cli.cmd_import_deepeval)  # fmt: skip
    de.add_argument("--metric", help="the judge's metric (needed when the run has several)")
    de.add_argument("--judge", help="the judge's name (default: the metric's evaluation model)")
    de.add_argument("--system", help="the system under test (default: the run's hyperparameters' model)")

    ra = sub.add_parser("rate", help="a blind rater grades the sample: a configured model, or `--model script`")
    _config(ra)
    ra.add_argument("--run-dir", required=True, type=Path)
    ra.add_argument("--model", required=True, help="a model name from the config, or script")
    ra.add_argument("--rater", help="the rater's name (default: the model's)")
    ra.add_argument("--max-tokens", type=int, default=None)
    ra.add_argument("--max-calls", type=call_budget, default=None)
    ra.set_defaults(func=cli.cmd_rate, writes_run_dir=True)

    rts = sub.add_parser("ratings", help="rating files")
    rsub = rts.add_subparsers(dest="ratings_command", required=True, parser_class=type(rts))
    imp = rsub.add_parser("import", help="validate a filled-in sheet and store it as ratings_<rater>.csv")
    imp.add_argument("file", type=Path)
    imp.add_argument("--run-dir", required=True, type=Path)
    imp.add_argument("--rater", required=True)
    imp.add_argument("--partial", action="store_true", help="accept a sheet rated in part (the notebooks count it)")
    imp.add_argument("--replace", action="store_true",
                     help="replace the rater's earlier hand-in even where this one drops rows it rated "
                     "(the earlier file is kept in calibration/history/)")  # fmt: skip
    imp.set_defaults(func=cli.cmd_ratings_import, writes_run_dir=True)

    pk = sub.add_parser("packet", help="a human rater's packet: their own sheet order, the rubric, the form")
    pk.add_argument("--run-dir", required=True, type=Path)
    pk.add_argument("--rater", required=True, help="the rater's name: a letter, then letters, digits, '-', '_'")
    pk.add_argument("--seed", type=int, default=0, help="seed of the rater's order, with the name (default 0)")
    pk.add_argument(
        "--format",
        choices=("form", "label-studio"),
        default="form",
        help="form: vocab's own form (default); label-studio: a Label Studio project (tasks, config)",
    )
    pk.set_defaults(func=cli.cmd_packet, writes_run_dir=True)

    fm = sub.add_parser("form", help="open a rater's packet in JupyterLab (the live form is never saved)")
    fm.add_argument("packet", type=Path, help="a packet folder, or its zip (NAME.zip: unpacked beside it, then served)")
    fm.add_argument("--into", type=Path, help="where to unpack a packet's zip (default: beside it, named by the rater)")
    fm.add_argument("--port", type=port, default=8888)
    fm.add_argument("--no-browser", action="store_true")
    fm.add_argument("--token", help="JupyterLab's token (default: its own random one)")
    fm.add_argument(
        "--same-machine",
        action="store_true",
        help="open a packet whose run, key included, is on this machine (the form's kernel can read it)",
    )
    fm.set_defaults(func=cli.cmd_form)

    lv = sub.add_parser("levels", help="print levels as JSON Lines: `vocab levels 1-140` or a sampled design")
    lv.add_argument("range", nargs="?", help="level numbers: 7, 1-140, 1-3,10 (streamed; at most 1,000,000)")
    lv.add_argument("--tiers", help="the sampled design: tiers to draw from, e.g. 1-28")
    lv.add_argument("--per-tier", type=int, default=5, help="levels per tier in the design (default 5)")
    lv.add_argument("--seed", type=int, default=0, help="seed of the design draw (default 0)")
    lv.set_defaults(func=cli.cmd_levels)

    ls = sub.add_parser("lesson", help="the judge-bias lesson's toy judge for one state")
    ls.add_argument("--rubric", choices=tuple(RUBRICS), default="accuracy-first")
    ls.add_argument("--rule", choices=RULES, default="rubric")
    ls.add_argument("--order", choices=ORDERS, default="a-first")
    ls.add_argument("--sequence", choices=SEQUENCES, default="forward")
    ls.add_argument("--json", action="store_true", help="one JSON object")
    ls.set_defaults(func=cli.cmd_lesson)

    ex = sub.add_parser("exam", help="the judge qualification exam")
    exsub = ex.add_subparsers(dest="exam_command", required=True, parser_class=type(ex))
    bl = exsub.add_parser("baselines", help="the degenerate judges' metrics (random: expected values)")
    bl.add_argument("--json", action="store_true", help="one JSON object per judge")
    bl.set_defaults(func=cli.cmd_exam_baselines)
    rg = exsub.add_parser("register", help="pre-register an exam: parameters, metrics, thresholds, judges")
    rg.add_argument("kind", choices=("planted", "pairwise", "tournament"))
    rg.add_argument("--id", required=True, help="the entry's id, also the results directory's name")
    rg.add_argument("--prediction", help="what you expect, recorded so that it can turn out wrong")
    rg.add_argument("--corrects", help="the id of the entry this one corrects")
    _exam(rg, "any")
    rg.set_defaults(func=cli.cmd_exam_register)
    for kind, what in (
        ("planted", "run a registered planted-defect exam"),
        ("pairwise", "run a registered pairwise exam (null and known-answer pairs)"),
        ("tournament", "run a registered writer tournament: pairwise critic judgments"),
    ):
        q = exsub.add_parser(kind, help=what)
        _exam(q, kind)
        q.set_defaults(func=cli.cmd_exam_run, writes_run_dir=True)

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
    cv.add_argument("--json", action="store_true")
    cv.set_defaults(func=cli.cmd_coverage)

    from vocab import stats
    from vocab.coverage.grid import GRID_METHODS

    rc = sub.add_parser("coverage-recheck", help="simulate again the grid points where simulation error can decide "
                                                "the bar (08 reads GRID_recheck.csv)")  # fmt: skip
    rc.add_argument("grid", type=Path, help="a grid's CSV (its JSON beside it), e.g. data/coverage/full_grid.csv")
    rc.add_argument("--sims", type=int, default=8000, help="fresh studies a point (default 8000)")
    rc.add_argument("--seed", type=int, default=1, help="seed of the fresh studies (default 1, not the grid's)")
    rc.add_argument("--force", action="store_true", help="replace an existing recheck")
    rc.set_defaults(func=cli.cmd_coverage_recheck)

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
    cg.add_argument("--population", choices=stats.POPULATIONS, default=stats.SUPERPOPULATION,
                    help="what the intervals aim at: the writer's rate over levels (superpopulation, default: the "
                         "bar's grid) or each study's own attempts (finite, the report's default)")  # fmt: skip
    cg.add_argument(
        "--jobs",
        type=int,
        default=None,
        help="worker processes (default 2; with --scheduler local: workers; not with a cluster's address)",
    )
    cg.add_argument("--scheduler", help="run on a Dask cluster: its scheduler's address (tcp://HOST:8786), or local "
                                        "for a local one; default: a local process pool")  # fmt: skip
    cg.add_argument("--out", required=True, type=Path, help="the CSV to write (a .json with the command beside it)")
    cg.add_argument("--force", action="store_true", help="replace an existing CSV")
    cg.set_defaults(func=cli.cmd_coverage_grid)

    add_audit_parser(sub, cli)

    rp = sub.add_parser("report", help="a self-contained report.html and report.md of an audit (run or dataset)")
    rp.add_argument("run_dir", type=Path, help="a run or dataset directory with a blind sample and ratings")
    rp.add_argument("--raters", help="comma-separated raters (default: every rater with a ratings file)")
    rp.add_argument("--out", type=Path, help="where to write (default: <run_dir>/report)")
    rp.add_argument("--force", action="store_true", help="replace a report already in --out")
    population_option(rp)
    rp.set_defaults(func=cli.cmd_report)

    ga = sub.add_parser("gate", help="exit 0 when every cell's interval clears the thresholds, 1 when one does not")
    ga.add_argument("run_dir", type=Path, help="an audited run or dataset (blind ratings handed in)")
    for flag, what in (("--min-rate", "the corrected pass rate's 95 %% interval"),
                       ("--min-q1", "the judge's sensitivity q1 (its interval)"),
                       ("--min-q0", "the judge's specificity q0 (its interval)")):  # fmt: skip
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
    for flag, what in (("--min-difference", "b − a's corrected rates"), ("--min-q1-difference", "b − a's q1"),
                       ("--min-q0-difference", "b − a's q0")):  # fmt: skip
        ga.add_argument(flag, type=finite, help=f"a margin for the lower end of {what} (negative: non-inferiority)")
    ga.add_argument("--json", action="store_true", help="one JSON object instead of a line per cell")
    population_option(ga)
    ga.set_defaults(func=cli.cmd_gate)

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
    pl.set_defaults(func=cli.cmd_plan)

    ck = sub.add_parser("check", help="the script adjudicator: JSON Lines on stdin, one verdict line per input")
    ck.set_defaults(func=cli.cmd_check)


def _dask(parser, what: str) -> None:
    parser.add_argument("--scheduler", help=f"{what}: its scheduler's address (tcp://HOST:8786), or local")
    parser.add_argument("--jobs", type=int, default=None, help="with --scheduler local: its workers (default 2)")
