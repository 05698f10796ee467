"""String functions (MySQL/Doris semantics, positions and lengths in characters unless noted).

CONCAT is NULL if any argument is; CONCAT_WS skips NULL arguments (NULL separator -> NULL).
SUBSTR/SUBSTRING/MID are 1-based; a negative start counts from the end; start 0 or a length < 1
gives ''. LENGTH counts bytes, CHAR_LENGTH characters. TRIM/LTRIM/RTRIM remove spaces only, or
repetitions of the given string. LPAD/RPAD truncate to `len` when the string is longer, and give
'' when padding is needed but the pad is empty (Doris docs); a negative length gives NULL.
SPLIT_PART is 1-based, negative indexes count from the end, out of range gives NULL.
INSTR/LOCATE return 0 when not found. Matching is case-sensitive (no collations in Doris).

Kernels whose parameters must be constants in Arrow (slice bounds, patterns) run once per
distinct parameter value via `vectors.map_distinct_params`; MD5 and ASCII run once per distinct
value via `vectors.map_distinct`.
"""

from __future__ import annotations

import hashlib
import re
from decimal import ROUND_HALF_UP, Decimal
from typing import Callable

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from sqlglot import exp

from executor.expressions.binary_text import is_binary
from executor.expressions.casts import cast_value
from executor.expressions.context import Frame, Value
from executor.expressions.errors import ExpressionError
from executor.expressions.re2_compat import compile_re2
from executor.expressions.vectors import (all_scalar, map_distinct, map_distinct_params, null_of, to_array,
                                          on_arrays, to_numpy, valid_mask)

STRING = pa.string()
_BIG = 2 ** 31


def text(v: Value) -> Value:
    return cast_value(v, STRING)


def _nulls_like(v: Value, t: pa.DataType) -> Value:
    return null_of(t) if isinstance(v, pa.Scalar) else pa.nulls(len(v), t)


def _empty_like(v: Value) -> Value:
    """'' where v is non-NULL."""
    return pc.if_else(pc.is_null(v), null_of(STRING), "")


def _int_param(v: Value) -> Value:
    return cast_value(v, pa.int64())


# -- concatenation ---------------------------------------------------------------------------
def eval_concat(node: exp.Concat, frame: Frame) -> Value:
    args = [text(frame.eval(e)) for e in node.expressions]
    return pc.binary_join_element_wise(*args, "", null_handling="emit_null")


def eval_concat_ws(node: exp.ConcatWs, frame: Frame) -> Value:
    values = [frame.eval(e) for e in node.expressions]
    if len(values) == 2 and pa.types.is_list(values[1].type):  # concat_ws(sep, ['d', 'is'])
        return on_arrays(_join_list, values[1], text(values[0]), n=frame.n)
    if len(values) > 2 and all(pa.types.is_list(v.type) for v in values[1:]):
        # concat_ws(sep, ['a', NULL], ['b']): the arrays' non-NULL elements in turn, 'a,b';
        # an array with none (empty, all NULL or NULL) adds no separator
        values = [values[0]] + [on_arrays(_joined_or_null, v, text(values[0]), n=frame.n)
                                for v in values[1:]]
    sep, *args = [text(v) for v in values]
    if not args:
        return _empty_like(sep)
    if all_scalar(sep, *args):  # constant: Arrow's kernel fails on all-NULL scalar inputs
        if not sep.is_valid:
            return null_of(STRING)
        return pa.scalar(sep.as_py().join(a.as_py() for a in args if a.is_valid), STRING)
    # pyarrow 26 drops (!) the rows where every value is NULL under null_handling="skip"; give
    # such rows one empty string, which joins to the '' MySQL returns for them.
    all_null = pc.is_null(args[0])
    for arg in args[1:]:
        all_null = pc.and_(all_null, pc.is_null(arg))
    args[0] = pc.if_else(all_null, "", args[0])
    return pc.binary_join_element_wise(*args, sep, null_handling="skip")


def _joined_or_null(arr: pa.Array, sep: pa.Array) -> pa.Array:
    """`_join_list`, NULL where the array has no non-NULL element."""
    strings = arr.cast(pa.list_(STRING))
    flat = pc.list_flatten(strings)
    parents = np.asarray(pc.list_parent_indices(strings).to_numpy(), np.int64)
    counts = np.bincount(parents[to_numpy(pc.is_valid(flat), False)], minlength=len(arr))
    return pc.if_else(pa.array(counts > 0), _join_list(arr, sep), pa.scalar(None, STRING))


