"""What an executed notebook printed: the text of its code cells' outputs, never their source."""

from __future__ import annotations

import json
from pathlib import Path


def _text(value: str | list[str]) -> str:
    return value if isinstance(value, str) else "".join(value)


def outputs_text(path: Path) -> str:
    """The outputs of every code cell of the notebook at ``path``, joined: streams (``text``), the
    ``text/plain`` and ``text/html`` of displays and results, and errors' names, values and tracebacks."""
    parts = []
    for cell in json.loads(Path(path).read_text())["cells"]:
        if cell["cell_type"] != "code":
            continue
        for out in cell.get("outputs", []):
            if "text" in out:
                parts.append(_text(out["text"]))
            for mime in ("text/plain", "text/html"):
                if mime in out.get("data", {}):
                    parts.append(_text(out["data"][mime]))
            if out.get("output_type") == "error":
                parts.append(f"{out.get('ename', '')}: {out.get('evalue', '')}")
                parts.extend(out.get("traceback", []))
    return "\n".join(parts)
