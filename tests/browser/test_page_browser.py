"""rate.html, the packet as one page, in a real browser (Debian's headless Chromium through selenium, 1366x768):
opened from disk in a folder outside any checkout, where the packet's zip was unpacked as a rater unpacks it. A
rater rates rows by keys alone, reloads and resumes, a second tab is refused until it takes over (and the first
then says so), ratings.csv is downloaded, and `vocab ratings import` takes it under the rater's name with its
sample checked; the page asks the network for nothing. ``VOCAB_PAGE_SCREENSHOT=path.png`` keeps its picture."""

from __future__ import annotations

import json
import os
import time
import zipfile
from pathlib import Path

import pandas as pd
import pytest

from tests.browser.test_form_browser import CHROMEDRIVER, CHROMIUM, _keys, _wait
from tests.unit.test_calibration import synthetic_attempts
from vocab.calibration import draw_sample, make_packet, read_ratings, write_sample
from vocab.cli import main

pytestmark = pytest.mark.browser


@pytest.fixture
def page(tmp_path):
    """A run with a blind sample and rater ann's packet; its zip unpacked on "the rater's machine" (a folder of its
    own, no vocab there: the page needs none)."""
    run = tmp_path / "run"
    att = synthetic_attempts(cells=("w1__c1", "w1__c2"), levels=10)
    att["settings"] = [{"require_seed_word": bool(i % 2), "max_sentence_words": 12} for i in range(len(att))]
    write_sample(draw_sample(att, 3, 0), run)
    zipped = make_packet(run, "ann").with_suffix(".zip")
    machine = tmp_path / "rater-machine"
    with zipfile.ZipFile(zipped) as z:
        z.extractall(machine)
    return run, machine / "ann" / "rate.html"


@pytest.fixture
def chromium(tmp_path):
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    assert Path(CHROMIUM).exists() and Path(CHROMEDRIVER).exists(), "make setup installs chromium and chromium-driver"
    downloads = tmp_path / "Downloads"
    downloads.mkdir()
    opts = webdriver.ChromeOptions()
    opts.binary_location = CHROMIUM
    for arg in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu",
                "--window-size=1366,768", f"--user-data-dir={tmp_path / 'chromium'}"):  # fmt: skip
        opts.add_argument(arg)
    opts.add_experimental_option("prefs", {"download.default_directory": str(downloads),
                                           "download.prompt_for_download": False})  # fmt: skip
    opts.set_capability("goog:loggingPrefs", {"performance": "ALL"})
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=opts)
    yield driver, downloads
    driver.quit()


def _progress(driver) -> str:
    from selenium.webdriver.common.by import By

    return driver.find_element(By.CSS_SELECTOR, ".vocab-form .vf-progress").text


def _graded(driver) -> list[str]:
    from selenium.webdriver.common.by import By

    return [e.get_attribute("data-id") for e in driver.find_elements(By.CSS_SELECTOR, ".vocab-form .vf-crit")
            if "vf-na" not in e.get_attribute("class")]  # fmt: skip


def _overlay(driver) -> str:
    from selenium.webdriver.common.by import By

    found = driver.find_elements(By.CSS_SELECTOR, ".vocab-form .vf-overlay")
    return found[0].text if found else ""


