"""Encodings, hashes and small lookups Doris users call: hex / unhex / bin / conv, to_base64 /
from_base64, url_encode / url_decode / parse_url, sha1 / sha2 / crc32 / murmur_hash3_32,
initcap, char, elt, field, find_in_set, e(), uuid(), width_bucket.

Where Arrow has a kernel it is used (elt: choose; field and width_bucket:
comparisons); the rest run once per distinct value (`vectors.map_distinct*`), never per row.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import math
import re
import uuid
import zlib
from typing import Any, Callable
from urllib.parse import quote_plus, unquote_plus, urlsplit

import mmh3
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from sqlglot import exp

from executor.expressions.binary_text import is_binary, text_or_bytes
from executor.expressions.casts import cast_value
from executor.expressions.context import Frame, Value
from executor.expressions.errors import ExpressionError
from executor.expressions.json_functions import call_args
from executor.expressions.vectors import map_distinct, map_distinct_params, to_array, to_numpy

STRING = pa.string()
_MASK64 = (1 << 64) - 1
MURMUR3_32_SEED = 104729  # Doris's HashUtil::MURMUR3_32_SEED


def one_arg(node: exp.Expression, frame: Frame, name: str) -> Value:
    args = call_args(node)
    if len(args) != 1:
        raise ExpressionError(f"{name} takes one argument")
    return frame.eval(args[0])


def _text_fn(fn: Callable[[str], Any], out: pa.DataType, name: str):
    def handler(node: exp.Expression, frame: Frame) -> Value:
        return map_distinct(cast_value(one_arg(node, frame, name), STRING), fn, out)
    return handler


def eval_hex(node: exp.Expression, frame: Frame) -> Value:
    v = one_arg(node, frame, "hex")
    if pa.types.is_integer(v.type):
        return map_distinct(cast_value(v, pa.int64()), lambda i: format(i & _MASK64, "X"),
                            STRING)
    if is_binary(v.type):
        return map_distinct(v, lambda b: b.hex().upper(), STRING)
    return map_distinct(cast_value(v, STRING), lambda s: s.encode().hex().upper(), STRING)


def _unhex(s: str) -> bytes:
    try:
        return bytes.fromhex(s)
    except ValueError:
        return b""  # Doris: not a hex string -> ''


def _from_base64(s: str) -> bytes | None:
    try:
        return base64.b64decode(s, validate=True)
    except (binascii.Error, ValueError):
        return None


def _bytes_fn(fn: Callable[[str], bytes | None], name: str):
    """A decoder whose result is bytes: a string where they are all UTF-8 (binary_text.py)."""
    def handler(node: exp.Expression, frame: Frame) -> Value:
        v = cast_value(one_arg(node, frame, name), STRING)
        return text_or_bytes(map_distinct(v, fn, pa.binary()))
    return handler


def _encode_fn(fn: Callable[[bytes], str], name: str):
    """An encoder of the argument's bytes (binary values as they are, text as UTF-8)."""
    def handler(node: exp.Expression, frame: Frame) -> Value:
        v = one_arg(node, frame, name)
        if not is_binary(v.type):
            v = cast_value(v, STRING).cast(pa.binary())
        return map_distinct(v, fn, STRING)
    return handler


def eval_bin(node: exp.Expression, frame: Frame) -> Value:
    v = cast_value(one_arg(node, frame, "bin"), pa.int64())
    return map_distinct(v, lambda i: format(i & _MASK64, "b"), STRING)


_DIGITS = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ"


def _conv(text: str, source: int, target: int) -> str | None:
    if not (2 <= abs(source) <= 36 and 2 <= abs(target) <= 36):
        return None
    text = text.strip()
    valid = ""
    for ch in text.lstrip("-").upper():  # the longest valid prefix, as MySQL reads it
        if ch not in _DIGITS[:abs(source)]:
            break
        valid += ch
    if not valid:
        return "0"
    value = int(valid, abs(source)) * (-1 if text.startswith("-") else 1)
    if value < 0 and target > 0:
        value &= _MASK64
    sign, value = ("-", -value) if value < 0 else ("", value)
    digits = ""
    while True:
        value, r = divmod(value, abs(target))
        digits = _DIGITS[r] + digits
        if not value:
            return sign + digits


