"""Derived tables of a run: the critic's raw results per cell, and what the run cost.

Everything here reads a :class:`vocab.records.Run` and returns pandas DataFrames; the notebooks display
and save them. The attempt pass-rate ``p`` is the critic's per-call behaviour (PASSED attempts over
attempts with a verdict); the level pass-rate mostly says whether retrying eventually worked.
"""

from __future__ import annotations

from datetime import datetime

import pandas as pd

from vocab.records import Run

RAW_COLUMNS = ["cell", "writer", "critic", "attempts", "p", "levels", "level_pass_rate", "hard_fail", "abandoned"]


def raw_table(run: Run) -> pd.DataFrame:
    """Per cell: attempts, attempt pass-rate p, levels, level pass-rate, Hard FAILs, abandoned levels.

    ``levels`` counts the design's levels; ``level_pass_rate`` is PASSED levels over levels with a result
    (PASSED or HARD_FAIL) — an abandoned level (a call failed: an infrastructure fault, or the model's answer
    truncated, malformed or off the schema) is not a result, and is counted apart.
    """
    rows = []
    att, out = run.attempts, run.outcomes
    for cell in run.cells:
        writer, critic = cell.split("__")
        a = att[att.cell == cell] if not att.empty else att
        o = out[out.cell == cell]
        n = len(a)
        passed_levels = int((o.status == "PASSED").sum())
        hard = int((o.status == "HARD_FAIL").sum())
        rows.append(
            {
                "cell": cell,
                "writer": writer,
                "critic": critic,
                "attempts": n,
                "p": float((a.verdict == "PASSED").mean()) if n else float("nan"),
                "levels": len(o),
                "level_pass_rate": passed_levels / (passed_levels + hard) if passed_levels + hard else float("nan"),
                "hard_fail": hard,
                "abandoned": int((o.status == "ABANDONED").sum()),
            }
        )
    return pd.DataFrame(rows, columns=RAW_COLUMNS)


def call_records(run: Run) -> pd.DataFrame:
    """One row per model call: the two calls of every attempt, plus each failed call (with usage if any)."""
    rows = []
    for a in run.attempts.itertuples(index=False):
        for role in ("writer", "critic"):
            u = a.usage[role]
            rows.append(
                {
                    "cell": a.cell,
                    "level": a.level,
                    "attempt": a.attempt,
                    "role": role,
                    "model": u["model"],
                    "ok": True,
                    "kind": None,
                    **_usage_cols(u),
                }
            )
    for e in run.errors.itertuples(index=False):
        writer, critic = e.cell.split("__")
        u = getattr(e, "usage", None)
        u = u if isinstance(u, dict) else {}
        if e.role == "critic":  # the writer's call of that attempt succeeded but has no result line
            rows.append(
                {
                    "cell": e.cell,
                    "level": e.level,
                    "attempt": e.attempt,
                    "role": "writer",
                    "model": writer,
                    "ok": True,
                    "kind": None,
                    **_usage_cols({}),
                }
            )
        rows.append(
            {
                "cell": e.cell,
                "level": e.level,
                "attempt": e.attempt,
                "role": e.role,
                "model": writer if e.role == "writer" else critic,
                "ok": False,
                "kind": e.kind,
                **_usage_cols(u),
            }
        )
    return pd.DataFrame(rows)


def _usage_cols(u: dict) -> dict:
    return {
        "prompt_tokens": u.get("prompt_tokens"),
        "completion_tokens": u.get("completion_tokens"),
        "reasoning_tokens": u.get("reasoning_tokens"),
        "finish_reason": u.get("finish_reason"),
        "seconds": u.get("seconds"),
    }


