"""Bad input to the command line: one line on stderr naming the problem, exit code 2, no traceback, and the files
of every directory it touches unchanged (hashed before and after). One case per input of the reliability campaign
this file covers; each builds its own directory from the committed reference run's sample and ratings."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import pandas as pd
import pytest

from tests.stored import stored_items, write_table
from vocab.cli import main

ROOT = Path(__file__).resolve().parents[2]
REFERENCE = ROOT / "data" / "runs" / "reference"


def tree_hashes(*dirs: Path) -> dict[str, str]:
    out = {}
    for d in dirs:
        for p in sorted(d.rglob("*")) if d.exists() else ():
            if p.is_file():
                out[str(p)] = hashlib.sha256(p.read_bytes()).hexdigest()
    return out


@pytest.fixture
def run(tmp_path) -> Path:
    """A run directory with the reference run's results, sample and ratings (no packets, exams or analysis)."""
    d = tmp_path / "run"
    d.mkdir()
    for f in REFERENCE.glob("*.json*"):
        shutil.copy(f, d / f.name)
    shutil.copytree(REFERENCE / "calibration", d / "calibration")
    return d


@pytest.fixture
def table(tmp_path) -> Path:
    t = tmp_path / "t.csv"
    pd.DataFrame({"id": ["a", "b"], "system": "s", "judge": "j", "verdict": ["PASSED", "FAILED"], "input": "q",
                  "output": ["x", "y"], "target": "t"}).to_csv(t, index=False)  # fmt: skip
    return t


def refused(argv: list[str], capsys, watch: list[Path], words: str) -> None:
    before = tree_hashes(*watch)
    assert main(argv) == 2
    err = capsys.readouterr().err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("vocab: error: "), err
    assert "Traceback" not in err and words in lines[0], err
    assert tree_hashes(*watch) == before


def test_a_ratings_import_never_replaces_the_script_raters_verdicts(run, tmp_path, capsys):
    sheet = pd.read_csv(run / "calibration" / "blind_sheet.csv")
    empty = tmp_path / "empty.csv"
    pd.DataFrame({"blind_id": sheet.blind_id, **{f"c{i}": "" for i in range(1, 13)}}).to_csv(empty, index=False)
    refused(["ratings", "import", str(empty), "--run-dir", str(run), "--rater", "script"], capsys, [run],
            "machine rater")  # fmt: skip
    # ... nor an LLM rater's
    rated = tmp_path / "rated.csv"
    pd.read_csv(run / "calibration" / "ratings_smollm2.csv").to_csv(rated, index=False)
    refused(["ratings", "import", str(rated), "--run-dir", str(run), "--rater", "gemma3"], capsys, [run],
            "machine rater")  # fmt: skip


@pytest.mark.parametrize("name", ["ann\n", "ann\r", "", "1ann", "ann bob", "a" * 41])
def test_a_rater_name_is_matched_whole(run, tmp_path, capsys, name):
    rated = tmp_path / "rated.csv"
    pd.read_csv(run / "calibration" / "ratings_smollm2.csv").to_csv(rated, index=False)
    refused(["ratings", "import", str(rated), "--run-dir", str(run), "--rater", name], capsys, [run], "rater name")


@pytest.mark.parametrize("visible", ["judge,output", "input,verdict", "system", "id,input", "criterion:x,input"])
def test_the_judges_columns_can_never_be_visible(table, tmp_path, capsys, visible):
    d = tmp_path / "d"
    refused(["import", "table", str(table), "--run-dir", str(d), "--visible", visible], capsys, [tmp_path / "d"],
            "can never be shown")  # fmt: skip
    assert not d.exists()


@pytest.mark.parametrize(
    "argv",
    [
        ["import", "table", "{table}", "--run-dir", "{d}", "--visible", ","],
        ["import", "table", "{table}", "--run-dir", "{d}", "--visible", "input,,output"],
        ["import", "table", "{table}", "--run-dir", "{d}", "--visible", ""],
        ["import", "inspect", "{table}", "--run-dir", "{d}", "--pass-values", ","],
        ["import", "inspect", "{table}", "--run-dir", "{d}", "--fail-values", " , "],
    ],
)
def test_an_empty_list_option_is_refused(table, tmp_path, capsys, argv):
    d = tmp_path / "d"
    argv = [a.format(table=table, d=d) for a in argv]
    refused(argv, capsys, [d], "none empty")
    assert not d.exists()


@pytest.mark.parametrize(
    "argv",
    [
        ["sample", "--run-dir", "{run}", "--seed", "-1"],
        ["coverage-grid", "--out", "{tmp}/g.csv", "--seed", "-3"],
        ["coverage", "--theta", ".5", "--q1", ".8", "--q0", ".8", "--seed", "-1"],
        ["levels", "--tiers", "1", "--per-tier", "1", "--seed", "-1"],
    ],
)
def test_a_negative_seed_is_refused_by_every_command(run, tmp_path, capsys, argv):
    """numpy's generators take no negative seed: one line, before any work (coverage-grid's workers raised it)."""
    argv = [a.format(run=run, tmp=tmp_path) for a in argv]
    refused(argv, capsys, [run, tmp_path], "--seed must be non-negative")


def test_a_table_saved_with_a_byte_order_mark_imports(tmp_path, table):
    """Spreadsheets write UTF-8 with a BOM: its first column is 'id', not '\\ufeffid'."""
    bom = tmp_path / "bom.csv"
    bom.write_bytes(b"\xef\xbb\xbf" + table.read_bytes())
    assert main(["import", "table", str(bom), "--run-dir", str(tmp_path / "d")]) == 0


