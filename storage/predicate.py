"""Column predicates pushed into storage, and their exact evaluation.

Owns `ColumnPredicate` (what the executor hands to a scan), `PreparedPredicate` (the predicate
bound to a column's type, shared by every index so that they all agree on comparisons) and the
exact row filter. Indexes (short key, zone maps) only ever narrow conservatively; the exact
filter then keeps exactly the rows for which the predicate is TRUE (SQL: a comparison with NULL
is not true, `x IN (..)` is not true for a NULL x).

Values are Python scalars. `to_dict`/`from_dict` give a predicate a JSON form (the catalog journals
DELETE predicates in it): dates, datetimes and decimals are tagged ({"date": "2024-01-31"}).

Values are Python scalars. A value that converts to the column's type without loss is used as a
typed scalar (and is eligible for the short key index); otherwise (2.5 against an INT column,
Decimal('1.005') against DECIMAL(10,2)) pyarrow's comparison kernels compare it in a common type,
which is exact, and the short key index is not used for that predicate.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from decimal import Decimal
from functools import lru_cache, reduce

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from storage.arrays import contiguous
from storage.errors import StorageError
from storage.types import DataType
from storage.value_set import ValueSet

COMPARISONS = ("=", "!=", "<", "<=", ">", ">=")
OPS = (*COMPARISONS, "in", "is_null", "is_not_null")

# An index is probed value by value (bloom filter hashes against every page's filter, bitmap
# dictionary lookups): a set of more values (a runtime filter's, up to millions) is checked on
# the rows instead.
MAX_PROBE_VALUES = 1 << 16
_NUMPY_OPS = {"=": np.equal, "!=": np.not_equal, "<": np.less, "<=": np.less_equal,
              ">": np.greater, ">=": np.greater_equal}
_KERNELS = {"=": pc.equal, "!=": pc.not_equal, "<": pc.less, "<=": pc.less_equal,
            ">": pc.greater, ">=": pc.greater_equal}


@dataclass(frozen=True)
class ColumnPredicate:
    """`column op values`: op in OPS; one value for comparisons, any number for `in`."""

    column: str
    op: str
    values: tuple = ()
    # `in` only: the values as an Arrow array instead of `values` (a runtime filter's build
    # keys: never turned into Python objects unless an index needs them)
    array: pa.Array | None = field(default=None, compare=False, repr=False)

    def __post_init__(self) -> None:
        if self.op not in OPS:
            raise ValueError(f"Unknown predicate operator {self.op!r}")
        if self.array is not None and (self.op != "in" or self.values):
            raise ValueError("An array of values goes with `in` and no other values")
        object.__setattr__(self, "values", tuple(self.values))
        if self.op in COMPARISONS and len(self.values) != 1:
            raise ValueError(f"Operator {self.op} takes exactly one value")
        if self.op in ("is_null", "is_not_null") and self.values:
            raise ValueError(f"Operator {self.op} takes no value")

    def to_dict(self) -> dict:
        values = self.array.to_pylist() if self.array is not None else self.values
        return {"column": self.column, "op": self.op, "values": [_to_json(v) for v in values]}

    @staticmethod
    def from_dict(d: dict) -> ColumnPredicate:
        return ColumnPredicate(d["column"], d["op"], tuple(_from_json(v) for v in d["values"]))


_TAGS = {"date": dt.date.fromisoformat, "datetime": dt.datetime.fromisoformat, "decimal": Decimal}


def _to_json(value):
    if isinstance(value, dt.datetime):
        return {"datetime": value.isoformat()}
    if isinstance(value, dt.date):
        return {"date": value.isoformat()}
    if isinstance(value, Decimal):
        return {"decimal": str(value)}
    return value


def _from_json(value):
    if isinstance(value, dict):
        (tag, text), = value.items()
        return _TAGS[tag](text)
    return value


@dataclass
class PreparedPredicate:
    """A predicate bound to its column's type."""

    column: str
    op: str
    dtype: DataType
    scalars: list = field(default_factory=list)  # pa.Scalar per non-NULL value
    never_true: bool = False
    # values exactly representable in the column type (`in`: as a ValueSet), or None
    exact: list | ValueSet | None = field(default=None, repr=False)
    # rows evaluated / rows that passed, over the segments of the scans sharing this object
    # (storage/row_filter.py orders a conjunction by it; updates may race, it is a statistic)
    seen: int = field(default=0, repr=False, compare=False)
    passed: int = field(default=0, repr=False, compare=False)

    def observe(self, rows: int, passed: int) -> None:
        self.seen += rows
        self.passed += passed

    @property
    def pass_fraction(self) -> float | None:
        return self.passed / self.seen if self.seen else None

    @property
    def number(self):
        """A comparison's value in the column's numpy domain (integers, floats, DATE as days,
        DATETIME as ticks, DECIMAL as unscaled), or None when the comparison is not run in
        numpy."""
        memo = self.__dict__.get("_number", _UNSET)
        if memo is _UNSET:
            memo = self.__dict__["_number"] = _numpy_number(self)
        return memo

    @property
    def key_values(self) -> list | None:
        """The exact values as Python objects, or None."""
        return self.exact.keys if isinstance(self.exact, ValueSet) else self.exact

    @property
    def probe_values(self) -> list | None:
        """`key_values` for probing an index value by value, None when there are more than
        MAX_PROBE_VALUES (such a set is not even converted to Python values)."""
        if isinstance(self.exact, ValueSet) and len(self.exact) > MAX_PROBE_VALUES:
            return None
        return self.key_values

    @property
    def value_set(self) -> ValueSet | None:
        """An `in` predicate's exact values (sorted, distinct, of the column type), or None."""
        return self.exact if isinstance(self.exact, ValueSet) else None

    def compare(self, op: str, arr, scalar: pa.Scalar):
        """`arr op scalar` with pyarrow's kernels; a type mismatch is a StorageError."""
        try:
            return _KERNELS[op](arr, scalar)
        except (pa.ArrowNotImplementedError, pa.ArrowInvalid, pa.ArrowTypeError) as exc:
            raise StorageError(f"Cannot compare column {self.column} ({self.dtype}) with "
                               f"{scalar.as_py()!r}: {exc}") from exc

    def evaluate_numpy(self, arr) -> np.ndarray:
        """`evaluate` as a numpy bool array; comparisons of fixed-width numbers and integer
        value sets run in numpy directly (no Arrow mask to unpack)."""
        arr = contiguous(arr)
        if not arr.null_count:
            values = self._numpy_operand(arr)
            if values is not None:
                return self._evaluate_values(values)
        if self.value_set is not None and not arr.null_count:
            return self.value_set.contains_numpy(arr)
        return _numpy_mask(self.evaluate(arr))

    def evaluate_at(self, arr: pa.Array, rows: np.ndarray) -> np.ndarray:
        """`evaluate_numpy` of the given rows (ascending positions in `arr`) only."""
        arr = contiguous(arr)
        if not arr.null_count:
            values = self._numpy_operand(arr)
            if values is not None:
                return self._evaluate_values(values[rows])
        return self.evaluate_numpy(arr.take(pa.array(rows)))

    def _numpy_operand(self, arr: pa.Array) -> np.ndarray | None:
        """The column values as numpy when this predicate runs on numpy values, else None."""
        if self.never_true:
            return None
        vs = self.value_set
        if vs is not None:
            return fixed_width_numpy(arr) if vs.numeric and pa.types.is_integer(arr.type) \
                else None
        if self.op in _NUMPY_OPS and self.number is not None and arr.type == self.dtype.arrow():
            return fixed_width_numpy(arr)
        return None

    def _evaluate_values(self, values: np.ndarray) -> np.ndarray:
        vs = self.value_set
        if vs is not None:
            return vs.contains_values(values)
        return _NUMPY_OPS[self.op](values, self.number)

    def evaluate(self, arr) -> pa.Array | pa.ChunkedArray:
        """Boolean mask, TRUE exactly where the predicate holds (never NULL)."""
        if self.op == "is_null":
            return pc.is_null(arr)
        if self.op == "is_not_null":
            return pc.is_valid(arr)
        if self.never_true:
            return pa.repeat(False, len(arr)) if isinstance(arr, pa.Array) else \
                pa.chunked_array([pa.repeat(False, len(arr))], pa.bool_())
        if self.value_set is not None:
            return self.value_set.contains(arr)  # NULL x: false
        if self.op == "in":
            mask = reduce(pc.or_kleene, [self.compare("=", arr, s) for s in self.scalars])
        else:
            mask = self.compare(self.op, arr, self.scalars[0])
        return pc.fill_null(mask, False)


