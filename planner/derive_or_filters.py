"""Rule: an OR over several relations also filters each relation with its own part of it.

`(n1.name = 'FRANCE' AND n2.name = 'GERMANY') OR (n1.name = 'GERMANY' AND n2.name = 'FRANCE')`
implies `n1.name = 'FRANCE' OR n1.name = 'GERMANY'` for n1 and the same for n2: a row of n1 that
satisfies no branch's n1 conditions cannot satisfy the OR. When every branch has conditions on
a relation alone, their OR (each branch's conditions AND-ed) filters that relation before the
joins, as Doris's Nereids extracts them; the original OR still filters above the joins. TPC-H Q7
joins 2 nations instead of 25, Q19 the parts of three brands instead of all of them.
"""

from __future__ import annotations

from sqlglot import exp

from planner.scope import conjuncts, disjuncts, referenced


def derive_or_filters(conj: exp.Expression, rels: set[int],
                      owner: dict[str, int]) -> list[tuple[int, exp.Expression]]:
    """(relation, implied filter) pairs for an OR conjunct over the relations `rels`."""
    branches = disjuncts(conj)
    if len(branches) < 2:
        return []
    out = []
    for rel in sorted(rels):
        parts = []
        for branch in branches:
            own = [c for c in conjuncts(branch)
                   if (refs := referenced(c)) and all(owner.get(n) == rel for n in refs)]
            if not own:
                break
            parts.append(exp.and_(*[c.copy() for c in own]) if len(own) > 1 else own[0].copy())
        else:
            out.append((rel, exp.Paren(this=exp.or_(*parts))))
    return out