def test_a_rater_rates_in_the_page_resumes_takes_over_and_hands_in(page, chromium, tmp_path):
    from selenium.webdriver.common.keys import Keys

    run, html = page
    driver, downloads = chromium
    rows = [json.loads(line) for line in (html.parent / "sheet.jsonl").open()]
    n = len(rows)
    driver.get(html.as_uri())
    _wait(driver, lambda d: _progress(d) == f"row 1 of {n}, 0 done", 30, "row 1")
    assert driver.execute_script("return !!document.activeElement.closest('.vocab-form')")  # the keys go to the form
    opened = driver.execute_script("return performance.now()")  # ms from navigation to here (the first row shown)
    said: dict[str, dict[str, str]] = {}

    # row 1: every graded check PASSED by `a`, Enter saves; check 1 is n/a on a row whose level does not need it
    need1 = bool(rows[0]["settings"]["require_seed_word"])
    assert ("1" in _graded(driver)) == need1
    _keys(driver, "a" + Keys.ENTER)
    _wait(driver, lambda d: _progress(d) == f"row 2 of {n}, 1 done", 30, "row 2")
    said[rows[0]["blind_id"]] = {g: "PASSED" for g in _graded_of(rows[0])}
    # row 2: the first graded check FAILED, the rest PASSED
    _keys(driver, "f" + "a" + Keys.ENTER)
    _wait(driver, lambda d: _progress(d) == f"row 3 of {n}, 2 done", 30, "row 3")
    g2 = _graded_of(rows[1])
    said[rows[1]["blind_id"]] = {g: "FAILED" if g == g2[0] else "PASSED" for g in g2}
    # row 3 skipped; a note typed on row 4 keeps its letters (they are not the form's keys)
    _keys(driver, "s")
    _wait(driver, lambda d: _progress(d) == f"row 4 of {n}, 2 done", 30, "row 4")
    _keys(driver, "n" + "a fine one" + Keys.ENTER)
    assert "grade" in driver.find_element("css selector", ".vocab-form .vf-head").text  # refused: nothing graded
    # a key that is none of the form's says which keys work, and the next right one clears it
    _keys(driver, Keys.ESCAPE + "x")
    head = driver.find_element("css selector", ".vocab-form .vf-head").text
    assert "x is not one of the form's keys" in head and "a / r every check not graded" in head, head
    # a grade not saved: leaving the page asks first (the listener cancels the unload); saved, it does not
    _keys(driver, "p")
    assert "not one of the form's keys" not in driver.find_element("css selector", ".vocab-form .vf-head").text
    unload = ("const e = new Event('beforeunload', {cancelable: true}); window.dispatchEvent(e); "
              "return e.defaultPrevented;")  # fmt: skip
    assert driver.execute_script(unload) is True
    # then `r` fails the rest (the first graded check PASSED above)
    _keys(driver, "r" + Keys.ENTER)
    _wait(driver, lambda d: _progress(d) == f"row 5 of {n}, 3 done", 30, "row 5")
    g4 = _graded_of(rows[3])
    said[rows[3]["blind_id"]] = {g: "PASSED" if g == g4[0] else "FAILED" for g in g4}
    assert driver.execute_script(unload) is False  # row 5, nothing graded on it
    driver.save_screenshot(str(tmp_path / "1-rating.png"))

    # a reload resumes at the first unrated row: row 3, the one skipped
    before = driver.execute_script("return Date.now()")
    driver.refresh()
    _wait(driver, lambda d: _progress(d) == f"row 3 of {n}, 3 done", 30, "resumed at row 3")
    # the reloaded page shows its row at once and takes the form once no other tab has answered (400 ms): a second
    # tab opened before then would race it, which no rater's hands do
    owner = "return (JSON.parse(localStorage.getItem(`vocab-rate:${PACKET.packet_id}:owner`)) || {}).at || 0"
    _wait(driver, lambda d: d.execute_script(owner) >= before, 30, "the reloaded page holds the form")

    # a second tab: refused, its one button where the keyboard is; Enter takes over, and the first tab says so
    first = driver.current_window_handle
    driver.switch_to.new_window("tab")
    driver.get(html.as_uri())
    _wait(driver, lambda d: "open in another tab" in _overlay(d), 30, "the second tab refused")
    _keys(driver, "a" + Keys.ENTER)  # keys of a refused tab do nothing: not even Enter takes the form over
    _keys(driver, Keys.TAB)  # the first thing Tab reaches is the one button
    assert driver.execute_script("return document.activeElement.className") == "vf-take"
    _keys(driver, Keys.ENTER)
    _wait(driver, lambda d: _overlay(d) == "" and _progress(d) == f"row 3 of {n}, 3 done", 30, "taken over")
    second = driver.current_window_handle
    driver.switch_to.window(first)
    _wait(driver, lambda d: "open in another tab" in _overlay(d), 30, "the first tab closed")
    _keys(driver, "a" + Keys.ENTER)  # pressed in the closed tab: nothing is saved
    driver.switch_to.window(second)
    _keys(driver, "a" + Keys.ENTER)
    _wait(driver, lambda d: _progress(d) == f"row 5 of {n}, 4 done", 30, "row 3 rated in the second tab")
    said[rows[2]["blind_id"]] = {g: "PASSED" for g in _graded_of(rows[2])}
    # the first tab, taken back, shows row 3 as the second tab saved it: rated, not blank and unsaved
    driver.switch_to.window(first)
    driver.find_element("css selector", ".vf-take").click()
    _wait(driver, lambda d: _overlay(d) == "" and "✓ rated" in d.find_element("css selector", ".vf-head").text, 30,
          "row 3 saved, seen in the first tab")  # fmt: skip

    # the hand-in: e downloads ratings.csv, and the page says where it went
    _keys(driver, "e")
    got = downloads / "ratings.csv"
    deadline = time.monotonic() + 30
    while not got.exists() and time.monotonic() < deadline:
        time.sleep(0.2)
    assert got.exists(), sorted(p.name for p in downloads.iterdir())
    assert "downloads folder" in driver.find_element("css selector", "#handed").text
    table = pd.read_csv(got, dtype=str, keep_default_na=False)
    assert set(table.rater) == {"ann"} and len(table) == 4
    assert main(["ratings", "import", str(got), "--run-dir", str(run), "--rater", "ann", "--partial"]) == 0
    imported = read_ratings(run, "ann").set_index("blind_id")
    for bid, checks in said.items():
        for cid, verdict in checks.items():
            assert imported.loc[bid, f"c{cid}"] == verdict, (bid, cid)
    assert len(imported) == len(said)

    # nothing asked of the network: no resource loaded, no request but the page's own
    assert driver.execute_script("return performance.getEntriesByType('resource').length") == 0
    requests = [json.loads(e["message"])["message"] for e in driver.get_log("performance")]
    urls = [m["params"]["request"]["url"] for m in requests if m["method"] == "Network.requestWillBeSent"]
    assert [u for u in urls if u.split(":", 1)[0] in ("http", "https", "ws", "wss", "ftp")] == []
    shot = os.environ.get("VOCAB_PAGE_SCREENSHOT")
    driver.save_screenshot(shot or str(tmp_path / "2-handed-in.png"))
    print(f"rate.html: {html.stat().st_size} bytes, {n} rows; the first row shown {opened:.0f} ms after navigation")


