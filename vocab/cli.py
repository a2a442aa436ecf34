"""The ``vocab`` command line.

Every user error — a bad config, level range, file or argument — ends as one line on stderr
(``vocab: error: ...``) and exit code 2; nothing is written in that case.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import signal
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from vocab.config import ConfigError, load_config

DEFAULT_CONFIG = "configs/embedded.toml"


class UsageError(ValueError):
    """Bad input from the command line; printed as one line, exit code 2."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str):  # argparse's own errors: one line, exit 2
        self.exit(2, f"vocab: error: {message}\n")


def _add_config(p: argparse.ArgumentParser) -> None:
    p.add_argument("--config", default=DEFAULT_CONFIG, help=f"config file (default: {DEFAULT_CONFIG})")


def cmd_models_prepare(args) -> int:
    from vocab.serving.models import prepare

    cfg = load_config(args.config)
    embedded = [m for m in cfg.models.values() if m.kind == "embedded"]
    for m in embedded:
        t0 = time.perf_counter()
        folder = prepare(m.asset, cfg.cache_dir, force=args.force)
        print(f"{m.name}: {folder} ({time.perf_counter() - t0:.1f} s)")
    if not embedded:
        print("no embedded models in this config: nothing to prepare")
    return 0


def cmd_serve(args) -> int:
    from vocab.serving.servers import Servers, served_specs

    cfg = load_config(args.config)
    names = args.model or None
    if names:
        for n in names:
            cfg.model(n)
    if args.dry_run:
        for spec in served_specs(cfg, args.profile, names):
            print(f"# {spec.name}: port {spec.port}, log {spec.log_path}")
            print(spec.shell())
        others = [m for m in cfg.models.values() if not m.served]
        for m in others:
            print(f"# {m.name}: endpoint {m.base_url} (not started by vocab serve)")
        return 0
    with Servers(cfg, args.profile, names) as servers:
        for spec in servers.specs:
            how = "reused" if spec.name in servers.reused else "started"
            print(
                f"{spec.name}: {how}, {spec.health_url.removesuffix('/health')}/v1 (log: {spec.log_path})", flush=True
            )
        print("serving; Ctrl-C stops the servers this command started", flush=True)
        try:
            while True:
                time.sleep(3600)
        except KeyboardInterrupt:
            print("stopping", flush=True)
    return 0


def cmd_roundtrip(args) -> int:
    from vocab.serving.roundtrip import roundtrip

    cfg = load_config(args.config)
    results = asyncio.run(roundtrip(cfg, args.model or None))
    ok = True
    for r in results:
        print(
            json.dumps(
                {
                    "model": r.model,
                    "answer": r.value,
                    "error": r.error,
                    "usage": r.usage.as_dict() if r.usage else None,
                },
                sort_keys=True,
            )
        )
        ok &= r.error is None
    return 0 if ok else 1


NOTEBOOKS = Path(__file__).resolve().parents[1] / "notebooks"
DEMO_NOTEBOOKS = ("00_levels", "01_run", "02_sample", "03_correct", "04_agreement", "06_figures")
SAMPLE_PER_PILE, SAMPLE_SEED = 10, 0  # notebook 02's defaults: the demo draws the same sample


