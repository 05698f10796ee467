"""Rule: an OR of equalities on one column becomes one IN (Doris's OrToIn).

`p_mfgr = 'MFGR#1' OR p_mfgr = 'MFGR#2'` is `p_mfgr IN ('MFGR#1', 'MFGR#2')`: EXPLAIN prints
it so, as Doris's FE does, the scan prunes partitions and buckets by it and tests it as one set
(planner/pushdown.py). Disjuncts may be `col = literal` (either side) or `col IN (literals)`;
they must all test the same column, and a literal repeated is kept once.
"""

from __future__ import annotations

from sqlglot import exp

from planner.scope import disjuncts


def _literal(e: exp.Expression) -> bool:
    return isinstance(e, (exp.Literal, exp.Null)) or \
        (isinstance(e, exp.Neg) and isinstance(e.this, exp.Literal) and not e.this.is_string)


def _terms(e: exp.Expression, value_ok) -> tuple[exp.Column, list[exp.Expression]] | None:
    if isinstance(e, exp.EQ):
        if isinstance(e.this, exp.Column) and value_ok(e.expression):
            return e.this, [e.expression]
        if isinstance(e.expression, exp.Column) and value_ok(e.this):
            return e.expression, [e.this]
    if isinstance(e, exp.In) and not e.args.get("query") and not e.args.get("unnest") and \
            isinstance(e.this, exp.Column) and e.expressions and \
            all(value_ok(v) for v in e.expressions):
        return e.this, list(e.expressions)
    return None


def single_column_values(conj: exp.Expression, value_ok=_literal
                         ) -> tuple[exp.Column, list[exp.Expression]] | None:
    """(column, values) when every disjunct of `conj` is `column = value` or `column IN
    (values)` with values passing `value_ok` (literals by default), else None. Storage
    pushdown (planner/pushdown.py) asks with any value, and converts the ones it can."""
    column, values = None, []
    for branch in disjuncts(conj):
        terms = _terms(branch, value_ok)
        if terms is None or (column is not None and terms[0] != column):
            return None
        column = terms[0]
        values += terms[1]
    return None if column is None else (column, values)


def or_to_in(conj: exp.Expression) -> exp.Expression:
    """`conj` as one IN when it is such an OR, else `conj` itself."""
    if len(disjuncts(conj)) < 2:
        return conj
    found = single_column_values(conj)
    if found is None:
        return conj
    column, values, seen = found[0], [], set()
    for v in found[1]:
        key = v.sql()
        if key not in seen:
            seen.add(key)
            values.append(v.copy())
    return exp.In(this=column.copy(), expressions=values)
