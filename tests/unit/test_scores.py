"""The judge's score kept and used (#65 item 3): every importer keeps the number its tool logs beside the verdict
(counted from the committed files the real tools wrote), the report draws people's pass share against it with an
isotonic fit checked by hand, names the score that matches the corrected rate, and a score that is not a number is
one line at import."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pandas as pd
import pytest

from vocab.cli import main
from vocab.datasets.dataset import load_dataset
from vocab.estimates.scores import SCORE_SQL, curve

ROOT = Path(__file__).resolve().parents[2]


def _scores(d: Path) -> list[float]:
    data = load_dataset(d)
    got = data.items.con.execute(f"SELECT {SCORE_SQL} FROM {data.items.src} ORDER BY row").fetchall()
    return sorted(s for (s,) in got if s is not None)


def test_promptfoo_keeps_its_judges_score(tmp_path, capsys):
    src = ROOT / "data" / "promptfoo" / "qa_smollm2_gemma3.json"
    assert main(["import", "promptfoo", str(src), "--run-dir", str(tmp_path / "d")]) == 0
    doc = json.loads(src.read_text())
    # counted from the file: the llm-rubric component's score of every result
    expected = sorted(c["score"] for r in doc["results"]["results"] for c in r["gradingResult"]["componentResults"]
                      if c["assertion"]["type"] == "llm-rubric")  # fmt: skip
    assert len(expected) == 16 and _scores(tmp_path / "d") == expected


def test_deepeval_keeps_its_metrics_score(tmp_path, capsys):
    src = ROOT / "data" / "deepeval" / "qa_smollm2_gemma3.json"
    assert main(["import", "deepeval", str(src), "--run-dir", str(tmp_path / "d")]) == 0
    doc = json.loads(src.read_text())
    expected = sorted(m["score"] for t in doc["testCases"] for m in t["metricsData"])
    assert len(expected) == 12 and _scores(tmp_path / "d") == expected


def test_a_letter_grade_or_a_yes_is_no_score(tmp_path, capsys):
    """Inspect's committed log grades C / I, MLflow's committed judge says yes / no: no number, so no score (and
    the report has no score section)."""
    from inspect_ai.log import read_eval_log

    log = ROOT / "data" / "inspect" / "qa_smollm2_gemma3.eval"
    values = {str(s.value) for smp in read_eval_log(str(log)).samples for s in (smp.scores or {}).values()}
    assert values and not any(v.replace(".", "", 1).isdigit() for v in values)
    assert main(["import", "inspect", str(log), "--run-dir", str(tmp_path / "i")]) == 0
    assert _scores(tmp_path / "i") == []
    traces = ROOT / "data" / "mlflow" / "traces.json"
    fb = {str(a["feedback"]["value"]) for t in json.loads(traces.read_text())["traces"]
          for a in t["info"].get("assessments", []) if "feedback" in a}  # fmt: skip
    assert fb <= {"yes", "no", "True", "False", "true", "false"}
    assert main(["import", "mlflow", str(traces), "--run-dir", str(tmp_path / "m")]) == 0
    assert _scores(tmp_path / "m") == []


def _table(tmp: Path, rows: list[tuple[str, float, str]]) -> Path:
    t = tmp / "t.csv"
    verdict = {True: "PASSED", False: "FAILED"}
    pd.DataFrame([{"id": i, "system": "s", "judge": "j", "verdict": verdict[sc >= 3], "score": sc, "input": "q",
                   "output": f"o-{i}", "label": lab} for i, sc, lab in rows]).to_csv(t, index=False)  # fmt: skip
    return t


def test_the_report_draws_the_curve_fitted_by_hand(tmp_path, capsys):
    """Eight items, every one labelled (the labels are the sample). By hand, people's pass share by score:
    1: 0 of 2, 2: 1 of 2, 3: 0 of 1, 4: 2 of 2, 5: 1 of 1. Pool-adjacent-violators: 2 (1/2) and 3 (0/1) violate, so
    they pool to 1/3; the fit is 0, 1/3, 1/3, 1, 1. People pass 4 of 8 items, and the items scored 4 or more are 3
    of 8 and those scored 3 or more 4 of 8: the score that matches is 3."""
    rows = [("a", 1, "FAILED"), ("b", 1, "FAILED"), ("c", 2, "PASSED"), ("d", 2, "FAILED"), ("e", 3, "FAILED"),
            ("f", 4, "PASSED"), ("g", 4, "PASSED"), ("h", 5, "PASSED")]  # fmt: skip
    d = tmp_path / "d"
    assert main(["import", "table", str(_table(tmp_path, rows)), "--run-dir", str(d), "--rater", "ann"]) == 0
    assert main(["report", str(d)]) == 0
    md = (d / "report" / "report.md").read_text()
    section = md.split("## The judge's score against people's verdicts", 1)[1].split("\n## ", 1)[0]
    table = [line.split(" | ") for line in section.splitlines() if line.startswith("| s → j")]
    assert [(r[1], r[2], r[3], r[4].split(" (")[0]) for r in table] == [
        ("1", "2", "0 %", "0 %"), ("2", "2", "50 %", "33 %"), ("3", "1", "0 %", "33 %"), ("4", "2", "100 %", "100 %"),
        ("5", "1", "100 %", "100 %")]  # fmt: skip
    corrected = pd.read_csv(d / "report" / "corrected.csv").query("rater == 'ann'")
    assert corrected.theta.iloc[0] == pytest.approx(4 / 8)
    assert "passing the items scored 3 or more would pass 50 % of them, nearest the corrected rate 50 %" in section
    png = d / "report" / "report_scores.png"
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and "report_scores.png" in section
    assert (
        'alt="people\'s pass share against the judge\'s score" src="data:image/png;base64,'
        in (d / "report" / "report.html").read_text()
    )


def test_the_band_is_worked_by_hand_and_holds_the_fit():
    """Two scores, 2 of 4 and 4 of 4 passing. Bonferroni over 2 scores: each exact interval at 97.5 %, so its tails
    are 0.0125. Score 1: Clopper-Pearson [Beta(0.0125; 2, 3), Beta(0.9875; 3, 2)]; score 2: [Beta(0.0125; 4, 1),
    1]. The monotone envelope raises score 2's lower end to at least score 1's and lowers score 1's upper end to at
    most score 2's (1: no change)."""
    from scipy.stats import beta

    scores = pd.Series([1, 1, 1, 1, 2, 2, 2, 2], index=[f"b{i}" for i in range(8)], dtype=float)
    people = pd.Series([0, 1, 0, 1, 1, 1, 1, 1], index=scores.index, dtype=float)
    a = curve(scores, people)
    lo1, hi1 = beta.ppf(0.0125, 2, 3), beta.ppf(0.9875, 3, 2)
    lo2 = max(beta.ppf(0.0125, 4, 1), lo1)
    assert a.fit_low.tolist() == pytest.approx([lo1, lo2]) and a.fit_high.tolist() == pytest.approx([hi1, 1.0])
    assert a.fit.tolist() == pytest.approx([0.5, 1.0])
    assert ((a.fit_low <= a.fit + 1e-12) & (a.fit <= a.fit_high + 1e-12)).all()
    assert a.fit.is_monotonic_increasing and a.fit_low.is_monotonic_increasing


@pytest.mark.parametrize("bad", ["high", "nan", "inf", "-Infinity"])
def test_a_score_that_is_not_a_number_is_one_line(tmp_path, capsys, bad):
    t = tmp_path / "t.csv"
    t.write_text(f"id,system,judge,verdict,input,output,score\na,s,j,PASSED,q,o,0.9\nb,s,j,FAILED,q,o,{bad}\n")
    before = hashlib.sha256(t.read_bytes()).hexdigest()
    assert main(["import", "table", str(t), "--run-dir", str(tmp_path / "d")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "item 'b': score" in err[0] and "not a finite number" in err[0], err
    assert not (tmp_path / "d").exists() and hashlib.sha256(t.read_bytes()).hexdigest() == before