def values_key(values) -> tuple:
    """Predicate values as a cache key: each with its Python type (1 == 1.0 == True would
    otherwise share an entry)."""
    return tuple((type(v), v) for v in values)


def prepare(pred: ColumnPredicate, dtype: DataType) -> PreparedPredicate:
    """Bind `pred` to the column type `dtype`.

    Every segment of a scan prepares the same predicates (a runtime filter's IN list may hold
    a thousand values), so results are cached; the key carries each value's Python type, as
    1 == 1.0 == True would otherwise share an entry. Prepared predicates are never mutated
    (their lazily built value sets are the same for every user)."""
    memo = pred.__dict__.get("_prepared")  # the same object again (one scan, many segments)
    if memo is not None and memo[0] == dtype:
        return memo[1]
    if pred.array is not None:
        prepared = _prepare_array(pred, dtype)
    else:
        key = (pred.column, pred.op, values_key(pred.values), dtype)
        prepared = _prepare_cached(key, pred, dtype)
    object.__setattr__(pred, "_prepared", (dtype, prepared))
    return prepared


@lru_cache(maxsize=256)
def _prepare_cached(key: tuple, pred: ColumnPredicate, dtype: DataType) -> PreparedPredicate:
    return _prepare(pred, dtype)


def _prepare(pred: ColumnPredicate, dtype: DataType) -> PreparedPredicate:
    prepared = PreparedPredicate(pred.column, pred.op, dtype)
    if pred.op in ("is_null", "is_not_null"):
        return prepared
    values = [v for v in pred.values if v is not None]
    if not values or (pred.op != "in" and len(values) != len(pred.values)):
        prepared.never_true = True  # `x = NULL`, `x IN (NULL)`: never TRUE
        return prepared
    if pred.op == "in" and len(values) > _VECTOR_IN:
        array = _exact_array(values, dtype)
        if array is not None:  # every value is of the column type: no per-value scalars
            prepared.exact = ValueSet(array)
            return prepared
    exact = [_exact_scalar(v, dtype) for v in values]
    prepared.scalars = [s if s is not None else _inferred_scalar(v, pred.column)
                        for s, v in zip(exact, values)]
    if all(s is not None for s in exact):
        keys = [s.as_py() for s in exact]
        prepared.exact = ValueSet(pa.array(keys, dtype.arrow())) if pred.op == "in" else keys
    return prepared


