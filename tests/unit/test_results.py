"""Every committed result names the commit and machine of the run that measured it, or says in its
``provenance`` what is not established (benchmarks/provenance.py); a ``--merge`` never gives an earlier row the new
run's commit or machine."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchmarks"))

import provenance  # noqa: E402  (benchmarks/provenance.py)


def _common():
    """benchmarks/common.py, imported without its check of this tree (a benchmark's, not a test's)."""
    import importlib
    import os

    before = os.environ.get("VOCAB_BENCH_NO_CHECK")
    os.environ["VOCAB_BENCH_NO_CHECK"] = "1"
    try:
        return importlib.import_module("common")
    finally:
        if before is None:
            del os.environ["VOCAB_BENCH_NO_CHECK"]
        else:
            os.environ["VOCAB_BENCH_NO_CHECK"] = before


def _runs(path: Path) -> list[tuple[str, dict]]:
    """Each run record of a result file: the file itself, and each row merged from an earlier run."""
    doc = json.loads(path.read_text())
    out = [(path.name, doc)]
    key = provenance.MERGED.get(path.name)
    if key:
        out += [(f"{path.name} [{key}][{name}]", row) for name, row in doc[key].items()]
    return out


RECORDS = [r for p in provenance.files() if p.name != "make_test.json" for r in _runs(p)]


@pytest.mark.parametrize("where, record", RECORDS, ids=[w for w, _ in RECORDS])
def test_each_result_names_its_commit_and_machine_or_says_why_not(where, record):
    commit, machine, said = record.get("commit"), record.get("machine"), record.get("provenance")
    assert commit and machine, f"{where}: no commit or machine"
    established = (commit != "not recorded" and not commit.endswith("+dirty")
                   and provenance.complete(machine))  # fmt: skip
    assert established or (isinstance(said, str) and said), f"{where}: {commit}, {machine}, and no provenance"
    if said:  # the note names what it must
        if commit.endswith("+dirty"):
            assert "uncommitted changes" in said, (where, said)
        if not provenance.complete(machine):
            assert "machine" in said and "not evidence for any machine kind" in said, (where, said)


def test_make_test_json_names_its_commit_and_machine():
    doc = json.loads((ROOT / "benchmarks/results/make_test.json").read_text())
    assert len(doc["commit"]) >= 7 and provenance.complete(doc["machine"])


def test_the_checker_fails_a_row_without_its_machine(tmp_path):
    """The rule above, on rows made to break it (the test is able to fail)."""
    good = {"commit": "abc1234", "machine": {"cpu": "x", "cores": 2, "isa": ["avx2"], "memory_gib": 23.5}}
    test_each_result_names_its_commit_and_machine_or_says_why_not("good", good)
    for bad in ({**good, "machine": {"cpu": "x", "cores": 2}}, {**good, "commit": "abc1234+dirty"},
                {k: v for k, v in good.items() if k != "machine"}):  # fmt: skip
        with pytest.raises(AssertionError):
            test_each_result_names_its_commit_and_machine_or_says_why_not("bad", bad)


def test_a_merge_keeps_each_earlier_rows_commit_and_machine(tmp_path):
    """Rows merged from an earlier file keep the commit they were measured at (their own, else that file's), and
    a row that never named a machine says so rather than take the new run's."""
    path = tmp_path / "r.json"
    path.write_text(json.dumps({"commit": "run2", "machine": {"cpu": "m2"}, "rows": {
        "a": {"v": 1, "commit": "run1", "machine": {"cpu": "m1"}}, "b": {"v": 2}}}))  # fmt: skip
    common = _common()
    rows = common.earlier_rows(path, "rows")
    assert rows["a"]["commit"] == "run1" and rows["a"]["machine"] == {"cpu": "m1"}
    assert rows["b"]["commit"] == "run2" and rows["b"]["machine"] == common.UNRECORDED


def test_a_note_says_what_is_not_established():
    assert provenance.note("abc", {"cpu": "x", "cores": 2, "isa": ["avx2"], "memory_gib": 1}, "w") is None
    said = provenance.note("abc+dirty", {"cpu": "x", "cores": 2}, "first written in git 1234567")
    assert said.startswith("first written in git 1234567: measured on a tree with uncommitted changes over abc")
    assert "(no isa, memory_gib)" in said
    assert "its commit was not recorded" in provenance.note(None, None, "w")


def test_the_files_hold_what_their_history_establishes(capsys):
    """benchmarks/provenance.py --check: each record's commit, machine, date and note are what the files' git
    history (or, for a row made from committed runs, their manifests) establishes."""
    import subprocess

    shallow = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--is-shallow-repository"], capture_output=True,
                             text=True)  # fmt: skip
    if shallow.returncode != 0 or shallow.stdout.strip() != "false":
        pytest.skip("not a full git checkout: the results' history is not here to read")
    assert provenance.main(["--check"]) == 0, capsys.readouterr().out
