"""Rule: factor the conditions common to every branch of an OR out of it.

`(a AND b) OR (a AND c)` becomes `a AND (b OR c)`. TPC-H Q19 writes its join condition
`p_partkey = l_partkey` inside each of three OR branches; factored out, it becomes a join key
instead of leaving a cross product filtered by a disjunction.
"""

from __future__ import annotations

from sqlglot import exp

from planner.scope import conjuncts, disjuncts


def _key(e: exp.Expression) -> str:
    """Equality is symmetric: `a = b` and `b = a` are the same condition."""
    if isinstance(e, exp.EQ):
        return "=".join(sorted((e.this.sql(), e.expression.sql())))
    return e.sql()


def factor_or(conj: exp.Expression) -> list[exp.Expression]:
    """The conjunct as a list of conjuncts, with common OR-branch conditions pulled out."""
    branches = disjuncts(conj)
    if len(branches) < 2:
        return [conj]
    sets = [conjuncts(b) for b in branches]
    keys = [{_key(c) for c in s} for s in sets]
    common = [c for c in sets[0] if all(_key(c) in k for k in keys[1:])]
    if not common:
        return [conj]
    common_keys = {_key(c) for c in common}
    rests = [[c for c in s if _key(c) not in common_keys] for s in sets]
    if any(not r for r in rests):
        return common  # one branch is exactly the common part: the OR adds nothing
    remainder = exp.or_(*[exp.and_(*r) if len(r) > 1 else r[0] for r in rests])
    return common + [exp.Paren(this=remainder)]
