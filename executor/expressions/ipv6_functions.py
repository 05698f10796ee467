"""Doris's IPv6 functions beyond `ip_functions.py`'s validation (functions_ip.h).

This project has no IPV6 column type: an IPv6 value is its text, compressed as Doris prints an
IPV6 (ClickHouse's formatIPv6: hex groups without leading zeros, the longest run of two or
more zero groups as `::`, an IPv4-mapped or -compatible address with its dotted IPv4 tail:
`::ffff:192.168.0.1`). The binary form is the 16 bytes, as Doris's VARCHAR holds them (Arrow
binary, `binary_text.py`).

    ipv6_string_to_num(s)              16 bytes of an IPv6 text (an IPv4 text gives its
                                       IPv4-mapped address); other text is an error
    ipv6_string_to_num_or_null(s)      ... NULL instead (inet6_aton is this one)
    ipv6_string_to_num_or_default(s)   ... 16 zero bytes instead
    ipv6_num_to_string(b) / inet6_ntoa the text of 16 bytes (an IPv6 text passes through
                                       formatted); any other value gives NULL
    is_ipv4_mapped(b), is_ipv4_compat(b)  BOOLEAN: ::ffff:a.b.c.d / ::a.b.c.d (16 bytes only)
    ipv4_to_ipv6(ip)                   the IPv4-mapped IPv6 of an IPv4 number or text
    to_ipv6(s), to_ipv6_or_null(s), to_ipv6_or_default(s)
                                       an IPv6 value (its text) from an IPv6 text; error / NULL
                                       / `::` for other text

Also under the names without underscores (ipv6numtostring, ipv6stringtonum, ...). Each
distinct value is parsed once with Python's `ipaddress` (no vectorised IPv6 parser exists);
ipv4_to_ipv6 of numbers is numpy and Arrow string kernels.
"""

from __future__ import annotations

import ipaddress

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from sqlglot import exp

from executor.expressions.binary_text import is_binary, text_or_bytes
from executor.expressions.casts import cast_value
from executor.expressions.codecs import one_arg
from executor.expressions.context import Frame, Value
from executor.expressions.errors import ExpressionError
from executor.expressions.ip_functions import IPV4_PATTERN, eval_ipv4_num_to_string
from executor.expressions.vectors import map_distinct, on_arrays, to_numpy, valid_mask

STRING = pa.string()
BINARY = pa.binary()
_MAPPED = bytes(10) + b"\xff\xff"


def _packed(text: str) -> bytes | None:
    """The 16 bytes of an IPv6 (or IPv4, mapped) text, or None."""
    if not isinstance(text, str) or "%" in text:  # Python accepts a scope id; Doris does not
        return None
    try:
        return ipaddress.IPv6Address(text).packed
    except ValueError:
        pass
    try:
        return _MAPPED + ipaddress.IPv4Address(text).packed
    except ValueError:
        return None


def format_ipv6(raw: bytes) -> str:
    """Doris's (ClickHouse's formatIPv6) text of 16 bytes."""
    words = [int.from_bytes(raw[i:i + 2], "big") for i in range(0, 16, 2)]
    base, length, run_start = -1, 0, -1
    for i, w in enumerate(words + [1]):  # the sentinel ends a trailing run
        if w == 0 and i < 8:
            run_start = i if run_start < 0 else run_start
        elif run_start >= 0:
            if i - run_start > length:
                base, length = run_start, i - run_start
            run_start = -1
    if length < 2:
        base = -1
    if base == 0 and (length == 6 or (length == 5 and words[5] == 0xFFFF)):
        head = "::ffff:" if length == 5 else "::"
        return head + ".".join(str(b) for b in raw[12:])
    groups = [f"{w:x}" for w in words]
    if base < 0:
        return ":".join(groups)
    return ":".join(groups[:base]) + "::" + ":".join(groups[base + length:])


def _value_text(value) -> str | None:
    """ipv6_num_to_string of one value: 16 bytes, or an IPv6 text; else None."""
    raw = value if isinstance(value, bytes) else value.encode("utf-8", "surrogatepass")
    if len(raw) == 16:
        return format_ipv6(raw)
    packed = _packed(value) if isinstance(value, str) and ":" in value else None
    return format_ipv6(packed) if packed is not None else None


def _raw_values(v: Value) -> Value:
    return v if is_binary(v.type) or pa.types.is_null(v.type) else cast_value(v, STRING)


