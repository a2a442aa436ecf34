"""The human rater's packet and the form's session, without a browser (tests/browser/ drives the same form in
JupyterLab): nothing in a packet leaks, each rater has an order of their own, every save carries its audit
fields, edits keep their history, two sessions of one rater are never silently merged, part of a sheet can be
handed in, and one rule checks rater names everywhere."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pandas as pd
import pytest

from tests.unit.test_calibration import synthetic_attempts
from vocab.calibration import (
    CalibrationError,
    RatingSession,
    draw_sample,
    import_ratings,
    make_packet,
    rater_order,
    read_key,
    read_ratings,
    read_sheet,
    write_sample,
)
from vocab.cli import main
from vocab.raters.form import strip_live_form

CELLS = ("smollm2__smollm2", "smollm2__gemma3", "gemma3__smollm2", "gemma3__gemma3")
ALL_PASS = {str(c): "PASSED" for c in range(2, 13)}


class Clock:
    def __init__(self):
        self.t = 100.0

    def __call__(self):
        return self.t


@pytest.fixture
def run(tmp_path):
    """A run's calibration folder as the chain leaves it: key, sheet, an LLM rater's files, the script's."""
    att = synthetic_attempts(cells=CELLS, levels=12)
    att["settings"] = [{"require_seed_word": bool(i % 2), "max_sentence_words": 12} for i in range(len(att))]
    write_sample(draw_sample(att, 4, 0), tmp_path)
    cal = tmp_path / "calibration"
    ids = list(read_sheet(tmp_path).blind_id)
    with (cal / "rater_gemma3.jsonl").open("w") as f:
        for b in ids:
            f.write(json.dumps({"blind_id": b, "rater": "gemma3", "model": "gemma3", "checks": {}}) + "\n")
    pd.DataFrame({"blind_id": ids, **{f"c{i}": "FAILED" for i in range(1, 13)}}).to_csv(
        cal / "ratings_gemma3.csv", index=False
    )
    return tmp_path


def test_a_packet_holds_nothing_that_leaks(run):
    import zipfile

    from vocab.raters.packet import HANDOUT

    packet = make_packet(run, "ann")
    wheel = json.loads((packet / "packet.json").read_text())["wheel"]["name"]
    assert sorted(p.name for p in packet.iterdir()) == sorted([*HANDOUT, wheel])
    text = "".join((packet / n).read_text() for n in HANDOUT if n != "rate.html")
    # the page: what it holds (its data) and what it says (its text), not the form's code (CSS's font-weight...)
    import re

    page = (packet / "rate.html").read_text()
    data = json.loads(re.search(r"const PACKET = (.*?);\n", page).group(1))
    text += json.dumps(data, ensure_ascii=False) + re.sub(r"<(script|style)>.*?</\1>", "", page, flags=re.S)
    assert len(data["rows"]) == len(read_key(run)) and "rater" in data and data["rater"] == "ann"
    # vocab's wheel holds the package and its metadata, nothing of any run: no data/, no key, no sheet
    with zipfile.ZipFile(packet / wheel) as z:
        tops = {n.split("/", 1)[0] for n in z.namelist()}
        assert tops == {"vocab", "vocab-0.1.0.dist-info"}, tops
        assert not [n for n in z.namelist() if "runs/" in n or n.endswith((".csv", ".jsonl"))]
    key = read_key(run)
    for leak in ("smollm2", "gemma3", "__", "critic", "key.csv", "secret-reason", "attempt", "pile", "weight"):
        assert leak not in text, leak
    rows = [json.loads(x) for x in (packet / "sheet.jsonl").read_text().splitlines()]
    assert set(rows[0]) == {"blind_id", "seed_word", "words", "settings", "sentence", "answer_key"}
    ids = [r["blind_id"] for r in rows]
    assert sorted(ids) == sorted(key.blind_id)
    # neither the key's nor the run's sheet's order: the rater's own
    assert ids != list(key.blind_id) and ids != list(read_sheet(run).blind_id)
    assert ids == rater_order(list(key.blind_id), "ann")
    nb = json.loads((packet / "rate.ipynb").read_text())
    assert all(not c.get("outputs") for c in nb["cells"])
    intro = "".join(nb["cells"][0]["source"])  # written for the rater, not for who makes packets
    assert intro.startswith("# Your blind rating form") and "vocab packet" not in intro and "?" in intro
    # rubric.txt asks each question once, and words check 1 as the form shows it
    rubric = (packet / "rubric.txt").read_text()
    from vocab.rubric import CHECKS

    assert all(rubric.count(c.question) == 1 for c in CHECKS)
    assert "passes automatically" not in rubric and "n/a" in rubric
    assert 'packet = "."' in "".join(nb["cells"][1]["source"])


