"""Hash join (pyarrow/Acero), cross join, and joins with a residual (non-equi) condition.

Equi-keys go to Acero's hash join; NULL keys never match (SQL semantics). Acero builds its hash
table on its right input, and building costs ~15x more per row than probing (75k x 6M rows:
2.1 s with the 6M side built, 0.12 s with the 75k side built), so `hash_join` gives Acero the
smaller input as its right side and mirrors the join type (left semi <-> right semi, ...).
Integer keys unique on one side skip Acero altogether (`lookup_join`). A residual condition
decides which key-matched pairs really match, so for outer, semi and anti joins it cannot be a
filter after the join: `_join_with_residual` tags both sides with row ids, finds the matching
pairs (inner join + residual), and derives every join type from them with vectorised set
membership (`is_in` on row ids) and null-extension.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pyarrow as pa
import pyarrow.acero as acero
import pyarrow.compute as pc
from sqlglot import exp

from executor.expressions.casts import cast_value
from executor.expressions.errors import ExpressionError, JsonComparison
from executor.operators import join_payload
from executor.operators.filter import run_filter
from executor.operators.join_size import check_join_output
from executor.operators.lookup_join import lookup_join
from storage.types import is_json_type


def _coerced_keys(left: pa.Table, right: pa.Table, node):
    """(left, right, node, added column names): keys of different types joined on copies
    cast to their common type, so that the output keeps each side's columns as they were (a
    DATE key joined to a DATETIME stays a DATE, an INT joined to a VARCHAR an INT)."""
    lkeys, rkeys, added = list(node.left_keys), list(node.right_keys), []
    for i, (lk, rk) in enumerate(zip(node.left_keys, node.right_keys)):
        lt, rt = left.schema.field(lk).type, right.schema.field(rk).type
        if _comparable_as_text(lt, rt, lk, rk):  # ARRAY keys: equal exactly when their text is
            lkeys[i], rkeys[i] = f"__jkcl{i}", f"__jkcr{i}"
            left = left.append_column(lkeys[i], _as_text(left.column(lk)))
            right = right.append_column(rkeys[i], _as_text(right.column(rk)))
            added += [lkeys[i], rkeys[i]]
            continue
        if lt == rt:
            continue
        common = common_type(lt, rt)
        if lt != common:
            lkeys[i] = f"__jkcl{i}"
            left = left.append_column(lkeys[i], cast_key(left.column(lk), common))
            added.append(lkeys[i])
        if rt != common:
            rkeys[i] = f"__jkcr{i}"
            right = right.append_column(rkeys[i], cast_key(right.column(rk), common))
            added.append(rkeys[i])
    if not added:
        return left, right, node, added
    output = None if node.output is None else list(node.output) + added
    return left, right, replace(node, left_keys=lkeys, right_keys=rkeys, output=output), added


def _comparable_as_text(lt: pa.DataType, rt: pa.DataType, lk: str, rk: str) -> bool:
    """Whether a key pair of nested types joins on its text: ARRAYs do (Doris 2.1 compares
    them); MAP, STRUCT and JSON keys are refused as Nereids' ComparisonPredicate refuses them
    at analysis."""
    def label(name: str) -> str:
        return name.rsplit("#", 1)[0].rsplit(".", 1)[-1]
    if any(is_json_type(t) for t in (lt, rt)):
        raise JsonComparison(f"({label(lk)} = {label(rk)})")
    if any(pa.types.is_map(t) or pa.types.is_struct(t) for t in (lt, rt)):
        raise ExpressionError("comparison predicate could not contains complex type: "
                              f"({label(lk)} = {label(rk)})")
    lists = [pa.types.is_list(t) or pa.types.is_large_list(t) for t in (lt, rt)]
    if any(lists) and not all(lists):
        raise ExpressionError(f"can not cast from origin type {'ARRAY' if lists[0] else 'a scalar'}"
                              f" to target type={'a scalar' if lists[0] else 'ARRAY'}")
    return all(lists)


def _as_text(column: pa.ChunkedArray) -> pa.ChunkedArray:
    return pa.chunked_array([cast_value(c, pa.string()) for c in column.chunks], pa.string())


def cast_key(column: pa.ChunkedArray, t: pa.DataType) -> pa.ChunkedArray:
    """A join key as type `t` (the common type, or the other side's for hashing: shuffles,
    spills); text that is not a number is NULL (joins nothing), as `s = 5` evaluates it."""
    if (pa.types.is_string(column.type) or pa.types.is_large_string(column.type)) \
            and not pa.types.is_string(t):
        return pa.chunked_array([cast_value(c, t) for c in column.chunks], t)
    return column.cast(t, safe=False)


def common_type(a: pa.DataType, b: pa.DataType) -> pa.DataType:
    if pa.types.is_integer(a) and pa.types.is_integer(b):
        return pa.int64()
    text = (pa.types.is_string(a) or pa.types.is_large_string(a),
            pa.types.is_string(b) or pa.types.is_large_string(b))
    numbers = (pa.types.is_integer(a) or pa.types.is_floating(a) or pa.types.is_decimal(a),
               pa.types.is_integer(b) or pa.types.is_floating(b) or pa.types.is_decimal(b))
    if (text[0] and numbers[1]) or (text[1] and numbers[0]):
        return pa.float64()  # text against a number compares as numbers (DOUBLE), as `s = 5`
    if pa.types.is_decimal(a) or pa.types.is_decimal(b):
        if pa.types.is_floating(a) or pa.types.is_floating(b):
            return pa.float64()
        return pa.decimal128(38, max(getattr(a, "scale", 0), getattr(b, "scale", 0)))
    if pa.types.is_floating(a) or pa.types.is_floating(b):
        return pa.float64()
    if pa.types.is_timestamp(a) or pa.types.is_timestamp(b):
        return pa.timestamp("us")
    return pa.string()


INSTANCE_TAG = "__instance"  # executor/distributed.py tags rows with their instance


def run_join(left: pa.Table, right: pa.Table, node, eval_ctx, mem_limit: int = 0) -> pa.Table:
    added: list[str] = []
    left, right, untyped = _typed_nulls(left), _typed_nulls(right), _null_columns(left, right)
    if node.kind != "cross":
        left, right, node, added = _coerced_keys(left, right, node)
    out = _run_join(left, right, node, eval_ctx, mem_limit)
    if added:
        out = out.drop_columns([c for c in added if c in out.column_names])
    for name in untyped & set(out.column_names):
        out = out.set_column(out.column_names.index(name), name, pa.nulls(out.num_rows))
    return out


def _null_columns(*tables: pa.Table) -> set[str]:
    return {f.name for t in tables for f in t.schema if pa.types.is_null(f.type)}


def _typed_nulls(table: pa.Table) -> pa.Table:
    """`table` with its columns of Arrow's null type (`SELECT NULL AS z`) as TINYINT, which
    Acero's hash join accepts; run_join gives them their null type back."""
    for i, f in enumerate(table.schema):
        if pa.types.is_null(f.type):
            table = table.set_column(i, f.name, pa.nulls(table.num_rows, pa.int8()))
    return table


