"""Several people's labels (issue "The data practitioners bring", item 1): pooled into one rater ``people`` beside
each person, the headline, the gate and the planner reading it by default, and no traceback where people labelled
different items. Expected values are worked by hand or come from a second dataset whose one person holds the union
of the labels, never from the pooling code itself."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from tests.stored import stored_items
from vocab.cli import main

ROOT = Path(__file__).resolve().parents[2]
MLFLOW = ROOT / "data" / "mlflow" / "traces.json"  # 12 traces judged by gemma3, 6 labelled by the person answer-key
INSPECT = ROOT / "data" / "inspect" / "qa_smollm2_gemma3.eval"


def _relabel(doc: dict, who) -> dict:
    """The person answer-key's labels, their n-th given to ``who(n)`` (a source id) instead."""
    n = 0
    for t in doc["traces"]:
        for a in t["info"]["assessments"]:
            if a["source"] == {"source_type": "HUMAN", "source_id": "answer-key"} and "feedback" in a:
                a["source"] = {"source_type": "HUMAN", "source_id": who(n)}
                n += 1
    return doc


def _import(tmp_path: Path, name: str, doc: dict) -> Path:
    f = tmp_path / f"{name}.json"
    f.write_text(json.dumps(doc))
    d = tmp_path / name
    assert main(["import", "mlflow", str(f), "--run-dir", str(d)]) == 0
    return d


def test_pooled_verdicts_are_the_majority_and_a_tie_counts_half():
    from vocab.datasets.dataset import single_verdict
    from vocab.raters.blind import pooled_passes

    rub = single_verdict("Is it right?")
    frame = lambda rows: pd.DataFrame(rows, columns=["blind_id", "verdict"])  # noqa: E731
    people = {
        "ann": frame([("r1", "PASSED"), ("r2", "PASSED"), ("r3", "FAILED")]),
        "bob": frame([("r1", "PASSED"), ("r2", "FAILED")]),
        "cat": frame([("r1", "FAILED"), ("r4", "PASSED")]),
    }
    # r1: P, P, F -> PASSED; r2: P, F -> a tie, half; r3: ann alone, F; r4: cat alone, P
    assert pooled_passes(people, rubric=rub).to_dict() == {"r1": 1.0, "r2": 0.5, "r3": 0.0, "r4": 1.0}


def test_a_tie_is_a_category_of_its_own_in_the_resampled_pile():
    """A pile of [1, 0.5, 0] resamples to means in {0, 1/6, ..., 1} centred on 0.5, never losing the tied row."""
    from vocab import stats

    draws = stats.pile_bootstrap(np.array([[1.0, 0.5, 0.0]]), np.ones((1, 3)), 20_000, np.random.default_rng(1))
    assert abs(draws.mean() - 0.5) < 0.01
    assert set(np.round(draws.ravel() * 6).astype(int)) <= set(range(7))
    assert (np.round(draws.ravel() * 6) % 2 == 1).any()  # an odd sixth: a draw holding the tie


def test_two_reviewers_of_different_traces_give_the_pooled_rate_in_one_audit(tmp_path, capsys):
    """MLflow's normal shape: each reviewer labelled other traces. `vocab audit` was a traceback (kappa of no rows);
    now the headline is the people's pooled rate, whose estimate is the one a single person holding every label
    gives (a second dataset: carol holds the union)."""
    doc = json.loads(MLFLOW.read_text())
    two = _import(tmp_path, "two", _relabel(json.loads(json.dumps(doc)), lambda n: "ann" if n % 2 else "bob"))
    one = _import(tmp_path, "one", _relabel(doc, lambda n: "carol"))
    capsys.readouterr()
    assert main(["audit", str(two)]) == 0
    out = capsys.readouterr().out
    assert "ann, bob pooled (people" in out and "against ann's" in out and "against bob's" in out, out
    assert main(["report", str(two)]) == 0
    md = (two / "report" / "report.md").read_text()
    assert "No rows in common, so no agreement measured: ann and bob" in md
    from vocab.estimates.correct import corrected

    pooled = corrected(two).table.set_index("rater").loc["people"]
    union = corrected(one).table.set_index("rater").loc["carol"]
    for col in ("p", "a", "b", "theta", "q1", "q0"):
        assert pooled[col] == pytest.approx(union[col], nan_ok=True), col
    # the gate reads the people by default, and one person when asked
    capsys.readouterr()
    assert main(["gate", str(two), "--min-rate", "0.1", "--json"]) == 0
    assert {c["rater"] for c in json.loads(capsys.readouterr().out)["cells"]} == {"people"}
    assert main(["gate", str(two), "--min-rate", "0.1", "--rater", "bob"]) == 0
    assert "(bob's labels)" in capsys.readouterr().out


