"""MATCH predicates over a scan: which inverted index analyses each one.

`annotate_matches(conj, scan)` notes on every `exp.Match` of a conjunct whose left side is a
column of the scanned table that column's INVERTED index PROPERTIES (`meta["inverted"]`, read
by executor/expressions/match.py and by storage's index lookup). A MATCH on a column without
an inverted index is refused when the session has enable_match_without_inverted_index = false,
with Doris 2.1's BE error (FunctionMatchBase::check). A conjunct that is a MATCH with a string
literal on an indexed column is also handed to storage (`scan.match_filters`), whose segments'
inverted indexes then skip the rows (and segments) it cannot match.
"""

from __future__ import annotations

from sqlglot import exp

from catalog.errors import DorisError
from storage.inverted.filter import MatchFilter
from storage.inverted.match import sql_kind


def match_column(node: exp.Match, scan) -> str | None:
    """The storage column a MATCH's left side names in `scan`, or None."""
    left = node.this
    if isinstance(left, exp.Column) and left.name in scan.output:
        return scan.columns[scan.output.index(left.name)]
    return None


def annotate_matches(conj: exp.Expression, scan) -> None:
    """Note the index properties on the conjunct's MATCHes; a top-level MATCH with a string
    query on an indexed column also becomes one of the scan's `match_filters`."""
    for node in conj.find_all(exp.Match):
        column = match_column(node, scan)
        if column is None:
            continue
        props = scan.inverted_indexes.get(column)
        if props is None:
            if not scan.match_without_index:
                raise DorisError(f"[INVERTED_INDEX_NOT_SUPPORTED]"
                                 f"{sql_kind(node.args.get('kind'))} not support execute_match")
            continue
        node.meta["inverted"] = dict(props)
        query = node.expression
        if node is conj and isinstance(query, exp.Literal) and query.is_string:
            scan.match_filters.append(MatchFilter(column, sql_kind(node.args.get("kind")),
                                                  query.this))


def annotate_plan(plan: object) -> None:
    """Note the index properties on every MATCH of the plan whose left side is a column of one
    of its scans (a MATCH in the select list, in a join condition, above an aggregate...)."""
    scans: list = []
    nodes: list = []
    _walk(plan, scans, nodes, set())
    owner = {name: scan for scan in scans for name in scan.output}
    for node in nodes:
        left = node.this
        if isinstance(left, exp.Column) and left.name in owner and "inverted" not in node.meta:
            scan = owner[left.name]
            props = scan.inverted_indexes.get(match_column(node, scan))
            if props is not None:
                node.meta["inverted"] = dict(props)
            elif not scan.match_without_index:
                raise DorisError(f"[INVERTED_INDEX_NOT_SUPPORTED]"
                                 f"{sql_kind(node.args.get('kind'))} not support execute_match")


def _walk(value: object, scans: list, nodes: list, seen: set) -> None:
    if isinstance(value, exp.Expression):
        nodes.extend(value.find_all(exp.Match))
        return
    if isinstance(value, (list, tuple)):
        for item in value:
            _walk(item, scans, nodes, seen)
        return
    if isinstance(value, dict):
        for item in value.values():
            _walk(item, scans, nodes, seen)
        return
    if not hasattr(value, "__dataclass_fields__") or id(value) in seen:
        return
    seen.add(id(value))
    if hasattr(value, "inverted_indexes") and hasattr(value, "output"):
        scans.append(value)  # an OlapScan: its tablets and snapshots hold no expression
        return
    for name in value.__dataclass_fields__:
        _walk(getattr(value, name, None), scans, nodes, seen)
