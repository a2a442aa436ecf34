"""One read per command: `vocab audit` (a second call, ratings in), `report`, `gate`, `compare` and `plan` open
each file of the run or dataset at most once, because a command reads the dataset, the sample and the ratings once
(:func:`vocab.raters.loaded.load`) and hands them to each step instead of each step re-opening them by path.

Counted by Python's audit hook (the ``open`` event: every file Python opens, whoever opens it), in a process of its
own (an audit hook cannot be removed), on a copy of the committed reference run and on the committed Inspect log
imported and rated."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pandas as pd
import pytest

from vocab.cli import main

ROOT = Path(__file__).resolve().parents[2]
REFERENCE = ROOT / "data" / "runs" / "reference-bf16"
LOG = ROOT / "data" / "inspect" / "qa_smollm2_gemma3.eval"

COUNT = textwrap.dedent(
    """
    import collections, contextlib, io, json, sys
    from pathlib import Path

    from vocab.cli import main

    d, argv = Path(sys.argv[1]).resolve(), sys.argv[2:]
    opened = collections.Counter()

    def hook(event, args):
        if event == "open" and isinstance(args[0], (str, Path)):
            p = Path(args[0]).resolve()
            mode = args[1] or "r"
            if d in p.parents and not set(mode) & set("wax") and not p.name.endswith(".tmp"):
                opened[str(p.relative_to(d))] += 1

    with contextlib.redirect_stdout(io.StringIO()):
        sys.addaudithook(hook)
        rc = main(argv)
    print(json.dumps({"rc": rc, "opened": opened}))
    """
)


def _opened(d: Path, *argv: str) -> dict:
    """The files of ``d`` that ``vocab ARGV`` opened for reading, each with how often; and its exit status."""
    out = subprocess.run(
        [sys.executable, "-c", COUNT, str(d), *argv], capture_output=True, text=True, cwd=ROOT, check=True
    )
    return json.loads(out.stdout.splitlines()[-1])


@pytest.fixture(scope="module")
def reference(tmp_path_factory) -> Path:
    """The committed reference run with its sample and ratings, copied (the commands write their reports in it)."""
    d = tmp_path_factory.mktemp("reads") / "run"
    shutil.copytree(REFERENCE, d, ignore=shutil.ignore_patterns("report", "notebooks", "figures", "exams", "analysis"))
    return d


@pytest.fixture(scope="module")
def imported(tmp_path_factory) -> Path:
    """The committed Inspect log audited, ann's ratings handed in: an imported dataset ready for a second call."""
    tmp = tmp_path_factory.mktemp("reads")
    d = tmp / "audit"
    assert main(["audit", str(LOG), "--out", str(d), "--raters", "ann,bob"]) == 0
    sheet = pd.read_csv(d / "calibration" / "blind_sheet.csv")
    rated = tmp / "ann.csv"
    pd.DataFrame({"blind_id": sheet.blind_id, "verdict": "PASSED"}).to_csv(rated, index=False)
    assert main(["ratings", "import", str(rated), "--run-dir", str(d), "--rater", "ann"]) == 0
    return d


COMMANDS = {
    "audit": lambda d: ["audit", str(d)],
    "report": lambda d: ["report", str(d)],
    "gate": lambda d: ["gate", str(d), "--min-rate", "0"],
    "gate --anytime": lambda d: ["gate", str(d), "--min-rate", "0", "--anytime"],
    "plan": lambda d: ["plan", str(d), "--half-width", "0.3", "--sims", "20", "--n-boot", "20"],
}


@pytest.mark.parametrize("command", list(COMMANDS))
def test_a_command_opens_each_file_of_a_run_once(reference, command):
    found = _opened(reference, *COMMANDS[command](reference))
    assert found["rc"] in (0, 1), found  # 1: a gate that did not hold, still a complete read
    opened = found["opened"]
    # what each command must have read: the manifest, every cell's results, the sample, and the ratings it used
    assert {"manifest.json", "calibration/key.csv", "calibration/blind_sheet.jsonl"} <= set(opened), opened
    assert any(k.startswith("results_") for k in opened) and any(k.startswith("calibration/ratings_") for k in opened)
    assert {k: n for k, n in opened.items() if n > 1} == {}


@pytest.mark.parametrize("command", ["audit --raters ann,bob", "report", "gate", "plan", "compare"])
def test_a_command_opens_each_file_of_an_imported_dataset_once(imported, command):
    argv = {
        "audit --raters ann,bob": ["audit", str(imported), "--raters", "ann,bob"],
        "compare": ["compare", str(imported)],
    }.get(command) or COMMANDS[command](imported)
    found = _opened(imported, *argv)
    opened = found["opened"]
    assert {"dataset.json", "calibration/key.csv", "calibration/ratings_ann.csv"} <= set(opened), found
    assert {k: n for k, n in opened.items() if n > 1} == {}