def _prepare_array(pred: ColumnPredicate, dtype: DataType) -> PreparedPredicate:
    """An `in` whose values come as an array: exact when it casts to the column type safely."""
    array = pred.array.drop_null()
    if array.type != dtype.arrow():
        try:
            array = array.cast(dtype.arrow(), safe=True)
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError):
            return _prepare(ColumnPredicate(pred.column, "in", tuple(array.to_pylist())), dtype)
    prepared = PreparedPredicate(pred.column, pred.op, dtype)
    if len(array) == 0:
        prepared.never_true = True
    else:
        prepared.exact = ValueSet(array)
    return prepared


_VECTOR_IN = 16  # longer IN lists are converted as one array when they can be


def _exact_array(values: list, dtype: DataType) -> pa.Array | None:
    """`values` as one array of the column type if the conversion loses nothing, else None
    (the rule of `_exact_scalar`, checked for all values at once)."""
    if dtype.kind == "BOOLEAN" or any(isinstance(v, bool) for v in values):
        return None
    try:
        array = pa.array(values, type=dtype.arrow())
    except (pa.ArrowInvalid, pa.ArrowTypeError, OverflowError, TypeError, ValueError):
        return None
    if array.null_count or array.to_pylist() != values:
        return None
    return array


def _exact_scalar(value, dtype: DataType) -> pa.Scalar | None:
    """`value` as a scalar of the column type if the conversion loses nothing, else None."""
    if dtype.kind == "BOOLEAN":
        if not isinstance(value, int) or value not in (0, 1):
            return None
        value = bool(value)
    elif isinstance(value, bool):
        return None
    try:
        scalar = pa.scalar(value, type=dtype.arrow())
    except (pa.ArrowInvalid, pa.ArrowTypeError, OverflowError, TypeError, ValueError):
        return None
    # date == datetime is False in Python, 2 == 2.5 is False, Decimal('3.00') == 3 is True
    return scalar if scalar.as_py() == value else None


