"""The package's layers point one way: no module imports, directly or through others, a module that imports it
(read from the source with ``ast``, imports inside functions included: a deferred import is still a dependency)."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "vocab"


def _module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def import_graph() -> dict[str, set[str]]:
    """Each vocab module -> the vocab modules it imports (``from vocab.x import y`` counts y when y is a module)."""
    modules = {_module_name(p): p for p in PACKAGE.rglob("*.py")}
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        deps = set()
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import):
                deps |= {a.name for a in node.names if a.name.startswith("vocab")}
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and (node.module or "").startswith("vocab"):
                deps.add(node.module)
                deps |= {f"{node.module}.{a.name}" for a in node.names if f"{node.module}.{a.name}" in modules}
        # importing vocab.a.b.c runs the packages vocab.a and vocab.a.b first: edges too (a package's own parts import
        # it half-made by design, so a module's own packages are no edge)
        deps |= {".".join(d.split(".")[:k]) for d in deps for k in range(2, len(d.split(".")))}
        graph[name] = {d for d in deps if d in modules and d != name and not name.startswith(d + ".")}
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan), each sorted."""
    index, low, stack, on, out = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def test_the_graph_holds_the_packages_an_import_runs():
    """`from vocab.serving.models import x` (vocab.records holds one) runs vocab/serving/__init__.py: an edge."""
    graph = import_graph()
    assert {"vocab.serving", "vocab.serving.models"} <= graph["vocab.records"]  # records imports serving.models
    assert "vocab.datasets" not in graph["vocab.datasets.items"]  # its own package: no edge


def test_the_cycle_finder_finds_a_cycle_and_only_cycles():
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


def test_no_import_circles_in_the_package():
    assert cycles(import_graph()) == []


# the rooms of the calibration chain, lowest first: a room imports only from rooms before it
STAGES = ("vocab.datasets", "vocab.sampling", "vocab.raters", "vocab.imports", "vocab.estimates")


def _stage(module: str) -> int | None:
    return next((i for i, s in enumerate(STAGES) if module == s or module.startswith(s + ".")), None)


def test_imports_point_down_the_stages():
    """No room imports a later room, nor the facade vocab.calibration, nor the layers above the rooms (the audit,
    the report, the command line, the simulators)."""
    above = (
        "vocab.calibration",
        "vocab.audit",
        "vocab.audit_sample",
        "vocab.audit_rate",
        "vocab.report",
        "vocab.cli",
        "vocab.demo",
        "vocab.coverage",  # the simulators measure the estimates: they import them, never the other way
    )
    up = []
    for module, deps in import_graph().items():
        here = _stage(module)
        if here is None:
            continue
        for d in deps:
            there = _stage(d)
            if (there is not None and there > here) or any(d == a or d.startswith(a + ".") for a in above):
                up.append((module, d))
    assert sorted(up) == []
    assert _stage("vocab.raters.page") == 2 and _stage("vocab.rater") is None  # the rule can tell rooms apart


def test_sql_sits_beside_the_store():
    """The arithmetic asks the store (vocab.datasets.items.Items) for what it reads of the items: no query is
    written in vocab.stats, vocab.estimates or vocab.coverage (docs/contributing.md). Read from the source."""
    import re

    query = re.compile(r"\bSELECT\b|\.execute\(|\bduckdb\b")
    found = {
        p.relative_to(PACKAGE.parent).as_posix()
        for room in ("stats", "estimates", "coverage")
        for p in (PACKAGE / room).rglob("*.py")
        if query.search(p.read_text())
    }
    assert found == set()
    assert query.search((PACKAGE / "datasets" / "items.py").read_text())  # the rule can see a query


def test_each_module_holds_one_subject():
    """A module past about 500 lines has two subjects; the command line only parses and calls (at most 400)."""
    sizes = {p.relative_to(PACKAGE.parent).as_posix(): len(p.read_text().splitlines()) for p in PACKAGE.rglob("*.py")}
    assert {m: n for m, n in sizes.items() if n > 500} == {}
    assert sizes["vocab/cli.py"] <= 400


def test_only_the_layout_spells_a_run_directorys_paths():
    """vocab.layout.RunDir names the files of a run or dataset directory; no other module spells them (a second
    spelling is a second owner that can drift). Read from the source: string constants naming a calibration file or
    folder."""
    import re

    names = (
        r"calibration|analysis|packets|key\.csv|blind_sheet\.jsonl|blind_sheet\.csv|sample\.json|earlier_sheets\.txt"
    )
    spelled = re.compile(rf"""["']({names})["']""")
    found = {
        p.relative_to(PACKAGE.parent).as_posix(): sorted(set(spelled.findall(p.read_text())))
        for p in PACKAGE.rglob("*.py")
        if p.name != "layout.py"
    }
    assert {m: s for m, s in found.items() if s} == {}


def test_the_harness_registry_names_every_importer_once():
    """Each harness's reader exists, `vocab audit --source` offers exactly the registry's names, and `vocab import`
    has a sub-command for each."""
    import argparse

    from vocab.cli import build_parser
    from vocab.imports.registry import HARNESSES, NAMES

    assert len(set(NAMES)) == len(NAMES) == 5
    assert all(callable(h.reader()) for h in HARNESSES)
    (sub,) = [a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction)]
    (source,) = [a for a in sub.choices["audit"]._actions if a.dest == "source_kind"]
    assert tuple(source.choices) == NAMES
    (imports,) = [a for a in sub.choices["import"]._actions if isinstance(a, argparse._SubParsersAction)]
    assert set(NAMES) <= set(imports.choices)


def test_the_formatter_decides_the_layout():
    """No line of the package overrules `ruff format` (docs/contributing.md: a table that reads better aligned is the
    one reason, and none does today)."""
    marker = "# fmt: " + "skip"
    marked = [
        f"{p.relative_to(PACKAGE.parent)}:{i}"
        for p in PACKAGE.rglob("*.py")
        for i, line in enumerate(p.read_text().splitlines(), 1)
        if line.rstrip().endswith(marker)
    ]
    assert marked == []


def test_a_function_imports_vocab_only_when_deferring_on_purpose():
    """A library function that imports a module of vocab says why it defers it (a heavy dependency: a comment on the
    import or the line above); the command line's bodies defer by design (`vocab --help` loads no command)."""
    unexplained = []
    for p in PACKAGE.rglob("*.py"):
        if p.name.startswith("cli") or p.name == "demo.py":
            continue
        lines = p.read_text().splitlines()
        for fn in ast.walk(ast.parse("\n".join(lines))):
            if not isinstance(fn, ast.FunctionDef | ast.AsyncFunctionDef):
                continue
            for node in ast.walk(fn):
                if isinstance(node, ast.ImportFrom) and node.level == 0 and (node.module or "").startswith("vocab"):
                    said = lines[node.lineno - 1] + (lines[node.lineno - 2] if node.lineno >= 2 else "")
                    if "deferred" not in said and "only when" not in said:
                        unexplained.append(f"{p.relative_to(PACKAGE.parent)}:{node.lineno}")
    assert sorted(set(unexplained)) == []