def cmd_demo(args) -> int:
    """The main job on a config: prepare models, start the servers, run the design, stop the servers,
    then execute the pipeline notebooks on the run (their executed copies go into the run directory)."""
    from vocab.nb import execute
    from vocab.serving.models import prepare
    from vocab.serving.roundtrip import roundtrip
    from vocab.serving.servers import Servers

    cfg = load_config(args.config)
    loop = loop_from_args(cfg, args)
    t0 = time.perf_counter()

    def say(msg: str) -> None:
        print(f"[demo {time.perf_counter() - t0:6.0f} s] {msg}", flush=True)

    for m in cfg.models.values():
        if m.kind == "embedded":
            prepare(m.asset, cfg.cache_dir)
    say("models ready")
    with Servers(cfg, args.profile) as servers:
        started = [s.name for s in servers.specs if s.name not in servers.reused]
        say(f"servers healthy: started {started or 'none'}, reused {servers.reused or 'none'}")
        for r in asyncio.run(roundtrip(cfg)):
            if r.error is not None:
                raise UsageError(f"round-trip through {r.model} failed ({r.error['kind']}: {r.error['message']})")
            say(f"round-trip {r.model}: ok ({r.usage.completion_tokens} tokens)")

        summary = run_design_from_args(cfg, loop, args)
        print_summary(summary)
        pending = sum(c.get("PENDING", 0) for c in summary.statuses.values())
        raters = []
        if pending:  # a sample drawn now would be frozen before the run is complete
            say(f"{pending} levels pending: calibration skipped until the run is complete (rerun to resume)")
        else:
            raters = calibrate(cfg, args.run_dir, sorted(set(loop.critics)), args.max_calls, say)
    say("servers stopped")
    run_dir = Path(args.run_dir).resolve()
    for name in DEMO_NOTEBOOKS:
        params = {"run_dir": str(run_dir)} if name != "00_levels" else {}
        if name == "02_sample" and pending:
            continue
        if name in ("03_correct", "04_agreement", "06_figures"):
            if len(raters) < (2 if name == "04_agreement" else 1):
                say(f"notebook {name}: skipped, too few complete blind raters ({raters or 'none'})")
                continue
            if name != "06_figures":
                params["raters"] = ",".join(raters)
        if name == "06_figures":
            params["figures_dir"] = str(run_dir / "figures")
        out = execute(NOTEBOOKS / f"{name}.ipynb", params, run_dir / "notebooks" / f"{name}.ipynb")
        say(f"notebook {name}: {out}")
    say(f"done: {run_dir}")
    return 0


def calibrate(cfg, run_dir, raters: list[str], max_calls: int | None, say) -> list[str]:
    """The calibration chain on a finished run: draw the blind sample (as notebook 02 does with its
    defaults), have each configured model re-grade it blind, and the script; returns the rater names."""
    from vocab.calibration import (
        CalibrationError,
        draw_sample,
        rate_with_model,
        read_sheet,
        script_ratings,
        validate_ratings,
        write_sample,
    )
    from vocab.records import load_run
    from vocab.serving.client import Clients

    try:
        write_sample(draw_sample(load_run(run_dir).attempts, SAMPLE_PER_PILE, SAMPLE_SEED), run_dir)
    except CalibrationError as e:
        raise UsageError(str(e)) from None
    sheet = read_sheet(run_dir)
    table = validate_ratings(script_ratings(sheet), list(sheet.blind_id), allow_empty=True)
    table.to_csv(Path(run_dir) / "calibration" / "ratings_script.csv", index=False)
    say(f"blind sample: {len(sheet)} rows; script rater done")

    async def go():
        clients = Clients.from_config(cfg, max_calls)

        async def one(r: str) -> dict:
            while True:  # rate_with_model's retry policy: a failed row again, with a new seed, 3 tries
                res = await rate_with_model(run_dir, r, clients.get(r))
                if res["missing"] == res["exhausted"]:
                    return res

        try:  # the raters run at once: each has its own server
            return dict(zip(raters, await asyncio.gather(*(one(r) for r in raters)), strict=True))
        finally:
            await clients.aclose()

    complete = []
    for name, result in asyncio.run(go()).items():
        if result["missing"]:
            say(
                f"blind rater {name}: {result['missing']} rows still without an answer after 3 tries "
                f"(calibration/rater_{name}_errors.jsonl); left out of the notebooks"
            )
        else:
            complete.append(name)
            say(f"blind rater {name}: {result['rated']} rows")
    return complete


def cmd_levels(args) -> int:
    from vocab.levels import LevelError, design, iter_levels, parse_ranges, parse_spans

    try:  # every bound is checked here, before a level or a list of numbers is made
        if args.tiers is not None:
            if args.range:
                raise UsageError("give a level range or --tiers/--per-tier, not both")
            numbers = design(parse_ranges(args.tiers, "tier"), args.per_tier, args.seed)
        else:
            if not args.range:
                raise UsageError("give a level range (e.g. 1-140) or --tiers 1-28 --per-tier 5 --seed 0")
            numbers = parse_spans(args.range)  # held as spans and streamed: 1-1000000 never becomes a list
    except LevelError as e:
        raise UsageError(str(e)) from None
    write = sys.stdout.write
    for lv in iter_levels(numbers):
        write(json.dumps(lv.as_dict(), sort_keys=False) + "\n")
    return 0


