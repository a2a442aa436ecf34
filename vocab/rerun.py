"""Rerun agreement: does the same design, asked again with the same seeds of the same servers, give the same run?

A *rerun* is a second run directory made with the same config over a slice of a run's levels
(``vocab run --levels ...``). Every call is seeded from (level, attempt, role) (:func:`vocab.loop.call_seed`),
so a deterministic engine would reproduce each call byte for byte. What this module measures instead of
assuming:

- :func:`attempt_agreement`: one row per (cell, level, attempt) that either run reached, with what each call
  gave: the writer's sentence and key, the critic's 12 verdicts, or the kind of error that ended the call (a
  truncation reproduced is a reproduced call). An attempt only one run reached is a disagreement.
- :func:`level_agreement`: one row per (cell, level) of the slice: status and number of attempts in each run.
- :func:`first_divergence`: for each (cell, level) that differs, the first attempt and role that did.
- :func:`duplicate_requests`: inside one run, the writer's first call of a level is the same request (prompt,
  seed, sampling) in every cell with that writer; the share answered identically isolates the engine's
  batch-dependence from anything the harness does.

Batch composition is the usual suspect on vLLM's CPU engine: a request's logits depend slightly on what else is
in the batch (different reduction orders in bf16), and at temperature 0.2 a near-tie token flips; after one
flipped token the rest of the answer follows a different path.
"""

from __future__ import annotations

import pandas as pd

from vocab.records import Run, RunDirError

KEY = ["cell", "level", "attempt"]


def check_rerun(run: Run, rerun: Run) -> None:
    """Refuses a pair of runs that were not made alike: every part of the fingerprint except the level set must
    be equal, and the rerun's levels must be some of the run's, with the same words."""
    a, b = run.manifest.get("fingerprint") or {}, rerun.manifest.get("fingerprint") or {}
    for part in ("rubric", "prompts", "models", "cells"):
        if a.get(part) != b.get(part):
            raise RunDirError(f"{rerun.run_dir}: not a rerun of {run.run_dir}: its {part} differ")
    la, lb = a.get("loop") or {}, b.get("loop") or {}
    for k in ("max_attempts", "writer_max_tokens", "critic_max_tokens", "seed_word_in_scope"):
        if la.get(k) != lb.get(k):
            raise RunDirError(f"{rerun.run_dir}: not a rerun of {run.run_dir}: loop.{k} differs")
    levels = {int(r["level"]): r for r in run.levels.to_dict(orient="records")}
    for r in rerun.levels.to_dict(orient="records"):
        mine = levels.get(int(r["level"]))
        if mine is None or mine["words"] != r["words"] or mine["seed_word"] != r["seed_word"]:
            raise RunDirError(f"{rerun.run_dir}: level {r['level']} is not the run's level {r['level']}")


def _calls(run: Run, levels: set[int]) -> pd.DataFrame:
    """What each (cell, level, attempt) gave: a result (sentence, key, checks, verdict) or its error kind."""
    rows = {}
    for e in run.errors.to_dict(orient="records"):
        if int(e["level"]) in levels:
            rows[(e["cell"], int(e["level"]), int(e["attempt"]))] = {"error": f"{e['role']}:{e['kind']}"}
    for a in run.attempts.to_dict(orient="records"):
        if int(a["level"]) in levels:
            rows[(a["cell"], int(a["level"]), int(a["attempt"]))] = {
                "error": None,
                "writer": (a["sentence"], tuple(a["answer_key"])),
                "checks": tuple(a["checks"][c] for c in sorted(a["checks"], key=int)),
                "verdict": a["verdict"],
            }
    return rows


