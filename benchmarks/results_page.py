"""docs/benchmarks.md's table of results, made from benchmarks/results/ and data/coverage/: each row's value, machine,
date and commit read from its file (the row's own record where a file holds several runs), never typed.

    python benchmarks/results_page.py           # print the table
    python benchmarks/results_page.py --write   # put it between the page's results markers

tests/unit/test_docs.py fails when the committed page differs from what this makes."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "docs" / "benchmarks.md"
BEGIN, END = "<!-- results: begin -->", "<!-- results: end -->"


def machine_text(machine) -> str:
    """A record's machine in a few words: its instruction-set kind, cores and CPU, or what was not recorded."""
    if not isinstance(machine, dict) or not machine:
        return "not recorded"
    isa = machine.get("isa")
    if not isa:
        return f"{machine.get('cores')}-core {machine.get('cpu', 'CPU')}, ISA not recorded"
    kind = "AVX-512" if "avx512f" in isa else "AVX2-only" if "avx2" in isa else "no AVX2"
    return f"{kind} {machine.get('cores')}-core {machine.get('cpu', 'CPU')}"


def _load(name: str) -> dict:
    path = ROOT / "benchmarks" / "results" / name if "/" not in name else ROOT / name
    return json.loads(path.read_text())


def _n(x: float, digits: int = 0) -> str:
    return f"{x:,.{digits}f}"


@dataclass(frozen=True)
class Row:
    what: str
    file: str  # benchmarks/results/<file>, or a path from the repository's top
    value: Callable[[dict], str]
    command: str
    record: Callable[[dict], dict] = lambda doc: doc  # the record whose commit, machine and date the row shows

    def cells(self) -> list[str]:
        doc = _load(self.file)
        rec = self.record(doc)
        commit = rec.get("commit") or doc.get("commit") or "not recorded"
        dagger = " †" if commit.endswith("+dirty") or rec.get("provenance") else ""
        when = (rec.get("when") or doc.get("when") or "")[:10] or "not recorded"
        commit = commit if commit.endswith("+dirty") else commit[:12]
        return [self.what, self.value(doc) + dagger, machine_text(rec.get("machine", doc.get("machine"))), when,
                f"`{self.command}` → `{self.file}` ({commit})"]  # fmt: skip


def _per_model_tokens(doc: dict, model: str) -> str:
    m = doc["models"][model]
    return " / ".join(_n(v["completion_tokens"] / v["wall_s"]) for v in m.values())


def _needle(doc: dict) -> str:
    rows = doc["configs"]
    same = [k for k, r in rows.items() if r.get("all_identical")]
    return f"{len(same)} of {len(rows)} configurations the same text alone and among others ({', '.join(same)})"


def _profile(doc: dict) -> str:
    p = doc["parts"]
    return (f"model forward {p['model forward']:.0%}, linear layers {p['linear layers']:.0%}, output head "
            f"{p['output head (logits)']:.0%}, grammar {p['structured output (grammar bitmask)']:.1%}")  # fmt: skip


def _audit_scale(doc: dict) -> str:
    big = max(doc["rows"], key=lambda r: r["items"])
    one_m = next(r for r in doc["rows"] if r["items"] == 1_000_000)
    ratio = one_m["truescore_over_vocab_audit"]
    return (f"{_n(big['items'])} items: `import table` {big['import']['seconds']:.1f} s / "
            f"{big['import']['peak_mib']:,.0f} MB (DuckDB alone: {big['engine']['seconds']:.1f} s); `audit` "
            f"{big['audit']['seconds']:.2f} s, `report` {big['report']['seconds']:.2f} s, `gate` "
            f"{big['gate']['seconds']:.2f} s; at 1,000,000 `audit` {one_m['audit']['seconds']:.2f} s against "
            f"`truescore audit` {one_m['truescore']['seconds']:.2f} s ({ratio:.1f}×)")  # fmt: skip


def _label_import(doc: dict) -> str:
    (r,) = doc["rows"]
    lab, bare = r["import_labelled"], r["import_unlabelled"]
    return (
        f"{_n(r['rows'])} rows, every one labelled: `import table` {lab['seconds']:.1f} s / {lab['peak_mib']:,.0f} "
        f"MB (a {_n(r.get('sample_rows', 0))}-row sample and ratings); the same table unlabelled "
        f"{bare['seconds']:.1f} s / {bare['peak_mib']:,.0f} MB"
    )


