"""rate.html of the reference run's packet (annotator-1, 67 rows): its size, and the time from opening it from disk
to the first row on screen, in Debian's headless Chromium at 1366x768 (selenium and chromium-driver, as the
browser test drives it). Each opening is in a fresh browser profile (nothing kept from an earlier one), so it is a
rater's first opening; the time is the page's first contentful paint (its one inline script draws the form before
the page is first painted, so the first paint shows the first row), checked to show row 1.

The packet is made by today's code in a copy of the reference run's calibration folder (data/ is not written).
Only Chromium was tried: no other browser or its driver comes from the registries this machine reaches.

Run: .venv/bin/python benchmarks/bench_page.py [--runs 15]; writes benchmarks/results/rate_page.json.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import tempfile
import time
from pathlib import Path

from common import ROOT, result_record, write_result

from vocab.raters.packet import make_packet

CHROMIUM, CHROMEDRIVER = "/usr/bin/chromium", "/usr/bin/chromedriver"


def open_once(page: Path, profile: Path) -> dict:
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    opts = webdriver.ChromeOptions()
    opts.binary_location = CHROMIUM
    for arg in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu",
                "--window-size=1366,768", f"--user-data-dir={profile}"):  # fmt: skip
        opts.add_argument(arg)
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=opts)
    try:
        driver.get(page.as_uri())
        deadline = time.monotonic() + 30
        while True:
            got = driver.execute_script(
                "const p = document.querySelector('.vocab-form .vf-progress');"
                "const fcp = performance.getEntriesByName('first-contentful-paint')[0];"
                "const nav = performance.getEntriesByType('navigation')[0];"
                "return [p && p.textContent, fcp && fcp.startTime, nav && nav.domContentLoadedEventEnd];"
            )
            if got[0] and got[1] is not None:
                break
            assert time.monotonic() < deadline, "the form did not show in 30 s"
            time.sleep(0.05)
        assert got[0].startswith("row 1 of "), got[0]
        return {"first_row_ms": got[1], "dom_content_loaded_ms": got[2], "progress": got[0],
                "browser": driver.capabilities.get("browserVersion")}  # fmt: skip
    finally:
        driver.quit()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=15)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-page-") as tmp:
        tmp = Path(tmp)
        ref = ROOT / "data" / "runs" / "reference"
        shutil.copytree(ref / "calibration", tmp / "reference" / "calibration")
        shutil.copy(ref / "manifest.json", tmp / "reference" / "manifest.json")
        page = make_packet(tmp / "reference", "annotator-1") / "rate.html"
        rows = sum(1 for _ in (page.parent / "sheet.jsonl").open())
        runs = [open_once(page, tmp / f"profile-{k}") for k in range(args.runs)]
        size = page.stat().st_size
    first = [r["first_row_ms"] for r in runs]
    result = result_record(
        "rate_page",
        packet="data/runs/reference, rater annotator-1 (made by this commit's code)",
        rows=rows,
        page_bytes=size,
        browser=f"Chromium {runs[0]['browser']} (Debian), headless, 1366x768, a fresh profile per opening",
        other_browsers="none tried: no other browser or driver comes from the registries this machine reaches",
        runs=len(runs),
        first_row_ms={"median": statistics.median(first), "min": min(first), "max": max(first)},
        dom_content_loaded_ms_median=statistics.median(r["dom_content_loaded_ms"] for r in runs),
        per_run_first_row_ms=first,
    )
    out = write_result("rate_page", result)
    print(f"{out}: {size:,} bytes for {rows} rows; first row at {statistics.median(first):.0f} ms (median of "
          f"{len(runs)}, {min(first):.0f}-{max(first):.0f})")  # fmt: skip


if __name__ == "__main__":
    main()
