"""The stratified blind sample, the blinding export, rating files and the script rater.

Per cell, the sample draws ``per_pile`` critic-PASSED attempts (the passed pile) and ``per_pile``
critic-FAILED rows (the failed pile: distinct levels, one failed attempt each, weighted by the number of
FAILED attempts the level has in the cell, so a level rejected three times is not undercounted).
Candidates are sorted by (cell, level, attempt) before the seeded draw, so the draw does not depend on the
order of lines on disk.

Two files come out of a draw, in ``<run_dir>/calibration/``:

- ``key.csv`` — ``blind_id, cell, level, attempt, critic_verdict, pile, weight``: stays with the analyst;
- ``blind_sheet.csv`` / ``.jsonl`` — ``blind_id, seed_word, words, settings, sentence, answer_key`` and
  nothing else: no verdict, reason, cell, model or attempt. Rows are shuffled and blind ids are random.

A rater's file ``ratings_<rater>.csv`` has ``blind_id, c1, ..., c12`` (PASSED or FAILED; ``c1`` may be
empty; the script rater leaves the checks it cannot decide empty) and an optional ``note``.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from vocab import rubric, script, stats

KEY_COLUMNS = ["blind_id", "cell", "level", "attempt", "critic_verdict", "pile", "weight"]
SHEET_COLUMNS = ["blind_id", "seed_word", "words", "settings", "sentence", "answer_key"]
RATING_COLUMNS = ["blind_id", *[f"c{i}" for i in range(1, 13)]]


class CalibrationError(ValueError):
    """A sample that would overwrite another, or a ratings file that does not fit its sheet."""


@dataclass(frozen=True)
class Sample:
    key: pd.DataFrame
    sheet: pd.DataFrame


def draw_sample(attempts: pd.DataFrame, per_pile: int, seed: int) -> Sample:
    """The stratified blind sample of a run's attempts (one frame row per attempt with a verdict)."""
    if per_pile < 1:
        raise CalibrationError(f"per_pile must be positive, got {per_pile}")
    rng = np.random.default_rng(seed)
    att = attempts.sort_values(["cell", "level", "attempt"], kind="stable").reset_index(drop=True)
    rows = []
    for cell in sorted(att.cell.unique()):
        a = att[att.cell == cell]
        passed = a[a.verdict == "PASSED"]
        take = rng.choice(len(passed), size=min(per_pile, len(passed)), replace=False) if len(passed) else []
        for i in sorted(take):
            r = passed.iloc[i]
            rows.append((r, "passed", 1))
        failed = a[a.verdict == "FAILED"]
        levels = sorted(failed.level.unique())
        take = rng.choice(len(levels), size=min(per_pile, len(levels)), replace=False) if levels else []
        for i in sorted(take):
            lv = failed[failed.level == levels[i]].sort_values("attempt")
            r = lv.iloc[int(rng.integers(len(lv)))]
            rows.append((r, "failed", len(lv)))
    ids = [f"b{x:06x}" for x in rng.choice(16**6, size=len(rows), replace=False)]
    order = rng.permutation(len(rows))
    key, sheet = [], []
    for pos in order:
        r, pile, weight = rows[pos]
        bid = ids[pos]
        key.append(
            {
                "blind_id": bid,
                "cell": r.cell,
                "level": int(r.level),
                "attempt": int(r.attempt),
                "critic_verdict": r.verdict,
                "pile": pile,
                "weight": int(weight),
            }
        )
        sheet.append(
            {
                "blind_id": bid,
                "seed_word": r.seed_word,
                "words": list(r.words),
                "settings": dict(r.settings),
                "sentence": r.sentence,
                "answer_key": list(r.answer_key),
            }
        )
    return Sample(pd.DataFrame(key, columns=KEY_COLUMNS), pd.DataFrame(sheet, columns=SHEET_COLUMNS))