def test_disjoint_hand_ins_on_vocabs_own_sample_report_without_a_traceback(tmp_path, capsys):
    d = tmp_path / "audit"
    assert main(["audit", str(INSPECT), "--out", str(d)]) == 0
    sheet = pd.read_csv(d / "calibration" / "blind_sheet.csv")
    half = len(sheet) // 2
    for name, rows in (("ann", sheet.iloc[:half]), ("bob", sheet.iloc[half:])):
        f = tmp_path / f"{name}.csv"
        pd.DataFrame({"blind_id": rows.blind_id, "verdict": "PASSED"}).to_csv(f, index=False)
        assert main(["ratings", "import", str(f), "--run-dir", str(d), "--rater", name, "--partial"]) == 0
    capsys.readouterr()
    assert main(["audit", str(d)]) == 0
    assert "ann, bob pooled (people" in capsys.readouterr().out
    assert main(["report", str(d), "--raters", "ann,bob"]) == 0
    capsys.readouterr()
    assert main(["plan", str(d), "--half-width", "0.2", "--sims", "50"]) == 0
    assert f"(people's {len(sheet)} rated rows)" in capsys.readouterr().out


def test_people_is_no_name_a_rater_can_take(tmp_path, capsys):
    from vocab.raters.packet import check_rater_name
    from vocab.sampling.sample import CalibrationError

    for name in ("people", "People"):
        with pytest.raises(CalibrationError, match="pooled rater"):
            check_rater_name(name)


def test_the_pooled_interval_covers_on_simulated_reviewers_with_a_known_truth():
    """Studies with a known truth: 400 items, a judge with sensitivity 0.85 and specificity 0.7, 15 items a pile
    labelled by three reviewers in turn (disjoint), a fifth of them by two (overlapping: agreeing, but on one row a
    study the second says the opposite, a tie counted half), and one relabel (a reviewer's later label replaces the
    earlier: their file holds the latest). The pooled people's 95 % interval holds the true rate of the studies'
    items in at least 90 % of 300 studies (its nominal 95 %, less three standard errors), the tie's half a row of
    error included."""
    from vocab.datasets.dataset import single_verdict
    from vocab.estimates.correct import correction_table
    from vocab.raters.blind import pooled_passes

    rub = single_verdict("Is it right?")
    rng = np.random.default_rng(7)
    held, studies = 0, 300
    for s in range(studies):
        truth = rng.random(400) < 0.6
        judge = np.where(truth, rng.random(400) < 0.85, rng.random(400) >= 0.7)
        att = pd.DataFrame({"cell": "sys__judge", "level": [f"i{i}" for i in range(400)], "attempt": 1,
                            "verdict": np.where(judge, "PASSED", "FAILED")})  # fmt: skip
        rows, people = [], {"ann": [], "bob": [], "cat": []}
        for pile, want in (("passed", True), ("failed", False)):
            for j, i in enumerate(rng.choice(np.flatnonzero(judge == want), 15, replace=False)):
                bid = f"b{i}"
                rows.append((bid, "sys__judge", f"i{i}", 1, "PASSED" if want else "FAILED", pile, 1))
                label = "PASSED" if truth[i] else "FAILED"
                first = ("ann", "bob", "cat")[j % 3]
                people[first].append((bid, "FAILED" if label == "PASSED" else "PASSED"))  # a slip ...
                people[first][-1] = (bid, label)  # ... relabelled: the file holds the latest
                if j % 5 == 0:  # a second reviewer: agreeing, or on one row a study disagreeing (a tie)
                    other = label if j != 5 * (s % 3) else ("FAILED" if label == "PASSED" else "PASSED")
                    people[("ann", "bob", "cat")[(j + 1) % 3]].append((bid, other))
        key = pd.DataFrame(rows, columns=["blind_id", "cell", "level", "attempt", "critic_verdict", "pile", "weight"])
        frames = {n: pd.DataFrame(v, columns=["blind_id", "verdict"]) for n, v in people.items()}
        t = correction_table(att, key, {"people": pooled_passes(frames, rubric=rub)}, n_boot=1000, seed=s).iloc[0]
        held += t.ci_low <= truth.mean() <= t.ci_high
    assert held / studies >= 0.95 - 3 * np.sqrt(0.95 * 0.05 / studies), held


