"""The vectorised murmur_hash3_64 / XXH32 kernels against reference values, over every tail
length, sliced arrays and per-row seeds."""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from executor.expressions.hash_kernels import murmur3_x64_64, xxh32


def _scalar_xxh32(data: bytes, seed: int = 0) -> int:
    """XXH32 one value at a time (the specification's loop), to check the lockstep kernel."""
    p1, p2, p3, p4, p5 = 0x9E3779B1, 0x85EBCA77, 0xC2B2AE3D, 0x27D4EB2F, 0x165667B1
    m = 0xFFFFFFFF

    def rotl(x: int, r: int) -> int:
        return ((x << r) | (x >> (32 - r))) & m

    i, n = 0, len(data)
    if n >= 16:
        v = [(seed + p1 + p2) & m, (seed + p2) & m, seed, (seed - p1) & m]
        while i + 16 <= n:
            for lane in range(4):
                word = int.from_bytes(data[i + 4 * lane:i + 4 * lane + 4], "little")
                v[lane] = rotl((v[lane] + word * p2) & m, 13) * p1 & m
            i += 16
        h = (rotl(v[0], 1) + rotl(v[1], 7) + rotl(v[2], 12) + rotl(v[3], 18)) & m
    else:
        h = (seed + p5) & m
    h = (h + n) & m
    while i + 4 <= n:
        h = rotl((h + int.from_bytes(data[i:i + 4], "little") * p3) & m, 17) * p4 & m
        i += 4
    while i < n:
        h = rotl((h + data[i] * p5) & m, 11) * p1 & m
        i += 1
    h ^= h >> 15
    h = h * p2 & m
    h ^= h >> 13
    h = h * p3 & m
    return h ^ (h >> 16)


def test_murmur3_64_matches_doris():
    arr = pa.array(["hello", ""])
    out = murmur3_x64_64(arr, np.zeros(2, np.uint64)).view(np.int64)
    assert out.tolist() == [-3215607508166160593, 0]


def test_murmur3_64_chains_through_the_seed():
    first = murmur3_x64_64(pa.array(["hello"]), np.zeros(1, np.uint64))
    assert murmur3_x64_64(pa.array(["world"]), first).view(np.int64)[0] == 3583109472027628045


def test_xxh32_reference_vectors():
    arr = pa.array(["Hello World!", "The quick brown fox jumps over the lazy dog", ""])
    assert xxh32(arr, np.zeros(3, np.uint32)).tolist() == [0x0BD69788, 0xE85EA4DE, 0x02CC5D05]


def test_xxh32_every_length_and_slices():
    texts = ["abcdefghijklmnopqrstuvwxyz0123456789"[:k] for k in range(37)]
    arr = pa.array(["skip"] + texts)[1:]
    seeds = np.arange(len(texts), dtype=np.uint32) * np.uint32(2654435761)
    got = xxh32(arr, seeds).tolist()
    assert got == [_scalar_xxh32(t.encode(), int(s)) for t, s in zip(texts, seeds)]
