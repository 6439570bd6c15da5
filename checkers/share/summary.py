"""results.json's `share`: what a share group's deliveries came to, beside its anomalies
(../shared/anomalies.md: reported, never errors), from the keys' tallies (view.py `tallies`)."""

from __future__ import annotations

from typing import Any

from kafka_chaos.checkers.share.view import ARCHIVED, CAUSES, DELIVERIES, REDELIVERIES, UNACKNOWLEDGED


def share_summary(slots: dict[str, dict[int, int]], leaders_known: bool) -> dict[str, Any]:
    """Values by how many times they were delivered, redeliveries by cause, values archived at
    the limit, values delivered and never acknowledged; whether leader changes were known."""
    per_value = slots.get(DELIVERIES, {})
    causes = slots.get(REDELIVERIES, {})
    return {
        "deliveries_per_value": {str(n): per_value[n] for n in sorted(per_value)},
        "values_delivered": sum(per_value.values()),
        "redeliveries": {cause: causes.get(i, 0) for i, cause in enumerate(CAUSES)},
        "archived": slots.get(ARCHIVED, {}).get(0, 0),
        "unacknowledged": slots.get(UNACKNOWLEDGED, {}).get(0, 0),
        "leader_changes_known": leaders_known,
    }


def format_share(share: dict[str, Any]) -> str:
    """share: 385 values delivered (1x 367, 2x 16, 3x 2); redelivered: release 16, lock expiry 4;
    archived 0; never acknowledged 0"""
    times = ", ".join(f"{n}x {c}" for n, c in share["deliveries_per_value"].items())
    causes = ", ".join(f"{cause} {n}" for cause, n in share["redeliveries"].items() if n) or "none"
    return (
        f"share: {share['values_delivered']} values delivered ({times or 'none'}); redelivered: {causes}; "
        f"archived {share['archived']}; never acknowledged {share['unacknowledged']}"
    )
