"""The audit report in a real browser (Debian's headless Chromium through selenium): it renders, its figure loads,
and the page asks the network for nothing — the Resource Timing list is empty and no request was logged.
``VOCAB_REPORT_SCREENSHOT=path.png`` keeps a picture of it (the README's)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pandas as pd
import pytest

from vocab.cli import main

pytestmark = pytest.mark.browser
ROOT = Path(__file__).resolve().parents[2]
LOG = ROOT / "data" / "inspect" / "qa_smollm2_gemma3.eval"
CHROMIUM, CHROMEDRIVER = "/usr/bin/chromium", "/usr/bin/chromedriver"


def test_the_report_renders_offline_with_its_figure(tmp_path):
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    from selenium.webdriver.common.by import By

    d = tmp_path / "audit"
    assert main(["audit", str(LOG), "--out", str(d), "--raters", "ann"]) == 0
    sheet = pd.read_csv(d / "calibration" / "blind_sheet.csv")
    (tmp_path / "ann.csv").write_text(
        pd.DataFrame({"blind_id": sheet.blind_id, "verdict": "PASSED"}).to_csv(index=False)
    )
    assert main(["ratings", "import", str(tmp_path / "ann.csv"), "--run-dir", str(d), "--rater", "ann"]) == 0
    assert main(["report", str(d)]) == 0
    page = d / "report" / "report.html"

    opts = webdriver.ChromeOptions()
    opts.binary_location = CHROMIUM
    for arg in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu", "--window-size=1100,1400",
                f"--user-data-dir={tmp_path / 'chromium'}"):  # fmt: skip
        opts.add_argument(arg)
    opts.set_capability("goog:loggingPrefs", {"performance": "ALL"})
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=opts)
    try:
        driver.get(page.as_uri())
        assert "Judge audit" in driver.title
        headline = driver.find_element(By.CSS_SELECTOR, ".headline").text
        assert "against ann's blind ratings" in headline
        img = driver.find_element(By.TAG_NAME, "img")
        assert driver.execute_script("return arguments[0].complete && arguments[0].naturalWidth", img) > 100
        assert driver.execute_script("return performance.getEntriesByType('resource').length") == 0
        requests = [json.loads(e["message"])["message"] for e in driver.get_log("performance")]
        urls = [m["params"]["request"]["url"] for m in requests if m["method"] == "Network.requestWillBeSent"]
        assert page.as_uri() in urls  # the log does see the page's own request
        assert [u for u in urls if u.split(":", 1)[0] in ("http", "https", "ws", "wss", "ftp")] == []
        shot = os.environ.get("VOCAB_REPORT_SCREENSHOT")
        driver.save_screenshot(shot or str(tmp_path / "report.png"))
    finally:
        driver.quit()
