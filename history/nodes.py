"""control-plane/nodes.json typed: every node's id and roles, the voters, the quorum's kind and the
timing settings in effect, written as sampling starts (harness/control_plane.py); and the entries
added once sampling ended: `sampling` (until when, from which heal) and `host_stall` (what the
host stall probe measured). The harness writes it through `NodesFile.to_json`, the checker
(checkers/control_plane/judge.py, checkers/measures/states.py) reads it through `from_json`.

`from_json` takes what older runs wrote (no `quorum`: static; no `settings`, `sampling` or
`host_stall`), and raises ValueError for a file that is not this shape, so that a reader says the
file was unreadable rather than reading half of it.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

from kafka_chaos.history.kraft import STATIC


def _int(value: Any, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"nodes.json: {what} is not an integer: {value!r}")
    return value


def _opt_int(value: Any, what: str) -> int | None:
    return None if value is None else _int(value, what)


def _number(value: Any, what: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ValueError(f"nodes.json: {what} is not a number: {value!r}")
    return value


def _object(value: Any, what: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise ValueError(f"nodes.json: {what} is not an object")
    return value


@dataclass(frozen=True)
class Node:
    """One node: its id and its process roles (`broker`, `controller`)."""

    id: int
    roles: tuple[str, ...]

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "roles": list(self.roles)}

    @classmethod
    def from_json(cls, data: Any) -> Node:
        data = _object(data, "a node")
        roles = data.get("roles") or []
        if not isinstance(roles, list) or not all(isinstance(r, str) for r in roles):
            raise ValueError("nodes.json: a node's roles are not a list of names")
        return cls(_int(data.get("id"), "a node's id"), tuple(roles))


@dataclass(frozen=True)
class Sampling:
    """When both samplers were told to stop (`ended`), the nemesis's last completion the window
    counted from (`last_heal`, None: no fault applied), the window held (`window_s`), and when every
    broker had caught up after it (`caught_up`, None: not seen or no fault); times in ns on the
    history's clock."""

    ended: int
    last_heal: int | None
    window_s: float
    caught_up: int | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "ended": self.ended,
            "last_heal": self.last_heal,
            "window_s": self.window_s,
            "caught_up": self.caught_up,
        }

    @classmethod
    def from_json(cls, data: Any) -> Sampling:
        data = _object(data, "sampling")
        return cls(
            _int(data.get("ended"), "sampling.ended"),
            _opt_int(data.get("last_heal"), "sampling.last_heal"),
            _number(data.get("window_s"), "sampling.window_s"),
            _opt_int(data.get("caught_up"), "sampling.caught_up"),
        )


@dataclass(frozen=True)
class HostStall:
    """What the host stall probe measured over the run: the stall from its first wake to its last
    (`stall_s`), its longest wait between two wakes (`longest_s`), its last wake (`until`, ns on the
    history's clock)."""

    stall_s: float
    longest_s: float
    until: int

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: Any) -> HostStall:
        data = _object(data, "host_stall")
        return cls(
            _number(data.get("stall_s"), "host_stall.stall_s"),
            _number(data.get("longest_s"), "host_stall.longest_s"),
            _int(data.get("until"), "host_stall.until"),
        )


@dataclass(frozen=True)
class NodesFile:
    """control-plane/nodes.json."""

    #: alias -> the node
    nodes: dict[str, Node]
    #: the voters' ids (the first voters, in a dynamic quorum), ascending
    voters: list[int]
    #: the quorum's kind (history/kraft.py STATIC or DYNAMIC)
    quorum: str = STATIC
    #: the timing settings in effect (history/kraft.py KAFKA_TIMING_DEFAULTS' names), as integers
    settings: dict[str, int] = field(default_factory=dict)
    sampling: Sampling | None = None
    host_stall: HostStall | None = None

    @property
    def ids(self) -> dict[str, int]:
        """alias -> node id."""
        return {alias: node.id for alias, node in self.nodes.items()}

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "nodes": {alias: node.to_json() for alias, node in self.nodes.items()},
            "voters": list(self.voters),
            "quorum": self.quorum,
            "settings": dict(self.settings),
        }
        if self.sampling is not None:
            out["sampling"] = self.sampling.to_json()
        if self.host_stall is not None:
            out["host_stall"] = self.host_stall.to_json()
        return out

    @classmethod
    def from_json(cls, data: Any) -> NodesFile:
        data = _object(data, "the file")
        nodes = _object(data.get("nodes", {}), "nodes")
        voters = data.get("voters") or []
        if not isinstance(voters, list):
            raise ValueError("nodes.json: voters is not a list")
        settings = _object(data.get("settings", {}), "settings")
        quorum = data.get("quorum") or STATIC
        if not isinstance(quorum, str):
            raise ValueError("nodes.json: quorum is not a name")
        return cls(
            {str(alias): Node.from_json(node) for alias, node in nodes.items()},
            [_int(v, "a voter") for v in voters],
            quorum,
            {str(name): _int(value, name) for name, value in settings.items()},
            None if data.get("sampling") is None else Sampling.from_json(data["sampling"]),
            None if data.get("host_stall") is None else HostStall.from_json(data["host_stall"]),
        )

    def write(self, path: Path) -> None:
        path.write_text(json.dumps(self.to_json(), indent=1) + "\n", encoding="utf-8")

    @classmethod
    def read(cls, path: Path) -> NodesFile:
        """The file at `path`: OSError when it cannot be read, ValueError when it is not nodes.json."""
        return cls.from_json(json.loads(path.read_text(encoding="utf-8")))

    def adding(self, **entries: Sampling | HostStall) -> NodesFile:
        """This file with `sampling` or `host_stall` set."""
        return replace(self, **entries)  # type: ignore[arg-type]