def _sheet_csv(sheet: pd.DataFrame) -> pd.DataFrame:
    out = sheet.copy()
    for col in ("words", "settings", "answer_key"):
        out[col] = out[col].map(lambda v: json.dumps(v, sort_keys=True))
    return out


def write_sample(sample: Sample, run_dir: str | Path) -> Path:
    """Write key.csv and the blind sheet. An existing, different sample is never overwritten: its ratings
    would no longer match it."""
    out = Path(run_dir) / "calibration"
    key_csv = sample.key.to_csv(index=False)
    sheet_csv = _sheet_csv(sample.sheet).to_csv(index=False)
    existing = out / "key.csv"
    if existing.exists():
        if existing.read_text() != key_csv:
            raise CalibrationError(f"{existing} holds another sample; move it away (and its ratings) to draw anew")
        return out
    out.mkdir(parents=True, exist_ok=True)
    (out / "blind_sheet.csv").write_text(sheet_csv)
    with (out / "blind_sheet.jsonl").open("w") as f:
        for row in sample.sheet.to_dict(orient="records"):
            f.write(json.dumps(row, ensure_ascii=False) + "\n")
    existing.write_text(key_csv)  # last: its presence marks a complete sample
    return out


def read_sheet(run_dir: str | Path) -> pd.DataFrame:
    rows = [
        json.loads(line)
        for line in (Path(run_dir) / "calibration" / "blind_sheet.jsonl").read_text().splitlines()
        if line.strip()
    ]
    return pd.DataFrame(rows, columns=SHEET_COLUMNS)


def read_key(run_dir: str | Path) -> pd.DataFrame:
    return pd.read_csv(Path(run_dir) / "calibration" / "key.csv")


# --- ratings -----------------------------------------------------------------------------------------


def validate_ratings(ratings: pd.DataFrame, sheet_ids: list[str], *, allow_empty: bool = False) -> pd.DataFrame:
    """Check a ratings table against its sheet; return it normalised, or raise one error listing every
    offending row: ids missing, unknown or repeated, and labels outside PASSED/FAILED (``c1`` may be empty,
    and with ``allow_empty`` — the script rater — any undecided check may be)."""
    problems = []
    missing_cols = [c for c in RATING_COLUMNS if c not in ratings.columns]
    if missing_cols:
        raise CalibrationError(f"missing columns: {', '.join(missing_cols)}")
    r = ratings.copy()
    r["blind_id"] = r["blind_id"].astype(str).str.strip()
    dup = r.blind_id[r.blind_id.duplicated()].unique()
    if len(dup):
        problems.append(f"repeated ids: {', '.join(sorted(dup))}")
    unknown = sorted(set(r.blind_id) - set(sheet_ids))
    if unknown:
        problems.append(f"unknown ids: {', '.join(unknown)}")
    missing = sorted(set(sheet_ids) - set(r.blind_id))
    if missing:
        problems.append(f"ids of the sheet not rated: {', '.join(missing)}")
    for col in RATING_COLUMNS[1:]:
        r[col] = r[col].fillna("").astype(str).str.strip().str.upper()
        ok = r[col].isin(rubric.VERDICTS) | ((r[col] == "") & (allow_empty or col == "c1"))
        for bid, value in zip(r.blind_id[~ok], r[col][~ok], strict=True):
            problems.append(f"{bid}: {col} is {value!r} (expected PASSED or FAILED)")
    if problems:
        raise CalibrationError(f"ratings rejected ({len(problems)} problems): " + "; ".join(problems))
    return r


