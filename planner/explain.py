"""EXPLAIN text in Doris's plan format, written from the fragments' data (one renderer: every
Doris label lives here or in the node's own parameter lines).

    PLAN FRAGMENT 0
     OUTPUT EXPRS:`t`.`k1` | `t`.`k2` |
      PARTITION: UNPARTITIONED

      RESULT SINK

      2:HASH JOIN
      |  join op: INNER JOIN (BROADCAST)
      |  ...
      |
      |----3:EXCHANGE
      |       tuple ids: 1
      |
      0:OlapScanNode
         TABLE: t
"""

from __future__ import annotations

from planner.fragments import Fragment, PNode, TupleDesc


def _node_lines(node: PNode, first: str, rest: str) -> list[str]:
    lines = [f"{first}{node.node_id}:{node.name}"]
    detail = rest + ("|  " if node.children else "   ")
    details = list(node.details)
    if node.name.endswith("EXCHANGE") and not any(d.startswith("tuple ids") for d in details):
        details.append(f"tuple ids: {' '.join(map(str, node.tuple_ids))}")
    lines += [detail + d for d in details]
    if not node.children:
        return lines
    probe, *builds = node.children
    for build in builds:
        lines.append(rest + "|")
        lines += _node_lines(build, rest + "|----", rest + "|    ")
    lines.append(rest + "|")
    lines += _node_lines(probe, rest, rest)
    return lines


def render(fragments: list[Fragment], verbose: bool = False) -> list[str]:
    out: list[str] = []
    for f in fragments:
        if out:
            out.append("")
        out.append(f"PLAN FRAGMENT {f.fragment_id}")
        exprs = "".join(f"{e} | " for e in f.output_exprs).rstrip()
        out.append(f" OUTPUT EXPRS:{exprs}")
        out.append(f"  PARTITION: {f.partition}")
        out.append("")
        out += [f"  {s}" for s in f.sink]
        out.append("")
        out += _node_lines(f.root, "  ", "  ")
    if verbose and fragments:
        out += _descriptor_table(fragments[0].tuples)
    return out


def _descriptor_table(tuples: list[TupleDesc]) -> list[str]:
    """EXPLAIN VERBOSE's tail: every tuple with its slots, slot ids numbered across tuples."""
    out = ["", "", "Tuples:"]
    slot_id = 0
    for t in tuples:
        out.append(f"TupleDescriptor{{id={t.tuple_id}, tbl={t.table or 'null'}}}")
        for col, type_text, nullable, unique_id in t.slots:
            typed = f", type={type_text}" if type_text else ""
            uid = "null" if unique_id is None else unique_id
            out.append(f"  SlotDescriptor{{id={slot_id}, col={col}, colUniqueId={uid}{typed}, "
                       f"nullable={str(nullable).lower()}, isAutoIncrement=false, subColPath=null}}")
            slot_id += 1
        out.append("")
    return out
