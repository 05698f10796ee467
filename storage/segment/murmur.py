"""MurmurHash3 x64_128 over whole Arrow arrays at once (numpy), for the bloom filter index.

Owns the one hash the bloom filter index uses: the first 64 bits (h1) of MurmurHash3_x64_128
with seed 1575457558 (Doris's bloom filter seed) over each value's bytes, which is exactly
`mmh3.hash64(value_bytes, seed=1575457558, signed=False)[0]`. mmh3 hashes one value per call
(100-330 ns); this numpy version hashes a whole column in a few vectorised passes (one pass per
16-byte block position, strings longest first so the active values are always a prefix), and
the unit tests check it against mmh3 value by value.

Doris's own bloom filter hash is a 64-bit variant (`murmur_hash3_x64_64`, 8-byte blocks) that
mmh3 does not provide. minidoris never exchanges bloom filters with a Doris BE, so only
self-consistency matters; the seed's structure (64-bit hash, high 32 bits pick the block, low 32
bits the 8 bits via SALT) is unchanged.

Value bytes (the same as the bucketing hash, storage/hashing.py): the little-endian value for
fixed-width types (BOOLEAN/TINYINT 1, SMALLINT 2, INT/FLOAT/DATE 4, BIGINT/DOUBLE/DATETIME 8,
LARGEINT/DECIMAL 16 two's-complement unscaled), UTF-8 bytes for strings. NULL slots get an
arbitrary hash; callers mask them out.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from storage.arrays import contiguous
from storage.segment.encoding import FIXED_WIDTH
from storage.types import DataType

SEED = 1575457558
_C1 = np.uint64(0x87C37B91114253D5)
_C2 = np.uint64(0x4CF5AD432745937F)
_M1 = np.uint64(0xFF51AFD7ED558CCD)
_M2 = np.uint64(0xC4CEB9FE1A85EC53)
_FIVE = np.uint64(5)
_N1 = np.uint64(0x52DCE729)
_N2 = np.uint64(0x38495AB5)
_S33 = np.uint64(33)


def _rotl(x: np.ndarray, r: int) -> np.ndarray:
    out = x << np.uint64(r)
    out |= x >> np.uint64(64 - r)
    return out


def _fmix(k: np.ndarray) -> np.ndarray:
    k = k ^ (k >> _S33)
    k *= _M1
    k ^= k >> _S33
    k *= _M2
    k ^= k >> _S33
    return k


def _mix_k1(k1: np.ndarray) -> np.ndarray:
    return _rotl(k1 * _C1, 31) * _C2


def _mix_k2(k2: np.ndarray) -> np.ndarray:
    return _rotl(k2 * _C2, 33) * _C1


def _finish(h1: np.ndarray, h2: np.ndarray, lengths) -> np.ndarray:
    h1 = h1 ^ lengths
    h2 = h2 ^ lengths
    h1 += h2
    h2 += h1
    h1 = _fmix(h1)
    h1 += _fmix(h2)
    return h1


def _block(h1: np.ndarray, h2: np.ndarray, k1: np.ndarray, k2: np.ndarray):
    h1 = h1 ^ _mix_k1(k1)
    h1 = (_rotl(h1, 27) + h2) * _FIVE + _N1
    h2 = h2 ^ _mix_k2(k2)
    h2 = (_rotl(h2, 31) + h1) * _FIVE + _N2
    return h1, h2


def hash_fixed(values: np.ndarray, width: int) -> np.ndarray:
    """h1 of each `width`-byte little-endian value; `values` is an (n, width) uint8 array."""
    n = len(values)
    lengths = np.uint64(width)
    if width == 16:  # one whole block, no tail
        words = np.ascontiguousarray(values).view("<u8")
        seed = np.full(n, SEED, dtype=np.uint64)
        h1, h2 = _block(seed, seed.copy(), words[:, 0].copy(), words[:, 1].copy())
        return _finish(h1, h2, lengths)
    if width in (1, 2, 4, 8):  # tail only: k1 is the value zero-extended, k2 is zero
        k1 = np.ascontiguousarray(values).view(f"<u{width}").reshape(n).astype(np.uint64)
    else:
        padded = np.zeros((n, 8), dtype=np.uint8)
        padded[:, :width] = values
        k1 = padded.view("<u8").reshape(n)
    h1 = _mix_k1(k1)
    h1 ^= np.uint64(SEED)
    h2 = np.full(n, SEED, dtype=np.uint64)
    return _finish(h1, h2, lengths)


def hash_bytes(data: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """h1 of each byte string data[offsets[i]:offsets[i+1]] (uint8 data, int64 offsets)."""
    n = len(offsets) - 1
    lengths = np.diff(offsets)
    padded = np.concatenate([data, np.zeros(16, np.uint8)])
    order = np.argsort(-lengths, kind="stable")  # longest first: active values form a prefix
    starts = offsets[:-1][order]
    lens = lengths[order]
    blocks = lens // 16
    h1 = np.full(n, SEED, dtype=np.uint64)
    h2 = h1.copy()
    lane = np.arange(16, dtype=np.int64)
    for j in range(int(blocks[0]) if n else 0):
        active = int(np.searchsorted(-blocks, -j, side="left"))  # values with blocks > j
        raw = padded[(starts[:active] + 16 * j)[:, None] + lane].view("<u8")
        h1[:active], h2[:active] = _block(h1[:active], h2[:active], raw[:, 0].copy(),
                                         raw[:, 1].copy())
    tail = lens - 16 * blocks
    raw = padded[(starts + 16 * blocks)[:, None] + lane]
    raw = np.where(lane[None, :] < tail[:, None], raw, 0).astype(np.uint8)
    words = raw.view("<u8")
    has_k2 = tail > 8
    h2 = np.where(has_k2, h2 ^ _mix_k2(words[:, 1].copy()), h2)
    h1 = np.where(tail > 0, h1 ^ _mix_k1(words[:, 0].copy()), h1)
    result = np.empty(n, dtype=np.uint64)
    result[order] = _finish(h1, h2, lens.astype(np.uint64))
    return result


def hash_array(arr: pa.Array | pa.ChunkedArray, dtype: DataType) -> np.ndarray:
    """uint64 hash of every value of `arr` (a column of `dtype`); NULL slots are arbitrary."""
    arr = contiguous(arr)
    if len(arr) == 0:
        return np.zeros(0, dtype=np.uint64)
    if dtype.is_string:
        if arr.null_count:
            arr = pc.fill_null(arr, "")
        offsets = np.frombuffer(arr.buffers()[1], np.int32)[arr.offset:arr.offset + len(arr) + 1]
        data = arr.buffers()[2]
        raw = np.frombuffer(data, np.uint8) if data is not None else np.zeros(0, np.uint8)
        return hash_bytes(raw, offsets.astype(np.int64))
    if dtype.kind == "BOOLEAN":
        values = np.asarray(pc.fill_null(arr, False)).astype(np.uint8).reshape(-1, 1)
        return hash_fixed(values, 1)
    width = FIXED_WIDTH[dtype.kind]
    raw = np.frombuffer(arr.buffers()[1], np.uint8)[arr.offset * width:
                                                    (arr.offset + len(arr)) * width]
    return hash_fixed(raw.reshape(len(arr), width), width)


def hash_values(values: list, dtype: DataType) -> np.ndarray:
    """Hashes of Python values (a predicate's constants) exactly as `hash_array` hashes them."""
    return hash_array(pa.array(values, type=dtype.arrow()), dtype)
