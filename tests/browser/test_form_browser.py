"""The blind rating form in a real browser: JupyterLab (started by `vocab form`, as a rater starts it) driven
in headless Chromium by selenium — Debian's chromium and chromium-driver, nothing downloaded.

One session, as an annotator works: open the packet's notebook, run it, rate two rows by keyboard alone, go back
and edit one, save, reload with a fresh kernel (the form cell shows nothing stale and no widget error), run it
again and resume, export, and import the partial hand-in. Screenshots go to the test's temporary directory
(``VOCAB_FORM_SCREENSHOT=path.png`` also keeps the form's picture there, e.g. for the README).
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from tests.unit.test_calibration import synthetic_attempts
from vocab.calibration import draw_sample, make_packet, read_ratings, write_sample

pytestmark = pytest.mark.browser
ROOT = Path(__file__).resolve().parents[2]
CHROMIUM, CHROMEDRIVER = "/usr/bin/chromium", "/usr/bin/chromedriver"
TOKEN = "vocab-browser-test"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def rater_install(machine: Path, zipped: Path) -> Path:
    """The packet's README.txt followed on a machine with no clone: unzip, a venv, vocab from the packet's wheel.
    Only the dependencies are not downloaded again: the venv reads them from this one's site-packages (a .pth line,
    under which this venv's editable vocab is not installed). Returns the venv's vocab command."""
    import sysconfig
    import zipfile

    with zipfile.ZipFile(zipped) as z:
        z.extractall(machine)
        wheel = next(n for n in z.namelist() if n.endswith(".whl"))
    env = machine / "vocab-env"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(env)], check=True)
    site = next((env / "lib").glob("python3*/site-packages"))
    (site / "dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    # ... and the data files pip puts beside them (JupyterLab's app, the widgets' lab extensions); not the kernel
    # spec, which names this venv's Python: JupyterLab starts its own Python's kernel, the rater venv's
    for data in ("lab", "labextensions"):
        (env / "share" / "jupyter").mkdir(parents=True, exist_ok=True)
        (env / "share" / "jupyter" / data).symlink_to(Path(sys.prefix) / "share" / "jupyter" / data)
    subprocess.run([str(env / "bin" / "python"), "-m", "pip", "install", "-q", "--no-deps", "--no-index",
                    str(machine / f"{wheel}[form]")], check=True, cwd=machine)  # fmt: skip
    where = subprocess.run([str(env / "bin" / "python"), "-c", "import vocab, vocab.raters.packet as p; "
                            "print(vocab.__file__, p.checkout())"], capture_output=True, text=True, cwd=machine,
                           check=True).stdout.split()  # fmt: skip
    assert where[0].startswith(str(site)) and where[1] == "None", where  # vocab from the wheel; no checkout
    return env / "bin" / "vocab"


@pytest.fixture
def lab(tmp_path):
    """A run with a blind sample and rater ann's packet; the packet's zip handed over to a machine of the rater's
    own (a folder outside the run, vocab installed there from the packet's wheel, no clone on any path), and
    JupyterLab serving it through that install's `vocab form ann.zip`, as a rater starts it."""
    run = tmp_path / "run"
    att = synthetic_attempts(cells=("w1__c1", "w1__c2"), levels=10)
    att["settings"] = [{"require_seed_word": bool(i % 2), "max_sentence_words": 12} for i in range(len(att))]
    write_sample(draw_sample(att, 3, 0), run)
    handed = tmp_path / "rater-machine" / "ann.zip"
    handed.parent.mkdir()
    shutil.copy(make_packet(run, "ann").with_suffix(".zip"), handed)
    vocab = rater_install(handed.parent, handed)
    packet = tmp_path / "rater-machine" / "ann"  # where `vocab form ann.zip` unpacks it
    port = free_port()
    env = {**os.environ, "JUPYTER_CONFIG_DIR": str(tmp_path / "jupyter-config"), "HOME": str(tmp_path)}
    env.pop("PYTHONPATH", None)
    log = (tmp_path / "lab.log").open("w")
    proc = subprocess.Popen(
        # --same-machine: "the rater's machine" is this one, where the packet was cut (vocab form refuses it else)
        [str(vocab), "form", "ann.zip", "--port", str(port), "--no-browser", "--token", TOKEN, "--same-machine"],
        cwd=handed.parent, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
    )  # fmt: skip
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while True:
        try:
            urllib.request.urlopen(f"{base}/api/status?token={TOKEN}", timeout=2)
            break
        except OSError:
            assert proc.poll() is None, (tmp_path / "lab.log").read_text()[-2000:]
            assert time.monotonic() < deadline, "JupyterLab did not start in 60 s"
            time.sleep(0.5)
    specs = json.loads(urllib.request.urlopen(f"{base}/api/kernelspecs?token={TOKEN}", timeout=10).read())
    kernel = specs["kernelspecs"][specs["default"]]["spec"]["argv"][0]
    assert kernel.startswith(str(vocab.parent)), kernel  # the form's kernel is the rater's install, not this venv
    yield run, packet, base
    os.killpg(proc.pid, signal.SIGTERM)
    try:
        proc.wait(timeout=20)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
    log.close()
    # pytest shows a test's output when it fails: the server's side of the story
    print("--- JupyterLab's log (last 4000 characters) ---\n" + (tmp_path / "lab.log").read_text()[-4000:])


@pytest.fixture(autouse=True)
def cpu_hog():
    """VOCAB_TEST_CPU_HOG=N runs N busy processes beside the test (how this test is checked on a loaded machine:
    `VOCAB_TEST_CPU_HOG=2 pytest tests/browser`); unset, nothing runs."""
    n = int(os.environ.get("VOCAB_TEST_CPU_HOG", "0"))
    hogs = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(n)]
    yield
    for h in hogs:
        h.kill()
        h.wait()


