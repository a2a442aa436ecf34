"""docs/study.md's corrected rates and comparisons are what the committed code computes from the committed reference run
(vocab.notebooks.study): the page holds, between its markers, the text written from the run today."""

from __future__ import annotations

from vocab.notebooks import study


def test_the_corrected_rates_and_comparisons_are_written_from_the_run():
    page = study.PAGE.read_text()
    for mark in (study.BEGIN, study.END, study.CORRECTED_BEGIN, study.CORRECTED_END):
        assert page.count(mark) == 1, mark
    assert study.page() == page, "run: python -m vocab.notebooks.study --write"
