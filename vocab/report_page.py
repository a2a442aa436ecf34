"""A report as a document: its parts (:class:`Report`: the headline, the sections with their tables, the figures,
the provenance) written as one self-contained HTML page that fetches nothing (:func:`to_html`) and as Markdown beside
its figures (:func:`to_markdown`). What goes in it is :mod:`vocab.report`'s."""

from __future__ import annotations

import base64
import html
from dataclasses import dataclass, field

import pandas as pd

SCORES_TITLE = "The judge's score against people's verdicts"
SCORE_FIGURE = "report_scores.png"  # written beside them when the judge logged scores


@dataclass
class Report:
    title: str
    headline: list[str]
    sections: list[tuple[str, str, pd.DataFrame | None]] = field(default_factory=list)  # (title, text, table)
    figure_png: bytes | None = None
    provenance: dict = field(default_factory=dict)
    score_png: bytes | None = None  # the judge's score against people's verdicts, when the judge logged scores
    table: pd.DataFrame | None = None  # the corrected-rate table at full precision (``corrected.csv``)


CSP = "default-src 'none'; img-src data:; style-src 'unsafe-inline'"  # nothing may be fetched from anywhere


CSS = """
body { font: 15px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; color: #1b1b1b; max-width: 62rem;
       margin: 2rem auto; padding: 0 1rem; }
h1 { font-size: 1.5rem; } h2 { font-size: 1.15rem; margin-top: 2rem; border-bottom: 1px solid #ddd; }
.headline { background: #eef5fb; border-left: 4px solid #0072B2; padding: .6rem 1rem; }
.headline p { margin: .3rem 0; font-size: 1.05rem; }
table { border-collapse: collapse; font-size: .85rem; margin: .5rem 0; }
th, td { border: 1px solid #ccc; padding: .25rem .5rem; text-align: left; vertical-align: top; }
th { background: #f4f4f4; } img { max-width: 100%; } dl { display: grid; grid-template-columns: 12rem 1fr; }
dt { font-weight: 600; } dd { margin: 0 0 .3rem 0; overflow-wrap: anywhere; }
"""


def to_html(rep: Report) -> str:
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f'<meta http-equiv="Content-Security-Policy" content="{CSP}">',
        f"<title>{html.escape(rep.title)}</title><style>{CSS}</style></head><body>",
        f"<h1>{html.escape(rep.title)}</h1>",
        '<div class="headline">' + "".join(f"<p>{html.escape(h)}</p>" for h in rep.headline) + "</div>",
    ]
    for title, text, table in rep.sections:
        if title:
            parts.append(f"<h2>{html.escape(title)}</h2>")
        parts.append(f"<p>{html.escape(text)}</p>")
        if table is not None:
            parts.append(table.to_html(index=False, border=0, na_rep="–"))
        if title == "Corrected pass rates" and rep.figure_png:
            data = base64.b64encode(rep.figure_png).decode()
            parts.append(f'<img alt="raw pass rate and corrected rate per cell" src="data:image/png;base64,{data}">')
        if title == SCORES_TITLE and rep.score_png:
            data = base64.b64encode(rep.score_png).decode()
            parts.append(
                f'<img alt="people\'s pass share against the judge\'s score" src="data:image/png;base64,{data}">'
            )
    parts.append("<h2>Provenance</h2><dl>")
    parts += [f"<dt>{html.escape(k)}</dt><dd>{html.escape(str(v))}</dd>" for k, v in rep.provenance.items()]
    parts.append("</dl></body></html>")
    return "\n".join(parts) + "\n"


def _md_table(df: pd.DataFrame) -> str:
    cells = [[str(c) for c in df.columns]] + [
        ["–" if pd.isna(v) else str(v) for v in row] for row in df.itertuples(index=False)
    ]
    esc = [[c.replace("|", "\\|") for c in row] for row in cells]
    return "\n".join(
        ["| " + " | ".join(esc[0]) + " |", "|" + "---|" * len(esc[0])] + ["| " + " | ".join(r) + " |" for r in esc[1:]]
    )


def to_markdown(rep: Report, figure_name: str | None = None) -> str:
    out = [f"# {rep.title}", "", *(f"> {h}" for h in rep.headline), ""]
    for title, text, table in rep.sections:
        if title:
            out += [f"## {title}", ""]
        out += [text, ""]
        if table is not None:
            out += [_md_table(table), ""]
        if title == "Corrected pass rates" and figure_name:
            out += [f"![raw pass rate and corrected rate per cell]({figure_name})", ""]
        if title == SCORES_TITLE and figure_name and rep.score_png:
            out += [f"![people's pass share against the judge's score]({SCORE_FIGURE})", ""]
    out += ["## Provenance", "", *(f"- **{k}**: {v}" for k, v in rep.provenance.items()), ""]
    return "\n".join(out)
