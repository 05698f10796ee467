"""BITMAP set operations and the rest of Doris 2.1's bitmap family beyond `objects.py`'s:
the operations and their counts, membership of any / all ids, conversions to and from arrays,
min / max, removal.

    bitmap_or / bitmap_and / bitmap_xor / bitmap_not(b1, b2, ...)        BITMAP
    bitmap_and_count / bitmap_or_count / bitmap_xor_count(b1, b2, ...)   BIGINT
    bitmap_and_not | bitmap_andnot(b1, b2), bitmap_and_not_count(b1, b2)
    bitmap_has_any(b1, b2), bitmap_has_all(b1, b2)                       BOOLEAN
    bitmap_to_array(b) ARRAY<BIGINT>, bitmap_from_array(arr) BITMAP
    bitmap_min(b), bitmap_max(b) (NULL for an empty bitmap), bitmap_remove(b, id)

Per row in Python through pyroaring, as the other bitmap functions: a bitmap is one value.
"""

from __future__ import annotations

import pyarrow as pa
from pyroaring import BitMap64
from sqlglot import exp

from executor.expressions.context import Frame, Value
from executor.expressions.errors import ExpressionError
from executor.expressions.objects import BITMAP_ARROW
from executor.expressions.vectors import to_array
from storage.objects import decode_bitmap, encode_bitmap


def _rows(node: exp.Anonymous, frame: Frame, least: int, most: int | None = None) -> list[tuple]:
    """The arguments' values row by row (`least` to `most` arguments, `most` = `least` if not
    given)."""
    most = least if most is None else most
    if not least <= len(node.expressions) <= most:
        wanted = str(least) if least == most else f"{least} to {most}"
        raise ExpressionError(f"Function {str(node.this).upper()} takes {wanted} argument(s)")
    values = [to_array(frame.eval(e), frame.n) for e in node.expressions]
    return list(zip(*(v.to_pylist() for v in values)))


def _fold(op, out: str, least: int = 2):
    """A set operation over `least` or more bitmaps: the bitmap, or its cardinality."""
    def handler(node: exp.Anonymous, frame: Frame) -> Value:
        result = []
        for row in _rows(node, frame, least, 64):
            if any(x is None for x in row):
                result.append(None)
                continue
            acc = decode_bitmap(row[0])
            for x in row[1:]:
                acc = op(acc, decode_bitmap(x))
            result.append(len(acc) if out == "count" else encode_bitmap(acc))
        return pa.array(result, pa.int64() if out == "count" else BITMAP_ARROW)
    return handler


def _test(test):
    def handler(node: exp.Anonymous, frame: Frame) -> Value:
        return pa.array([None if a is None or b is None else
                         test(decode_bitmap(a), decode_bitmap(b))
                         for a, b in _rows(node, frame, 2)], pa.bool_())
    return handler


def fn_bitmap_to_array(node: exp.Anonymous, frame: Frame) -> Value:
    return pa.array([None if b is None else list(decode_bitmap(b))
                     for (b,) in _rows(node, frame, 1)], pa.list_(pa.int64()))


def fn_bitmap_from_array(node: exp.Anonymous, frame: Frame) -> Value:
    out = []
    for (ids,) in _rows(node, frame, 1):
        if ids is None or any(i is not None and i < 0 for i in ids):
            out.append(None)
        else:
            out.append(encode_bitmap(BitMap64([i for i in ids if i is not None])))
    return pa.array(out, BITMAP_ARROW)


def _extreme(pick):
    def handler(node: exp.Anonymous, frame: Frame) -> Value:
        out = []
        for (b,) in _rows(node, frame, 1):
            bm = decode_bitmap(b) if b is not None else None
            out.append(pick(bm) if bm else None)
        return pa.array(out, pa.int64())
    return handler


def fn_bitmap_remove(node: exp.Anonymous, frame: Frame) -> Value:
    out = []
    for b, i in _rows(node, frame, 2):
        if b is None or i is None:
            out.append(None)
            continue
        bm = decode_bitmap(b)
        bm.discard(int(i))
        out.append(encode_bitmap(bm))
    return pa.array(out, BITMAP_ARROW)


_AND_NOT = _fold(lambda a, b: a - b, "bitmap")
HANDLERS: dict = {}
FUNCTIONS = {
    "BITMAP_OR": _fold(lambda a, b: a | b, "bitmap", 1),
    "BITMAP_AND": _fold(lambda a, b: a & b, "bitmap", 1),
    "BITMAP_XOR": _fold(lambda a, b: a ^ b, "bitmap", 1),
    "BITMAP_NOT": _fold(lambda a, b: a - b, "bitmap", 1),
    "BITMAP_AND_COUNT": _fold(lambda a, b: a & b, "count"),
    "BITMAP_OR_COUNT": _fold(lambda a, b: a | b, "count"),
    "BITMAP_XOR_COUNT": _fold(lambda a, b: a ^ b, "count"),
    "BITMAP_AND_NOT": _AND_NOT, "BITMAP_ANDNOT": _AND_NOT,
    "BITMAP_AND_NOT_COUNT": _fold(lambda a, b: a - b, "count"),
    "BITMAP_ANDNOT_COUNT": _fold(lambda a, b: a - b, "count"),
    "BITMAP_HAS_ANY": _test(lambda a, b: bool(a & b)),
    "BITMAP_HAS_ALL": _test(lambda a, b: b.issubset(a)),
    "BITMAP_TO_ARRAY": fn_bitmap_to_array, "BITMAP_FROM_ARRAY": fn_bitmap_from_array,
    "BITMAP_MIN": _extreme(lambda b: b.min()), "BITMAP_MAX": _extreme(lambda b: b.max()),
    "BITMAP_REMOVE": fn_bitmap_remove,
}
