"""A sample vocab did not draw: the items people had already labelled in the source (an MLflow experiment's HUMAN
feedback, a table's label columns), each in the pile of the judge's verdict (:mod:`vocab.imports.labels` writes it).
Here: what the sample's record calls it and the sentence the report, the audit and the gate say of it."""

from __future__ import annotations

from pathlib import Path

from vocab.sampling.sample import sample_stages

LABELS_ALLOCATION = "labels"
ASSUMPTION = (
    "these rows were not drawn or blinded by vocab: they are the items people had already labelled in the source, "
    "each in the pile of the judge's verdict; the correction assumes that, within each pile, which items were "
    "labelled does not depend on whether the judge was right"
)


def labels_note(run_dir: str | Path, stages: list[dict] | None = None) -> str | None:
    """The report's sentence when the sample is labels found in the source, else None. ``stages``: the sample's
    record as the caller read it (by default read here)."""
    stages = sample_stages(run_dir) if stages is None else stages
    first = stages[0] if stages else {}
    if first.get("allocation") != LABELS_ALLOCATION:
        return None
    extra = first.get("labelled_unscored", 0)
    return f"The raters here are {first.get('source', 'labels in the source')}: {ASSUMPTION}." + (
        f" {extra} labelled items the judge left UNSCORED are in no pile." if extra else ""
    )
