"""`vocab report`: a self-contained HTML and a Markdown report from the committed analysis functions; its numbers
are correction_table's, nothing in the HTML is fetched from anywhere, the same inputs give the same bytes, and bad
input is one line."""

from __future__ import annotations

import re
from html import unescape
from pathlib import Path

import pandas as pd
import pytest

from tests.stored import stored_items
from vocab.cli import main

ROOT = Path(__file__).resolve().parents[2]
LOG = ROOT / "data" / "inspect" / "qa_smollm2_gemma3.eval"


@pytest.fixture
def audited(tmp_path) -> Path:
    """The committed Inspect log audited, with ann's full hand-in (every third row FAILED, the rest PASSED) and bob's
    partial one."""
    d = tmp_path / "audit"
    assert main(["audit", str(LOG), "--out", str(d), "--raters", "ann,bob"]) == 0
    sheet = pd.read_csv(d / "calibration" / "blind_sheet.csv")
    ann = ["FAILED" if i % 3 == 0 else "PASSED" for i in range(len(sheet))]
    for name, rows, verdict in (("ann", sheet.blind_id, ann), ("bob", sheet.blind_id[:4], "FAILED")):
        f = tmp_path / f"{name}.csv"
        pd.DataFrame({"blind_id": rows, "verdict": verdict}).to_csv(f, index=False)
        assert main(["ratings", "import", str(f), "--run-dir", str(d), "--rater", name, "--partial"]) == 0
    return d


def test_the_report_says_the_corrected_rate_worked_by_hand(audited, capsys):
    """The headline's numbers from the files alone: p is the judge's PASSED share of its scored items
    (items.parquet), theta = p·a + (1 − p)·b with a the pass share of the passed pile and b that of the failed
    pile weighted by key.csv's weights: first ann's and bob's pooled (two people: per row the majority of those who
    rated it, a tie half), then ann's alone."""

    assert main(["report", str(audited)]) == 0
    html = (audited / "report" / "report.html").read_text()
    md = (audited / "report" / "report.md").read_text()
    verdicts = [r["verdict"] for r in stored_items(audited)]
    p = verdicts.count("PASSED") / (verdicts.count("PASSED") + verdicts.count("FAILED"))
    key = pd.read_csv(audited / "calibration" / "key.csv")
    assert key.cell.nunique() == 1
    files = {n: pd.read_csv(audited / "calibration" / f"ratings_{n}.csv") for n in ("ann", "bob")}
    votes = {}
    for f in files.values():
        for bid, v in zip(f.blind_id, f.verdict, strict=True):
            votes.setdefault(bid, []).append(v == "PASSED")
    pooled = {bid: 0.5 if sum(v) * 2 == len(v) else float(sum(v) * 2 > len(v)) for bid, v in votes.items()}
    assert 0.5 in pooled.values()  # bob's FAILED against ann's PASSED on some of his 4 rows: ties
    thetas = []
    for verdict in (
        key.blind_id.map(pooled),
        key.blind_id.map(dict(zip(files["ann"].blind_id, files["ann"].verdict.eq("PASSED"), strict=True))),
    ):
        rated = key.assign(passes=verdict.astype(float))
        passed, failed = rated[rated.pile == "passed"], rated[rated.pile == "failed"]
        a, b = passed.passes.mean(), (failed.passes * failed.weight).sum() / failed.weight.sum()
        thetas.append(p * a + (1 - p) * b)
        assert 0 < thetas[-1] < 1 and 0 < a < 1  # the verdicts are mixed: no rate is 0 or 100 % by construction
    n_rows = len(key)
    sentence = (f"the judge says {round(100 * p)} %; against the blind ratings of ann, bob pooled (people: the "
                f"majority of those who rated each row; {n_rows} of {n_rows} sampled rows) the pass rate is "
                f"{round(100 * thetas[0])} %")  # fmt: skip
    assert sentence in md and sentence in unescape(html), md[:800]
    assert f"against ann's, {round(100 * thetas[1])} %" in md
    assert "bob 4/" in md and "(partial)" in md  # the partial hand-in is marked
    assert "Cohen" in md and "Krippendorff" in md  # two raters: agreement
    assert "sha256" in md and "qa_smollm2_gemma3.eval" in md  # provenance: the source and its hash


def test_the_html_is_self_contained_and_byte_stable(audited, tmp_path):
    assert main(["report", str(audited), "--out", str(tmp_path / "a")]) == 0
    assert main(["report", str(audited), "--out", str(tmp_path / "b")]) == 0
    a, b = (tmp_path / "a" / "report.html").read_bytes(), (tmp_path / "b" / "report.html").read_bytes()
    assert a == b
    html = a.decode()
    refs = re.findall(r'(?:src|href)\s*=\s*"([^"]*)"', html) + re.findall(r"url\(([^)]*)\)", html)
    assert refs and all(r.startswith("data:image/png;base64,") for r in refs), refs
    assert "default-src 'none'" in html  # the browser is told to fetch nothing
    assert "<script" not in html


@pytest.mark.parametrize(
    "argv, words",
    [
        (["report", "{tmp}/none"], "not a directory"),
        (["report", "{tmp}/audit", "--raters", "carol"], "no ratings from carol"),
        (["report", "{tmp}/audit", "--raters", ","], "none empty"),
    ],
)
def test_bad_input_to_report_is_one_line(audited, tmp_path, capsys, argv, words):
    capsys.readouterr()
    assert main([a.format(tmp=tmp_path) for a in argv]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and words in err[0], err
    assert not (audited / "report").exists()


def test_a_dataset_without_ratings_is_refused(tmp_path, capsys):
    d = tmp_path / "d"
    assert main(["audit", str(LOG), "--out", str(d)]) == 0
    capsys.readouterr()
    assert main(["report", str(d)]) == 2
    assert "no blind ratings yet" in capsys.readouterr().err


def test_a_report_into_a_directory_holding_another_is_refused_without_force(audited, tmp_path, capsys):
    """`vocab report A --out B/report` replaced B's report with A's."""
    other = tmp_path / "b-report"
    assert main(["report", str(audited), "--out", str(other)]) == 0
    (other / "report.md").write_text("B's report")
    capsys.readouterr()
    assert main(["report", str(audited), "--out", str(other)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "holds a report already" in err[0] and "--force" in err[0], err
    assert (other / "report.md").read_text() == "B's report"
    assert main(["report", str(audited), "--out", str(other), "--force"]) == 0
    assert (other / "report.md").read_text() != "B's report"
    assert main(["report", str(audited)]) == 0 and main(["report", str(audited)]) == 0  # its own: remade each time
