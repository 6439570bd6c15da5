"""What a share rule needs from outside its key: each share-poll's settings, each process's end,
and each key's leader changes. Small (a row per poll and per process), collected once before the
per-key pass and handed to it, as `evidenced` is (checkers/data_plane/per_key.py).

A process's hold on a delivered value surely lasts until the earliest of its lock's end less the
slack (*i* + *L* − *S*), its first share-ack naming the value, its crash or close, and its end: an
`info` after which it is rebuilt (that operation's completion), or else the end of the history.
"""

from __future__ import annotations

import bisect
import json
from dataclasses import dataclass
from typing import Any

from pyspark.sql import DataFrame

from kafka_chaos.checkers.share.leaders import Leaders
from kafka_chaos.history.events import CLOSE, CRASH, INFO, NEMESIS, SHARE_POLL
from kafka_chaos.history.kraft import SLACK_S

NS = 1_000_000_000


@dataclass(frozen=True)
class ShareContext:
    #: share-poll op -> (L: the lock in ms, D: the delivery limit), from its invoke
    settings: dict[int, tuple[float | None, float | None]]
    #: process -> its crash and close invokes (ns), sorted
    stops: dict[str, list[int]]
    #: process -> when it ended (ns): the completion of its last operation if that was `info`
    ends: dict[str, int]
    #: the history's last time (ns): a process that did not end sooner lasted until it
    end_ns: int
    #: key -> its partition's leader changes and share-partition reloads (ns, sorted); None: no
    #: control-plane evidence (judged as if none)
    changes: dict[str, list[int]] | None = None
    slack_ns: int = int(SLACK_S * NS)
    #: why the leader changes or reloads are unknown (None: known, or a bare history): what only
    #: one could excuse is then excused, counted, and the verdict made unknown (view.py UNVERIFIED)
    unknown: str | None = None
    #: what was known of them, for results.json (leaders.py)
    leaders: Leaders = Leaders(bare=True)

    def hold_cap(self, process: str, after: int) -> int:
        """When `process`'s holds taken at `after` surely end at the latest, whatever they were."""
        stops = self.stops.get(process, [])
        at = bisect.bisect_left(stops, after)
        cap = stops[at] if at < len(stops) else self.end_ns
        return min(cap, self.ends.get(process, self.end_ns))

    def changes_of(self, key: str) -> list[int]:
        return (self.changes or {}).get(key, [])

    def blind_to_concurrency(self) -> str | None:
        """Why `share-concurrent-delivery` could not fire, if it could not: a hold surely lasts
        from its poll's completion until at most *i* + *L* − *S*, empty unless L > S. None when
        some poll's lock was longer than the slack (or no poll said its lock)."""
        locks = [lock for lock, _ in self.settings.values() if lock is not None]
        if not locks or max(locks) * 1e6 > self.slack_ns:
            return None
        return (
            f"share-concurrent-delivery could not fire: no share-poll's lock ({max(locks) / 1000:g} s) was"
            f" longer than the slack S ({self.slack_ns / NS:g} s), so no hold surely lasted past its poll"
        )


def queries(ops: DataFrame) -> dict[str, DataFrame]:
    """The context's Spark queries, for one collect (checkers/parts.py)."""
    clients = ops.where(f"process != '{NEMESIS}'")
    return {
        "share_settings": clients.where(f"f = '{SHARE_POLL}'").selectExpr("op", "nvalue"),
        "share_stops": clients.where(f"f IN ('{CRASH}', '{CLOSE}')").selectExpr("process", "itime"),
        "share_lasts": clients.selectExpr(
            "process",
            "`type`",
            "coalesce(ctime, itime) AS t",
            "row_number() OVER (PARTITION BY process ORDER BY op DESC) AS latest",
        ).where("latest = 1"),
    }


def from_rows(got: dict[str, list[dict[str, Any]]], end_ns: int, leaders: Leaders | None = None) -> ShareContext:
    """The context of the queries' rows; `leaders`: the run's leader changes and reloads
    (checkers/share/leaders.py; None: a bare history)."""
    leaders = leaders or Leaders(bare=True)
    changes = None if leaders.bare else leaders.merged()
    settings = {}
    for r in got["share_settings"]:
        settings[int(r["op"])] = _settings(r["nvalue"])
    stops: dict[str, list[int]] = {}
    for r in got["share_stops"]:
        stops.setdefault(str(r["process"]), []).append(int(r["itime"]))
    ends = {str(r["process"]): int(r["t"]) for r in got["share_lasts"] if r["type"] == INFO and r["t"] is not None}
    return ShareContext(
        settings,
        {p: sorted(t) for p, t in stops.items()},
        ends,
        end_ns,
        changes,
        unknown=leaders.unknown,
        leaders=leaders,
    )


def _settings(nvalue: str | None) -> tuple[float | None, float | None]:
    """(L, D) of a share-poll's invoke value `[["share-poll", {"lock_ms": L, "delivery_limit": D, ...}]]`."""
    try:
        settings = json.loads(nvalue or "null")[0][1]
        return _number(settings.get("lock_ms")), _number(settings.get("delivery_limit"))
    except (ValueError, TypeError, IndexError, KeyError, AttributeError):
        return None, None


def _number(x: Any) -> float | None:
    return float(x) if isinstance(x, int | float) and not isinstance(x, bool) else None
