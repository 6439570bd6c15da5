"""One sentence per control-plane anomaly example: what the records and samples say happened, for
the version tables of `reproduce` (runs/reproduce.py) and anyone reading an example without the
rule beside it. The examples are the checker's own (checkers/control_plane/judge.py and the rules'
modules); an anomaly without a sentence here is shown as its example's fields."""

from __future__ import annotations

from typing import Any


def _nodes(names: list[str]) -> str:
    return ", ".join(names) if names else "every node"


def split_brain(ex: dict[str, Any]) -> str:
    (a, b), (ea, eb), (sa, sb) = ex["nodes"], ex["epochs"], ex.get("since_s", [None, None])
    cut = ex.get("cut_off", {})
    since = "" if sa is None else f" (since {sa:.1f} s and {sb:.1f} s)"
    reach = "; ".join(f"{n} could not reach {_nodes(cut[n])}" for n in (a, b) if cut.get(n))
    return (
        f"{a} held itself leader of epoch {ea} and {b} of epoch {eb}{since}, both running, for "
        f"{ex['seconds']:g} s ({ex['from_s']:.1f} s to {ex['to_s']:.1f} s)" + (f"; {reach}" if reach else "")
    )


def unfenced_down_broker(ex: dict[str, Any]) -> str:
    return (
        f"{ex['node']} (broker {ex['broker']}), {ex['fault']} from {ex['took_effect_s']:.1f} s, was still unfenced "
        f"in the committed metadata at {ex['deadline_s']:.1f} s (registration state as of offset {ex['offset']}, "
        f"high watermark {ex['high_watermark']})"
    )


def stale_isr_member(ex: dict[str, Any]) -> str:
    return (
        f"{ex['node']}, {ex['fault']} from {ex['took_effect_s']:.1f} s, was still in {ex['partition']}'s ISR "
        f"{ex['isr']} under leader {ex['leader']} at {ex['deadline_s']:.1f} s"
    )


def _short(record: str, most: int = 100) -> str:
    """A record's text cut in its middle, keeping its end (the epoch it was written in)."""
    return record if len(record) <= most else record[: most - 20] + " ... " + record[-15:]


def divergence(ex: dict[str, Any]) -> str:
    held: dict[str, list[str]] = {}
    for node, record in sorted(ex["records"].items()):
        held.setdefault(record, []).append(node)  # grouped by the whole record, shortened only to show
    verb = {True: "holds", False: "hold"}
    parts = "; ".join(f"{_nodes(nodes)} {verb[len(nodes) == 1]} {_short(text)}" for text, nodes in held.items())
    return f"at offset {ex['offset']}, below the final high watermark {ex['high_watermark']}: {parts}"


def double_leader(ex: dict[str, Any]) -> str:
    firsts = "; ".join(f"{c['leader']} from {c['time_s']:.1f} s ({c['source']}, on {c['node']})" for c in ex["claims"])
    return f"epoch {ex['epoch']} had {len(ex['leaders'])} leaders, each first claimed: {firsts}"


SENTENCES = {
    "quorum-double-leader": double_leader,
    "metadata-divergence": divergence,
    "quorum-split-brain": split_brain,
    "unfenced-down-broker": unfenced_down_broker,
    "stale-isr-member": stale_isr_member,
}


def explain(name: str, example: dict[str, Any]) -> str:
    """The example in a sentence; its fields, `k=v`, for an anomaly without one (or a malformed example)."""
    try:
        return SENTENCES[name](example)
    except (KeyError, TypeError, ValueError):
        return ", ".join(f"{k}={v}" for k, v in example.items())