def test_the_hand_off_zip_holds_the_packet_and_nothing_of_the_run(run, tmp_path):
    import zipfile

    from vocab.raters.packet import HANDOUT, unpack_packet_zip, write_packet_zip

    packet = make_packet(run, "ann")
    zipped = packet.with_suffix(".zip")
    wheel = json.loads((packet / "packet.json").read_text())["wheel"]["name"]
    with zipfile.ZipFile(zipped) as z:
        assert sorted(z.namelist()) == sorted(f"ann/{n}" for n in (*HANDOUT, wheel))
        assert all(z.read(f"ann/{n}") == (packet / n).read_bytes() for n in HANDOUT)
    first = zipped.read_bytes()
    write_packet_zip(packet)
    assert zipped.read_bytes() == first  # the same packet, the same bytes
    # the rater's machine: the zip alone, unpacked beside it; the form rates there
    away = tmp_path / "elsewhere"
    away.mkdir()
    (away / "ann.zip").write_bytes(first)
    opened = unpack_packet_zip(away / "ann.zip")
    assert opened == away / "ann" and sorted(p.name for p in opened.iterdir()) == sorted([*HANDOUT, wheel])
    s = RatingSession(opened)
    s.save({**ALL_PASS, "1": "PASSED"})
    # opening the zip again keeps the work done in the folder
    assert unpack_packet_zip(away / "ann.zip") == opened
    assert len((opened / "ratings.jsonl").read_text().splitlines()) == 1


def test_two_raters_get_different_orders_recorded_in_their_packets(run):
    a, b = make_packet(run, "ann"), make_packet(run, "bob")
    order = {p: [json.loads(x)["blind_id"] for x in (p / "sheet.jsonl").read_text().splitlines()] for p in (a, b)}
    assert order[a] != order[b] and sorted(order[a]) == sorted(order[b])
    meta = json.loads((a / "packet.json").read_text())
    assert meta["rater"] == "ann" and meta["order_seed"] == 0 and "sha256('0:ann')" in meta["order"]
    assert make_packet(run, "ann") == a  # asked again: the same packet, untouched
    assert [json.loads(x)["blind_id"] for x in (a / "sheet.jsonl").read_text().splitlines()] == order[a]


def test_every_save_carries_its_audit_fields_and_an_edit_keeps_the_history(run):
    clock = Clock()
    s = RatingSession(make_packet(run, "ann"), clock=clock)
    assert s.progress() == f"row 1 of {s.n}, 0 done"
    first = s.current()
    need1 = bool(first["settings"]["require_seed_word"])
    clock.t += 42.5
    rec = s.save({**ALL_PASS, "1": "FAILED"}, note="odd")
    assert rec["seconds"] == 42.5 and rec["rater"] == "ann" and rec["session"] == s.session
    assert (
        rec["rubric_version"] == s.rubric.version and len(rec["rubric_hash"]) == 64 and rec["time"].endswith("+00:00")
    )
    assert rec["checks"]["1"] == ("FAILED" if need1 else "")  # check 1 is n/a where the seed word is not required
    assert rec["edit"] is False and s.progress() == f"row 2 of {s.n}, 1 done"
    s.back()
    assert s.current()["blind_id"] == first["blind_id"]
    s.save({**ALL_PASS, "1": "PASSED", "9": "FAILED"})  # an edit
    history = [json.loads(x) for x in (s.packet / "ratings.jsonl").read_text().splitlines()]
    assert [h["edit"] for h in history] == [False, True] and history[0]["checks"]["9"] == "PASSED"
    table = pd.read_csv(s.packet / "ratings.csv", dtype=str, keep_default_na=False)
    assert list(table.blind_id) == [first["blind_id"]] and table.c9.iloc[0] == "FAILED"  # the latest counts


