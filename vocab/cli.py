"""The ``vocab`` command line: each command parses its options and calls one library function.

Every user error — a bad config, level range, file or argument — ends as one line on stderr
(``vocab: error: ...``) and exit code 2; nothing is written in that case. A command that writes into a run or
dataset directory holds that directory's lock (:func:`vocab.records.dir_lock`) while it runs: a second one is
refused. The library raises typed errors, all
subclasses of :class:`vocab.errors.InputError`; :func:`main` is the one place that turns them into that line.
"""

from __future__ import annotations

import argparse
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
    from vocab.serving.servers import Servers, served_specs

    cfg = load_config(args.config)
    names = args.model or None
    for n in names or ():
        cfg.model(n)
    if args.dry_run:
        for spec in served_specs(cfg, args.profile, names):
            print(f"# {spec.name}: port {spec.port}, log {spec.log_path}\n{spec.shell()}")
        for m in (m for m in cfg.models.values() if not m.served):
            print(f"# {m.name}: endpoint {m.base_url} (not started by vocab serve)")
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
    from vocab.script import MAX_LINE, check_lines

    def lines():  # read a line at a time, never more than one line's limit (a 100 MB line is refused early)
        while line := sys.stdin.readline(MAX_LINE + 2):
            yield line.rstrip("\r\n") if line.endswith("\n") or len(line) <= MAX_LINE else line

    for o in check_lines(lines()):  # nothing is written unless every line is valid
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
    from vocab.calibration import draw_sample, load_dataset, write_sample
    from vocab.calibration import sample as sm

    if args.budget is not None and args.per_pile is not None:
        raise UsageError("--budget and --per-pile: give one (a budget is split between the piles)")
    if args.allocation is not None and args.budget is None:
        raise UsageError("--allocation needs --budget (the rows per cell to split)")
    if args.rater is not None and args.allocation != "pilot":
        raise UsageError("--rater is the pilot's rater: only with --allocation pilot")
    allocation = args.allocation or "equal"
    data = load_dataset(args.run_dir)
    cal = Path(args.run_dir) / "calibration"
    record = {"seed": args.seed, "allocation": allocation, "budget": args.budget}
    if allocation == "pilot":
        from vocab.calibration.raters import blind_ratings, rater_passes

        ratings, lead = blind_ratings(args.run_dir, [args.rater] if args.rater else None,
                                      purpose="there is no pilot to allocate from")  # fmt: skip
        rater = args.rater or lead
        key, sheet = sm.read_key(args.run_dir), sm.read_sheet(args.run_dir)
        extra, sizes = sm.extend_sample(data.attempts, key, rater_passes(ratings[rater]), args.budget, args.seed,
                                        data.visible, set(sheet.blind_id))  # fmt: skip
        sm.write_extension(extra, key, args.run_dir)
        if (cal / "ratings_script.csv").exists():  # the script rater covers every row: its verdicts adjudicate
            from vocab.calibration.raters import write_script_ratings

            write_script_ratings(args.run_dir)
        record |= {"stage": "pilot extension", "pilot_rater": rater, "added": len(extra.key)}
        print(f"{cal}: {len(extra.key)} rows added to the {len(key)} of the pilot (allocated by {rater}'s ratings); "
              "the new rows are at the end of the blind sheet")  # fmt: skip
    else:
        sizes = sm.pile_sizes(data.attempts, args.budget, allocation) if args.budget is not None else None
        fresh = not (cal / "key.csv").exists()
        per_pile = 10 if args.per_pile is None else args.per_pile
        out = write_sample(draw_sample(data.attempts, per_pile, args.seed, data.visible, sizes=sizes),
                           args.run_dir)  # fmt: skip
        if not fresh:
            print(f"{out}: the same sample is already there (key.csv, blind_sheet.csv, blind_sheet.jsonl)")
            return 0
        print(f"{out}: key.csv, blind_sheet.csv, blind_sheet.jsonl")
        record |= {"stage": "draw", "per_pile": None if sizes else per_pile}
    if sizes:
        record["rows_per_cell"] = {c: {"passed": a, "failed": b} for c, (a, b) in sizes.items()}
    sm.write_sample_manifest(args.run_dir, record)
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

    def values(text, default):
        option = "--pass-values" if default == INSPECT_PASS else "--fail-values"
        return _names(text, option) if text is not None else default

    out = import_inspect(
        args.log,
        args.run_dir,
        scorer=args.scorer,
        pass_values=values(args.pass_values, INSPECT_PASS),
        fail_values=values(args.fail_values, INSPECT_FAIL),
        question=args.question or INSPECT_QUESTION,
        judge=args.judge,
    )
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
    import asyncio

    from vocab.calibration import rate_with_model, write_script_ratings
    from vocab.serving.client import Clients

    if not (Path(args.run_dir) / "calibration" / "blind_sheet.jsonl").exists():
        raise UsageError(f"{args.run_dir}: no calibration/blind_sheet.jsonl (draw the sample first: vocab sample)")
    if args.model == "script":
        print(write_script_ratings(args.run_dir))
        return 0
    cfg = load_config(args.config)
    cfg.model(args.model)

    async def go():
        async with Clients.from_config(cfg, args.max_calls) as clients:
            model = clients.get(args.model)
            return await rate_with_model(args.run_dir, args.rater or args.model, model, max_tokens=args.max_tokens)

    progress = asyncio.run(go())
    print(json.dumps(progress.as_dict()))
    return 0 if progress.complete else 1


