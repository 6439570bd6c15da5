"""A run directory's layout, as a comparable value: which files a run writes, the keys (and the
kind of each value) of config.json, summary.json and results.json, and the keys of `run --json`.
What `test_run_dir_layout.py` holds a run of today's code to, against one of the code before the
run pipeline was made one (issue 35): `python -m tests.integration.run_dir_layout RUN_DIR JSON`
prints it."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

#: The command both runs are made with (the store and the Kafka version come after it).
COMMAND = ["run", "--time-limit", "12", "--nemesis", "kill,pause", "--nemesis-interval", "3", "--seed", "5", "--check"]
COMMAND += ["--json", "--quiet", "--name", "layout"]


def shape(value: Any, depth: int = 2) -> Any:
    """Keys and kinds, `depth` levels down: {"seed": "int", "shape": {"nodes": "int", ...}}."""
    if isinstance(value, dict) and depth > 0:
        return {k: shape(v, depth - 1) for k, v in sorted(value.items())}
    return type(value).__name__


def layout(run_dir: Path, printed: dict[str, Any]) -> dict[str, Any]:
    files = sorted(p.name for p in run_dir.iterdir())
    nodes = sorted(f"{n.name}/{p.name}" for n in (run_dir / "cluster").iterdir() for p in n.iterdir())
    read = {name: json.loads((run_dir / name).read_text()) for name in ("config.json", "summary.json", "results.json")}
    return {
        "files": files,
        "cluster": nodes,
        **{name: shape(data) for name, data in read.items()},
        "printed": shape(printed),
    }


def comparable(made: dict[str, Any]) -> dict[str, Any]:
    """What must not change between two runs of the same command: config.json's keys and kinds
    two levels down; summary.json's and results.json's keys (their counts and the liveness
    warning's presence depend on how the run went: a run that stalled has a warning string where
    a steady one has null); the keys `run --json` prints, two levels down."""

    def keys(value: Any) -> Any:
        return sorted(value) if isinstance(value, dict) else value

    results = made["results.json"]
    return {
        "files": made["files"],
        "cluster": made["cluster"],
        "config.json": made["config.json"],
        "summary.json": keys(made["summary.json"]),
        "results.json": {k: keys(v) if k == "liveness" else "" for k, v in results.items()},
        "printed": {k: keys(v) for k, v in made["printed"].items()},
    }


if __name__ == "__main__":
    print(json.dumps(layout(Path(sys.argv[1]), json.loads(Path(sys.argv[2]).read_text())), indent=1, sort_keys=True))
