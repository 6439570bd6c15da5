"""The control plane's eleven rules as data: for each anomaly of ../shared/anomalies.md ("Control
plane"), the evidence it reads, its bound (a formula of the run's settings and the slack S) and
the function that finds its instances, in one row, as the data plane's `Policy` table is
(checkers/anomalies.py). `judge` is a loop over the rows; docs/checker.md's table is
`markdown_table()` (a test keeps the two in step).

A rule whose evidence is missing, or that the run said it could not collect whole
(control-plane/gaps.json), is not run: it goes into `not_checked` with the reason, and so does a
rule that ran on less than it needs (a deadline after the last sample, a run that ended before
its window elapsed). Never silently less: the verdict reads `not_checked`.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from kafka_chaos.checkers.control_plane import fault_timing, node_faults, quorum_rules
from kafka_chaos.history.kraft import SLACK_S, STUCK_S

#: The evidence a rule reads, by the names control-plane/gaps.json gives them, and the nodes' ids.
VIEWS = "views"  # quorum-views.jsonl: each node's own quorum-state
METADATA = "metadata"  # metadata/<alias>.jsonl: every node's decoded metadata log
REPLICATION = "replication"  # quorum-replication.jsonl: DescribeQuorum
IDS = "ids"  # nodes.json: each node's id and roles, the voters
NEMESIS = "nemesis"  # the history's nemesis operations, each with its effect on its nodes
EVIDENCE_TEXT = {
    NEMESIS: "the nemesis's operations",
    VIEWS: "each node's quorum view",
    METADATA: "the metadata logs",
    REPLICATION: "the quorum's replication samples",
    IDS: "the nodes' ids (nodes.json)",
}

NS = 1_000_000_000
Found = list[dict[str, Any]]


@dataclass
class Context:
    """What the rules read, collected once per check (checkers/control_plane/judge.py `judge`)."""

    got: dict[str, list[dict[str, Any]]]  # the collected Spark queries (cp_*)
    ops: list[node_faults.NemesisOp]
    #: the fault windows, settings, views, samples and states the timing rules read
    timing: fault_timing.Evidence
    logs: dict[str, Any]  # alias -> its decoded log's path (which nodes' logs exist)
    #: the rule -> why it was checked on less than it needs (filled by the finders too)
    not_checked: dict[str, str] = field(default_factory=dict)

    @property
    def settings(self) -> dict[str, int]:
        return self.timing.settings

    @property
    def ws(self) -> list[node_faults.Window]:
        return self.timing.ws

    @property
    def end(self) -> int:
        """The end of the evidence (the history's, or the samples' after it)."""
        return self.timing.end

    @property
    def views(self) -> list[dict[str, Any]]:
        return self.timing.views

    @cached_property
    def record_hits(self) -> dict[str, Found]:
        """The record rules' hits by rule, merged once for the four of them."""
        return _record_hits(self.got.get("cp_replay", []))

    @property
    def samples(self) -> list[dict[str, Any]]:
        return self.timing.samples


@dataclass(frozen=True)
class Rule:
    """One control-plane anomaly: what it reads, its bound, the function that finds it."""

    name: str
    #: the evidence it reads (VIEWS, METADATA, REPLICATION, IDS): all of it, or any one (`any_of`)
    reads: tuple[str, ...]
    find: Callable[[Context], Found]
    #: where the finder lives, for the docs
    module: str
    #: the bound in seconds from the run's settings (ms values); None for a rule without one
    bound: Callable[[dict[str, int]], float] | None = None
    #: the bound as docs/checker.md writes it
    bound_text: str = ""
    any_of: bool = False

    def missing(self, absent: dict[str, str | None], gaps: dict[str, str]) -> str | None:
        """Why the rule cannot run (None: it can): evidence it reads that the run collected only in
        part (`gaps`), or evidence it needs that is absent (all of it, or with `any_of` every kind)."""
        partial = [gaps[k] for k in self.reads if k in gaps]
        if partial:
            return partial[0]
        why = [absent[k] for k in self.reads if absent.get(k)]
        if self.any_of:
            return "; ".join(why) if len(why) == len(self.reads) else None
        return why[0] if why else None


def _s(t: Any) -> float | None:
    return None if t is None else round(int(t) / 1e9, 3)


def _bound_ns(ctx: Context, name: str) -> int:
    rule = BY_NAME[name]
    assert rule.bound is not None
    return int(rule.bound(ctx.settings) * NS)


def split_brain(ctx: Context) -> Found:
    name = "quorum-split-brain"
    found, judged = quorum_rules.split_brain(ctx.views, ctx.ws, _bound_ns(ctx, name), ctx.timing.wakes)
    for entry in judged:
        ctx.timing.note(name, entry)
    return found


def double_leader(ctx: Context) -> Found:
    return [
        {
            "epoch": r["epoch"],
            "leaders": sorted({c["leader"] for c in r["claims"]}),
            "claims": [
                {"node": c["node"], "leader": c["leader"], "time_s": _s(c["time"]), "source": c["source"]}
                for c in r["claims"][:6]
            ],
        }
        for r in sorted(ctx.got.get("cp_double", []), key=lambda r: r["epoch"])
    ]