def import_ratings(path: str | Path, run_dir: str | Path, rater: str) -> Path:
    """Validate a ratings CSV against the run's blind sheet and store it as ratings_<rater>.csv. On any
    problem nothing is written."""
    if not rater.replace("-", "").replace("_", "").isalnum():
        raise CalibrationError(f"a rater name may hold letters, digits, '-' and '_' only, got {rater!r}")
    try:
        df = pd.read_csv(path, dtype=str, keep_default_na=False)
    except (OSError, pd.errors.ParserError, pd.errors.EmptyDataError) as e:
        raise CalibrationError(f"{path}: cannot read ratings ({e})") from None
    sheet = read_sheet(run_dir)
    valid = validate_ratings(df, list(sheet.blind_id), allow_empty=(rater == "script"))
    out = Path(run_dir) / "calibration" / f"ratings_{rater}.csv"
    cols = RATING_COLUMNS + (["note"] if "note" in valid.columns else [])
    valid[cols].to_csv(out, index=False)
    return out


def script_ratings(sheet: pd.DataFrame) -> pd.DataFrame:
    """The script rater: checks 2 and 3 for every row, and the mechanical ones it can decide; the rest
    empty."""
    rows = []
    for r in sheet.itertuples(index=False):
        v = script.adjudicate(list(r.words), r.sentence, list(r.answer_key), dict(r.settings), r.seed_word)
        rows.append({"blind_id": r.blind_id, **{f"c{k}": (val or "") for k, val in v.checks.items()}})
    return pd.DataFrame(rows, columns=RATING_COLUMNS)


# --- the LLM blind rater -----------------------------------------------------------------------------


async def rate_with_model(
    run_dir: str | Path, rater: str, model, *, max_tokens: int | None = None, max_tries: int = 3
) -> dict:
    """Grade every blind-sheet row with ``model`` (a vocab.serving.client.ModelClient, or a test's stand-in).

    Each answer is appended to ``calibration/rater_<rater>.jsonl`` as it arrives and each failed call to
    ``calibration/rater_<rater>_errors.jsonl`` with its kind, so a rerun grades only what is missing. When
    every row has an answer, ``ratings_<rater>.csv`` is written (checked like any imported file).

    Retry policy: a row whose call failed is asked again on the next call of this function, up to
    ``max_tries`` calls in all (counted from the errors file), each try with its own seed derived from the
    row and the try number — the same seed would repeat a seeded model's failure exactly.
    """
    import asyncio
    from datetime import UTC, datetime

    from vocab import prompts
    from vocab.records import JsonlWriter, read_jsonl
    from vocab.serving.client import ModelCallError

    cal = Path(run_dir) / "calibration"
    sheet = read_sheet(run_dir)
    answers_path, errors_path = cal / f"rater_{rater}.jsonl", cal / f"rater_{rater}_errors.jsonl"
    done = {a["blind_id"] for a in read_jsonl(answers_path)}
    tries: dict[str, int] = {}
    for e in read_jsonl(errors_path):
        tries[e["blind_id"]] = tries.get(e["blind_id"], 0) + 1
    answers, errors = JsonlWriter(answers_path), JsonlWriter(errors_path)
    schema = rubric.critic_schema()
    base = getattr(getattr(model, "model", None), "sampling", None)

    async def one(row: dict) -> None:
        sampling = None
        if base is not None and base.seed is not None:
            import dataclasses

            n = tries.get(row["blind_id"], 0)
            digest = hashlib.sha256(f"{base.seed}:{row['blind_id']}:{n}".encode()).digest()
            sampling = dataclasses.replace(base, seed=int.from_bytes(digest[:4], "little") & 0x7FFFFFFF)
        try:
            r = await model.structured(
                prompts.rater_messages(row), schema, "rating", max_tokens=max_tokens, sampling=sampling
            )
        except ModelCallError as e:
            errors.write(
                {
                    "blind_id": row["blind_id"],
                    "rater": rater,
                    "model": model.name,
                    "kind": e.kind,
                    "message": e.message,
                    "time": datetime.now(UTC).isoformat(timespec="seconds"),
                }
            )
            return
        answers.write(
            {
                "blind_id": row["blind_id"],
                "rater": rater,
                "model": model.name,
                "checks": {c: r.value[c]["verdict"] for c in rubric.CHECK_IDS},
                "reasons": {c: r.value[c]["reason"] for c in rubric.CHECK_IDS},
                "usage": r.usage.as_dict(),
            }
        )

    try:
        todo = [
            row
            for row in sheet.to_dict(orient="records")
            if row["blind_id"] not in done and tries.get(row["blind_id"], 0) < max_tries
        ]
        await asyncio.gather(*(one(row) for row in todo))
    finally:
        answers.close()
        errors.close()
    got = {a["blind_id"]: a for a in read_jsonl(answers_path)}
    missing = [b for b in sheet.blind_id if b not in got]
    if not missing:
        table = pd.DataFrame(
            [{"blind_id": b, **{f"c{c}": got[b]["checks"][c] for c in rubric.CHECK_IDS}} for b in sheet.blind_id],
            columns=RATING_COLUMNS,
        )
        validate_ratings(table, list(sheet.blind_id))
        table.to_csv(cal / f"ratings_{rater}.csv", index=False)
    tries = {}
    for e in read_jsonl(errors_path):
        tries[e["blind_id"]] = tries.get(e["blind_id"], 0) + 1
    exhausted = sum(tries.get(b, 0) >= max_tries for b in missing)
    return {"rated": len(got), "missing": len(missing), "new": len(got) - len(done), "exhausted": exhausted}


