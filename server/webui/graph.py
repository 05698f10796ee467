"""The layout of an operator tree (server/handlers/profile_tree.py) as boxes for an inline SVG,
computed here so the page needs no script: leaves side by side in plan order, each parent
centred over its children, one row per depth, the root on top (data flows upwards as in
EXPLAIN GRAPH). The template (profile.html) draws a rect and text lines per box and an edge
from each child's top to its parent's bottom; the slowest operator's box is marked.
"""

from __future__ import annotations

from dataclasses import dataclass, field

BOX_W, BOX_H, GAP_X, GAP_Y, MARGIN = 280, 92, 22, 40, 12
_DETAIL_CHARS = 38


@dataclass
class Box:
    x: float
    y: float
    lines: list[str]
    slowest: bool
    node_id: int
    measured: bool


@dataclass
class Graph:
    width: float
    height: float
    boxes: list[Box] = field(default_factory=list)
    edges: list[tuple[float, float, float, float]] = field(default_factory=list)
    box_w: int = BOX_W
    box_h: int = BOX_H


def human_bytes(n: int | None) -> str:
    if n is None:
        return "-"
    for unit in ("B", "KB", "MB", "GB"):
        if n < 1024 or unit == "GB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n} B"


def _lines(node: dict) -> list[str]:
    detail = node["detail"]
    if len(detail) > _DETAIL_CHARS:
        detail = detail[:_DETAIL_CHARS - 1] + "…"
    title = f"[{node['id']}: {node['name']}]  F{node['fragment']}"
    if node["rows"] is None:
        return [title, detail, "(not measured on its own)"]
    return [title, detail, f"rows: {node['rows']}",
            f"time: {node['time_ms']:.2f} ms (own {node['self_ms']:.2f})",
            f"memory: {human_bytes(node['bytes'])}"]


def layout(root: dict | None, slowest_id: int | None) -> Graph | None:
    if root is None:
        return None
    graph = Graph(0, 0)
    next_x = [0.0]

    def place(node: dict, depth: int) -> float:
        """Lay out the subtree; the centre x of its root."""
        centres = [place(c, depth + 1) for c in node["children"]]
        if centres:
            centre = (centres[0] + centres[-1]) / 2
        else:
            centre = next_x[0] + BOX_W / 2
            next_x[0] += BOX_W + GAP_X
        x, y = MARGIN + centre - BOX_W / 2, MARGIN + depth * (BOX_H + GAP_Y)
        graph.boxes.append(Box(x, y, _lines(node), node["id"] == slowest_id, node["id"],
                               node["rows"] is not None))
        graph.edges += [(MARGIN + centre, y + BOX_H, MARGIN + c, y + BOX_H + GAP_Y)
                        for c in centres]
        return centre

    place(root, 0)
    graph.width = max(b.x for b in graph.boxes) + BOX_W + MARGIN
    graph.height = max(b.y for b in graph.boxes) + BOX_H + MARGIN
    return graph