def _run_join(left: pa.Table, right: pa.Table, node, eval_ctx, mem_limit: int) -> pa.Table:
    if getattr(node, "null_safe", False):
        return _null_safe_join(left, right, node, eval_ctx, mem_limit)
    needed = None if node.output is None else set(node.output) | {INSTANCE_TAG}
    # A key lookup on a unique side never outputs more rows than its inputs hold: no size
    # check needed before it (the result is still checked as every intermediate is).
    out = lookup_join(left, right, node.left_keys, node.right_keys, node.kind, needed) \
        if node.kind != "cross" and (node.residual is None or node.kind == "inner") else None
    if out is None:
        check_join_output(left, right, node, mem_limit)
        out = _join(left, right, node, eval_ctx, needed)
    if node.residual is not None and node.kind == "inner":
        out = run_filter(out, node.residual, eval_ctx)
    if needed is not None and not needed.issuperset(out.column_names):
        # A table of no columns has no rows either: keep one when nothing is read above.
        out = out.select([c for c in out.column_names if c in needed] or out.column_names[:1])
    return out


def _null_safe_join(left: pa.Table, right: pa.Table, node, eval_ctx, mem_limit: int) -> pa.Table:
    """Keys compared with `<=>`: each key pair becomes one dictionary code over both sides'
    values, NULL included (a code of its own), and the join runs on the codes."""
    lcodes, rcodes = [], []
    for i, (lk, rk) in enumerate(zip(node.left_keys, node.right_keys)):
        both = pa.concat_arrays([c for col in (left.column(lk), right.column(rk))
                                 for c in col.chunks] or [pa.array([], left.schema.field(lk).type)])
        codes = pc.dictionary_encode(both, null_encoding="encode").indices.cast(pa.int64())
        lcodes.append(f"__nsl{i}")
        rcodes.append(f"__nsr{i}")
        left = left.append_column(lcodes[-1], codes.slice(0, left.num_rows))
        right = right.append_column(rcodes[-1], codes.slice(left.num_rows))
    output = None if node.output is None else list(node.output) + lcodes + rcodes
    coded = replace(node, left_keys=lcodes, right_keys=rcodes, null_safe=False, output=output)
    out = run_join(left, right, coded, eval_ctx, mem_limit)
    return out.drop_columns([c for c in lcodes + rcodes if c in out.column_names])