def cmd_check(args) -> int:
    from vocab.script import ScriptInputError, adjudicate_record

    lines = sys.stdin.read().splitlines()
    outputs = []
    for i, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
            outputs.append(adjudicate_record(obj))
        except json.JSONDecodeError as e:
            raise UsageError(f"stdin line {i}: not JSON ({e.msg})") from None
        except ScriptInputError as e:
            raise UsageError(f"stdin line {i}: {e}") from None
    for o in outputs:  # nothing is written unless every line is valid
        sys.stdout.write(json.dumps(o) + "\n")
    return 0


def loop_from_args(cfg, args):
    """The config's [loop] table with the command line's overrides; validated."""
    import dataclasses

    from vocab.config import LoopConfig
    from vocab.levels import LevelError, design, parse_ranges

    loop = cfg.loop or LoopConfig(writers=tuple(sorted(cfg.models)), critics=tuple(sorted(cfg.models)))
    changes = {}
    for attr in ("writers", "critics"):
        value = getattr(args, attr, None)
        if value:
            names = tuple(v.strip() for v in value.split(",") if v.strip())
            for n in names:
                cfg.model(n)
            changes[attr] = names
    if getattr(args, "levels", None):
        changes["levels"] = args.levels
    if getattr(args, "tiers", None):
        changes["tiers"], changes["levels"] = args.tiers, None
    for attr in ("per_tier", "design_seed", "max_attempts"):
        value = getattr(args, attr, None)
        if value is not None:
            if value < (0 if attr == "design_seed" else 1):
                raise UsageError(f"--{attr.replace('_', '-')} must be positive, got {value}")
            changes[attr] = value
    loop = dataclasses.replace(loop, **changes)
    try:  # validate the design now, so a bad range fails before anything is written
        if loop.levels:
            parse_ranges(loop.levels)
        else:
            design(parse_ranges(loop.tiers, "tier"), loop.per_tier, loop.design_seed)
    except LevelError as e:
        raise UsageError(str(e)) from None
    return loop


def cmd_run(args) -> int:
    cfg = load_config(args.config)
    print_summary(run_design_from_args(cfg, loop_from_args(cfg, args), args))
    return 0


def run_design_from_args(cfg, loop, args):
    """Run (or resume) the design with the command line's budget, retry and progress options."""
    from vocab.loop import run_design
    from vocab.records import RunDirError
    from vocab.serving.client import Clients

    if args.max_calls is not None and args.max_calls < 0:
        raise UsageError(f"--max-calls must be non-negative, got {args.max_calls}")

    async def go():
        clients = Clients.from_config(cfg, args.max_calls)
        try:
            return await run_design(
                cfg, loop, args.run_dir, clients, retry_abandoned=args.retry_abandoned, progress=not args.no_progress
            )
        finally:
            await clients.aclose()

    try:
        return asyncio.run(go())
    except RunDirError as e:
        raise UsageError(str(e)) from None


def print_summary(summary) -> None:
    print(
        f"run {summary.run_dir}: {summary.attempts_new} new attempts, {summary.errors_new} errors, "
        f"{summary.calls} calls in {summary.seconds:.0f} s",
        flush=True,
    )
    for cell, counts in summary.statuses.items():
        print(f"  {cell}: " + ", ".join(f"{k} {v}" for k, v in sorted(counts.items())), flush=True)


def _add_design(p: argparse.ArgumentParser) -> None:
    p.add_argument("--levels", help="an explicit level range instead of the design, e.g. 1-10")
    p.add_argument("--tiers", help="the design's tiers (default from config: 1-28)")
    p.add_argument("--per-tier", type=int, help="levels per tier (default from config: 5)")
    p.add_argument("--design-seed", type=int, help="seed of the design draw (default from config: 0)")
    p.add_argument("--writers", help="comma-separated writer models (default from config)")
    p.add_argument("--critics", help="comma-separated critic models (default from config)")
    p.add_argument("--max-attempts", type=int, help="attempts per level before a Hard FAIL (default 3)")


