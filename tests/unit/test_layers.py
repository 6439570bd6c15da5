"""The layers, read from the source: each folder imports only the folders below it, and no
module imports itself back through others (imports inside functions and under TYPE_CHECKING
count: a cycle hidden in a function is still a cycle).

    history -> checkers -> harness -> workloads, nemesis -> scenarios -> runs -> frontends

history/ is the contract of ../shared/history-format.md (event and operation names, the one
writer and reader, the run directory) and imports nothing of the project; checkers/ needs nothing
but a history and a run directory; harness/ is the cluster; runs/ puts a run together;
frontends/ are the CLI and the pytest plugin. workloads/ and nemesis/ share a floor and meet only
at the history, as Jepsen's client and nemesis do.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
FLOORS = {
    "history": 0,
    "checkers": 1,
    "harness": 2,
    "workloads": 3,
    "nemesis": 3,
    "scenarios": 4,
    "runs": 5,
    "frontends": 6,
}


def _modules() -> dict[str, Path]:
    found = {}
    for package in FLOORS:
        for path in sorted((ROOT / package).rglob("*.py")):
            name = ".".join(path.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__")
            found[name] = path
    return found


def _imports(path: Path, modules: dict[str, Path]) -> set[str]:
    """The project modules `path` imports, wherever the import statement stands."""
    out = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
        else:
            continue
        for name in names:
            if name.startswith("kafka_chaos."):
                name = name.removeprefix("kafka_chaos.")
                out.add(name if name in modules else name.rpartition(".")[0])
    return {m for m in out if m in modules}


def _graph() -> dict[str, set[str]]:
    modules = _modules()
    return {m: _imports(p, modules) - {m} for m, p in modules.items()}


#: Floors that must not import one another although the order would allow it: the run directory's
#: evidence is written by the harness and judged by the checkers, and what both must agree on lives
#: below both, on the history's floor (history/kraft.py, history/metadata_replay.py).
APART = {("harness", "checkers")}


def apart(graph: dict[str, set[str]]) -> list[str]:
    return [f"{m} -> {t}" for m, ts in graph.items() for t in sorted(ts) if (m.split(".")[0], t.split(".")[0]) in APART]


def test_the_harness_imports_nothing_from_the_checkers():
    assert apart(_graph()) == []


def upward(graph: dict[str, set[str]]) -> list[str]:
    """Imports of a floor above, or across a shared floor, as `importer -> imported` lines."""
    bad = []
    for m, targets in graph.items():
        here = m.split(".")[0]
        for t in sorted(targets):
            there = t.split(".")[0]
            if there != here and FLOORS[there] >= FLOORS[here]:
                bad.append(f"{m} -> {t}")
    return bad


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected groups of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while True:
                w = stack.pop()
                on.discard(w)
                group.append(w)
                if w == v:
                    break
            if len(group) > 1:
                found.append(sorted(group))

    for v in graph:
        if v not in index:
            visit(v)
    return found


def test_every_project_folder_has_a_floor():
    on_disk = {p.parent.name for p in ROOT.glob("*/__init__.py")} - {"tests"}
    assert on_disk == set(FLOORS)


def test_no_folder_imports_one_above_it():
    assert upward(_graph()) == []


def test_no_module_imports_itself_back():
    assert cycles(_graph()) == []


@pytest.mark.parametrize(
    "graph, bad",
    [
        ({"harness.run": {"workloads.runner"}, "workloads.runner": set()}, ["harness.run -> workloads.runner"]),
        ({"workloads.runner": {"nemesis.core"}, "nemesis.core": set()}, ["workloads.runner -> nemesis.core"]),
        ({"runs.run": {"workloads.runner", "checkers.check"}, "workloads.runner": set(), "checkers.check": set()}, []),
    ],
)
def test_the_floor_rule_itself(graph, bad):
    assert upward(graph) == bad


def test_the_cycle_rule_itself():
    assert cycles({"a.x": {"a.y"}, "a.y": {"a.z"}, "a.z": {"a.x"}, "a.w": {"a.x"}}) == [["a.x", "a.y", "a.z"]]
    assert cycles({"a.x": {"a.y"}, "a.y": {"a.z"}, "a.z": set()}) == []
