"""Plots as inline SVG: the report must open with no network and no plotting library.

Two chart kinds cover the report: lines over time (with shaded fault windows) and scattered points
over time (offset timelines). Every chart is an <svg class="plot"> so a browser test can find it.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from html import escape

from kafka_chaos.checkers.edge_kinds import EdgeKind

W, H = 920, 260
L, R, T, B = 64, 150, 24, 36
PALETTE = ("#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#17becf", "#7f7f7f")


def _ticks(lo: float, hi: float, n: int = 5) -> list[float]:
    if hi <= lo:
        return [lo]
    step = 10 ** math.floor(math.log10((hi - lo) / n))
    for mult in (1, 2, 5, 10):
        if (hi - lo) / (step * mult) <= n:
            step *= mult
            break
    first = math.ceil(lo / step) * step
    return [first + i * step for i in range(int((hi - first) / step) + 1)]


def _fmt(v: float) -> str:
    return f"{v:.0f}" if abs(v) >= 100 or v == int(v) else f"{v:.3g}"


class Chart:
    def __init__(
        self,
        title: str,
        x_max: float,
        y_max: float,
        x_label: str,
        y_label: str,
        y_min: float = 0.0,
        x_labels: Sequence[tuple[float, str]] | None = None,
        y_labels: Sequence[tuple[float, str]] | None = None,
    ):
        """`x_labels`, `y_labels`: (value, text) ticks for a categorical axis (days, keys), instead
        of numbers."""
        self.title, self.x_label, self.y_label = title, x_label, y_label
        self.x_labels, self.y_labels = x_labels, y_labels
        self.x_max, self.y_min = max(x_max, 1e-9), y_min
        self.y_max = y_max if y_max > y_min else y_min + 1
        self.parts: list[str] = []
        self.legend: list[tuple[str, str, str]] = []  # colour, label, shape

    def x(self, v: float) -> float:
        return L + (W - L - R) * v / self.x_max

    def y(self, v: float) -> float:
        return H - B - (H - T - B) * (v - self.y_min) / (self.y_max - self.y_min)

    def windows(self, windows: Sequence[dict]) -> Chart:
        seen = set()
        for w in windows:
            colour = w.get("colour") or "#7f7f7f"  # checkers/measures/faults.py gives every window one
            x0, x1 = self.x(w["start"]), max(self.x(w["end"]), self.x(w["start"]) + 2)
            tip = escape(f"{w['f']} {w['start']:.1f}-{w['end']:.1f} s")
            self.parts.append(
                f'<rect class="fault fault-{escape(w["f"])}" x="{x0:.1f}" y="{T}" width="{x1 - x0:.1f}" '
                f'height="{H - T - B}" fill="{colour}" opacity="0.15"><title>{tip}</title></rect>'
            )
            if w["f"] not in seen:
                seen.add(w["f"])
                self.legend.append((colour, w["f"], "band"))
        return self

    def line(
        self, points: Sequence[tuple[float, float]], label: str, colour: str | None = None, dashed: bool = False
    ) -> Chart:
        colour = colour or PALETTE[len([x for x in self.legend if x[2] == "line"]) % len(PALETTE)]
        pts = " ".join(f"{self.x(a):.1f},{self.y(b):.1f}" for a, b in points if b is not None and not math.isnan(b))
        if pts:
            dash = ' stroke-dasharray="4 3"' if dashed else ""
            self.parts.append(f'<polyline fill="none" stroke="{colour}" stroke-width="1.5"{dash} points="{pts}"/>')
        self.legend.append((colour, label, "line"))
        return self

    def dots(self, points: Sequence[tuple[float, float]], label: str, colour: str, r: float = 1.6) -> Chart:
        for a, b in points:
            self.parts.append(f'<circle cx="{self.x(a):.1f}" cy="{self.y(b):.1f}" r="{r}" fill="{colour}"/>')
        self.legend.append((colour, label, "dot"))
        return self

    def bars(self, bars: Sequence[tuple[float, float, float, str, str]], height: float = 0.7) -> Chart:
        """Horizontal bars (start, end, y, colour, tooltip), `height` in y's units: who held what when."""
        h = abs(self.y(0) - self.y(height))
        for a, b, row, colour, tip in bars:
            x0, x1 = self.x(a), max(self.x(b), self.x(a) + 1)
            self.parts.append(
                f'<rect class="held" x="{x0:.1f}" y="{self.y(row) - h / 2:.1f}" width="{x1 - x0:.1f}" '
                f'height="{h:.1f}" fill="{colour}" opacity="0.8"><title>{escape(tip)}</title></rect>'
            )
        return self

    def key(self, colour: str, label: str) -> Chart:
        """A legend entry with nothing drawn for it (the bars' colours)."""
        self.legend.append((colour, label, "band"))
        return self

    def marks(self, points: Sequence[tuple[float, float, str]], label: str, colour: str = "#d62728") -> Chart:
        for a, b, tip in points:
            cx, cy = self.x(a), self.y(b)
            self.parts.append(
                f'<path class="anomaly" d="M{cx - 5:.1f},{cy - 5:.1f}L{cx + 5:.1f},{cy + 5:.1f}'
                f'M{cx - 5:.1f},{cy + 5:.1f}L{cx + 5:.1f},{cy - 5:.1f}" stroke="{colour}" stroke-width="2">'
                f"<title>{escape(tip)}</title></path>"
            )
        self.legend.append((colour, label, "mark"))
        return self

    def render(self) -> str:
        axes = [f'<text x="{L}" y="{T - 8}" class="title">{escape(self.title)}</text>']
        x_ticks = self.x_labels if self.x_labels is not None else [(v, _fmt(v)) for v in _ticks(0, self.x_max)]
        for v, text in x_ticks:
            axes.append(f'<line x1="{self.x(v):.1f}" x2="{self.x(v):.1f}" y1="{T}" y2="{H - B}" class="grid"/>')
            axes.append(f'<text x="{self.x(v):.1f}" y="{H - B + 14}" text-anchor="middle">{escape(text)}</text>')
        y_ticks = self.y_labels if self.y_labels is not None else [(v, _fmt(v)) for v in _ticks(self.y_min, self.y_max)]
        for v, text in y_ticks:
            axes.append(f'<line x1="{L}" x2="{W - R}" y1="{self.y(v):.1f}" y2="{self.y(v):.1f}" class="grid"/>')
            axes.append(f'<text x="{L - 6}" y="{self.y(v) + 4:.1f}" text-anchor="end">{escape(text)}</text>')
        axes.append(f'<text x="{(L + W - R) / 2}" y="{H - 4}" text-anchor="middle">{escape(self.x_label)}</text>')
        axes.append(
            f'<text transform="translate(14,{(T + H - B) / 2}) rotate(-90)" text-anchor="middle">'
            f"{escape(self.y_label)}</text>"
        )
        legend = []
        for i, (colour, label, shape) in enumerate(self.legend):
            y = T + 12 + 16 * i
            if shape == "band":
                legend.append(
                    f'<rect x="{W - R + 10}" y="{y - 8}" width="14" height="10" fill="{colour}" opacity="0.3"/>'
                )
            else:
                legend.append(f'<rect x="{W - R + 10}" y="{y - 5}" width="14" height="3" fill="{colour}"/>')
            legend.append(f'<text x="{W - R + 30}" y="{y}">{escape(label)}</text>')
        return (
            f'<svg class="plot" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {W} {H}" width="{W}" height="{H}" '
            f'role="img" aria-label="{escape(self.title)}">'
            f'<rect x="{L}" y="{T}" width="{W - L - R}" height="{H - T - B}" class="frame"/>'
            + "".join(axes + self.parts + legend)
            + "</svg>"
        )


