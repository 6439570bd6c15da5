"""The control-plane section of ../shared/anomalies.md in plain Python: the oracle the Spark
checker's control-plane rules are compared with (test_cp_oracle.py).

Written from the contract's text, not from checkers/: its own replay of the metadata records, its
own pairing of faults with their undoing operations, and time walked on a 10 ms grid where the
checker computes intervals. It counts instances as results.json does: one per pair of
overlapping claims, per epoch with two leaders, per drop of a node's epoch, per diverging offset,
per record (however many logs hold it) and rule, per faulted broker or ISR member, per stuck stretch.
"""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path
from typing import Any

S = 5.0
GRID = 0.01
NS = 1e9


def _lines(path: Path) -> list[dict[str, Any]]:
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


class Oracle:
    def __init__(self, run_dir: Path) -> None:
        cp = run_dir / "control-plane"
        described = json.loads((cp / "nodes.json").read_text())
        config = json.loads((run_dir / "config.json").read_text())
        self.ids = {a: n["id"] for a, n in described["nodes"].items()}
        self.alias = {i: a for a, i in self.ids.items()}
        self.brokers = [a for a, n in described["nodes"].items() if "broker" in n["roles"]]
        self.voters = [self.alias[v] for v in described["voters"]]
        self.settings = described["settings"]
        mv = config.get("metadata_version") or config.get("kafka_version")
        major, minor = (int(x) for x in str(mv).split("-")[0].split(".")[:2])
        self.bump_on_shrink = (major, minor) < (3, 6)
        self.views = _lines(cp / "quorum-views.jsonl")
        self.samples = [s for s in _lines(cp / "quorum-replication.jsonl") if s.get("error") is None]
        self.logs = {p.stem: _lines(p) for p in sorted((cp / "metadata").glob("*.jsonl"))}
        events = _lines(run_dir / "history.jsonl")
        self.end = max(e["time"] for e in events) / NS
        self.ops = self._nemesis(events)
        self.sends = self._acknowledged_sends(events)
        self._faults = self._pair()
        self.lost: dict[str, float] = {}  # a dynamic quorum's wiped voter: its seat, lost for good
        if described.get("quorum") == "dynamic":
            for op in sorted(self.ops, key=lambda o: o["start"]):
                if op["f"] == "wipe" and op["type"] != "fail":
                    for n in op["nodes"]:
                        if n in self.voters:
                            self.lost.setdefault(n, op["start"])

    # -- the nemesis, in seconds

    def _nemesis(self, events: list[dict[str, Any]]) -> list[dict[str, Any]]:
        ops, pending = [], None
        for e in events:
            if e["process"] != "nemesis":
                continue
            if e["type"] == "invoke":
                pending = e
                continue
            v = e["value"]
            ops.append({"f": e["f"], "type": e["type"], "start": pending["time"] / NS, "done": e["time"] / NS, **v})
        return ops

    def _acknowledged_sends(self, events: list[dict[str, Any]]) -> list[tuple[float, str]]:
        """(invoke time, key) of each send of an operation that completed ok."""
        out, invoked = [], {}
        for e in events:
            if e["process"] == "nemesis":
                continue
            if e["type"] == "invoke":
                invoked[e["process"]] = e
            elif e["type"] == "ok" and isinstance(e.get("value"), list):
                start = invoked[e["process"]]["time"] / NS
                out += [(start, m[1]) for m in e["value"] if isinstance(m, list) and m and m[0] == "send"]
        return out

    def first_write(self, key: str, after: float) -> float | None:
        return min((t for t, k in self.sends if k == key and t >= after), default=None)

    def faults(self) -> list[dict[str, Any]]:
        return self._faults

    def _pair(self) -> list[dict[str, Any]]:
        """Each fault that stays in place, per node (a network fault once), with its undo."""
        out = []
        for i, op in enumerate(self.ops):
            if op["type"] == "fail" or "heals" in op:
                continue
            if op["f"] in ("wipe", "lose-unflushed"):
                for n in op["nodes"]:
                    out.append({**op, "node": n, "undone": op["done"], "healed": op["done"]})
                continue
            if not op.get("undone_by"):
                continue
            targets = [None] if op.get("grudge") else op["nodes"]
            for n in targets:
                undo = None
                for later in self.ops[i + 1 :]:
                    restarts = later["f"] in ("wipe", "lose-unflushed") or "kill" in later.get("heals", [])
                    if later["type"] != "fail" and (
                        (op["f"] in later.get("heals", []) and (n is None or n in later["nodes"]))
                        or (n is None and later.get("grudge"))
                        or (n is not None and restarts and n in later["nodes"])
                    ):
                        undo = later
                        break
                out.append(
                    {
                        **op,
                        "node": n,
                        "undone": undo["start"] if undo else self.end,
                        "healed": undo["done"] if undo else self.end,
                    }
                )
        return out

    def down(self, node: str, t: float) -> bool:
        return any(
            f["node"] == node
            and f["f"] in ("kill", "stop", "pause", "wipe", "lose-unflushed")
            and f["start"] <= t <= f["healed"]
            for f in self.faults()
        )

    def cut(self, a: str, b: str, t: float) -> bool:
        for f in self.faults():
            g = f.get("grudge") or {}
            if f["node"] is None and f["start"] <= t <= f["healed"] and (b in g.get(a, []) or a in g.get(b, [])):
                return True
        return False

    def majority(self, t: float) -> bool:
        up = [v for v in self.voters if not self.down(v, t) and not (v in self.lost and t >= self.lost[v])]
        need = len(self.voters) // 2 + 1
        best = 0
        for mask in range(1, 1 << len(up)):
            group = [up[i] for i in range(len(up)) if mask >> i & 1]
            if all(not self.cut(a, b, t) for a in group for b in group if a < b):
                best = max(best, len(group))
        return best >= need

    # -- replay

    def replay(self, log: list[dict[str, Any]]):
        """Yield (record, partition name, before, after, brokers before) for each record."""
        brokers: dict[int, dict[str, bool]] = {}
        topics: dict[str, str] = {}
        parts: dict[tuple, dict[str, Any]] = {}
        for r in sorted(log, key=lambda r: r["offset"]):
            t, d = r.get("type"), r.get("data") or {}
            snapshot = {b: dict(s) for b, s in brokers.items()}
            if t == "REGISTER_BROKER_RECORD":
                brokers[d["brokerId"]] = {
                    "fenced": d.get("fenced", True),
                    "shutdown": d.get("inControlledShutdown", False),
                    "gone": False,
                    "known": True,
                }
            elif t in ("FENCE_BROKER_RECORD", "UNFENCE_BROKER_RECORD"):
                brokers.setdefault(d["id"], {"fenced": True, "shutdown": False, "gone": False})["fenced"] = (
                    t.startswith("FENCE")
                )
            elif t == "BROKER_REGISTRATION_CHANGE_RECORD":
                b = brokers.setdefault(d["brokerId"], {"fenced": True, "shutdown": False, "gone": False})
                if d.get("fenced", 0) == 1:
                    b["fenced"] = True
                if d.get("fenced", 0) == -1:
                    b["fenced"] = False
                if d.get("inControlledShutdown", 0) == 1:
                    b["shutdown"] = True
            elif t == "UNREGISTER_BROKER_RECORD":
                brokers.setdefault(d["brokerId"], {"fenced": True, "shutdown": False, "gone": False})["gone"] = True
            elif t == "TOPIC_RECORD":
                topics[d["topicId"]] = d["name"]
            elif t == "REMOVE_TOPIC_RECORD":
                for key in [k for k in parts if k[0] == d["topicId"]]:
                    yield r, f"{topics.get(key[0], key[0])}/{key[1]}", parts.pop(key), None, False, snapshot, brokers
                continue
            elif t in ("PARTITION_RECORD", "PARTITION_CHANGE_RECORD"):
                key = (d["topicId"], d["partitionId"])
                name = f"{topics.get(d['topicId'], d['topicId'])}/{d['partitionId']}"
                before = parts.get(key)
                if t == "PARTITION_RECORD":
                    after = {
                        "leader": d.get("leader", -1),
                        "isr": list(d.get("isr", [])),
                        "le": d.get("leaderEpoch", 0),
                        "pe": d.get("partitionEpoch", 0),
                    }
                    named = True
                elif before is None:
                    continue
                else:
                    after = dict(before)
                    after["pe"] += 1
                    isr = d.get("isr")
                    if isr is not None:
                        after["isr"] = list(isr)
                    named = d.get("leader", -2) != -2
                    if named:
                        after["leader"] = d["leader"]
                    shrank = isr is not None and any(x not in isr for x in before["isr"])
                    if named or (self.bump_on_shrink and shrank):
                        after["le"] += 1
                parts[key] = after
                yield r, name, before, after, named, snapshot, brokers
                continue
            yield r, None, None, None, False, snapshot, brokers

    # -- the rules

    def record_rules(self) -> dict[str, set]:
        found: dict[str, set] = defaultdict(set)
        for log in self.logs.values():
            for r, name, before, after, named, was, _ in self.replay(log):
                if after is None:
                    continue
                ident = (name, r["offset"], json.dumps([r.get("type"), r.get("data")], sort_keys=True))
                if after["leader"] >= 0 and after["leader"] not in after["isr"]:
                    found["leader-not-in-isr"].add(ident)
                if before and (after["le"] < before["le"] or after["pe"] < before["pe"]):
                    found["partition-epoch-regression"].add(ident)
                new_leader = named and after["leader"] >= 0 and (before is None or before["leader"] != after["leader"])
                b = was.get(after["leader"])
                if new_leader and b is not None and b.get("known") and (b["fenced"] or b["shutdown"] or b["gone"]):
                    found["inactive-leader"].add(ident)
                for x in after["isr"]:
                    if (before is None or x not in before["isr"]) and was.get(x, {}).get("known") and was[x]["fenced"]:
                        found["fenced-in-isr"].add(ident + (x,))
        return found

    def claims(self) -> dict[str, list[tuple[int, float, float]]]:
        out: dict[str, list] = defaultdict(list)
        for node in self.ids:
            vs = sorted((v for v in self.views if v["node"] == node), key=lambda v: v["time"])
            starts = [
                f["start"]
                for f in self.faults()
                if f["node"] == node and f["f"] in ("kill", "stop", "pause", "wipe", "lose-unflushed")
            ]
            cur, held_down, prev = None, None, None
            for v in vs:
                seen = (v["leader_id"], v["leader_epoch"]) if v.get("error") is None else None
                if prev is not None and any(prev[0] < x <= v["time"] / NS for x in starts):
                    held_down = prev[1]  # what its file said as it went down: written back on start
                if held_down is not None and seen != held_down:
                    held_down = None
                prev = (v["time"] / NS, seen)
                mine = seen is not None and seen != held_down and v["leader_id"] == v["node_id"]
                e = v["leader_epoch"] if mine else None
                if cur and e == cur[0]:
                    cur[2] = v["time"] / NS
                    continue
                if cur:
                    out[node].append(tuple(cur))
                cur = [e, v["time"] / NS, v["time"] / NS] if e is not None else None
            if cur:
                out[node].append(tuple(cur))
        return out

    def split_brain(self) -> int:
        bound = 1.5 * self.settings["controller.quorum.fetch.timeout.ms"] / 1000 + S
        held = self.claims()
        n = 0
        nodes = sorted(held)
        for i, a in enumerate(nodes):
            for b in nodes[i + 1 :]:
                for ea, sa, xa in held[a]:
                    for eb, sb, xb in held[b]:
                        if ea == eb:
                            continue
                        t, run, best = max(sa, sb), 0.0, 0.0
                        while t <= min(xa, xb):
                            run = run + GRID if not (self.down(a, t) or self.down(b, t)) else 0.0
                            best = max(best, run)
                            t += GRID
                        if best - GRID > bound:
                            n += 1
        return n

    def double_leader(self) -> int:
        leaders: dict[int, set] = defaultdict(set)
        for v in self.views:
            if v.get("error") is None and v["leader_id"] == v["node_id"]:
                leaders[v["leader_epoch"]].add(v["leader_id"])
        for log in self.logs.values():
            for r in log:
                if (
                    str(r.get("type")).replace("_", "").upper().startswith("LEADERCHANGE")
                    and r.get("batch_epoch") is not None
                ):
                    leaders[r["batch_epoch"]].add(r["data"]["leaderId"])
        return sum(1 for s in leaders.values() if len(s) > 1)

    def epoch_regression(self) -> int:
        wipes = [op for op in self.ops if op["f"] == "wipe" and op["type"] != "fail"]
        n = 0
        for node in self.ids:
            prev = None
            for v in sorted((v for v in self.views if v["node"] == node), key=lambda v: v["time"]):
                t = v["time"] / NS
                if any(node in w["nodes"] and w["start"] <= t <= w["done"] for w in wipes):
                    prev = None  # being wiped: starts again
                    continue
                if v.get("error") is not None or v["leader_epoch"] is None:
                    continue
                if prev is not None and v["leader_epoch"] < prev:
                    n += 1
                prev = v["leader_epoch"]
        return n

    def final_hw(self) -> int | None:
        return max(self.samples, key=lambda s: s["time"])["high_watermark"] if self.samples else None

    def divergence(self) -> int:
        hw = self.final_hw()
        if hw is None:
            return 0
        last = max(self.samples, key=lambda s: s["time"])
        fetched: dict[int, int] = {}  # an id listed twice (a wiped voter's old seat and its observer): the larger
        for m in last.get("voters", []) + last.get("observers", []):
            fetched[m["id"]] = max(fetched.get(m["id"], -1), m["log_end_offset"])
        led: dict[int, int] = {}  # a leader's highest high watermark: what it held below was committed
        for sample in self.samples:
            if sample.get("leader_id") is not None and sample.get("high_watermark") is not None:
                led[sample["leader_id"]] = max(led.get(sample["leader_id"], -1), sample["high_watermark"])
        at: dict[int, set] = defaultdict(set)
        for alias, log in self.logs.items():
            node_id = self.ids.get(alias)
            upto = min(hw, max(fetched.get(node_id, -1), led.get(node_id, -1)))
            for r in log:
                if r["offset"] < upto:
                    at[r["offset"]].add(
                        json.dumps(
                            [r.get("type"), r.get("version"), r.get("data"), r.get("raw"), r.get("batch_epoch")],
                            sort_keys=True,
                        )
                    )
        return sum(1 for s in at.values() if len(s) > 1)

    def hw_at(self, t: float) -> int | None:
        """The first sample's at or after `t`."""
        later = [s for s in sorted(self.samples, key=lambda s: s["time"]) if s["time"] / NS >= t]
        return later[0]["high_watermark"] if later else None

    def reference(self) -> list[dict[str, Any]]:
        return max(self.logs.values(), key=lambda log: max((r["offset"] for r in log), default=-1), default=[])

    def state_below(self, offset: int, t: float):
        """(brokers, partitions by name) after the reference log's records below `offset` written by `t`."""
        brokers, parts = {}, {}
        log = [r for r in self.reference() if r["offset"] < offset and r["time"] / NS <= t]
        for _r, name, _, after, _, _, now in self.replay(log):
            brokers = now
            if name and after is None:
                parts.pop(name, None)
            elif name:
                parts[name] = after
        return brokers, parts

    def partitions_at_time(self, t: float) -> dict[str, dict[str, Any]]:
        parts = {}
        for _r, name, _, after, _, _, _ in self.replay([r for r in self.reference() if r["time"] / NS <= t]):
            if name and after is None:
                parts.pop(name, None)
            elif name:
                parts[name] = after
        return parts

    def unfenced_down(self) -> int:
        n = 0
        for f in self.faults():
            if f["f"] not in ("kill", "stop", "pause") or f["type"] != "ok" or f["node"] not in self.brokers:
                continue
            t = f["done"]
            while t < f["undone"] and not self.majority(t):
                t += GRID
            if t >= f["undone"]:
                continue
            deadline = t + self.settings["broker.session.timeout.ms"] / 1000 + S
            hw = self.hw_at(deadline)
            if deadline >= f["undone"] or hw is None:
                continue
            brokers, _ = self.state_below(hw, deadline)
            b = brokers.get(self.ids[f["node"]])
            if b is not None and not b["fenced"] and not b["gone"]:
                n += 1
        return n

    def stale_isr(self) -> int:
        n = 0
        lag = 1.5 * self.settings["replica.lag.time.max.ms"] / 1000 + S
        for f in self.faults():
            if f["type"] != "ok" or not (f["f"] in ("kill", "stop", "pause") or f["node"] is None):
                continue
            effect = f["done"]
            g = f.get("grudge") or {}
            for name, p in self.partitions_at_time(effect).items():
                written = self.first_write(name, effect)
                if p["leader"] < 0 or written is None:
                    continue
                deadline = written + lag
                if deadline >= f["undone"]:
                    continue
                leader = self.alias[p["leader"]]
                for x in p["isr"]:
                    follower = self.alias[x]
                    if x == p["leader"]:
                        continue
                    if f["node"] is not None and f["node"] != follower:
                        continue
                    if f["node"] is None and (
                        f.get("listener") == "CONTROLLER"  # the controller listener alone: replication goes on
                        or not (leader in g.get(follower, []) or follower in g.get(leader, []))
                    ):
                        continue
                    if self._leader_changed(name, p["leader"], effect, deadline) or self._impaired(
                        leader, effect, deadline
                    ):
                        continue
                    hw = self.hw_at(deadline)
                    if hw is None:
                        continue
                    _, parts = self.state_below(hw, deadline)
                    if x in parts.get(name, {}).get("isr", []):
                        n += 1
        return n

    def _leader_changed(self, name: str, leader: int, a: float, b: float) -> bool:
        for r, n, _, after, _, _, _ in self.replay(self.reference()):
            if n == name and a < r["time"] / NS <= b and (after is None or after["leader"] != leader):
                return True
        return False

    def _impaired(self, leader: str, a: float, b: float) -> bool:
        controllers = set()
        for v in self.views:
            if a <= v["time"] / NS <= b and v.get("error") is None and v["leader_id"] == v["node_id"]:
                controllers.add(v["node"])
        latest = {}
        for v in sorted(self.views, key=lambda v: v["time"]):
            if v["time"] / NS <= a:
                latest[v["node"]] = v
        first = [
            (v["leader_epoch"], node)
            for node, v in latest.items()
            if v.get("error") is None and v["leader_id"] == v["node_id"] and not self.down(node, a)
        ]
        if first:
            controllers.add(max(first)[1])
        t = a
        while t <= b:
            if self.down(leader, t) or any(self.down(c, t) or self.cut(leader, c, t) for c in controllers):
                return True
            t += 0.25
        return False

    def stuck(self) -> int:
        fs = [f for f in self.faults() if f["f"] not in ("wipe", "lose-unflushed")]
        if any(f["undone"] >= self.end for f in fs):
            return 0
        undos = [op["done"] for op in self.ops if "heals" in op and op["type"] != "fail"]
        undos += [f["done"] for f in self.faults() if f["f"] in ("wipe", "lose-unflushed")]
        after = max(undos, default=0.0)
        n = 0
        for node in self.brokers:
            series = []
            for s in sorted(self.samples, key=lambda s: s["time"]):
                if s["time"] / NS < after:
                    continue
                for m in s["voters"] + s["observers"]:
                    if m["id"] == self.ids[node]:
                        series.append((s["time"] / NS, m["log_end_offset"], s["high_watermark"]))
            i = 0
            while i < len(series):
                t0, leo, hw = series[i]
                if not (0 <= leo < hw):
                    i += 1
                    continue
                j = i
                while j + 1 < len(series) and series[j + 1][1] == leo and series[j + 1][1] < series[j + 1][2]:
                    j += 1
                if series[j][0] - t0 > 30 + S:
                    n += 1
                i = j + 1
        return n


def check(run_dir: Path) -> dict[str, int]:
    """name -> its instances in the run directory (names with none left out)."""
    o = Oracle(run_dir)
    counts = {
        "quorum-split-brain": o.split_brain(),
        "quorum-double-leader": o.double_leader(),
        "quorum-epoch-regression": o.epoch_regression(),
        "metadata-divergence": o.divergence(),
        **{name: len(found) for name, found in o.record_rules().items()},
        "unfenced-down-broker": o.unfenced_down(),
        "stale-isr-member": o.stale_isr(),
        "stuck-broker-metadata": o.stuck(),
    }
    return {name: n for name, n in counts.items() if n}
