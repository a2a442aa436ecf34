"""A notebook's parameters, checked before any work, and where its tables and figures may go.

The cell after a notebook's ``parameters`` cell calls :func:`check` with one checker per parameter::

    setup = check(globals(), "03_correct", run_dir=run_or_dataset(), interval=choice("fiducial", "jeffreys"), ...)

and gets back where to write. Three promises:

- **One line, before any work.** A bad value raises :class:`ParameterError`, which IPython (and so JupyterLab and
  papermill) shows as its one line, naming the parameter and what it accepts; papermill then exits non-zero.
- **No silent typo.** papermill injects every ``-p NAME VALUE`` into a cell headed ``# Parameters`` and only warns
  about a name the notebook does not declare; the check reads that cell and refuses such a name (with the nearest
  declared one).
- **A rerun never rewrites the record.** The committed values are the notebook's own ``parameters`` cell as
  committed in ``notebooks/``. Tables go to the run's ``analysis/`` and figures to their committed folder only when
  the analysis parameters are the committed ones; any other analysis of a committed run writes into ``output_dir``
  (default ``../out/<notebook>/``, which git ignores), and an ``output_dir`` or ``figures_dir`` that names a
  committed place is refused. A run of the user's own (nothing in it committed) keeps its tables in its own
  ``analysis/`` whatever the parameters.
"""

from __future__ import annotations

import ast
import difflib
import json
import subprocess
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from vocab.files import write_text_atomic
from vocab.layout import RunDir

REPO = Path(__file__).resolve().parents[2]
NOTEBOOKS = REPO / "notebooks"
OUT = "../out"  # relative to notebooks/, the notebooks' working directory: the repository's out/, ignored by git
ANALYSIS = "method"  # the role of a parameter that changes what is computed


class ParameterError(ValueError):
    """A notebook parameter that cannot be used. IPython renders it as its one line, not a traceback."""

    def _render_traceback_(self) -> list[str]:
        return [f"ParameterError: {self}"]


# --- checkers: each takes (name, value) and returns the value to use, or raises ParameterError -----------------


@dataclass(frozen=True)
class Param:
    """How one parameter is checked and what it is: ``data`` (what is read), ``place`` (where output goes) or
    ``method`` (how it is computed: only the committed values write the record)."""

    check: Callable[[str, Any], Any]
    role: str = ANALYSIS
    accepts: str = ""


def _fail(name: str, value: Any, accepts: str) -> ParameterError:
    return ParameterError(f"{name}={value!r}: expected {accepts}")


def choice(*options: str, role: str = ANALYSIS) -> Param:
    accepts = "one of " + ", ".join(options)

    def run(name, value):
        if value not in options:
            raise _fail(name, value, accepts)
        return value

    return Param(run, role, accepts)


def integer(low: int | None = None, high: int | None = None, role: str = ANALYSIS) -> Param:
    accepts = "an integer" + (f" from {low}" if low is not None else "") + (f" to {high}" if high is not None else "")

    def run(name, value):
        if isinstance(value, bool) or not isinstance(value, int):
            raise _fail(name, value, accepts)
        if (low is not None and value < low) or (high is not None and value > high):
            raise _fail(name, value, accepts)
        return value

    return Param(run, role, accepts)


def flag(role: str = ANALYSIS) -> Param:
    def run(name, value):
        if not isinstance(value, bool):
            raise _fail(name, value, "True or False")
        return value

    return Param(run, role, "True or False")


def text(parse: Callable[[str], Any] | None = None, accepts: str = "a string", role: str = ANALYSIS) -> Param:
    """A string, optionally parsed by ``parse`` (whose ValueError's words are kept)."""

    def run(name, value):
        if not isinstance(value, str):
            raise _fail(name, value, accepts)
        if parse is not None and value != "":
            try:
                parse(value)
            except Exception as e:  # the parser's own words name the problem
                raise ParameterError(f"{name}={value!r}: {e} (expected {accepts})") from None
        return value

    return Param(run, role, accepts)


def directory(marker: tuple[str, ...] = ("manifest.json", "dataset.json"), *, optional: bool = False) -> Param:
    """An existing directory holding one of ``marker`` (a run: manifest.json; a dataset: dataset.json)."""
    what = {"manifest.json": "a run", "dataset.json": "an imported dataset"}
    kinds = " or ".join(what.get(m, m) for m in marker)
    accepts = f"a directory holding {kinds} ({', '.join(marker)})" + (", or empty" if optional else "")

    def run(name, value):
        if optional and value == "":
            return value
        if not isinstance(value, str) or not value:
            raise _fail(name, value, accepts)
        p = Path(value)
        if not p.is_dir():
            raise ParameterError(f"{name}={value!r}: no such directory (expected {accepts})")
        if not any((p / m).exists() for m in marker):
            raise ParameterError(f"{name}={value!r}: holds no {' or '.join(marker)} (expected {accepts})")
        return value

    return Param(run, "data", accepts)


def file(*, optional: bool = False) -> Param:
    accepts = "an existing file" + (", or empty to skip" if optional else "")

    def run(name, value):
        if optional and value == "":
            return value
        if not isinstance(value, str) or not Path(value).is_file():
            raise ParameterError(f"{name}={value!r}: no such file (expected {accepts})")
        return value

    return Param(run, "data", accepts)


