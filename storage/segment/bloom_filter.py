"""Bloom filter index: one block-split bloom filter per data page (seed 003 §6).

Owns building the filters of a column's pages at write time, their serialized form (one
BLOOM_FILTER page per column) and the page test for `=`, `IN` and `IS NULL` (§6.2).

Per page, as §6.1 specifies:

    N          distinct non-NULL values of the page
    bits       -N * ln(fpp) / ln(2)^2, at least one block (256 bits), rounded up to a power of 2
    blocks     bits / 8 / BYTES_PER_BLOCK (32 bytes = 8 x u32 words)
    per value  h = hash (murmur.py, 64 bits); block = (h >> 32) & (blocks - 1);
               key = (u32) h; for i in 0..7: word i of the block |= 1 << ((key * SALT[i]) >> 27)
    null flag  whether the page holds a NULL (an IS NULL test reads only this flag)

A value may be in a page iff all 8 bits of its block are set. Everything runs on whole arrays:
the hashes of a column are computed once, each page's distinct hashes come from one np.unique,
and the bits are set with one fancy assignment into a bit array that np.packbits turns into the
little-endian u32 words.

BLOOM_FILTER page body (page type 5, one per column, all its pages' filters):

    u32 count | u32 hash_strategy (1 = murmur3 x64_128 h1, seed 1575457558)
    | count x u32 num_bytes (padded to 8) | count x u8 has_null (padded to 8)
    | filters: count byte strings of num_bytes each (multiples of 32), concatenated
"""

from __future__ import annotations

import math
import struct
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

BYTES_PER_BLOCK = 32
BITS_SET_PER_BLOCK = 8
MIN_BITS = BYTES_PER_BLOCK * 8
MAX_BITS = 1 << 30
HASH_MURMUR3_X64_128 = 1
SALT = np.array([0x47B6137B, 0x44974D91, 0x8824AD5B, 0xA2B7289D, 0x705495C7, 0x2DF1424B,
                 0x9EFC4947, 0x5C6BFB31], dtype=np.uint32)
DEFAULT_FPP = 0.05


def num_bytes(n: int, fpp: float) -> int:
    """Filter size for `n` distinct values at false positive probability `fpp` (power of 2)."""
    bits = -max(n, 1) * math.log(fpp) / (math.log(2) ** 2)
    bits = min(max(int(math.ceil(bits)), MIN_BITS), MAX_BITS)
    return (1 << (bits - 1).bit_length()) // 8


def _positions(hashes: np.ndarray, blocks: int) -> np.ndarray:
    """Global bit index (word * 32 + bit) of each of the 8 bits of each hash: shape (n, 8)."""
    block = ((hashes >> np.uint64(32)) & np.uint64(blocks - 1)).astype(np.int64)
    key = (hashes & np.uint64(0xFFFFFFFF)).astype(np.uint32)
    bit = (key[:, None] * SALT[None, :]) >> np.uint32(27)
    word = block[:, None] * BITS_SET_PER_BLOCK + np.arange(BITS_SET_PER_BLOCK)
    return word * 32 + bit.astype(np.int64)


@lru_cache(maxsize=4096)
def _cached_positions(hashes: bytes, blocks: int) -> tuple[np.ndarray, np.ndarray]:
    """(u32 word offset in a filter, bit mask in that word) of the 8 bits of each of a
    predicate's few hashes (bytes of uint64), kept: every segment a scan tests asks again with
    the same values and one of a few filter sizes."""
    pos = _positions(np.frombuffer(hashes, np.uint64), blocks)
    offsets = pos >> 5
    bits = np.left_shift(np.uint32(1), (pos & 31).astype(np.uint32))
    offsets.flags.writeable = bits.flags.writeable = False
    return offsets, bits


