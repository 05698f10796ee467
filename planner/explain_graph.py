"""EXPLAIN GRAPH: the fragment tree drawn with box-drawing characters, as Doris prints it.

Every plan node is a box holding `[id: NAME]`, `[Fragment: n]` and its key line (the scanned
table, the join operator); a fragment's sink is a box of its own (`[id: ResultSink]`,
`[id: DataStreamSink]` with the exchange it feeds) above the fragment's root, and an EXCHANGE
box has the sending fragment's sink box as its child. A parent is centred over its children;
`│` joins a box to its only child, `┌──┴──┐` fans out to several (a join: probe, then build).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from planner.fragments import Fragment, PNode

_GAP = 2  # spaces between sibling subtrees
_KEY_LINES = ("TABLE:", "join op:")


@dataclass
class _Box:
    lines: list[str]
    children: list["_Box"] = field(default_factory=list)


def _box_of(node: PNode, fragment: Fragment, feeders: dict[int, Fragment]) -> _Box:
    lines = [f"[{node.node_id}: {node.name}]", f"[Fragment: {fragment.fragment_id}]"]
    lines += [d for d in node.details if d.startswith(_KEY_LINES)]
    box = _Box(lines)
    if node.name.endswith("EXCHANGE") and node.node_id in feeders:
        box.children.append(_sink_box(feeders[node.node_id], node.node_id, feeders))
    box.children += [_box_of(c, fragment, feeders) for c in node.children]
    return box


def _sink_box(fragment: Fragment, node_id: int, feeders: dict[int, Fragment]) -> _Box:
    name = "ResultSink" if fragment.sink[:1] == ["RESULT SINK"] else "DataStreamSink"
    box = _Box([f"[{node_id}: {name}]", f"[Fragment: {fragment.fragment_id}]", *fragment.sink])
    box.children.append(_box_of(fragment.root, fragment, feeders))
    return box


def _draw_box(lines: list[str]) -> list[str]:
    width = max(len(s) for s in lines)
    return (["┌" + "─" * width + "┐"] + [f"│{s.ljust(width)}│" for s in lines]
            + ["└" + "─" * width + "┘"])


def _layout(box: _Box) -> tuple[list[str], int]:
    """The subtree's lines (all of one width) and the column of its top connector."""
    own = _draw_box(box.lines)
    own_width = len(own[0])
    if not box.children:
        return own, own_width // 2
    blocks = [_layout(c) for c in box.children]
    if len(blocks) == 1:
        return _stack(own, *blocks[0])
    height = max(len(b[0]) for b in blocks)
    widths = [len(b[0][0]) for b in blocks]
    children_width = sum(widths) + _GAP * (len(blocks) - 1)
    width = max(own_width, children_width)
    left = (width - children_width) // 2
    centres, x = [], left
    for w, (_, centre) in zip(widths, blocks):
        centres.append(x + centre)
        x += w + _GAP
    parent = (centres[0] + centres[-1]) // 2 if len(centres) > 1 else centres[0]
    box_left = min(max(parent - own_width // 2, 0), width - own_width)
    parent = box_left + own_width // 2
    out = [" " * box_left + line + " " * (width - box_left - own_width) for line in own]
    out += _connectors(parent, centres, width)
    rows = [" " * left for _ in range(height)]
    for i, (lines, _) in enumerate(blocks):
        pad = [" " * widths[i]] * (height - len(lines))
        sep = " " * _GAP if i < len(blocks) - 1 else ""
        rows = [r + line + sep for r, line in zip(rows, lines + pad)]
    out += [r.ljust(width) for r in rows]
    return out, parent


def _stack(own: list[str], child: list[str], child_centre: int) -> tuple[list[str], int]:
    """A box over its only child, centre over centre, joined by a straight line."""
    own_width, child_width = len(own[0]), len(child[0])
    centre = max(own_width // 2, child_centre)
    box_left, child_left = centre - own_width // 2, centre - child_centre
    width = max(box_left + own_width, child_left + child_width)
    out = [(" " * box_left + line).ljust(width) for line in own]
    out += [(" " * centre + "│").ljust(width)] * 2
    out += [(" " * child_left + line).ljust(width) for line in child]
    return out, centre


def _connectors(parent: int, centres: list[int], width: int) -> list[str]:
    top = [" "] * width
    lo, hi = min(centres + [parent]), max(centres + [parent])
    for x in range(lo, hi + 1):
        top[x] = "─"
    for c in centres:
        top[c] = "┌" if c == lo else "┐" if c == hi else "┬"
    top[parent] = "┴" if lo < parent < hi else ("└" if parent == lo else "┘") \
        if parent not in centres else "┼"
    down = [" "] * width
    for c in centres:
        down[c] = "│"
    return ["".join(top), "".join(down)]


def render_graph(fragments: list[Fragment]) -> list[str]:
    """The plan of `fragments` (fragment 0 first) as Doris's EXPLAIN GRAPH draws it."""
    if not fragments:
        return []
    feeders: dict[int, Fragment] = {}
    for f in fragments[1:]:
        for line in f.sink:
            if line.strip().startswith("EXCHANGE ID:"):
                feeders[int(line.split(":")[1])] = f
    root = fragments[0]
    top = _sink_box(root, max(_ids(fragments)) + 1, feeders) if root.sink else \
        _box_of(root.root, root, feeders)
    return [line.rstrip() for line in _layout(top)[0]]


def _ids(fragments: list[Fragment]) -> list[int]:
    out, stack = [], [f.root for f in fragments]
    while stack:
        n = stack.pop()
        out.append(n.node_id)
        stack += n.children
    return out or [0]