# the order the data flows in `vocab audit`: a call into an earlier room than the one before is a climb back up
FLOW = (
    "vocab.imports",
    "vocab.datasets",
    "vocab.audit_sample",
    "vocab.sampling",
    "vocab.audit_rate",
    "vocab.raters",
    "vocab.estimates",
    "vocab.report",
)


def _walk(argv: list[str]) -> list[tuple[str, str]]:
    """The calls `audit()` (and the next step it writes) makes into other modules, in order: (module, function)."""
    seq = []

    def profile(frame, event, arg):
        caller = frame.f_back
        if event != "call" or caller is None or caller.f_globals.get("__name__") != "vocab.audit":
            return
        module = frame.f_globals.get("__name__", "")
        if caller.f_code.co_name in ("audit", "next_step") and module.startswith("vocab.") and module != "vocab.audit":
            seq.append((module, frame.f_code.co_name))

    sys.setprofile(profile)
    try:
        assert main(argv) == 0
    finally:
        sys.setprofile(None)
    return seq


def test_the_audit_enters_each_module_once_down_the_stages(imported, capsys):
    """Following `vocab audit`'s output through the code: each step is one call into its stage's module, handed what
    the step before read, so each module is entered once and the walk never climbs back up the flow."""
    seq = _walk(["audit", str(imported), "--raters", "ann,bob"])
    stays = [m for i, (m, _) in enumerate(seq) if i == 0 or seq[i - 1][0] != m]
    assert {m: stays.count(m) for m in stays if stays.count(m) > 1} == {}, seq
    rooms = [next(i for i, r in enumerate(FLOW) if m == r or m.startswith(r + ".")) for m in stays]
    climbs = [(stays[i - 1], stays[i]) for i in range(1, len(rooms)) if rooms[i] < rooms[i - 1]]
    assert climbs == [], climbs
    # it did walk the whole way: the import, the dataset, the sample, the raters, the correction, the headline
    assert [stays[0], stays[1], stays[2], stays[3]] == [
        "vocab.imports.sniff",
        "vocab.datasets.dataset",
        "vocab.audit_sample",
        "vocab.audit_rate",
    ]
    assert {"vocab.estimates.correct", "vocab.report"} <= set(stays)
    assert "the pass rate is" in capsys.readouterr().out


def test_a_refused_audit_never_removes_a_directory_that_held_something(imported, tmp_path, capsys):
    """A file audited into an --out that already holds a sample (but no dataset.json) is refused, and the directory,
    ratings included, stays as it was (a refusal removes only a directory this call made)."""
    d = tmp_path / "held"
    shutil.copytree(imported / "calibration", d / "calibration")
    before = sorted(p.relative_to(d) for p in d.rglob("*"))
    table = tmp_path / "t.csv"
    pd.DataFrame(
        {
            "id": ["a", "b"],
            "system": "s",
            "judge": "j",
            "verdict": ["PASSED", "FAILED"],
            "input": "q",
            "output": ["x", "y"],
        }
    ).to_csv(table, index=False)
    argv = ["audit", str(table), "--out", str(d), "--allocation", "proportional", "--budget", "50"]
    assert main(argv) == 2  # the sample there is kept, drawn with another allocation
    assert "vocab: error:" in capsys.readouterr().err
    assert (
        sorted(p.relative_to(d) for p in d.rglob("*") if p.name != "dataset.json" and "items" not in p.name) == before
    )


def test_compare_reads_the_samples_record_once(imported, tmp_path, capsys):
    """`vocab compare` reads sample.json as the gate, the audit and the report do (issue 75, item 5: a damaged record
    answered in full), through the command's one read: a damaged record is one line naming it."""
    d = tmp_path / "d"
    shutil.copytree(imported, d)
    (d / "calibration" / "sample.json").write_text("{")
    assert main(["compare", str(d)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "sample.json" in err


def test_a_key_of_digit_blind_ids_reads_as_names(imported, tmp_path, capsys):
    """Blind ids are names: a key whose ids are all digits (a hand-made sample) is read as text, as the sheet is."""
    from vocab.sampling.drawn import read_drawn

    d = tmp_path / "d"
    shutil.copytree(imported, d)
    key = pd.read_csv(d / "calibration" / "key.csv", dtype=str, keep_default_na=False)
    ids = {b: f"{i:04d}" for i, b in enumerate(key.blind_id)}
    key.assign(blind_id=key.blind_id.map(ids)).to_csv(d / "calibration" / "key.csv", index=False)
    rows = [json.loads(x) for x in (d / "calibration" / "blind_sheet.jsonl").read_text().splitlines()]
    lines = [json.dumps({**r, "blind_id": ids[r["blind_id"]]}) + "\n" for r in rows]
    (d / "calibration" / "blind_sheet.jsonl").write_text("".join(lines))
    assert sorted(read_drawn(d).key.blind_id) == sorted(ids.values())