def build(distinct: np.ndarray, fpp: float) -> bytes:
    """The filter of one page from its distinct non-NULL hashes."""
    size = num_bytes(len(distinct), fpp)
    bits = np.zeros(size * 8, dtype=bool)
    if len(distinct):
        bits[_positions(distinct, size // BYTES_PER_BLOCK).ravel()] = True
    return np.packbits(bits, bitorder="little").tobytes()


@dataclass
class BloomFilters:
    """The filters of a column's pages."""

    sizes: np.ndarray      # int64 bytes per page filter
    has_null: np.ndarray   # bool per page
    data: np.ndarray       # uint8, all filters concatenated

    def __len__(self) -> int:
        return len(self.sizes)

    def may_contain(self, hashes: np.ndarray) -> np.ndarray:
        """bool (pages,): which pages may hold at least one of the hashed values."""
        pages = len(self.sizes)
        if not len(hashes):
            return np.zeros(pages, dtype=bool)
        words, groups = self._layout()
        key = hashes.tobytes()
        if len(groups) == 1:  # every page's filter has one size (the usual case)
            size, _, starts = groups[0]
            offsets, bits = _cached_positions(key, size // BYTES_PER_BLOCK)
            return ((words[starts[:, None, None] + offsets] & bits) != 0).all(axis=2).any(axis=1)
        out = np.zeros(pages, dtype=bool)
        for size, which, starts in groups:  # pages of one filter size at a time
            offsets, bits = _cached_positions(key, size // BYTES_PER_BLOCK)  # (values, 8) each
            word = starts[:, None, None] + offsets                         # (pages, values, 8)
            out[which] = ((words[word] & bits) != 0).all(axis=2).any(axis=1)
        return out

    def _layout(self) -> tuple[np.ndarray, list]:
        """The filters as u32 words and, per filter size, (size, its pages, their first
        words): computed once (readers keep their columns' filters)."""
        memo = self.__dict__.get("_layout_memo")
        if memo is None:
            starts = (np.cumsum(self.sizes) - self.sizes) // 4  # in u32 words
            groups = []
            for size in np.unique(self.sizes).tolist():
                which = np.flatnonzero(self.sizes == size)
                groups.append((size, which, starts[which]))
            memo = self.__dict__["_layout_memo"] = (self.data.view("<u4"), groups)
        return memo


def compute(hashes: np.ndarray, valid: np.ndarray | None, starts: np.ndarray, ends: np.ndarray,
            fpp: float) -> tuple[list[bytes], np.ndarray]:
    """Filters and null flags of the pages [starts[i], ends[i]) of a hashed column."""
    filters, has_null = [], []
    for start, end in zip(starts.tolist(), ends.tolist()):
        page = hashes[start:end]
        if valid is not None:
            ok = valid[start:end]
            has_null.append(not ok.all())
            page = page[ok]
        else:
            has_null.append(False)
        filters.append(build(np.unique(page), fpp))
    return filters, np.array(has_null, dtype=bool)


def encode(filters: list[bytes], has_null: np.ndarray) -> bytes:
    count = len(filters)
    sizes = np.array([len(f) for f in filters], dtype="<u4").tobytes()
    flags = has_null.astype(np.uint8).tobytes()
    return b"".join([struct.pack("<II", count, HASH_MURMUR3_X64_128), sizes,
                     bytes((-len(sizes)) % 8), flags, bytes((-len(flags)) % 8), *filters])


def decode(body) -> BloomFilters:
    count, strategy = struct.unpack_from("<II", body)
    if strategy != HASH_MURMUR3_X64_128:
        raise ValueError(f"unknown bloom filter hash strategy {strategy}")
    pos = 8
    sizes = np.frombuffer(body, "<u4", count, pos).astype(np.int64)
    pos += 4 * count + (-(4 * count)) % 8
    has_null = np.frombuffer(body, np.uint8, count, pos).astype(bool)
    pos += count + (-count) % 8
    total = int(sizes.sum())
    if np.any(sizes % BYTES_PER_BLOCK) or np.any(sizes & (sizes - 1)) or \
            pos + total > len(memoryview(body)):
        raise ValueError("bloom filter sizes do not fit the page")
    data = np.frombuffer(body, np.uint8, total, pos)
    return BloomFilters(sizes, has_null, data)