def _join_list(arr: pa.Array, sep: pa.Array) -> pa.Array:
    """Each ARRAY's non-NULL elements joined by its row's separator (NULL array: NULL)."""
    strings = arr.cast(pa.list_(STRING))
    flat, parents = pc.list_flatten(strings), pc.list_parent_indices(strings)
    keep = pc.is_valid(flat)
    flat, parents = flat.filter(keep), np.asarray(parents.filter(keep).to_numpy(), np.int64)
    counts = np.bincount(parents, minlength=len(arr))
    offsets = pa.array(np.concatenate(([0], np.cumsum(counts))).astype(np.int32))
    joined = pc.binary_join(pa.ListArray.from_arrays(offsets, flat), sep)
    return pc.if_else(pc.is_valid(strings), joined, pa.scalar(None, STRING))


# -- substrings ------------------------------------------------------------------------------
def substring(s: Value, start: Value, length: Value | None, frame: Frame) -> Value:
    s = text(s)
    params = [_int_param(start)] + ([_int_param(length)] if length is not None else [])

    def kernel(values: Value, pos: int | None, count: int | None = _BIG) -> Value:
        if pos is None or count is None:
            return _nulls_like(values, STRING)
        if pos == 0 or count <= 0:
            return _empty_like(values)
        if pos > 0:
            return pc.utf8_slice_codeunits(values, start=pos - 1, stop=min(pos - 1 + count, _BIG))
        stop = pos + count if pos + count < 0 else _BIG
        sliced = pc.utf8_slice_codeunits(values, start=pos, stop=stop)
        return pc.if_else(pc.less(pc.utf8_length(values), -pos), "", sliced)
    return map_distinct_params(kernel, s, params, STRING, frame.n)


def eval_substring(node: exp.Substring, frame: Frame) -> Value:
    length = node.args.get("length")
    return substring(frame.eval(node.this), frame.eval(node.args["start"]),
                     frame.eval(length) if length is not None else None, frame)


def left(s: Value, count: Value, frame: Frame) -> Value:
    return substring(s, pa.scalar(1), count, frame)


def right(s: Value, count: Value, frame: Frame) -> Value:
    def kernel(values: Value, n: int | None) -> Value:
        if n is None:
            return _nulls_like(values, STRING)
        if n <= 0:
            return _empty_like(values)
        return pc.utf8_slice_codeunits(values, start=-n, stop=_BIG)
    return map_distinct_params(kernel, text(s), [_int_param(count)], STRING, frame.n)


def eval_left(node: exp.Left, frame: Frame) -> Value:
    return left(frame.eval(node.this), frame.eval(node.expression), frame)


def eval_right(node: exp.Right, frame: Frame) -> Value:
    return right(frame.eval(node.this), frame.eval(node.expression), frame)


def eval_substring_index(node: exp.SubstringIndex, frame: Frame) -> Value:
    s = text(frame.eval(node.this))
    params = [text(frame.eval(node.args["delimiter"])), _int_param(frame.eval(node.args["count"]))]

    def kernel(values: Value, delim: str | None, count: int | None) -> Value:
        if delim is None or count is None:
            return _nulls_like(values, STRING)
        if count == 0 or delim == "":
            return _empty_like(values)
        if count > 0:
            parts = pc.split_pattern(values, pattern=delim)
            return pc.binary_join(pc.list_slice(parts, 0, count), delim)
        # From the right: reverse the string and the delimiter, take from the left, reverse back.
        rev_delim = delim[::-1]
        parts = pc.split_pattern(pc.utf8_reverse(values), pattern=rev_delim)
        return pc.utf8_reverse(pc.binary_join(pc.list_slice(parts, 0, -count), rev_delim))
    return map_distinct_params(kernel, s, params, STRING, frame.n)


# -- case, length, trimming ------------------------------------------------------------------
def eval_upper(node: exp.Upper, frame: Frame) -> Value:
    """ASCII letters only, as Doris 2.1's upper ('straße é' -> 'STRAßE é'; its BE maps bytes)."""
    return pc.ascii_upper(text(frame.eval(node.this)))


def eval_lower(node: exp.Lower, frame: Frame) -> Value:
    """ASCII letters only, as Doris 2.1's lower ('ÉCOLE' -> 'École')."""
    return pc.ascii_lower(text(frame.eval(node.this)))


