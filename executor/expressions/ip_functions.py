"""Doris's IPv4 / IPv6 text functions (functions_ip.h).

    ipv4_num_to_string(n) / inet_ntoa      VARCHAR 'a.b.c.d'; n outside 0 .. 2^32-1 gives NULL
    ipv4_string_to_num(s)                  BIGINT; text that is not an IPv4 address is an error
    ipv4_string_to_num_or_null(s)          ... NULL instead (inet_aton is this one)
    ipv4_string_to_num_or_default(s)       ... 0 instead
    is_ipv4_string(s) / is_ipv6_string(s)  BOOLEAN; NULL gives NULL

Also under the names without underscores (ipv4numtostring, ipv4stringtonum, ...) that Doris's
regression tests use. An IPv4 address is four decimal octets of at most three digits each, no
larger than 255, separated by dots, nothing around them (test_is_ip_string_functions.out:
'0.0.0.', '.' and '' are not addresses).

IPv4 runs on Arrow kernels (a regular expression, split, numpy arithmetic); IPv6 validation has
no vectorised form and runs once per distinct text through Python's `ipaddress`.
The binary IPv6 forms (ipv6_num_to_string, ipv6_string_to_num, ...) and to_ipv6 are in
`ipv6_functions.py`.
"""

from __future__ import annotations

import ipaddress

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from sqlglot import exp

from executor.expressions.casts import cast_value
from executor.expressions.codecs import one_arg
from executor.expressions.context import Frame, Value
from executor.expressions.errors import ExpressionError
from executor.expressions.vectors import map_distinct, on_arrays, to_numpy, valid_mask

STRING = pa.string()
_OCTET = r"(25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9]|0[0-9]{1,2})"
IPV4_PATTERN = rf"^{_OCTET}\.{_OCTET}\.{_OCTET}\.{_OCTET}$"




def is_ipv4(texts: Value) -> Value:
    return pc.match_substring_regex(cast_value(texts, STRING), IPV4_PATTERN)


def eval_ipv4_num_to_string(node: exp.Expression, frame: Frame) -> Value:
    v = one_arg(node, frame, "ipv4_num_to_string")
    if not (pa.types.is_integer(v.type) or pa.types.is_null(v.type)):
        v = cast_value(v, pa.int64())

    def kernel(arr: pa.Array) -> pa.Array:
        ints = cast_value(arr, pa.int64()) if not pa.types.is_decimal(arr.type) else \
            cast_value(arr, pa.float64())
        nums = to_numpy(ints, -1).astype(np.float64)
        valid = valid_mask(ints) & (nums >= 0) & (nums <= 0xFFFFFFFF)
        values = np.where(valid, nums, 0).astype(np.int64)
        parts = [pa.array((values >> shift) & 0xFF).cast(STRING) for shift in (24, 16, 8, 0)]
        text = pc.binary_join_element_wise(*parts, ".")
        return pc.if_else(pa.array(valid), text, pa.scalar(None, STRING))
    return on_arrays(kernel, v, n=frame.n)


def _ipv4_numbers(texts: pa.Array) -> tuple[np.ndarray, np.ndarray]:
    """(the number of each text, which texts are IPv4 addresses)."""
    texts = cast_value(texts, STRING)
    ok = to_numpy(pc.match_substring_regex(texts, IPV4_PATTERN), False).astype(bool)
    safe = pc.if_else(pa.array(ok), texts, "0.0.0.0")
    octets = pc.list_flatten(pc.split_pattern(safe, "."))
    values = to_numpy(cast_value(octets, pa.int64()), 0).reshape(-1, 4) if len(texts) else \
        np.zeros((0, 4), np.int64)
    numbers = (values[:, 0] << 24) | (values[:, 1] << 16) | (values[:, 2] << 8) | values[:, 3]
    return numbers, ok


def _string_to_num(on_error: str):
    def handler(node: exp.Expression, frame: Frame) -> Value:
        v = cast_value(one_arg(node, frame, "ipv4_string_to_num"), STRING)

        def kernel(arr: pa.Array) -> pa.Array:
            numbers, ok = _ipv4_numbers(arr)
            present = valid_mask(arr)
            if on_error == "error" and (present & ~ok).any():
                bad = arr.filter(pa.array(present & ~ok))[0].as_py()
                raise ExpressionError(f"Invalid IPv4 value '{bad}'")
            if on_error == "default":
                return pa.array(np.where(ok, numbers, 0), pa.int64(), mask=~present)
            return pa.array(numbers, pa.int64(), mask=~(present & ok))
        return on_arrays(kernel, v, n=frame.n)
    return handler


def eval_is_ipv4_string(node: exp.Expression, frame: Frame) -> Value:
    return is_ipv4(one_arg(node, frame, "is_ipv4_string"))


def _is_ipv6(text: str) -> bool:
    try:
        ipaddress.IPv6Address(text)
        if "%" in text:  # Python accepts a scope id (fe80::1%eth0); Doris does not
            return False
    except ValueError:
        return False
    return True


def eval_is_ipv6_string(node: exp.Expression, frame: Frame) -> Value:
    return map_distinct(cast_value(one_arg(node, frame, "is_ipv6_string"), STRING), _is_ipv6,
                        pa.bool_())


_FUNCTIONS = {
    "IPV4_NUM_TO_STRING": eval_ipv4_num_to_string,
    "IPV4_STRING_TO_NUM": _string_to_num("error"),
    "IPV4_STRING_TO_NUM_OR_NULL": _string_to_num("null"),
    "IPV4_STRING_TO_NUM_OR_DEFAULT": _string_to_num("default"),
    "IS_IPV4_STRING": eval_is_ipv4_string, "IS_IPV6_STRING": eval_is_ipv6_string,
}
HANDLERS: dict = {}
FUNCTIONS = {**_FUNCTIONS,
             **{name.replace("_", ""): fn for name, fn in _FUNCTIONS.items()
                if name.startswith("IPV4")},
             "INET_NTOA": eval_ipv4_num_to_string, "INET_ATON": _string_to_num("null")}