def folder(*, optional: bool = False) -> Param:
    accepts = "an existing folder" + (", or empty for the default" if optional else "")

    def run(name, value):
        if optional and value == "":
            return value
        if not isinstance(value, str) or not Path(value).is_dir():
            raise ParameterError(f"{name}={value!r}: no such folder (expected {accepts})")
        return value

    return Param(run, ANALYSIS, accepts)


def numbers(kind: type = float) -> Param:
    """Comma-separated numbers (``inf`` among floats)."""
    accepts = f"comma-separated {'integers' if kind is int else 'numbers'}"

    def run(name, value):
        try:
            parsed = [kind(x) for x in str(value).split(",") if x.strip()]
        except ValueError:
            parsed = []
        if not isinstance(value, str) or not parsed:
            raise _fail(name, value, accepts)
        return value

    return Param(run, ANALYSIS, accepts)


def among(options: tuple[str, ...]) -> Param:
    """Comma-separated names, each one of ``options``."""
    accepts = "comma-separated names among " + ", ".join(options)

    def run(name, value):
        names = [x.strip() for x in str(value).split(",") if x.strip()] if isinstance(value, str) else []
        bad = [x for x in names if x not in options]
        if not names or bad:
            raise ParameterError(
                f"{name}={value!r}: {bad[0]!r} is unknown (expected {accepts})"
                if bad
                else f"{name}={value!r}: expected {accepts}"
            )
        return value

    return Param(run, ANALYSIS, accepts)


def exam(run_param: str = "run_dir") -> Param:
    """An exam's registry id with results in ``<run>/exams/<id>/`` (checked in :func:`check`), or empty to skip."""
    return Param(
        lambda name, value: _string(name, value), "exam", f"an exam id with results in {run_param}/exams/, or empty"
    )


def _string(name, value):
    if not isinstance(value, str):
        raise _fail(name, value, "a string")
    return value


def place() -> Param:
    def run(name, value):
        if not isinstance(value, str):
            raise _fail(name, value, "a folder path, or empty for the default")
        return value

    return Param(run, "place", "a folder path, or empty for the default")


def raters(run_param: str = "run_dir", *, at_least: int = 1) -> Param:
    """Comma-separated rater names, each with ``calibration/ratings_<name>.csv`` in the run (checked in
    :func:`check`, once the run directory itself is known to be good)."""
    accepts = f"comma-separated rater names (at least {at_least}) with ratings in {run_param}/calibration/"

    def run(name, value):
        if not isinstance(value, str):
            raise _fail(name, value, accepts)
        names = [r.strip() for r in value.split(",") if r.strip()]
        if len(names) < at_least:
            raise _fail(name, value, accepts)
        return value

    return Param(run, "raters", accepts)


# --- the check ---------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Setup:
    """A notebook's checked parameters and where it writes."""

    notebook: str
    values: dict
    record: bool  # every analysis parameter is the committed one: the notebook may write the committed record
    tables: Path | None  # where tables go (None: the notebook writes none)
    figures: Path | None  # where figures go
    changed: tuple[str, ...] = field(default=())  # the analysis parameters that differ from the committed ones

    def __repr__(self) -> str:
        return self.text()

    def save(self, frame, name: str, float_format: str | None = "%.6f") -> Path:
        """Write ``frame`` as ``<tables>/<name>`` (CSV, whole or not at all: a reader never sees half a table)."""
        path = Path(self.tables) / name
        path.parent.mkdir(parents=True, exist_ok=True)
        write_text_atomic(path, frame.to_csv(index=False, float_format=float_format))
        return path

    def text(self) -> str:
        where = []
        if self.tables is not None:
            where.append(f"tables → {self.tables}")
        if self.figures is not None:
            where.append(f"figures → {self.figures}")
        why = (
            "the committed parameters"
            if self.record
            else f"{', '.join(self.changed)} not the committed value: the record is left as it is"
        )
        return f"{self.notebook}: parameters checked ({why})" + (f"; {'; '.join(where)}" if where else "")


def committed_parameters(notebook: str) -> dict | None:
    """The values in ``notebooks/<notebook>.ipynb``'s committed ``parameters`` cell (None where the repository's
    notebooks are not beside the package, e.g. an installed wheel)."""
    path = NOTEBOOKS / f"{notebook}.ipynb"
    if not path.exists():
        return None
    for cell in json.loads(path.read_text())["cells"]:
        if cell["cell_type"] == "code" and "parameters" in cell.get("metadata", {}).get("tags", []):
            return _assigned("".join(cell["source"]))
    return None


def _assigned(source: str) -> dict:
    values = {}
    for node in ast.parse(source).body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            try:
                values[node.targets[0].id] = ast.literal_eval(node.value)
            except ValueError:
                values[node.targets[0].id] = None
    return values