def test_check_one_is_required_exactly_where_the_level_requires_the_seed_word(run):
    s = RatingSession(make_packet(run, "ann"))
    seen = set()
    while not s.finished:
        need = bool(s.current()["settings"]["require_seed_word"])
        seen.add(need)
        assert s.required(s.current())["1"] is need
        if need:
            with pytest.raises(CalibrationError, match="grade 1 first"):
                s.save(ALL_PASS)
            s.save({**ALL_PASS, "1": "PASSED"})
        else:
            s.save(ALL_PASS)
    assert seen == {True, False}
    with pytest.raises(CalibrationError, match="grade 5"):
        s.back()
        s.save({k: v for k, v in ALL_PASS.items() if k != "5"} | {"1": "PASSED"})


def test_skip_returns_later_and_the_end_state_is_clear(run):
    s = RatingSession(make_packet(run, "ann"))
    skipped = s.current()["blind_id"]
    s.skip()
    assert s.current()["blind_id"] != skipped
    while not s.finished:
        s.save({**ALL_PASS, "1": "PASSED"})
    history = [json.loads(x)["blind_id"] for x in (s.packet / "ratings.jsonl").read_text().splitlines()]
    assert history[-1] == skipped and len(set(history)) == s.n  # the skipped row came back last
    assert s.progress().startswith(f"all {s.n} rows rated") and s.view()["finished"]
    with pytest.raises(CalibrationError, match="every row is rated"):
        s.save(ALL_PASS)


def test_two_sessions_of_one_rater_are_refused_or_taken_over_explicitly(run):
    packet = make_packet(run, "ann")
    first = RatingSession(packet)
    lock = json.loads((packet / "session.json").read_text())
    (packet / "session.json").write_text(json.dumps({**lock, "pid": 1}))  # as if it ran in another, live kernel
    with pytest.raises(CalibrationError, match="already has a session open"):
        RatingSession(packet)
    second = RatingSession(packet, takeover=True)
    with pytest.raises(CalibrationError, match="took over this packet"):
        first.save({**ALL_PASS, "1": "PASSED"})
    second.save({**ALL_PASS, "1": "PASSED"})
    assert not (packet / "ratings.jsonl").read_text().count(first.session)
    # the old form knows it at once (the page asks every 2 s), and its view says so without internal ids
    assert not first.alive() and first.view()["dead"] and second.alive() and not second.view()["dead"]
    with pytest.raises(CalibrationError) as e:
        first.export()
    assert first.session not in str(e.value) and second.session not in str(e.value) and "pid" not in str(e.value)


def test_the_view_says_whether_a_row_is_rated_and_when(run):
    s = RatingSession(make_packet(run, "ann"))
    assert s.view()["rated"] is False and s.view()["saved_at"] == ""
    rec = s.save({**ALL_PASS, "1": "PASSED"})
    s.back()
    v = s.view("refused", "error")
    assert v["rated"] is True and v["saved_at"] == rec["time"] and v["message_kind"] == "error"


