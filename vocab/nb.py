"""Execute a notebook with papermill in place, then drop the metadata that changes on every run.

``python -m vocab.nb notebooks/00_levels.ipynb [-p name value ...]`` runs the notebook from the
``notebooks/`` directory (relative paths in parameters are relative to it) and writes its outputs back, so
the committed file is what nbval compares against. Timings and timestamps that papermill records are
removed: they would differ on every run and make every rerun a diff.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path


def _strip(nb_path: Path) -> None:
    nb = json.loads(nb_path.read_text())
    pm = nb.get("metadata", {}).get("papermill", {})
    for key in ("start_time", "end_time", "duration", "input_path", "output_path", "environment_variables"):
        pm.pop(key, None)
    for cell in nb["cells"]:
        cell.get("metadata", {}).pop("papermill", None)
        cell.get("metadata", {}).pop("execution", None)
    nb_path.write_text(json.dumps(nb, indent=1, ensure_ascii=False) + "\n")


def execute(path: str | Path, parameters: dict | None = None, output: str | Path | None = None) -> Path:
    """Run ``path`` from its own directory; write it to ``output`` (default: in place)."""
    import papermill as pm

    path = Path(path).resolve()
    out = Path(output).resolve() if output else path
    out.parent.mkdir(parents=True, exist_ok=True)
    pm.execute_notebook(
        str(path),
        str(out),
        parameters=parameters or {},
        cwd=str(path.parent),
        kernel_name="python3",
        progress_bar=False,
    )
    _strip(out)
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("notebooks", nargs="+")
    ap.add_argument(
        "-p",
        nargs=2,
        action="append",
        metavar=("NAME", "VALUE"),
        default=[],
        help="a parameter (the value is parsed as JSON when it can be)",
    )
    args = ap.parse_args()
    params = {}
    for k, v in args.p:
        try:
            params[k] = json.loads(v)
        except json.JSONDecodeError:
            params[k] = v
    from papermill.exceptions import PapermillExecutionError

    for nb in args.notebooks:
        try:
            print(execute(nb, params))
        except PapermillExecutionError as e:  # the notebook's own one line (a ParameterError names the parameter)
            print(f"{nb}: {e.ename}: {e.evalue}", file=sys.stderr)
            return 2 if e.ename == "ParameterError" else 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