def epoch_regression(ctx: Context) -> Found:
    return [
        {
            "node": r["node"],
            "epochs": [r["previous"], r["leader_epoch"]],
            "from_s": _s(r["previous_time"]),
            "time_s": _s(r["time"]),
        }
        for r in sorted(ctx.got.get("cp_regressions", []), key=lambda r: (r["time"], r["node"]))
    ]


def divergence(ctx: Context) -> Found:
    """Offsets two nodes' logs hold differently below the final high watermark (judge.divergence),
    by the contract amended 2026-12-06: only where both records carry the same epoch, or the node
    whose record differs from the final quorum leader's fetched from that leader past that offset
    (a node cut off or down may hold an uncommitted tail of an older epoch until its next fetch)."""
    last = max(ctx.samples, key=lambda s: s["time"], default=None)
    final = last.get("leader_id") if last is not None else None
    by_id = {i: a for a, i in ctx.timing.aliases.items()}
    leader = by_id.get(final) if final is not None else None
    fetched: dict[str, int] = {}  # node -> the furthest log end it was seen at while `leader` led
    for m in ctx.timing.members:
        node = by_id.get(m["id"])
        if node is not None and m.get("leader_id") == final and m["log_end_offset"] is not None:
            fetched[node] = max(fetched.get(node, -1), m["log_end_offset"])
    out = []
    for r in sorted(ctx.got.get("cp_divergence", []), key=lambda r: r["offset"]):
        records = r["records"]
        ref = next((x for x in records if x["node"] == leader), None)

        def differs(x: dict[str, Any], ref: dict[str, Any] | None = ref) -> bool:
            return ref is not None and x["fingerprint"] != ref["fingerprint"]

        def judged(x: dict[str, Any], y: dict[str, Any], offset: int = r["offset"]) -> bool:
            if x["batch_epoch"] == y["batch_epoch"]:
                return True
            return any(differs(n) and fetched.get(n["node"], -1) > offset for n in (x, y))

        pairs = [(x, y) for i, x in enumerate(records) for y in records[i + 1 :]]
        pairs = [(x, y) for x, y in pairs if x["fingerprint"] != y["fingerprint"]]
        if not any(judged(x, y) for x, y in pairs):
            continue
        out.append(
            {
                "offset": r["offset"],
                "high_watermark": r["final_hw"],
                "records": {
                    x["node"]: f"{x['type']} {x['data']}"
                    + (f" (epoch {x['batch_epoch']})" if x["batch_epoch"] is not None else "")
                    for x in records
                },
            }
        )
    return out


def record_rule(name: str) -> Callable[[Context], Found]:
    """A record rule's hits, found by the per-node replay (checkers/control_plane/metadata_rules.py)."""

    def find(ctx: Context) -> Found:
        return ctx.record_hits.get(name, [])

    find.__name__ = f"record_rule({name})"
    return find


def _record_hits(rows: list[dict[str, Any]]) -> dict[str, Found]:
    """The record rules' hits, one per record however many nodes' logs hold it."""
    merged: dict[tuple, dict[str, Any]] = {}
    for r in rows:
        if r["kind"] != "hit":
            continue
        key = (r["name"], r["subject"], r["offset"], r["record"], r["detail"])
        if key not in merged:
            detail = json.loads(r["detail"]) if r["detail"] else {}
            merged[key] = {
                "partition": r["subject"],
                "offset": r["offset"],
                "time_s": _s(r["time"]),
                "record": r["record"],
                **detail,
                "nodes": [],
            }
        merged[key]["nodes"] = sorted({*merged[key]["nodes"], r["node"]})
    out: dict[str, Found] = {}
    for (name, *_), ex in sorted(merged.items(), key=lambda kv: (kv[0][0], kv[1]["offset"])):
        out.setdefault(name, []).append(ex)
    return out


def unfenced_down_broker(ctx: Context) -> Found:
    return fault_timing.unfenced_down_broker(ctx.timing, _bound_ns(ctx, "unfenced-down-broker"), ctx.not_checked)


def stale_isr_member(ctx: Context) -> Found:
    return fault_timing.stale_isr_member(ctx.timing, _bound_ns(ctx, "stale-isr-member"), ctx.not_checked)