@pytest.fixture
def browser(tmp_path):
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    assert Path(CHROMIUM).exists() and Path(CHROMEDRIVER).exists(), "make setup installs chromium and chromium-driver"
    opts = webdriver.ChromeOptions()
    opts.binary_location = CHROMIUM
    for arg in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu",
                "--window-size=1366,768", f"--user-data-dir={tmp_path / 'chromium'}"):  # fmt: skip
        opts.add_argument(arg)
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=opts)
    yield driver
    driver.quit()


def _wait(driver, condition, timeout=120, what=""):
    from selenium.common.exceptions import StaleElementReferenceException
    from selenium.webdriver.support.ui import WebDriverWait

    # the form redraws itself on every change: an element read mid-redraw is stale, read it again
    wait = WebDriverWait(driver, timeout, poll_frequency=0.25, ignored_exceptions=[StaleElementReferenceException])
    return wait.until(condition, message=what)


def _kernel_idle(base: str) -> bool:
    """Whether a kernel is idle; a transient server error (JupyterLab answers 500 while a loaded machine starts the
    kernel) or a slow answer is a "not yet", and the caller's deadline decides."""
    try:
        kernels = json.loads(urllib.request.urlopen(f"{base}/api/kernels?token={TOKEN}", timeout=10).read())
    except (urllib.error.HTTPError, urllib.error.URLError, TimeoutError, ConnectionError):
        return False
    return any(k["execution_state"] == "idle" for k in kernels)


def _run_all(driver, base: str):
    """Run ▸ Run All Cells, once the notebook's kernel is up (a click before that may fall on a disabled item)."""
    from selenium.webdriver.common.by import By

    _wait(driver, lambda d: d.find_elements(By.CSS_SELECTOR, ".jp-Notebook .jp-Cell"), what="the notebook")
    _wait(driver, lambda d: _kernel_idle(base), what="an idle kernel")
    _menu(driver, "Run", "Run All Cells")
    return _wait(driver, lambda d: d.find_elements(By.CSS_SELECTOR, ".vocab-form .vf-progress"), what="the form")


def _menu(driver, menu: str, item: str) -> None:
    from selenium.webdriver.common.by import By

    top = _wait(driver, lambda d: [e for e in d.find_elements(By.CSS_SELECTOR, ".lm-MenuBar-itemLabel")
                                   if e.text == menu], what=f"the {menu} menu")  # fmt: skip
    top[0].click()
    entry = _wait(driver, lambda d: [e for e in d.find_elements(By.CSS_SELECTOR, ".lm-Menu-itemLabel")
                                     if e.text == item], what=item)  # fmt: skip
    entry[0].click()


def _progress(driver) -> str:
    from selenium.webdriver.common.by import By

    return driver.find_element(By.CSS_SELECTOR, ".vocab-form .vf-progress").text