#: Edge colours of a transaction cycle by kind, as examples spell it (checkers/edge_kinds.py).
EDGE_COLOURS = {
    EdgeKind.WW.label: "#1f77b4",
    EdgeKind.WR.label: "#d62728",
    EdgeKind.PROCESS.label: "#2ca02c",
    EdgeKind.REALTIME.label: "#9467bd",
}


def cycle(example: dict, size: int = 300) -> str:
    """One transaction cycle (an example of checkers/txn/cycles.py): its transactions on a circle,
    named by history index, each edge an arrow labelled with its kind and key."""
    edges = example["edges"]
    ops = [e["from"] for e in edges]
    n = max(len(ops), 1)
    c, r = size / 2, size / 2 - 48
    at = {
        op: (c + r * math.cos(2 * math.pi * i / n - math.pi / 2), c + r * math.sin(2 * math.pi * i / n - math.pi / 2))
        for i, op in enumerate(ops)
    }
    title = "cycle: " + " → ".join(str(o) for o in [*ops, ops[0]]) if ops else "cycle"
    parts = [
        f'<svg class="plot cycle" width="{size}" height="{size}" viewBox="0 0 {size} {size}" role="img">',
        f"<title>{escape(title)}</title>",
        '<defs><marker id="arrow" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="7" markerHeight="7"'
        ' orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" fill="#555"/></marker></defs>',
    ]
    for e in edges:
        (x1, y1), (x2, y2) = at[e["from"]], at[e["to"]]
        length = math.hypot(x2 - x1, y2 - y1) or 1.0
        ux, uy = (x2 - x1) / length, (y2 - y1) / length
        # Bend each arrow to the right of its direction so that two opposite edges do not overlap.
        mx, my = (x1 + x2) / 2 - uy * 18, (y1 + y2) / 2 + ux * 18
        sx, sy, ex, ey = x1 + ux * 22, y1 + uy * 22, x2 - ux * 22, y2 - uy * 22
        colour = EDGE_COLOURS.get(e["kind"], "#555")
        label = e["kind"] + (f" {e['key']}" if e.get("key") else "")
        parts.append(
            f'<path d="M{sx:.1f},{sy:.1f} Q{mx:.1f},{my:.1f} {ex:.1f},{ey:.1f}" fill="none" stroke="{colour}"'
            ' stroke-width="1.6" marker-end="url(#arrow)"/>'
        )
        parts.append(f'<text x="{mx:.1f}" y="{my:.1f}" fill="{colour}" text-anchor="middle">{escape(label)}</text>')
    for op, (x, y) in at.items():
        parts.append(f'<circle cx="{x:.1f}" cy="{y:.1f}" r="18" fill="#fff" stroke="#333"/>')
        parts.append(f'<text x="{x:.1f}" y="{y + 4:.1f}" text-anchor="middle">{op}</text>')
    parts.append("</svg>")
    return "".join(parts)