LABELLED = """id,system,judge,verdict,input,output,label,label:bob
q1,s,j,PASSED,a,x,PASSED,
q2,s,j,FAILED,b,y,,FAILED
q3,s,j,PASSED,c,z,FAILED,PASSED
q4,s,j,FAILED,d,w,,
q5,s,j,PASSED,e,v,PASSED,
q6,s,j,FAILED,f,u,PASSED,
"""


def test_labels_in_the_table_give_the_corrected_rate_in_one_command(tmp_path, capsys):
    """The judge's verdict on every row and people's labels on some: `label` is --rater's, `label:bob` bob's. By
    hand, p = 3/6. ann: passed pile q1 P, q3 F, q5 P (a = 2/3), failed pile q6 P (b = 1): theta 5/6. bob: q3 P
    (a = 1), q2 F (b = 0): 1/2. Pooled: q1 1, q3 a tie (1/2), q5 1 (a = 5/6); q2 0, q6 1 (b = 1/2): 2/3."""
    from vocab.estimates.correct import corrected

    (tmp_path / "t.csv").write_text(LABELLED)
    d = tmp_path / "d"
    assert main(["import", "table", str(tmp_path / "t.csv"), "--run-dir", str(d), "--rater", "ann"]) == 0
    assert "labels from people: ann 4, bob 2" in capsys.readouterr().out
    theta = corrected(d).table.set_index("rater").theta
    assert theta.to_dict() == pytest.approx({"ann": 5 / 6, "bob": 1 / 2, "people": 2 / 3})
    assert main(["audit", str(d)]) == 0
    out = capsys.readouterr().out
    assert "ann, bob pooled (people" in out and "the pass rate is 67 %" in out and out.count("Not blind:") == 1
    # the same through `vocab audit FILE --out`
    assert main(["audit", str(tmp_path / "t.csv"), "--out", str(tmp_path / "e")]) == 0
    assert "labels" in capsys.readouterr().out