def _graded_of(row: dict) -> list[str]:
    """The checks a rater grades on a Vocabscapes row, as the rubric says (check 1 only when the seed word is
    required), in the rubric's order."""
    need1 = bool(row["settings"]["require_seed_word"])
    return [str(k) for k in range(1, 13) if k != 1 or need1]


def test_criteria_named_with_commas_and_quotes_and_notes_round_trip_and_a_duplicated_tab_is_refused(tmp_path, chromium):
    """An imported table whose criteria are named with a comma and a quote: ratings.csv's header and a note
    holding commas, quotes and spaces at its ends come back through `vocab ratings import` as typed. A tab opened
    from the page (it shares the page's sessionStorage, as a duplicated tab does) is refused, not a second rater."""
    from selenium.webdriver.common.keys import Keys

    driver, downloads = chromium
    n = 40
    table = pd.DataFrame({
        "id": [f"q{k}" for k in range(n)], "system": "sys-a", "judge": "judge-x",
        "verdict": ["PASSED" if k % 3 else "FAILED" for k in range(n)],
        "criterion:accuracy, overall": ["PASSED" if k % 3 else "FAILED" for k in range(n)],
        'criterion:tone "style"': "PASSED", "input": [f"question {k}" for k in range(n)],
        "output": [f"answer {k}" for k in range(n)],
    })  # fmt: skip
    table.to_csv(tmp_path / "table.csv", index=False)
    run = tmp_path / "crit"
    assert main(["import", "table", str(tmp_path / "table.csv"), "--run-dir", str(run)]) == 0
    assert main(["sample", "--run-dir", str(run), "--per-pile", "3"]) == 0
    html = make_packet(run, "ann") / "rate.html"
    note = ' a, "quoted" note, é '
    driver.get(html.as_uri())
    _wait(driver, lambda d: _progress(d).startswith("row 1 of 6, 0 done"), 30, "row 1")
    _keys(driver, "a" + "n" + note + Keys.ENTER)
    _wait(driver, lambda d: _progress(d) == "row 2 of 6, 1 done", 30, "row 2")
    _keys(driver, "n" + "first the note" + Keys.ENTER)  # refused (nothing graded): the letters stay in the note
    assert "grade" in driver.find_element("css selector", ".vocab-form .vf-head").text
    _keys(driver, " too" + Keys.ESCAPE + "fa" + Keys.ENTER)
    _wait(driver, lambda d: _progress(d) == "row 3 of 6, 2 done", 30, "row 3")
    first = driver.current_window_handle
    driver.execute_script("window.open(location.href)")
    driver.switch_to.window([h for h in driver.window_handles if h != first][0])
    _wait(driver, lambda d: "open in another tab" in _overlay(d), 30, "the opened tab refused")
    driver.close()
    driver.switch_to.window(first)
    assert _overlay(driver) == ""
    _keys(driver, "e")
    got = downloads / "ratings.csv"
    deadline = time.monotonic() + 30
    while not got.exists() and time.monotonic() < deadline:
        time.sleep(0.2)
    assert main(["ratings", "import", str(got), "--run-dir", str(run), "--rater", "ann", "--partial"]) == 0
    stored = pd.read_csv(run / "calibration" / "ratings_ann.csv", dtype=str, keep_default_na=False)
    rows = [json.loads(line) for line in (html.parent / "sheet.jsonl").open()]
    by = stored.set_index("blind_id")
    assert list(stored.columns[1:3]) == ["accuracy, overall", 'tone "style"']
    assert by.loc[rows[0]["blind_id"], "note"] == note
    assert by.loc[rows[1]["blind_id"], "note"] == "first the note too"
    assert by.loc[rows[1]["blind_id"], "accuracy, overall"] == "FAILED"
    assert by.loc[rows[1]["blind_id"], 'tone "style"'] == "PASSED"