def cmd_lesson(args) -> int:
    from vocab.lesson import State, evaluate

    o = evaluate(State(args.rubric, args.rule, args.order, args.sequence))
    if args.json:
        print(json.dumps(o.summary()))
        return 0
    print(f"{args.rubric} + {args.rule}, {args.order}, {args.sequence}")
    print("item  base A/B  bonus A/B  judged A/B  verdict  reference")
    for r, ref in zip(o.items, o.reference, strict=True):
        print(
            f"{r.id:4}  {r.base_a:>3}/{r.base_b:<3}  {r.bonus_a:>3}/{r.bonus_b:<3}   {r.judged_a:>4}/{r.judged_b:<4}  "
            f"{r.verdict:7}  {ref}"
        )
    s = o.summary()
    print(
        f"A wins {s['a_wins']}, B wins {s['b_wins']}, ties {s['ties']}; raw A win rate {s['raw_a_win_rate']:.6f}; "
        f"tie-adjusted {s['adjusted_a']:.6f} / {s['adjusted_b']:.6f}; agreement {s['agreement']:.6f}; "
        f"Elo A {s['elo_a']:.6f}, B {s['elo_b']:.6f}"
    )
    return 0


def cmd_sample(args) -> int:
    from vocab.calibration import CalibrationError, draw_sample, write_sample
    from vocab.records import RunDirError, load_run

    try:
        run = load_run(args.run_dir)
        out = write_sample(draw_sample(run.attempts, args.per_pile, args.seed), args.run_dir)
    except (RunDirError, CalibrationError) as e:
        raise UsageError(str(e)) from None
    print(f"{out}: key.csv, blind_sheet.csv, blind_sheet.jsonl")
    return 0


def cmd_rate(args) -> int:
    from vocab.calibration import CalibrationError, rate_with_model, script_ratings

    if not (Path(args.run_dir) / "calibration" / "blind_sheet.jsonl").exists():
        raise UsageError(f"{args.run_dir}: no calibration/blind_sheet.jsonl (draw the sample first: vocab sample)")
    if args.model == "script":
        from vocab.calibration import read_sheet, validate_ratings

        sheet = read_sheet(args.run_dir)
        table = validate_ratings(script_ratings(sheet), list(sheet.blind_id), allow_empty=True)
        out = Path(args.run_dir) / "calibration" / "ratings_script.csv"
        table.to_csv(out, index=False)
        print(out)
        return 0
    from vocab.serving.client import Clients

    cfg = load_config(args.config)
    cfg.model(args.model)

    async def go():
        clients = Clients.from_config(cfg, args.max_calls)
        try:
            return await rate_with_model(
                args.run_dir, args.rater or args.model, clients.get(args.model), max_tokens=args.max_tokens
            )
        finally:
            await clients.aclose()

    try:
        result = asyncio.run(go())
    except CalibrationError as e:
        raise UsageError(str(e)) from None
    print(json.dumps(result))
    return 0 if result["missing"] == 0 else 1


def cmd_ratings_import(args) -> int:
    from vocab.calibration import CalibrationError, import_ratings

    try:
        print(import_ratings(args.file, args.run_dir, args.rater))
    except (CalibrationError, FileNotFoundError) as e:
        raise UsageError(str(e)) from None
    return 0


def cmd_exam_baselines(args) -> int:
    from vocab.exam import degenerate_scores, qualifies

    rows = degenerate_scores()
    if args.json:
        keys = ["judge", "tie_rate", "balanced_accuracy", "verdict_recall", "on_target_recall", "false_positive_rate"]
        for r in rows:
            print(json.dumps({k: r[k] for k in keys} | {k: v for k, v in r.items() if k not in keys}))
        return 0
    for r in rows:
        vals = ", ".join(f"{k} {v:.3f}" for k, v in r.items() if k != "judge" and v is not None)
        print(f"{r['judge']:14} {vals}; qualifies: {qualifies(r)}")
    return 0


