"""One contiguous Arrow array from an array or a chunked array, copying only when it must."""

from __future__ import annotations

import pyarrow as pa


def contiguous(arr: pa.Array | pa.ChunkedArray) -> pa.Array:
    """`arr` itself, its only chunk, or its chunks combined (one copy)."""
    if not isinstance(arr, pa.ChunkedArray):
        return arr
    return arr.chunk(0) if arr.num_chunks == 1 else arr.combine_chunks()
