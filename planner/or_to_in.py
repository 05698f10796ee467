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


def _terms(e: exp.Expression) -> tuple[exp.Column, list[exp.Expression]] | None:
    if isinstance(e, exp.EQ):
        if isinstance(e.this, exp.Column) and _literal(e.expression):
            return e.this, [e.expression]
        if isinstance(e.expression, exp.Column) and _literal(e.this):
            return e.expression, [e.this]
    if isinstance(e, exp.In) and not e.args.get("query") and not e.args.get("unnest") and \
            isinstance(e.this, exp.Column) and e.expressions and \
            all(_literal(v) for v in e.expressions):
        return e.this, list(e.expressions)
    return None


def or_to_in(conj: exp.Expression) -> exp.Expression:
    """`conj` as one IN when it is such an OR, else `conj` itself."""
    branches = disjuncts(conj)
    if len(branches) < 2:
        return conj
    column, values, seen = None, [], set()
    for branch in branches:
        terms = _terms(branch)
        if terms is None or (column is not None and terms[0] != column):
            return conj
        column = terms[0]
        for v in terms[1]:
            key = v.sql()
            if key not in seen:
                seen.add(key)
                values.append(v.copy())
    return exp.In(this=column.copy(), expressions=values)