def test_a_stale_tab_never_writes_an_older_ratings_csv_over_a_newer_one(run):
    """The failure found by hand: tab 2 takes over and saves; pressing e (export) in the stale tab 1 rewrote
    ratings.csv with tab 1's older rows. Now every write checks ownership, and ratings.csv comes from the
    append-only ratings.jsonl, never from one tab's memory."""
    packet = make_packet(run, "ann")
    first = RatingSession(packet)
    for _ in range(2):
        first.save({**ALL_PASS, "1": "PASSED"})
    lock = json.loads((packet / "session.json").read_text())
    (packet / "session.json").write_text(json.dumps({**lock, "pid": 1}))  # as if it ran in another, live kernel
    second = RatingSession(packet, takeover=True)
    second.save({**ALL_PASS, "1": "FAILED"})
    newest = (packet / "ratings.csv").read_bytes()
    assert len(pd.read_csv(packet / "ratings.csv")) == 3  # the second tab's export holds the first tab's rows too
    for stale_action in (first.export, first.skip, lambda: first.save({**ALL_PASS, "1": "PASSED"})):
        with pytest.raises(CalibrationError, match="took over this packet"):
            stale_action()
        assert (packet / "ratings.csv").read_bytes() == newest


def test_a_takeover_is_never_saved_into_the_packets_notebook():
    model = {"type": "notebook", "content": {"cells": [
        {"cell_type": "code", "metadata": {"tags": ["parameters"]}, "outputs": [], "execution_count": 1,
         "source": 'packet = "."  # this folder\ntakeover = True  # True: take over an open session'}]}}  # fmt: skip
    strip_live_form(model, path="rate.ipynb")
    src = model["content"]["cells"][0]["source"]
    assert "takeover = False  # True: take over" in src and 'packet = "."' in src


def test_a_stale_session_of_a_dead_process_is_taken_over(run):
    packet = make_packet(run, "ann")
    RatingSession(packet)
    lock = json.loads((packet / "session.json").read_text())
    (packet / "session.json").write_text(json.dumps({**lock, "pid": 2**22 + 7}))  # no such process
    RatingSession(packet)  # no error: the old kernel is gone


def test_part_of_a_sheet_can_be_handed_in_and_is_counted(run, capsys):
    s = RatingSession(make_packet(run, "ann"))
    for _ in range(5):
        s.save({**ALL_PASS, "1": "PASSED"})
    csv = s.packet / "ratings.csv"
    assert main(["ratings", "import", str(csv), "--run-dir", str(run), "--rater", "ann"]) == 2
    err = capsys.readouterr().err
    assert "ids of the sheet not rated" in err and "with --partial" in err  # the refusal says how to hand in part
    # the form's file names its rater and its sample: another name is refused, nothing written
    assert main(["ratings", "import", str(csv), "--run-dir", str(run), "--rater", "bob", "--partial"]) == 2
    assert "was rated by ann, not bob" in capsys.readouterr().err
    assert not (run / "calibration" / "ratings_bob.csv").exists()
    assert main(["ratings", "import", str(csv), "--run-dir", str(run), "--rater", "ann", "--partial"]) == 0
    ratings = read_ratings(run, "ann")
    assert len(ratings) == 5
    from vocab.calibration import coverage_text

    n = len(read_sheet(run))
    assert coverage_text({"ann": ratings, "gemma3": read_ratings(run, "gemma3")}, n) == (
        f"ann 5/{n} (partial), gemma3 {n}/{n}"
    )


@pytest.mark.parametrize(
    ("name", "words"),
    [
        ("Jane Doe", "use a letter"),
        ("gemma3", "belongs to a machine rater"),
        ("script", "machine rater"),
        ("", "use a letter"),
        ("x" * 41, "use a letter"),
    ],  # fmt: skip
)
def test_rater_names_follow_one_rule_in_the_packet_and_the_import(run, tmp_path, capsys, name, words):
    with pytest.raises(CalibrationError, match=words):
        make_packet(run, name)
    src = tmp_path / "r.csv"
    ids = list(read_sheet(run).blind_id)
    pd.DataFrame({"blind_id": ids, "c1": "", **{f"c{i}": "PASSED" for i in range(2, 13)}}).to_csv(src, index=False)
    if name != "script":  # the script's own file may be imported under its name
        with pytest.raises(CalibrationError, match=words):
            import_ratings(src, run, name)
    assert not (run / "packets" / name).exists()


