"""Doris's lambda array functions: the lambda's body is evaluated once over the flattened
elements of the arrays (its parameters bound to them, the outer columns taken for each
element's row), and the lists rebuilt with the same offsets: vectorised like any expression.

    array_map(x -> expr, arr [, arr2 ...])     ARRAY of expr per element ((x, y) -> ... with
                                               as many arrays, of equal lengths per row)
    array_filter(x -> cond, arr)               the elements whose cond is true
    array_count(x -> cond, arr)                how many elements' cond is true
    array_exists(x -> cond, arr)               ARRAY<BOOLEAN> of cond per element
    array_first / array_last(x -> cond, arr)   the first / last element whose cond is true,
                                               NULL when none is
    array_first_index / array_last_index(...)  its 1-based position, 0 when none is
    array_sortby(src, keys)                    src ordered by keys (ascending, NULL keys first,
    array_sortby((x, ...) -> key, src, ...)    ties in place); NULL keys array: src unchanged
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from sqlglot import exp

from executor.expressions.context import Frame, Value
from executor.expressions.errors import ExpressionError
from executor.expressions.list_layout import build, is_list, parent_rows, parts, positions
from executor.expressions.vectors import to_array


def _lambda_call(node: exp.Expression) -> tuple[exp.Lambda, list[exp.Expression]]:
    args = [node.this, node.expression] if isinstance(node, exp.ArrayFilter) \
        else list(node.expressions)
    if not args or not isinstance(args[0], exp.Lambda):
        raise ExpressionError(f"{_name(node)} takes a lambda (x -> ...) and an array")
    return args[0], args[1:]


def _name(node: exp.Expression) -> str:
    return "array_filter" if isinstance(node, exp.ArrayFilter) else str(node.this).lower()


def _elements(node: exp.Expression, frame: Frame
              ) -> tuple[pa.Array, np.ndarray, np.ndarray, pa.Array]:
    """(the body's value per element, offsets, valid rows, the first array's elements)."""
    lam, arrays = _lambda_call(node)
    params = [p.name for p in lam.expressions]
    if len(params) != len(arrays):
        raise ExpressionError(f"{_name(node)}: the lambda takes {len(params)} argument(s) but "
                              f"{len(arrays)} array(s) were given")
    lists = [_list(frame.eval(a), frame.n) for a in arrays]
    if not all(is_list(a.type) for a in lists):
        raise ExpressionError(f"{_name(node)} requires ARRAY arguments")
    offsets, first, valid = parts(lists[0])
    values = [first]
    for other in lists[1:]:
        o, v, ok = parts(other)
        if not np.array_equal(np.diff(o)[valid & ok], np.diff(offsets)[valid & ok]):
            raise ExpressionError(f"{_name(node)}: the arrays of a row must be of equal length")
        values.append(v)
        valid = valid & ok
    rows = parent_rows(offsets)
    batch = frame.batch.take(pa.array(rows)) if frame.batch.num_columns else \
        pa.table({"__lambda_rows": pa.array(rows)})
    bound = {}
    for i, (name, v) in enumerate(zip(params, values)):
        column = f"__lambda_{i}_{name}"
        batch = batch.append_column(column, v)
        bound[name.lower()] = column

    def rename(n: exp.Expression) -> exp.Expression:
        if isinstance(n, (exp.Identifier, exp.Column)) and not isinstance(n.parent, exp.Column) \
                and n.name.lower() in bound and (isinstance(n, exp.Identifier) or not n.table):
            return exp.column(bound[n.name.lower()], quoted=True)
        return n
    body = lam.this.copy().transform(rename)
    out = Frame(batch, frame.ctx, frame._evaluator).eval(body)  # noqa: SLF001
    return to_array(out, batch.num_rows), offsets, valid, first


def _list(v: Value, n: int) -> pa.Array:
    """The value as an array; a bare NULL as a NULL array per row."""
    arr = to_array(v, n)
    return pa.nulls(n, pa.list_(pa.int8())) if pa.types.is_null(arr.type) else arr


def _true_per_row(out: pa.Array, offsets: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(which elements' condition is true, how many per row)."""
    keep = np.asarray(pc.fill_null(out.cast(pa.bool_()), False).to_numpy(zero_copy_only=False),
                      dtype=bool)
    counts = np.bincount(parent_rows(offsets)[keep], minlength=len(offsets) - 1)
    return keep, counts.astype(np.int64)


def eval_array_map(node: exp.Expression, frame: Frame) -> Value:
    out, offsets, valid, _ = _elements(node, frame)
    return build(offsets, out, valid)