def _join(left: pa.Table, right: pa.Table, node, eval_ctx, needed: set[str] | None) -> pa.Table:
    if node.kind == "cross":
        return _cross(left, right)
    if node.kind == "null aware left anti":
        return _null_aware_anti(left, right, node)
    if node.residual is not None and node.kind != "inner":
        return _join_with_residual(left, right, node, eval_ctx)
    return hash_join(left, right, node.left_keys, node.right_keys, node.kind, needed, lookup=False)


_MIRRORED = {"inner": "inner", "full outer": "full outer",
             "left outer": "right outer", "right outer": "left outer",
             "left semi": "right semi", "right semi": "left semi",
             "left anti": "right anti", "right anti": "left anti"}


def hash_join(left: pa.Table, right: pa.Table, lkeys: list[str], rkeys: list[str],
              kind: str, needed: set[str] | None = None, lookup: bool = True) -> pa.Table:
    """The hash join of `left` and `right` (keys of equal types): a key lookup when one side's
    integer keys are unique (unless `lookup` is False: already tried), else Acero's, built on
    the smaller input. The output columns are left's then right's, as for `left.join(right)`,
    only those in `needed` when it is given."""
    if needed is not None and not needed & (set(left.column_names) | set(right.column_names)):
        needed = needed | {lkeys[0], rkeys[0]}  # no columns would mean no rows: keep the keys
    out = lookup_join(left, right, lkeys, rkeys, kind, needed) if lookup else None
    if out is not None:
        return out
    if right.num_rows > left.num_rows and kind in _MIRRORED \
            and not set(left.column_names) & set(right.column_names):
        out = _acero_join(right, left, rkeys, lkeys, _MIRRORED[kind], needed)
        if kind in ("inner", "full outer", "left outer", "right outer"):
            out = out.select([c for c in left.column_names + right.column_names
                              if c in out.column_names])
        return out
    return _acero_join(left, right, lkeys, rkeys, kind, needed)


def _acero_join(left: pa.Table, right: pa.Table, lkeys: list[str], rkeys: list[str],
                kind: str, needed: set[str] | None = None) -> pa.Table:
    if kind == "right outer" and "__rrid" not in right.column_names:
        # Acero preserves its build side slowly (150k x 1.5M rows: 0.7 s against 0.34 s for
        # the inner join): the inner join, then the build rows it did not match, null-extended.
        rid = pa.array(np.arange(right.num_rows, dtype=np.int64))
        inner = _acero_join(left, right.append_column("__rrid", rid), lkeys, rkeys, "inner",
                            None if needed is None else needed | {"__rrid"})
        matched = _matched(inner.column("__rrid"), right.num_rows)
        unmatched = _null_extend(right.filter(pc.invert(matched)), left.schema, False)
        inner = inner.drop_columns(["__rrid"])
        return pa.concat_tables([inner, unmatched.select(inner.column_names).cast(inner.schema)])
    left_out = [] if kind in ("right semi", "right anti") else \
        [c for c in left.column_names if needed is None or c in needed]
    right_out = [] if kind in ("left semi", "left anti") else \
        [c for c in right.column_names if needed is None or c in needed]
    if not left_out and not right_out:  # nothing is read above: the row count still is
        if kind in ("right semi", "right anti"):
            right_out = rkeys[:1]
        else:
            left_out = lkeys[:1]
    wanted = left_out + right_out
    left, left_parked = join_payload.park(left, "l", lkeys)
    right, right_parked = join_payload.park(right, "r", rkeys)
    left_out = _parked_out(left_out, left, left_parked, "l")
    right_out = _parked_out(right_out, right, right_parked, "r")
    options = acero.HashJoinNodeOptions(kind, lkeys, rkeys, left_out, right_out)
    out = acero.Declaration("hashjoin", options, inputs=[
        acero.Declaration("table_source", acero.TableSourceNodeOptions(left)),
        acero.Declaration("table_source", acero.TableSourceNodeOptions(right)),
    ]).to_table(use_threads=True)
    if left_parked is None and right_parked is None:
        return out
    out = join_payload.unpark(join_payload.unpark(out, "l", left_parked), "r", right_parked)
    return out.select(wanted)


