"""The notebooks' parameters: checked before any work in one line, a misspelt name refused, and a rerun with other
parameters never writing over the committed record (README's own papermill example among them)."""

from __future__ import annotations

import ast
import hashlib
import json
import subprocess
import sys
from pathlib import Path

import papermill as pm
import pytest
from papermill.exceptions import PapermillExecutionError

from vocab.notebooks import params as P

REPO = Path(__file__).resolve().parents[2]
NOTEBOOKS = sorted((REPO / "notebooks").glob("*.ipynb"))


def _cells(path: Path) -> list[dict]:
    return [c for c in json.loads(path.read_text())["cells"] if c["cell_type"] == "code"]


def _declared(cell: dict) -> list[str]:
    tree = ast.parse("".join(cell["source"]))
    return [n.targets[0].id for n in tree.body if isinstance(n, ast.Assign)]


def _checked(cell: dict) -> list[str]:
    """The parameter names the check cell's ``P.check(...)`` call spells out."""
    for node in ast.walk(ast.parse("".join(cell["source"]))):
        if isinstance(node, ast.Call) and getattr(node.func, "attr", "") == "check":
            return [k.arg for k in node.keywords if k.arg != "writes_tables"]
    return []


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_the_cell_after_the_parameters_checks_every_one_of_them(path):
    cells = _cells(path)
    assert "parameters" in cells[0]["metadata"].get("tags", []), "the first code cell holds the parameters"
    assert _checked(cells[1]) == _declared(cells[0])


def _hashes() -> dict[str, str]:
    places = [REPO / "figures", REPO / "data" / "runs" / "reference" / "analysis"]
    return {str(p): hashlib.sha256(p.read_bytes()).hexdigest() for d in places for p in sorted(d.iterdir())}


def _run(notebook: str, out: Path, **parameters):
    return pm.execute_notebook(
        str(REPO / "notebooks" / f"{notebook}.ipynb"),
        str(out),
        parameters=parameters,
        cwd=str(REPO / "notebooks"),
        kernel_name="python3",
        progress_bar=False,
    )


def _error(notebook: str, tmp_path: Path, **parameters) -> str:
    with pytest.raises(PapermillExecutionError) as caught:
        _run(notebook, tmp_path / "out.ipynb", **parameters)
    err = caught.value
    assert err.ename == "ParameterError"
    assert len(err.traceback) == 1, err.traceback  # one line, not a traceback
    assert err.source.startswith("# Every parameter checked"), "refused in the check cell, before any work"
    return err.evalue


def test_bad_parameters_are_one_line_naming_them(tmp_path):
    before = _hashes()
    assert "did you mean 'interval'" in _error("03_correct", tmp_path, intervl="jeffreys")
    assert (
        _error("03_correct", tmp_path, interval="wald") == "interval='wald': expected one of fiducial, jeffreys, seed"
    )
    assert "no such directory" in _error("03_correct", tmp_path, run_dir="../data/runs/nowhere")
    assert "no ratings_human.csv" in _error("03_correct", tmp_path, raters="human")
    assert "holds the committed record" in _error(
        "03_correct", tmp_path, interval="jeffreys", output_dir="../data/runs/reference/analysis"
    )
    assert _hashes() == before


def test_another_interval_writes_beside_not_over_the_record(tmp_path):
    """README's example (-p interval jeffreys) on the committed run: the tables go to output_dir, the record stays."""
    before = _hashes()
    nb = _run("03_correct", tmp_path / "03.ipynb", interval="jeffreys", output_dir=str(tmp_path / "tables"))
    assert _hashes() == before
    written = sorted(p.name for p in (tmp_path / "tables").iterdir())
    committed = sorted(p.name for p in (REPO / "data/runs/reference/analysis").glob("*.csv"))
    assert set(written) <= set(committed) and "correction.csv" in written
    jeffreys = (tmp_path / "tables" / "correction.csv").read_text()
    assert jeffreys != (REPO / "data/runs/reference/analysis/correction.csv").read_text()
    check_cell = next(c for c in nb.cells if c.source.startswith("# Every parameter checked"))
    said = "".join(check_cell.outputs[0]["data"]["text/plain"])
    assert "interval not the committed value" in said and str(tmp_path / "tables") in said


