"""A rater's packet as one page: ``rate.html``, opened from disk in any current browser, nothing to install.

The page holds the rater's rows in their order, the rubric and the form: the notebook form's own widget
(``form.js`` and ``form.css``, the same keys and layout) with the session kept in the browser (``page.js``): every
save appended to a log in localStorage under the packet's id, resumed at the first unrated row on a reload, one tab
at a time, and the hand-in a download of ``ratings.csv`` in the notebook form's columns (rater and sample hash on
every row, so ``vocab ratings import`` checks them). Its content-security policy lets it fetch nothing, and a
page reads nothing else on the rater's disk: the run's key stays out of its reach on any machine.
"""

from __future__ import annotations

import base64
import hashlib
import html
import json
from pathlib import Path
from typing import Any

from vocab.datasets.dataset import JudgeRubric
from vocab.rubric import guide_of
from vocab.sampling.quotes import judge_quotes

HERE = Path(__file__).parent
PAGE_CSS = """
body { font: 15px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; margin: 0 auto; max-width: 62em;
       padding: 0.5em 1em; color: #000; background: #fff; }
header h1 { font-size: 1.15em; margin: 0.2em 0; } header p, footer p { margin: 0.2em 0; }
header details pre { white-space: pre-wrap; font-size: 0.85em; max-height: 18em; overflow-y: auto;
       background: #f4f4f4; padding: 0.5em; }
footer { margin-top: 0.8em; font-size: 0.9em; border-top: 1px solid #ccc; padding-top: 0.4em; }
#handed { font-weight: bold; }
.taps { display: none; }
@media (max-width: 600px), (pointer: coarse) { .taps { display: block; font-weight: bold; } }
@media (pointer: coarse) { .vf-keys { display: none; } }
"""


def _script_json(data: Any) -> str:
    """JSON that is safe inside a <script>: no `<`, `>` or `&` (a row's text may hold `</script>`), ASCII only."""
    text = json.dumps(data, ensure_ascii=True, separators=(",", ":"))
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def packet_data(meta: dict[str, Any], rows: list[dict], keys: str) -> dict[str, Any]:
    """What the page holds of a packet (``meta``: its packet.json): the rater, the sample's hash, the rubric and
    the ``rows`` in the rater's order."""
    rub = JudgeRubric.from_dict(meta["rubric_full"])
    return {
        # the browser keeps the rater's saves under this: another packet (another rater, sample, order or a later
        # stage's rows) never reads them
        "packet_id": f"{meta['rater']}:{meta['sample_sha256'][:16]}:{meta.get('order_seed', 0)}"
        + (f":stage{meta['stage']}" if meta.get("stage") else ""),
        "rater": meta["rater"],
        "sample_sha256": meta["sample_sha256"],
        "rubric": {"name": rub.name, "version": rub.version, "hash": rub.hash},
        "criteria": [
            {
                "id": c.id,
                "name": c.name,
                "question": c.question,
                "column": c.column,
                "optional": c.optional,
                **guide_of(rub.name, c.id),
            }  # the rubric in plain words, as the notebook form shows it
            for c in rub.criteria
        ],
        "rows": rows,
        # what of a judge each answer quotes (its own text, seen by the rater anyway), for the page's notice
        "quotes": {r["blind_id"]: q for r in rows if (q := judge_quotes(r))},
        "keys": keys,
    }


def rate_page(meta: dict[str, Any], rows: list[dict], keys: str, rubric: str) -> str:
    """``rate.html`` of a packet (``meta``: its packet.json; ``rows``: its sheet; ``keys``: the form's keys;
    ``rubric``: rubric.txt), as text."""
    data = packet_data(meta, rows, keys)
    form_js = (HERE / "form.js").read_text(encoding="utf-8").replace("export default { render };", "")
    script = f"const PACKET = {_script_json(data)};\n{form_js}\n{(HERE / 'page.js').read_text(encoding='utf-8')}"
    digest = base64.b64encode(hashlib.sha256(script.encode()).digest()).decode()
    # nothing fetched from anywhere; the one script is the one written here (its hash); styles inline
    csp = f"default-src 'none'; style-src 'unsafe-inline'; script-src 'sha256-{digest}'"
    css = (HERE / "form.css").read_text(encoding="utf-8") + PAGE_CSS
    rater, n = html.escape(data["rater"]), len(data["rows"])
    return (
        "\n".join(
            [
                "<!DOCTYPE html>",
                '<html lang="en"><head><meta charset="utf-8">',
                f'<meta http-equiv="Content-Security-Policy" content="{csp}">',
                '<meta name="viewport" content="width=device-width, initial-scale=1">',
                f"<title>Blind rating: {rater}, {n} rows</title><style>{css}</style></head><body>",
                f"<header><h1>Blind rating form for {rater}: {n} rows</h1>",
                "<p>Grade each check of each row PASSED or FAILED as you judge it yourself; a check marked n/a on a "
                "row is not graded there. You never see the judge's verdict, which model wrote the answer, or anyone "
                "else's ratings. Each save is kept in this browser at once: close the page when you like, and open "
                "rate.html again in the same browser to go on where you stopped.</p>",
                '<p class="taps">On a phone or tablet: tap ✓ PASSED or ✗ FAILED for each check, then "save and next"; '
                '"export" downloads ratings.csv to hand in.</p>',
                f"<details><summary>The rubric</summary><pre>{html.escape(rubric)}</pre></details></header>",
                '<main id="form"></main>',
                '<footer><p id="handed">To hand in (all rows or part of them): press e. ratings.csv goes to your '
                "browser's downloads folder; send that file to the person who gave you this page.</p>",
                '<p><button id="log" type="button">Download the full log of your saves</button> (every save with its '
                "time: send it too if you are asked for it)</p></footer>",
                f"<script>{script}</script>",
                "</body></html>",
            ]
        )
        + "\n"
    )
