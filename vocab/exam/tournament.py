"""The writer tournament: each writer's first attempt per level (and the reference answers) judged pairwise by
each critic in both orders; Bradley-Terry ratings with a level bootstrap, online Elo both ways, position and
length bias. ``vocab exam tournament`` runs it through :func:`vocab.exam.run.run_exam`."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from vocab import stats
from vocab.exam import metrics, pairwise, planted
from vocab.exam.jobs import Job, prompt_seed, run_identity
from vocab.exam.pairwise import PAIRWISE_MAX_TOKENS
from vocab.records import load_run, read_jsonl

TOURNAMENT_METRICS = {
    "bradley_terry": "maximum-likelihood Bradley-Terry ratings (ties = half a win), Elo scale, level bootstrap",
    "elo_forward": "online Elo (K 32, start 1000) over the games in level order",
    "elo_reverse": "the same games in reverse order",
    "position_consistency": "share of pairs with the same winner by identity under both orders",
    "prefers_longer": "share of decided games with unequal lengths won by the longer sentence",
}


def tournament_params(run_dir, judges, n_levels, seed, max_calls, reference_answers) -> dict:
    return {
        "exam": "tournament",
        "exam_version": metrics.EXAM_VERSION,
        **run_identity(run_dir),
        "judges": sorted(judges),
        "n_levels": n_levels,
        "seed": seed,
        "max_calls": max_calls,
        "reference_answers": reference_answers,
        "orders": list(metrics.ORDERS),
        "labels": "A/B",
        "max_tokens": PAIRWISE_MAX_TOKENS,
        "prompt": pairwise.pairwise_prompt_hash(),
    }


def writer_answers(run_dir: str | Path) -> dict[tuple[str, int], planted.Source]:
    """Each writer's first attempt per level. The writer's first call does not depend on the critic (same
    prompt, same seed), so it is the same sentence in every cell; it is taken from the first cell by name."""

    run = load_run(run_dir)
    levels = {lv["level"]: lv for lv in read_jsonl(Path(run_dir) / "levels.jsonl")}
    out: dict[tuple[str, int], planted.Source] = {}
    first = run.attempts[run.attempts.attempt == 1].sort_values(["writer", "level", "cell"])
    for a in first.to_dict(orient="records"):
        key = (a["writer"], int(a["level"]))
        if key not in out:
            sid = f"{a['writer']}-{a['level']:04d}"
            out[key] = planted.Source(
                sid, "run", levels[a["level"]], a["sentence"], list(a["answer_key"]), a["cell"], 1
            )
    return out


def tournament_pairs(run_dir, n_levels: int, seed: int, reference_answers: bool) -> list[pairwise.Pair]:
    """Writer against writer on ``n_levels`` levels drawn (sorted, seeded) from those where every writer has a
    first attempt; with reference answers, the reference against each writer on every level it covers."""
    answers = writer_answers(run_dir)
    writers = sorted({w for w, _ in answers})
    common = sorted(lv for lv in {lv for _, lv in answers} if all((w, lv) in answers for w in writers))
    rng = np.random.default_rng(seed)  # the tournament's own draw (not stats.stream: a committed one keeps its games)
    chosen = sorted(common[i] for i in rng.choice(len(common), size=min(n_levels, len(common)), replace=False))
    pairs = []
    for lv in chosen:
        for i, wa in enumerate(writers):
            for wb in writers[i + 1 :]:
                a, b = answers[(wa, lv)], answers[(wb, lv)]
                pairs.append(pairwise.Pair(f"{a.source_id}-vs-{b.source_id}", "match", a.level, a, b))
    if reference_answers:
        levels = {lv["level"]: lv for lv in read_jsonl(Path(run_dir) / "levels.jsonl")}
        for ref in sorted(planted.reference_answers(levels), key=lambda s: s.source_id):
            for w in writers:
                b = answers.get((w, ref.level["level"]))
                if b is not None:
                    pairs.append(pairwise.Pair(f"{ref.source_id}-vs-{b.source_id}", "match", ref.level, ref, b))
    return pairs


def player_of(source_id: str) -> str:
    return "reference" if source_id.startswith("ref-") else source_id.rsplit("-", 1)[0]


def tournament_jobs(pairs: list[pairwise.Pair], judges: list[str], sampling_seeds: dict) -> list[Job]:
    jobs = []
    for p in pairs:
        for order in metrics.ORDERS:
            msgs = pairwise.pairwise_messages(p, order, "A/B")
            first, second = pairwise.slots(p, order)
            item = {
                "item_id": f"{p.pair_id}/{order}",
                "pair_id": p.pair_id,
                "condition": "match",
                "order": order,
                "labels": "A/B",
                "level": p.level["level"],
                "first": first.source_id,
                "second": second.source_id,
                "first_player": player_of(first.source_id),
                "second_player": player_of(second.source_id),
                "first_words": len(first.sentence.split()),
                "second_words": len(second.sentence.split()),
            }
            for judge in judges:
                seed = prompt_seed(msgs, sampling_seeds.get(judge))
                jobs.append(
                    Job(judge, item, msgs, pairwise.pairwise_schema("A/B"), "verdict", PAIRWISE_MAX_TOKENS, seed)
                )
    return jobs


def tournament_games(items: pd.DataFrame) -> pd.DataFrame:
    """One row per judged game: the judge, level, the two players as displayed, the winner (or tie), the
    score of the first-listed player by name order, and whether the longer sentence won."""
    rows = []
    for r in items.sort_values(["judge", "level", "pair_id", "order"]).to_dict(orient="records"):
        fp, sp = r["first_player"], r["second_player"]
        winner = {"A": fp, "B": sp, "tie": "tie"}[r["winner"]]
        i, j = sorted((fp, sp))
        score = 0.5 if winner == "tie" else float(winner == i)
        longer = None
        if r["first_words"] != r["second_words"] and winner != "tie":
            longer = (r["first_words"] > r["second_words"]) == (winner == fp)
        rows.append(
            {
                "judge": r["judge"],
                "level": r["level"],
                "pair_id": r["pair_id"],
                "order": r["order"],
                "i": i,
                "j": j,
                "winner": winner,
                "score_i": score,
                "slot": {"A": "first", "B": "second", "tie": "tie"}[r["winner"]],
                "longer_won": longer,
            }
        )
    return pd.DataFrame(rows)


def tournament_table(items: pd.DataFrame, *, n_boot: int = 1000, seed: int = 0) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Per judge and player: Bradley-Terry rating with a level-bootstrap interval, online Elo forward and
    reversed; and per judge: position consistency, first-slot rate, tie rate and prefers-the-longer rate."""

    games = tournament_games(items)
    ratings, biases = [], []
    for judge, g in games.groupby("judge", sort=True):
        triples = list(zip(g.i, g.j, g.score_i, strict=True))
        bt = stats.bradley_terry_bootstrap(triples, groups=list(g.level), n_resamples=n_boot, seed=seed)
        fwd, rev = stats.online_elo(triples), stats.online_elo(triples[::-1])
        fit = bt.fit.ratings() if bt.fit is not None else {}
        for p in sorted(set(g.i) | set(g.j)):
            ratings.append(
                {
                    "judge": judge,
                    "player": p,
                    "games": int(((g.i == p) | (g.j == p)).sum()),
                    "score": float(g[g.i == p].score_i.sum() + (1 - g[g.j == p].score_i).sum()),
                    "bt_rating": fit.get(p),
                    "bt_low": bt.low.get(p),
                    "bt_high": bt.high.get(p),
                    "elo_forward": fwd[p],
                    "elo_reverse": rev[p],
                    "bt_note": bt.reason
                    or (f"{bt.failed} of {bt.resamples} resamples had no finite fit" if bt.failed else ""),
                }
            )
        both = g.groupby("pair_id").filter(lambda x: len(x) == 2)
        same = [x.winner.nunique() == 1 for _, x in both.groupby("pair_id")]  # a tie twice is consistent too
        decided = g[g.slot != "tie"]
        longer = g.longer_won.dropna()
        biases.append(
            {
                "judge": judge,
                "games": len(g),
                "tie_rate": float((g.slot == "tie").mean()),
                "first_slot_rate": float((decided.slot == "first").mean()) if len(decided) else None,
                "position_consistency": float(np.mean(same)) if same else None,
                "prefers_longer": float(longer.astype(float).mean()) if len(longer) else None,
                "n_length_decided": len(longer),
            }
        )
    return pd.DataFrame(ratings), pd.DataFrame(biases)
