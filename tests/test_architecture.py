"""The layer table in ARCHITECTURE.md is the rule: every module belongs to one row, imports only its own layer
and the layers its row names, and no two modules import each other (directly or around a loop), type-only and
function-level imports included. The test reads the table, so the document and the code cannot drift apart."""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "runner" / "qlab"


@dataclass(frozen=True)
class Layer:
    name: str
    paths: tuple[str, ...]  # "errors.py" (one module) or "project/" (a folder)
    may_import: frozenset[str] | None  # None: everything


def read_layers(text: str) -> list[Layer]:
    """The rows of the ``| layer | modules | may import |`` table."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.replace(" ", "") == "|layer|modules|mayimport|")
    layers: list[Layer] = []
    for line in lines[start + 2 :]:
        if not line.startswith("|"):
            break
        name, modules, allowed = (cell.strip() for cell in line.strip().strip("|").split("|"))
        paths = tuple(p for p in re.findall(r"`([\w./]+)`", modules) if p.endswith((".py", "/")))
        may = None if allowed == "everything" else frozenset(a.strip() for a in allowed.split(","))
        layers.append(Layer(name, paths, may))
    return layers


def module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def layer_of(path: Path, layers: list[Layer]) -> Layer | None:
    """The row naming this file, the most specific entry first (a file beats its folder, a deeper folder beats
    a shallower one)."""
    rel = path.relative_to(PACKAGE).as_posix()
    best: tuple[int, Layer] | None = None
    for layer in layers:
        for entry in layer.paths:
            hit = rel == entry if entry.endswith(".py") else rel.startswith(entry)
            rank = 10_000 if entry.endswith(".py") else len(entry)
            if hit and (best is None or rank > best[0]):
                best = (rank, layer)
    return best[1] if best else None


def imports(path: Path, modules: set[str]) -> Iterator[tuple[int, str]]:
    """Every qlab module this file imports, wherever the import sits (top level, function, TYPE_CHECKING), and
    every ``importlib.import_module("qlab....")`` with a literal name."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] == "qlab":
                    yield node.lineno, alias.name
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            if node.module.split(".")[0] != "qlab":
                continue
            for alias in node.names:
                sub = f"{node.module}.{alias.name}"
                yield node.lineno, sub if sub in modules else node.module
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "import_module"
            and node.args
            and isinstance(node.args[0], ast.Constant)
            and isinstance(node.args[0].value, str)
            and node.args[0].value.startswith("qlab.")
        ):
            yield node.lineno, node.args[0].value


def graph() -> tuple[dict[str, Path], dict[str, set[str]], list[str]]:
    files = {module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}
    edges: dict[str, set[str]] = {name: set() for name in files}
    unknown: list[str] = []
    for name, path in files.items():
        for line, target in imports(path, set(files)):
            if target not in files:
                unknown.append(f"{path.relative_to(ROOT)}:{line}: imports {target}, which is not a module")
            elif target != name:
                edges[name].add(target)
    return files, edges, unknown


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(edges[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return found


LAYERS = read_layers((ROOT / "ARCHITECTURE.md").read_text(encoding="utf-8"))


def test_the_table_is_read() -> None:
    names = [layer.name for layer in LAYERS]
    assert names[0] == "contracts" and names[-1] == "cli", names
    assert len(names) == len(set(names)), names
    for layer in LAYERS:
        assert layer.paths, f"row {layer.name} names no module"
        if layer.may_import is not None:
            assert layer.may_import <= set(names), f"row {layer.name} names unknown layers"


def test_every_module_sits_in_one_layer() -> None:
    files, _, _ = graph()
    homeless = [str(p.relative_to(ROOT)) for p in files.values() if layer_of(p, LAYERS) is None]
    assert not homeless, f"no row of ARCHITECTURE.md's layer table names these modules: {homeless}"


def violations(files: dict[str, Path], edges: dict[str, set[str]], layers: list[Layer]) -> list[str]:
    wrong = []
    for name, targets in edges.items():
        source = layer_of(files[name], layers)
        assert source is not None
        for target in sorted(targets):
            dest = layer_of(files[target], layers)
            assert dest is not None
            allowed = source.may_import
            if dest.name != source.name and allowed is not None and dest.name not in allowed:
                wrong.append(f"{name} ({source.name}) imports {target} ({dest.name})")
    return wrong


def test_no_import_runs_up_the_layer_table() -> None:
    files, edges, unknown = graph()
    assert not unknown, "\n".join(unknown)
    wrong = violations(files, edges, LAYERS)
    assert not wrong, "imports that run up ARCHITECTURE.md's layer table:\n" + "\n".join(wrong)


def test_no_import_cycles() -> None:
    _, edges, _ = graph()
    assert cycles(edges) == []


# The checks themselves must be able to fail: a made-up upward import and a made-up cycle are caught.


def test_an_upward_import_is_caught() -> None:
    layers = read_layers(
        "| layer | modules | may import |\n|---|---|---|\n"
        "| contracts | `contracts/`, `run/options.py` | contracts |\n| run | `run/` | contracts |\n"
        "| cli | `cli.py` | everything |\n"
    )
    files = {
        "qlab.contracts.errors": PACKAGE / "contracts" / "errors.py",
        "qlab.run.gates": PACKAGE / "run" / "gates.py",
        "qlab.run.options": PACKAGE / "run" / "options.py",
        "qlab.cli": PACKAGE / "cli.py",
    }
    edges = {
        "qlab.contracts.errors": {"qlab.run.gates"},  # up: refused
        "qlab.run.gates": {
            "qlab.contracts.errors",
            "qlab.run.options",
        },  # down, and a file named in a lower row
        "qlab.run.options": {"qlab.contracts.errors"},
        "qlab.cli": {"qlab.run.gates"},  # everything
    }
    assert violations(files, edges, layers) == [
        "qlab.contracts.errors (contracts) imports qlab.run.gates (run)"
    ]


def test_a_cycle_is_caught() -> None:
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


@pytest.mark.parametrize(
    "source", ["qlab.run.state", "qlab.governance.promotion.checks", "qlab.execute.cleanup"]
)
def test_the_three_former_cycles_stay_broken(source: str) -> None:
    _, edges, _ = graph()
    partner = {
        "qlab.run.state": "qlab.run.runner",
        "qlab.governance.promotion.checks": "qlab.governance.promotion.compare",
        "qlab.execute.cleanup": "qlab.execute.case",
    }[source]
    assert partner not in edges[source]


def test_the_top_level_keeps_the_version_and_the_entry_points_only() -> None:
    top = sorted(p.name for p in PACKAGE.glob("*.py"))
    rows = {layer.name: layer for layer in LAYERS}
    allowed = {p for name in ("contracts", "adapters", "cli") for p in rows[name].paths if "/" not in p}
    assert set(top) <= allowed, sorted(set(top) - allowed)
    assert len(top) <= 4, top  # the version, the CLI entry points and the public API: the rest is in packages
