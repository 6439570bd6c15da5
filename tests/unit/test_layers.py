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


#: checkers/'s rooms, by what they judge or draw, and the rooms each may import ("core": the
#: pipeline's own modules at checkers/'s top; checkers/check.py, which runs them all, may import
#: every room). The control plane's rules import nothing but the core: its room is the whole of it.
ROOMS = {
    "core": {"data_plane"},  # spark.py warms the per-key pass it runs in Python workers
    "data_plane": {"share"},  # the per-key pass builds each key's share-group view beside its order
    "share": set(),
    "txn": {"data_plane"},  # the cycles' edges stand on each key's version order
    "control_plane": set(),
    "measures": set(),
    "report": {"measures"},  # the report draws the fault windows and the group's coverage
}


def _room(module: str) -> str | None:
    parts = module.split(".")
    if parts[0] != "checkers":
        return None
    if len(parts) > 1 and parts[1] == "check":
        return "check"
    return parts[1] if len(parts) > 2 and parts[1] in ROOMS else "core"


def rooms_crossed(graph: dict[str, set[str]]) -> list[str]:
    bad = []
    for m, targets in graph.items():
        here = _room(m)
        if here is None or here == "check":
            continue
        for t in sorted(targets):
            there = _room(t)
            if there is not None and there not in (here, "core") and there not in ROOMS[here]:
                bad.append(f"{m} -> {t}")
    return bad


def test_each_room_of_the_checkers_imports_only_what_it_may():
    assert rooms_crossed(_graph()) == []
    folders = {p.name for p in (ROOT / "checkers").iterdir() if (p / "__init__.py").is_file()}
    assert folders == set(ROOMS) - {"core"}


def test_a_room_that_reaches_into_another_is_caught():
    assert rooms_crossed({"checkers.control_plane.rules": {"checkers.report.page"}}) == [
        "checkers.control_plane.rules -> checkers.report.page"
    ]
    assert rooms_crossed({"checkers.txn.cycles": {"checkers.data_plane.version_order", "checkers.anomalies"}}) == []


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