def eval_length(node: exp.Length, frame: Frame) -> Value:
    value = frame.eval(node.this)
    if node.args.get("binary") and is_binary(value.type):  # the bytes of aes_encrypt, unhex
        return pc.binary_length(value).cast(pa.int32())
    s = text(value)
    if node.args.get("binary"):  # LENGTH: bytes
        return pc.binary_length(s).cast(pa.int32())
    return pc.utf8_length(s).cast(pa.int32())  # CHAR_LENGTH: characters


def eval_bit_length(node: exp.BitLength, frame: Frame) -> Value:
    return pc.multiply(pc.binary_length(text(frame.eval(node.this))).cast(pa.int32()), 8)


def trim(s: Value, remove: Value | None, position: str, frame: Frame) -> Value:
    s = text(s)
    if remove is None:
        fn = {"LEADING": pc.utf8_ltrim, "TRAILING": pc.utf8_rtrim}.get(position, pc.utf8_trim)
        return fn(s, characters=" ")

    def kernel(values: Value, rem: str | None) -> Value:
        if rem is None:
            return _nulls_like(values, STRING)
        if rem == "":
            return values
        unit = f"(?:{re.escape(rem)})+"
        if position in ("LEADING", "BOTH"):
            values = pc.replace_substring_regex(values, pattern=f"^{unit}", replacement="")
        if position in ("TRAILING", "BOTH"):
            values = pc.replace_substring_regex(values, pattern=f"{unit}$", replacement="")
        return values
    return map_distinct_params(kernel, s, [text(remove)], STRING, frame.n)


def eval_trim(node: exp.Trim, frame: Frame) -> Value:
    remove = node.expression
    position = str(node.args.get("position") or "BOTH").upper()
    return trim(frame.eval(node.this), frame.eval(remove) if remove is not None else None,
                position, frame)


# -- search and replace ----------------------------------------------------------------------
def eval_replace(node: exp.Replace, frame: Frame) -> Value:
    s = text(frame.eval(node.this))
    params = [text(frame.eval(node.expression)), text(frame.eval(node.args["replacement"]))]

    def kernel(values: Value, old: str | None, new: str | None) -> Value:
        if old is None or new is None:
            return _nulls_like(values, STRING)
        if old == "":
            return values
        return pc.replace_substring(values, pattern=old, replacement=new)
    return map_distinct_params(kernel, s, params, STRING, frame.n)


def eval_regexp_replace(node: exp.RegexpReplace, frame: Frame) -> Value:
    s = text(frame.eval(node.this))
    params = [text(frame.eval(node.expression)), text(frame.eval(node.args["replacement"]))]

    def kernel(values: Value, pattern: str | None, new: str | None) -> Value:
        if pattern is None or new is None:
            return _nulls_like(values, STRING)
        try:
            return pc.replace_substring_regex(values, pattern=pattern, replacement=new)
        except pa.ArrowInvalid as e:
            raise ExpressionError(f"Invalid regular expression '{pattern}': {e}") from e
    return map_distinct_params(kernel, s, params, STRING, frame.n)


def locate(s: Value, sub: Value, pos: Value | None, frame: Frame) -> Value:
    """1-based character position of `sub` in `s` at or after `pos`; 0 when absent."""
    params = [text(sub)] + ([_int_param(pos)] if pos is not None else [])

    def kernel(values: Value, needle: str | None, start: int | None = 1) -> Value:
        if needle is None or start is None:
            return _nulls_like(values, pa.int32())
        if start < 1:
            return pc.if_else(pc.is_null(values), null_of(pa.int32()), pa.scalar(0, pa.int32()))
        tail = pc.utf8_slice_codeunits(values, start=start - 1, stop=_BIG)
        if needle == "":
            fits = pc.less_equal(pa.scalar(start), pc.add(pc.utf8_length(values), 1))
            return pc.if_else(fits, pa.scalar(start, pa.int32()), pa.scalar(0, pa.int32()))
        found = pc.match_substring(tail, pattern=needle)
        before = pc.list_element(pc.split_pattern(tail, pattern=needle, max_splits=1), 0)
        index = pc.add(pc.utf8_length(before), start).cast(pa.int32())
        return pc.if_else(found, index, pa.scalar(0, pa.int32()))
    return map_distinct_params(kernel, text(s), params, pa.int32(), frame.n)


def eval_str_position(node: exp.StrPosition, frame: Frame) -> Value:
    pos = node.args.get("position")
    return locate(frame.eval(node.this), frame.eval(node.args["substr"]),
                  frame.eval(pos) if pos is not None else None, frame)


