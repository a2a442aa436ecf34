"""The main job on a config (``make demo``, ``vocab demo``): prepare the embedded models, start the servers,
check a structured round-trip through each, run the design, run the calibration chain once no level is
pending, stop the servers, then execute the pipeline notebooks on the run (their executed copies and figures
go into the run directory)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from vocab.config import Config, LoopConfig
from vocab.errors import InputError
from vocab.layout import RunDir
from vocab.loop import RunSummary

NOTEBOOKS = Path(__file__).resolve().parents[1] / "notebooks"
DEMO_RATER = "annotator-1"  # the demo's packet's rater
DEMO_NOTEBOOKS = ("00_levels", "01_run", "02_sample", "03_correct", "04_agreement", "06_figures")


class DemoError(InputError):
    """A step of the demo failed in a way the user must fix (a model that does not answer)."""


@dataclass(frozen=True)
class DemoResult:
    run_dir: Path
    summary: RunSummary
    raters: tuple[str, ...]  # blind raters with complete ratings
    notebooks: tuple[Path, ...]  # executed copies


def notebook_plan(run_dir: Path, raters: list[str], pending: int) -> list[tuple[str, dict | None, str]]:
    """Which pipeline notebooks run on the demo's run, with which parameters, or why one is skipped:
    (name, parameters or None, reason)."""
    plan = []
    for name in DEMO_NOTEBOOKS:
        params = {"run_dir": str(run_dir)} if name != "00_levels" else {}
        if name == "02_sample" and pending:
            plan.append((name, None, "levels pending: no sample yet"))
            continue
        if name in ("03_correct", "04_agreement", "06_figures"):
            if len(raters) < (2 if name == "04_agreement" else 1):
                plan.append((name, None, f"too few complete blind raters ({raters or 'none'})"))
                continue
            if name != "06_figures":
                params["raters"] = ",".join(raters)
                params["output_dir"] = str(RunDir(run_dir).analysis)  # the run's own tables, whatever its raters
        if name == "06_figures":
            params["figures_dir"] = str(RunDir(run_dir).figures)
        plan.append((name, params, ""))
    return plan


def run_demo(
    cfg: Config,
    loop: LoopConfig,
    run_dir: str | Path,
    *,
    profile: str | None = None,
    max_calls: int | None = None,
    retry_abandoned: bool = False,
    progress: bool = True,
    say: Callable[[str], None] = print,
) -> DemoResult:
    from vocab import loop as loop_mod
    from vocab.nb import execute
    from vocab.raters.chain import calibrate_run
    from vocab.serving.models import prepare
    from vocab.serving.roundtrip import roundtrip
    from vocab.serving.servers import Servers

    for m in cfg.models.values():
        if m.kind == "embedded":
            prepare(m.asset, cfg.cache_dir)
    say("models ready")
    with Servers(cfg, profile) as servers:
        started = [s.name for s in servers.specs if s.name not in servers.reused]
        say(f"servers healthy: started {started or 'none'}, reused {servers.reused or 'none'}")
        for r in asyncio.run(roundtrip(cfg)):
            if r.error is not None:
                raise DemoError(f"round-trip through {r.model} failed ({r.error['kind']}: {r.error['message']})")
            say(f"round-trip {r.model}: ok ({r.usage.completion_tokens} tokens)")
        summary = loop_mod.run(
            cfg, loop, Path(run_dir), max_calls=max_calls, retry_abandoned=retry_abandoned, progress=progress
        )
        say(summary.text())
        pending = sum(c.get("PENDING", 0) for c in summary.statuses.values())
        raters: list[str] = []
        if pending:  # a sample drawn now would be frozen before the run is complete
            say(f"{pending} levels pending: calibration skipped until the run is complete (rerun to resume)")
        else:
            raters = calibrate_run(cfg, run_dir, sorted(set(loop.critics)), max_calls, say)
    say("servers stopped")
    run_dir = Path(run_dir).resolve()
    executed = []
    for name, params, why in notebook_plan(run_dir, raters, pending):
        if params is None:
            say(f"notebook {name}: skipped, {why}")
            continue
        executed.append(execute(NOTEBOOKS / f"{name}.ipynb", params, run_dir / "notebooks" / f"{name}.ipynb"))
        say(f"notebook {name}: {executed[-1]}")
    if raters:
        from vocab import report
        from vocab.raters.packet import make_packet

        say(f"report: {report.write(run_dir, raters)[0]}")
        # a human rater's packet of the sample, made by this code (never a committed one, which would age)
        packet = make_packet(run_dir, DEMO_RATER)
        say(f"packet for a human rater: {packet.with_suffix('.zip')} (rate.html inside opens in a browser)")
    say(f"done: {run_dir}")
    return DemoResult(run_dir, summary, tuple(raters), tuple(executed))