REGISTRY = Path("data/exams/registry.jsonl")


def _exam_params(args, cfg) -> dict:
    from vocab.exam import run as examrun
    from vocab.exam import tournament

    if not (Path(args.run_dir) / "manifest.json").exists():
        raise UsageError(f"{args.run_dir}: not a run directory (no manifest.json)")
    judges = [j.strip() for j in args.judges.split(",") if j.strip()]
    if not judges:
        raise UsageError("--judges names no judge")
    for j in judges:
        cfg.model(j)
    for name in ("max_calls", "seed"):
        if getattr(args, name) < 0:
            raise UsageError(f"--{name.replace('_', '-')} must be non-negative, got {getattr(args, name)}")
    if args.exam_command == "planted" or getattr(args, "kind", None) == "planted":
        if args.sources < 1:
            raise UsageError(f"--sources must be at least 1, got {args.sources}")
        critic_max = (cfg.loop.critic_max_tokens if cfg.loop else None) or cfg.model(judges[0]).max_tokens
        return examrun.planted_params(
            args.run_dir, judges, args.sources, args.seed, args.max_calls, not args.no_reference, critic_max
        )
    if args.exam_command == "tournament":
        if args.levels < 1:
            raise UsageError(f"--levels must be at least 1, got {args.levels}")
        return tournament.tournament_params(
            args.run_dir, judges, args.levels, args.seed, args.max_calls, not args.no_reference
        )
    if args.pairs < 1:
        raise UsageError(f"--pairs must be at least 1, got {args.pairs}")
    return examrun.pairwise_params(args.run_dir, judges, args.pairs, args.seed, args.max_calls, not args.no_reference)


def cmd_exam_register(args) -> int:
    from vocab.exam import run as examrun
    from vocab.exam import tournament
    from vocab.exam.registry import RegistryError, register

    cfg = load_config(args.config)
    args.exam_command = args.kind
    params = _exam_params(args, cfg)
    metrics = {
        "planted": examrun.PLANTED_METRICS,
        "pairwise": examrun.PAIRWISE_METRICS,
        "tournament": tournament.TOURNAMENT_METRICS,
    }[args.kind]
    try:
        e = register(
            args.registry,
            args.id,
            params,
            thresholds=examrun.THRESHOLDS,
            metrics=metrics,
            judges=params["judges"],
            prediction=args.prediction,
            corrects=args.corrects,
        )
    except RegistryError as err:
        raise UsageError(str(err)) from None
    print(json.dumps({"id": e["id"], "hash": e["hash"]}))
    return 0


def cmd_exam_run(args) -> int:
    from vocab.exam import run as examrun
    from vocab.exam.registry import RegistryError, find
    from vocab.serving.client import Clients

    cfg = load_config(args.config)
    params = _exam_params(args, cfg)
    try:
        entries = {find(args.registry, params, j)["id"] for j in params["judges"]}
    except RegistryError as e:
        raise UsageError(f"{args.registry}: {e}") from None
    if len(entries) != 1:
        raise UsageError(f"the judges are registered under different entries: {sorted(entries)}")
    from vocab.exam.registry import verify

    entry = next(e for e in verify(args.registry) if e["id"] in entries)

    async def go():
        clients = Clients.from_config(cfg, params["max_calls"])
        try:
            return await examrun.run_exam(args.exam_command, args.run_dir, entry, clients, params["judges"], params)
        finally:
            await clients.aclose()

    from vocab.exam import ExamError

    try:
        out = asyncio.run(go())
    except ExamError as e:  # only the exam's own refusals: any other error keeps its traceback
        raise UsageError(str(e)) from None
    m = json.loads((out / "exam.json").read_text())
    print(f"{out}: {json.dumps(m['counts'])}")
    return 0 if m["status"] == "complete" else 1


def cmd_coverage(args) -> int:
    from vocab.coverage import coverage

    try:
        c = coverage(
            args.method,
            theta=args.theta,
            q1=args.q1,
            q0=args.q0,
            attempts=args.attempts,
            piles=args.piles,
            sims=args.sims,
            seed=args.seed,
            n_boot=args.n_boot,
            rater_error=args.rater_error,
        )
    except ValueError as e:
        raise UsageError(str(e)) from None
    print(json.dumps(c.as_dict()) if args.json else c)
    return 0


