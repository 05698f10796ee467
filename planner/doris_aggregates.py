"""Doris's aggregate functions that sqlglot leaves as plain function calls (`exp.Anonymous`):
`lift` turns them into `exp.AggFunc` nodes, so GROUP BY planning, ONLY_FULL_GROUP_BY checks and
window detection treat them as aggregates; `agg_call` gives their `AggCall`.

    ndv(x), approx_count_distinct(x)      count_distinct (exact; Doris estimates with HLL)
    bitmap_union_count(to_bitmap(x))      count_distinct(x)  (the UV-counting idiom)
    bitmap_union_int(x)                   count_distinct(x)
    bitmap_union_count(b), bitmap_union(b)  union of BITMAP values per group (count / BITMAP)
    hll_union_agg(hll_hash(x))            count_distinct(x)
    hll_union_agg(h), hll_union(h), hll_raw_agg(h)  union of HLL values (cardinality / HLL)
    group_bit_or(x), group_bit_and(x), group_bit_xor(x)  bitwise reductions (BIGINT)
"""

from __future__ import annotations

from sqlglot import exp

from planner import logical as L


class DorisAgg(exp.Expression, exp.AggFunc):
    """A Doris aggregate by name: `this` is the argument, `name_` the lower-case name."""

    arg_types = {"this": True, "name_": True}

    @property
    def doris_name(self) -> str:
        return self.args["name_"]

    def sql(self, dialect=None, **opts) -> str:  # how EXPLAIN and column names show it
        return f"{self.doris_name}({self.this.sql(dialect=dialect, **opts)})"


NAMES = {"ndv", "bitmap_union_count", "bitmap_union", "bitmap_union_int", "hll_union_agg",
         "hll_union", "hll_raw_agg", "group_bit_or", "group_bit_and", "group_bit_xor"}


def lift(tree: exp.Expression) -> exp.Expression:
    """The tree with Doris's aggregate calls as `DorisAgg` nodes (in place)."""
    def repl(node: exp.Expression) -> exp.Expression:
        if isinstance(node, exp.Anonymous) and str(node.this).lower() in NAMES \
                and len(node.expressions) == 1:
            return DorisAgg(this=node.expressions[0], name_=str(node.this).lower())
        return node
    return tree.transform(repl, copy=False)


def _inner(arg: exp.Expression, fn: str) -> exp.Expression | None:
    if isinstance(arg, exp.Anonymous) and str(arg.this).lower() == fn and len(arg.expressions) == 1:
        return arg.expressions[0]
    return None


def agg_call(node: DorisAgg, out: str, argument) -> L.AggCall:
    name, arg = node.doris_name, node.this
    if name in ("ndv", "bitmap_union_int"):
        return L.AggCall("count_distinct", argument(arg), out)
    if name == "bitmap_union_count" and _inner(arg, "to_bitmap") is not None:
        return L.AggCall("count_distinct", argument(_inner(arg, "to_bitmap")), out)
    if name == "hll_union_agg" and _inner(arg, "hll_hash") is not None:
        return L.AggCall("count_distinct", argument(_inner(arg, "hll_hash")), out)
    func = {"hll_raw_agg": "hll_union"}.get(name, name)
    return L.AggCall(func, argument(arg), out)
