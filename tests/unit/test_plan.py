"""`vocab plan`: the smallest rows-per-pile whose simulated mean half-width meets a target, checked against the
simulator itself (the planned size meets it, one row fewer does not, and a fresh seed agrees) at three points of the
study's regime, plus the unreachable case and bad input."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from vocab.cli import main
from vocab.coverage.plan import plan
from vocab.coverage.simulate import coverage

REFERENCE = Path(__file__).resolve().parents[2] / "data" / "runs" / "reference"

POINTS = [  # (theta, q1, q0, attempts, target half-width)
    (0.3, 0.8, 0.7, 400, 0.10),
    (0.6, 0.95, 0.5, 200, 0.12),
    (0.15, 0.6, 0.9, 300, 0.08),
]


@pytest.mark.parametrize("theta, q1, q0, attempts, h", POINTS)
def test_the_planned_size_meets_the_half_width_and_one_row_fewer_does_not(theta, q1, q0, attempts, h):
    p = plan(theta=theta, q1=q1, q0=q0, attempts=attempts, half_width=h, sims=600, seed=3)
    n = p.per_pile
    assert n is not None and n > 1 and p.labels == 2 * n

    def half(k: int, seed: int = 3) -> float:
        return coverage("fiducial", theta=theta, q1=q1, q0=q0, attempts=attempts, piles=k, sims=600,
                        seed=seed).mean_width / 2  # fmt: skip

    assert half(n) <= h < half(n - 1)
    assert half(n) == pytest.approx(p.half_width)
    # another seed's studies: the plan holds up to simulation error
    assert half(n, seed=11) <= h * 1.05
    assert 0.9 <= p.coverage <= 1.0


def test_a_target_the_attempts_cannot_reach_says_so():
    p = plan(theta=0.3, q1=0.8, q0=0.7, attempts=20, half_width=0.02, sims=300)
    assert p.per_pile is None and p.labels is None and max(p.searched) == 20 and p.half_width > 0.02
    assert "log more attempts" in p.text()


def test_the_command_prints_the_plan_as_json(capsys):
    assert main(["plan", "--theta", ".3", "--q1", ".8", "--q0", ".7", "--attempts", "400", "--half-width", ".1",
                 "--sims", "300", "--json"]) == 0  # fmt: skip
    d = json.loads(capsys.readouterr().out)
    assert d["per_pile"] == d["labels"] // 2 and d["half_width"] <= 0.1 and d["method"] == "fiducial"
    assert str(d["per_pile"] - 1) in d["searched"] and d["searched"][str(d["per_pile"] - 1)] > 0.1


@pytest.mark.parametrize(
    "extra, words",
    [
        (["--half-width", "0"], "--half-width must lie in (0, 0.5]"),
        (["--half-width", "0.7"], "--half-width must lie in (0, 0.5]"),
        (["--half-width", "nan"], "--half-width must lie in (0, 0.5]"),
        (["--half-width", ".1", "--theta", "2"], "theta must lie in [0, 1]"),
        (["--half-width", ".1", "--attempts", "1"], "--attempts must be at least 2"),
        (["--half-width", ".1", "--sims", "100000000"], "over the"),
        (["--half-width", ".1", "--method", "bogus"], "invalid choice"),
        (["--half-width", ".1", "--seed", "-1"], "--seed must be non-negative"),
    ],
)
def test_bad_input_to_plan_is_one_line(capsys, extra, words):
    argv = ["plan", "--theta", ".3", "--q1", ".8", "--q0", ".7", "--attempts", "400"]
    for i in range(0, len(extra), 2):  # a later option replaces an earlier one
        if extra[i] in argv:
            argv[argv.index(extra[i]) + 1] = extra[i + 1]
        else:
            argv += extra[i : i + 2]
    with pytest.raises(SystemExit) if words == "invalid choice" else _nothing():
        assert main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and words in err[0], err


class _nothing:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def test_a_plan_from_a_pilot_plugs_in_its_estimates_per_cell(capsys, tmp_path):
    """The reference run as a pilot: each cell's theta, q1, q0 are the correction table's for the rater with most
    rows rated, the cell's attempts its own; the plan then is plan() at those values, and it says they are
    estimates."""
    from vocab.calibration import correct
    from vocab.calibration.dataset import load_dataset
    from vocab.calibration.raters import read_ratings
    from vocab.calibration.sample import read_key

    assert main(["plan", str(REFERENCE), "--half-width", ".1", "--sims", "200", "--n-boot", "200", "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    data = load_dataset(REFERENCE)
    ratings = read_ratings(REFERENCE, "gemma3")
    assert "as if true" in d["warning"] and d["rater"] == "gemma3" and d["rows_rated"] == len(ratings) > 0
    corr = correct.correction_table(data.attempts, read_key(REFERENCE), correct.variants({"gemma3": ratings}, None,
                                    data.rubric), n_boot=200).set_index("cell")  # fmt: skip
    assert [c["cell"] for c in d["cells"]] == sorted(corr.index)
    for c in d["cells"]:
        assert c["theta"] == pytest.approx(corr.theta[c["cell"]], abs=1e-6)
        if c["theta"] == 0:  # every reference cell: no true pass, so q1 is undefined; 0.5 stands in, and it says so
            assert corr.q1.isna()[c["cell"]] and c["q1"] == 0.5 and "without effect" in c["note"]
        assert c["attempts"] == int((data.attempts.cell == c["cell"]).sum())
        again = plan(theta=c["theta"], q1=c["q1"], q0=c["q0"], attempts=c["attempts"], half_width=0.1, sims=200,
                     n_boot=200)  # fmt: skip
        assert c["per_pile"] == again.per_pile and c["half_width"] == pytest.approx(again.half_width, abs=1e-6)
    # a pilot without blind ratings is no pilot
    bare = tmp_path / "bare"
    bare.mkdir()
    for f in REFERENCE.glob("*.json*"):
        shutil.copy(f, bare / f.name)
    (bare / "calibration").mkdir()
    shutil.copy(REFERENCE / "calibration" / "key.csv", bare / "calibration" / "key.csv")
    assert main(["plan", str(bare), "--half-width", ".1"]) == 2
    assert "no blind ratings yet" in capsys.readouterr().err


@pytest.mark.parametrize(
    "argv, words",
    [
        (["plan", str(REFERENCE), "--half-width", ".1", "--theta", ".3"], "--theta: a pilot"),
        (["plan", str(REFERENCE), "--half-width", ".1", "--rater", "nobody"], "no ratings from nobody"),
        (["plan", str(REFERENCE / "manifest.json"), "--half-width", ".1"], "not a directory"),
        (["plan", "--half-width", ".1", "--theta", ".3"], "--q1, --q0, --attempts needed"),
        (["plan", "--half-width", ".1", "--theta", ".3", "--q1", ".8", "--q0", ".7", "--attempts", "400", "--rater",
          "x"], "--rater is for a pilot"),
        (["plan", str(REFERENCE), "--half-width", "0"], "--half-width must lie in (0, 0.5]"),
    ],
)  # fmt: skip
def test_bad_input_to_a_pilot_plan_is_one_line(capsys, argv, words):
    assert main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and words in err[0], err
