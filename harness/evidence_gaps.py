"""Control-plane evidence that a run expected and could not collect whole, recorded in the run
directory (control-plane/gaps.json), never only logged: the checker puts the rules that read it
into `not_checked`, and the verdict is then `unknown` (docs/checker.md).

gaps.json is a JSON object of evidence kind ("metadata", "views", "replication": history/run_dir.py)
-> one line saying why; it is absent when nothing is missing. Writers are the sampler
(harness/control_plane.py: a sampler that died or did not start) and the run (runs/run.py: the
nodes' metadata logs not decoded, all or one).
"""

from __future__ import annotations

import json
import threading
from pathlib import Path

from kafka_chaos.harness.logdump import segment_files
from kafka_chaos.harness.quorum_state import METADATA_DIR
from kafka_chaos.history.evidence import read_gaps
from kafka_chaos.history.run_dir import GAP_KINDS, RunDir

#: The sampler's threads and the run's may each record one.
_LOCK = threading.Lock()


class GapNotRecorded(RuntimeError):
    """A gap that could not be written into gaps.json: its evidence is incomplete and nothing in
    the run directory says so. Not an OSError, so that no handler of a file's trouble takes it for
    its own and drops it."""


def record_gap(run: RunDir, kind: str, why: str) -> None:
    """Add `kind`'s reason to gaps.json (a second reason for one kind is joined to the first).

    Raises GapNotRecorded when gaps.json cannot be written: a gap that could not be recorded must
    not vanish, or the check would take the evidence for whole and could pass the run on rules it
    could not check (../shared/anomalies.md, "Control plane"). The caller that must not fail the
    run at once (the sampler, harness/control_plane.py) keeps it and raises it when it stops; the
    run's evidence step (runs/run.py) lets it end the run, which then has no verdict rather than a
    wrong one."""
    if kind not in GAP_KINDS:
        raise ValueError(f"unknown evidence kind {kind!r}: expected one of {', '.join(GAP_KINDS)}")
    why = " ".join(why.split())  # one line
    with _LOCK:
        gaps = read_gaps(run)
        if why not in (gaps.get(kind) or "").split("; "):
            gaps[kind] = f"{gaps[kind]}; {why}" if gaps.get(kind) else why
        tmp = run.control_plane_gaps.with_suffix(".json.tmp")
        try:
            run.control_plane.mkdir(parents=True, exist_ok=True)
            tmp.write_text(json.dumps(gaps, indent=1, sort_keys=True) + "\n", encoding="utf-8")
            tmp.replace(run.control_plane_gaps)
        except OSError as exc:
            raise GapNotRecorded(
                f"control-plane evidence incomplete ({kind}: {why}), and {run.control_plane_gaps} could not say so:"
                f" {type(exc).__name__}: {exc}"
            ) from exc


def undecoded_logs(run: RunDir) -> list[str]:
    """The nodes whose metadata log has a segment with data but whose decoded file holds no record
    (the tool printed nothing for them): each one a per-node decoding failure."""
    out = []
    for data in run.node_data_dirs():
        alias, folder = data.parent.name, data / METADATA_DIR
        written = any((folder / name).stat().st_size > 0 for name in segment_files(folder))
        if written and not _has_records(run.metadata_log(alias)):
            out.append(alias)
    return out


def _has_records(path: Path) -> bool:
    try:
        return any(line.strip() for line in path.read_text(encoding="utf-8").splitlines())
    except OSError:
        return False
