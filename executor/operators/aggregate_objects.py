"""Finishing BITMAP and HLL aggregates: Arrow's `list` hash kernel collects each group's
values, then each group's union is built once (pyroaring's BitMap64 OR / numpy unique over
the HLL hash sets, `storage/objects.py`). One step per group, not per row."""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from storage.objects import encode_bitmap, encode_hll, union_bitmaps, union_hlls


def _lists(groups: list) -> list[list]:
    return [g or [] for g in groups]


OBJECT_FINISH = {
    "bitmap_union": lambda g: pa.array([encode_bitmap(b) for b in union_bitmaps(_lists(g))],
                                       pa.string()),
    "bitmap_union_count": lambda g: pa.array([len(b) for b in union_bitmaps(_lists(g))],
                                             pa.int64()),
    "hll_union": lambda g: pa.array([encode_hll(h) for h in union_hlls(_lists(g))],
                                    pa.string()),
    "hll_union_agg": lambda g: pa.array(np.array([len(h) for h in union_hlls(_lists(g))],
                                                 dtype=np.int64)),
}