# --- the correction per rater variant and cell ----------------------------------------------------------

CORRECTION_COLUMNS = [
    "rater",
    "cell",
    "p",
    "a",
    "b",
    "theta",
    "ci_low",
    "ci_high",
    "shift_points",
    "q1",
    "q1_low",
    "q1_high",
    "q0",
    "q0_low",
    "q0_high",
    "flags",
]
SCOPE_COLUMNS = [f"c{i}" for i in range(2, 13)]


def rater_passes(ratings: pd.DataFrame, script: pd.DataFrame | None = None) -> pd.Series:
    """Per blind id: does the rater pass the row (c2-c12 all PASSED)? With ``script``, checks 2 and 3 are
    the script's verdicts instead of the rater's."""
    r = ratings.set_index("blind_id")[SCOPE_COLUMNS].copy()
    if script is not None:
        s = script.set_index("blind_id")
        r["c2"], r["c3"] = s.loc[r.index, "c2"], s.loc[r.index, "c3"]
    return (r == "PASSED").all(axis=1)


def variants(ratings: dict[str, pd.DataFrame], script: pd.DataFrame | None) -> dict[str, pd.Series]:
    """Every rater as rated, and each non-script rater with checks 2 and 3 from the script."""
    out = {}
    for name in sorted(ratings):
        out[name] = rater_passes(ratings[name])
        if script is not None and name != "script":
            out[f"{name}+script"] = rater_passes(ratings[name], script)
    return out


def _flags(c, theta_ci, q1_ci, q0_ci) -> str:
    flags = []
    for name, (lo, hi) in (("theta", theta_ci), ("q1", q1_ci), ("q0", q0_ci)):
        if np.isfinite(lo) and np.isfinite(hi) and hi - lo > 0.5:
            flags.append(f"unstable:{name}")
    if c.a == 1:
        flags.append("ceiling:q0")  # a passed pile passed in full forces q0 = 1
    if c.a == 0:
        flags.append("ceiling:q1")  # ... failed in full forces q1 = 0
    if c.b == 0:
        flags.append("ceiling:q1")  # a failed pile failed in full forces q1 = 1
    if c.b == 1:
        flags.append("ceiling:q0")
    return ";".join(dict.fromkeys(flags))


INTERVALS = (stats.DEFAULT_INTERVAL, "seed")  # the default first; "seed" is seed 000's, kept to reproduce its numbers


