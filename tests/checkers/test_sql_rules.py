"""The data-plane rules' Spark SQL forms (each rule module's `query`) against their pandas forms.

Both paths live while the SQL one is new (issue 49): this test holds them to the same instance
rows and the same tallies on one history made of every hand-made case of the anomaly table (each
with its keys renamed apart, so each case is judged on its own), a share history, a control-plane
run's nemesis and commits, and a concurrent transactional one.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kafka_chaos.checkers import load, parts, tables
from kafka_chaos.checkers.anomalies import INSTANCES
from kafka_chaos.checkers.check import facts_query
from kafka_chaos.checkers.data_plane import per_key
from kafka_chaos.checkers.data_plane.tallies import PREFIX
from kafka_chaos.checkers.share import context as share_context
from kafka_chaos.history.events import ASSIGNS, COMMIT, SHARE_POLL
from tests.checkers.concurrent_txns import generate
from tests.checkers.test_columns import BUILDERS, _nemesis_history, _one_history, _share_history

pytestmark = [pytest.mark.spark, pytest.mark.slow]

WIDTH = 10**9  # the report's time bucket, ns


def _renamed(events: list[dict], prefix: str) -> list[dict]:
    """The events with every key renamed `prefix` + key, wherever the format puts one."""

    def micro(m):
        if isinstance(m, list) and len(m) >= 2:
            if isinstance(m[1], str):
                return [m[0], prefix + m[1], *m[2:]]
            if isinstance(m[1], dict):
                return [m[0], {prefix + k: v for k, v in m[1].items()}, *m[2:]]
        return m

    out = []
    for e in events:
        v = e.get("value")
        settings = e["f"] == SHARE_POLL and e["type"] == "invoke"  # the group's settings, not keys
        if e.get("process") == "nemesis" or v is None or settings:
            out.append(e)
        elif e["f"] in ASSIGNS and isinstance(v, list):
            out.append({**e, "value": [prefix + k for k in v]})
        elif e["f"] == COMMIT and isinstance(v, dict):
            out.append({**e, "value": {prefix + k: x for k, x in v.items()}})
        elif isinstance(v, list):
            out.append({**e, "value": [micro(m) for m in v]})
        else:
            out.append(e)
    return out


def _history(tmp_path: Path) -> Path:
    built = [b(bad).events for b in BUILDERS for bad in (False, True)]
    txns = tmp_path / "txns.jsonl"
    generate(txns, 300, 4, 4)
    built += [_nemesis_history().events, _share_history().events]
    built.append([json.loads(line) for line in txns.read_text().splitlines()])
    events = _one_history([_renamed(h, f"{i}:") for i, h in enumerate(built)])
    path = tmp_path / "history.jsonl"
    path.write_text("".join(json.dumps(e) + "\n" for e in events), encoding="utf-8")
    return path


def _rows(df) -> list[str]:
    out = []
    for r in df.collect():
        d = r.asDict()
        if d["name"].startswith(PREFIX):
            continue  # summed below: the pandas path has a row per key, the SQL one per name
        if d["name"].startswith("~"):  # a key's edges: a set of pairs
            ops = d["ops"]
            d["ops"] = sorted(zip(ops[::2], ops[1::2], strict=True))
        out.append(json.dumps(d, sort_keys=True))
    return sorted(out)


def _tallies(df) -> dict[tuple[str, int], int]:
    got: dict[tuple[str, int], int] = {}
    for r in df.where(f"startswith(name, '{PREFIX}')").collect():
        for slot, n in zip(r["offsets"], r["values"], strict=True):
            got[(r["name"], slot)] = got.get((r["name"], slot), 0) + n
    return {k: n for k, n in got.items() if n}


def test_the_sql_rules_find_what_the_pandas_rules_find(spark_session, tmp_path: Path):
    path = _history(tmp_path)
    fl = tables.split(tables.flat(tables.pair(load.load(spark_session, path).events)))
    first = parts.collect({"facts": facts_query(fl.ops), "evidenced": tables.evidenced_ops(fl.micro)})
    evidenced = [r["op"] for r in first["evidenced"]]
    end = first["facts"][0]["end"] or 0
    share = share_context.from_rows(parts.collect(share_context.queries(fl.ops)), end, None)
    by_pandas = fl.micro.groupBy("key").applyInPandas(per_key.key_pass(evidenced, WIDTH, share), INSTANCES)
    by_sql = per_key.rules_query(fl.micro, evidenced, WIDTH, share)
    want = _rows(by_pandas)
    assert len({json.loads(r)["name"] for r in want}) > 20  # the cases found most anomalies
    assert _rows(by_sql) == want
    assert _tallies(by_sql) == _tallies(by_pandas)