def _parked_out(out: list[str], table: pa.Table, parked: pa.Table | None, side: str) -> list[str]:
    """A side's output columns with its parked STRUCT columns as their row id column
    (join_payload.py), the others kept in place."""
    if parked is None:
        return out
    kept = [c for c in out if c in table.column_names]
    return kept + [join_payload.PARKED + side] if len(kept) < len(out) else kept


def _null_extend(table: pa.Table, other: pa.Schema, table_first: bool) -> pa.Table:
    nulls = [pa.nulls(table.num_rows, f.type) for f in other]
    if table_first:
        return pa.Table.from_arrays(table.columns + nulls, names=table.column_names + other.names)
    return pa.Table.from_arrays(nulls + table.columns, names=other.names + table.column_names)


def _join_with_residual(left: pa.Table, right: pa.Table, node, eval_ctx) -> pa.Table:
    lrid = pa.array(np.arange(left.num_rows, dtype=np.int64))
    rrid = pa.array(np.arange(right.num_rows, dtype=np.int64))
    left2, right2 = left.append_column("__lrid", lrid), right.append_column("__rrid", rrid)
    needed = None
    if _keeps_one_side(node.kind):  # only the ids and what the residual reads are paired
        refs = {c.name for c in node.residual.find_all(exp.Column)}
        if refs <= set(left.column_names) | set(right.column_names):
            needed = refs | {"__lrid", "__rrid"}
    pairs = hash_join(left2, right2, node.left_keys, node.right_keys, "inner", needed)
    pairs = run_filter(pairs, node.residual, eval_ctx)
    # which rows of each side have a pair: the row ids are 0..n-1, so a mask set by the ids
    # (a hash set of millions of ids, pc.is_in, cost TPC-H Q21 a fifth of its time)
    matched_l = _matched(pairs.column("__lrid"), left.num_rows)
    matched_r = _matched(pairs.column("__rrid"), right.num_rows)
    kind = node.kind
    if kind == "left semi":
        return left.filter(matched_l)
    if kind == "left anti":
        return left.filter(pc.invert(matched_l))
    if kind == "right semi":
        return right.filter(matched_r)
    if kind == "right anti":
        return right.filter(pc.invert(matched_r))
    inner = pairs.drop_columns(["__lrid", "__rrid"])
    parts = [inner]
    if kind in ("left outer", "full outer"):
        parts.append(_null_extend(left.filter(pc.invert(matched_l)), right.schema, True))
    if kind in ("right outer", "full outer"):
        parts.append(_null_extend(right.filter(pc.invert(matched_r)), left.schema, False))
    schema = pa.schema(list(left.schema) + list(right.schema))
    return pa.concat_tables([p.select(schema.names).cast(schema) for p in parts])


def _keeps_one_side(kind: str) -> bool:
    return kind in ("left semi", "left anti", "right semi", "right anti")


def _matched(row_ids: pa.ChunkedArray, rows: int) -> pa.Array:
    """bool per row: whether `row_ids` (ids in 0..rows-1) holds it."""
    mask = np.zeros(rows, dtype=bool)
    for chunk in row_ids.chunks:
        mask[chunk.to_numpy()] = True
    return pa.array(mask)


def _null_aware_anti(left: pa.Table, right: pa.Table, node) -> pa.Table:
    """NOT IN semantics: any NULL on the right makes every row unknown (no rows); a NULL on
    the left is unknown unless the right side is empty."""
    if right.num_rows == 0:
        return left
    if any(right.column(k).null_count for k in node.right_keys):
        return left.slice(0, 0)
    out = hash_join(left, right, node.left_keys, node.right_keys, "left anti")
    for k in node.left_keys:
        if out.column(k).null_count:  # a filter copies every column, strings too
            out = out.filter(pc.is_valid(out.column(k)))
    return out


def _cross(left: pa.Table, right: pa.Table) -> pa.Table:
    n, m = left.num_rows, right.num_rows
    li = np.repeat(np.arange(n, dtype=np.int64), m)
    ri = np.tile(np.arange(m, dtype=np.int64), n)
    l2, r2 = left.take(pa.array(li)), right.take(pa.array(ri))
    return pa.Table.from_arrays(l2.columns + r2.columns, names=l2.column_names + r2.column_names)