def test_an_answer_that_quotes_a_grade_carries_a_notice(tmp_path, chromium):
    """The reference run's packet: the three answers that repeat a judge's words (found here by reading the sheet:
    a verdict word in capitals or the retry prompt's "A grader failed it") are shown under a notice, a note to
    screen readers too; the other rows carry none."""
    import re
    import shutil

    from selenium.webdriver.common.by import By

    run = tmp_path / "reference"
    shutil.copytree(Path(__file__).resolve().parents[2] / "data" / "runs" / "reference", run,
                    ignore=shutil.ignore_patterns("notebooks", "figures", "report"))  # fmt: skip
    with zipfile.ZipFile(make_packet(run, "jane-doe").with_suffix(".zip")) as z:
        z.extractall(tmp_path / "rater-machine")
    html = tmp_path / "rater-machine" / "jane-doe" / "rate.html"
    rows = [json.loads(line) for line in (html.parent / "sheet.jsonl").open()]
    quotes = re.compile(r"\b(PASSED|FAILED|FAIL)\b|A grader failed it")
    quoting = [i for i, r in enumerate(rows) if quotes.search(json.dumps([r["sentence"], r["answer_key"]]))]
    assert len(quoting) == 3
    driver, _ = chromium
    driver.get(html.as_uri())
    n = len(rows)
    for i in range(max(quoting) + 1):
        _wait(driver, lambda d, i=i: _progress(d).startswith(f"row {i + 1} of {n}"), 30, f"row {i + 1}")
        notes = driver.find_elements(By.CSS_SELECTOR, ".vocab-form .vf-quotes")
        if i in quoting:
            assert len(notes) == 1 and notes[0].get_attribute("role") == "note"
            assert "judge the sentence, not the quote" in notes[0].text
        else:
            assert notes == [], (i, notes[0].text)
        _keys(driver, "l")