def _store(doc: dict) -> str:
    d, a = doc["engines"]["duckdb"], doc["engines"]["pyarrow"]
    return (
        f"to Parquet: DuckDB {d['to_parquet']['seconds']:.1f} s / {d['to_parquet']['peak_mib']:,.0f} MB, pyarrow "
        f"{a['to_parquet']['seconds']:.1f} s / {a['to_parquet']['peak_mib']:,.0f} MB; numbering a pile: DuckDB "
        f"{d['number_pile']['seconds']:.2f} s, pyarrow {a['number_pile']['seconds']:.2f} s"
    )


def _rerun_row(name: str) -> Callable[[dict], str]:
    def value(doc: dict) -> str:
        r = doc["configurations"][name]
        return f"{r['identical']} of {r['attempts']} identical; {_n(r['attempts_per_hour'], 1)} attempts/h"

    return value


def _recipes(doc: dict) -> str:
    return "; ".join(f"{k} {_n(r['attempts_per_hour'])}" for k, r in doc["configurations"].items()) + " attempts/h"


def _grid_worker(doc: dict) -> str:
    runs = doc["runs"]
    cpu = {k: r["task_user_s"] + r["task_sys_s"] for k, r in runs.items()}
    pool, tuned, defaults = (
        cpu["process pool"],
        cpu["local dask, LOCAL_WORKER_CONFIG"],
        cpu["local dask, distributed's defaults"],
    )
    return f"{tuned / pool:.2f}× the pool's CPU (distributed's defaults: {defaults / pool:.2f}×)"


def _batch(doc: dict) -> str:
    cases = [(m, dt, v) for m, by in doc["summary"].items() for dt, v in by.items()]
    variant = [f"{m} {dt}" for m, dt, v in cases if v["batch_variant"]]
    return (
        f"row 0 bit-identical at every batch size in all {sum(v['layers'] for *_, v in cases)} layer tests "
        f"({len(cases)} model × dtype)"
        if not variant
        else f"batch-variant: {', '.join(variant)}"
    )


def _simulate(doc: dict) -> str:
    u = doc["unclustered"]
    return ", ".join(f"{m} {_n(u[m]['studies_per_s'])}" for m in u if isinstance(u[m], dict)) + " studies/s"


def _anchors(doc: dict) -> str:
    v = doc["summary"]["vocab"]
    return f"vocab under 0.93 at {v['under_93']} of {v['points']} points (worst {v['worst']})"


def _compare(doc: dict) -> str:
    s = doc["summary"]
    v, t, p, r = s["vocab"], s["truescore"], s["ppi_py"], s["vocab-ranks"]
    finite = ""
    if "vocab-finite" in s:  # measured since #65
        f, fc = s["vocab-finite"], s["vocab-finite-clustered"]
        finite = (f"; finite piles under 0.93 at {f['under_93']} of {f['points']} (worst {f['worst']}), clustered at "
                  f"{fc['under_93']} of {fc['points']} (worst {fc['worst']})")  # fmt: skip
    return (
        f"differences under 0.93 at {v['under_93']} of {v['points']} points (worst {v['worst']}), truescore at "
        f"{t['under_93']} (worst {t['worst']}), ppi_py at {p['under_93']} (worst {p['worst']}); rank sets worst "
        f"{r['worst']}{finite}"
    )


def _finite(doc: dict) -> str:
    s = doc["summary"]
    f, w = s["finite"], s["finite"]["width_vs_superpopulation"]
    others = ", ".join(f"{k} {v['under_93']} (worst {v['worst']})" for k, v in s.items() if k != "finite")
    return (f"finite piles under 0.93 on {f['under_93']} of {f['tables']} tables (worst {f['worst']}), "
            f"{w['mean']:.2f}× the superpopulation interval's width on average ({w['min']:.2f}–{w['max']:.2f}); "
            f"{others}")  # fmt: skip


def _weighted_failed(doc: dict) -> str:
    s = doc["summary"]
    return "; ".join(f"{t}: within 95 ± 2 % at {v['within_95_pm_2']:.0%} of {v['points']} points, coverage "
                     f"{v['min_coverage']:.3f}–{v['max_coverage']:.3f}, {v['width_vs_oracle_shortest']:.2f}× "
                     f"oracle-shortest's width" for t, v in s.items())  # fmt: skip


