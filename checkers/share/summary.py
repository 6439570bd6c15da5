"""results.json's `share`: what a share group's deliveries came to, beside its anomalies
(../shared/anomalies.md: reported, never errors), from the keys' tallies (view.py `tallies`),
with the leader changes and share-partition reloads the rules knew of (leaders.py); and the
verdict made unknown where only an unknown change or reload excused a finding."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kafka_chaos.checkers.result import CONTROL_PLANE_INCOMPLETE, UNKNOWN
from kafka_chaos.checkers.share.leaders import Leaders
from kafka_chaos.checkers.share.view import ARCHIVED, CAUSES, DELIVERIES, REDELIVERIES, UNACKNOWLEDGED, UNVERIFIED

if TYPE_CHECKING:
    from kafka_chaos.checkers.share.context import ShareContext


def share_summary(slots: dict[str, dict[int, int]], leaders: Leaders) -> dict[str, Any]:
    """Records by how many times they were delivered, redeliveries by cause, records archived at
    the limit, records delivered and never acknowledged; the leader changes and reloads (per
    key, in seconds on the history's clock, or "unknown" with why), and how many findings only
    an unknown one excused (`unverified`)."""
    per_value = slots.get(DELIVERIES, {})
    causes = slots.get(REDELIVERIES, {})
    return {
        "deliveries_per_value": {str(n): per_value[n] for n in sorted(per_value)},
        "values_delivered": sum(per_value.values()),
        "redeliveries": {cause: causes.get(i, 0) for i, cause in enumerate(CAUSES)},
        "archived": slots.get(ARCHIVED, {}).get(0, 0),
        "unacknowledged": slots.get(UNACKNOWLEDGED, {}).get(0, 0),
        "leader_changes_known": not leaders.bare and leaders.changes is not None,
        **leaders.describe(),
        "unverified": slots.get(UNVERIFIED, {}).get(0, 0),
    }


def share_verdict(
    valid: bool | str, why: str | None, share: ShareContext | None, slots: dict[str, dict[int, int]]
) -> tuple[bool | str, str | None]:
    """A valid verdict made unknown when a finding was excused only because the leader changes
    or reloads that could excuse it were unknown (results.json's `share` says why); any other
    verdict as it was."""
    if valid is True and share is not None and share.unknown and slots.get(UNVERIFIED, {}).get(0, 0):
        return UNKNOWN, CONTROL_PLANE_INCOMPLETE
    return valid, why


def format_share(share: dict[str, Any]) -> str:
    """share: 385 values delivered (1x 367, 2x 16, 3x 2); redelivered: release 16, lock expiry 4;
    archived 0; never acknowledged 0"""
    times = ", ".join(f"{n}x {c}" for n, c in share["deliveries_per_value"].items())
    causes = ", ".join(f"{cause} {n}" for cause, n in share["redeliveries"].items() if n) or "none"
    return (
        f"share: {share['values_delivered']} values delivered ({times or 'none'}); redelivered: {causes}; "
        f"archived {share['archived']}; never acknowledged {share['unacknowledged']}"
    )