@pytest.mark.parametrize(
    "body, extra, words",
    [
        ("id,system,judge,verdict,input,output,criterion:x,label\nq,s,j,PASSED,a,b,PASSED,PASSED\n", [],
         "beside criterion:* columns"),
        ("id,system,judge,verdict,input,output,label\nq,s,j,PASSED,a,b,maybe\n", [], "'maybe' is not"),
        ("id,system,judge,verdict,input,output,label:\nq,s,j,PASSED,a,b,PASSED\n", [], "each names one person"),
        ("id,system,judge,verdict,input,output,label\nq,s,j,PASSED,a,b,PASSED\n", ["--rater", "people"],
         "pooled rater"),
    ],
)  # fmt: skip
def test_label_columns_that_cannot_be_read_are_one_line(tmp_path, capsys, body, extra, words):
    (tmp_path / "t.csv").write_text(body)
    capsys.readouterr()
    assert main(["import", "table", str(tmp_path / "t.csv"), "--run-dir", str(tmp_path / "d"), *extra]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and words in err[0], err
    assert not (tmp_path / "d").exists()


def test_a_numeric_verdict_and_other_words(tmp_path, capsys):
    body = "id,system,judge,verdict,input,output,label\nq1,s,j,0.9,a,b,yes\nq2,s,j,0.2,a,b,no\nq3,s,j,0.7,a,b,\n"
    (tmp_path / "t.csv").write_text(body)
    argv = ["import", "table", str(tmp_path / "t.csv"), "--run-dir", str(tmp_path / "d"), "--pass-at", "0.5",
            "--pass-values", "yes", "--fail-values", "no"]  # fmt: skip
    assert main(argv) == 0
    rows = stored_items(tmp_path / "d")
    assert [r["verdict"] for r in rows] == ["PASSED", "FAILED", "PASSED"]
    assert pd.read_csv(tmp_path / "d" / "calibration" / "ratings_person.csv").verdict.tolist().count("PASSED") == 1


def test_an_imported_judges_outputs_speak_of_items_and_the_judge(tmp_path, capsys):
    """The report, `vocab audit`, `vocab gate` and `vocab plan` of an imported dataset (MLflow: two reviewers, two
    errored and three FAILED verdicts) hold no word of the study (critic, level, attempt, retry) and, outside the
    provenance's paths, no raw column name; `--name` is the report's title; the `next:` papermill command runs as
    printed (it names --cwd notebooks and an absolute run_dir); the gate's JSON names its fields as its line does."""
    doc = _relabel(json.loads(MLFLOW.read_text()), lambda n: "ann" if n % 2 else "bob")
    for i, t in enumerate(doc["traces"]):
        judge = next(a for a in t["info"]["assessments"] if a["source"]["source_type"] == "LLM_JUDGE")
        if i in (3, 7):
            judge["feedback"] = {"value": None, "error": {"error_code": "RATE_LIMIT", "error_message": "slow down"}}
        elif i in (1, 5, 9):
            judge["feedback"] = {"value": "no"}
    f = tmp_path / "two.json"
    f.write_text(json.dumps(doc))
    d = tmp_path / "d"
    assert main(["import", "mlflow", str(f), "--run-dir", str(d), "--name", "QA bot, December"]) == 0
    said = [capsys.readouterr().out]
    for argv in (["audit", str(d)], ["gate", str(d), "--min-rate", "0.1"], ["plan", str(d), "--half-width", "0.2",
                 "--sims", "50"], ["report", str(d)]):  # fmt: skip
        assert main(argv) == 0, argv
        said.append(capsys.readouterr().out)
    md = (d / "report" / "report.md").read_text()
    body = md.split("## Provenance")[0]
    assert body.startswith("# Judge audit: QA bot, December\n") and "> Not blind:" in body
    for text in (*said, md):
        words = re.findall(r"\b(critic|levels?|attempts?|retry|retries)\b", text, flags=re.I)
        assert not words, (words, text[:300])
    names = set(re.findall(r"\b[a-z0-9]+(?:_[a-z0-9]+)+\b", body)) - {"predict_fn"}  # the traced function's name
    assert not names, names
    nxt = next(line for line in said[1].splitlines() if line.startswith("next:"))
    assert f"10_audit.ipynb out/10_audit.ipynb --cwd notebooks -p dataset_dir {d.resolve()}" in nxt
    assert main(["gate", str(d), "--min-rate", "0.1", "--json"]) == 0
    (check,) = json.loads(capsys.readouterr().out)["cells"][0]["checks"]
    assert set(check) == {"check", "lower_bound", "threshold", "holds"} and check["threshold"] == 0.1


def test_blind_ids_belong_to_their_dataset(tmp_path, capsys):
    """Two runs of one eval (the same items, systems and judge; one answer differs) shared blind ids, so a hand-made
    sheet of one imported into the other: the ids now derive from the judged items' content, and it is refused."""
    rows = [{"id": f"q{i}", "system": "s", "judge": "j", "verdict": "PASSED" if i % 3 else "FAILED", "input": f"q {i}",
             "output": f"a {i}"} for i in range(40)]  # fmt: skip
    first, second = tmp_path / "first.csv", tmp_path / "second.csv"
    pd.DataFrame(rows).to_csv(first, index=False)
    rows[5]["output"] = "another answer"
    pd.DataFrame(rows).to_csv(second, index=False)
    for f in (first, second):
        assert main(["audit", str(f), "--out", str(tmp_path / f.stem)]) == 0
    a, b = (pd.read_csv(tmp_path / n / "calibration" / "key.csv") for n in ("first", "second"))
    assert a.drop(columns="blind_id").equals(b.drop(columns="blind_id"))  # the same rows drawn ...
    assert not set(a.blind_id) & set(b.blind_id)  # ... under ids of their own
    hand = tmp_path / "hand.csv"
    pd.DataFrame({"blind_id": a.blind_id, "verdict": "PASSED"}).to_csv(hand, index=False)
    capsys.readouterr()
    assert main(["ratings", "import", str(hand), "--run-dir", str(tmp_path / "second"), "--rater", "ann"]) == 2
    assert "unknown ids" in capsys.readouterr().err
    assert not (tmp_path / "second" / "calibration" / "ratings_ann.csv").exists()
    assert main(["ratings", "import", str(hand), "--run-dir", str(tmp_path / "first"), "--rater", "ann"]) == 0


def test_a_sample_drawn_with_random_ids_is_kept(tmp_path):
    """The committed runs' samples were drawn before ids came from the content: drawing again (vocab sample, 02)
    finds the same rows and keeps their ids."""
    import shutil

    from vocab.calibration import draw_sample, load_dataset, read_key, write_sample

    ref = ROOT / "data" / "runs" / "reference"
    d = tmp_path / "ref"
    d.mkdir()
    for f in ref.glob("*.json*"):
        shutil.copy(f, d / f.name)
    shutil.copytree(ref / "calibration", d / "calibration")
    before = {p.name: p.read_bytes() for p in (d / "calibration").iterdir() if p.is_file()}
    data = load_dataset(d)
    drawn = draw_sample(data.attempts, 10, 0, data.visible)
    assert not set(drawn.key.blind_id) & set(read_key(d).blind_id)  # new ids ...
    write_sample(drawn, d)
    assert {p.name: p.read_bytes() for p in (d / "calibration").iterdir() if p.is_file()} == before  # ... old kept


def test_several_labelled_failed_items_of_one_group_share_its_weight(tmp_path):
    """Group g1 holds three FAILED rows, two labelled (PASSED, FAILED), g2 one FAILED row, labelled PASSED. By hand:
    each g1 row weighs 3/2 and the g2 row 1 (scaled to 3, 3 and 2), so the failed pile's share b is
    (3·1 + 3·0 + 2·1) / 8 = 5/8. They were refused ("two labelled FAILED items share a group")."""
    from vocab.estimates.correct import corrected

    body = ("id,group,system,judge,verdict,input,output,label\n"
            "a,g1,s,j,FAILED,q,x,PASSED\nb,g1,s,j,FAILED,q,y,FAILED\nc,g1,s,j,FAILED,q,z,\n"
            "d,g2,s,j,FAILED,q,w,PASSED\ne,g3,s,j,PASSED,q,v,PASSED\nf,g4,s,j,PASSED,q,u,\n")  # fmt: skip
    (tmp_path / "t.csv").write_text(body)
    d = tmp_path / "d"
    assert main(["import", "table", str(tmp_path / "t.csv"), "--run-dir", str(d)]) == 0
    key = pd.read_csv(d / "calibration" / "key.csv")
    assert sorted(key[key.pile == "failed"].weight) == [2, 3, 3]
    row = corrected(d).table.set_index("rater").loc["person"]
    assert row.b == pytest.approx(5 / 8) and row.a == 1 and row.p == pytest.approx(2 / 6)


def test_the_pooled_rater_with_no_correctable_cell_gates_as_undefined(tmp_path, capsys):
    """Two people who labelled only items the judge passed: no failed pile, no correction; the gate's default rater
    (people) was refused as unknown, and now its bound is undefined, which does not hold."""
    body = ("id,system,judge,verdict,input,output,label:ann,label:bob\n"
            "a,s,j,PASSED,q,x,PASSED,\nb,s,j,PASSED,q,y,,FAILED\nc,s,j,FAILED,q,z,,\n")  # fmt: skip
    (tmp_path / "t.csv").write_text(body)
    d = tmp_path / "d"
    assert main(["import", "table", str(tmp_path / "t.csv"), "--run-dir", str(d)]) == 0
    capsys.readouterr()
    assert main(["gate", str(d), "--min-rate", "0.5"]) == 1
    out = capsys.readouterr().out
    assert out.startswith("FAIL s → j (people's labels)") and "undefined" in out, out


def test_a_rater_file_named_people_is_refused_not_pooled(tmp_path, capsys):
    (tmp_path / "t.csv").write_text(LABELLED)
    d = tmp_path / "d"
    assert main(["import", "table", str(tmp_path / "t.csv"), "--run-dir", str(d), "--rater", "ann"]) == 0
    (d / "calibration" / "ratings_ann.csv").rename(d / "calibration" / "ratings_people.csv")  # written before 2026-12
    meta = json.loads((d / "dataset.json").read_text())
    del meta["source"]["labels_used"]  # as an import before 2026-12-07 wrote it
    (d / "dataset.json").write_text(json.dumps(meta))
    capsys.readouterr()
    assert main(["audit", str(d)]) == 2
    assert "rename this rater's file" in capsys.readouterr().err


def test_items_sharing_a_group_and_epoch_keep_their_own_labels(tmp_path, capsys):
    """Items a and b of one group and epoch had one blind id's place: a re-import in which ann labelled b instead of
    a stored b's label under a's row. Ids now name the item, and a sample that cannot tell them apart is refused."""
    body = "id,group,system,judge,verdict,input,output,label\n{}\nc,g2,s,j,FAILED,q,z,FAILED\n"
    one = body.format("a,g,s,j,PASSED,q,answer-a,PASSED\nb,g,s,j,PASSED,q,answer-b,")
    other = body.format("a,g,s,j,PASSED,q,answer-a,\nb,g,s,j,PASSED,q,answer-b,FAILED")
    (tmp_path / "one.csv").write_text(one)
    (tmp_path / "other.csv").write_text(other)
    for name in ("one", "other"):
        d = tmp_path / name
        assert main(["import", "table", str(tmp_path / f"{name}.csv"), "--run-dir", str(d), "--rater", "ann"]) == 0
        sheet = pd.read_csv(d / "calibration" / "blind_sheet.csv").set_index("blind_id").output
        rated = pd.read_csv(d / "calibration" / "ratings_ann.csv").set_index("blind_id").verdict
        shown = {sheet[b]: v for b, v in rated.items()}
        assert shown == ({"answer-a": "PASSED", "z": "FAILED"} if name == "one" else
                         {"answer-b": "FAILED", "z": "FAILED"})  # fmt: skip
    # the second labelling imported over the first: its sample was drawn from other rows of one place
    capsys.readouterr()
    assert main(["import", "table", str(tmp_path / "other.csv"), "--run-dir", str(tmp_path / "one")]) == 2
    err = capsys.readouterr().err
    assert "another sample" in err or "share a group and epoch" in err, err


def test_one_persons_partial_sheet_leads_over_complete_llm_raters(tmp_path, capsys):
    """The reference run, whose two LLM raters rated all 67 rows, and jane-doe's hand-in of 23 rows: the audit's
    headline, the report, the gate's default and the planner read jane-doe's ratings and say how many rows they
    cover (the counts read from the files: the hand-in's rows, the blind sheet's lines)."""
    import shutil

    from vocab.cli import main

    run = tmp_path / "reference"
    shutil.copytree(ROOT / "data" / "runs" / "reference", run, ignore=shutil.ignore_patterns("notebooks", "figures"))
    sheet = [json.loads(line) for line in (run / "calibration" / "blind_sheet.jsonl").read_text().splitlines()]
    rows = [r["blind_id"] for r in sheet][:23]
    f = tmp_path / "jane.csv"
    # her verdicts vary (every check passed on every other row): a rater who passed every row would not lead (#76)
    checks = {f"c{i}": "PASSED" for i in range(1, 13)}
    frame = pd.DataFrame({"blind_id": rows, **checks}).assign(c2=["PASSED", "FAILED"] * 11 + ["PASSED"])
    frame.to_csv(f, index=False)
    assert main(["ratings", "import", str(f), "--run-dir", str(run), "--rater", "jane-doe", "--partial"]) == 0
    handed = len(pd.read_csv(run / "calibration" / "ratings_jane-doe.csv"))
    assert handed == 23 and len(sheet) == 67
    assert {len(pd.read_csv(run / "calibration" / f"ratings_{n}.csv")) for n in ("gemma3", "smollm2")} == {67}
    capsys.readouterr()
    assert main(["audit", str(run)]) == 0
    out = capsys.readouterr().out
    heads = [line for line in out.splitlines() if " judged by " in line]
    # each cell's headline counts its own rows (#76): the hand-in's rows of that cell, of the cell's sampled rows
    key = pd.read_csv(run / "calibration" / "key.csv", dtype=str)
    counts = {c.replace("__", " judged by "): (k.blind_id.isin(rows).sum(), len(k)) for c, k in key.groupby("cell")}
    own = {h: f"against jane-doe's blind ratings ({n} of {of} sampled rows)" for h, (n, of) in counts.items()}
    # (a cell with a pile she rated none of has no rate, so no headline)
    assert len(own) == 4 and heads and all(own[h.split(":")[0]] in h for h in heads), (heads, own)
    assert sum(key.blind_id.isin(rows)) == handed
    assert main(["gate", str(run), "--min-rate", "0", "--json"]) in (0, 1)
    gated = json.loads(capsys.readouterr().out)
    assert {c["rater"] for c in gated["cells"]} == {"jane-doe"}
    assert main(["plan", str(run), "--half-width", "0.3", "--sims", "200", "--n-boot", "200", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["rater"] == "jane-doe"
    assert main(["report", str(run), "--out", str(tmp_path / "r")]) == 0
    md = (tmp_path / "r" / "report.md").read_text()
    assert all(said in md for head, said in own.items() if any(h.startswith(head) for h in heads))
