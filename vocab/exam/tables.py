"""Tables of an exam's judged items (``exam.run`` writes them; notebook 05 shows them): per judge and defect
the planted-defect metrics, the degenerate judges on the same items, the pairwise metrics and the
determinism probe."""

from __future__ import annotations

import pandas as pd

from vocab import rubric
from vocab.exam import metrics, pairwise, planted


def _names_edit(row: dict) -> bool:
    word, target = row.get("edited_word"), row.get("target")
    if not isinstance(word, str) or not isinstance(target, str):
        return False
    return row["checks"][target] == "FAILED" and word.lower() in row["reasons"][target].lower()


def planted_table(items: pd.DataFrame) -> pd.DataFrame:
    """Per judge and defect target: n, verdict-label recall, on-target recall, and reason naming the edit;
    one ``all`` row per judge with the false-positive rate and baseline reproducibility."""
    rows = []
    for judge, g in items.groupby("judge", sort=True):
        recs = g.to_dict(orient="records")
        defects = [r for r in recs if r["kind"] == "defect"]
        for target in sorted({r["target"] for r in defects}, key=int):
            d = [r for r in defects if r["target"] == target]
            rows.append(_planted_row(judge, target, d, [], []))
        controls = [r for r in recs if r["kind"] == "control"]
        base = [r for r in recs if r["kind"] == "baseline" and isinstance(r.get("logged_verdict"), str)]
        rows.append(_planted_row(judge, "all", defects, controls, base))
    return pd.DataFrame(rows)


def _planted_row(judge, target, defects, controls, base) -> dict:
    def share(xs):
        return sum(xs) / len(xs) if xs else None

    with_word = [r for r in defects if isinstance(r.get("edited_word"), str)]
    return {
        "judge": judge,
        "target": target,
        "defect": planted.DEFECTS.get(target, "all defects"),
        "n": len(defects),
        "verdict_recall": share([r["verdict"] == "FAILED" for r in defects]),
        "on_target_recall": share([r["checks"][r["target"]] == "FAILED" for r in defects]),
        "reason_names_edit": share([_names_edit(r) for r in with_word]),
        "n_controls": len(controls),
        "false_positive_rate": share([r["verdict"] == "FAILED" for r in controls]),
        "n_baselines": len(base),
        "baseline_reproduced": share([r["verdict"] == r["logged_verdict"] for r in base]),
    }


def planted_degenerate(items: pd.DataFrame) -> pd.DataFrame:
    """The degenerate judges scored by :func:`vocab.planted_metrics` on this exam's own item set."""
    one = items.drop_duplicates("item_id")
    its = [
        metrics.PlantedItem(r["source_id"], r["target"] if isinstance(r["target"], str) else None)
        for r in one.to_dict(orient="records")
        if r["kind"] != "baseline"
    ]
    rows = []
    for name, p in metrics.PLANTED_JUDGES.items():
        m = metrics.planted_metrics(its, [{c: p for c in rubric.CHECK_IDS}] * len(its))
        rows.append({"judge": name, **m})
    return pd.DataFrame(rows)


def pairwise_items(items: pd.DataFrame) -> tuple[list[metrics.PairItem], list[dict[str, float]]]:
    its, answers = [], []
    for r in items.to_dict(orient="records"):
        its.append(metrics.PairItem(r["pair_id"], r["condition"], r["order"], r["labels"]))
        answers.append(pairwise.answer_slots(r["winner"], r["labels"]))
    return its, answers


def pairwise_table(items: pd.DataFrame) -> pd.DataFrame:
    """Each judge's pairwise metrics and the pre-registered bar, beside the degenerate judges scored on the
    same items by the same code."""
    rows = []
    for judge, g in items.groupby("judge", sort=True):
        its, answers = pairwise_items(g)
        m = metrics.pairwise_metrics(its, answers)
        rows.append({"judge": judge, "n": len(g), **m, "qualifies": metrics.qualifies(m)})
    one = items.drop_duplicates("item_id")
    its, _ = pairwise_items(one)
    for name, ans in metrics.PAIRWISE_JUDGES.items():
        m = metrics.pairwise_metrics(its, [ans] * len(its))
        rows.append({"judge": name, "n": len(its), **m, "qualifies": metrics.qualifies(m)})
    return pd.DataFrame(rows)


def determinism(items: pd.DataFrame) -> pd.DataFrame:
    """Every group of identical requests (judge, prompt, seed) asked more than once, and whether the
    answers agree byte for byte."""
    rows = []
    for (judge, sha, seed), g in items.groupby(["judge", "prompt_sha", "seed"], sort=True):
        if len(g) < 2:
            continue
        rows.append(
            {
                "judge": judge,
                "prompt_sha": sha[:12],
                "seed": seed,
                "items": ", ".join(sorted(g.item_id)),
                "n": len(g),
                "identical": g.text.nunique() == 1,
            }
        )
    return pd.DataFrame(rows, columns=["judge", "prompt_sha", "seed", "items", "n", "identical"])