def _affix(fn: Callable[..., Value]) -> Callable[[exp.Binary, Frame], Value]:
    def handler(node: exp.Binary, frame: Frame) -> Value:
        def kernel(values: Value, affix: str | None) -> Value:
            if affix is None:
                return _nulls_like(values, pa.bool_())
            return fn(values, pattern=affix)
        return map_distinct_params(kernel, text(frame.eval(node.this)),
                                   [text(frame.eval(node.expression))], pa.bool_(), frame.n)
    return handler


def eval_split_part(node: exp.SplitPart, frame: Frame) -> Value:
    s = text(frame.eval(node.this))
    params = [text(frame.eval(node.args["delimiter"])),
              _int_param(frame.eval(node.args["part_index"]))]

    def kernel(values: Value, delim: str | None, index: int | None) -> Value:
        if isinstance(values, pa.Scalar):
            return kernel(to_array(values, 1), delim, index)[0]
        if delim is None or index is None or index == 0 or delim == "":
            return pa.nulls(len(values), STRING)
        if index < 0:
            # Doris searches from the right for negative indexes ('a###b' by '##' -> 'b'):
            # reverse the string and the delimiter, pick from the left, reverse back.
            picked = kernel(pc.utf8_reverse(values), delim[::-1], -index)
            return pc.utf8_reverse(picked)
        parts = pc.split_pattern(values, pattern=delim)
        lengths = to_numpy(pc.list_value_length(parts), 0)
        offsets = parts.offsets.to_numpy()
        ok = valid_mask(parts) & (index <= lengths)
        flat = parts.values
        if not len(flat):
            return pa.nulls(len(values), STRING)
        picked = flat.take(pa.array(np.where(ok, offsets[:-1] + index - 1, 0)))
        return pc.if_else(pa.array(ok), picked, null_of(STRING))
    return map_distinct_params(kernel, s, params, STRING, frame.n)


