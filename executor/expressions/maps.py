"""MAP and STRUCT functions (Doris 2.1's map and struct functions), vectorised.

A MAP value is an Arrow map array: `list_layout.parts` takes it apart into offsets, the flat
entries (a struct of `key` and `value`) and the valid rows, like an ARRAY; lookups compare the
flat keys with each row's needle (taken per entry by `parent_rows`) in one kernel. A STRUCT is
an Arrow struct array whose fields are the children.

    {k1: v1, ...} / map(k1, v1, ...)   keys and values coerced each to their common type
    m[k] / element_at(m, k)            the value of the key's last entry; NULL if absent
    map_keys / map_values              the keys / values as an ARRAY
    map_size, size / cardinality       the number of entries (ARRAY too)
    map_contains_key / _value          1 / 0 (equality as `=` compares; NULL map: NULL)
    struct(v1, ...) / {v1, ...}        fields named col1, col2, ... (Doris's StructLiteral)
    named_struct('f1', v1, ...)        names given by constant strings
    struct_element(s, 'f1' | 1)        a field by name (case-insensitive) or 1-based position

Calls on ARRAY values of the names both families share (element_at, `[]`, size, cardinality)
go on to arrays.py.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from sqlglot import exp

from executor.expressions import arrays, casts
from executor.expressions.context import Frame, Value
from executor.expressions.errors import ExpressionError
from executor.expressions.list_layout import build, nonnull, parent_rows, parts
from executor.expressions.nested_casts import build_map
from executor.expressions.variant_text import constant_keys, variant_element
from executor.expressions.vectors import on_arrays
from storage.types import from_arrow, is_json_type


def _is_map(v: Value) -> bool:
    return pa.types.is_map(v.type)


def _need_map(v: Value, name: str) -> None:
    if not _is_map(v) and not pa.types.is_null(v.type):
        raise ExpressionError(f"{name} requires a MAP argument, got {from_arrow(v.type).desc_sql()}")


def _as_map(v: pa.Array) -> pa.Array:
    return pa.nulls(len(v), pa.map_(pa.string(), pa.null())) if pa.types.is_null(v.type) else v


# -- constructors ----------------------------------------------------------------------------------
def eval_map(node: exp.VarMap, frame: Frame) -> Value:
    keys = [frame.eval(e) for e in node.args["keys"].expressions]
    values = [frame.eval(e) for e in node.args["values"].expressions]
    if not keys:
        return pa.scalar([], pa.map_(pa.string(), pa.null()))
    key_type, value_type = casts.union_type(keys), casts.union_type(values)
    if pa.types.is_null(key_type):
        key_type = pa.string()
    columns = casts.coerce(keys, key_type) + casts.coerce(values, value_type)
    k = len(keys)
    return on_arrays(lambda *cols: _zip_map(cols[:k], cols[k:]), *columns, n=frame.n)


def _interleave(cols: tuple[pa.Array, ...]) -> pa.Array:
    """Row-major: row 0's columns, then row 1's, ..."""
    n, k = len(cols[0]), len(cols)
    order = np.arange(n * k, dtype=np.int64).reshape(k, n).T.reshape(-1)
    return pa.concat_arrays(list(cols)).take(pa.array(order))


def _zip_map(keys: tuple[pa.Array, ...], values: tuple[pa.Array, ...]) -> pa.Array:
    n, k = len(keys[0]), len(keys)
    offsets = np.arange(0, n * k + 1, k, dtype=np.int64)
    return build_map(offsets, _interleave(keys), _interleave(values))


def eval_struct(node: exp.Struct, frame: Frame) -> Value:
    """`struct(v1, ...)` / `{v1, ...}`: fields col1, col2, ...; a PropertyEQ item (sqlglot's
    own `{'name': v}` form, from other dialects' text) names its field."""
    names, values = [], []
    for i, item in enumerate(node.expressions, 1):
        if isinstance(item, exp.PropertyEQ):
            names.append(item.this.name)
            item = item.expression
        else:
            names.append(f"col{i}")
        values.append(frame.eval(item))
    return _make_struct(names, values, frame)


def eval_named_struct(node: exp.Anonymous, frame: Frame) -> Value:
    args = list(node.expressions)
    if not args or len(args) % 2:
        raise ExpressionError("named_struct requires an even number of arguments: names and "
                              "values")
    names = []
    for name in args[0::2]:
        if not (isinstance(name, exp.Literal) and name.is_string):
            raise ExpressionError("named_struct's field names must be constant strings")
        names.append(name.this)
    if len({n.lower() for n in names}) != len(names):
        raise ExpressionError(f"The name of the struct field cannot be repeated. "
                              f"same name fields are {names}")
    return _make_struct(names, [frame.eval(v) for v in args[1::2]], frame)


def _make_struct(names: list[str], values: list[Value], frame: Frame) -> Value:
    if not values:
        raise ExpressionError("struct requires at least one argument")
    values = [v if not pa.types.is_null(v.type) else casts.cast_value(v, pa.bool_())
              for v in values]

    def make(*cols: pa.Array) -> pa.Array:
        return pa.StructArray.from_arrays(list(cols), fields=[
            pa.field(name, c.type) for name, c in zip(names, cols)])
    return on_arrays(make, *values, n=frame.n)


# -- MAP access ------------------------------------------------------------------------------------
def _hits(m: pa.Array, needle: pa.Array, field: int) -> tuple[np.ndarray, np.ndarray, pa.Array]:
    """(offsets, per entry: its key / value equals its row's needle, entries)."""
    offsets, entries, _ = parts(m)
    flat = entries.field(field)
    if len(flat) == 0 or pa.types.is_null(flat.type):
        return offsets, np.zeros(len(flat), dtype=bool), entries
    per_entry = needle.take(pa.array(parent_rows(offsets)))
    target = casts.comparison_type(flat, per_entry)
    eq = pc.equal(casts.cast_value(flat, target), casts.cast_value(per_entry, target))
    return offsets, np.asarray(pc.fill_null(eq, False).to_numpy(zero_copy_only=False),
                               dtype=bool), entries


def _get(m: pa.Array, key: pa.Array) -> pa.Array:
    offsets, hit, entries = _hits(m, key, 0)
    items = entries.field(1)
    found = np.full(len(m), -1, dtype=np.int64)
    idx = np.flatnonzero(hit)
    found[parent_rows(offsets)[idx]] = idx  # ascending: the last equal key's entry wins
    if len(items) == 0:
        return pa.nulls(len(m), items.type)
    taken = items.take(pa.array(np.where(found >= 0, found, 0)))
    return pc.if_else(pa.array(found >= 0), taken, pa.scalar(None, items.type))


def _contains(field: int):
    def contains(m: pa.Array, needle: pa.Array) -> pa.Array:
        offsets, hit, _ = _hits(m, needle, field)
        counts = np.bincount(parent_rows(offsets), weights=hit, minlength=len(m))
        return pa.array(counts > 0, pa.bool_(), mask=~nonnull(m))
    return contains


def _column(field: int):
    def column(m: pa.Array) -> pa.Array:
        offsets, entries, valid = parts(m)
        return build(offsets, entries.field(field), valid)
    return column


def _size(m: pa.Array) -> pa.Array:
    offsets, _, valid = parts(m)
    return pa.array(np.diff(offsets), pa.int64(), mask=~valid)


def _map_call(name: str, impl, arity: int = 1):
    def handler(node: exp.Expression, frame: Frame) -> Value:
        args = arrays._args(node) + ([node.args["key"]] if node.args.get("key") else [])
        if len(args) != arity:
            raise ExpressionError(f"Can not found function '{name}' which has {len(args)} arity.")
        values = [frame.eval(a) for a in args]
        _need_map(values[0], name)
        return on_arrays(lambda m, *rest: impl(_as_map(m), *rest), *values, n=frame.n)
    return handler


def _map_or_array(name: str, map_impl, array_impl, arity: int = 1):
    """A name both families have: the MAP form when the first argument is a MAP, else the
    ARRAY one (arrays.py's implementation)."""
    def handler(node: exp.Expression, frame: Frame) -> Value:
        args = arrays._args(node)
        if len(args) != arity:
            raise ExpressionError(f"Can not found function '{name}' which has {len(args)} arity.")
        values = [frame.eval(a) for a in args]
        if _is_map(values[0]):
            return on_arrays(map_impl, *values, n=frame.n)
        arrays._need_list(values[0], name)
        return on_arrays(lambda a, *rest: array_impl(arrays._as_list(a), *rest), *values,
                         n=frame.n)
    return handler


def eval_bracket(node: exp.Bracket, frame: Frame) -> Value:
    """`m[k]` on a MAP, `v['a']['b']` on a VARIANT (the whole path at once, variant_text.py),
    else arrays.py's `arr[i]` / `arr[a:b]`."""
    base, keys = _bracket_chain(node)
    value = frame.eval(base)
    if is_json_type(value.type):
        path = constant_keys([frame.eval(k) for k in keys])
        if path is None:
            raise ExpressionError("the path of a VARIANT sub-column must be a constant")
        return variant_element(value, path)
    if base is not node.this:
        value = frame.eval(node.this)
    if _is_map(value) and not isinstance(node.expressions[0], exp.Slice):
        return on_arrays(_get, value, frame.eval(node.expressions[0]), n=frame.n)
    return arrays.bracket_of(value, node, frame)


def _bracket_chain(node: exp.Bracket) -> tuple[exp.Expression, list[exp.Expression]]:
    """`x[k1][k2]...` -> (x, [k1, k2, ...]), stopping at a slice or a multi-key bracket."""
    keys: list[exp.Expression] = []
    cur: exp.Expression = node
    while isinstance(cur, exp.Bracket) and len(cur.expressions) == 1 \
            and not isinstance(cur.expressions[0], exp.Slice):
        keys.append(cur.expressions[0])
        cur = cur.this
    if not keys:
        return node.this, []
    return cur, keys[::-1]


def _element_at(node: exp.Expression, frame: Frame) -> Value:
    """element_at(v, 'a') on a VARIANT; on a MAP or an ARRAY as before."""
    args = arrays._args(node)
    if len(args) == 2:
        value = frame.eval(args[0])
        if is_json_type(value.type):
            path = constant_keys([frame.eval(args[1])])
            if path is None:
                raise ExpressionError("the path of a VARIANT sub-column must be a constant")
            return variant_element(value, path)
    return _ELEMENT_AT(node, frame)


# -- STRUCT access ---------------------------------------------------------------------------------
def eval_struct_element(node: exp.Anonymous, frame: Frame) -> Value:
    args = list(node.expressions)
    if len(args) != 2:
        raise ExpressionError(f"Can not found function 'struct_element' which has "
                              f"{len(args)} arity.")
    s = frame.eval(args[0])
    if not pa.types.is_struct(s.type):
        raise ExpressionError(f"struct_element requires a STRUCT argument, got "
                              f"{from_arrow(s.type).desc_sql()}")
    which = args[1]
    if not isinstance(which, exp.Literal):
        raise ExpressionError("struct_element's field must be a constant string or integer")
    names = [f.name for f in s.type]
    if which.is_string:
        low = [n.lower() for n in names]
        if which.this.lower() not in low:
            raise ExpressionError(f"the specified field name {which.this} was not found: "
                                  f"{from_arrow(s.type).desc_sql()}")
        i = low.index(which.this.lower())
    else:
        i = int(which.this) - 1
        if not 0 <= i < len(names):
            raise ExpressionError(f"the specified field index out of bound: {which.this}")
    if isinstance(s, pa.Scalar):
        return s[i] if s.is_valid else pa.scalar(None, s.type.field(i).type)
    child = s.field(i)
    valid = nonnull(s)
    return child if valid.all() else pc.if_else(pa.array(valid), child,
                                                pa.scalar(None, child.type))


_ELEMENT_AT = _map_or_array("element_at", _get, arrays._element_at, 2)

HANDLERS = {
    exp.VarMap: eval_map, exp.Struct: eval_struct, exp.Bracket: eval_bracket,
    exp.MapKeys: _map_call("map_keys", _column(0)),
    exp.MapSize: _map_call("map_size", _size),
    exp.MapContainsKey: _map_call("map_contains_key", _contains(0), 2),
}

FUNCTIONS = {
    "NAMED_STRUCT": eval_named_struct, "STRUCT_ELEMENT": eval_struct_element,
    "MAP_VALUES": _map_call("map_values", _column(1)),
    "MAP_CONTAINS_VALUE": _map_call("map_contains_value", _contains(1), 2),
    "ELEMENT_AT": _element_at,
    "SIZE": _map_or_array("size", _size, arrays._size),
    "CARDINALITY": _map_or_array("cardinality", _size, arrays._size),
}