def cmd_coverage_grid(args) -> int:
    from vocab.coverage import GridSpec, parse_values, run_grid

    try:
        spec = GridSpec(
            methods=tuple(m.strip() for m in args.methods.split(",") if m.strip()),
            piles=parse_values(args.piles, "--piles", int),
            thetas=parse_values(args.thetas, "--thetas"),
            q1s=parse_values(args.q1s, "--q1s"),
            q0s=parse_values(args.q0s, "--q0s"),
            attempts=parse_values(args.attempts, "--attempts", int),
            sims=args.sims,
            n_boot=args.n_boot,
            seed=args.seed,
        )
        t0 = time.perf_counter()
        command = "vocab " + " ".join(sys.argv[1:]) if sys.argv and sys.argv[0].endswith("vocab") else None
        out = run_grid(spec, args.out, jobs=args.jobs, force=args.force, command=command)
    except (ValueError, FileExistsError) as e:
        raise UsageError(str(e)) from None
    print(f"{out}: written in {time.perf_counter() - t0:.0f} s")
    return 0


def build_parser() -> argparse.ArgumentParser:
    p = _Parser(prog="vocab", description="Audit an LLM judge on the Vocabscapes write-critique loop.")
    p.add_argument("-v", "--verbose", action="store_true", help="log diagnostics to stderr")
    sub = p.add_subparsers(dest="command", required=True, parser_class=_Parser)

    models = sub.add_parser("models", help="embedded model assets")
    msub = models.add_subparsers(dest="models_command", required=True, parser_class=_Parser)
    prep = msub.add_parser("prepare", help="turn each embedded GGUF into a folder vLLM can serve (idempotent)")
    _add_config(prep)
    prep.add_argument("--force", action="store_true", help="rebuild even when the folder is up to date")
    prep.set_defaults(func=cmd_models_prepare)

    serve = sub.add_parser("serve", help="start one vllm serve per served model; Ctrl-C stops them")
    _add_config(serve)
    serve.add_argument("--profile", choices=("cpu", "gpu"), help="override the config's serving profile")
    serve.add_argument("--dry-run", action="store_true", help="print the commands and environment only")
    serve.add_argument("--model", action="append", help="serve only this model (repeatable)")
    serve.set_defaults(func=cmd_serve)

    rt = sub.add_parser("roundtrip", help="one structured call through each model (servers must be up)")
    _add_config(rt)
    rt.add_argument("--model", action="append", help="only this model (repeatable)")
    rt.set_defaults(func=cmd_roundtrip)

    demo = sub.add_parser("demo", help="the main job: prepare models, serve, run the design, stop, notebooks")
    _add_config(demo)
    demo.add_argument("--profile", choices=("cpu", "gpu"), help="override the config's serving profile")
    demo.add_argument("--run-dir", type=Path, default=Path("data/runs/demo"), help="default: data/runs/demo")
    _add_design(demo)
    demo.add_argument("--retry-abandoned", action="store_true", help="rerun the levels that were abandoned")
    demo.add_argument("--max-calls", type=int, help="hard call budget (default from config)")
    demo.add_argument("--no-progress", action="store_true", help="no progress bars")
    demo.set_defaults(func=cmd_demo)

    run = sub.add_parser("run", help="run (or resume) the writer x critic design into a run directory")
    _add_config(run)
    run.add_argument("--run-dir", required=True, type=Path, help="the run directory, e.g. data/runs/my-run")
    _add_design(run)
    run.add_argument("--retry-abandoned", action="store_true", help="rerun the levels that were abandoned")
    run.add_argument("--max-calls", type=int, help="hard call budget for this process (default from config)")
    run.add_argument("--no-progress", action="store_true", help="no progress bars")
    run.set_defaults(func=cmd_run)

    sm = sub.add_parser("sample", help="draw the stratified blind sample and write the blinding export")
    sm.add_argument("--run-dir", required=True, type=Path)
    sm.add_argument("--per-pile", type=int, default=10, help="rows per pile per cell (default 10)")
    sm.add_argument("--seed", type=int, default=0)
    sm.set_defaults(func=cmd_sample)

    ra = sub.add_parser("rate", help="a blind rater grades the sample: a configured model, or `--model script`")
    _add_config(ra)
    ra.add_argument("--run-dir", required=True, type=Path)
    ra.add_argument("--model", required=True, help="a model name from the config, or script")
    ra.add_argument("--rater", help="the rater's name (default: the model's)")
    ra.add_argument("--max-tokens", type=int, default=None)
    ra.add_argument("--max-calls", type=int, default=None)
    ra.set_defaults(func=cmd_rate)

    rt_ = sub.add_parser("ratings", help="rating files")
    rsub = rt_.add_subparsers(dest="ratings_command", required=True, parser_class=_Parser)
    imp = rsub.add_parser("import", help="validate a filled-in sheet and store it as ratings_<rater>.csv")
    imp.add_argument("file", type=Path)
    imp.add_argument("--run-dir", required=True, type=Path)
    imp.add_argument("--rater", required=True)
    imp.set_defaults(func=cmd_ratings_import)

    lv = sub.add_parser("levels", help="print levels as JSON Lines: `vocab levels 1-140` or a sampled design")
    lv.add_argument("range", nargs="?", help="level numbers: 7, 1-140, 1-3,10")
    lv.add_argument("--tiers", help="the sampled design: tiers to draw from, e.g. 1-28")
    lv.add_argument("--per-tier", type=int, default=5, help="levels per tier in the design (default 5)")
    lv.add_argument("--seed", type=int, default=0, help="seed of the design draw (default 0)")
    lv.set_defaults(func=cmd_levels)

    from vocab.lesson import ORDERS, RUBRICS, RULES, SEQUENCES

    ls = sub.add_parser("lesson", help="the judge-bias lesson's toy judge for one state")
    ls.add_argument("--rubric", choices=tuple(RUBRICS), default="accuracy-first")
    ls.add_argument("--rule", choices=RULES, default="rubric")
    ls.add_argument("--order", choices=ORDERS, default="a-first")
    ls.add_argument("--sequence", choices=SEQUENCES, default="forward")
    ls.add_argument("--json", action="store_true", help="one JSON object")
    ls.set_defaults(func=cmd_lesson)

    ex = sub.add_parser("exam", help="the judge qualification exam")
    exsub = ex.add_subparsers(dest="exam_command", required=True, parser_class=_Parser)
    bl = exsub.add_parser("baselines", help="the degenerate judges' metrics (random: expected values)")
    bl.add_argument("--json", action="store_true", help="one JSON object per judge")
    bl.set_defaults(func=cmd_exam_baselines)

    def exam_args(q, kind: str) -> None:
        _add_config(q)
        q.add_argument("--run-dir", required=True, type=Path, help="the run whose answers are the sources")
        q.add_argument("--judges", default="smollm2,gemma3", help="comma-separated critics (default: both)")
        q.add_argument("--seed", type=int, default=0, help="seed of the draws (default 0)")
        q.add_argument("--max-calls", type=int, default=600, help="the exam's hard call budget (default 600)")
        q.add_argument("--no-reference", action="store_true", help="use the run's answers only")
        q.add_argument("--registry", type=Path, default=REGISTRY, help=f"the registry (default {REGISTRY})")
        if kind in ("planted", "any"):
            q.add_argument("--sources", type=int, default=12, help="planted: sources (default 12)")
        if kind in ("pairwise", "any"):
            q.add_argument("--pairs", type=int, default=12, help="pairwise: pairs per condition (default 12)")
        if kind in ("tournament", "any"):
            q.add_argument("--levels", type=int, default=30, help="tournament: writer-vs-writer levels (default 30)")

    rg = exsub.add_parser("register", help="pre-register an exam: parameters, metrics, thresholds, judges")
    rg.add_argument("kind", choices=("planted", "pairwise", "tournament"))
    rg.add_argument("--id", required=True, help="the entry's id, also the results directory's name")
    rg.add_argument("--prediction", help="what you expect, recorded so that it can turn out wrong")
    rg.add_argument("--corrects", help="the id of the entry this one corrects")
    exam_args(rg, "any")
    rg.set_defaults(func=cmd_exam_register)
    pl = exsub.add_parser("planted", help="run a registered planted-defect exam")
    exam_args(pl, "planted")
    pl.set_defaults(func=cmd_exam_run)
    pw = exsub.add_parser("pairwise", help="run a registered pairwise exam (null and known-answer pairs)")
    exam_args(pw, "pairwise")
    pw.set_defaults(func=cmd_exam_run)
    tn = exsub.add_parser("tournament", help="run a registered writer tournament: pairwise critic judgments")
    exam_args(tn, "tournament")
    tn.set_defaults(func=cmd_exam_run)

    from vocab.coverage import METHODS
    from vocab.stats import DEFAULT_INTERVAL

    cv = sub.add_parser("coverage", help="simulate the study: coverage, width and bias of an interval method")
    cv.add_argument("--method", choices=METHODS, default=DEFAULT_INTERVAL, help=f"(default {DEFAULT_INTERVAL}: 03's)")
    cv.add_argument("--piles", type=int, default=10, help="rows per pile (default 10)")
    cv.add_argument("--theta", type=float, required=True, help="the writer's true pass rate")
    cv.add_argument("--q1", type=float, required=True, help="the critic's sensitivity")
    cv.add_argument("--q0", type=float, required=True, help="the critic's specificity")
    cv.add_argument("--attempts", type=int, default=400, help="logged attempts behind p (default 400)")
    cv.add_argument("--sims", type=int, default=2000, help="simulated studies (default 2000)")
    cv.add_argument("--seed", type=int, default=0)
    cv.add_argument("--n-boot", type=int, default=1000, help="bootstrap resamples per study (default 1000)")
    cv.add_argument("--rater-error", type=float, default=0.0, help="the blind rater's own error rate")
    cv.add_argument("--json", action="store_true")
    cv.set_defaults(func=cmd_coverage)

    cg = sub.add_parser("coverage-grid", help="the coverage grid of every interval method into a CSV")
    cg.add_argument("--methods", default=",".join(METHODS), help=f"comma-separated (default {','.join(METHODS)})")
    cg.add_argument("--piles", default="10,20,40")
    cg.add_argument("--thetas", default="0.1,0.2,0.3,0.4,0.5,0.6,0.7,0.8,0.9")
    cg.add_argument("--q1s", default="0.1,0.5,0.8,0.95,1.0")
    cg.add_argument("--q0s", default="0.1,0.5,0.8,0.95,1.0")
    cg.add_argument("--attempts", default="100,400")
    cg.add_argument("--sims", type=int, default=2000)
    cg.add_argument("--n-boot", type=int, default=1000)
    cg.add_argument("--seed", type=int, default=0)
    cg.add_argument("--jobs", type=int, default=2, help="worker processes (default 2)")
    cg.add_argument("--out", required=True, type=Path, help="the CSV to write (a .json with the command beside it)")
    cg.add_argument("--force", action="store_true", help="replace an existing CSV")
    cg.set_defaults(func=cmd_coverage_grid)

    ck = sub.add_parser("check", help="the script adjudicator: JSON Lines on stdin, one verdict line per input")
    ck.set_defaults(func=cmd_check)
    return p


def _interrupt(signum, frame):
    raise KeyboardInterrupt


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    logging.basicConfig(
        level=logging.INFO if args.verbose else logging.WARNING, format="%(levelname)s %(name)s: %(message)s"
    )
    # SIGTERM, and SIGINT (which a shell's background job would ignore), stop a command as Ctrl-C does:
    # the servers it started are stopped, and a run's manifest is marked interrupted.
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, _interrupt)
    try:
        return args.func(args)
    except (ConfigError, UsageError) as e:
        print(f"vocab: error: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("vocab: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # e.g. `vocab levels 1-10000 | head`: the reader left, which is not an error
        import os

        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0


if __name__ == "__main__":
    sys.exit(main())