def stuck_broker_metadata(ctx: Context) -> Found:
    """From the last undo's completion (or a restart's: a wiped node fetches from nothing); not
    checked when a fault was still in place at the end, or when the samples stop before the bound
    could elapse after the last undo while some broker was not yet seen fetching since it."""
    name = "stuck-broker-metadata"
    open_at_end = [w for w in ctx.ws if w.undone >= ctx.end and w.does not in node_faults.RESTARTS]
    if open_at_end:
        w = open_at_end[0]
        ctx.not_checked[name] = f"{w.f} of {w.node or 'the network'} (op {w.op}) still in place when the run ended"
        return []
    undos = [op.ctime or op.itime for op in ctx.ops if op.heals is not None and op.type != "fail"]
    restarts = [w.healed for w in ctx.ws if w.does in node_faults.RESTARTS]
    faulted = bool(undos or restarts)
    last = max([*undos, *restarts], default=0)
    need = _bound_ns(ctx, name)
    found = fault_timing.stuck_broker_metadata(ctx.timing, last, need, name)
    sampled_until = max((s["time"] for s in ctx.samples), default=None)
    if faulted and not found and (sampled_until is None or sampled_until - last < need):
        # Short of the window, the answer is known once every broker was seen fetching since the
        # heal (a run stops sampling then: harness/control_plane.py).
        behind = fault_timing.behind_since(ctx.timing, last)
        if behind:
            after = 0.0 if sampled_until is None else max(0.0, (sampled_until - last) / NS)
            ctx.not_checked[name] = (
                f"the replication samples end {after:.1f} s after the last heal, before the rule's {need / NS:g} s,"
                f" with {', '.join(behind)} not seen fetching since"
            )
    return found


RULES: tuple[Rule, ...] = (
    Rule(
        "quorum-split-brain",
        (VIEWS, NEMESIS),
        split_brain,
        "checkers/control_plane/quorum_rules.py",
        lambda s: 1.5 * s["controller.quorum.fetch.timeout.ms"] / 1000 + SLACK_S,
        "1.5 × `controller.quorum.fetch.timeout.ms` + S (+ the host stall)",
    ),
    Rule("quorum-double-leader", (VIEWS, METADATA), double_leader, "checkers/control_plane/judge.py", any_of=True),
    Rule("quorum-epoch-regression", (VIEWS, NEMESIS), epoch_regression, "checkers/control_plane/judge.py"),
    Rule("metadata-divergence", (METADATA, REPLICATION), divergence, "checkers/control_plane/judge.py"),
    Rule(
        "leader-not-in-isr", (METADATA,), record_rule("leader-not-in-isr"), "checkers/control_plane/metadata_rules.py"
    ),
    Rule(
        "partition-epoch-regression",
        (METADATA,),
        record_rule("partition-epoch-regression"),
        "checkers/control_plane/metadata_rules.py",
    ),
    Rule("inactive-leader", (METADATA,), record_rule("inactive-leader"), "checkers/control_plane/metadata_rules.py"),
    Rule("fenced-in-isr", (METADATA,), record_rule("fenced-in-isr"), "checkers/control_plane/metadata_rules.py"),
    Rule(
        "unfenced-down-broker",
        (METADATA, REPLICATION, IDS, VIEWS, NEMESIS),
        unfenced_down_broker,
        "checkers/control_plane/fault_timing.py",
        lambda s: s["broker.session.timeout.ms"] / 1000 + SLACK_S,
        "`broker.session.timeout.ms` + S (+ the host stall), from the latest of: the fault taking"
        " effect; the activation of each quorum leader elected while the broker stayed down; the last"
        " time a majority of the voters came to reach each other again",
    ),
    Rule(
        "stale-isr-member",
        (METADATA, REPLICATION, IDS, VIEWS, NEMESIS),
        stale_isr_member,
        "checkers/control_plane/fault_timing.py",
        lambda s: 1.5 * s["replica.lag.time.max.ms"] / 1000 + SLACK_S,
        "1.5 × `replica.lag.time.max.ms` + S (+ the host stall) of time with an active controller that"
        " the leader reaches, from the first ok send after the fault (none: not judged) and again from"
        " each leader change (a partition that replaces a cut and still cuts the follower off continues it)",
    ),
    Rule(
        "stuck-broker-metadata",
        (REPLICATION, IDS, NEMESIS),
        stuck_broker_metadata,
        "checkers/control_plane/fault_timing.py",
        lambda s: STUCK_S + SLACK_S,
        f"{STUCK_S:g} s + S (+ the host stall) after the last fault was undone",
    ),
)
BY_NAME = {r.name: r for r in RULES}


def bounds(settings: dict[str, int]) -> dict[str, float]:
    """Each timing rule's bound in seconds (results.json's `bounds_s`)."""
    return {r.name: r.bound(settings) for r in RULES if r.bound is not None}


def judge(ctx: Context, absent: dict[str, str | None], gaps: dict[str, str]) -> dict[str, Found]:
    """Every rule whose evidence is there, run; the others, and what the runs said they could not
    check, in `ctx.not_checked` (`absent`: evidence kind -> why it is missing, None when present;
    `gaps`: evidence kind -> why the run collected it only in part, control-plane/gaps.json)."""
    found: dict[str, Found] = {}
    for rule in RULES:
        why = rule.missing(absent, gaps)
        if why is not None:
            ctx.not_checked[rule.name] = why
            continue
        found[rule.name] = rule.find(ctx)
    return found


def markdown_table() -> str:
    """docs/checker.md's table of the control-plane rules."""
    rows = ["| anomaly | reads | bound | rule in |", "|---|---|---|---|"]
    for r in RULES:
        joiner = " or " if r.any_of else ", "
        reads = joiner.join(EVIDENCE_TEXT[k] for k in r.reads)
        rows.append(f"| `{r.name}` | {reads} | {r.bound_text or '—'} | `{r.module}` |")
    return "\n".join(rows)