def _plan(doc: dict) -> str:
    f = doc["fewer_labels"]
    out = f"vocab fewer labels at {f['vocab']} of {len(doc['points'])} points, truescore at {f['truescore']}"
    if "fewer_labels_neyman" in doc:  # the allocated plans beside (since #65 item 2)
        g = doc["fewer_labels_neyman"]
        out += f"; split by Neyman's rule, vocab fewer at {g['vocab']}, truescore at {g['truescore']}"
    return out


def _stopping(doc: dict) -> str:
    pts, w = doc["points"], doc["worst_coverage"]
    med = lambda k: sorted(r[k]["labels_median"] for r in pts)  # noqa: E731
    seq, fix = med("sequence"), med("fixed_peeking")
    return (f"stopping at the first of {doc['design']['looks']} looks: vocab's sequence holds at {w['sequence']} at "
            f"worst ({seq[0]:.0f}–{seq[-1]:.0f} labels, median), the fixed interval read at every look at "
            f"{w['fixed_peeking']} ({fix[0]:.0f}–{fix[-1]:.0f}), truescore's sequence at {w['truescore_sequence']}"
            + (f", fewhumans' at {w['fewhumans_sequence']}" if "fewhumans_sequence" in w else "") + "; "
            f"{doc['under_95_by_two_se']['fixed_peeking']} of {len(pts)} points of the fixed interval under 95 % "
            "by 2 SE")  # fmt: skip


def _slices(doc: dict) -> str:
    s = doc["summary"]
    return (
        f"{s['points']} points (and {s['points_too_few_estimable']} where too few studies gave every slice a number): "
        f"simultaneous bands worst {s['simultaneous']['worst']}, differences worst {s['differences']['worst']}, "
        f"the worst slice's own interval worst {s['marginal']['worst']}, rank sets worst {s['ranks']['worst']}"
    )


def _ranks(doc: dict) -> str:
    s = doc["summary"]
    return "; ".join(f"{k}: worst {v['worst']}, {v['under_95']} under 0.95" for k, v in s.items())


def _paired(doc: dict) -> str:
    s = doc["summary"]
    q1, q0, w1 = s["paired_q1"], s["paired_q0"], s["q1_width_paired_over_independent"]
    return (
        f"paired q1 and q0 differences under 0.93 at {q1['under_93']} and {q0['under_93']} of {s['points']} points "
        f"(worst {q1['worst']}, {q0['worst']}); {w1['median']}× the independent q1 interval's width (median)"
    )


def _strata(doc: dict) -> str:
    s = doc["summary"]
    w = s["width_stratified_over_whole: score informative"]
    q0 = s.get("stratified q0")
    q0 = f", q0 at {q0['under_93']} (worst {q0['worst']})" if q0 else ""  # measured since #76
    return (
        f"{s['points']} points: the stratified interval under 0.93 at {s['stratified']['under_93']} (worst "
        f"{s['stratified']['worst']}){q0}, the difference of two such cells at {s['difference']['under_93']} (worst "
        f"{s['difference']['worst']}); {w['median']}× the whole-pile width where the strata differ (median)"
    )


def _finite_q(doc: dict) -> str:
    s = doc["summary"]
    q1, q0, t = s["q1"], s["q0"], s["theta"]
    return (
        f"{s['points']} fixed pile pairs: q1 and q0 under 0.93 at {q1['under_93']} and {q0['under_93']} (worst "
        f"{q1['worst']}, {q0['worst']}; the fiducial draws' own ends {s['q1_fiducial']['worst']}, "
        f"{s['q0_fiducial']['worst']}), theta at {t['under_93']} (worst {t['worst']})"
    )


def _score_band(doc: dict) -> str:
    if "simultaneous" not in doc:  # the resampled spread the report drew before 2026-12-07
        return (
            f"the score curve's resampled band holds the true pass share, pooled over scores, at {doc['worst']} at "
            f"its worst point (worst single score {doc['worst_level']}): not a 95 % interval"
        )
    return (
        f"the score curve's simultaneous band holds every score of a sample at once in {doc['simultaneous']} of "
        f"samples at its worst point (each score: worst {doc['worst_level']})"
    )


def _grid(doc: dict) -> str:
    return f"{_n(doc['rows'])} rows in {_n(doc['seconds'])} s ({doc['ran_on']['scheduler']})"


