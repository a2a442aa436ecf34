"""A Label Studio round trip whose export `vocab ratings import` reads: a real Label Studio, started here on a local
port with a fresh data directory, gets the Label Studio project of a rater's packet (`vocab packet --format
label-studio`), annotations through its API, and exports the project as JSON.

The committed export `data/label_studio/reference_ls-demo.json` was made by this script from the reference run's
packet for the rater `ls-demo` (`vocab packet --run-dir data/runs/reference --rater ls-demo --format label-studio`,
written to a temporary copy of the run), in a venv holding the pinned Label Studio (not a dependency of vocab):

    python3.11 -m venv .cache/ls-venv && .cache/ls-venv/bin/pip install -r requirements/label-studio.txt
    .cache/ls-venv/bin/python tests/label_studio_task.py PACKET_DIR data/label_studio/reference_ls-demo.json

**The annotations are not a person's.** They are the committed ratings of the reference run's LLM rater gemma3
(`calibration/ratings_gemma3.csv`), for the first 20 tasks in the rater's order, posted through Label Studio's
annotation API the way its labelling interface posts a person's: what is tested is the round trip (packet ->
Label Studio -> export -> `vocab ratings import`), and the test checks that the imported ratings are gemma3's,
exactly, and that the 47 rows left unannotated (Label Studio's JSON export holds the annotated tasks) are rows not
rated.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import requests

ROOT = Path(__file__).resolve().parents[1]
RATINGS = ROOT / "data" / "runs" / "reference" / "calibration" / "ratings_gemma3.csv"
ANNOTATED = 20
USER, PASSWORD = "rater@example.org", "local-password"  # a local, throwaway server's user


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def run(packet: Path, out: Path) -> Path:
    import csv

    tasks = json.loads((packet / "tasks.json").read_text())
    config = (packet / "label_config.xml").read_text()
    with RATINGS.open() as f:
        ratings = {r["blind_id"]: r for r in csv.DictReader(f)}
    port = _free_port()
    with tempfile.TemporaryDirectory() as data_dir:
        env = {**os.environ, "LABEL_STUDIO_BASE_DATA_DIR": data_dir, "COLLECT_ANALYTICS": "false",
               "LABEL_STUDIO_DISABLE_SIGNUP_WITHOUT_LINK": "true", "SENTRY_DSN": ""}  # fmt: skip
        cli = Path(sys.executable).with_name("label-studio")
        server = subprocess.Popen(
            [str(cli), "start", "--no-browser", "--port", str(port), "--data-dir", data_dir, "--username", USER,
             "--password", PASSWORD],
            env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )  # fmt: skip
        try:
            base = f"http://127.0.0.1:{port}"
            api = f"{base}/api"
            for _ in range(600):
                try:
                    if requests.get(f"{base}/health", timeout=5).status_code == 200:
                        break
                except requests.ConnectionError:
                    pass
                time.sleep(1)
            else:
                raise SystemExit("Label Studio did not answer within 10 minutes")
            # signed in as its user, as the browser is (Label Studio 1.23 turns legacy API tokens off by default)
            s = requests.Session()
            s.get(f"{base}/user/login/").raise_for_status()
            form = {"email": USER, "password": PASSWORD, "csrfmiddlewaretoken": s.cookies["csrftoken"]}
            s.post(f"{base}/user/login/", data=form, headers={"Referer": f"{base}/user/login/"}).raise_for_status()
            s.headers.update({"X-CSRFToken": s.cookies["csrftoken"], "Referer": base})
            s.get(f"{api}/projects").raise_for_status()
            project = s.post(f"{api}/projects", json={"title": packet.name, "label_config": config}).json()["id"]
            s.post(f"{api}/projects/{project}/import", json=tasks).raise_for_status()
            found = s.get(f"{api}/tasks", params={"project": project, "page_size": 10_000}).json()
            found = found["tasks"] if isinstance(found, dict) else found
            by_blind = {t["data"]["blind_id"]: t["id"] for t in found}
            target = next(line.split('toName="')[1].split('"')[0] for line in config.splitlines() if "toName=" in line)
            for task in tasks[:ANNOTATED]:
                bid = task["data"]["blind_id"]
                graded = [(c, v) for c, v in ratings[bid].items() if c.startswith("c") and v in ("PASSED", "FAILED")]
                result = [{"from_name": c, "to_name": target, "type": "choices", "value": {"choices": [v]}}
                          for c, v in graded]  # fmt: skip
                s.post(f"{api}/tasks/{by_blind[bid]}/annotations", json={"result": result}).raise_for_status()
            export = s.get(f"{api}/projects/{project}/export", params={"exportType": "JSON"})
            export.raise_for_status()
            json.loads(export.content)  # Label Studio's own export, written as it came
            out.parent.mkdir(parents=True, exist_ok=True)
            out.write_bytes(export.content)
        finally:
            server.terminate()
            server.wait(timeout=60)
    return out


if __name__ == "__main__":
    print(run(Path(sys.argv[1]).resolve(), Path(sys.argv[2]).resolve()))
