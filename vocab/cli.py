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
    from vocab.models import prepare

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
    from vocab.serve import Servers, served_specs

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
    # SIGTERM behaves like Ctrl-C, so the with-block stops every server it started.
    signal.signal(signal.SIGTERM, lambda *_: (_ for _ in ()).throw(KeyboardInterrupt()))
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
    from vocab.roundtrip import roundtrip

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


def cmd_demo(args) -> int:
    """The main job on a config: prepare models, start the servers, run the job, stop the servers."""
    from vocab.models import prepare
    from vocab.roundtrip import roundtrip
    from vocab.serve import Servers

    cfg = load_config(args.config)
    t0 = time.perf_counter()
    for m in cfg.models.values():
        if m.kind == "embedded":
            prepare(m.asset, cfg.cache_dir)
    print(f"[demo] models ready ({time.perf_counter() - t0:.0f} s)", flush=True)
    ok = True
    with Servers(cfg, args.profile) as servers:
        started = [s.name for s in servers.specs if s.name not in servers.reused]
        print(
            f"[demo] servers healthy: started {started or 'none'}, reused {servers.reused or 'none'} "
            f"({time.perf_counter() - t0:.0f} s)",
            flush=True,
        )
        for r in asyncio.run(roundtrip(cfg)):
            status = "ok" if r.error is None else f"FAILED ({r.error['kind']}: {r.error['message']})"
            print(
                f"[demo] round-trip {r.model}: {status} answer={json.dumps(r.value)} "
                f"tokens={r.usage.completion_tokens if r.usage else None}",
                flush=True,
            )
            ok &= r.error is None
    print(f"[demo] servers stopped; done in {time.perf_counter() - t0:.0f} s", flush=True)
    return 0 if ok else 1


def cmd_levels(args) -> int:
    from vocab.levels import LevelError, design, generate, lexicon, parse_ranges

    try:
        if args.tiers is not None:
            if args.range:
                raise UsageError("give a level range or --tiers/--per-tier, not both")
            numbers = design(parse_ranges(args.tiers, "tier"), args.per_tier, args.seed)
        else:
            if not args.range:
                raise UsageError("give a level range (e.g. 1-140) or --tiers 1-28 --per-tier 5 --seed 0")
            numbers = parse_ranges(args.range)
    except LevelError as e:
        raise UsageError(str(e)) from None
    lex = lexicon()
    out = sys.stdout
    for n in numbers:
        out.write(json.dumps(generate(n, lex).as_dict(), sort_keys=False) + "\n")
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

    demo = sub.add_parser("demo", help="the main job: prepare models, serve, run, stop the servers")
    _add_config(demo)
    demo.add_argument("--profile", choices=("cpu", "gpu"), help="override the config's serving profile")
    demo.set_defaults(func=cmd_demo)

    lv = sub.add_parser("levels", help="print levels as JSON Lines: `vocab levels 1-140` or a sampled design")
    lv.add_argument("range", nargs="?", help="level numbers: 7, 1-140, 1-3,10")
    lv.add_argument("--tiers", help="the sampled design: tiers to draw from, e.g. 1-28")
    lv.add_argument("--per-tier", type=int, default=5, help="levels per tier in the design (default 5)")
    lv.add_argument("--seed", type=int, default=0, help="seed of the design draw (default 0)")
    lv.set_defaults(func=cmd_levels)

    ck = sub.add_parser("check", help="the script adjudicator: JSON Lines on stdin, one verdict line per input")
    ck.set_defaults(func=cmd_check)
    return p


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    logging.basicConfig(
        level=logging.INFO if args.verbose else logging.WARNING, format="%(levelname)s %(name)s: %(message)s"
    )
    try:
        return args.func(args)
    except (ConfigError, UsageError) as e:
        print(f"vocab: error: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:  # e.g. `vocab levels 1-10000 | head`: the reader left, which is not an error
        import os

        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0


if __name__ == "__main__":
    sys.exit(main())