def test_vocab_nb_ends_a_bad_parameter_in_one_line_and_exit_2(tmp_path):
    target = tmp_path / "06.ipynb"
    target.write_bytes((REPO / "notebooks" / "06_figures.ipynb").read_bytes())
    done = subprocess.run(
        [sys.executable, "-m", "vocab.nb", str(target), "-p", "figures_dri", "x"], capture_output=True, text=True
    )
    assert done.returncode == 2
    last = done.stderr.strip().splitlines()[-1]
    assert last.endswith(
        "ParameterError: unknown parameter 'figures_dri' (did you mean 'figures_dir'?): "
        "06_figures takes run_dir, analysis_dir, figures_dir"
    )


# --- the check itself, on namespaces as papermill leaves them ------------------------------------------------


def _namespace(injected: dict | None = None, **values) -> dict:
    ns = {"In": ["", "x = 1"], **values}
    if injected:
        ns["In"].append("# Parameters\n" + "".join(f"{k} = {v!r}\n" for k, v in injected.items()))
        ns.update(injected)
    return ns


SPEC = dict(
    run_dir=P.directory(),
    raters=P.raters(),
    n_boot=P.integer(100, 1_000_000),
    seed=P.integer(0),
    interval=P.choice("fiducial", "jeffreys", "seed"),
    population=P.choice("finite", "superpopulation"),
    output_dir=P.place(),
)
COMMITTED = P.committed_parameters("03_correct")


def test_the_committed_values_are_read_from_the_committed_notebook():
    assert COMMITTED["interval"] == "fiducial" and COMMITTED["run_dir"] == "../data/runs/reference"


def test_committed_parameters_write_the_record(monkeypatch):
    monkeypatch.chdir(REPO / "notebooks")
    setup = P.check(_namespace(**COMMITTED), "03_correct", writes_tables=True, **SPEC)
    assert setup.record and setup.tables == Path("../data/runs/reference/analysis")


def test_another_value_writes_into_out(monkeypatch):
    monkeypatch.chdir(REPO / "notebooks")
    ns = _namespace({"n_boot": 500}, **{**COMMITTED, "n_boot": 500})
    setup = P.check(ns, "03_correct", writes_tables=True, **SPEC)
    assert not setup.record and setup.changed == ("n_boot",) and setup.tables == Path("../out/03_correct")


def test_a_name_injected_but_not_declared_is_refused(monkeypatch):
    monkeypatch.chdir(REPO / "notebooks")
    with pytest.raises(P.ParameterError, match="unknown parameter 'sed' \\(did you mean 'seed'\\?\\)"):
        P.check(_namespace({"sed": 3}, **COMMITTED), "03_correct", writes_tables=True, **SPEC)


@pytest.mark.parametrize(
    "name, value, words",
    [
        ("n_boot", 10, "n_boot=10: expected an integer from 100 to 1000000"),
        ("n_boot", "4000", "n_boot='4000': expected an integer"),
        ("seed", True, "seed=True: expected an integer from 0"),
        ("population", "all", "population='all': expected one of finite, superpopulation"),
        ("run_dir", "..", "run_dir='..': holds no manifest.json or dataset.json"),
    ],
)
def test_each_bad_value_names_itself_and_what_is_accepted(monkeypatch, name, value, words):
    monkeypatch.chdir(REPO / "notebooks")
    with pytest.raises(P.ParameterError) as caught:
        P.check(_namespace(**{**COMMITTED, name: value}), "03_correct", writes_tables=True, **SPEC)
    assert str(caught.value).startswith(words)
    assert caught.value._render_traceback_() == [f"ParameterError: {caught.value}"]
