"""`vocab import table` of a pairwise table (tests/pairwise/small.csv, written by hand; every count below counted
from it by hand), `vocab audit` and `vocab audit --json` of the dataset, bad tables refused in one line."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
from statsmodels.stats.proportion import proportion_confint

from vocab.cli import main

ROOT = Path(__file__).resolve().parents[2]
SMALL = ROOT / "tests" / "pairwise" / "small.csv"

# id -> (cell, first-shown side, verdict, verdict_swapped, ann's label, bob's label), canonical (A sorts first):
# rows 2, 5, 8 (its first row) and 10 were logged llama/gpt or mistral/llama and are flipped; id 8's second row
# (llama shown first, verdict A = llama) is its swapped verdict: llama = a
EXPECTED = {
    "1": ("gpt vs llama (j)", "a", "a", "a", "a", ""),
    "2": ("gpt vs llama (j)", "b", "b", "a", "a", ""),
    "3": ("gpt vs llama (j)", "a", "tie", "tie", "tie", ""),
    "4": ("gpt vs llama (j)", "a", "b", "a", "", ""),
    "5": ("gpt vs llama (j)", "b", "tie", "", "a", ""),
    "6": ("gpt vs llama (j)", "a", "b", "b", "", "a"),
    "7": ("gpt vs llama (j)", "a", "", "", "a", ""),
    "8": ("llama vs mistral (j)", "b", "b", "a", "a", ""),
    "9": ("llama vs mistral (j)", "a", "b", "b", "b", ""),
    "10": ("llama vs mistral (j)", "b", "tie", "", "", "tie"),
    "11": ("llama vs mistral (j)", "a", "b", "", "tie", ""),
}


@pytest.fixture(scope="module")
def dataset(tmp_path_factory) -> Path:
    d = tmp_path_factory.mktemp("pairwise") / "d"
    assert main(["import", "table", str(SMALL), "--run-dir", str(d)]) == 0
    return d


def test_the_table_imports_in_canonical_orientation(dataset, capsys):
    items = pd.read_csv(dataset / "pairwise_items.csv", dtype=str, keep_default_na=False)
    cols = ["cell", "first", "verdict", "verdict_swapped", "label:ann", "label:bob"]
    got = {r["id"]: tuple(r[c] for c in cols) for r in items.to_dict("records")}
    assert got == EXPECTED
    # the answers travel with their systems: item 2 was logged llama first
    two = items[items.id == "2"].iloc[0]
    assert (two.system_a, two.output_a, two.output_b) == ("gpt", "gpt says 2", "llama says 2")
    meta = json.loads((dataset / "pairwise.json").read_text())
    assert (meta["items"], meta["unscored"], meta["both_orders"], meta["ties"]) == (11, 1, 7, True)
    assert meta["people"] == ["ann", "bob"] and meta["source"]["rows"] == 12


def test_audit_json_holds_the_hand_counted_shares(dataset, capsys):
    capsys.readouterr()
    assert main(["audit", str(dataset), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert (out["kind"], out["rater"], out["ties"], out["systems"]) == ("pairwise", "people", "half", [])
    one, two = out["cells"]
    assert (one["a"], one["b"], one["judge"], one["items"]) == ("gpt", "llama", "j", 6)
    # gpt vs llama: judge B on 2, 4, 6; A on 1; tie on 3, 5. People: B pile 2 of 3 labelled, both A; A pile 1 (A);
    # tie pile both (tie, A): B 0, tie 2/6 · 1/2, A the rest; win rate of B 1/12; raw 3/6 + 2/6 / 2
    assert one["raw"] == pytest.approx({"a": 1 / 6, "b": 3 / 6, "tie": 2 / 6})
    assert one["corrected"]["b"]["estimate"] == 0 and one["corrected"]["tie"]["estimate"] == pytest.approx(1 / 6)
    assert one["win_rate_b"]["raw"] == pytest.approx(2 / 3)
    assert one["win_rate_b"]["estimate"] == pytest.approx(1 / 12)
    assert one["win_rate_b"]["ci_low"] <= 1 / 12 <= one["win_rate_b"]["ci_high"]
    # the unlabelled B-pile item (4) is the only unknown: the win rate lies on {1, 1.5, 2} / 12 ... at most 3/12
    assert one["win_rate_b"]["ci_high"] <= 3 / 12 + 1e-12
    # llama vs mistral: every item labelled by someone (pooled): B 1/4, tie 2/4, A 1/4: no width
    assert two["win_rate_b"] == pytest.approx({"raw": 0.875, "estimate": 0.5, "ci_low": 0.5, "ci_high": 0.5})
    # ties dropped: B's wins among the items not tied, 0 of 5/6 corrected, 3/6 of 4/6 by the judge
    capsys.readouterr()
    assert main(["audit", str(dataset), "--json", "--ties", "dropped"]) == 0
    dropped = json.loads(capsys.readouterr().out)
    assert dropped["ties"] == "dropped" and set(dropped["cells"][0]) == set(one)
    assert dropped["cells"][0]["win_rate_b"]["raw"] == pytest.approx(0.75)
    assert dropped["cells"][0]["win_rate_b"]["estimate"] == 0
    # the judge: 7 items in both orders, 3 inconsistent (2, 4, 8), the first-shown answer won both times in 2, 8
    swap, first = out["judge"]["swap_inconsistency"], out["judge"]["first_position"]
    assert (swap["items"], swap["estimate"]) == (7, pytest.approx(3 / 7))
    assert (swap["ci_low"], swap["ci_high"]) == pytest.approx(proportion_confint(3, 7, method="beta"))
    assert (first["items"], first["estimate"]) == (3, pytest.approx(2 / 3))
    assert (first["ci_low"], first["ci_high"]) == pytest.approx(proportion_confint(2, 3, method="beta"))


def test_audit_lines_state_the_tie_rule_and_an_undefined_cell(dataset, capsys):
    capsys.readouterr()
    assert main(["audit", str(dataset)]) == 0
    text = capsys.readouterr().out
    assert "a tie counts half a win" in text and "win rate of llama: the judge's 66.7 %, corrected 8.3 %" in text
    assert "1 labelled items had no verdict" in text
    # ann alone left llama vs mistral's tie pile (item 10) unlabelled
    from vocab.estimates.pairwise import pairwise_audit

    ann = pairwise_audit(dataset, "ann", n_draws=200)
    assert ann.cells[1].win.estimate is None and ann.cells[0].labelled == (1, 1, 2)


def test_a_binary_audit_renders_its_lead_raters_correction_as_one_object():
    """`vocab audit --json` of a binary dataset: the lead rater's rows of the correction the headline was read from
    (a table written here by hand), NaN as null; before any rating no cell."""
    from types import SimpleNamespace

    from vocab.audit import Audit

    nan = float("nan")
    table = pd.DataFrame(
        {
            "rater": ["ann", "bob", "ann"],
            "cell": ["s1__j", "s1__j", "s2__j"],
            "p": [0.5, 0.5, 0.25],
            "theta": [0.4, 0.9, 0.0],
            "ci_low": [0.3, 0.8, 0.0],
            "ci_high": [0.5, 1.0, 0.1],
            "q1": [0.7, 0.6, nan],
            "q1_low": [0.6, 0.5, 0.0],
            "q1_high": [0.8, 0.7, 0.0],
            "q0": [0.9, 0.8, 0.75],
            "q0_low": [0.8, 0.7, 0.7],
            "q0_high": [1.0, 0.9, 0.8],
        }
    )
    c = SimpleNamespace(table=table, lead="ann", population="finite")
    out = Audit(Path("d"), 20, rated={"ann": "complete"}, next_step="done", corrected=c).json()
    assert (out["kind"], out["rater"], out["population"], out["sample_rows"]) == ("binary", "ann", "finite", 20)
    assert [x["cell"] for x in out["cells"]] == ["s1__j", "s2__j"]
    assert out["cells"][0]["corrected"] == {"estimate": 0.4, "ci_low": 0.3, "ci_high": 0.5}
    assert out["cells"][1]["q1"] == {"estimate": None, "ci_low": 0.0, "ci_high": 0.0} and out["cells"][1]["raw"] == 0.25
    json.dumps(out, allow_nan=False)  # strict JSON
    assert Audit(Path("d"), 20).json()["cells"] == []


BAD = {
    "verdict": ("id,system_a,system_b,verdict\n1,x,y,A\n2,x,y,C>D\n", "row 2, column verdict: 'C>D' is no verdict"),
    "itself": ("id,system_a,system_b,verdict\n1,x,x,A\n", "row 1: compares 'x' with itself"),
    "no pairing": (
        "id,system_a,system_b,verdict,label:ann\n1,x,y,A,B\n2,x,,A,B\n",
        "row 2: a label on an item with no pairing",
    ),
    "orders": (
        "id,system_a,system_b,verdict\n1,x,y,A\n1,x,z,B\n",
        "rows 1 and 2: id '1' twice, but the two orders disagree in name",
    ),
    "thrice": ("id,system_a,system_b,verdict\n1,x,y,A\n1,y,x,B\n1,x,y,A\n", "id '1' appears more than twice"),
    "label word": ("id,model_a,model_b,verdict,label:ann\n1,x,y,A,maybe\n", "row 1, column label:ann: 'maybe'"),
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_a_bad_table_is_one_line_exit_2_and_nothing_written(case, tmp_path, capsys):
    text, said = BAD[case]
    src = tmp_path / "t.csv"
    src.write_text(text)
    d = tmp_path / "d"
    assert main(["import", "table", str(src), "--run-dir", str(d)]) == 2
    err = capsys.readouterr().err.strip()
    assert said in err and len(err.splitlines()) == 1
    assert not d.exists()


def test_what_a_pairwise_dataset_does_not_take_yet_is_refused_in_one_line(dataset, tmp_path, capsys):
    capsys.readouterr()
    assert main(["audit", str(dataset), "--raters", "ann"]) == 2
    assert capsys.readouterr().err.strip() == (
        "vocab: error: --raters: not yet for a pairwise dataset (its people's labels come in the table's "
        "label:NAME columns)"
    )
    assert main(["import", "table", str(SMALL), "--run-dir", str(tmp_path / "e"), "--pass-at", "3"]) == 2
    assert "--pass-at: not for a pairwise table" in capsys.readouterr().err
    assert not (tmp_path / "e").exists()
    assert main(["audit", str(dataset), "--population", "superpopulation"]) == 2  # a review found it ignored
    assert capsys.readouterr().err.strip() == (
        "vocab: error: --population: a pairwise dataset's shares are of its own items (the finite population) only"
    )
