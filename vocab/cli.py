"""The ``vocab`` command line: each command parses its options and calls one library function. Every user error
(a bad config, level range, file or argument; the library's typed :class:`vocab.errors.InputError`) ends in
:func:`main` as one line on stderr (``vocab: error: ...``), exit code 2, nothing written. A command that writes into
a run or dataset directory holds its lock (:func:`vocab.records.dir_lock`): a second one is refused."""

from __future__ import annotations

import argparse
import errno
import json
import logging
import os
import signal
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from vocab.config import load_config
from vocab.errors import InputError


class UsageError(InputError):
    """Bad input from the command line; printed as one line, exit code 2."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str):  # argparse's own errors: one line, exit 2
        self.exit(2, f"vocab: error: {message}\n")


def cmd_models_prepare(args) -> int:
    from vocab.serving.models import prepare

    cfg = load_config(args.config)
    embedded = [m for m in cfg.models.values() if m.kind == "embedded"]
    for m in embedded:
        t0 = time.perf_counter()
        print(f"{m.name}: {prepare(m.asset, cfg.cache_dir, force=args.force)} ({time.perf_counter() - t0:.1f} s)")
    if not embedded:
        print("no embedded models in this config: nothing to prepare")
    return 0


def cmd_serve(args) -> int:
    from vocab.serving.servers import Servers, dry_run_lines

    cfg = load_config(args.config)
    names = args.model or None
    for n in names or ():
        cfg.model(n)
    if args.dry_run:
        print("\n".join(dry_run_lines(cfg, args.profile, names)))
        return 0
    with Servers(cfg, args.profile, names) as servers:
        for spec in servers.specs:
            how = "reused" if spec.name in servers.reused else "started"
            print(f"{spec.name}: {how}, {spec.health_url.removesuffix('/health')}/v1 (log: {spec.log_path})")
        print("serving; Ctrl-C stops the servers this command started", flush=True)
        try:
            while True:
                time.sleep(3600)
        except KeyboardInterrupt:
            print("stopping", flush=True)
    return 0


def cmd_roundtrip(args) -> int:
    import asyncio

    from vocab.serving.roundtrip import deployment, roundtrip

    cfg = load_config(args.config)
    results = asyncio.run(roundtrip(cfg, args.model or None))
    for r in results:
        usage = r.usage.as_dict() if r.usage else None
        print(json.dumps({"model": r.model, "answer": r.value, "error": r.error, "usage": usage,
                          "server": deployment(cfg.model(r.model))}, sort_keys=True))  # fmt: skip
    return 0 if all(r.error is None for r in results) else 1


def _loop(cfg, args):
    from vocab.config import loop_with_overrides

    return loop_with_overrides(
        cfg, writers=args.writers, critics=args.critics, levels=args.levels, tiers=args.tiers, per_tier=args.per_tier,
        design_seed=args.design_seed, max_attempts=args.max_attempts,
    )  # fmt: skip


def cmd_demo(args) -> int:
    from vocab.demo import run_demo

    cfg = load_config(args.config)
    t0 = time.perf_counter()
    run_demo(
        cfg, _loop(cfg, args), args.run_dir, profile=args.profile, max_calls=args.max_calls,
        retry_abandoned=args.retry_abandoned, progress=not args.no_progress,
        say=lambda msg: print(f"[demo {time.perf_counter() - t0:6.0f} s] {msg}", flush=True),
    )  # fmt: skip
    return 0


def cmd_run(args) -> int:
    from vocab import loop

    cfg = load_config(args.config)
    if args.max_calls is not None and args.max_calls < 0:
        raise UsageError(f"--max-calls must be non-negative, got {args.max_calls}")
    summary = loop.run(
        cfg, _loop(cfg, args), args.run_dir, max_calls=args.max_calls, retry_abandoned=args.retry_abandoned,
        progress=not args.no_progress,
    )  # fmt: skip
    print(summary.text(), flush=True)
    return 0


def cmd_levels(args) -> int:
    from vocab.levels import design_numbers, iter_levels

    if args.tiers is not None and args.range:
        raise UsageError("give a level range or --tiers/--per-tier, not both")
    # Every bound is checked before a level is made; a range is held as spans and streamed.
    numbers = design_numbers(args.range, args.tiers, args.per_tier, args.seed)
    write = sys.stdout.write
    for lv in iter_levels(numbers):
        write(json.dumps(lv.as_dict()) + "\n")
    return 0


def cmd_check(args) -> int:
    from vocab.script import check_lines, read_lines

    for o in check_lines(read_lines(sys.stdin)):  # nothing is written unless every line is valid
        sys.stdout.write(json.dumps(o) + "\n")
    return 0


def cmd_lesson(args) -> int:
    from vocab.lesson import State, evaluate

    o = evaluate(State(args.rubric, args.rule, args.order, args.sequence))
    print(json.dumps(o.summary()) if args.json else o.text())
    return 0


def _names(text: str, option: str) -> tuple[str, ...]:
    """A comma-separated list given on the command line: at least one name, none empty."""
    names = tuple(v.strip() for v in text.split(","))
    if not any(names) or not all(names):
        raise UsageError(f"{option}: a comma-separated list of names, none empty, got {text!r}")
    return names


def cmd_sample(args) -> int:
    from vocab.calibration.chain import sample_step

    for line in sample_step(args.run_dir, per_pile=args.per_pile, budget=args.budget, allocation=args.allocation,
                            rater=args.rater, seed=args.seed):  # fmt: skip
        print(line)
    return 0


def cmd_calibrate(args) -> int:
    from vocab.calibration import calibrate_run

    cfg = load_config(args.config)
    raters = [r.strip() for r in args.raters.split(",") if r.strip()]
    for r in raters:
        cfg.model(r)
    complete = calibrate_run(cfg, args.run_dir, raters, args.max_calls, print, args.per_pile, args.seed)
    return 0 if len(complete) == len(raters) else 1


def cmd_import_inspect(args) -> int:
    from vocab.calibration.imports import INSPECT_FAIL, INSPECT_PASS, INSPECT_QUESTION, import_inspect, summary

    passes = _names(args.pass_values, "--pass-values") if args.pass_values is not None else INSPECT_PASS
    fails = _names(args.fail_values, "--fail-values") if args.fail_values is not None else INSPECT_FAIL
    out = import_inspect(args.log, args.run_dir, scorer=args.scorer, pass_values=passes, fail_values=fails,
                         question=args.question or INSPECT_QUESTION, judge=args.judge)  # fmt: skip
    print(summary(out))
    return 0


def cmd_import_promptfoo(args) -> int:
    from vocab.calibration.imports import PROMPTFOO_QUESTION, import_promptfoo, summary

    out = import_promptfoo(args.results, args.run_dir, assertion=args.assertion,
                           question=args.question or PROMPTFOO_QUESTION, judge=args.judge)  # fmt: skip
    print(summary(out))
    return 0


def cmd_import_table(args) -> int:
    from vocab.calibration.dataset import DEFAULT_QUESTION
    from vocab.calibration.imports import import_table, summary

    visible = list(_names(args.visible, "--visible")) if args.visible is not None else None
    print(summary(import_table(args.file, args.run_dir, visible, args.question or DEFAULT_QUESTION)))
    return 0


def cmd_rate(args) -> int:
    from vocab.calibration.raters import rate_with_config, write_script_ratings

    if not (Path(args.run_dir) / "calibration" / "blind_sheet.jsonl").exists():
        raise UsageError(f"{args.run_dir}: no calibration/blind_sheet.jsonl (draw the sample first: vocab sample)")
    if args.model == "script":
        print(write_script_ratings(args.run_dir))
        return 0
    progress = rate_with_config(load_config(args.config), args.run_dir, args.model, args.rater or args.model,
                                max_tokens=args.max_tokens, max_calls=args.max_calls)  # fmt: skip
    print(json.dumps(progress.as_dict()))
    return 0 if progress.complete else 1


def cmd_packet(args) -> int:
    from vocab.calibration.packet import make_packet

    out = make_packet(args.run_dir, args.rater, seed=args.seed)
    print(f"{out}: the packet of rater {args.rater}. Hand the rater {out.with_suffix('.zip')} (they open it with "
          f"vocab form {out.name}.zip); nothing of the run is in it")  # fmt: skip
    return 0


def cmd_form(args) -> int:
    from vocab.calibration.form import lab_argv, open_packet

    packet, notes = open_packet(args.packet, args.into)
    for note in notes:
        print(note, file=sys.stderr)
    argv = lab_argv(packet, args.port, no_browser=args.no_browser, token=args.token)
    os.execv(argv[0], argv)  # JupyterLab takes over this process: Ctrl-C stops it as usual


def cmd_ratings_import(args) -> int:
    from vocab.calibration import import_ratings

    try:
        print(import_ratings(args.file, args.run_dir, args.rater, partial=args.partial, replace=args.replace).text())
    except FileNotFoundError as e:
        raise UsageError(f"{e.filename or args.file}: no such file") from None
    return 0


def cmd_exam_baselines(args) -> int:
    from vocab.exam.metrics import baseline_lines

    print("\n".join(baseline_lines(as_json=args.json)))
    return 0


def _exam_params(args, kind: str) -> tuple:
    from vocab.exam.run import ExamRequest, exam_params

    cfg = load_config(args.config)
    req = ExamRequest(
        kind, str(args.run_dir), args.judges, sources=getattr(args, "sources", 12), pairs=getattr(args, "pairs", 12),
        levels=getattr(args, "levels", 30), seed=args.seed, max_calls=args.max_calls, reference=not args.no_reference,
    )  # fmt: skip
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

    kw = {k: getattr(args, k) for k in ("theta", "q1", "q0", "attempts", "piles", "sims", "seed", "n_boot")}
    try:
        check_point(args.method, rater_error=args.rater_error, **kw)
    except ValueError as e:
        raise UsageError(str(e)) from None
    c = coverage(args.method, rater_error=args.rater_error, **kw)
    print(json.dumps(c.as_dict()) if args.json else c)
    return 0


def cmd_audit(args) -> int:
    from vocab.calibration.audit import audit_locked

    raters = _names(args.raters, "--raters") if args.raters is not None else ()
    llm = _names(args.llm_raters, "--llm-raters") if args.llm_raters is not None else ()
    a = audit_locked(args.source, args.out, raters=raters, llm_raters=llm, config=args.config, per_pile=args.per_pile,
                     seed=args.seed, max_calls=args.max_calls, source_kind=args.source_kind, scorer=args.scorer,
                     assertion=args.assertion)  # fmt: skip
    for name, state in sorted(a.rated.items()):
        print(f"ratings {name}: {state}")
    print("\n".join([*a.headline, f"next: {a.next_step}"]))
    return 0


def cmd_report(args) -> int:
    from vocab import report

    if not args.run_dir.is_dir():
        raise UsageError(f"{args.run_dir}: not a directory (a run or an imported dataset)")
    from vocab.records import dir_lock

    raters = list(_names(args.raters, "--raters")) if args.raters is not None else None
    with dir_lock(args.run_dir):  # read while nobody writes into it
        paths = report.write(args.run_dir, raters, args.out, force=args.force)
    for p in paths:
        print(p)
    return 0


def cmd_plan(args) -> int:
    from vocab.coverage.plan import plan_request

    p = plan_request(args.pilot, theta=args.theta, q1=args.q1, q0=args.q0, attempts=args.attempts, rater=args.rater,
                     half_width=args.half_width, method=args.method, sims=args.sims, seed=args.seed,
                     n_boot=args.n_boot)  # fmt: skip
    print(json.dumps(p.as_dict()) if args.json else p.text())
    return 0


def cmd_coverage_grid(args) -> int:
    from vocab.coverage.grid import grid_request, run_grid

    jobs = 2 if args.jobs is None else args.jobs
    spec = grid_request(args.methods, args.piles, args.thetas, args.q1s, args.q0s, args.spreads, levels=args.levels,
                        max_attempts=args.max_attempts, sims=args.sims, n_boot=args.n_boot, seed=args.seed,
                        jobs=jobs, scheduler=args.scheduler, jobs_given=args.jobs is not None)  # fmt: skip
    t0 = time.perf_counter()
    command = "vocab " + " ".join(sys.argv[1:]) if sys.argv and sys.argv[0].endswith("vocab") else None
    out = run_grid(spec, args.out, jobs=jobs, force=args.force, command=command, scheduler=args.scheduler)
    print(f"{out}: written in {time.perf_counter() - t0:.0f} s")
    return 0


def build_parser() -> argparse.ArgumentParser:
    from vocab.cli_options import add_commands

    p = _Parser(prog="vocab", description="Audit an LLM judge on the Vocabscapes write-critique loop.")
    p.add_argument("-v", "--verbose", action="store_true", help="log diagnostics to stderr")
    add_commands(p.add_subparsers(dest="command", required=True, parser_class=_Parser), sys.modules[__name__])
    return p


def _interrupt(signum, frame):
    raise KeyboardInterrupt


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    logging.basicConfig(
        level=logging.INFO if args.verbose else logging.WARNING, format="%(levelname)s %(name)s: %(message)s"
    )
    # SIGTERM, and SIGINT (which a shell's background job would ignore), stop a command as Ctrl-C does:
    # the servers it started are stopped, and a run's manifest is marked interrupted.
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, _interrupt)
    try:
        if getattr(args, "seed", None) is not None and args.seed < 0:  # numpy's generators take none below 0
            raise UsageError(f"--seed must be non-negative, got {args.seed}")
        if not getattr(args, "writes_run_dir", False):
            return args.func(args)
        from vocab.records import dir_lock

        with dir_lock(args.run_dir):  # one writing command per run or dataset directory
            return args.func(args)
    except (InputError, FileExistsError) as e:
        print(f"vocab: error: {e}", file=sys.stderr)
        return 2
    except OSError as e:  # a name past the file system's limit is bad input; any other OSError is a fault
        if e.errno != errno.ENAMETOOLONG:
            raise
        print(f"vocab: error: {str(e.filename)[:200]}: a file name too long for this file system", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("vocab: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # e.g. `vocab levels 1-10000 | head`: the reader left, which is not an error
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0


if __name__ == "__main__":
    sys.exit(main())