def cmd_packet(args) -> int:
    from vocab.calibration.packet import make_packet

    out = make_packet(args.run_dir, args.rater, seed=args.seed)
    print(f"{out}: the packet of rater {args.rater}. Hand the rater {out.with_suffix('.zip')} (they open it with "
          f"vocab form {out.name}.zip); nothing of the run is in it")  # fmt: skip
    return 0


def cmd_form(args) -> int:
    from vocab.calibration.packet import read_packet_meta, unpack_packet_zip

    packet = args.packet
    if packet.suffix == ".zip" and packet.is_file():
        packet = unpack_packet_zip(packet, args.into)
        print(f"{packet}: the packet, unpacked from {args.packet.name}; your ratings are kept here", file=sys.stderr)
    elif args.into is not None:
        raise UsageError("--into is for a packet's zip (vocab form NAME.zip --into DIR)")
    if not (packet / "packet.json").exists():
        raise UsageError(f"{packet}: not a rater's packet (make one: vocab packet --run-dir RUN --rater NAME)")
    read_packet_meta(packet)  # a damaged packet is one line here, not an error inside JupyterLab
    run = packet.resolve().parent.parent
    if (run / "calibration" / "key.csv").exists():
        hand = packet.with_suffix(".zip")
        print(f"note: this packet lies inside the run {run}: the form's kernel can read the run's files, the key "
              f"among them. To hand it to a rater, give them {hand}", file=sys.stderr)  # fmt: skip
    argv = [
        str(Path(sys.executable).with_name("jupyter")),
        "lab",
        f"--ServerApp.root_dir={packet.resolve()}",
        "--FileContentsManager.pre_save_hook=vocab.calibration.form.strip_live_form",
        "--LabApp.default_url=/lab/tree/rate.ipynb",
        f"--ServerApp.port={args.port}",
        "--ServerApp.ip=127.0.0.1",
        "--ServerApp.terminals_enabled=False",  # no shell beside the form: the run's files are not a terminal away
        "--LabApp.news_url=None",  # a rater's JupyterLab asks nothing of the internet: no news feed,
        "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",  # no update check
        # ... and does not ask whether it may (JupyterLab's news toast): its settings' defaults say no
        f"--LabApp.app_settings_dir={Path(__file__).with_name('templates') / 'lab_settings'}",
    ]
    if args.no_browser:
        argv.append("--no-browser")
    if os.geteuid() == 0:  # containers and CI run as root; JupyterLab refuses that without being told
        argv.append("--allow-root")
    if args.token is not None:
        argv.append(f"--IdentityProvider.token={args.token}")
    os.execv(argv[0], argv)  # JupyterLab takes over this process: Ctrl-C stops it as usual


def cmd_ratings_import(args) -> int:
    from vocab.calibration import import_ratings

    try:
        print(import_ratings(args.file, args.run_dir, args.rater, partial=args.partial, replace=args.replace).text())
    except FileNotFoundError as e:
        raise UsageError(f"{e.filename or args.file}: no such file") from None
    return 0


def cmd_exam_baselines(args) -> int:
    from vocab.exam import degenerate_scores, qualifies

    keys = ["judge", "tie_rate", "balanced_accuracy", "verdict_recall", "on_target_recall", "false_positive_rate"]
    for r in degenerate_scores():
        if args.json:
            print(json.dumps({k: r[k] for k in keys} | {k: v for k, v in r.items() if k not in keys}))
        else:
            vals = ", ".join(f"{k} {v:.3f}" for k, v in r.items() if k != "judge" and v is not None)
            print(f"{r['judge']:14} {vals}; qualifies: {qualifies(r)}")
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
    from vocab.calibration.audit import audit
    from vocab.records import dir_lock

    raters = _names(args.raters, "--raters") if args.raters is not None else ()
    llm = _names(args.llm_raters, "--llm-raters") if args.llm_raters is not None else ()
    if args.per_pile < 1:
        raise UsageError(f"--per-pile must be positive, got {args.per_pile}")
    cfg = load_config(args.config) if llm else None
    target = args.source if args.source.is_dir() else args.out
    if target is None:
        raise UsageError(f"{args.source} is a file: name a new directory for its dataset with --out")
    with dir_lock(target):
        if args.source.is_dir() and (args.scorer or args.assertion):
            raise UsageError(f"{args.source} is a directory: --scorer and --assertion are for an imported file")
        kw = {"inspect": {"scorer": args.scorer}, "promptfoo": {"assertion": args.assertion}}
        a = audit(args.source, args.out, raters=raters, llm_raters=llm, cfg=cfg, per_pile=args.per_pile,
                  seed=args.seed, max_calls=args.max_calls, source_kind=args.source_kind, import_kw=kw)  # fmt: skip
    for name, state in sorted(a.rated.items()):
        print(f"ratings {name}: {state}")
    for line in a.headline:
        print(line)
    print(f"next: {a.next_step}")
    return 0


