"""The study's commands: the embedded models, serving them, the write-critique loop's runs and the demo, the level
generator and the script adjudicator (models, serve, roundtrip, demo, run, levels, check), each parser beside its
command (:mod:`vocab.cli` joins the groups)."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

from vocab.cli_types import UsageError, call_budget, config_option
from vocab.config import load_config


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
    return out + [
        f"# {m.name}: endpoint {m.base_url} (not started by vocab serve)" for m in cfg.models.values() if not m.served
    ]


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
        print(
            json.dumps(
                {
                    "model": r.model,
                    "answer": r.value,
                    "error": r.error,
                    "usage": usage,
                    "server": deployment(cfg.model(r.model)),
                },
                sort_keys=True,
            )
        )
    return 0 if all(r.error is None for r in results) else 1


def _loop(cfg, args):
    from vocab.config import loop_with_overrides

    return loop_with_overrides(
        cfg,
        writers=args.writers,
        critics=args.critics,
        levels=args.levels,
        tiers=args.tiers,
        per_tier=args.per_tier,
        design_seed=args.design_seed,
        max_attempts=args.max_attempts,
    )


def cmd_demo(args) -> int:
    from vocab.demo import run_demo

    cfg = load_config(args.config)
    t0 = time.perf_counter()
    run_demo(
        cfg,
        _loop(cfg, args),
        args.run_dir,
        profile=args.profile,
        max_calls=args.max_calls,
        retry_abandoned=args.retry_abandoned,
        progress=not args.no_progress,
        say=lambda msg: print(f"[demo {time.perf_counter() - t0:6.0f} s] {msg}", flush=True),
    )
    return 0


def cmd_run(args) -> int:
    from vocab import loop

    cfg = load_config(args.config)
    summary = loop.run(
        cfg,
        _loop(cfg, args),
        args.run_dir,
        max_calls=args.max_calls,
        retry_abandoned=args.retry_abandoned,
        progress=not args.no_progress,
    )
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


def add_study(sub) -> None:
    """The study's commands on the subparsers ``sub``."""
    models = sub.add_parser("models", help="embedded model assets")
    msub = models.add_subparsers(dest="models_command", required=True, parser_class=type(models))
    prep = msub.add_parser("prepare", help="turn each embedded GGUF into a folder vLLM can serve (idempotent)")
    config_option(prep)
    prep.add_argument("--force", action="store_true", help="rebuild even when the folder is up to date")
    prep.set_defaults(func=cmd_models_prepare)

    serve = sub.add_parser("serve", help="start one vllm serve per served model; Ctrl-C stops them")
    config_option(serve)
    serve.add_argument("--profile", choices=("cpu", "gpu"), help="override the config's serving profile")
    serve.add_argument("--dry-run", action="store_true", help="print the commands and environment only")
    serve.add_argument("--model", action="append", help="serve only this model (repeatable)")
    serve.set_defaults(func=cmd_serve)

    rt = sub.add_parser("roundtrip", help="one structured call through each model (servers must be up)")
    config_option(rt)
    rt.add_argument("--model", action="append", help="only this model (repeatable)")
    rt.set_defaults(func=cmd_roundtrip)

    demo = sub.add_parser("demo", help="the main job: prepare models, serve, run the design, stop, notebooks")
    config_option(demo)
    demo.add_argument("--profile", choices=("cpu", "gpu"), help="override the config's serving profile")
    demo.add_argument("--run-dir", type=Path, default=Path("data/runs/demo"), help="default: data/runs/demo")
    _design(demo)
    demo.set_defaults(func=cmd_demo, writes_run_dir=True)

    run = sub.add_parser("run", help="run (or resume) the writer x critic design into a run directory")
    config_option(run)
    run.add_argument("--run-dir", required=True, type=Path, help="the run directory, e.g. data/runs/my-run")
    _design(run)
    run.set_defaults(func=cmd_run, writes_run_dir=True)

    lv = sub.add_parser("levels", help="print levels as JSON Lines: `vocab levels 1-140` or a sampled design")
    lv.add_argument("range", nargs="?", help="level numbers: 7, 1-140, 1-3,10 (streamed; at most 1,000,000)")
    lv.add_argument("--tiers", help="the sampled design: tiers to draw from, e.g. 1-28")
    lv.add_argument("--per-tier", type=int, default=5, help="levels per tier in the design (default 5)")
    lv.add_argument("--seed", type=int, default=0, help="seed of the design draw (default 0)")
    lv.set_defaults(func=cmd_levels)

    ck = sub.add_parser("check", help="the script adjudicator: JSON Lines on stdin, one verdict line per input")
    ck.set_defaults(func=cmd_check)
