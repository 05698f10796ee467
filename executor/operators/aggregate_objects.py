"""Finishing the aggregates Arrow has no hash kernel for (BITMAP and HLL unions,
group_bitmap_xor, group_bit_or/and/xor): Arrow's `list` hash kernel collects each group's values, then each
group's result is built once (pyroaring's BitMap64 OR / numpy unique over the HLL hash sets,
`storage/objects.py`; numpy's bitwise reductions). One step per group, not per row."""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from pyroaring import BitMap64

from storage.objects import decode_bitmap, encode_bitmap, encode_hll, union_bitmaps, union_hlls


def _lists(groups: list) -> list[list]:
    return [g or [] for g in groups]


def _bits(reduce, groups: list, t: pa.DataType) -> pa.Array:
    """NULLs skipped; a group without values is NULL (Doris's group_bit_*)."""
    out = []
    for g in groups:
        values = [v for v in (g or []) if v is not None]
        out.append(int(reduce(np.array(values, dtype=np.int64))) if values else None)
    return pa.array(out, t)


def _xor_bitmaps(groups: list) -> pa.Array:
    """group_bitmap_xor: the ids in an odd number of the group's bitmaps (NULLs skipped)."""
    out = []
    for values in _lists(groups):
        acc = BitMap64()
        for text in values:
            if text:
                acc ^= decode_bitmap(text)
        out.append(encode_bitmap(acc))
    return pa.array(out, pa.string())


LIST_FINISH = {
    "group_bitmap_xor": _xor_bitmaps,
    "bitmap_union": lambda g: pa.array([encode_bitmap(b) for b in union_bitmaps(_lists(g))],
                                       pa.string()),
    "bitmap_union_count": lambda g: pa.array([len(b) for b in union_bitmaps(_lists(g))],
                                             pa.int64()),
    "hll_union": lambda g: pa.array([encode_hll(h) for h in union_hlls(_lists(g))],
                                    pa.string()),
    "hll_union_agg": lambda g: pa.array(np.array([len(h) for h in union_hlls(_lists(g))],
                                                 dtype=np.int64)),
    "group_bit_or": lambda g: _bits(np.bitwise_or.reduce, g, pa.int64()),
    "group_bit_and": lambda g: _bits(np.bitwise_and.reduce, g, pa.int64()),
    "group_bit_xor": lambda g: _bits(np.bitwise_xor.reduce, g, pa.int64()),
}