def cmd_report(args) -> int:
    from vocab import report

    if not args.run_dir.is_dir():
        raise UsageError(f"{args.run_dir}: not a directory (a run or an imported dataset)")
    from vocab.records import dir_lock

    raters = list(_names(args.raters, "--raters")) if args.raters is not None else None
    with dir_lock(args.run_dir):  # read while nobody writes into it
        paths = report.write(args.run_dir, raters, args.out)
    for p in paths:
        print(p)
    return 0


def cmd_plan(args) -> int:
    from vocab.coverage.plan import plan, plan_from_pilot

    guesses = {"--theta": args.theta, "--q1": args.q1, "--q0": args.q0, "--attempts": args.attempts}
    if args.pilot is not None:
        given = [k for k, v in guesses.items() if v is not None]
        if given:
            raise UsageError(f"{', '.join(given)}: a pilot ({args.pilot}) gives these; leave them out")
        if not args.pilot.is_dir():
            raise UsageError(f"{args.pilot}: not a directory (a run or dataset with some blind ratings)")
        try:
            pp = plan_from_pilot(args.pilot, half_width=args.half_width, rater=args.rater, method=args.method,
                                 sims=args.sims, seed=args.seed, n_boot=args.n_boot)  # fmt: skip
        except ValueError as e:
            raise UsageError(str(e)) from None
        print(json.dumps(pp.as_dict()) if args.json else pp.text())
        return 0
    missing = [k for k, v in guesses.items() if v is None]
    if missing:
        raise UsageError(f"{', '.join(missing)} needed (or a pilot directory: vocab plan DIR --half-width H)")
    if args.rater is not None:
        raise UsageError("--rater is for a pilot (vocab plan DIR --rater NAME)")
    try:
        p = plan(theta=args.theta, q1=args.q1, q0=args.q0, attempts=args.attempts, half_width=args.half_width,
                 method=args.method, sims=args.sims, seed=args.seed, n_boot=args.n_boot)  # fmt: skip
    except ValueError as e:
        raise UsageError(str(e)) from None
    print(json.dumps(p.as_dict()) if args.json else p.text())
    return 0


def cmd_coverage_grid(args) -> int:
    from vocab.coverage import GridSpec, parse_values, run_grid

    try:
        spec = GridSpec(
            tuple(m.strip() for m in args.methods.split(",") if m.strip()), parse_values(args.piles, "--piles", int),
            parse_values(args.thetas, "--thetas"), parse_values(args.q1s, "--q1s"), parse_values(args.q0s, "--q0s"),
            parse_values(args.spreads, "--spreads"), levels=args.levels, max_attempts=args.max_attempts,
            sims=args.sims, n_boot=args.n_boot, seed=args.seed,
        )  # fmt: skip
        spec.validate()
    except ValueError as e:
        raise UsageError(str(e)) from None
    cores = len(os.sched_getaffinity(0))
    if not 1 <= args.jobs <= cores:  # each worker holds one point's arrays: more than the cores only adds memory
        raise UsageError(f"--jobs must lie between 1 and {cores} (the cores this process may use), got {args.jobs}")
    if args.scheduler is not None and args.scheduler != "local" and "://" not in args.scheduler:
        raise UsageError(f"--scheduler: an address such as tcp://HOST:8786, or local; got {args.scheduler!r}")
    t0 = time.perf_counter()
    command = "vocab " + " ".join(sys.argv[1:]) if sys.argv and sys.argv[0].endswith("vocab") else None
    out = run_grid(spec, args.out, jobs=args.jobs, force=args.force, command=command, scheduler=args.scheduler)
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
    except KeyboardInterrupt:
        print("vocab: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # e.g. `vocab levels 1-10000 | head`: the reader left, which is not an error
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0


if __name__ == "__main__":
    sys.exit(main())
