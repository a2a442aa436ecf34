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

from vocab.cli_types import UsageError
from vocab.config import load_config
from vocab.errors import InputError


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


def dry_run_lines(cfg, profile: str | None, names: list[str] | None) -> list[str]:
    """`vocab serve --dry-run`: the cpu recipe, each server's command and environment, and the endpoints vocab does
    not start."""
    from vocab.serving.recipes import recipe_line
    from vocab.serving.servers import served_specs

    out = [recipe_line(cfg)] if (profile or cfg.profile) == "cpu" else []
    out += [f"# {s.name}: port {s.port}, log {s.log_path}\n{s.shell()}" for s in served_specs(cfg, profile, names)]
    return out + [f"# {m.name}: endpoint {m.base_url} (not started by vocab serve)" for m in cfg.models.values()
                  if not m.served]  # fmt: skip


def cmd_serve(args) -> int:
    from vocab.serving.servers import Servers

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


def _command_line() -> str | None:
    """The command as typed, for a result's record (None when vocab was not run as the ``vocab`` command)."""
    return "vocab " + " ".join(sys.argv[1:]) if sys.argv and sys.argv[0].endswith("vocab") else None


def cmd_coverage_grid(args) -> int:
    from vocab.coverage.grid import grid_request, run_grid

    jobs = 2 if args.jobs is None else args.jobs
    spec = grid_request(args.methods, args.piles, args.thetas, args.q1s, args.q0s, args.spreads, levels=args.levels,
                        max_attempts=args.max_attempts, sims=args.sims, n_boot=args.n_boot, seed=args.seed,
                        jobs=jobs, scheduler=args.scheduler, jobs_given=args.jobs is not None,
                        population=args.population)  # fmt: skip
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


def build_parser() -> argparse.ArgumentParser:
    from types import SimpleNamespace

    from vocab import cli_audit
    from vocab.cli_compare import add_compare
    from vocab.cli_options import add_commands

    commands = SimpleNamespace(**{k: v for m in (sys.modules[__name__], cli_audit) for k, v in vars(m).items()
                                  if k.startswith("cmd_")})  # fmt: skip
    p = _Parser(prog="vocab", description="Audit an LLM judge on the Vocabscapes write-critique loop.")
    p.add_argument("-v", "--verbose", action="store_true", help="log diagnostics to stderr")
    sub = p.add_subparsers(dest="command", required=True, parser_class=_Parser)
    add_commands(sub, commands)
    add_compare(sub)  # a command group with its parser beside it (vocab.cli_compare)
    return p


def _interrupt(signum, frame):
    raise KeyboardInterrupt


def main(argv: Sequence[str] | None = None) -> int:
    try:
        args = build_parser().parse_args(argv)
    except SystemExit as e:  # argparse's refusal (one line, exit 2) or --help (0): the code, as every command's
        return int(e.code or 0)
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
    except InputError as e:
        print(f"vocab: error: {e}", file=sys.stderr)
        return 2
    except FileExistsError as e:  # a file where vocab makes a folder (vocab.files.make_dir names it in its words)
        print(f"vocab: error: {str(e.filename)[:200]} is in the way (a file where vocab keeps a folder): move it away",
              file=sys.stderr)  # fmt: skip
        return 2
    except BrokenPipeError:  # e.g. `vocab levels 1-10000 | head`: the reader left, which is not an error
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except OSError as e:  # a name past the file system's limit is bad input; any other OSError is a fault
        if e.errno != errno.ENAMETOOLONG:
            raise
        print(f"vocab: error: {str(e.filename)[:200]}: a file name too long for this file system", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("vocab: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