def eval_conv(node: exp.Expression, frame: Frame) -> Value:
    args = call_args(node)
    if len(args) != 3:
        raise ExpressionError("conv takes a number, its base and the target base")
    num = cast_value(frame.eval(args[0]), STRING)
    bases = [cast_value(frame.eval(a), pa.int64()) for a in args[1:]]

    def kernel(values: Value, source: int | None, target: int | None) -> Value:
        if source is None or target is None:
            return map_distinct(values, lambda _: None, STRING)
        return map_distinct(values, lambda s: _conv(s, source, target), STRING)
    return map_distinct_params(kernel, num, bases, STRING, frame.n)


def eval_sha2(node: exp.Expression, frame: Frame) -> Value:
    args = call_args(node)
    if len(args) != 2:
        raise ExpressionError("sha2 takes a string and a digest length")
    bits = frame.eval(args[1])
    if not isinstance(bits, pa.Scalar) or bits.as_py() not in (224, 256, 384, 512):
        raise ExpressionError("sha2's digest length must be a constant 224, 256, 384 or 512")
    algo = f"sha{bits.as_py()}"
    return map_distinct(cast_value(frame.eval(args[0]), STRING),
                        lambda s: hashlib.new(algo, s.encode()).hexdigest(), STRING)


def _parse_url(url: str, part: str) -> str | None:
    u = urlsplit(url)
    value = {"HOST": u.hostname, "PATH": u.path, "QUERY": u.query, "REF": u.fragment,
             "PROTOCOL": u.scheme, "AUTHORITY": u.netloc,
             "FILE": u.path + ("?" + u.query if u.query else ""),
             "USERINFO": u.netloc.rpartition("@")[0] if "@" in u.netloc else None,
             "PORT": str(u.port) if u.port else None}.get(part.upper())
    return value if value != "" or part.upper() in ("PATH", "FILE") else None


def _text_with_param(node: exp.Expression, frame: Frame, usage: str,
                     make: Callable[[str], Callable[[str], Any]], out: pa.DataType) -> Value:
    """f(text, param): `make(param)` maps each distinct text; a NULL param gives NULL."""
    args = call_args(node)
    if len(args) != 2:
        raise ExpressionError(usage)
    values = cast_value(frame.eval(args[0]), STRING)

    def kernel(texts: Value, param: str | None) -> Value:
        return map_distinct(texts, (lambda _: None) if param is None else make(param), out)
    return map_distinct_params(kernel, values, [cast_value(frame.eval(args[1]), STRING)], out,
                               frame.n)


def eval_parse_url(node: exp.Expression, frame: Frame) -> Value:
    return _text_with_param(node, frame, "parse_url takes a URL and the part to extract",
                            lambda part: lambda url: _parse_url(url, part), STRING)


_WORD = re.compile(r"[A-Za-z0-9]+")


def eval_initcap(node: exp.Expression, frame: Frame) -> Value:
    """Each word's first character upper case, the rest lower: words are runs of ASCII letters
    and digits (Doris: 'HELLO123HELlo' -> 'Hello123hello', where Arrow's title case starts a word
    after every digit). Doris 2.1 maps bytes: other characters separate words and keep their
    case ('ÉCOLE ça' -> 'ÉCole çA')."""
    return map_distinct(cast_value(frame.eval(call_args(node)[0]), STRING),
                        lambda s: _WORD.sub(lambda m: m.group(0)[:1].upper()
                                            + m.group(0)[1:].lower(), s), STRING)


def eval_char(node: exp.Expression, frame: Frame) -> Value:
    parts = [map_distinct(cast_value(frame.eval(a), pa.int64()),
                          lambda i: bytes([i & 0xFF]).decode("latin-1"), STRING)
             for a in call_args(node)]
    if len(parts) == 1:
        return parts[0]
    return pc.binary_join_element_wise(*parts, "")


def eval_elt(node: exp.Expression, frame: Frame) -> Value:
    args = call_args(node)
    if len(args) < 2:
        raise ExpressionError("elt takes an index and one or more strings")
    index = to_numpy(to_array(cast_value(frame.eval(args[0]), pa.int64()), frame.n), 0)
    choices = [to_array(cast_value(frame.eval(a), STRING), frame.n) for a in args[1:]]
    valid = (index >= 1) & (index <= len(choices))
    picked = pc.choose(pa.array(np.where(valid, index - 1, 0), pa.int64()), *choices)
    return pc.if_else(pa.array(valid), picked, pa.nulls(frame.n, STRING))