def attempt_agreement(run: Run, rerun: Run) -> pd.DataFrame:
    """One row per (cell, level, attempt) either run reached on the rerun's levels.

    ``writer_same``: both runs have the attempt's sentence and key, identical. ``critic_same``: both have the
    critic's 12 verdicts, identical. ``same``: the whole call pair gave the same (identical sentence, key and
    verdicts, or the same error kind on the same role). Connection faults a resumed run retried leave no
    trace here: only the attempt's final record counts."""
    check_rerun(run, rerun)
    levels = {int(x) for x in rerun.levels["level"]}
    a, b = _calls(run, levels), _calls(rerun, levels)
    rows = []
    for key in sorted(set(a) | set(b)):
        x, y = a.get(key), b.get(key)
        both = x is not None and y is not None
        results = both and x["error"] is None and y["error"] is None
        writer_same = bool(results and x["writer"] == y["writer"])
        critic_same = bool(results and x["checks"] == y["checks"])
        errors_same = bool(both and x["error"] is not None and x["error"] == y["error"])
        rows.append(
            {
                **dict(zip(KEY, key, strict=True)),
                "in_run": x is not None,
                "in_rerun": y is not None,
                "run_error": None if x is None else x["error"],
                "rerun_error": None if y is None else y["error"],
                "writer_same": writer_same,
                "critic_same": critic_same,
                "verdict_same": bool(results and x["verdict"] == y["verdict"]),
                "same": (writer_same and critic_same) or errors_same,
            }
        )
    return pd.DataFrame(
        rows,
        columns=[
            *KEY,
            "in_run",
            "in_rerun",
            "run_error",
            "rerun_error",
            "writer_same",
            "critic_same",
            "verdict_same",
            "same",
        ],
    )


def level_agreement(run: Run, rerun: Run) -> pd.DataFrame:
    """One row per (cell, level) of the rerun: each run's status and attempts, and whether both agree."""
    check_rerun(run, rerun)
    o = rerun.outcomes.merge(run.outcomes, on=["cell", "level"], suffixes=("_rerun", "_run"), how="left")
    o["same"] = (o.status_run == o.status_rerun) & (o.attempts_run == o.attempts_rerun)
    return o[["cell", "level", "status_run", "attempts_run", "status_rerun", "attempts_rerun", "same"]]


def summary(run: Run, rerun: Run) -> pd.DataFrame:
    """The shares, per cell and over all: attempts with identical writer text, with identical critic verdicts,
    identical in full; levels with an identical outcome (status and attempts)."""
    att, lev = attempt_agreement(run, rerun), level_agreement(run, rerun)
    pending = int((rerun.outcomes.status == "PENDING").sum())
    if pending:
        raise RunDirError(f"{rerun.run_dir}: {pending} levels pending: finish the rerun first")

    def row(cell: str, at: pd.DataFrame, lv: pd.DataFrame) -> dict:
        results = at[at.run_error.isna() & at.rerun_error.isna() & at.in_run & at.in_rerun]
        return {
            "cell": cell,
            "attempts": len(at),
            "writer_same": at.writer_same.sum() / max(len(results), 1),
            "critic_same": at.critic_same.sum() / max(len(results), 1),
            "attempt_same": at.same.mean() if len(at) else float("nan"),
            "levels": len(lv),
            "level_same": lv.same.mean() if len(lv) else float("nan"),
            "only_one_run": int((at.in_run != at.in_rerun).sum()),
        }

    out = [row(c, att[att.cell == c], lev[lev.cell == c]) for c in rerun.cells]
    out.append(row("all", att, lev))
    return pd.DataFrame(out)


def first_divergence(run: Run, rerun: Run) -> pd.DataFrame:
    """For each (cell, level) whose calls differ: the first attempt that differs and which call differed first
    (``writer`` if the sentences differ, else ``critic``; ``error`` if one run's call failed)."""
    att = attempt_agreement(run, rerun)
    rows = []
    for (cell, level), g in att.groupby(["cell", "level"], sort=True):
        bad = g[~g.same]
        if bad.empty:
            continue
        f = bad.iloc[0]
        if not (f.in_run and f.in_rerun) or pd.notna(f.run_error) or pd.notna(f.rerun_error):
            role = "error"
        else:
            role = "critic" if f.writer_same else "writer"
        rows.append({"cell": cell, "level": int(level), "attempt": int(f.attempt), "diverged": role})
    return pd.DataFrame(rows, columns=["cell", "level", "attempt", "diverged"])


def duplicate_requests(run: Run) -> pd.DataFrame:
    """Inside one run: each writer's first attempt per level is the same request in every cell with that writer
    (same prompt, seed and sampling). Per writer: levels where two cells both hold that attempt, and the share
    whose sentences are identical."""
    first = run.attempts[run.attempts.attempt == 1]
    rows = []
    for writer, g in first.groupby("writer", sort=True):
        pairs = g.groupby("level").filter(lambda x: len(x) >= 2)
        per_level = pairs.groupby("level")["sentence"].nunique()
        rows.append({"writer": writer, "levels": len(per_level), "identical": float((per_level == 1).mean())})
    return pd.DataFrame(rows, columns=["writer", "levels", "identical"])