def test_the_pre_save_hook_drops_only_the_live_form(tmp_path):
    model = {
        "type": "notebook",
        "content": {
            "cells": [
                {"cell_type": "code", "metadata": {"tags": ["rating-form"]}, "outputs": [{"x": 1}],
                 "execution_count": 3},
                {"cell_type": "code", "metadata": {"tags": []}, "outputs": [{"y": 2}], "execution_count": 4},
            ]
        },
    }  # fmt: skip
    strip_live_form(model, path="rate.ipynb")
    cells = model["content"]["cells"]
    assert cells[0]["outputs"] == [] and cells[0]["execution_count"] is None and cells[1]["outputs"] == [{"y": 2}]
    strip_live_form({"type": "file", "content": "text"})  # other files pass untouched


def test_the_form_notebook_runs_on_a_packet(run, tmp_path):
    """rate.ipynb as a packet holds it, run by papermill: the session opens and the widget is built."""
    from vocab.nb import execute

    packet = make_packet(run, "ann")
    out = tmp_path / "rate.ipynb"
    execute(packet / "rate.ipynb", {"packet": str(packet)}, out)
    text = out.read_text()
    assert "rater ann:" in text and "application/vnd.jupyter.widget-view+json" in text
    assert '"output_type": "error"' not in text
    assert not (Path(packet) / "ratings.jsonl").exists()  # opening the form writes no rating


def reference_packet(tmp_path: Path) -> Path:
    """The reference run's packet for annotator-1, made by today's code (none is committed) in a copy of the run's
    calibration folder (the checkout's data/ is never written); returns its zip."""
    import shutil

    ref = Path(__file__).resolve().parents[2] / "data" / "runs" / "reference"
    copy = tmp_path / "reference"
    shutil.copytree(ref / "calibration", copy / "calibration")
    shutil.copy(ref / "manifest.json", copy / "manifest.json")
    return make_packet(copy, "annotator-1").with_suffix(".zip")