def eval_ipv6_num_to_string(node: exp.Expression, frame: Frame) -> Value:
    v = _raw_values(one_arg(node, frame, "ipv6_num_to_string"))
    if pa.types.is_null(v.type):
        return pa.scalar(None, STRING)
    return map_distinct(v, _value_text, STRING)


def _string_to_num(on_error: str):
    def handler(node: exp.Expression, frame: Frame) -> Value:
        v = cast_value(one_arg(node, frame, "ipv6_string_to_num"), STRING)

        def kernel(arr: pa.Array) -> pa.Array:
            packed = map_distinct(arr, _packed, BINARY)
            bad = valid_mask(arr) & ~valid_mask(packed)
            if on_error == "error" and bad.any():
                raise ExpressionError(f"Invalid IPv6 value '{arr.filter(pa.array(bad))[0]}'")
            if on_error == "default":
                packed = pc.if_else(pa.array(bad), pa.scalar(bytes(16), BINARY), packed)
            return text_or_bytes(packed)
        return on_arrays(kernel, v, n=frame.n)
    return handler


def _to_ipv6(on_error: str):
    def handler(node: exp.Expression, frame: Frame) -> Value:
        v = cast_value(one_arg(node, frame, "to_ipv6"), STRING)

        def kernel(arr: pa.Array) -> pa.Array:
            text = map_distinct(arr, lambda s: None if ":" not in s or _packed(s) is None
                                else format_ipv6(_packed(s)), STRING)
            bad = valid_mask(arr) & ~valid_mask(text)
            if on_error == "error" and bad.any():
                raise ExpressionError(f"Invalid IPv6 value '{arr.filter(pa.array(bad))[0]}'")
            if on_error == "default":
                text = pc.if_else(pa.array(bad), pa.scalar("::"), text)
            return text
        return on_arrays(kernel, v, n=frame.n)
    return handler


def _prefix_test(prefix: bytes):
    def handler(node: exp.Expression, frame: Frame) -> Value:
        v = _raw_values(one_arg(node, frame, "is_ipv4_mapped"))
        if pa.types.is_null(v.type):
            return pa.scalar(None, pa.bool_())

        def test(value) -> bool:
            raw = value if isinstance(value, bytes) else value.encode("utf-8", "surrogatepass")
            return len(raw) == 16 and raw.startswith(prefix)
        return map_distinct(v, test, pa.bool_())
    return handler


def eval_ipv4_to_ipv6(node: exp.Expression, frame: Frame) -> Value:
    v = one_arg(node, frame, "ipv4_to_ipv6")
    if pa.types.is_string(v.type) or pa.types.is_large_string(v.type):
        def kernel(arr: pa.Array) -> pa.Array:  # an IPv4 text: its dotted form as it is
            ok = pc.match_substring_regex(arr, IPV4_PATTERN)
            return pc.if_else(ok, pc.binary_join_element_wise("::ffff:", arr, ""),
                              pa.scalar(None, STRING))
        return on_arrays(kernel, v, n=frame.n)
    dotted = eval_ipv4_num_to_string(node, frame)
    return on_arrays(lambda arr: pc.binary_join_element_wise("::ffff:", arr, ""), dotted,
                     n=frame.n)


_FUNCTIONS = {
    "IPV6_NUM_TO_STRING": eval_ipv6_num_to_string,
    "IPV6_STRING_TO_NUM": _string_to_num("error"),
    "IPV6_STRING_TO_NUM_OR_NULL": _string_to_num("null"),
    "IPV6_STRING_TO_NUM_OR_DEFAULT": _string_to_num("default"),
}
HANDLERS: dict = {}
FUNCTIONS = {**_FUNCTIONS,
             **{name.replace("_", ""): fn for name, fn in _FUNCTIONS.items()},
             "INET6_NTOA": eval_ipv6_num_to_string, "INET6_ATON": _string_to_num("null"),
             "IS_IPV4_MAPPED": _prefix_test(_MAPPED), "IS_IPV4_COMPAT": _prefix_test(bytes(12)),
             "IPV4_TO_IPV6": eval_ipv4_to_ipv6, "TO_IPV6": _to_ipv6("error"),
             "TO_IPV6_OR_NULL": _to_ipv6("null"), "TO_IPV6_OR_DEFAULT": _to_ipv6("default")}