def eval_array_exists(node: exp.Expression, frame: Frame) -> Value:
    out, offsets, valid, _ = _elements(node, frame)
    return build(offsets, out.cast(pa.bool_()), valid)


def eval_array_filter(node: exp.Expression, frame: Frame) -> Value:
    out, offsets, valid, values = _elements(node, frame)
    keep, counts = _true_per_row(out, offsets)
    new_offsets = np.concatenate(([0], np.cumsum(counts)))
    return build(new_offsets, values.filter(pa.array(keep)), valid)


def eval_array_count(node: exp.Expression, frame: Frame) -> Value:
    out, offsets, valid, _ = _elements(node, frame)
    return pa.array(_true_per_row(out, offsets)[1], pa.int64(), mask=~valid)


def _first_true(out: pa.Array, offsets: np.ndarray, last: bool) -> tuple[np.ndarray, np.ndarray]:
    """(the flat index of each row's first / last true element, rows that have one)."""
    keep, _ = _true_per_row(out, offsets)
    index = np.flatnonzero(keep)
    rows = parent_rows(offsets)[index]
    if last:
        index, rows = index[::-1], rows[::-1]
    found_rows, first = np.unique(rows, return_index=True)
    chosen = np.zeros(len(offsets) - 1, np.int64)
    chosen[found_rows] = index[first]
    found = np.zeros(len(offsets) - 1, bool)
    found[found_rows] = True
    return chosen, found


def _find(last: bool, want_index: bool):
    def handler(node: exp.Expression, frame: Frame) -> Value:
        out, offsets, valid, values = _elements(node, frame)
        chosen, found = _first_true(out, offsets, last)
        if want_index:
            index = np.where(found, positions(offsets)[chosen] + 1 if len(values) else 0, 0)
            return pa.array(index, pa.int64(), mask=~valid)
        picked = values.take(pa.array(np.where(found, chosen, 0))) if len(values) else \
            pa.nulls(len(found), values.type)
        return pc.if_else(pa.array(found & valid), picked, pa.scalar(None, values.type))
    return handler


def eval_array_sortby(node: exp.Expression, frame: Frame) -> Value:
    args = list(node.expressions)
    if args and isinstance(args[0], exp.Lambda):  # the lambda's value per element of args[1]
        keys, _, _, _ = _elements(node, frame)
        offsets, values, valid = parts(to_array(frame.eval(args[1]), frame.n))
    else:
        if len(args) != 2:
            raise ExpressionError("array_sortby takes an array and its keys, or a lambda and "
                                  "arrays")
        src, key_list = (_list(frame.eval(a), frame.n) for a in args)
        if not (is_list(src.type) and is_list(key_list.type)):
            raise ExpressionError("array_sortby requires ARRAY arguments")
        offsets, values, valid = parts(src)
        keys = _keys_on(offsets, valid, key_list)
    order = pc.sort_indices(pa.table({"r": pa.array(parent_rows(offsets)), "k": keys}),
                            sort_keys=[("r", "ascending"), ("k", "ascending")],
                            null_placement="at_start")
    return build(offsets, values.take(order), valid)


def _keys_on(offsets: np.ndarray, valid: np.ndarray, key_list: pa.Array) -> pa.Array:
    """The keys laid on the source's elements; NULL for a row whose keys array is NULL (its
    order stays: the sort is stable)."""
    key_offsets, keys, key_valid = parts(key_list)
    both = valid & key_valid
    if not np.array_equal(np.diff(offsets)[both], np.diff(key_offsets)[both]):
        raise ExpressionError("function array_sortby's 2-th argument should have same offsets "
                              "with first argument")
    keys = keys.filter(pa.array(np.repeat(valid, np.diff(key_offsets))))
    has = np.repeat(key_valid, np.diff(offsets))
    index = np.full(len(has), -1, np.int64)
    index[has] = np.arange(int(has.sum()))
    return keys.take(pa.array(index, mask=index < 0))


HANDLERS = {exp.ArrayFilter: eval_array_filter}
FUNCTIONS = {"ARRAY_MAP": eval_array_map, "ARRAY_FILTER": eval_array_filter,
             "ARRAY_COUNT": eval_array_count, "ARRAY_EXISTS": eval_array_exists,
             "ARRAY_FIRST": _find(False, False), "ARRAY_LAST": _find(True, False),
             "ARRAY_FIRST_INDEX": _find(False, True), "ARRAY_LAST_INDEX": _find(True, True),
             "ARRAY_SORTBY": eval_array_sortby}
