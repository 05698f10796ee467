"""Scalar functions over BITMAP and HLL values (their representation, base64 text, and the
unions live in `storage/objects.py`): to_bitmap, bitmap_empty, bitmap_from_string,
bitmap_to_string, bitmap_count, bitmap_contains, bitmap_hash, hll_hash,
hll_empty, hll_cardinality. `FUNCTIONS` / `HANDLERS` are merged by `evaluate.py`.
"""

from __future__ import annotations

import mmh3
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from pyroaring import BitMap64
from sqlglot import exp

from storage.objects import decode_bitmap, decode_hll, encode_bitmap, encode_hll

from executor.expressions.context import Frame, Value
from executor.expressions.errors import ExpressionError
from executor.expressions.vectors import map_distinct, to_array

BITMAP_ARROW = pa.string()
HLL_ARROW = pa.string()
_U64_MAX = (1 << 64) - 1


def _args(node: exp.Anonymous, frame: Frame, count: int) -> list[Value]:
    if len(node.expressions) != count:
        raise ExpressionError(f"Function {str(node.this).upper()} takes {count} argument(s)")
    return [frame.eval(e) for e in node.expressions]


_bitmap = decode_bitmap


def _one_id(value) -> str | None:
    """to_bitmap of one value: an unsigned 64-bit id (numbers or their text), else NULL."""
    try:
        n = int(str(value).strip()) if not isinstance(value, int) else value
    except ValueError:
        return None
    return encode_bitmap(BitMap64([n])) if 0 <= n <= _U64_MAX else None


def fn_to_bitmap(node: exp.Anonymous, frame: Frame) -> Value:
    (v,) = _args(node, frame, 1)
    return map_distinct(v, _one_id, BITMAP_ARROW)


def fn_bitmap_empty(node: exp.Anonymous, frame: Frame) -> Value:
    return pa.scalar(encode_bitmap(BitMap64()), BITMAP_ARROW)


def fn_bitmap_from_string(node: exp.Anonymous, frame: Frame) -> Value:
    (v,) = _args(node, frame, 1)

    def parse(text: str) -> str | None:
        try:
            ids = [int(x) for x in str(text).split(",") if x.strip()]
        except ValueError:
            return None
        return encode_bitmap(BitMap64(ids)) if all(0 <= i <= _U64_MAX for i in ids) else None
    return map_distinct(v, parse, BITMAP_ARROW)


def fn_bitmap_to_string(node: exp.Anonymous, frame: Frame) -> Value:
    (v,) = _args(node, frame, 1)
    return map_distinct(v, lambda b: ",".join(str(i) for i in _bitmap(b)), pa.string())


def fn_bitmap_count(node: exp.Expression, frame: Frame) -> Value:
    """BITMAP_COUNT(b); sqlglot parses it into exp.BitmapCount (argument `this`)."""
    (v,) = _args(node, frame, 1) if isinstance(node, exp.Anonymous) else [frame.eval(node.this)]
    counted = map_distinct(v, lambda b: len(_bitmap(b)), pa.int64())
    return pc.fill_null(counted, 0)  # Doris: bitmap_count(NULL) is 0


def fn_bitmap_contains(node: exp.Anonymous, frame: Frame) -> Value:
    b, i = _args(node, frame, 2)
    n = frame.n
    pairs = pa.table({"b": to_array(b, n), "i": pc.cast(to_array(i, n), pa.int64())})
    out = [None if x is None or y is None else y in _bitmap(x)
           for x, y in zip(pairs.column("b").to_pylist(), pairs.column("i").to_pylist())]
    return pa.array(out, pa.bool_())


def fn_bitmap_hash(node: exp.Anonymous, frame: Frame) -> Value:
    (v,) = _args(node, frame, 1)
    return map_distinct(v, lambda x: encode_bitmap(BitMap64([mmh3.hash(str(x).encode(), signed=False)])),
                        BITMAP_ARROW)


def _hash64(value) -> int:
    return mmh3.hash64(str(value).encode(), signed=False)[0]


def fn_hll_hash(node: exp.Anonymous, frame: Frame) -> Value:
    (v,) = _args(node, frame, 1)
    hashed = map_distinct(v, lambda x: encode_hll(np.array([_hash64(x)], "<u8")), HLL_ARROW)
    # Doris: hll_hash(NULL) is an empty HLL, not NULL.
    return pc.fill_null(hashed, "") if isinstance(hashed, pa.Array) else \
        (hashed if hashed.is_valid else pa.scalar("", HLL_ARROW))


def fn_hll_empty(node: exp.Anonymous, frame: Frame) -> Value:
    return pa.scalar("", HLL_ARROW)


def fn_hll_cardinality(node: exp.Anonymous, frame: Frame) -> Value:
    (v,) = _args(node, frame, 1)
    counted = map_distinct(v, lambda h: len(decode_hll(h)), pa.int64())
    return pc.fill_null(counted, 0)


FUNCTIONS = {
    "TO_BITMAP": fn_to_bitmap, "BITMAP_EMPTY": fn_bitmap_empty,
    "BITMAP_FROM_STRING": fn_bitmap_from_string, "BITMAP_TO_STRING": fn_bitmap_to_string,
    "BITMAP_COUNT": fn_bitmap_count, "BITMAP_CONTAINS": fn_bitmap_contains,
    "BITMAP_HASH": fn_bitmap_hash,
    "HLL_HASH": fn_hll_hash, "HLL_EMPTY": fn_hll_empty, "HLL_CARDINALITY": fn_hll_cardinality,
}
HANDLERS: dict = {exp.BitmapCount: fn_bitmap_count}
