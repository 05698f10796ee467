"""Vectorised byte-string hashes over Arrow string arrays: Doris's murmur_hash3_64
(`murmur_hash3_x64_64`, 8-byte blocks into one 64-bit lane; not mmh3's x64_128) and XXH32.

Each kernel walks all rows in lockstep, one numpy step per block index: step i loads block i
of every row long enough to have one (a gather from the array's data buffer), so Python loops
over block positions (the longest string's length / block size), never over rows. A seed per
row lets Doris's variadic forms chain: f(a, b) hashes b seeded with f(a).

numpy's uint32 / uint64 array arithmetic wraps modulo 2^32 / 2^64, as the C code does.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa

_U64 = np.uint64
_U32 = np.uint32
_C1 = _U64(0x87C37B91114253D5)
_C2 = _U64(0x4CF5AD432745937F)
_P32 = [_U32(p) for p in (0x9E3779B1, 0x85EBCA77, 0xC2B2AE3D, 0x27D4EB2F, 0x165667B1)]


def string_layout(arr: pa.Array) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(data bytes, start offsets, lengths) of a string / binary array (nulls read as empty)."""
    if pa.types.is_large_string(arr.type) or pa.types.is_large_binary(arr.type):
        offset_type = np.int64
    else:
        offset_type = np.int32
    buffers = arr.buffers()
    offsets = np.frombuffer(buffers[1], dtype=offset_type)[arr.offset:arr.offset + len(arr) + 1]
    data = np.frombuffer(buffers[2], dtype=np.uint8) if buffers[2] is not None \
        else np.zeros(0, np.uint8)
    starts = offsets[:-1].astype(np.int64)
    return data, starts, offsets[1:].astype(np.int64) - starts


def _load(data: np.ndarray, positions: np.ndarray, width: int, dtype: type) -> np.ndarray:
    """The little-endian `width`-byte words at `positions` of `data`."""
    if len(positions) == 0:
        return np.zeros(0, dtype)
    gathered = data[positions[:, None] + np.arange(width)]
    return np.ascontiguousarray(gathered).view(f"<u{width}").ravel().astype(dtype)


def _rotl64(x: np.ndarray, r: int) -> np.ndarray:
    return (x << _U64(r)) | (x >> _U64(64 - r))


def _rotl32(x: np.ndarray, r: int) -> np.ndarray:
    return (x << _U32(r)) | (x >> _U32(32 - r))


def _mix_k1(k1: np.ndarray) -> np.ndarray:
    return _rotl64(k1 * _C1, 31) * _C2


def murmur3_x64_64(arr: pa.Array, seeds: np.ndarray) -> np.ndarray:
    """Doris's HashUtil::murmur_hash3_64 of each string, seeded per row (uint64)."""
    data, starts, lengths = string_layout(arr)
    h1 = seeds.astype(_U64).copy()
    blocks = lengths // 8
    for i in range(int(blocks.max(initial=0))):
        rows = np.nonzero(blocks > i)[0]
        k1 = _mix_k1(_load(data, starts[rows] + 8 * i, 8, _U64))
        h = _rotl64(h1[rows] ^ k1, 27)
        h1[rows] = h * _U64(5) + _U64(0x52DCE729)
    tail_len = lengths & 7
    tail_at = starts + blocks * 8
    k1 = np.zeros(len(arr), _U64)
    for j in range(7):
        rows = np.nonzero(tail_len > j)[0]
        k1[rows] ^= data[tail_at[rows] + j].astype(_U64) << _U64(8 * j)
    has_tail = tail_len > 0
    h1[has_tail] ^= _mix_k1(k1[has_tail])
    h1 ^= lengths.astype(_U64)
    return _fmix64(h1)


def _fmix64(k: np.ndarray) -> np.ndarray:
    k ^= k >> _U64(33)
    k *= _U64(0xFF51AFD7ED558CCD)
    k ^= k >> _U64(33)
    k *= _U64(0xC4CEB9FE1A85EC53)
    k ^= k >> _U64(33)
    return k


def _xxh32_round(acc: np.ndarray, lane: np.ndarray) -> np.ndarray:
    return _rotl32(acc + lane * _P32[1], 13) * _P32[0]


def xxh32(arr: pa.Array, seeds: np.ndarray) -> np.ndarray:
    """XXH32 of each string, seeded per row (uint32)."""
    p1, p2, p3, p4, p5 = _P32
    data, starts, lengths = string_layout(arr)
    seed = seeds.astype(_U32)
    h = seed + p5
    stripes = lengths // 16
    long = np.nonzero(stripes > 0)[0]
    if len(long):
        v = [seed[long] + p1 + p2, seed[long] + p2, seed[long].copy(), seed[long] - p1]
        for i in range(int(stripes.max())):
            active = np.nonzero(stripes[long] > i)[0]
            at = starts[long[active]] + 16 * i
            for lane in range(4):
                v[lane][active] = _xxh32_round(v[lane][active], _load(data, at + 4 * lane, 4, _U32))
        h[long] = _rotl32(v[0], 1) + _rotl32(v[1], 7) + _rotl32(v[2], 12) + _rotl32(v[3], 18)
    h = h + lengths.astype(_U32)
    at = starts + stripes * 16
    rest = lengths - stripes * 16
    for _ in range(3):  # up to three 4-byte words after the stripes
        rows = np.nonzero(rest >= 4)[0]
        h[rows] = _rotl32(h[rows] + _load(data, at[rows], 4, _U32) * p3, 17) * p4
        at[rows] += 4
        rest[rows] -= 4
    for _ in range(3):  # then up to three single bytes
        rows = np.nonzero(rest >= 1)[0]
        h[rows] = _rotl32(h[rows] + data[at[rows]].astype(_U32) * p5, 11) * p1
        at[rows] += 1
        rest[rows] -= 1
    h ^= h >> _U32(15)
    h *= p2
    h ^= h >> _U32(13)
    h *= p3
    h ^= h >> _U32(16)
    return h
