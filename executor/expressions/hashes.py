"""Doris's hash functions not in codecs.py: murmur_hash3_64, xxhash_32, sm3 / sm3sum and
uuid_numeric().

    murmur_hash3_64(s[, s2...])  BIGINT: Doris's murmur_hash3_x64_64 (seed 0) of s, each further
                                 argument hashed with the previous hash as its seed
                                 (murmur_hash3_64('hello') = -3215607508166160593)
    xxhash_32(s[, s2...])        INT: XXH32, chained the same way (seed 0)
    sm3(s) / sm3sum(s[, s2...])  the SM3 digest (hex) of s, of the arguments concatenated
    uuid_numeric()               a random LARGEINT per row

    xxhash_64(s[, s2...])        BIGINT: XXH3_64bits, as Doris computes it (hash_util.hpp),
    (alias xxhash3_64)           chained the same way (xxhash_64('hello') = -7685981735718036227)

Any NULL argument gives NULL (Doris's default NULL handling).

murmur_hash3_64 and xxhash_32 run on whole arrays (`hash_kernels`); xxhash_64 runs once per
distinct combination of values through the `xxhash` package's XXH3 (its size-dependent paths
and 192-byte secret are not worth transcribing to numpy); sm3 once per distinct value through
OpenSSL's SM3 in hashlib (no vectorised SM3 exists); uuid_numeric draws from numpy.
"""

from __future__ import annotations

import hashlib
import os
from typing import Callable

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import xxhash
from sqlglot import exp

from executor.expressions.casts import cast_value
from executor.expressions.context import Frame, Value
from executor.expressions.errors import ExpressionError
from executor.expressions.hash_kernels import murmur3_x64_64, xxh32
from executor.expressions.json_functions import call_args
from executor.expressions.vectors import all_scalar, map_distinct, map_distinct_rows, to_array

STRING = pa.string()
LARGEINT = pa.decimal128(38, 0)


def _string_args(node: exp.Expression, frame: Frame, name: str) -> list[Value]:
    args = call_args(node)
    if not args:
        raise ExpressionError(f"{name} takes one or more strings")
    return [cast_value(frame.eval(a), STRING) for a in args]


def _chained(kernel: Callable[[pa.Array, np.ndarray], np.ndarray], seed_type: type,
             out: pa.DataType, signed: type, name: str):
    """f(a, b, ...): kernel(b, seeds=kernel(a, 0)) ..., NULL where any argument is NULL."""
    def handler(node: exp.Expression, frame: Frame) -> Value:
        values = _string_args(node, frame, name)
        n = 1 if all_scalar(*values) else frame.n
        arrays = [to_array(v, n) for v in values]
        hashes = np.zeros(n, seed_type)
        valid = np.ones(n, bool)
        for arr in arrays:
            hashes = kernel(arr, hashes)
            if arr.null_count:
                valid &= np.asarray(pc.is_valid(arr))
        result = pa.array(hashes.view(signed), out, mask=None if valid.all() else ~valid)
        return result[0] if all_scalar(*values) else result
    return handler


def _xxh3_chain(*values: str) -> int:
    seed = 0
    for v in values:
        seed = xxhash.xxh3_64_intdigest(v.encode(), seed)
    return seed - (1 << 64) if seed >= 1 << 63 else seed


def eval_xxhash_64(node: exp.Expression, frame: Frame) -> Value:
    values = _string_args(node, frame, "xxhash_64")
    if all_scalar(*values):
        if not all(v.is_valid for v in values):
            return pa.scalar(None, pa.int64())
        return pa.scalar(_xxh3_chain(*(v.as_py() for v in values)), pa.int64())
    return map_distinct_rows([to_array(v, frame.n) for v in values], _xxh3_chain, pa.int64())


def _sm3(s: str) -> str:
    return hashlib.new("sm3", s.encode()).hexdigest()


def eval_sm3sum(node: exp.Expression, frame: Frame) -> Value:
    """sm3sum(a, b, ...): the digest of the arguments' bytes one after another."""
    values = _string_args(node, frame, "sm3sum")
    joined = values[0] if len(values) == 1 else \
        pc.binary_join_element_wise(*values, "", null_handling="emit_null")
    return map_distinct(joined, _sm3, STRING)


def eval_sm3(node: exp.Expression, frame: Frame) -> Value:
    values = _string_args(node, frame, "sm3")
    if len(values) != 1:
        raise ExpressionError("sm3 takes one string")
    return map_distinct(values[0], _sm3, STRING)


def eval_uuid_numeric(node: exp.Expression, frame: Frame) -> Value:
    """A random 128-bit integer per row. Doris draws the whole INT128 range; LARGEINT here is
    decimal128(38, 0), which holds 38 digits, so the values are drawn within +-2^125."""
    if call_args(node):
        raise ExpressionError("uuid_numeric takes no arguments")
    if frame.n == 0:
        return pa.array([], LARGEINT)
    n = frame.n
    words = np.frombuffer(os.urandom(16 * n), dtype="<i8").reshape(n, 2).copy()
    words[:, 1] >>= 2  # arithmetic shift: the high word keeps its sign, |v| < 2^125
    values = pa.Array.from_buffers(LARGEINT, n, [None, pa.py_buffer(words.tobytes())])
    return values[0] if frame.n == 1 else values


HANDLERS: dict = {}
FUNCTIONS = {
    "MURMUR_HASH3_64": _chained(murmur3_x64_64, np.uint64, pa.int64(), np.int64,
                                "murmur_hash3_64"),
    "XXHASH_32": _chained(xxh32, np.uint32, pa.int32(), np.int32, "xxhash_32"),
    "XXHASH_64": eval_xxhash_64, "XXHASH3_64": eval_xxhash_64,
    "SM3": eval_sm3, "SM3SUM": eval_sm3sum,
    "UUID_NUMERIC": eval_uuid_numeric,
}