def correction_table(
    attempts: pd.DataFrame,
    key: pd.DataFrame,
    passes: dict[str, pd.Series],
    *,
    n_boot: int = 4000,
    seed: int = 0,
    interval: str = "seed",
) -> pd.DataFrame:
    """One row per rater variant and cell: p, a, b, theta with its interval, the shift, q1, q0.

    ``interval``: ``seed`` (seed 000's percentile bootstrap of each pile, p fixed) or ``jeffreys`` (Beta
    posteriors for a, b and p, which 08's coverage study found close to nominal where the bootstrap is not).
    """
    if interval not in INTERVALS:
        raise CalibrationError(f"unknown interval {interval!r} (known: {', '.join(INTERVALS)})")

    rng = np.random.default_rng(seed)
    p_by_cell = attempts.groupby("cell").verdict.apply(lambda v: float((v == "PASSED").mean()))
    rows = []
    for variant in sorted(passes):
        ok = passes[variant]
        for cell in sorted(key.cell.unique()):
            k = key[key.cell == cell].sort_values("blind_id")
            pp, fp = k[k.pile == "passed"], k[k.pile == "failed"]
            p = float(p_by_cell.get(cell, np.nan))
            # A critic that passed nothing (p = 0) has no passed pile, and needs none: theta = b. Likewise
            # p = 1 and the failed pile. The missing pile gets a placeholder row that p's weight 0 cancels.
            empty = None
            if pp.empty and p == 0 and not fp.empty:
                empty = "passed"
            elif fp.empty and p == 1 and not pp.empty:
                empty = "failed"
            elif pp.empty or fp.empty or not np.isfinite(p):
                continue
            x = ok.loc[pp.blind_id].to_numpy(float) if empty != "passed" else np.zeros(1)
            y = ok.loc[fp.blind_id].to_numpy(float) if empty != "failed" else np.zeros(1)
            w = fp.weight.to_numpy(float) if empty != "failed" else np.ones(1)
            if interval == "seed":
                bs = stats.bootstrap_correction(p, x, y, w, n_resamples=n_boot, rng=rng)
            else:
                n_att = int((attempts.cell == cell).sum())
                bs = stats.jeffreys_correction(p, n_att, x, y, w, n_draws=n_boot, rng=rng)
            c = bs.point
            if empty is not None:
                c = dataclasses.replace(c, **{"a" if empty == "passed" else "b": float("nan")})
            rows.append(
                {
                    "rater": variant,
                    "cell": cell,
                    "p": p,
                    "a": c.a,
                    "b": c.b,
                    "theta": c.theta,
                    "ci_low": bs.theta_ci[0],
                    "ci_high": bs.theta_ci[1],
                    "shift_points": c.shift_points,
                    "q1": c.q1,
                    "q1_low": bs.q1_ci[0],
                    "q1_high": bs.q1_ci[1],
                    "q0": c.q0,
                    "q0_low": bs.q0_ci[0],
                    "q0_high": bs.q0_ci[1],
                    "flags": ";".join(
                        x
                        for x in (_flags(c, bs.theta_ci, bs.q1_ci, bs.q0_ci), empty and f"empty:{empty} (p = {p:g})")
                        if x
                    ),
                }
            )
    return pd.DataFrame(rows, columns=CORRECTION_COLUMNS)


def interval_text(table: pd.DataFrame) -> list[str]:
    """Each row's interval as ``[lo, hi]`` with three decimals, for tables that show intervals side by side."""
    return [f"[{lo:.3f}, {hi:.3f}]" for lo, hi in zip(table.ci_low, table.ci_high, strict=True)]


def rank_table(correction: pd.DataFrame, tie: float = 0.01) -> pd.DataFrame:
    """Cells ranked by theta under every variant; a cell within ``tie`` of the next one is marked tied."""
    rows = []
    for variant, g in correction.groupby("rater", sort=True):
        g = g.sort_values(["theta", "cell"], ascending=[False, True]).reset_index(drop=True)
        for i, r in g.iterrows():
            near = [abs(r.theta - g.theta[j]) <= tie for j in (i - 1, i + 1) if 0 <= j < len(g)]
            rows.append({"rater": variant, "rank": i + 1, "cell": r.cell, "theta": r.theta, "tied": any(near)})
    return pd.DataFrame(rows)