def test_the_page_on_a_phone_and_for_a_screen_reader(page, chromium):
    """At 390x844: each check's question sits above its two buttons, every button is a tap target at least 44 px
    high, and the header says how to rate by taps. At any size: each check is a group named by its question, and a
    live region (one element, kept across redraws) says the progress; a save by taps moves it on."""
    from selenium.webdriver.common.by import By

    _, html = page
    driver, _ = chromium
    driver.set_window_size(390, 844)
    driver.get(html.as_uri())
    _wait(driver, lambda d: _progress(d).startswith("row 1 of"), 30, "the first row")
    taps = driver.find_element(By.CSS_SELECTOR, "header .taps")
    assert taps.is_displayed() and "tap ✓ PASSED or ✗ FAILED" in taps.text
    buttons = driver.find_elements(By.CSS_SELECTOR, ".vocab-form .vf-buttons button, .vocab-form .vf-bar button")
    assert buttons and min(b.size["height"] for b in buttons) >= 44, sorted(b.size["height"] for b in buttons)[:3]
    for crit in driver.find_elements(By.CSS_SELECTOR, ".vocab-form .vf-crit"):
        assert crit.get_attribute("role") == "group"
        question = driver.find_element(By.ID, crit.get_attribute("aria-labelledby"))
        assert question.text and crit.find_element(By.CSS_SELECTOR, ".vf-question") == question
        if "vf-na" not in crit.get_attribute("class"):
            q, b = question.rect, crit.find_element(By.CSS_SELECTOR, ".vf-buttons").rect
            assert b["y"] >= q["y"] + q["height"] - 1  # the buttons below the question, not beside it
    live = driver.find_element(By.CSS_SELECTOR, ".vf-live")
    assert live.get_attribute("aria-live") == "polite" and live.get_attribute("role") == "status"
    assert live.get_attribute("textContent").startswith("row 1 of")
    # rate the row by taps: PASSED on every check, then "save and next"
    for cid in _graded(driver):  # each tap redraws the form: the button found afresh each time
        driver.find_element(By.CSS_SELECTOR, f'.vocab-form .vf-crit[data-id="{cid}"] button.vf-passed').click()
    driver.find_element(By.CSS_SELECTOR, ".vocab-form .vf-bar button.vf-save").click()
    _wait(driver, lambda d: _progress(d).startswith("row 2 of"), 30, "the second row")
    assert len(driver.find_elements(By.CSS_SELECTOR, ".vf-live")) == 1
    _wait(driver, lambda d: d.find_element(By.CSS_SELECTOR, ".vf-live").get_attribute("textContent")
          .startswith("row 2 of"), 10, "the live region's progress")  # fmt: skip
    # at a laptop's size the header's taps line is out of the way
    driver.set_window_size(1366, 768)
    assert not driver.find_element(By.CSS_SELECTOR, "header .taps").is_displayed()


def test_each_check_reads_in_plain_words_with_its_examples(page, chromium):
    """Each check's question is the rubric's plain wording (vocab.rubric.GUIDE), the study's name and wording its
    tooltip; the focused check shows a passing and a failing example, and a check about how the listed words are
    used the rule for a missing word; the other checks keep them folded (a row stays short). Moving the focus (j)
    unfolds the next check's."""
    from selenium.webdriver.common.by import By

    from vocab.rubric import BY_ID, GUIDE, MISSING_WORD_RULE, WORD_CHECKS

    _, html = page
    driver, _ = chromium
    driver.get(html.as_uri())
    _wait(driver, lambda d: _progress(d).startswith("row 1 of"), 30, "the first row")
    seen = set()
    for _ in range(12):
        focused = driver.find_element(By.CSS_SELECTOR, ".vocab-form .vf-crit.vf-focused")
        cid = focused.get_attribute("data-id")
        if cid in seen:
            break
        seen.add(cid)
        bold = focused.find_element(By.CSS_SELECTOR, ".vf-question b")
        assert bold.text == f"{cid}. {GUIDE[cid].plain}"
        assert bold.get_attribute("title") == f"{BY_ID[cid].name}: {BY_ID[cid].question}"
        examples = focused.find_element(By.CSS_SELECTOR, ".vf-examples")
        assert (
            examples.is_displayed() and examples.text == f"passes: {GUIDE[cid].passing} · fails: {GUIDE[cid].failing}"
        )
        missing = focused.find_elements(By.CSS_SELECTOR, ".vf-missing")
        assert (len(missing) == 1 and missing[0].is_displayed() and MISSING_WORD_RULE in missing[0].text) == (
            cid in WORD_CHECKS
        )
        others = driver.find_elements(By.CSS_SELECTOR, ".vocab-form .vf-crit:not(.vf-focused) .vf-examples")
        assert others and not any(e.is_displayed() for e in others)
        driver.find_element(By.CSS_SELECTOR, ".vocab-form").send_keys("j")
    assert set(WORD_CHECKS) <= seen and len(seen) >= 11