# -- padding, repetition, misc ---------------------------------------------------------------
def eval_pad(node: exp.Pad, frame: Frame) -> Value:
    s = text(frame.eval(node.this))
    fill = node.args.get("fill_pattern")
    params = [_int_param(frame.eval(node.expression)),
              text(frame.eval(fill)) if fill is not None else pa.scalar(" ")]
    is_left = bool(node.args.get("is_left"))

    def kernel(values: Value, width: int | None, pad: str | None) -> Value:
        if isinstance(values, pa.Scalar):
            return kernel(to_array(values, 1), width, pad)[0]
        if width is None or pad is None or width < 0:
            return pa.nulls(len(values), STRING)
        lengths = pc.utf8_length(values)
        truncated = pc.utf8_slice_codeunits(values, start=0, stop=width)
        if pad == "":
            return pc.if_else(pc.greater_equal(lengths, width), truncated, "")
        need = np.maximum(width - to_numpy(lengths, width), 0)
        # One fill string per distinct needed length (bounded by `width`), gathered per row.
        distinct, inverse = np.unique(need, return_inverse=True)
        fills = pa.array([(pad * (k // len(pad) + 1))[:k] for k in distinct.tolist()],
                         type=STRING).take(pa.array(inverse.astype(np.int64)))
        padded = pc.binary_join_element_wise(fills, values, "") if is_left else \
            pc.binary_join_element_wise(values, fills, "")
        return pc.if_else(pc.greater_equal(lengths, width), truncated, padded)
    return map_distinct_params(kernel, s, params, STRING, frame.n)


def eval_repeat(node: exp.Repeat, frame: Frame) -> Value:
    s = text(frame.eval(node.this))
    times = _int_param(frame.eval(node.args["times"]))
    times = pc.if_else(pc.less(times, 0), 0, times)
    return pc.binary_repeat(s, times)


def eval_space(node: exp.Space, frame: Frame) -> Value:
    times = _int_param(frame.eval(node.this))
    return pc.binary_repeat(pa.scalar(" "), pc.if_else(pc.less(times, 0), 0, times))


def eval_reverse(node: exp.Reverse, frame: Frame) -> Value:
    return pc.utf8_reverse(text(frame.eval(node.this)))


def eval_ascii(node: exp.Ascii, frame: Frame) -> Value:
    s = text(frame.eval(node.this))
    first = pc.utf8_slice_codeunits(s, start=0, stop=1)
    # At most one distinct value per leading character: cheap per-distinct mapping.
    return map_distinct(first, lambda c: c.encode("utf-8")[0] if c else 0, pa.int32())


def eval_md5(node: exp.MD5, frame: Frame) -> Value:
    s = text(frame.eval(node.this))
    # No Arrow hash kernel for MD5: hashlib once per distinct value.
    return map_distinct(s, lambda v: hashlib.md5(v.encode("utf-8")).hexdigest(), STRING)


def _anonymous_args(node: exp.Anonymous, frame: Frame, count: tuple[int, ...]) -> list[Value]:
    if len(node.expressions) not in count:
        raise ExpressionError(
            f"Function {str(node.this).upper()} takes {' or '.join(map(str, count))} arguments")
    return [frame.eval(e) for e in node.expressions]


def fn_strleft(node: exp.Anonymous, frame: Frame) -> Value:
    s, n = _anonymous_args(node, frame, (2,))
    return left(s, n, frame)


def fn_strright(node: exp.Anonymous, frame: Frame) -> Value:
    s, n = _anonymous_args(node, frame, (2,))
    return right(s, n, frame)


def fn_mid(node: exp.Anonymous, frame: Frame) -> Value:
    args = _anonymous_args(node, frame, (2, 3))
    return substring(args[0], args[1], args[2] if len(args) == 3 else None, frame)


def fn_null_or_empty(node: exp.Anonymous, frame: Frame) -> Value:
    (s,) = _anonymous_args(node, frame, (1,))
    s = text(s)
    return pc.or_(pc.is_null(s), pc.coalesce(pc.equal(s, ""), False))


def fn_not_null_or_empty(node: exp.Anonymous, frame: Frame) -> Value:
    return pc.invert(fn_null_or_empty(node, frame))


def eval_regexp_extract(node: exp.RegexpExtract, frame: Frame) -> Value:
    """REGEXP_EXTRACT(s, pattern, group): the group of the first match, '' without a match
    (Doris); the pattern and group must be constants (Python's re stands in for RE2)."""
    s = text(frame.eval(node.this))
    pattern, group = frame.eval(node.expression), frame.eval(node.args.get("position")) \
        if node.args.get("position") is not None else pa.scalar(1)
    if not isinstance(pattern, pa.Scalar) or not isinstance(group, pa.Scalar):
        raise ExpressionError("REGEXP_EXTRACT takes a constant pattern and group index")
    if not pattern.is_valid or not group.is_valid:
        return pa.scalar(None, STRING)
    try:
        compiled = compile_re2(pattern.as_py())
    except re.error as e:
        raise ExpressionError(f"Invalid regular expression '{pattern.as_py()}': {e}") from e
    index = int(group.as_py())

    def extract(value: str) -> str | None:
        m = compiled.search(value)
        if m is None or index > (compiled.groups or 0) or index < 0:
            return "" if m is None else None
        return m.group(index) or ""
    return map_distinct(s, extract, STRING)


def fn_money_format(node: exp.Anonymous, frame: Frame) -> Value:
    """MONEY_FORMAT(n): two decimals (half up) with thousands separators, '17,014,116.00'."""
    (v,) = _anonymous_args(node, frame, (1,))
    cents = Decimal("0.01")
    return map_distinct(v, lambda x: f"{Decimal(str(x)).quantize(cents, ROUND_HALF_UP):,}",
                        STRING)


HANDLERS = {
    exp.RegexpExtract: eval_regexp_extract,
    exp.Concat: eval_concat, exp.ConcatWs: eval_concat_ws, exp.Substring: eval_substring,
    exp.Left: eval_left, exp.Right: eval_right, exp.SubstringIndex: eval_substring_index,
    exp.Upper: eval_upper, exp.Lower: eval_lower, exp.Length: eval_length,
    exp.BitLength: eval_bit_length, exp.Trim: eval_trim, exp.Replace: eval_replace,
    exp.RegexpReplace: eval_regexp_replace, exp.StrPosition: eval_str_position,
    exp.StartsWith: _affix(pc.starts_with), exp.EndsWith: _affix(pc.ends_with),
    exp.SplitPart: eval_split_part, exp.Pad: eval_pad, exp.Repeat: eval_repeat,
    exp.Space: eval_space, exp.Reverse: eval_reverse, exp.Ascii: eval_ascii, exp.MD5: eval_md5,
}
FUNCTIONS = {
    "STRLEFT": fn_strleft, "STRRIGHT": fn_strright, "MID": fn_mid,
    "NULL_OR_EMPTY": fn_null_or_empty, "NOT_NULL_OR_EMPTY": fn_not_null_or_empty,
    "MONEY_FORMAT": fn_money_format,
}
