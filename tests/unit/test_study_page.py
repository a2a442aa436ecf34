"""docs/study.md's comparisons are what the committed code computes from the committed reference run
(vocab.notebooks.study): the page holds, between its markers, the text written from the run today."""

from __future__ import annotations

from vocab.notebooks import study


def test_the_comparisons_section_is_written_from_the_run():
    page = study.PAGE.read_text()
    assert page.count(study.BEGIN) == 1 and page.count(study.END) == 1
    assert study.page_with_section(page, study.section()) == page, "run: python -m vocab.notebooks.study --write"