def test_a_packet_of_this_machine_opens_only_when_told_and_runs_the_form_from_its_zip(tmp_path, capsys):
    """The reference run's packet, made today, inside its run or handed out as its zip: this machine holds the run
    (the checkout's data/runs/reference, by the sample's hash) and cut the packet, so `vocab form` refuses without
    --same-machine, before unpacking anything, and says what it exposes. With it, the zip unpacks and its notebook
    form runs."""
    from vocab.nb import execute
    from vocab.raters.opening import open_packet

    zipped = reference_packet(tmp_path)
    away = tmp_path / "zip"
    away.mkdir()
    (away / "annotator-1.zip").write_bytes(zipped.read_bytes())
    for packet in (zipped.with_suffix(""), away / "annotator-1.zip"):
        assert main(["form", str(packet), "--no-browser"]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and "key.csv" in err and "--same-machine" in err
        assert "data/runs/reference" in err or str(tmp_path / "reference") in err
    assert sorted(p.name for p in away.iterdir()) == ["annotator-1.zip"]  # refused before unpacking
    opened, notes = open_packet(away / "annotator-1.zip", None, same_machine=True)
    assert opened == away / "annotator-1" and any("--same-machine" in n and "key.csv" in n for n in notes)
    assert (opened / "rate.html").is_file()
    out = tmp_path / "rate-run.ipynb"
    execute(opened / "rate.ipynb", {"packet": str(opened)}, out)
    text = out.read_text()
    assert "rater annotator-1:" in text and "application/vnd.jupyter.widget-view+json" in text
    assert '"output_type": "error"' not in text


def test_the_machine_a_packet_was_cut_on_is_known_without_its_run(tmp_path, monkeypatch):
    """A wheel install has no checkout to look in: packet.json's salted hash of the machine says where the packet
    was cut. A packet cut here is refused away from its run; one cut on another machine opens (and packet.json
    holds no readable trace of either machine)."""
    from vocab import machine
    from vocab.raters.opening import open_packet

    away = tmp_path / "away"
    away.mkdir()
    for who, ident in (("bob", None), ("eve", "machine-id:another")):
        run = tmp_path / f"run-{who}"
        write_sample(draw_sample(synthetic_attempts(cells=CELLS, levels=6), 2, 0), run)
        with monkeypatch.context() as m:
            if ident:
                m.setattr(machine, "identity", lambda ident=ident: ident)
            zipped = make_packet(run, who).with_suffix(".zip")
        meta = json.loads((zipped.with_suffix("") / "packet.json").read_text())
        assert machine.identity().split(":", 1)[1] not in json.dumps(meta) and len(meta["made_on"]["salt"]) == 32
        (away / zipped.name).write_bytes(zipped.read_bytes())
    with pytest.raises(CalibrationError, match="the run the packet was cut from.*--same-machine"):
        open_packet(away / "bob.zip", None)
    assert not (away / "bob").exists()
    assert open_packet(away / "eve.zip", None) == (away / "eve", [f"{away / 'eve'}: the packet, unpacked from eve.zip; "
                                                                  "your ratings are kept here"])  # fmt: skip
    with pytest.raises(CalibrationError, match="--same-machine"):  # inside its run, wherever it was cut
        open_packet(tmp_path / "run-eve" / "packets" / "eve", None)


def test_a_second_tab_of_one_kernel_waits_until_it_takes_the_form_over(run):
    """The kernel side of the one-tab rule (the browser test clicks through it): the first tab holds the form; a
    form run again in a second tab is refused and the packet stays with the first tab's session, whatever it saves
    meanwhile; the second tab takes it over only when asked, then shows what the first saved; within one tab id
    (a duplicated tab shares it) the newest form wins and the older one is closed."""
    from vocab.raters.form import TABS, _tab_holding

    packet = make_packet(run, "ann")
    key = str(packet.resolve())
    TABS.pop(key, None)
    first = RatingSession(packet)
    assert _tab_holding(key, first, "t1", "hello") is None
    second = RatingSession(packet)  # the cells run again in tab 2: its session claims the packet at once ...
    assert not first.alive()
    assert _tab_holding(key, second, "t2", "hello") == "t1"  # ... is refused, and the packet goes back
    assert first.alive() and not second.alive()
    first.save({**ALL_PASS, "1": "PASSED"})
    assert _tab_holding(key, second, "t2", "ping") == "t1"
    assert _tab_holding(key, second, "t2", "take-tab") is None  # explicitly: now tab 2 has it
    assert second.alive() and not first.alive() and second.done == 1  # and shows what tab 1 saved
    assert _tab_holding(key, first, "t1", "ping") == "t2"
    third = RatingSession(packet)  # tab 2 duplicated: the same tab id, a newer form
    assert _tab_holding(key, third, "t2", "hello") is None and third.alive()
    assert _tab_holding(key, second, "t2", "ping") is None and not second.alive()  # the older one: closed
    with pytest.raises(CalibrationError, match="took over"):
        second.save({**ALL_PASS, "1": "PASSED"})
    TABS.pop(key, None)


def test_a_packet_zip_whose_wheel_is_not_the_named_one_is_refused(run, tmp_path):
    import zipfile

    packet = make_packet(run, "ann")
    meta = json.loads((packet / "packet.json").read_text())
    bad = tmp_path / "bad" / "ann.zip"
    bad.parent.mkdir()
    with zipfile.ZipFile(packet.with_suffix(".zip")) as z, zipfile.ZipFile(bad, "w") as out:
        for n in z.namelist():
            out.writestr(n, z.read(n) + (b"x" if n.endswith(".whl") else b""))
    assert main(["form", str(bad), "--no-browser"]) == 2
    assert not (bad.parent / "ann").exists()
    assert meta["wheel"]["name"].endswith(".whl") and len(meta["wheel"]["sha256"]) == 64
    here = Path(__file__).parent
    head = subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True, cwd=here).stdout.strip()
    assert len(head) == 40 and meta["wheel"]["commit"].split("+")[0] == head  # the checkout it was built from