def cost_tables(run: Run) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(the run's totals, one row per model): calls, tokens, reasoning share, speed, compute share, truncation.

    ``compute_share`` is each model's share of the summed call seconds; ``truncated`` counts calls that ended
    at the token budget before a complete answer. A failed writer call leaves no usage for the critic, and
    a critic error after a good writer call counts the writer call as made.
    """
    calls = call_records(run)
    if calls.empty:
        return pd.DataFrame([{"attempt_pairs": 0, "model_calls": 0}]), pd.DataFrame()
    for col in ("completion_tokens", "reasoning_tokens", "seconds", "prompt_tokens"):
        calls[col] = pd.to_numeric(calls[col], errors="coerce")
    starts = [datetime.fromisoformat(t) for t in run.attempts["started"]] if not run.attempts.empty else []
    ends = [datetime.fromisoformat(t) for t in run.attempts["finished"]] if not run.attempts.empty else []
    wall = (max(ends) - min(starts)).total_seconds() if starts else 0.0
    gen = calls.completion_tokens.sum()
    reasoning = calls.reasoning_tokens.fillna(0).sum()
    truncated = calls.kind.eq("truncated")
    totals = pd.DataFrame(
        [
            {
                "attempt_pairs": len(run.attempts),
                "model_calls": len(calls),
                "failed_calls": int((~calls.ok).sum()),
                "wall_seconds": round(wall, 1),
                "tokens_generated": int(gen),
                "reasoning_share": float(reasoning / gen) if gen else 0.0,
                "truncation_rate": float(truncated.mean()),
            }
        ]
    )
    per_model = calls.groupby("model").agg(
        calls=("ok", "size"),
        failed=("ok", lambda s: int((~s).sum())),
        truncated=("kind", lambda s: int(s.eq("truncated").sum())),
        prompt_tokens_per_call=("prompt_tokens", "mean"),
        tokens_per_call=("completion_tokens", "mean"),
        median_tokens_per_call=("completion_tokens", "median"),
        completion_tokens=("completion_tokens", "sum"),
        seconds=("seconds", "sum"),
    )
    per_model["tokens_per_second"] = per_model.completion_tokens / per_model.seconds
    per_model["compute_share"] = per_model.seconds / per_model.seconds.sum()
    per_model["truncation_rate"] = per_model.truncated / per_model.calls
    per_role = calls.groupby(["model", "role"]).completion_tokens.median().unstack("role")
    per_model = per_model.join(per_role.add_prefix("median_tokens_"))
    return totals, per_model.reset_index()


def busy_seconds(start: pd.Series, end: pd.Series) -> float:
    """The length in seconds of the union of the intervals [start, end): time in which at least one was open."""
    total, cur_start, cur_end = 0.0, None, None
    for a, b in sorted(zip(start, end, strict=True)):
        if cur_end is None or a > cur_end:
            if cur_end is not None:
                total += (cur_end - cur_start).total_seconds()
            cur_start, cur_end = a, b
        else:
            cur_end = max(cur_end, b)
    if cur_end is not None:
        total += (cur_end - cur_start).total_seconds()
    return total


def time_table(run: Run, bin_seconds: int = 60) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Where a run's wall time went: (the run's totals, one row per model).

    Totals: wall time from the first attempt's start to the last one's end; *active* time, the length of the union
    of the attempts' own intervals (a resumed run's pause is wall time but not work; never more than the wall
    time); attempts per hour over each; the attempts in flight (median and peak over the ``bin_seconds`` bins
    in which any attempt was in flight). Per model: its call seconds over the
    active time (the average number of its requests in flight), completion tokens per active second, and the
    tokens spent on truncated calls (a call that ran into its budget spends all of it and returns nothing usable).
    """
    if run.attempts.empty:
        return pd.DataFrame([{"attempts": 0}]), pd.DataFrame()
    start = pd.to_datetime(run.attempts.started, format="ISO8601")
    end = pd.to_datetime(run.attempts.finished, format="ISO8601")
    t0 = start.min()
    edges = pd.date_range(t0, end.max() + pd.Timedelta(seconds=bin_seconds), freq=f"{bin_seconds}s")
    in_flight = pd.Series([int(((start < b + pd.Timedelta(seconds=bin_seconds)) & (end > b)).sum()) for b in edges])
    active = in_flight > 0
    wall = (end.max() - t0).total_seconds()
    active_s = busy_seconds(start, end)
    totals = pd.DataFrame(
        [
            {
                "attempts": len(run.attempts),
                "wall_minutes": round(wall / 60, 1),
                "active_minutes": round(active_s / 60, 1),
                "idle_minutes": round((wall - active_s) / 60, 1) if wall > active_s else 0.0,
                "attempts_per_hour_wall": round(3600 * len(run.attempts) / wall, 1) if wall else None,
                "attempts_per_hour_active": round(3600 * len(run.attempts) / active_s, 1) if active_s else None,
                "in_flight_median": float(in_flight[active].median()),
                "in_flight_peak": int(in_flight.max()),
            }
        ]
    )
    calls = call_records(run)
    for col in ("completion_tokens", "seconds"):
        calls[col] = pd.to_numeric(calls[col], errors="coerce")
    per_model = calls.groupby("model").agg(
        call_seconds=("seconds", "sum"),
        completion_tokens=("completion_tokens", "sum"),
        truncated_calls=("kind", lambda s: int(s.eq("truncated").sum())),
    )
    wasted = calls[calls.kind.eq("truncated")].groupby("model").completion_tokens.sum()
    per_model["truncated_tokens"] = wasted.reindex(per_model.index).fillna(0).astype(int)
    per_model["truncated_share_of_tokens"] = per_model.truncated_tokens / per_model.completion_tokens
    per_model["requests_in_flight"] = per_model.call_seconds / active_s
    per_model["tokens_per_active_second"] = per_model.completion_tokens / active_s
    return totals, per_model.reset_index()