def self_preference(correction: pd.DataFrame) -> pd.DataFrame:
    """Per variant and writer: same-model minus cross-model critic, raw (p) and corrected (theta)."""
    rows = []
    for variant, g in correction.groupby("rater", sort=True):
        cells = {tuple(c.split("__")): r for c, r in zip(g.cell, g.itertuples(), strict=True)}
        for (writer, critic), same in sorted(cells.items()):
            if writer != critic:
                continue
            for (w2, c2), cross in sorted(cells.items()):
                if w2 == writer and c2 != writer:
                    rows.append(
                        {
                            "rater": variant,
                            "writer": writer,
                            "cross_critic": c2,
                            "raw_gap_points": 100 * (same.p - cross.p),
                            "corrected_gap_points": 100 * (same.theta - cross.theta),
                        }
                    )
    return pd.DataFrame(rows)


# --- agreement and adjudication -------------------------------------------------------------------------


def kappa_table(
    ratings: dict[str, pd.DataFrame], script: pd.DataFrame | None, *, n_boot: int = 4000, seed: int = 0
) -> pd.DataFrame:
    """Cohen's kappa on the overall verdict between every pair of non-script raters, raw and with checks
    2 and 3 from the script, with percentile bootstrap intervals over rows."""

    rng = np.random.default_rng(seed)
    names = sorted(n for n in ratings if n != "script")
    rows = []
    for i, ra in enumerate(names):
        for rb in names[i + 1 :]:
            for variant in ("raw", "+script"):
                if variant == "+script" and script is None:
                    continue
                s = script if variant == "+script" else None
                pa, pb = rater_passes(ratings[ra], s), rater_passes(ratings[rb], s)
                ids = sorted(set(pa.index) & set(pb.index))
                x, y = pa.loc[ids].to_numpy(int), pb.loc[ids].to_numpy(int)
                idx = rng.integers(0, len(ids), size=(n_boot, len(ids)))
                boot = np.array([stats.cohens_kappa(x[j], y[j]) for j in idx])
                lo, hi = stats.percentile_interval(boot)
                rows.append(
                    {
                        "rater_a": ra,
                        "rater_b": rb,
                        "variant": variant,
                        "n": len(ids),
                        "agree": int((x == y).sum()),
                        "kappa": stats.cohens_kappa(x, y),
                        "ci_low": lo,
                        "ci_high": hi,
                    }
                )
    return pd.DataFrame(rows, columns=["rater_a", "rater_b", "variant", "n", "agree", "kappa", "ci_low", "ci_high"])


def checks_table(ratings: dict[str, pd.DataFrame]) -> pd.DataFrame:
    """Per check: the number of rows every non-script rater agrees on, and each rater's fails."""
    names = sorted(n for n in ratings if n != "script")
    frames = {n: ratings[n].set_index("blind_id").sort_index() for n in names}
    ids = sorted(set.intersection(*(set(f.index) for f in frames.values()))) if frames else []
    rows = []
    for c in rubric.CHECKS:
        col = f"c{c.id}"
        values = pd.DataFrame({n: frames[n].loc[ids, col] for n in names})
        rows.append(
            {
                "check": int(c.id),
                "name": c.name,
                "kind": c.kind,
                "n": len(ids),
                "agree": int((values.nunique(axis=1) == 1).sum()),
                **{f"fails_{n}": int((values[n] == "FAILED").sum()) for n in names},
            }
        )
    return pd.DataFrame(rows)


