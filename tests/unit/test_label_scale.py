"""People's labels imported in linear time (issue 75, item 2): the labelled items found by a join in the store, blind
ids checked against a set, the key and sheet built a column at a time. What they write is what vocab wrote before
(1941a28) for the same table and seed, byte for byte: the expected SHA-256s are of the files 1941a28's import wrote
for these tables. Its time and memory at 1,000,000 labelled rows are a benchmark (benchmarks/bench_label_import.py),
not a timed test."""

from __future__ import annotations

import csv
import hashlib
import random
from pathlib import Path

import pytest

from vocab.cli import main
from vocab.sampling import sample as sm

# the files 1941a28's `vocab import table` wrote for the tables below (sha256)
BEFORE = {
    "every row": {
        "blind_sheet.csv": "0f80cb7b0c4d54cb2a47a79ad744d977c92435ca11d662ba8231407a1b5a7c4f",
        "blind_sheet.jsonl": "2395a4533631e6150b0d4a099e4c8e65f48b74cea5f44cc5c191418a15540b1e",
        "key.csv": "a59237f4ad82fe76f4c287b08a1bf31499d7c077dbe90cc40102465cf58c944d",
        "ratings_ann.csv": "e4ed5f0d5383610eb0118b56ba5eb2d1de3778ad73c41e41f7c98ab61abe0353",
        "sample.json": "5b5c1b1ed2ba15ea7aef5fe5a9d805755aa0a655724d48d1eb6da5d4b913909b",
    },
    "groups": {
        "blind_sheet.csv": "fbe7e2cc191193ec605f20e583779be129240b8e7bee8b28d9b130bae6f9e550",
        "blind_sheet.jsonl": "0b55ac50277aff6221f22278f6b3c475487bab36afbb968d8f790906e22b46ce",
        "key.csv": "b4f7aee2458733f94def86637b21b9660e1a3e97d080cb879124c0c99884bc2d",
        "ratings_ann.csv": "1db43b5451bbf9dc61423e2feb52c81feaab2f22ffb81db436fc2fa6a021f0b0",
        "ratings_bob.csv": "983157d430825bf7c7c9884bed40bdffc76050474bf69df8d1567672392c4892",
        "sample.json": "76a35e033637a6c1c091710112730b17c7ccabd143a2811c37b145b6c61777ec",
    },
}


def _every_row(path: Path) -> None:
    """3,000 rows, each labelled by ann (the campaign's shape)."""
    with path.open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["id", "system", "judge", "verdict", "input", "output", "label:ann"])
        vs = ("PASSED", "FAILED", "PASSED")
        for i in range(3000):
            w.writerow([f"r{i}", f"sys{i % 2}", "judgeX", vs[i % 3], f"question {i}", f"answer {i}", vs[(i + 1) % 3]])


def _groups(path: Path) -> None:
    """1,200 rows in groups of six, three epochs, three systems and two judges; UNSCORED rows; answers that quote
    a verdict or a rubric check; ann and bob each labelling some rows, several FAILED rows of a group among them."""
    rnd = random.Random(7)
    with path.open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["id", "group", "epoch", "system", "judge", "verdict", "input", "output", "label:ann", "label:bob"])
        for i in range(1200):
            v = rnd.choice(["PASSED", "FAILED", "FAILED", ""])
            output = rnd.choice(["ok", "I say PASS", "check 3 (x", "plain"])
            ann, bob = rnd.choice(["", "PASSED", "FAILED"]), rnd.choice(["", "", "PASSED", "FAILED"])
            w.writerow([f"x{i % 400}", f"g{i // 6}", 1 + i % 3, f"s{i % 3}", "j" if i % 5 else "k", v, f"q {i} é",
                        output, ann, bob])  # fmt: skip


@pytest.mark.parametrize("table", ["every row", "groups"])
def test_a_labelled_import_writes_the_sample_it_wrote_before(tmp_path, capsys, table):
    path = tmp_path / "t.csv"
    {"every row": _every_row, "groups": _groups}[table](path)
    assert main(["import", "table", str(path), "--run-dir", str(tmp_path / "d")]) == 0
    capsys.readouterr()
    cal = tmp_path / "d" / "calibration"
    got = {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(cal.iterdir()) if p.is_file()}
    assert got == BEFORE[table]


def test_blind_ids_that_collide_take_the_next_hash_in_the_rows_order():
    """Two rows whose first hashes share six hex digits: the first keeps its own, the second takes the next hash of
    its item (n = 1), by hashlib here; a used id is passed over the same way."""
    head = "ds\0c\0g\0{}\0i{}\0"

    def first(k: int, n: int = 0) -> str:
        return "b" + hashlib.sha256(f"{head.format(1, k)}{n}".encode()).hexdigest()[:6]

    seen: dict[str, int] = {}
    k = 0
    while first(k) not in seen:  # two items whose first blind ids collide (the birthday bound: a few thousand)
        seen[first(k)] = k
        k += 1
    a, b = seen[first(k)], k
    ids = sm.place_ids(["c", "c"], ["g", "g"], [1, 1], [f"i{a}", f"i{b}"], "ds")
    assert ids == [first(a), first(b, 1)]
    assert sm.place_ids(["c"], ["g"], [1], [f"i{a}"], "ds", {first(a)}) == [first(a, 1)]
