"""Predicate pushdown into storage: simple conjuncts become storage ColumnPredicates.

A conjunct `col <op> literal` (either side), `col IN (literals)`, `col BETWEEN a AND b`,
`col IS [NOT] NULL` on a column of the scanned table becomes a ColumnPredicate that storage
uses to prune with the short key index and zone maps. The Filter stays in the plan above the
scan (it is exact either way); a conjunct that does not fit is simply not pushed.
"""

from __future__ import annotations

from sqlglot import exp

from catalog.errors import DdlError
from catalog.values import parse_value

_OPS = {exp.EQ: "=", exp.NEQ: "!=", exp.LT: "<", exp.LTE: "<=", exp.GT: ">", exp.GTE: ">="}
_FLIP = {"=": "=", "!=": "!=", "<": ">", "<=": ">=", ">": "<", ">=": "<="}


def _column(scan, e: exp.Expression):
    if not isinstance(e, exp.Column) or e.name not in scan.output:
        return None
    return scan.columns[scan.output.index(e.name)]


def _literal(e: exp.Expression) -> str | None:
    if isinstance(e, exp.Neg) and isinstance(e.this, exp.Literal) and not e.this.is_string:
        return "-" + e.this.this
    if isinstance(e, exp.Literal):
        return e.this
    return None


def to_storage_predicates(conj: exp.Expression, scan) -> list:
    from storage import ColumnPredicate

    from catalog.errors import DorisError
    types = scan_types(scan)

    def value(col: str, lit: exp.Expression):
        t = types.get(col)
        text = _literal(lit)
        if t is None or text is None or t.is_float:
            raise DdlError("not pushable")
        is_string = isinstance(lit, exp.Literal) and lit.is_string
        if (t.is_string or t.is_temporal) != is_string:
            raise DdlError("not pushable: comparison needs an implicit cast")
        return parse_value(t, text)

    try:
        if type(conj) in _OPS:
            op = _OPS[type(conj)]
            col, other = _column(scan, conj.this), conj.expression
            if col is None:
                col, other, op = _column(scan, conj.expression), conj.this, _FLIP[op]
            if col is None:
                return []
            return [ColumnPredicate(col, op, (value(col, other),))]
        if isinstance(conj, exp.In) and not conj.args.get("query"):
            col = _column(scan, conj.this)
            if col is None:
                return []
            return [ColumnPredicate(col, "in", tuple(value(col, v) for v in conj.expressions))]
        if isinstance(conj, exp.Between):
            col = _column(scan, conj.this)
            if col is None:
                return []
            return [ColumnPredicate(col, ">=", (value(col, conj.args["low"]),)),
                    ColumnPredicate(col, "<=", (value(col, conj.args["high"]),))]
        if isinstance(conj, exp.Is) and isinstance(conj.expression, exp.Null):
            col = _column(scan, conj.this)
            return [ColumnPredicate(col, "is_null", ())] if col else []
        if isinstance(conj, exp.Not) and isinstance(conj.this, exp.Is) and isinstance(conj.this.expression, exp.Null):
            col = _column(scan, conj.this.this)
            return [ColumnPredicate(col, "is_not_null", ())] if col else []
    except DorisError:
        return []
    return []


def scan_types(scan) -> dict:
    return scan.column_types