ROWS = [
    Row(
        "full design (140 levels × 4 cells)",
        "full_design.json",
        lambda d: f"{_n(d['attempts_per_hour_active'])} attempts/h, {d['active_minutes']} min active",
        "python benchmarks/bench_full_design.py",
    ),
    Row(
        "harness vs raw load generator",
        "harness.json",
        lambda d: f"{d['ratio']}× ({_n(d['attempts_per_hour'])} attempts/h on the slice)",
        "python benchmarks/bench_harness.py",
    ),
    Row(
        "CPU engine: llama.cpp over vLLM",
        "engines.json",
        lambda d: (
            f"{d['ratio']}× ({_n(d['attempts_per_hour']['vllm'])} vs {_n(d['attempts_per_hour']['llama.cpp'])} "
            "attempts/h at their best)"
        ),
        "python benchmarks/bench_engines.py",
    ),  # fmt: skip
    Row(
        "level generator 2.0.0 vs 1.0.0",
        "levels.json",
        lambda d: f"{d['ratio']}× levels/s",
        "python benchmarks/bench_levels.py",
    ),
    Row(
        "correction bootstrap vs `scipy.stats.bootstrap`",
        "bootstrap.json",
        lambda d: f"{d['speedup_vs_scipy']}× faster",
        "python benchmarks/bench_bootstrap.py",
    ),
    Row("study simulator, per interval method", "simulate.json", _simulate, "python benchmarks/bench_simulate.py"),
    Row(
        "full coverage grid",
        "data/coverage/full_grid.json",
        _grid,
        "vocab coverage-grid --out data/coverage/full_grid.csv --force",
    ),
    Row(
        "coverage grid at the finite population",
        "data/coverage/finite_grid.json",
        _grid,
        "vocab coverage-grid --population finite --methods fiducial,jeffreys,oracle,oracle-shortest "
        "--out data/coverage/finite_grid.csv",
    ),
    Row(
        "the bar's recheck",
        "data/coverage/full_grid_recheck.json",
        lambda d: f"{d['rows']} points × {_n(d['sims'])} studies in {d['seconds']} s",
        "vocab coverage-recheck data/coverage/full_grid.csv",
    ),
    Row(
        "the finite grid's recheck",
        "data/coverage/finite_grid_recheck.json",
        lambda d: f"{d['rows']} points × {_n(d['sims'])} studies in {d['seconds']} s",
        "vocab coverage-recheck data/coverage/finite_grid.csv",
    ),
    Row(
        "grid task in a Dask worker vs the pool",
        "grid_worker.json",
        _grid_worker,
        "python benchmarks/bench_grid_worker.py",
    ),
    Row(
        "full grid: local Dask vs process pool",
        "grid_dask.json",
        lambda d: f"{d['dask_over_pool']}× the pool's time",
        "python benchmarks/bench_grid_dask.py",
    ),
    Row("side-by-side with the anchors", "anchors.json", _anchors, "python benchmarks/bench_anchors.py"),
    Row(
        "differences and rank sets beside the anchors",
        "compare_anchors.json",
        _compare,
        "python benchmarks/bench_compare.py",
    ),
    Row("two judges on the same outputs, paired", "paired.json", _paired, "python benchmarks/bench_paired.py"),
    Row("slices (`--by`): one cell split 2–4 ways", "slices.json", _slices, "python benchmarks/bench_slices.py"),
    Row(
        "rank sets and simultaneous bands over 3–20 cells and 6–20 slices (family-wise)",
        "ranks.json",
        _ranks,
        "python benchmarks/bench_ranks.py",
    ),
    Row("a sample drawn by strata within the piles", "strata.json", _strata, "python benchmarks/bench_strata.py"),
    Row("the judge's score curve's band", "score_band.json", _score_band, "python benchmarks/bench_score_band.py"),
    Row("`vocab plan` beside `truescore plan`", "plan.json", _plan, "python benchmarks/bench_plan.py"),
    Row("finite piles on fixed tables", "finite.json", _finite, "python benchmarks/bench_finite.py"),
    Row(
        "q1 and q0 on small piles labelled nearly whole",
        "finite_q.json",
        _finite_q,
        "python benchmarks/bench_finite_q.py",
    ),
    Row("when to stop labelling", "stopping.json", _stopping, "python benchmarks/bench_stopping.py"),
    Row(
        "a weighted FAILED pile, three completions",
        "weighted_failed.json",
        _weighted_failed,
        "python benchmarks/bench_weighted_failed.py",
    ),
    Row(
        "serving recipes on AVX2, side by side",
        "avx2_recipes.json",
        _recipes,
        "python benchmarks/bench_rerun.py --name avx2_recipes",
        lambda d: d["configurations"]["committed"],
    ),
    Row(
        "rerun of the serving default on AVX2",
        "rerun.json",
        _rerun_row("committed@avx2"),
        "python benchmarks/bench_rerun.py --configs committed --merge --tag avx2",
        lambda d: d["configurations"]["committed@avx2"],
    ),
    Row(
        "rerun of the serving default",
        "rerun.json",
        _rerun_row("committed"),
        "python benchmarks/bench_rerun.py --configs committed",
        lambda d: d["configurations"]["committed"],
    ),
    Row(
        "rerun of the bfloat16 reference slice",
        "rerun.json",
        _rerun_row("reference-bf16"),
        "python benchmarks/bench_rerun.py --from-runs",
        lambda d: d["configurations"]["reference-bf16"],
    ),
    Row(
        "sampler: top_p 0.9 vs top_k 64 vs none (gemma, tokens/s)",
        "sampler.json",
        lambda d: _per_model_tokens(d, "gemma3"),
        "python benchmarks/bench_sampler.py --dtype float32",
    ),
    Row(
        "one request among others (needle)",
        "needle.json",
        _needle,
        "python benchmarks/bench_needle.py",
        lambda d: d["configs"]["committed@avx2"],
    ),
    Row(
        "gemma's engine-core profile, float32 on AVX2",
        "profile_gemma3_float32_avx2.json",
        _profile,
        "python benchmarks/bench_profile.py --native --tag float32_avx2",
    ),
    Row(
        "gemma's engine-core profile, bfloat16 on AVX2",
        "profile_gemma3_bfloat16_avx2.json",
        lambda d: (
            _profile(d) + f"; {d['top_leaf_frames'][0]['share']:.0%} in "
            f"{d['top_leaf_frames'][0]['frame'].split(' (')[0].split('::')[-1]}"
        ),
        "python benchmarks/bench_profile.py --native --dtype bfloat16 --tag bfloat16_avx2",
    ),  # fmt: skip
    Row("gemma's engine-core profile", "profile_gemma3_committed.json", _profile, "python benchmarks/bench_profile.py"),
    Row("GEMM batch invariance", "batch_invariance.json", _batch, "python benchmarks/bench_batch_invariance.py"),
    Row(
        "memory bandwidth (one core)",
        "bandwidth.json",
        lambda d: f"{d['bandwidth']['copy_gb_s']:.0f} GB/s copy, {d['bandwidth']['read_gb_s']:.0f} GB/s sum",
        "python benchmarks/bench_bandwidth.py",
    ),
    Row("audit at scale", "audit_scale.json", _audit_scale, "python benchmarks/bench_audit_scale.py --truescore BIN"),
    Row("a table labelled on every row", "label_import.json", _label_import, "python benchmarks/bench_label_import.py"),
    Row(
        "where an imported dataset's items are kept",
        "store_engines.json",
        _store,
        "python benchmarks/bench_store_engines.py --pyarrow-python PY",
    ),
    Row(
        "rate.html of the reference run's packet",
        "rate_page.json",
        lambda d: (
            f"{_n(d['page_bytes'] / 1024)} KiB for {d['rows']} rows; first row on screen at "
            f"{_n(d['first_row_ms']['median'])} ms (median of {d['runs']}, Chromium)"
        ),  # fmt: skip
        "python benchmarks/bench_page.py",
    ),
]


def table() -> str:
    lines = ["| measurement | value | machine | date | command → result (commit) |", "|---|---|---|---|---|"]
    lines += ["| " + " | ".join(r.cells()) + " |" for r in ROWS]
    return "\n".join(lines)


def page_with_table(page: str, text: str) -> str:
    head, rest = page.split(BEGIN, 1)
    _, tail = rest.split(END, 1)
    return f"{head}{BEGIN}\n{text}\n{END}{tail}"


def main(argv: list[str]) -> int:
    text = table()
    if argv[1:] == ["--write"]:
        PAGE.write_text(page_with_table(PAGE.read_text(), text))
    print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv))