def script_adjudication(ratings: dict[str, pd.DataFrame], script: pd.DataFrame) -> pd.DataFrame:
    """Rows where the non-script raters disagree on check 2 or 3, and which of them matched the script."""
    names = sorted(n for n in ratings if n != "script")
    s = script.set_index("blind_id")
    rows = []
    for col in ("c2", "c3"):
        values = pd.DataFrame({n: ratings[n].set_index("blind_id")[col] for n in names}).dropna()
        disputed = values[values.nunique(axis=1) > 1]
        for bid, r in disputed.sort_index().iterrows():
            truth = s.loc[bid, col]
            rows.append(
                {
                    "check": int(col[1:]),
                    "blind_id": bid,
                    "script": truth,
                    **{n: r[n] for n in names},
                    "matched_script": ",".join(n for n in names if r[n] == truth),
                }
            )
    return pd.DataFrame(rows)


def krippendorff_alpha(ratings: dict[str, pd.DataFrame]) -> float:
    """Krippendorff's alpha (nominal) on the overall verdict across all non-script raters."""
    import krippendorff

    names = sorted(n for n in ratings if n != "script")
    passes = pd.DataFrame({n: rater_passes(ratings[n]) for n in names})
    return float(krippendorff.alpha(reliability_data=passes.T.astype(float).to_numpy(), level_of_measurement="nominal"))


# --- the human rating form's state -------------------------------------------------------------------------


class HumanForm:
    """One blind row at a time; every saved row is appended at once, so the form resumes where it stopped.

    Rows are appended to ``calibration/rater_<rater>.jsonl`` (the same format as the LLM rater's answers);
    when the last row is saved, ``ratings_<rater>.csv`` is written and validated like any ratings file.
    """

    def __init__(self, run_dir: str | Path, rater: str = "human"):
        from vocab.records import read_jsonl

        self.run_dir, self.rater = Path(run_dir), rater
        self.sheet = read_sheet(run_dir)
        self.path = self.run_dir / "calibration" / f"rater_{rater}.jsonl"
        self.done = {a["blind_id"]: a for a in read_jsonl(self.path)}

    @property
    def remaining(self) -> int:
        return sum(b not in self.done for b in self.sheet.blind_id)

    def next_row(self) -> dict | None:
        for row in self.sheet.to_dict(orient="records"):
            if row["blind_id"] not in self.done:
                return row
        return None

    def save(self, blind_id: str, checks: dict[str, str], note: str = "") -> None:
        from vocab.records import JsonlWriter

        if blind_id not in set(self.sheet.blind_id):
            raise CalibrationError(f"{blind_id!r} is not on the blind sheet")
        if blind_id in self.done:
            raise CalibrationError(f"{blind_id!r} is already rated")
        bad = [
            c for c in rubric.CHECK_IDS if checks.get(c) not in rubric.VERDICTS and not (c == "1" and not checks.get(c))
        ]
        if bad:
            raise CalibrationError(f"checks {', '.join(bad)} need PASSED or FAILED")
        row = {
            "blind_id": blind_id,
            "rater": self.rater,
            "checks": {c: checks.get(c, "") for c in rubric.CHECK_IDS},
            "note": note,
        }
        w = JsonlWriter(self.path)
        w.write(row)
        w.close()
        self.done[blind_id] = row
        if self.remaining == 0:
            table = pd.DataFrame(
                [
                    {
                        "blind_id": b,
                        **{f"c{c}": self.done[b]["checks"][c] for c in rubric.CHECK_IDS},
                        "note": self.done[b].get("note", ""),
                    }
                    for b in self.sheet.blind_id
                ]
            )
            validate_ratings(table, list(self.sheet.blind_id))
            table.to_csv(self.run_dir / "calibration" / f"ratings_{self.rater}.csv", index=False)


# --- the per-check audit ---------------------------------------------------------------------------------


