"""Small helpers over `Value` (an Arrow array or scalar): broadcasting, numpy round trips, and the
per-distinct-value fallback.

The fallback (`map_distinct`, `map_distinct_params`) is the one place where Python runs per value:
it runs once per *distinct* value or parameter combination, never per row, and every caller says
why it needs it.
"""

from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from executor.expressions.context import Value


def all_scalar(*values: Value) -> bool:
    return all(isinstance(v, pa.Scalar) for v in values)


def null_of(t: pa.DataType) -> pa.Scalar:
    return pa.scalar(None, t)


def to_array(v: Value, n: int) -> pa.Array:
    """Broadcast a scalar to `n` rows (arrays pass through)."""
    if isinstance(v, pa.Scalar):
        if not v.is_valid:
            return pa.nulls(n, v.type)
        return pa.repeat(v, n)
    if isinstance(v, pa.ChunkedArray):
        return v.combine_chunks()
    return v


def on_arrays(fn: Callable[..., pa.Array], *values: Value, n: int) -> Value:
    """Run an array-only function; all-scalar inputs give a scalar (computed on 1-row arrays)."""
    if all_scalar(*values):
        return fn(*[to_array(v, 1) for v in values])[0]
    return fn(*[to_array(v, n) for v in values])


def scalar_wrap(fn: Callable[[pa.Array], pa.Array]) -> Callable[[Value], Value]:
    """Adapt an array -> array function so that a scalar input gives a scalar output."""
    def wrapper(v: Value) -> Value:
        if isinstance(v, pa.Scalar):
            return fn(to_array(v, 1))[0]
        return fn(v)
    return wrapper


def valid_mask(arr: pa.Array) -> np.ndarray:
    """True where the array is non-null, as numpy bool."""
    if arr.null_count == 0:
        return np.ones(len(arr), dtype=bool)
    return pc.is_valid(arr).to_numpy(zero_copy_only=False)


def to_numpy(arr: pa.Array, fill: Any = 0) -> np.ndarray:
    """Values as numpy with nulls replaced by `fill` (pair with `valid_mask`)."""
    if arr.null_count:
        arr = arr.fill_null(fill)
    return arr.to_numpy(zero_copy_only=False)


def from_numpy(values: np.ndarray, valid: np.ndarray | None, t: pa.DataType) -> pa.Array:
    mask = None if valid is None or valid.all() else ~valid
    return pa.array(values, type=t, mask=mask)


def map_distinct(v: Value, fn: Callable[[Any], Any], out_type: pa.DataType) -> Value:
    """Apply a Python function once per distinct non-null value, then gather per row.

    Used only where no Arrow kernel exists (e.g. MD5); NULL in gives NULL out.
    """
    if isinstance(v, pa.Scalar):
        return pa.scalar(None if not v.is_valid else fn(v.as_py()), out_type)
    encoded = pc.dictionary_encode(v)
    mapped = pa.array([fn(x) for x in encoded.dictionary.to_pylist()], type=out_type)
    return pc.take(mapped, encoded.indices)


def map_distinct_params(fn: Callable[..., Value], base: Value, params: Sequence[Value],
                        out_type: pa.DataType, n: int) -> Value:
    """Run `fn(base_subset, *param_python_values)` once per distinct combination of per-row
    parameters, for kernels whose parameters must be constants (e.g. utf8_slice_codeunits
    start/stop). Constant parameters take the direct path with no grouping.
    """
    if all(isinstance(p, pa.Scalar) for p in params):
        return fn(base, *[p.as_py() for p in params])
    base_arr = to_array(base, n)
    keys = np.zeros(n, dtype=np.int64)
    dictionaries: list[list[Any]] = []
    for p in params:
        encoded = pc.dictionary_encode(to_array(p, n))
        values = encoded.dictionary.to_pylist() + [None]
        idx = to_numpy(encoded.indices, len(values) - 1).astype(np.int64)
        keys = keys * len(values) + idx
        dictionaries.append(values)
    uniques, inverse = np.unique(keys, return_inverse=True)
    pieces: list[pa.Array] = []
    positions: list[np.ndarray] = []
    for k, key in enumerate(uniques):
        rows = np.nonzero(inverse == k)[0]
        combo = []
        for values in reversed(dictionaries):
            key, idx = divmod(int(key), len(values))
            combo.append(values[idx])
        combo.reverse()
        result = fn(base_arr.take(pa.array(rows)), *combo)
        pieces.append(to_array(result, len(rows)).cast(out_type))
        positions.append(rows)
    if not pieces:
        return pa.array([], type=out_type)
    order = np.argsort(np.concatenate(positions), kind="stable")
    return pa.concat_arrays(pieces).take(pa.array(order))


def map_distinct_rows(arrays: list[pa.Array], fn: Callable[..., Any],
                      out_type: pa.DataType = pa.string()) -> pa.Array:
    """fn(*row values) once per distinct combination of the arrays' values (equal-length
    arrays), gathered back per row; NULL where any value is NULL. For functions of several
    columns with no Arrow kernel (format, the JSON modifiers)."""
    n = len(arrays[0])
    keys = np.zeros(n, dtype=np.int64)
    columns = []
    valid = np.ones(n, dtype=bool)
    for arr in arrays:
        encoded = pc.dictionary_encode(arr)
        size = len(encoded.dictionary) + 1
        indices = to_numpy(encoded.indices, size - 1).astype(np.int64)
        # renumbered each step, so the combined key stays below n * size
        keys = np.unique(keys * size + indices, return_inverse=True)[1].ravel()
        valid &= valid_mask(arr)
        columns.append((encoded.dictionary.to_pylist(), indices))
    _, first, inverse = np.unique(keys, return_index=True, return_inverse=True)
    results = [fn(*(values[idx[row]] for values, idx in columns)) if valid[row] else None
               for row in first]
    return pa.array(results, out_type).take(pa.array(inverse.ravel()))