def eval_field(node: exp.Expression, frame: Frame) -> Value:
    """field(s, a, b, ...): the 1-based position of the first argument equal to s, else 0."""
    args = [frame.eval(a) for a in call_args(node)]
    if len(args) < 2:
        raise ExpressionError("field takes a value and one or more candidates")
    target = to_array(cast_value(args[0], STRING), frame.n)
    result = np.zeros(frame.n, dtype=np.int64)
    for position, candidate in reversed(list(enumerate(args[1:], start=1))):
        equal = pc.fill_null(pc.equal(target, cast_value(candidate, STRING)), False)
        result = np.where(np.asarray(to_array(equal, frame.n)), position, result)
    return pa.array(result, pa.int64())


def eval_find_in_set(node: exp.Expression, frame: Frame) -> Value:
    def make(items: str) -> Callable[[str], int]:
        parts = items.split(",")
        return lambda s: parts.index(s) + 1 if s in parts else 0
    return _text_with_param(node, frame, "find_in_set takes a string and a comma-separated list",
                            make, pa.int64())


def eval_e(node: exp.Expression, frame: Frame) -> Value:
    return pa.scalar(math.e, pa.float64())


def eval_uuid(node: exp.Expression, frame: Frame) -> Value:
    """A new UUID per row (no column to vectorise over: generating them is the work)."""
    return pa.array([str(uuid.uuid4()) for _ in range(max(frame.n, 1))], STRING) \
        if frame.n != 1 else pa.scalar(str(uuid.uuid4()), STRING)


def eval_width_bucket(node: exp.Expression, frame: Frame) -> Value:
    args = call_args(node)
    if len(args) != 4:
        raise ExpressionError("width_bucket takes a value, min, max and a bucket count")
    x, lo, hi, n = (to_numpy(to_array(cast_value(frame.eval(a), pa.float64()), frame.n), 0.0)
                    for a in args)
    valid = np.ones(frame.n, dtype=bool)
    for a in args:
        valid &= np.asarray(pc.is_valid(to_array(frame.eval(a), frame.n)))
    valid &= (hi > lo) & (n >= 1)
    width = np.where(valid, (hi - lo) / np.where(n >= 1, n, 1), 1.0)
    bucket = np.where(x < lo, 0, np.where(x >= hi, n + 1, np.floor((x - lo) / width) + 1))
    return pa.array(bucket.astype(np.int64), mask=~valid)


HANDLERS = {exp.Hex: eval_hex,
            exp.Unhex: _bytes_fn(_unhex, "unhex"),
            exp.ToBase64: _encode_fn(lambda b: base64.b64encode(b).decode(), "to_base64"),
            exp.FromBase64: _bytes_fn(_from_base64, "from_base64"),
            exp.SHA: _text_fn(lambda s: hashlib.sha1(s.encode()).hexdigest(), STRING, "sha1"),
            exp.SHA2: eval_sha2, exp.Initcap: eval_initcap, exp.Chr: eval_char,
            exp.Elt: eval_elt, exp.ParseUrl: eval_parse_url, exp.Uuid: eval_uuid,
            exp.WidthBucket: eval_width_bucket}
FUNCTIONS = {
    "CRC32": _text_fn(lambda s: zlib.crc32(s.encode()), pa.int64(), "crc32"),
    "MURMUR_HASH3_32": _text_fn(lambda s: mmh3.hash(s.encode(), MURMUR3_32_SEED), pa.int32(),
                                "murmur_hash3_32"),
    "BIN": eval_bin, "CONV": eval_conv, "FIELD": eval_field, "FIND_IN_SET": eval_find_in_set,
    "URL_ENCODE": _text_fn(quote_plus, STRING, "url_encode"),
    "URL_DECODE": _text_fn(unquote_plus, STRING, "url_decode"),
    "E": eval_e, "SHA1": _text_fn(lambda s: hashlib.sha1(s.encode()).hexdigest(), STRING, "sha1"),
}
