"""BITMAP and HLL values (Doris's UV-counting column types) and their unions.

A value travels and is stored as text, so every layer handles it as a string column (pages,
dictionaries, zone maps, the wire): base64 of

    BITMAP  pyroaring's portable `BitMap64` serialization (a Roaring bitmap of uint64 ids)
    HLL     the distinct 64-bit hashes of the values (murmur3 64, as Doris's hll_hash),
            sorted, uint64 little-endian; the empty HLL is ""

Shortcuts, said plainly: Doris shows these columns as NULL in a result and keeps them binary;
here a raw SELECT of the column shows the base64 text. A Doris HLL switches from an explicit
set to 16 384 registers past 160 distinct values and then estimates; this one stays an
explicit set, so its cardinality is exact.

`union_column` folds one column of key-sorted rows for the storage merge (BITMAP_UNION,
HLL_UNION aggregation); `union_bitmaps` / `union_hlls` serve the query aggregates.
"""

from __future__ import annotations

import base64

import numpy as np
import pyarrow as pa
from pyroaring import BitMap64

OBJECT_AGGREGATIONS = ("BITMAP_UNION", "HLL_UNION")


def encode_bitmap(bm: BitMap64) -> str:
    return base64.b64encode(bm.serialize()).decode("ascii")


EMPTY_OBJECT = {"BITMAP": base64.b64encode(BitMap64().serialize()).decode("ascii"), "HLL": ""}


def decode_bitmap(text: str | None) -> BitMap64:
    return BitMap64.deserialize(base64.b64decode(text)) if text else BitMap64()


def encode_hll(hashes: np.ndarray) -> str:
    return base64.b64encode(np.asarray(hashes, "<u8").tobytes()).decode("ascii")


def decode_hll(text: str | None) -> np.ndarray:
    return np.frombuffer(base64.b64decode(text), "<u8") if text else np.zeros(0, "<u8")


def union_bitmaps(groups: list[list[str | None]]) -> list[BitMap64]:
    out = []
    for values in groups:
        acc = BitMap64()
        for text in values:
            if text:
                acc |= decode_bitmap(text)
        out.append(acc)
    return out


def union_hlls(groups: list[list[str | None]]) -> list[np.ndarray]:
    return [np.unique(np.concatenate([decode_hll(t) for t in values if t] or
                                     [np.zeros(0, "<u8")])) for values in groups]


def union_column(col: pa.ChunkedArray, starts: np.ndarray, ends: np.ndarray,
                 aggregation: str) -> pa.Array:
    """One value per group [starts[i], ends[i]): the union of the group's values."""
    values = col.to_pylist()
    groups = [values[s:e] for s, e in zip(starts.tolist(), ends.tolist())]
    if aggregation == "BITMAP_UNION":
        return pa.array([encode_bitmap(b) for b in union_bitmaps(groups)], pa.string())
    return pa.array([encode_hll(h) for h in union_hlls(groups)], pa.string())
