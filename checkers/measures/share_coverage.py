"""Share coverage: for how much of a share run every key was being delivered to some member.

A share group has no assignment to read (any member may be handed any key's records), so what
coverage means is what the members got: a key is *being delivered* from a `share-poll`
completion that returned records of it until DELIVERY_WINDOW_S later. A key whose records
stopped coming (its leader down, its share coordinator paused, the members gone) is uncovered
from then until its next delivery. With steady writes, every key has records to hand out, so a
gap is the group failing to deliver, not the key being idle.

Over the workload phase (as checkers/measures/group_coverage.py bounds it), the same measures as
a consumer group's from the same sweep: `every_key_share`, `some_key_share`,
`longest_unheld_s`, `polls_with_records`, and each key's delivery spans by member for the
report's strip (members as colours, fault bands behind). Two members delivering one key at once
is how a share group works, so no double-holding is reported.
"""

from __future__ import annotations

from collections import defaultdict
from typing import TYPE_CHECKING, Any

from kafka_chaos.checkers.measures.group_coverage import _LIVE, span_rows, sweep
from kafka_chaos.history.events import CLIENT_FS, SHARE_ACK, SHARE_POLL

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

#: How long one delivery of a key counts as the key being delivered.
DELIVERY_WINDOW_S = 1.0
MODE = "share"


def query(ops: DataFrame, micro: DataFrame) -> dict[str, DataFrame]:
    """Each share-poll completion outside the final drain and the keys it returned records of,
    and the workload's bounds, as parts of the checker's one collect."""
    live = ops.where(_LIVE)
    polls = live.where(f"f = '{SHARE_POLL}' AND `type` = 'ok' AND ctime IS NOT NULL").select("op", "process", "ctime")
    keys = micro.where("kind = 'deliver'").select("op", "key").distinct()
    delivered = polls.join(keys, "op").selectExpr("key", "process", "ctime / 1e9 AS t")
    fs = ", ".join(f"'{f}'" for f in (*CLIENT_FS, SHARE_POLL, SHARE_ACK))
    bounds = live.selectExpr("min(itime) / 1e9 AS start", f"max(CASE WHEN f IN ({fs}) THEN itime END) / 1e9 AS `end`")
    sent = micro.where("kind IN ('send', 'deliver')").select("key").distinct()
    return {"share.keys": sent, "share.delivered": delivered, "share.bounds": bounds}


def from_rows(got: dict[str, list[dict[str, Any]]], keys: list[str] | None = None) -> dict[str, Any] | None:
    """The measures of `query`'s rows over `keys` (the run's, or every key sent or delivered);
    None for a run without share deliveries' bounds."""
    if keys is None:
        keys = sorted({r["key"] for r in got.get("share.keys", []) if r["key"] is not None})
    bounds = (got.get("share.bounds") or [{}])[0]
    if bounds.get("start") is None:
        return None
    deliveries = [(str(r["key"]), r["process"], float(r["t"])) for r in got.get("share.delivered", [])]
    return measure(deliveries, keys, float(bounds["start"]), float(bounds.get("end") or bounds["start"]))


def measure(deliveries: list[tuple[str, Any, float]], keys: list[str], start: float, end: float) -> dict[str, Any]:
    """From (key, member, completion s) of every share-poll that returned records of the key."""
    end = max(end, start)
    held = spans_by_member(deliveries, start, end)
    out = sweep(keys, held, start, end, what="delivered to")
    out.pop("double_held_s")
    out["mode"] = MODE
    out["polls_with_records"] = len({(m, t) for _, m, t in deliveries})
    out["spans"] = span_rows(held, keys)
    return out


def spans_by_member(
    deliveries: list[tuple[str, Any, float]], start: float, end: float
) -> dict[str, list[tuple[float, float, Any]]]:
    """Each key's delivery spans, [t, t + DELIVERY_WINDOW_S] within the workload, one member's
    overlapping ones merged: (from s, until s, member)."""
    runs: dict[tuple[str, Any], list[list[float]]] = defaultdict(list)
    for key, member, t in sorted(deliveries, key=lambda d: (d[0], str(d[1]), d[2])):
        a, b = max(t, start), min(t + DELIVERY_WINDOW_S, end)
        if b <= a:
            continue
        mine = runs[(key, member)]
        if mine and a <= mine[-1][1]:
            mine[-1][1] = max(mine[-1][1], b)
        else:
            mine.append([a, b])
    spans: dict[str, list[tuple[float, float, Any]]] = defaultdict(list)
    for (key, member), mine in runs.items():
        spans[key] += [(a, b, member) for a, b in mine]
    return spans