def injected(namespace: dict) -> dict:
    """What papermill injected: the names assigned in executed cells headed ``# Parameters``."""
    found: dict = {}
    for source in namespace.get("In", []) or []:
        if isinstance(source, str) and source.lstrip().startswith("# Parameters"):
            try:
                found.update(_assigned(source))
            except SyntaxError:
                continue
    return found


def _same(role: str, a: Any, b: Any) -> bool:
    if a == b:
        return True
    if role in ("data", "place") and isinstance(a, str) and isinstance(b, str) and a and b:
        return Path(a).resolve() == Path(b).resolve()
    return False


def check(namespace: dict, notebook: str, *, writes_tables: bool = False, **spec: Param) -> Setup:
    """Check every parameter of ``notebook`` in ``namespace`` (the notebook's ``globals()``) and say where it may
    write (see the module); ``writes_tables``: the notebook writes tables (into the run's ``analysis/``)."""
    unknown = sorted(set(injected(namespace)) - set(spec))
    if unknown:
        name = unknown[0]
        near = difflib.get_close_matches(name, list(spec), n=1)
        hint = f" (did you mean {near[0]!r}?)" if near else ""
        raise ParameterError(f"unknown parameter {name!r}{hint}: {notebook} takes {', '.join(spec)}")
    values = {}
    for name, param in spec.items():
        if name not in namespace:
            raise ParameterError(f"{name}: not set (run the parameters cell first)")
        values[name] = param.check(name, namespace[name])
    for name, param in spec.items():  # rater names need their run checked first
        if param.role == "raters":
            _rated(name, values[name], values.get("run_dir", ""))
        elif param.role == "exam" and values[name]:
            held = Path(values.get("run_dir", "")) / "exams"
            if not (held / values[name]).is_dir():
                have = sorted(p.name for p in held.glob("*") if p.is_dir())
                raise ParameterError(
                    f"{name}={values[name]!r}: no results in {held} (there: {', '.join(have) or 'none'}; empty skips)"
                )
    committed = committed_parameters(notebook) or {}
    changed = tuple(
        n
        for n, p in spec.items()
        if p.role in (ANALYSIS, "raters", "exam") and not _same(p.role, values[n], committed.get(n, object()))
    )
    data_same = bool(committed) and all(
        _same("data", values[n], committed.get(n)) for n, p in spec.items() if p.role == "data"
    )
    tables, figures = _places(
        notebook, spec, values, committed, not changed and bool(committed), data_same, writes_tables
    )
    return Setup(notebook, values, not changed and bool(committed), tables, figures, changed)


def _committed(path: Path) -> bool:
    """Whether ``path`` holds files the repository commits (git's index; outside a git checkout, anything inside
    the repository counts)."""
    p = Path(path).resolve()
    if not p.is_relative_to(REPO):
        return False
    try:
        listed = subprocess.run(
            ["git", "-C", str(REPO), "ls-files", "--", str(p.relative_to(REPO))], capture_output=True, text=True
        )
    except OSError:
        return True
    return listed.returncode != 0 or bool(listed.stdout.strip())


def _rated(name: str, value: str, run: str) -> None:
    cal = RunDir(run).calibration
    have = [RunDir.rater_of(p) for p in RunDir(run).ratings_files()]
    for r in (r.strip() for r in value.split(",") if r.strip()):
        if r not in have:
            raise ParameterError(
                f"{name}={value!r}: no ratings_{r}.csv in {cal} (rated there: {', '.join(have) or 'none'})"
            )


def _places(notebook, spec, values, committed, record, data_same, writes_tables) -> tuple[Path | None, Path | None]:
    run = values.get("run_dir") or ""
    writes_figures = "figures_dir" in spec
    out, fig_dir = values.get("output_dir", ""), values.get("figures_dir", "")
    fig_explicit = bool(fig_dir) and not _same("place", fig_dir, committed.get("figures_dir", ""))
    if record:
        tables = (Path(out) if out else RunDir(run).analysis) if writes_tables else None
        if not writes_figures:
            return tables, None
        if fig_explicit or data_same or not run:
            return tables, Path(fig_dir)
        return tables, RunDir(run).figures  # another run's figures go into that run, never over the committed ones
    # the record: what the repository commits (the figures, a committed run's tables and figures)
    places = [REPO / "figures", Path(committed.get("figures_dir") or REPO / "figures")]
    for r in (run, committed.get("run_dir", "")):
        if r:
            places += [RunDir(r).analysis, RunDir(r).figures]
    protected = {p.resolve() for p in places if _committed(p)}
    own = bool(run) and RunDir(run).analysis.resolve() not in protected  # a run of the user's: its tables are its own
    target = Path(out) if out else RunDir(run).analysis if own else Path(OUT) / notebook
    if not writes_figures:
        figures = None
    elif fig_explicit:
        figures = Path(fig_dir)
    else:
        figures = RunDir(run).figures if own and RunDir(run).figures.resolve() not in protected else target
    for name, p in (("output_dir", target), ("figures_dir", figures)):
        if p is not None and p.resolve() in protected:
            raise ParameterError(
                f"{name}={str(p)!r} holds the committed record, which only the committed parameters write "
                f"(leave {name} empty to write into {OUT}/{notebook}/)"
            )
    return (target if writes_tables else None), figures
