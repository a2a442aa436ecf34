"""The calibration chain's commands: the blind sample, the imports of other harnesses' verdicts, the LLM and script
raters, a person's packet and form, and their hand-in (sample, calibrate, import, rate, packet, form, ratings), each
parser beside its command."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

from vocab.cli_types import (
    UsageError,
    call_budget,
    config_option,
    dataset_name,
    finite,
    names,
    port,
    rater,
    refuse_given,
)
from vocab.config import load_config
from vocab.layout import RunDir


def cmd_sample(args) -> int:
    from vocab.cluster import check_scheduler
    from vocab.raters.chain import sample_step

    jobs = check_scheduler(args.scheduler, args.jobs)
    for line in sample_step(
        args.run_dir,
        per_pile=args.per_pile,
        budget=args.budget,
        allocation=args.allocation,
        rater=args.rater,
        seed=args.seed,
        scheduler=args.scheduler,
        jobs=jobs,
    ):
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
    from vocab.datasets.write import name_dataset
    from vocab.imports import summary

    if args.name is not None:
        name_dataset(out, args.name)
    print("\n".join([summary(out), *notes]))
    return 0


def cmd_import_inspect(args) -> int:
    from vocab.imports import INSPECT_FAIL, INSPECT_PASS, INSPECT_QUESTION, import_inspect

    passes = names(args.pass_values, "--pass-values") if args.pass_values is not None else INSPECT_PASS
    fails = names(args.fail_values, "--fail-values") if args.fail_values is not None else INSPECT_FAIL
    out = import_inspect(
        args.log,
        args.run_dir,
        scorer=args.scorer,
        pass_values=passes,
        fail_values=fails,
        question=args.question or INSPECT_QUESTION,
        judge=args.judge,
    )
    return _imported(out, args)


def cmd_import_promptfoo(args) -> int:
    from vocab.imports import PROMPTFOO_QUESTION, import_promptfoo

    out = import_promptfoo(
        args.results,
        args.run_dir,
        assertion=args.assertion,
        question=args.question or PROMPTFOO_QUESTION,
        judge=args.judge,
    )
    return _imported(out, args)


def _import_pairwise(args) -> int:
    """A table of two systems a row (``system_a``/``system_b``): a pairwise dataset (vocab.imports.pairwise_table)."""
    from vocab.imports.pairwise_table import import_pairwise_table, pairwise_summary

    refuse_given(
        (
            ("--visible", args.visible),
            ("--pass-values", args.pass_values),
            ("--fail-values", args.fail_values),
            ("--pass-at", args.pass_at),
            ("--question", args.question),
            ("--name", args.name),
            ("--scheduler", args.scheduler),
            ("--jobs", args.jobs),
        ),
        f"not for a pairwise table ({args.file} compares two systems a row)",
    )
    out = import_pairwise_table(args.file, args.run_dir, rater=args.rater)
    print(pairwise_summary(out))
    return 0


def cmd_import_table(args) -> int:
    from vocab.datasets.dataset import DEFAULT_QUESTION
    from vocab.imports import import_table
    from vocab.imports.pairwise_table import pairwise_header

    if args.file.is_file() and pairwise_header(args.file) is not None:
        return _import_pairwise(args)

    visible = list(names(args.visible, "--visible")) if args.visible is not None else None
    words = {
        k: names(v, f"--{k.replace('_', '-')}")
        for k in ("pass_values", "fail_values")
        if (v := getattr(args, k)) is not None
    }
    notes: list[str] = []
    if args.file.is_dir():  # a table held as Parquet parts: imported on Dask
        from vocab.cluster import check_scheduler
        from vocab.imports.parts import import_parts

        jobs = check_scheduler(args.scheduler or "local", args.jobs)
        out = import_parts(
            args.file,
            args.run_dir,
            visible,
            args.question or DEFAULT_QUESTION,
            seed=args.seed,
            notes=notes,
            scheduler=args.scheduler or "local",
            jobs=jobs,
            rater=args.rater,
            pass_at=args.pass_at,
            **words,
        )
        return _imported(out, args, notes)
    if (args.scheduler is not None or args.jobs is not None) and args.file.is_file():
        raise UsageError(
            f"--scheduler, --jobs: for a folder of Parquet parts; {args.file} is one file (imported on this machine)"
        )
    out = import_table(
        args.file,
        args.run_dir,
        visible,
        args.question or DEFAULT_QUESTION,
        seed=args.seed,
        notes=notes,
        rater=args.rater,
        pass_at=args.pass_at,
        **words,
    )
    return _imported(out, args, notes)


def cmd_import_mlflow(args) -> int:
    from vocab.imports.mlflow_traces import MLFLOW_FAIL, MLFLOW_PASS, MLFLOW_QUESTION, import_mlflow

    passes = names(args.pass_values, "--pass-values") if args.pass_values is not None else MLFLOW_PASS
    fails = names(args.fail_values, "--fail-values") if args.fail_values is not None else MLFLOW_FAIL
    notes: list[str] = []
    out = import_mlflow(
        args.traces,
        args.run_dir,
        tracking_uri=args.tracking_uri,
        experiment_id=args.experiment_id,
        seed=args.seed,
        notes=notes,
        feedback=args.feedback,
        judge=args.judge,
        pass_values=passes,
        fail_values=fails,
        pass_at=args.pass_at,
        system=args.system,
        question=args.question or MLFLOW_QUESTION,
    )
    return _imported(out, args, notes)


def cmd_import_deepeval(args) -> int:
    from vocab.imports.deepeval_runs import DEEPEVAL_QUESTION, import_deepeval

    out = import_deepeval(
        args.file,
        args.run_dir,
        metric=args.metric,
        judge=args.judge,
        system=args.system,
        question=args.question or DEEPEVAL_QUESTION,
    )
    return _imported(out, args)


def cmd_rate(args) -> int:
    from vocab.raters.raters import rate_with_config, write_script_ratings

    if not RunDir(args.run_dir).sheet.exists():
        raise UsageError(f"{args.run_dir}: no calibration/blind_sheet.jsonl (draw the sample first: vocab sample)")
    if args.model == "script":
        print(write_script_ratings(args.run_dir))
        return 0
    progress = rate_with_config(
        load_config(args.config),
        args.run_dir,
        args.model,
        args.rater or args.model,
        max_tokens=args.max_tokens,
        max_calls=args.max_calls,
    )
    print(json.dumps(progress.as_dict()))
    return 0 if progress.complete else 1


def cmd_packet(args) -> int:
    from vocab.raters.packet import make_packet

    if args.format == "label-studio":
        from vocab.raters.label_studio import make_label_studio_packet

        out = make_label_studio_packet(args.run_dir, args.rater, seed=args.seed)
        print(
            f"{out}: a Label Studio project for rater {args.rater} (README.txt says how to load it and hand in "
            "the export)"
        )
        return 0
    out = make_packet(args.run_dir, args.rater, seed=args.seed)
    print(
        f"{out}: the packet of rater {args.rater}. Hand the rater {out.with_suffix('.zip')}: they unzip it and "
        f"open {out.name}/rate.html in a browser (README.txt says how; vocab users may use vocab form "
        f"{out.name}.zip); nothing of the run is in it"
    )
    return 0


def cmd_form(args) -> int:
    from vocab.raters.opening import lab_argv, open_packet

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


def _importer(isub, name: str, help_: str, source: str, func, **source_kw):
    """An import's parser with what every import takes: its source, a new --run-dir, the judge's --question."""
    p = isub.add_parser(name, help=help_)
    p.add_argument(source, type=Path, **source_kw)
    p.add_argument("--run-dir", required=True, type=Path, help="a new directory for the dataset")
    p.add_argument("--question", help="the judge's question, as the blind raters will read it")
    p.add_argument("--name", type=dataset_name, help="the dataset's name, the report's title (default: the file's)")
    p.set_defaults(func=func, writes_run_dir=True)
    return p


def _dask(parser, what: str) -> None:
    parser.add_argument("--scheduler", help=f"{what}: its scheduler's address (tcp://HOST:8786), or local")
    parser.add_argument("--jobs", type=int, default=None, help="with --scheduler local: its workers (default 2)")


def add_chain(sub) -> None:
    """The calibration chain's commands on the subparsers ``sub``."""
    from vocab.imports.mlflow_traces import MLFLOW_FAIL, MLFLOW_PASS

    sm = sub.add_parser("sample", help="draw the stratified blind sample and write the blinding export")
    sm.add_argument("--run-dir", required=True, type=Path)
    sm.add_argument("--per-pile", type=int, default=None, help="rows per pile per cell (default 10)")
    sm.add_argument("--budget", type=int, help="rows per cell, split between the piles by --allocation")
    sm.add_argument(
        "--allocation",
        choices=("equal", "proportional", "pilot"),
        default=None,
        help="equal (default: half a pile), proportional (in proportion to the piles' shares of the "
        "attempts) or pilot (extends a rated sample: the pilot rater's disagreement per pile "
        "splits the budget)",
    )
    sm.add_argument(
        "--rater", type=rater, help="pilot: whose ratings allocate the budget (default: the rater with most rows)"
    )
    sm.add_argument("--seed", type=int, default=0)
    _dask(sm, "number an imported dataset's piles on a Dask cluster")
    sm.set_defaults(func=cmd_sample, writes_run_dir=True)

    cal = sub.add_parser("calibrate", help="draw the blind sample and rate it: the script (if any) and LLM raters")
    config_option(cal)
    cal.add_argument("run_dir", type=Path, help="a run directory or an imported dataset")
    cal.add_argument("--raters", required=True, help="comma-separated model names from the config")
    cal.add_argument("--per-pile", type=int, default=10, help="rows per pile per cell (default 10)")
    cal.add_argument("--seed", type=int, default=0)
    cal.add_argument("--max-calls", type=call_budget, default=None)
    cal.set_defaults(func=cmd_calibrate, writes_run_dir=True)

    im = sub.add_parser("import", help="verdicts from another harness as a judgments dataset")
    isub = im.add_subparsers(dest="import_command", required=True, parser_class=type(im))
    ii = _importer(
        isub, "inspect", "an Inspect log (.eval or .json): one item per sample x epoch", "log", cmd_import_inspect
    )
    ii.add_argument("--scorer", help="the scorer whose verdicts to audit (needed when the log has several)")
    ii.add_argument("--pass-values", help="score values that mean PASSED (default C)")
    ii.add_argument("--fail-values", help="score values that mean FAILED (default I,P,N); others are UNSCORED")
    ii.add_argument("--judge", help="the judge's name (default: the log's grader role, else its model)")
    ip = _importer(
        isub, "promptfoo", "a promptfoo results file (promptfoo eval -o results.json)", "results", cmd_import_promptfoo
    )
    ip.add_argument("--assertion", help="the judge's assertion, by metric or type (default: the one model-graded)")
    ip.add_argument("--judge", help="the judge's name (default: the assertion's grading provider)")
    it = _importer(
        isub,
        "table",
        "a CSV, JSON Lines or Parquet table, or a folder of Parquet parts (columns: vocab/imports/__init__.py; "
        "two systems a row, A, B or tie: vocab/imports/pairwise_table.py)",
        "file",
        cmd_import_table,
    )
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
    ml = _importer(
        isub,
        "mlflow",
        "MLflow traces with their feedback (mlflow traces search --output json, or Trace.to_json() a line)",
        "traces",
        cmd_import_mlflow,
        nargs="?",
        help="the exported traces (or --tracking-uri)",
    )
    ml.add_argument("--tracking-uri", help="read an MLflow tracking store instead (needs MLflow: the mlflow extra)")
    ml.add_argument("--experiment-id", help="with --tracking-uri: the experiment whose traces to read")
    ml.add_argument("--feedback", help="the judge's feedback name (default: the one a non-human source gave)")
    ml.add_argument("--judge", help="the judge's source id (default: the one non-human source of that feedback)")
    ml.add_argument("--pass-values", help=f"feedback words that mean PASSED (default {','.join(MLFLOW_PASS)})")
    ml.add_argument("--fail-values", help=f"feedback words that mean FAILED (default {','.join(MLFLOW_FAIL)})")
    ml.add_argument("--pass-at", type=finite, help="a numeric feedback passes at this value or above")
    ml.add_argument("--system", help="the system under test (default: the trace's model id, else its name)")
    ml.add_argument("--seed", type=int, default=0, help="seed of the labelled sample's blind ids and order")
    de = _importer(
        isub,
        "deepeval",
        "a DeepEval test run (test_run_*.json, .deepeval/.latest_test_run.json)",
        "file",
        cmd_import_deepeval,
    )
    de.add_argument("--metric", help="the judge's metric (needed when the run has several)")
    de.add_argument("--judge", help="the judge's name (default: the metric's evaluation model)")
    de.add_argument("--system", help="the system under test (default: the run's hyperparameters' model)")

    ra = sub.add_parser("rate", help="a blind rater grades the sample: a configured model, or `--model script`")
    config_option(ra)
    ra.add_argument("--run-dir", required=True, type=Path)
    ra.add_argument("--model", required=True, help="a model name from the config, or script")
    ra.add_argument("--rater", help="the rater's name (default: the model's)")
    ra.add_argument("--max-tokens", type=int, default=None)
    ra.add_argument("--max-calls", type=call_budget, default=None)
    ra.set_defaults(func=cmd_rate, writes_run_dir=True)

    rts = sub.add_parser("ratings", help="rating files")
    rsub = rts.add_subparsers(dest="ratings_command", required=True, parser_class=type(rts))
    imp = rsub.add_parser("import", help="validate a filled-in sheet and store it as ratings_<rater>.csv")
    imp.add_argument("file", type=Path)
    imp.add_argument("--run-dir", required=True, type=Path)
    imp.add_argument("--rater", required=True)
    imp.add_argument("--partial", action="store_true", help="accept a sheet rated in part (the notebooks count it)")
    imp.add_argument(
        "--replace",
        action="store_true",
        help="replace the rater's earlier hand-in even where this one drops rows it rated "
        "(the earlier file is kept in calibration/history/)",
    )
    imp.set_defaults(func=cmd_ratings_import, writes_run_dir=True)

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
    pk.set_defaults(func=cmd_packet, writes_run_dir=True)

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
    fm.set_defaults(func=cmd_form)