AXE = Path(__file__).resolve().parents[2] / ".cache" / "axe" / "node_modules" / "axe-core" / "axe.min.js"
AXE_TAGS = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "wcag22aa", "best-practice"]


def _axe(driver) -> list[tuple[str, int]]:
    """axe-core's violations of the WCAG 2.x A/AA rules and its best practices on the page as it stands: (rule, how
    many elements)."""
    driver.execute_script(AXE.read_text())
    found = driver.execute_async_script(
        "const done = arguments[arguments.length - 1];"
        "axe.run(document, {runOnly: {type: 'tag', values: arguments[0]}})"
        ".then((r) => done(r.violations.map((v) => [v.id, v.nodes.length])),"
        "      (e) => done([['axe failed', String(e)]]));",
        AXE_TAGS,
    )
    return [tuple(v) for v in found]


@pytest.mark.parametrize("size", [(1366, 768), (390, 844)], ids=["laptop", "phone"])
def test_the_page_opens_at_its_top_and_axe_finds_nothing_at_both_sizes(page, chromium, size):
    """The page opens at its title and introduction (nothing scrolls it before the rater's first key or tap), and
    axe-core (tests/axe, installed by make setup) finds no violation of its WCAG 2.x A/AA rules or best practices:
    as opened, then with a check graded by keyboard and a wrong key's notice shown. An image without a text put on
    the page makes axe say so (the engine runs). ``VOCAB_PAGE_SHOTS=DIR`` keeps the page at this size, the form in
    sight, as DIR/rating_page_WxH.png (docs/rating.md shows them)."""
    from selenium.webdriver.common.by import By

    assert AXE.exists(), "make setup installs axe-core into .cache/axe (npm ci of tests/axe)"
    _, html = page
    driver, _ = chromium
    driver.set_window_size(*size)
    driver.get(html.as_uri())
    _wait(driver, lambda d: _progress(d).startswith("row 1 of"), 30, "the first row")
    time.sleep(0.5)  # the form's own first redraw (a timer) has run
    assert driver.execute_script("return window.scrollY") == 0
    title = driver.find_element(By.CSS_SELECTOR, "h1").rect
    assert title["y"] >= 0 and title["y"] + title["height"] <= size[1] - 100
    assert _axe(driver) == []
    _keys(driver, "p")  # a grade brings the form into sight: the focused check lies inside the window
    _wait(
        driver, lambda d: d.find_elements(By.CSS_SELECTOR, ".vocab-form .vf-crit button.vf-passed.vf-selected"), 10, "p"
    )
    box = driver.execute_script("return document.querySelector('.vocab-form .vf-focused').getBoundingClientRect()")
    assert box["top"] >= 0 and box["bottom"] <= size[1], box
    shots = os.environ.get("VOCAB_PAGE_SHOTS")
    if shots:
        driver.save_screenshot(str(Path(shots) / f"rating_page_{size[0]}x{size[1]}.png"))
    _keys(driver, "x")  # a key that is none of the form's
    _wait(driver, lambda d: "not one of the form's keys" in d.find_element(By.CSS_SELECTOR, ".vf-head").text, 10, "x")
    assert _axe(driver) == []
    driver.execute_script("document.body.append(Object.assign(document.createElement('img'), {src: 'x.png'}))")
    assert ("image-alt", 1) in _axe(driver)