def check_audit(
    attempts: pd.DataFrame,
    key: pd.DataFrame,
    ratings: pd.DataFrame,
    *,
    n_boot: int = 4000,
    seed: int = 0,
    family_alpha: float = 0.05,
) -> pd.DataFrame:
    """Per cell and rubric check: the critic's pass rate on that check over all logged attempts, against
    the rater's, estimated from the stratified sample (each pile weighted by the critic's overall pass rate
    p, failed-pile rows by their weights); with percentile intervals at 1 - family_alpha / (checks tested),
    Bonferroni over the checks of a cell. ``carries_error``: the critic's rate lies outside the rater's
    interval. Checks the rater left empty are skipped.
    """
    rng = np.random.default_rng(seed)
    rated = ratings.set_index("blind_id")
    rows = []
    for cell in sorted(key.cell.unique()):
        att = attempts[attempts.cell == cell]
        if att.empty:
            continue
        p = float((att.verdict == "PASSED").mean())
        k = key[key.cell == cell].sort_values("blind_id")
        pp, fp = k[k.pile == "passed"], k[k.pile == "failed"]
        checks = [c for c in rubric.CHECK_IDS if rated.loc[k.blind_id, f"c{c}"].notna().all()]
        level = 1 - family_alpha / max(len(checks), 1)
        for c in checks:
            critic_rate = float(att.checks.map(lambda x, c=c: x.get(c) == "PASSED").mean())
            x = (rated.loc[pp.blind_id, f"c{c}"] == "PASSED").to_numpy(float)
            y = (rated.loc[fp.blind_id, f"c{c}"] == "PASSED").to_numpy(float)
            w = fp.weight.to_numpy(float)

            def est(xs, ys, ws, p=p):
                a = xs.mean(axis=-1) if xs.shape[-1] else 0.0
                b = (ys * ws).sum(axis=-1) / ws.sum(axis=-1) if ys.shape[-1] else 0.0
                return (p * a if p > 0 else 0.0) + ((1 - p) * b if p < 1 else 0.0)

            if (p > 0 and x.size == 0) or (p < 1 and y.size == 0):
                continue
            point = float(est(x, y, w))
            ix = rng.integers(0, max(x.size, 1), size=(n_boot, x.size))
            iy = rng.integers(0, max(y.size, 1), size=(n_boot, y.size))
            boot = est(x[ix] if x.size else x[None, :].repeat(n_boot, 0), y[iy], w[iy])
            lo, hi = np.quantile(np.broadcast_to(boot, (n_boot,)), [(1 - level) / 2, 1 - (1 - level) / 2])
            rows.append(
                {
                    "cell": cell,
                    "check": int(c),
                    "name": rubric.BY_ID[c].name,
                    "kind": rubric.BY_ID[c].kind,
                    "critic_rate": critic_rate,
                    "rater_rate": point,
                    "low": float(lo),
                    "high": float(hi),
                    "level": level,
                    "gap_points": 100 * (critic_rate - point),
                    "carries_error": bool(critic_rate < lo or critic_rate > hi),
                }
            )
    return pd.DataFrame(rows)


def rater_error_vs_script(ratings: pd.DataFrame, script: pd.DataFrame) -> float:
    """A rater's disagreement rate with the script on the checks the script decides for every row (2, 3):
    the only error of a blind rater that can be measured without another rater."""
    s = script.set_index("blind_id")
    r = ratings.set_index("blind_id").loc[s.index]
    return float(((r.c2 != s.c2).sum() + (r.c3 != s.c3).sum()) / (2 * len(s)))


def invert_rater_error(correction: pd.DataFrame, error: float) -> pd.Series:
    """theta with each pile share inverted for a rater that flips verdicts at rate ``error``:
    share -> (share - e) / (1 - 2e), clipped to [0, 1]. A sensitivity analysis: it assumes the rater errs at
    the same rate on every check, which its error on checks 2 and 3 does not show."""
    if not 0 <= error < 0.5:
        return pd.Series(np.nan, index=correction.index)

    def inv(v):
        return ((v - error) / (1 - 2 * error)).clip(0, 1)

    a, b = inv(correction.a), inv(correction.b)
    return (correction.p * a.fillna(0) + (1 - correction.p) * b).rename("theta_if_inverted")