def _big_table(path: Path, n: int, tag: str) -> Path:
    pd.DataFrame({"id": [f"{tag}{i}" for i in range(n)], "system": "s", "judge": "j",
                  "verdict": ["PASSED", "FAILED"] * (n // 2), "input": "q", "output": tag, "target": "t"}).to_csv(
        path, index=False)  # fmt: skip
    return path


def test_a_command_is_refused_while_another_writes_into_the_same_directory(table, tmp_path, capsys):
    import subprocess
    import sys

    d = tmp_path / "d"
    assert main(["import", "table", str(table), "--run-dir", str(d)]) == 0
    capsys.readouterr()
    holder = subprocess.Popen(
        [sys.executable, "-c", "import sys, time; from vocab.records import dir_lock\n"
         "with dir_lock(sys.argv[1]):\n    print('held', flush=True); time.sleep(60)", str(d)],
        stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert holder.stdout.readline().strip() == "held"
        refused(["sample", "--run-dir", str(d), "--per-pile", "1"], capsys, [d], "another vocab command")
    finally:
        holder.kill()
        holder.wait()
    assert main(["sample", "--run-dir", str(d), "--per-pile", "1"]) == 0  # free again once the holder is gone


def test_two_imports_racing_into_one_directory_leave_one_whole_dataset(tmp_path):
    """Two `vocab import table` of different tables into one new directory at the same time: one is refused,
    the other's dataset is whole (its own rows, the hash its dataset.json names)."""
    import subprocess
    import sys

    from vocab.datasets.dataset import load_dataset

    d = tmp_path / "d"
    tables = [_big_table(tmp_path / f"{t}.csv", 20_000, t) for t in ("a", "b")]
    procs = [subprocess.Popen([sys.executable, "-m", "vocab.cli", "import", "table", str(t), "--run-dir", str(d)],
                              stderr=subprocess.PIPE, text=True) for t in tables]  # fmt: skip
    codes = [p.wait() for p in procs]
    errs = [p.stderr.read() for p in procs]
    assert sorted(codes) == [0, 2], (codes, errs)
    loser = errs[codes.index(2)].strip().splitlines()
    assert len(loser) == 1 and ("another vocab command" in loser[0] or "another dataset" in loser[0]), loser
    winner = "ab"[codes.index(0)]
    ds = load_dataset(d)
    assert len(ds.attempts) == 20_000 and set(ds.attempts["output"]) == {winner}
    assert [p.name for p in d.iterdir() if p.name.endswith(".tmp")] == []


@pytest.mark.parametrize("damage", ["cut judgments", "replaced judgments", "cut dataset.json", "dataset.json list"])
def test_a_damaged_dataset_is_refused_not_sampled(table, tmp_path, capsys, damage):
    d = tmp_path / "d"
    assert main(["import", "table", str(table), "--run-dir", str(d)]) == 0
    j, m = d / "items.parquet", d / "dataset.json"
    if damage == "cut judgments":
        j.write_bytes(j.read_bytes()[: j.stat().st_size // 2])
    elif damage == "replaced judgments":  # another dataset's items file, whole
        other = tmp_path / "other.csv"
        other.write_text(table.read_text().replace("PASSED", "FAILED"))
        assert main(["import", "table", str(other), "--run-dir", str(tmp_path / "o")]) == 0
        j.write_bytes((tmp_path / "o" / "items.parquet").read_bytes())
    elif damage == "cut dataset.json":
        m.write_bytes(m.read_bytes()[: m.stat().st_size // 2])
    else:
        m.write_text("[1, 2]\n")
    capsys.readouterr()
    words = "describes" if "judgments" in damage else "dataset.json"
    refused(["sample", "--run-dir", str(d), "--per-pile", "1"], capsys, [d], words)
    if "judgments" in damage:  # the same import again writes the file its dataset.json describes
        assert main(["import", "table", str(table), "--run-dir", str(d)]) == 0
        assert main(["sample", "--run-dir", str(d), "--per-pile", "1"]) == 0
    else:
        refused(["import", "table", str(table), "--run-dir", str(d)], capsys, [d], "dataset.json")


def _hand_in(run: Path, tmp_path: Path, ids, verdict: str = "FAILED", name: str = "in.csv") -> Path:
    src = tmp_path / name
    pd.DataFrame({"blind_id": list(ids), "c1": "", **{f"c{i}": verdict for i in range(2, 13)}}).to_csv(src, index=False)
    return src


def test_a_later_hand_in_keeps_the_earlier_one_and_never_drops_rows_unasked(run, tmp_path, capsys):
    ids = list(pd.read_csv(run / "calibration" / "blind_sheet.csv").blind_id)
    stored = run / "calibration" / "ratings_ann.csv"
    history = run / "calibration" / "history"
    assert main(["ratings", "import", str(_hand_in(run, tmp_path, ids)), "--run-dir", str(run), "--rater", "ann"]) == 0
    first = stored.read_bytes()
    # a 10-row partial sheet after the full one: refused, the full file kept as it was
    part = _hand_in(run, tmp_path, ids[:10], name="part.csv")
    refused(["ratings", "import", str(part), "--run-dir", str(run), "--rater", "ann", "--partial"], capsys, [run],
            f"rates {len(ids) - 10} rows this hand-in does not")  # fmt: skip
    # the same sheet again: nothing written
    assert main(["ratings", "import", str(_hand_in(run, tmp_path, ids)), "--run-dir", str(run), "--rater", "ann"]) == 0
    assert "nothing written" in capsys.readouterr().out and not history.exists()
    # a corrected full sheet: accepted, the earlier file kept in history, the changes counted
    fixed = _hand_in(run, tmp_path, ids, verdict="PASSED", name="fixed.csv")
    assert main(["ratings", "import", str(fixed), "--run-dir", str(run), "--rater", "ann"]) == 0
    assert f"{len(ids)} rows changed, 0 dropped" in capsys.readouterr().out
    kept = list(history.glob("ratings_ann.*.csv"))
    assert len(kept) == 1 and kept[0].read_bytes() == first
    # --replace drops rows on purpose, and keeps what it replaced
    second = stored.read_bytes()
    assert (
        main(["ratings", "import", str(part), "--run-dir", str(run), "--rater", "ann", "--partial", "--replace"]) == 0
    )
    assert f"{len(ids) - 10} dropped" in capsys.readouterr().out
    assert len(pd.read_csv(stored)) == 10
    assert sorted(p.read_bytes() for p in history.glob("ratings_ann.*.csv")) == sorted([first, second])


@pytest.mark.parametrize("bad", ["latin-1", "huge", "binary"])
def test_an_unreadable_ratings_file_is_one_line(run, tmp_path, capsys, bad):
    ids = list(pd.read_csv(run / "calibration" / "blind_sheet.csv").blind_id)
    src = _hand_in(run, tmp_path, ids)
    if bad == "latin-1":
        src.write_bytes(src.read_bytes() + "x,,,,,,,,,,,,Ménage\n".encode("latin-1"))
        words = "not UTF-8"
    elif bad == "huge":  # sparse: 200 MB on paper, no memory or disk used to make it
        with src.open("r+b") as f:
            f.truncate(200 * 2**20)
        words = "over the"
    else:
        src.write_bytes(b"\x00\x01\x02" * 1000)
        words = "missing columns"
    refused(["ratings", "import", str(src), "--run-dir", str(run), "--rater", "ann"], capsys, [run], words)


# --- sizes: refused before memory fills ---------------------------------------------------------------------

LOG = ROOT / "data" / "inspect" / "qa_smollm2_gemma3.eval"


# The child's own peak (VmHWM belongs to the process image; getrusage's ru_maxrss would keep pytest's from before exec)
HWM_TO = "(lambda p: open(p, 'w').write([l.split()[1] for l in open('/proc/self/status') if l.startswith('VmHWM')][0]))"


def _peak_mib(argv: list[str], tmp_path: Path) -> tuple[int, str, float]:
    """A command in a child process: its exit code, stderr and peak resident memory (MiB)."""
    import subprocess
    import sys

    out = tmp_path / "peak.txt"
    code = f"import sys; from vocab.cli import main; rc = main(sys.argv[2:]); {HWM_TO}(sys.argv[1]); sys.exit(rc)"
    r = subprocess.run([sys.executable, "-c", code, str(out), *argv], capture_output=True, text=True, timeout=600)
    return r.returncode, r.stderr, int(out.read_text()) / 1024  # VmHWM is in kB


def _swap_member(tmp_path: Path, name: str, data: bytes) -> Path:
    import zipfile

    import inspect_ai.log  # noqa: F401  (teaches zipfile the zstd members of .eval logs)

    out = tmp_path / "bomb.eval"
    with zipfile.ZipFile(LOG) as src, zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as dst:
        for i in src.infolist():
            dst.writestr(i.filename, data if i.filename == name else src.read(i.filename))
    return out


@pytest.mark.parametrize(
    "member, size, words",
    [("header.json", 40 * 2**20, "inflates to 41,943,040 bytes"), ("header.json", 3 * 2**20, "times, over the 200")],
)
def test_an_inspect_log_that_inflates_past_its_bounds_is_refused_unread(tmp_path, member, size, words):
    log = _swap_member(tmp_path, member, b" " * size)
    code, err, peak = _peak_mib(["import", "inspect", str(log), "--run-dir", str(tmp_path / "d")], tmp_path)
    lines = err.strip().splitlines()
    assert code == 2 and len(lines) == 1 and words in lines[0], err
    assert peak < 1024 and not (tmp_path / "d").exists()


def test_an_inspect_log_is_written_a_bounded_number_of_rows_at_a_time(tmp_path, monkeypatch):
    """An .eval log has no bound as a whole (each member has): its samples are read one at a time and staged a
    bounded number of rows at a time. The real log's rows, 5 at a time and past a cap of 5 rows (the cap the
    promptfoo, DeepEval and MLflow files, read whole, keep), make the dataset the rows held in one list make."""
    from vocab.datasets import items
    from vocab.datasets import rows as dataset
    from vocab.datasets.dataset import judgment_rows, read_meta
    from vocab.datasets.rows import write_dataset
    from vocab.imports import common, import_inspect, read_inspect

    rows, meta = read_inspect(LOG)
    whole = write_dataset(tmp_path / "whole", rows, meta)
    monkeypatch.setattr(common, "MAX_ROWS", 5)
    monkeypatch.setattr(dataset, "ROWS_AT_ONCE", 5)
    held = []
    frame = items.rows_frame
    monkeypatch.setattr(items, "rows_frame", lambda r, start=0: (held.append(len(r)), frame(r, start))[1])
    streamed = import_inspect(LOG, tmp_path / "streamed")
    assert len(rows) == 16 and max(held) == 5 and sum(held) == len(rows)  # 5, 5, 5, 1
    assert read_meta(streamed)["items"]["digest"] == read_meta(whole)["items"]["digest"]
    assert (
        judgment_rows(streamed)
        == judgment_rows(whole)
        == [
            {k: r[k] for k in ("id", "group", "epoch", "system", "judge", "verdict", "criteria", "visible", "hidden")}
            for r in rows
        ]
    )


def test_a_json_inspect_log_past_its_bound_is_refused(tmp_path, capsys):
    big = tmp_path / "big.json"
    with big.open("wb") as f:  # sparse: no disk or memory spent
        f.truncate(65 * 2**20)
    refused(["import", "inspect", str(big), "--run-dir", str(tmp_path / "d")], capsys, [tmp_path], "convert it")


@pytest.mark.parametrize(
    "argv, words",
    [
        (["coverage", "--theta", ".5", "--q1", ".8", "--q0", ".8", "--sims", "100000000"], "sims x n_boot"),
        (["coverage", "--theta", ".5", "--q1", ".8", "--q0", ".8", "--n-boot", "1000000000"], "sims x n_boot"),
        (["coverage", "--theta", ".5", "--q1", ".8", "--q0", ".8", "--attempts", "100000000"], "sims x attempts"),
        (["coverage-grid", "--out", "{tmp}/g.csv", "--sims", "1000000000000"], "sims x n_boot"),
        (["coverage-grid", "--out", "{tmp}/g.csv", "--levels", "1000000000000", "--sims", "10"], "sims x attempts"),
        (["coverage-grid", "--out", "{tmp}/g.csv", "--jobs", "64"], "--jobs must lie between 1 and"),
        (["coverage-grid", "--out", "{tmp}/g.csv", "--jobs", "0"], "--jobs must lie between 1 and"),
        (["coverage-grid", "--out", "{tmp}/g.csv", "--thetas", "0.3,0.5,0.30"], "thetas: 0.3 is given more than once"),
        (["coverage-grid", "--out", "{tmp}/g.csv", "--spreads", "2,inf,inf"], "spreads: inf is given more than once"),
        # the jobs of a cluster at an address are its own workers: --jobs with it was recorded but never used
        (["coverage-grid", "--out", "{tmp}/g.csv", "--jobs", "1", "--scheduler", "tcp://127.0.0.1:9"],
         "--jobs and --scheduler tcp://127.0.0.1:9"),
        # an explicit range and a design: the design silently won
        (["run", "--run-dir", "{tmp}/r", "--levels", "1-3", "--tiers", "2"], "--levels and --tiers/--per-tier"),
        (["demo", "--run-dir", "{tmp}/r", "--levels", "1-3", "--per-tier", "2"], "--levels and --tiers/--per-tier"),
    ],
)  # fmt: skip
def test_a_simulation_too_large_for_memory_is_refused_before_it_starts(tmp_path, capsys, argv, words):
    refused([a.format(tmp=tmp_path) for a in argv], capsys, [tmp_path], words)


@pytest.mark.parametrize(
    "scheduler, words",
    [
        ("nowhere:8786", "an address such as tcp://HOST:8786"),
        ("tcp://127.0.0.1:9", "cannot reach the Dask scheduler"),
        ("tcp://127.0.0.1:port", "cannot reach the Dask scheduler"),
        ("foo://127.0.0.1:9", "tcp only"),
        ("ucx://127.0.0.1:9", "tcp only"),  # distributed's UCX and TLS connectors raised tracebacks
        ("tls://127.0.0.1:9", "tcp only"),
    ],
)
def test_a_dask_scheduler_that_is_no_address_or_does_not_answer_is_one_line(tmp_path, capsys, scheduler, words):
    """Refused before any point runs; nothing is written (the port-9 case waits out the client's 10 s timeout)."""
    argv = ["coverage-grid", "--out", str(tmp_path / "g.csv"), "--sims", "10", "--scheduler", scheduler]
    refused(argv, capsys, [tmp_path], words)


# --- vocab check ------------------------------------------------------------------------------------------


def _check(stdin: str, capsys, monkeypatch) -> tuple[int, str]:
    import io

    monkeypatch.setattr("sys.stdin", io.StringIO(stdin))
    code = main(["check"])
    return code, capsys.readouterr().err


GOOD_CHECK = '{"words": ["cat"], "sentence": "The cat sat.", "answer_key": ["cat"]'


@pytest.mark.parametrize(
    "stdin, words",
    [
        (GOOD_CHECK + ', "settings": {"max_sentence_words": "many"}}\n', "whole number"),
        (GOOD_CHECK + ', "settings": {"max_sentence_words": Infinity}}\n', "whole number"),
        (GOOD_CHECK + ', "settings": {"max_sentence_words": 2.5}}\n', "whole number"),
        (GOOD_CHECK + ', "settings": {"max_sentence_words": -1}}\n', "whole number"),
        (GOOD_CHECK + ', "settings": {"require_seed_word": "yes"}}\n', "true or false"),
        (GOOD_CHECK + ', "seed_word": 7}\n', "must be a string"),
        ("[" * 100_000 + "]" * 100_000 + "\n", "nested too deeply"),
        ('{"sentence": "' + "a " * 600_000 + '"}\n', "longer than 1,048,576 characters"),
    ],
)
def test_vocab_check_refuses_bad_settings_deep_nesting_and_huge_lines(stdin, words, capsys, monkeypatch):
    code, err = _check(stdin, capsys, monkeypatch)
    lines = err.strip().splitlines()
    assert code == 2 and len(lines) == 1 and words in lines[0] and "Traceback" not in err, err


def test_vocab_check_reads_a_100_mb_line_in_bounded_memory(tmp_path):
    import subprocess
    import sys

    big = tmp_path / "big.jsonl"
    with big.open("w") as f:
        f.write('{"sentence": "' + "a " * (50 * 2**20) + '"}\n')
    peak = tmp_path / "peak.txt"
    code = f"import sys; from vocab.cli import main; rc = main(['check']); {HWM_TO}(sys.argv[1]); sys.exit(rc)"
    with big.open() as stdin:
        r = subprocess.run([sys.executable, "-c", code, str(peak)], stdin=stdin, capture_output=True, text=True,
                           timeout=300)  # fmt: skip
    assert r.returncode == 2 and "longer than" in r.stderr, r.stderr
    assert int(peak.read_text()) / 1024 < 200  # MiB (about 70 to import vocab): one line's limit read, not the line


# --- directories and tables -------------------------------------------------------------------------------


def test_a_run_dir_under_a_file_is_one_line(table, tmp_path, capsys):
    f = tmp_path / "file"
    f.write_text("x")
    refused(["import", "inspect", str(LOG), "--run-dir", str(f / "sub")], capsys, [tmp_path], "cannot be used as a")
    refused(["import", "table", str(table), "--run-dir", str(f)], capsys, [tmp_path], "is a file, not a directory")


@pytest.mark.parametrize("epoch", ["²", "1" * 5000, "٣", "1e3", "-1", "0"])
def test_a_tables_epoch_is_an_ascii_whole_number(tmp_path, capsys, epoch):
    t = tmp_path / "t.csv"
    pd.DataFrame({"id": ["a"], "system": "s", "judge": "j", "verdict": ["PASSED"], "input": "q", "output": "x",
                  "epoch": [epoch]}).to_csv(t, index=False)  # fmt: skip
    refused(["import", "table", str(t), "--run-dir", str(tmp_path / "d")], capsys, [tmp_path], "column 'epoch'")


def test_an_inspect_log_of_an_eval_that_never_finished_says_so(tmp_path, capsys):
    import zipfile

    import inspect_ai.log  # noqa: F401  (teaches zipfile the zstd members of .eval logs)

    log = tmp_path / "unfinished.eval"
    with zipfile.ZipFile(LOG) as src, zipfile.ZipFile(log, "w", zipfile.ZIP_DEFLATED) as dst:
        for i in src.infolist():
            if i.filename != "header.json":  # written last, when an eval ends
                dst.writestr(i.filename, src.read(i.filename))
    assert main(["import", "inspect", str(log), "--run-dir", str(tmp_path / "d")]) == 0
    assert "did not finish" in capsys.readouterr().out
    assert main(["import", "inspect", str(LOG), "--run-dir", str(tmp_path / "e")]) == 0
    assert "did not finish" not in capsys.readouterr().out


# --- the registry and the packet ----------------------------------------------------------------------------

REGISTRY = ROOT / "data" / "exams" / "registry.jsonl"


@pytest.mark.parametrize(
    "damage, words",
    [
        ("array line", "not an object"),
        ("directory", "cannot be read"),
        ("latin-1", "not UTF-8"),
        ("no id", "not a registry entry"),
        ("deep", "nested too deeply"),
    ],
)
def test_a_damaged_registry_is_one_line(run, tmp_path, capsys, damage, words):
    reg = tmp_path / "reg" / "registry.jsonl"
    reg.parent.mkdir()
    if damage == "directory":
        reg.mkdir()
    else:
        body = REGISTRY.read_bytes()
        extra = {
            "array line": b"[1, 2]\n",
            "latin-1": '{"id": "caf\u00e9"}\n'.encode("latin-1"),
            "no id": b'{"prev": "0", "hash": "x", "params": {}}\n',
            "deep": b"[" * 100_000 + b"]" * 100_000 + b"\n",
        }
        reg.write_bytes(body + extra[damage])
    argv = ["exam", "planted", "--run-dir", str(run), "--registry", str(reg)]
    refused(argv, capsys, [run, reg.parent], words)
    refused(["exam", "register", "planted", "--id", "x", "--run-dir", str(run), "--registry", str(reg)], capsys,
            [run, reg.parent], words)  # fmt: skip


def _packet(run: Path, rater: str = "ann", *extra: str) -> int:
    return main(["packet", "--run-dir", str(run), "--rater", rater, *extra])


def test_a_half_written_packet_json_is_one_line(run, capsys):
    assert _packet(run) == 0
    meta = run / "packets" / "ann" / "packet.json"
    meta.write_bytes(meta.read_bytes()[:40])
    capsys.readouterr()
    refused(["packet", "--run-dir", str(run), "--rater", "ann"], capsys, [run], "is damaged")
    refused(["form", str(run / "packets" / "ann")], capsys, [run], "is damaged")


def _zip(path: Path, members: dict[str, bytes]) -> Path:
    import zipfile

    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        for name, data in members.items():
            z.writestr(name, data)
    return path


def test_a_zip_that_is_not_a_packets_is_refused_before_anything_is_written(run, tmp_path, capsys):
    import zipfile

    from vocab.raters.packet import HANDOUT

    assert _packet(run) == 0
    capsys.readouterr()
    packet = run / "packets" / "ann"
    wheel = json.loads((packet / "packet.json").read_text())["wheel"]["name"]  # the zip ships vocab's wheel too
    good = {f"ann/{n}": (packet / n).read_bytes() for n in (*HANDOUT, wheel)}
    away = tmp_path / "away"
    away.mkdir()
    cases = {
        "not-a-zip.zip": None,
        "extra.zip": {**good, "ann/key.csv": b"blind_id,cell\n"},
        "missing.zip": {k: v for k, v in good.items() if not k.endswith("sheet.jsonl")},
        "escape.zip": {**{k: v for k, v in good.items() if not k.endswith("rubric.txt")}, "ann/../rubric.txt": b"x"},
        "two-folders.zip": {**good, "bob/README.txt": b"x"},
        "big.zip": {**good, "ann/sheet.jsonl": b"0" * (33 * 2**20)},
        "not-json.zip": {**good, "ann/packet.json": b"[1, 2"},
        "no-keys.zip": {**good, "ann/packet.json": b'{"rater": "ann"}'},  # JSON, but no packet's description
        "no-wheel.zip": {k: v for k, v in good.items() if k != f"ann/{wheel}"},  # packet.json names one
    }
    words = {"not-a-zip.zip": "not a packet's zip", "extra.zip": "must hold exactly",
             "missing.zip": "must hold exactly", "escape.zip": "must hold exactly", "two-folders.zip": "one folder",
             "big.zip": "over 32 MiB", "not-json.zip": "damaged",
             "no-keys.zip": "not a packet description", "no-wheel.zip": "its wheel is not the one"}  # fmt: skip
    for name, members in cases.items():
        path = away / name
        if members is None:
            path.write_bytes(b"PK\x03\x04 not really")
        else:
            _zip(path, members)
        refused(["form", str(path)], capsys, [away], words[name])
    # a member whose bytes were damaged after zipping (CRC mismatch)
    damaged = _zip(away / "damaged.zip", good)
    raw = bytearray(damaged.read_bytes())
    with zipfile.ZipFile(damaged) as z:
        info = z.getinfo("ann/README.txt")
    at = info.header_offset + 30 + len(info.filename) + 5
    raw[at] ^= 0xFF
    damaged.write_bytes(bytes(raw))
    refused(["form", str(damaged)], capsys, [away], "damaged")
    # a folder of another packet where this one would unpack: kept, and the zip refused
    (away / "ann").mkdir()
    (away / "ann" / "notes.txt").write_text("mine")
    _zip(away / "ann.zip", good)
    refused(["form", str(away / "ann.zip")], capsys, [away], "is not this packet")
    refused(["form", str(run / "packets" / "ann"), "--into", str(away / "x")], capsys, [away, run], "--into is for")
    (away / "a-file").write_text("x")
    _zip(away / "fine.zip", good)
    refused(["form", str(away / "fine.zip"), "--into", str(away / "a-file")], capsys, [away], "is a file")
    refused(["audit", str(run), "--source", "promptfoo"], capsys, [away, run], "--source is for a file")
    refused(["audit", str(run), "--assertion", "x"], capsys, [away, run], "--metric are for an imported file")


def test_an_existing_packet_never_ignores_a_new_seed(run, capsys):
    assert _packet(run, "ann", "--seed", "3") == 0
    capsys.readouterr()
    refused(["packet", "--run-dir", str(run), "--rater", "ann", "--seed", "4"], capsys, [run], "made with --seed 3")
    assert _packet(run, "ann", "--seed", "3") == 0  # the same packet again: found, unchanged


def test_an_inspect_readers_many_line_error_is_one_line(tmp_path, capsys, monkeypatch):
    """pydantic's validation errors span several lines (3 were printed); the message is folded into one."""
    import inspect_ai.log

    def invalid(*a, **k):
        raise ValueError(
            "1 validation error for EvalLog\neval.task\n  Input should be a valid string [type=string_type]"
        )

    monkeypatch.setattr(inspect_ai.log, "read_eval_log", invalid)
    refused(["import", "inspect", str(LOG), "--run-dir", str(tmp_path / "d")], capsys, [tmp_path],
            "not an Inspect log (ValueError: 1 validation error for EvalLog eval.task Input should be")  # fmt: skip


GRID = ["coverage-grid", "--methods", "seed", "--piles", "5", "--thetas", "0.5", "--q1s", "0.8", "--q0s", "0.8",
        "--spreads", "inf", "--levels", "10", "--sims", "5", "--n-boot", "5", "--jobs", "1"]  # fmt: skip


def test_a_grid_named_by_its_metadata_file_is_refused(tmp_path, capsys):
    """--out g.json wrote the CSV there, then overwrote it with the metadata and said "written"."""
    refused([*GRID, "--out", str(tmp_path / "g.json")], capsys, [tmp_path], "name the grid's CSV file")
    assert list(tmp_path.iterdir()) == []


def test_a_grid_never_replaces_the_metadata_beside_it_without_force(tmp_path, capsys):
    (tmp_path / "new.json").write_text('{"mine": true}')
    refused([*GRID, "--out", str(tmp_path / "new.csv")], capsys, [tmp_path], "new.json exists; pass --force")


def test_a_grid_onto_a_directory_is_one_line_even_with_force(tmp_path, capsys):
    (tmp_path / "d.csv").mkdir()
    refused([*GRID, "--out", str(tmp_path / "d.csv"), "--force"], capsys, [tmp_path], "is a directory")


def test_a_second_grid_into_a_directory_being_written_is_refused(tmp_path, capsys):
    from vocab.records import dir_lock

    with dir_lock(tmp_path):  # another grid (or any vocab command) writing there
        refused([*GRID, "--out", str(tmp_path / "g.csv")], capsys, [tmp_path], "another vocab command is writing")
    assert main([*GRID, "--out", str(tmp_path / "g.csv")]) == 0  # once it is done, the grid runs
    assert sorted(p.name for p in tmp_path.iterdir()) == ["g.csv", "g.json"]  # no temporary file left


@pytest.mark.parametrize(
    "pairs",
    [(("a__b", "c"), ("a", "b__c")), (("a_", "b"), ("a", "_b"))],
    ids=["join-inside-a-name", "underscore-at-an-end"],
)
def test_two_system_judge_pairs_never_join_into_one_cell(tmp_path, capsys, pairs):
    """`a__b` judged by `c` and `a` judged by `b__c` were both cell `a__b__c`; `a_` judged by `b` and `a` judged by
    `_b` both `a___b` after the first fix: the judge "said" a rate of a mix of two systems. A name holding the cell's
    join, or with `_` at an end, is refused in one line; nothing is written."""
    t = tmp_path / "t.csv"
    rows = [{"id": f"i{i}", "system": s, "judge": j, "verdict": v, "input": "q", "output": "o"}
            for i, ((s, j), v) in enumerate(zip(pairs, ("PASSED", "FAILED"), strict=True))]  # fmt: skip
    pd.DataFrame(rows).to_csv(t, index=False)
    refused(["import", "table", str(t), "--run-dir", str(tmp_path / "d")], capsys, [tmp_path], "holds '__'")
    assert not (tmp_path / "d").exists()
    refused(["audit", str(t), "--out", str(tmp_path / "e")], capsys, [tmp_path], "holds '__'")


@pytest.mark.parametrize("name", ["model\x00", "mod\u202eel", "a\tb"])
def test_a_name_with_a_control_character_is_refused(tmp_path, capsys, name):
    """A provider id holding NUL and a right-to-left override was accepted: the report then wrote NUL bytes into
    report.md and report.html, and its figure warned on stderr."""
    t = tmp_path / "t.jsonl"
    rows = [{"id": "i1", "system": name, "judge": "j", "verdict": "PASSED", "input": "q", "output": "o"}]
    t.write_text("".join(json.dumps(r) + "\n" for r in rows))
    refused(["import", "table", str(t), "--run-dir", str(tmp_path / "d")], capsys, [tmp_path], "control character")


def test_a_name_too_long_to_name_a_cell_is_one_line_in_bounded_memory(tmp_path):
    """A 199,999-character system name was carried into every table, figure and report: 1.57 GB over audit, ratings
    import and report. A system's or judge's name names a cell: over 200 characters it is refused at the import."""
    t = tmp_path / "t.csv"
    rows = [{"id": f"i{i}", "system": "s" * 199_999, "judge": "j", "verdict": "PASSED" if i % 2 else "FAILED",
             "input": "q", "output": "o"} for i in range(40)]  # fmt: skip
    pd.DataFrame(rows).to_csv(t, index=False)
    code, err, peak = _peak_mib(["audit", str(t), "--out", str(tmp_path / "d")], tmp_path)
    lines = err.strip().splitlines()
    assert code == 2 and len(lines) == 1 and "199,999 characters long" in lines[0] and "at most 200" in lines[0], err
    assert peak < 1024 and not (tmp_path / "d").exists()


def test_ratings_from_another_packet_are_refused_not_stored_as_this_raters(tmp_path, capsys):
    """Two audits of same-shaped tables with other items shared blind ids (they hung on the seed and the piles'
    sizes): a sheet rated in B's packet was stored as A's ratings. The ids now come from the items' content, and the
    form's file names its sample."""
    from vocab.raters.form import RatingSession

    def table(name: str, word: str) -> Path:
        t = tmp_path / f"{name}.csv"
        rows = [{"id": f"i{i}", "system": "s", "judge": "j", "verdict": "PASSED" if i % 3 else "FAILED",
                 "input": f"{word} {i}", "output": f"o{i}"} for i in range(30)]  # fmt: skip
        pd.DataFrame(rows).to_csv(t, index=False)
        return t

    a, b = tmp_path / "A", tmp_path / "B"
    assert main(["audit", str(table("ta", "apple")), "--out", str(a), "--raters", "ann", "--per-pile", "3"]) == 0
    assert main(["audit", str(table("tb", "berry")), "--out", str(b), "--raters", "ann", "--per-pile", "3"]) == 0
    assert not set(pd.read_csv(a / "calibration" / "key.csv").blind_id) & set(
        pd.read_csv(b / "calibration" / "key.csv").blind_id
    )  # ids of their own (they were the same, and only the sample's hash told them apart)
    s = RatingSession(b / "packets" / "ann")
    for _ in range(len(s.ids)):
        s.save({c.id: "PASSED" for c in s.rubric.criteria})
    rated_in_b = s.export()
    capsys.readouterr()
    refused(["ratings", "import", str(rated_in_b), "--run-dir", str(a), "--rater", "ann"], capsys, [a],
            "was rated on another sample")  # fmt: skip
    assert main(["ratings", "import", str(rated_in_b), "--run-dir", str(b), "--rater", "ann"]) == 0


def _half_written(run: Path, lines: int) -> None:
    """The sample as a kill left it mid-write (the writer writes the sheets, then key.csv last): key.csv not yet
    there, blind_sheet.jsonl cut after ``lines`` lines."""
    cal = run / "calibration"
    for f in list(cal.iterdir()):
        if f.name not in ("blind_sheet.jsonl",):
            f.unlink() if f.is_file() else shutil.rmtree(f)
    kept = (cal / "blind_sheet.jsonl").read_text().splitlines()[:lines]
    (cal / "blind_sheet.jsonl").write_text("\n".join(kept) + "\n")


def test_a_sample_a_kill_interrupted_is_never_trusted(run, tmp_path, capsys):
    """A partial sheet without its key became a 2-row packet and took a 2-row hand-in."""
    _half_written(run, 2)
    refused(["packet", "--run-dir", str(run), "--rater", "ann"], capsys, [run], "an incomplete sample")
    hand_in = tmp_path / "h.csv"
    pd.DataFrame({"blind_id": ["x"], "verdict": ["PASSED"]}).to_csv(hand_in, index=False)
    refused(["ratings", "import", str(hand_in), "--run-dir", str(run), "--rater", "ann", "--partial"], capsys, [run],
            "an incomplete sample")  # fmt: skip
    refused(["report", str(run)], capsys, [run], "no blind sample")


@pytest.mark.parametrize("damage", ["cut mid-line", "a list", "fewer rows than the key", "key cut mid-row"])
def test_a_damaged_sample_is_one_line_for_every_reader(run, tmp_path, capsys, damage):
    cal = run / "calibration"
    lines = (cal / "blind_sheet.jsonl").read_text().splitlines()
    if damage == "cut mid-line":
        (cal / "blind_sheet.jsonl").write_text("\n".join(lines[:-1]) + "\n" + lines[-1][: len(lines[-1]) // 2])
    elif damage == "a list":
        (cal / "blind_sheet.jsonl").write_text("\n".join([*lines[:-1], "[1, 2]"]) + "\n")
    elif damage == "fewer rows than the key":
        (cal / "blind_sheet.jsonl").write_text("\n".join(lines[:-3]) + "\n")
    else:
        key = (cal / "key.csv").read_text()
        (cal / "key.csv").write_text(key[: len(key) - 40])
    refused(["packet", "--run-dir", str(run), "--rater", "ann"], capsys, [run], "calibration")
    refused(["report", str(run)], capsys, [run], "calibration")


@pytest.mark.parametrize("name, text", [
    ("deep.json", "[" * 100_000 + "]" * 100_000),
    ("deep.jsonl", "{\"a\": " + "[" * 100_000 + "]" * 100_000 + "}\n"),
])  # fmt: skip
def test_json_nested_past_the_readers_depth_is_one_line(tmp_path, capsys, name, text):
    """RecursionError tracebacks from promptfoo's and the table's readers; inspect_ai's reader ran out of memory."""
    f = tmp_path / name
    f.write_text(text)
    kinds = ("promptfoo", "inspect") if name.endswith(".json") else ("table",)
    for kind in kinds:
        refused(["import", kind, str(f), "--run-dir", str(tmp_path / "d")], capsys, [tmp_path], "nested too deep")
        refused(["audit", str(f), "--out", str(tmp_path / "e"), "--source", kind], capsys, [tmp_path],
                "nested too deep")  # fmt: skip


def test_a_table_of_another_suffix_is_read_when_told_it_is_a_table(tmp_path, capsys):
    """`--source` names the kind: a table saved as .txt was refused for its suffix."""
    t = tmp_path / "t.txt"
    t.write_text("id,system,judge,verdict,input,output\ni1,s,j,PASSED,q,o\ni2,s,j,FAILED,q,o\n")
    assert main(["audit", str(t), "--out", str(tmp_path / "d"), "--source", "table"]) == 0
    assert "2 judged items (table): 1 PASSED, 1 FAILED" in capsys.readouterr().out


@pytest.mark.parametrize("argv, words", [
    (["audit", "{tmp}/t.csv", "--out", "{tmp}/d", "--max-calls", "-1"], "--max-calls: must be non-negative"),
    (["rate", "--run-dir", "{tmp}", "--model", "script", "--max-calls", "-1"], "--max-calls: must be non-negative"),
    (["rate", "--run-dir", "{tmp}", "--model", "gemma3", "--max-calls", "-1"], "--max-calls: must be non-negative"),
    (["calibrate", "{tmp}", "--raters", "gemma3", "--max-calls", "-1"], "--max-calls: must be non-negative"),
    (["run", "--run-dir", "{tmp}/r", "--max-calls", "-1"], "--max-calls: must be non-negative"),
    (["run", "--run-dir", "{tmp}/r", "--max-calls", "١٢"], "--max-calls: a whole number of calls"),
    (["plan", str(REFERENCE), "--half-width", ".1", "--n-boot", "100000000"], "sims x n_boot"),
])  # fmt: skip
def test_limits_are_checked_before_any_work(tmp_path, capsys, table, argv, words):
    """--max-calls -1 was taken by audit, rate and calibrate (a traceback, or exit 0 for the script rater); a
    pilot plan's --n-boot was checked after its correction had run (2.5 GiB)."""
    refused([a.format(tmp=tmp_path) for a in argv], capsys, [tmp_path], words)


def test_promptfoo_results_of_odd_shapes_import_without_a_traceback(tmp_path, capsys):
    """A response that is a string (the output itself: it was imported as an empty answer), a provider id that is a
    list, a grading provider labelled by a number."""
    import json

    result = {"prompt": {"raw": "q", "label": "p"}, "response": "a bare string", "provider": {"id": ["a", "b"]},
              "success": True, "vars": {"q": 1}, "testCase": {"assert": [{"type": "llm-rubric", "value": "x"}]},
              "gradingResult": {"pass": True, "componentResults": [
                  {"pass": True, "reason": "r", "assertion": {"type": "llm-rubric", "value": "x",
                                                              "provider": {"label": 5}}}]}}  # fmt: skip
    f = tmp_path / "pf.json"
    f.write_text(json.dumps({"evalId": "e", "results": {"version": 3, "results": [result]}}))
    assert main(["import", "promptfoo", str(f), "--run-dir", str(tmp_path / "d")]) == 0
    (row,) = stored_items(tmp_path / "d")
    assert (row["system"], row["judge"], row["verdict"], row["visible"]["output"]) == (
        "unknown",
        "5",
        "PASSED",
        "a bare string",
    )


def test_a_packets_zip_that_is_a_directory_is_one_line_and_leaves_nothing(run, capsys):
    (run / "packets" / "ann.zip").mkdir(parents=True)
    refused(["packet", "--run-dir", str(run), "--rater", "ann"], capsys, [run], "ann.zip is not a file")
    assert not (run / "packets" / "ann").exists()


def test_a_path_component_past_the_file_systems_limit_is_one_line(tmp_path, capsys, table):
    long = tmp_path / ("x" * 300) / "d"
    refused(["import", "table", str(table), "--run-dir", str(long)], capsys, [tmp_path], "file name too long")
    refused(["report", str(tmp_path / ("y" * 300))], capsys, [tmp_path], "")


def test_a_level_range_in_another_scripts_digits_is_refused(capsys):
    """`vocab levels ١٢` (Arabic-Indic digits) was read as level 12: a range takes ASCII digits only."""
    assert main(["levels", "١٢"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "bad level range '١٢'" in err[0], err


@pytest.mark.parametrize("line", ['{"x": 1}', '{"blind_id": "b1", "checks": [1]}'])
def test_a_damaged_rater_log_is_one_line_not_a_key_error(run, line):
    """A rater_<name>.jsonl line without the answer's fields was a KeyError traceback before any call was made."""
    import asyncio

    from vocab.calibration import CalibrationError
    from vocab.raters.raters import rate_with_model

    log = run / "calibration" / "rater_gemma3.jsonl"
    log.write_text(log.read_text() + line + "\n")
    with pytest.raises(CalibrationError, match="is not a rater's answer"):
        asyncio.run(rate_with_model(run, "gemma3", model=None))  # refused before the model is asked anything


def test_an_import_clears_what_a_killed_import_left(tmp_path, table):
    """A SIGKILLed import left a hidden temporary file of 4 MiB that no later import cleaned."""
    d = tmp_path / "d"
    d.mkdir()
    (d / ".judgments.jsonl.abc123.tmp").write_bytes(b"x" * 4096)  # one left by a version before 2026-12
    (d / ".items.parquet.abc123.tmp").write_bytes(b"x" * 4096)
    assert main(["import", "table", str(table), "--run-dir", str(d)]) == 0
    assert sorted(p.name for p in d.iterdir()) == ["dataset.json", "items.parquet"]


def test_an_item_named_na_is_a_name_not_a_damaged_sample(tmp_path, capsys):
    """A table item "NA" (a country code, say) became a NaN group in key.csv and every reader called the sample
    damaged."""
    t = tmp_path / "t.csv"
    rows = [{"id": i, "system": "s", "judge": "j", "verdict": v, "input": "q", "output": "o"}
            for i, v in (("NA", "PASSED"), ("null", "FAILED"), ("x", "PASSED"), ("y", "FAILED"))]  # fmt: skip
    pd.DataFrame(rows).to_csv(t, index=False)
    assert main(["audit", str(t), "--out", str(tmp_path / "d"), "--raters", "ann"]) == 0
    assert main(["packet", "--run-dir", str(tmp_path / "d"), "--rater", "ann"]) == 0


def test_an_item_named_na_keeps_its_name_in_the_correction(tmp_path, capsys):
    """read_key read a group "NA" as NaN: the item's level was lost in every table that groups by it."""
    from vocab import calibration

    t = tmp_path / "t.csv"
    rows = [{"id": i, "system": "s", "judge": "j", "verdict": v, "input": "q", "output": "o"}
            for i, v in (("NA", "PASSED"), ("null", "FAILED"), ("x", "PASSED"), ("y", "FAILED"))]  # fmt: skip
    pd.DataFrame(rows).to_csv(t, index=False)
    assert main(["audit", str(t), "--out", str(tmp_path / "d")]) == 0
    assert set(calibration.read_key(tmp_path / "d").level) == {"NA", "null", "x", "y"}


@pytest.mark.parametrize("damage", ['{"stages": [', '{"stages": "labels"}', "[1, 2]"])
def test_a_damaged_sample_record_is_one_line(tmp_path, capsys, damage):
    """Every reader of calibration/sample.json asks it whether the sample is labels found in the source; a record
    cut mid-write, or of another shape, was a traceback in report, gate and audit."""
    d = tmp_path / "d"
    assert main(["import", "mlflow", str(ROOT / "data" / "mlflow" / "traces.json"), "--run-dir", str(d)]) == 0
    (d / "calibration" / "sample.json").write_text(damage)
    capsys.readouterr()
    refused(["gate", str(d), "--min-rate", "0"], capsys, [d], "sample.json")
    refused(["report", str(d), "--out", str(tmp_path / "r")], capsys, [d], "sample.json")


def test_an_audit_never_draws_over_a_sample_that_lost_its_key(run, capsys):
    """With key.csv gone from a rated sample, `vocab audit` drew a new sample over the sheet (seed 0, 10 a pile)
    while sample.json still described the old one; the rater's ratings were orphaned and `vocab packet` then made a
    packet of the mix. It is refused like every other reader of an incomplete sample; nothing is written."""
    (run / "calibration" / "key.csv").unlink()
    refused(["audit", str(run)], capsys, [run], "an incomplete sample")
    refused(["sample", "--run-dir", str(run)], capsys, [run], "an incomplete sample")


def test_a_scheduler_address_that_answers_but_is_not_dask_is_one_line(tmp_path, capsys):
    """An HTTP server at the --scheduler address: distributed read its reply as a frame of 3 EiB and numpy's
    MemoryError came out as a traceback (exit 1)."""
    import socket
    import threading

    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(8)
    stop = threading.Event()

    def answer():
        srv.settimeout(0.2)
        while not stop.is_set():
            try:
                c, _ = srv.accept()
            except TimeoutError:
                continue
            c.sendall(b"HTTP/1.0 400 Bad Request\r\n\r\n")
            c.close()

    t = threading.Thread(target=answer, daemon=True)
    t.start()
    try:
        address = f"tcp://127.0.0.1:{srv.getsockname()[1]}"
        argv = [*GRID[:-2], "--out", str(tmp_path / "g.csv"), "--scheduler", address]  # no --jobs with a cluster
        refused(argv, capsys, [tmp_path], "cannot reach the Dask scheduler")
    finally:
        stop.set()
        t.join()
        srv.close()


@pytest.mark.parametrize("suffix", [".csv", ".jsonl"])
def test_a_wide_table_imports_its_extra_columns_as_hidden(tmp_path, suffix):
    """14,000 rows with 300 extra columns (past the 4,000,000 cells a table was once refused at, since a table was
    held in memory whole; 199,990 such rows had imported at 3.6 GiB): the store holds them in bounded memory
    (test_imports.py measures a table larger than the memory bound), every extra column kept hidden."""
    extra = [f"c{j}" for j in range(300)]
    rows = [{"id": f"i{i}", "system": "s", "judge": "j", "verdict": "PASSED" if i % 2 else "FAILED", "input": "q",
             "output": "o", **dict.fromkeys(extra, "1")} for i in range(14_000)]  # fmt: skip
    t = write_table(tmp_path / f"t{suffix}", rows)
    assert main(["import", "table", str(t), "--run-dir", str(tmp_path / "d")]) == 0
    stored = stored_items(tmp_path / "d")
    assert len(stored) == 14_000 and sum(r["verdict"] == "PASSED" for r in stored) == 7_000
    assert stored[-1]["hidden"] == {c: ("1" if suffix == ".csv" else "1") for c in extra}


@pytest.mark.parametrize("fmt", ["form", "label-studio"])
@pytest.mark.parametrize("where", ["packet", "packets"])
def test_a_file_where_the_packet_folder_goes_is_named(run, capsys, fmt, where):
    """packets/NAME (or packets/ itself) a file: a bare `[Errno 17] File exists` that named nothing."""
    folder = run / "packets" / ("ann" if fmt == "form" else "ann-label-studio")
    target = folder if where == "packet" else folder.parent
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text("not a folder")
    refused(["packet", "--run-dir", str(run), "--rater", "ann", "--format", fmt], capsys, [run], "is not a folder")