def _keys(driver, keys: str):
    from selenium.webdriver.common.action_chains import ActionChains

    ActionChains(driver).send_keys(keys).perform()


def test_a_rater_rates_by_keyboard_edits_resumes_and_hands_in(lab, browser, tmp_path):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys

    run, packet, base = lab
    # no terminal beside the form (the run's key would be one `head ../../calibration/key.csv` away)
    with pytest.raises(urllib.error.HTTPError) as e:
        urllib.request.urlopen(urllib.request.Request(f"{base}/api/terminals?token={TOKEN}", method="POST"))
    assert e.value.code in (403, 404)
    # the server serves the packet's folder alone: the hand-out files, and no way up out of it
    listing = json.loads(urllib.request.urlopen(f"{base}/api/contents/?token={TOKEN}").read())
    assert sorted(f["name"] for f in listing["content"]) == ["README.txt", "packet.json", "rate.html", "rate.ipynb",
                                                             "rubric.txt", "sheet.jsonl",
                                                             "vocab-0.1.0-py3-none-any.whl"]  # fmt: skip
    for up in ("..", "../run/calibration/key.csv", "%2E%2E/run/calibration/key.csv"):
        with pytest.raises(urllib.error.HTTPError):
            urllib.request.urlopen(f"{base}/api/contents/{up}?token={TOKEN}")
    browser.get(f"{base}/lab/tree/rate.ipynb?token={TOKEN}")
    _run_all(browser, base)
    n = sum(1 for _ in (packet / "sheet.jsonl").open())
    _wait(browser, lambda d: _progress(d) == f"row 1 of {n}, 0 done", 30, "row 1")
    # the rater's JupyterLab fetches no news feed and checks no update (the page config says so)
    config = json.loads(browser.execute_script("return document.getElementById('jupyter-config-data').textContent"))
    assert config["news"] == {"disabled": True}
    # the form has the keyboard: its root (or a child) is focused, not a notebook cell
    assert browser.execute_script("return !!document.activeElement.closest('.vocab-form')")
    browser.save_screenshot(str(tmp_path / "1-opened.png"))
    cells_before = len(browser.find_elements(By.CSS_SELECTOR, ".jp-Notebook .jp-Cell"))

    # row 1: every check PASSED (12 presses cover 11 or 12 graded checks), Enter saves
    _keys(browser, "p" * 12)
    selected = browser.find_elements(By.CSS_SELECTOR, ".vocab-form .vf-passed.vf-selected")
    assert len(selected) in (11, 12)
    _keys(browser, Keys.ENTER)
    _wait(browser, lambda d: _progress(d) == f"row 2 of {n}, 1 done", 30, "row 2")
    # "saved" tells of the row before; the first grade on this row clears it
    assert "saved" in browser.find_element(By.CSS_SELECTOR, ".vocab-form .vf-head").text
    # row 2: check 9 FAILED (move with j/k), the rest PASSED
    _keys(browser, "p" * 12)
    assert not browser.find_elements(By.CSS_SELECTOR, ".vocab-form .vf-message")
    graded = [e.get_attribute("data-id") for e in browser.find_elements(By.CSS_SELECTOR, ".vocab-form .vf-crit")
              if "vf-na" not in e.get_attribute("class")]  # fmt: skip
    _keys(browser, "k" * (len(graded) - graded.index("9") - 1) + "f")
    assert browser.find_element(By.CSS_SELECTOR, '.vf-crit[data-id="9"] .vf-failed').get_attribute(
        "aria-pressed") == "true"  # fmt: skip
    browser.save_screenshot(str(tmp_path / "2-rating.png"))
    if os.environ.get("VOCAB_FORM_SCREENSHOT"):
        browser.find_element(By.CSS_SELECTOR, ".vocab-form").screenshot(os.environ["VOCAB_FORM_SCREENSHOT"])
    _keys(browser, Keys.ENTER)
    _wait(browser, lambda d: _progress(d) == f"row 3 of {n}, 2 done", 30, "row 3")
    # JupyterLab's own keys did not fire: no cell was inserted by b, selected by j/k, and the keys the form does not
    # use stop there too (x would cut the form's cell, m make it markdown, o hide its output)
    _keys(browser, "xmoXM")
    assert len(browser.find_elements(By.CSS_SELECTOR, ".jp-Notebook .jp-Cell")) == cells_before
    assert browser.find_element(By.CSS_SELECTOR, ".vocab-form .vf-progress").is_displayed()

    # each list in the row is one chip per item (an item with a comma stays one item)
    row3 = json.loads((packet / "sheet.jsonl").read_text().splitlines()[2])
    chips = browser.find_elements(By.CSS_SELECTOR, ".vf-field-answer_key .vf-chip")
    assert [c.text for c in chips] == row3["answer_key"]

    # a grade on row 3, then b: the form asks before it drops the unsaved grade; a second b leaves
    _keys(browser, "p")
    assert browser.find_elements(By.CSS_SELECTOR, ".vocab-form .vf-unsaved")
    _keys(browser, "b")
    _wait(browser, lambda d: "press b again" in d.find_element(By.CSS_SELECTOR, ".vocab-form .vf-head").text, 30,
          "the question before leaving")  # fmt: skip
    assert _progress(browser) == f"row 3 of {n}, 2 done"
    # back to row 2 and edit it: check 9 PASSED now; the row says it was rated
    _keys(browser, "b")
    _wait(browser, lambda d: _progress(d) == f"row 2 of {n}, 2 done", 30, "back to row 2")
    assert "rated (saved" in browser.find_element(By.CSS_SELECTOR, ".vocab-form .vf-rated").text
    assert browser.find_element(By.CSS_SELECTOR, '.vf-crit[data-id="9"] .vf-failed').get_attribute(
        "aria-pressed") == "true"  # the saved rating is shown  # fmt: skip
    _keys(browser, "p" * 12 + Keys.ENTER)
    _wait(browser, lambda d: _progress(d) == f"row 3 of {n}, 2 done", 30, "after the edit")
    records = [json.loads(x) for x in (packet / "ratings.jsonl").read_text().splitlines()]
    assert [r["edit"] for r in records] == [False, False, True]
    assert records[1]["checks"]["9"] == "FAILED" and records[2]["checks"]["9"] == "PASSED"
    assert all(r["seconds"] >= 0 and r["rubric_hash"] and r["session"] == records[0]["session"] for r in records)

    # save (File ▸ Save Notebook, as JupyterLab's autosave would), shut the kernel down, reload: no stale
    # form, no widget error
    _menu(browser, "File", "Save Notebook")
    _wait(browser, lambda d: json.loads((packet / "rate.ipynb").read_text())["cells"][1]["execution_count"], 30,
          "the notebook saved")  # fmt: skip
    saved = json.loads((packet / "rate.ipynb").read_text())
    live = [c for c in saved["cells"] if "rating-form" in c["metadata"].get("tags", [])]
    assert len(live) == 2 and all(c["outputs"] == [] for c in live)  # the pre-save hook kept them out of the file
    assert saved["cells"][1]["execution_count"]  # ... and nothing else
    sessions = json.loads(urllib.request.urlopen(f"{base}/api/sessions?token={TOKEN}").read())
    for s in sessions:
        req = urllib.request.Request(f"{base}/api/kernels/{s['kernel']['id']}?token={TOKEN}", method="DELETE")
        urllib.request.urlopen(req)
    browser.refresh()
    _wait(browser, lambda d: d.find_elements(By.CSS_SELECTOR, ".jp-Notebook .jp-Cell"), 60, "the notebook again")
    time.sleep(2)
    page = browser.find_element(By.CSS_SELECTOR, "body").text
    assert "Error displaying widget" not in page and "model not found" not in page
    assert not browser.find_elements(By.CSS_SELECTOR, ".vocab-form")
    assert "rows, 0 rated" not in page and "Run All Cells): the form opens at the bottom" in page
    assert "Jupyter news" not in page  # nor does JupyterLab ask to fetch news
    browser.save_screenshot(str(tmp_path / "3-reopened.png"))

    # run it again: the form resumes at the first unrated row, then exports what is rated so far
    _run_all(browser, base)
    _wait(browser, lambda d: _progress(d) == f"row 3 of {n}, 2 done", 60, "resumed")
    _keys(browser, "e")
    _wait(browser, lambda d: "exported 2 rows" in d.find_element(By.CSS_SELECTOR, ".vocab-form").text, 30, "export")
    browser.save_screenshot(str(tmp_path / "4-resumed.png"))
    hand_in = ["ratings", "import", str(packet / "ratings.csv"), "--run-dir", str(run), "--rater", "ann", "--partial"]
    r = subprocess.run([sys.executable, "-m", "vocab.cli", *hand_in], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    ratings = read_ratings(run, "ann").set_index("blind_id")
    assert len(ratings) == 2 and (ratings.c9 == "PASSED").all()
    shutil.rmtree(tmp_path / "chromium", ignore_errors=True)


CONTRAST_JS = """
// WCAG 2 contrast of every visible text in the form against what is painted behind it (backgrounds composited up
// the tree, a translucent text colour composited over them)
const parse = (c) => { const m = c.match(/[\\d.]+/g).map(Number); return [m[0], m[1], m[2], m.length > 3 ? m[3] : 1]; };
const over = (top, base) => [0, 1, 2].map((i) => top[i] * top[3] + base[i] * (1 - top[3])).concat([1]);
const lum = (c) => { const f = (v) => { v /= 255; return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; };
  return 0.2126 * f(c[0]) + 0.7152 * f(c[1]) + 0.0722 * f(c[2]); };
function behind(e) {
  const layers = [];
  for (let x = e; x; x = x.parentElement) {
    const bg = parse(getComputedStyle(x).backgroundColor);
    if (bg[3] > 0) layers.push(bg);
    if (bg[3] >= 1) break;
  }
  return layers.reverse().reduce((base, top) => over(top, base), [255, 255, 255, 1]);
}
const out = [];
for (const e of document.querySelectorAll(arguments[0])) {
  const own = [...e.childNodes].filter((n) => n.nodeType === 3 && n.textContent.trim()).map((n) => n.textContent);
  if (!own.length || !e.getClientRects().length || getComputedStyle(e).visibility === "hidden") continue;
  const bg = behind(e), fg = over(parse(getComputedStyle(e).color), bg);
  const [a, b] = [lum(fg), lum(bg)].sort((x, y) => y - x);
  out.push([own.join("").trim().slice(0, 40), e.className, Math.round((a + 0.05) / (b + 0.05) * 100) / 100]);
}
return out;
"""


def _contrasts(driver, selector=".vocab-form, .vocab-form *") -> list:
    return driver.execute_script(CONTRAST_JS, selector)


def _set_theme(base: str, theme: str) -> None:
    body = json.dumps({"raw": json.dumps({"theme": theme})}).encode()
    url = f"{base}/lab/api/settings/@jupyterlab/apputils-extension:themes?token={TOKEN}"
    urllib.request.urlopen(urllib.request.Request(url, data=body, method="PUT"), timeout=30)


def test_the_form_reads_in_both_themes_and_a_lost_session_or_kernel_looks_dead(lab, browser, tmp_path):
    """Issue 28's items 3, 5 and 8: contrast of every text ≥ 4.5 in the light and the dark theme, a verdict told
    by its sign as well as its colour, a tab that another tab took over covered at once, and a form whose kernel
    is gone covered too, taking no keys (b does not insert a cell in JupyterLab)."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys

    run, packet, base = lab
    for theme in ("JupyterLab Light", "JupyterLab Dark"):
        _set_theme(base, theme)
        browser.get(f"{base}/lab/tree/rate.ipynb?token={TOKEN}")
        _run_all(browser, base)
        _wait(browser, lambda d: _progress(d).startswith("row 1 of"), 60, "the form")
        _wait(browser, lambda d, t=theme: d.execute_script("return document.body.dataset.jpThemeName") == t, 30, theme)
        _keys(browser, "pf")  # a PASSED and a FAILED button filled, the focus on the third check
        _keys(browser, "?")  # the keys, listed over the form; ? again closes them
        _wait(browser, lambda d: "Enter: save and next" in d.find_element(By.CSS_SELECTOR, ".vf-help").text, 30, "help")
        _keys(browser, "?")
        assert not browser.find_elements(By.CSS_SELECTOR, ".vf-help")
        passed = browser.find_element(By.CSS_SELECTOR, ".vocab-form .vf-passed.vf-selected").text
        failed = browser.find_element(By.CSS_SELECTOR, ".vocab-form .vf-failed.vf-selected").text
        assert passed.startswith("✓") and failed.startswith("✗")  # not told apart by colour alone
        _keys(browser, "b")  # unsaved grades: the form asks (a message to measure too)
        _wait(browser, lambda d: d.find_elements(By.CSS_SELECTOR, ".vocab-form .vf-error"), 30, "the question")
        browser.save_screenshot(str(tmp_path / f"theme-{theme.split()[-1].lower()}.png"))
        low = [c for c in _contrasts(browser) if c[2] < 4.5]
        assert len(_contrasts(browser)) >= 20 and not low, (theme, low)
        _menu(browser, "File", "Save Notebook")  # nothing unsaved: the next page load is not held by a prompt

    # a second tab runs the form on the same kernel: refused until it takes the form over, explicitly; then the
    # first tab is covered within seconds
    first = browser.current_window_handle
    browser.switch_to.new_window("tab")
    browser.get(f"{base}/lab/tree/rate.ipynb?token={TOKEN}")
    _run_all(browser, base)
    take = _wait(browser, lambda d: d.find_elements(By.CSS_SELECTOR, ".vf-overlay .vf-take"), 60, "tab 2 refused")
    assert "open in another tab" in browser.find_element(By.CSS_SELECTOR, ".vf-overlay").text
    assert not [c for c in _contrasts(browser, ".vf-overlay, .vf-overlay *") if c[2] < 4.5]
    take[0].click()
    _wait(browser, lambda d: not d.find_elements(By.CSS_SELECTOR, ".vf-overlay"), 60, "tab 2 taking the form over")
    _wait(browser, lambda d: _progress(d).startswith("row 1 of"), 60, "the form in tab 2")
    _keys(browser, "p" * 12 + Keys.ENTER)  # tab 2 rates a row: ratings.csv holds it
    _wait(browser, lambda d: _progress(d).startswith("row 2 of"), 60, "tab 2's save")
    newest = (packet / "ratings.csv").read_bytes()
    browser.switch_to.window(first)
    _wait(browser, lambda d: "open in another tab" in d.find_element(By.CSS_SELECTOR, ".vf-overlay").text, 30,
          "the first tab covered")  # fmt: skip
    assert not [c for c in _contrasts(browser, ".vf-overlay, .vf-overlay *") if c[2] < 4.5]
    cells = len(browser.find_elements(By.CSS_SELECTOR, ".jp-Notebook .jp-Cell"))
    browser.execute_script("document.querySelector('.vocab-form').focus()")
    _keys(browser, "e" + "p" * 12 + Keys.ENTER + "s")  # the stale tab: export, grade and save, skip (not its button)
    browser.save_screenshot(str(tmp_path / "taken-over.png"))
    # a barrier, not a wait: the kernel answers the form's messages in order, so by the time tab 2's export is
    # answered, anything tab 1 had sent was handled
    browser.switch_to.window(browser.window_handles[-1])
    _keys(browser, "e")
    _wait(browser, lambda d: "exported 1 rows" in d.find_element(By.CSS_SELECTOR, ".vocab-form").text, 60, "export")
    assert (packet / "ratings.csv").read_bytes() == newest  # tab 2's newer rows stand
    assert len((packet / "ratings.jsonl").read_text().splitlines()) == 1

    # the kernel shut down: tab 2's form says the kernel is not answering, and takes no keys
    for s in json.loads(urllib.request.urlopen(f"{base}/api/sessions?token={TOKEN}").read()):
        req = urllib.request.Request(f"{base}/api/kernels/{s['kernel']['id']}?token={TOKEN}", method="DELETE")
        urllib.request.urlopen(req)
    _wait(browser, lambda d: "kernel is not answering" in d.find_element(By.CSS_SELECTOR, ".vf-overlay").text, 60,
          "the disconnected state")  # fmt: skip
    browser.execute_script("document.querySelector('.vocab-form').focus()")
    _keys(browser, "bb")
    assert len(browser.find_elements(By.CSS_SELECTOR, ".jp-Notebook .jp-Cell")) == cells
    browser.save_screenshot(str(tmp_path / "disconnected.png"))
    shutil.rmtree(tmp_path / "chromium", ignore_errors=True)


IN_VIEW_JS = """
// whether an element lies whole inside the part of the page the rater sees: the window, and every scrolling box
// around it (JupyterLab's notebook scrolls inside its own panel)
const e = document.querySelector(arguments[0]);
if (!e) return false;
const r = e.getBoundingClientRect();
let top = 0, bottom = window.innerHeight;
for (let x = e.parentElement; x; x = x.parentElement) {
  const s = getComputedStyle(x);
  if (/(auto|scroll|hidden)/.test(s.overflowY) && x.scrollHeight > x.clientHeight) {
    const b = x.getBoundingClientRect();
    top = Math.max(top, b.top); bottom = Math.min(bottom, b.bottom);
  }
}
return r.height > 0 && r.top >= top - 1 && r.bottom <= bottom + 1;
"""


def _in_view(driver, selector: str) -> bool:
    return driver.execute_script(IN_VIEW_JS, selector)


def _overlap(driver, a: str, b: str) -> bool:
    return driver.execute_script("""
const [p, q] = [arguments[0], arguments[1]].map((s) => document.querySelector(s).getBoundingClientRect());
return p.left < q.right && q.left < p.right && p.top < q.bottom && q.top < p.bottom;""", a, b)  # fmt: skip


def test_the_form_on_a_laptop_screen(lab, browser, tmp_path):
    """Issue 47 at 1366×768, in both themes: the settings in the rater's words with the word limit first, on one
    line; j/k/p/f keep the row's answer, the focused check, the save bar and the keys in sight (the checks scroll
    inside the form), in a window with a browser's bars too (1366×640); help beside the row, never over it;
    focus lost (a click on the notebook) said plainly, and the next key is the form's (b does not insert a cell);
    `a` passes the rest of a row; a row only reviewed moves on with Enter or l without a second record; the
    pre-save hook drops the layout a click on the form's prompt leaves (the output box scrolled)."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys

    run, packet, base = lab
    assert browser.execute_script("return [window.outerWidth, window.outerHeight]") == [1366, 768]

    def records():
        return len((packet / "ratings.jsonl").read_text().splitlines()) if (packet / "ratings.jsonl").exists() else 0

    for theme in ("JupyterLab Light", "JupyterLab Dark"):
        _set_theme(base, theme)
        browser.get(f"{base}/lab/tree/rate.ipynb?token={TOKEN}")
        _run_all(browser, base)
        _wait(browser, lambda d, t=theme: d.execute_script("return document.body.dataset.jpThemeName") == t, 30, theme)
        _wait(browser, lambda d: d.find_elements(By.CSS_SELECTOR, ".vf-focused"), 60, "the form")
        # read through _wait: the form may redraw itself as it settles (an element read mid-redraw is stale)
        settings = _wait(browser, lambda d: d.find_element(By.CSS_SELECTOR, ".vf-field-settings .vf-value").text, 30,
                         "the settings")  # fmt: skip
        assert settings.startswith("word limit: at most 12 words"), settings
        assert browser.execute_script("return document.querySelector('.vf-setting').getClientRects().length") == 1
        for keys in ("j" * 5, "p" * 3, "j" * 6, "k" * 11, "f" * 11):
            _keys(browser, keys)
            for part in (".vf-item", ".vf-focused", ".vf-bar", ".vf-keys"):
                assert _wait(browser, lambda d, p=part: _in_view(d, p), 10, f"{part} after {keys} in {theme}")
        browser.save_screenshot(str(tmp_path / f"laptop-{theme.split()[-1].lower()}.png"))
        _keys(browser, "?")
        _wait(browser, lambda d: d.find_elements(By.CSS_SELECTOR, ".vf-help"), 30, "help")
        assert not _overlap(browser, ".vf-help", ".vf-item") and not _overlap(browser, ".vf-help", ".vf-criteria")
        for part in (".vf-item", ".vf-focused"):  # the list shortened for the help still shows the last check
            assert _wait(browser, lambda d, p=part: _in_view(d, p), 10, f"{part} with the help open in {theme}")
        assert not [c for c in _contrasts(browser) if c[2] < 4.5]
        _keys(browser, "?")
        _menu(browser, "File", "Save Notebook")  # nothing unsaved: the next page load is not held by a prompt
    browser.set_window_size(1366, 640)  # a laptop's browser with its tab strip and address bar: the form refits
    for part in (".vf-item", ".vf-focused", ".vf-bar", ".vf-keys"):  # on the resize itself, before any key
        assert _wait(browser, lambda d, p=part: _in_view(d, p), 10, f"{part} on the resize to 1366x640")
    assert browser.execute_script("const l = document.querySelector('.vf-criteria'); "
                                  "return l.scrollHeight > l.clientHeight + 1")  # fmt: skip
    for keys in ("k" * 11, "j" * 11, "k" * 4):
        _keys(browser, keys)
        for part in (".vf-item", ".vf-focused", ".vf-bar", ".vf-keys"):
            assert _wait(browser, lambda d, p=part: _in_view(d, p), 10, f"{part} after {keys} at 1366x640")
    browser.save_screenshot(str(tmp_path / "laptop-640.png"))
    browser.set_window_size(1366, 768)
    _keys(browser, Keys.ENTER)  # row 1 saved (every check FAILED)
    _wait(browser, lambda d: _progress(d).startswith("row 2 of"), 60, "row 2")
    # focus lost: a click on the notebook's first cell; the form says so, and b is the form's key
    cells = len(browser.find_elements(By.CSS_SELECTOR, ".jp-Notebook .jp-Cell"))
    browser.find_elements(By.CSS_SELECTOR, ".jp-Notebook .jp-Cell")[0].click()
    _wait(browser, lambda d: d.find_elements(By.CSS_SELECTOR, ".vf-paused"), 30, "the form saying it lost focus")
    assert not [c for c in _contrasts(browser, ".vf-paused") if c[2] < 4.5]
    _keys(browser, "a")  # taken by the form: every check of row 2 PASSED
    _wait(browser, lambda d: not d.find_elements(By.CSS_SELECTOR, ".vf-paused"), 30, "the form focused again")
    graded = len(browser.find_elements(By.CSS_SELECTOR, ".vf-crit:not(.vf-na)"))
    assert len(browser.find_elements(By.CSS_SELECTOR, ".vf-passed.vf-selected")) == graded
    browser.find_elements(By.CSS_SELECTOR, ".jp-Notebook .jp-Cell")[0].click()
    _wait(browser, lambda d: d.find_elements(By.CSS_SELECTOR, ".vf-paused"), 30, "focus lost again")
    _keys(browser, "b")  # not a new cell: the form's back, which asks first (row 2 has unsaved grades)
    _wait(browser, lambda d: d.find_elements(By.CSS_SELECTOR, ".vocab-form .vf-error"), 30, "the question")
    assert len(browser.find_elements(By.CSS_SELECTOR, ".jp-Notebook .jp-Cell")) == cells
    _keys(browser, Keys.ENTER)
    _wait(browser, lambda d: _progress(d).startswith("row 3 of"), 60, "row 3")
    n = records()
    _keys(browser, "b")  # back to row 2, rated: Enter with nothing changed moves on and writes nothing
    _wait(browser, lambda d: _progress(d).startswith("row 2 of"), 60, "back on row 2")
    _keys(browser, Keys.ENTER)
    _wait(browser, lambda d: _progress(d).startswith("row 3 of"), 60, "row 3 again")
    _keys(browser, "b")
    _wait(browser, lambda d: _progress(d).startswith("row 2 of"), 60, "back on row 2 again")
    _keys(browser, "l")  # next without saving
    _wait(browser, lambda d: _progress(d).startswith("row 3 of"), 60, "row 3 by l")
    assert records() == n == 2
    # a click on the form's output prompt scrolls its box; the saved notebook keeps no such state
    form_cell = ".jp-Notebook .jp-Cell:last-child"
    prompt = browser.find_elements(By.CSS_SELECTOR, f"{form_cell} .jp-OutputArea-promptOverlay")
    browser.execute_script("arguments[0].click()", prompt[0])
    _wait(browser, lambda d: d.find_elements(By.CSS_SELECTOR, f"{form_cell}.jp-mod-outputsScrolled"), 30,
          "the form's box scrolled")  # fmt: skip
    before = (packet / "rate.ipynb").stat().st_mtime_ns
    _menu(browser, "File", "Save Notebook")
    _wait(browser, lambda d: (packet / "rate.ipynb").stat().st_mtime_ns != before, 30, "the notebook saved")
    for cell in json.loads((packet / "rate.ipynb").read_text())["cells"]:
        assert not {"scrolled", "collapsed"} & set(cell["metadata"]), cell["metadata"]