def _inferred_scalar(value, column: str) -> pa.Scalar:
    try:
        return pa.scalar(value)
    except (pa.ArrowInvalid, pa.ArrowTypeError, OverflowError) as exc:
        raise StorageError(f"Unsupported value {value!r} in a predicate on {column}") from exc


_UNSET = object()
_EPOCH = dt.date(1970, 1, 1)
_EPOCH_TIME = dt.datetime(1970, 1, 1)
_NUMPY_TYPES = {pa.int8(): np.int8, pa.int16(): np.int16, pa.int32(): np.int32,
                pa.int64(): np.int64, pa.uint8(): np.uint8, pa.uint16(): np.uint16,
                pa.uint32(): np.uint32, pa.uint64(): np.uint64, pa.float32(): np.float32,
                pa.float64(): np.float64, pa.date32(): np.int32}


def fixed_width_numpy(arr: pa.Array) -> np.ndarray | None:
    """The values of a fixed-width numeric/date/datetime array as numpy (no copy; DATE as int32
    days, DATETIME as int64 ticks, DECIMAL of precision <= 18 as its int64 unscaled values),
    or None for other types. NULL slots hold garbage."""
    t = arr.type
    np_type = _NUMPY_TYPES.get(t)
    if np_type is None:
        if pa.types.is_decimal128(t) and t.precision <= 18:
            # unscaled values fit in int64: the low 8 bytes of each little-endian 16
            words = np.frombuffer(arr.buffers()[1], dtype=np.int64, count=2 * len(arr),
                                  offset=arr.offset * 16)
            return words[::2]
        if not pa.types.is_timestamp(t):
            return None
        np_type = np.int64
    data = arr.buffers()[1]
    return np.frombuffer(data, dtype=np_type, count=len(arr),
                         offset=arr.offset * np.dtype(np_type).itemsize)


def _numpy_number(p: PreparedPredicate):
    """`p`'s single exact value in the numpy domain of `fixed_width_numpy`, or None."""
    if p.op not in _NUMPY_OPS or not isinstance(p.exact, list) or len(p.exact) != 1:
        return None
    value, dtype = p.exact[0], p.dtype
    if dtype.is_integer and type(value) is int:
        return value if _NUMPY_TYPES.get(dtype.arrow()) is not None else None
    if dtype.is_float and type(value) is float:
        return value
    if dtype.kind == "DATE" and type(value) is dt.date and dtype.arrow() == pa.date32():
        return (value - _EPOCH).days
    if dtype.kind == "DECIMAL" and isinstance(value, Decimal) and dtype.precision <= 18:
        unscaled = value.scaleb(dtype.scale)
        return int(unscaled) if unscaled == unscaled.to_integral_value() else None
    t = dtype.arrow()
    if dtype.kind == "DATETIME" and type(value) is dt.datetime and pa.types.is_timestamp(t) \
            and t.tz is None and value.tzinfo is None:
        delta = value - _EPOCH_TIME
        micros = (delta.days * 86400 + delta.seconds) * 10**6 + delta.microseconds
        per_unit = {"s": 10**6, "ms": 10**3, "us": 1}.get(t.unit)
        if per_unit is None:
            return micros * 1000
        return micros // per_unit if micros % per_unit == 0 else None
    return None


def _numpy_mask(mask) -> np.ndarray:
    mask = contiguous(mask)
    return np.asarray(mask.to_numpy(zero_copy_only=False), dtype=bool)
