"""More of Doris's string functions: regexp_replace_one, regexp_extract_all,
extract_url_parameter, split_by_string, sub_replace.

    regexp_replace_one(s, pattern, repl)  the first match replaced (RE2, `\\1` groups)
    regexp_extract_all(s, pattern)        every match's first group as the text "['a','b']";
                                          '' when nothing matches or the pattern has no group
    extract_url_parameter(url, name)      the value of `name=` in the URL's query (between '?'
                                          and '#', split at '&'); '' when absent
    split_by_string(s, sep)               ARRAY<STRING>: s cut at each sep ('' splits into
                                          characters; an empty s gives [])
    sub_replace(s, new, start[, len])     s with `len` characters from the 0-based `start`
                                          replaced by `new` (len defaults to new's length);
                                          start < 0, len < 0 or start >= length(s) give NULL

NULL in any argument gives NULL. Patterns, names and separators are usually constants: each
distinct one runs Arrow kernels over the whole column (`vectors.map_distinct_params`).
regexp_extract_all has no Arrow kernel (Arrow's extract_regex finds the first match only) and
runs Python's `re` once per distinct text, as regexp_extract does in strings.py.
"""

from __future__ import annotations

import re

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from sqlglot import exp

from executor.expressions.casts import cast_value
from executor.expressions.context import Frame, Value
from executor.expressions.errors import ExpressionError
from executor.expressions.hash_kernels import string_layout
from executor.expressions.json_functions import call_args
from executor.expressions.re2_compat import compile_re2
from executor.expressions.vectors import map_distinct, map_distinct_params, null_of, to_array

STRING = pa.string()
_BIG = 2 ** 31 - 1


def _strings(node: exp.Expression, frame: Frame, counts: tuple[int, ...], name: str) -> list:
    args = call_args(node)
    if len(args) not in counts:
        raise ExpressionError(f"{name} takes {' or '.join(map(str, counts))} arguments")
    return [frame.eval(a) for a in args]


def _nulls(values: Value, t: pa.DataType) -> Value:
    return null_of(t) if isinstance(values, pa.Scalar) else pa.nulls(len(values), t)


def eval_regexp_replace_one(node: exp.Expression, frame: Frame) -> Value:
    s, pattern, repl = (cast_value(v, STRING)
                        for v in _strings(node, frame, (3,), "regexp_replace_one"))

    def kernel(values: Value, pat: str | None, new: str | None) -> Value:
        if pat is None or new is None:
            return _nulls(values, STRING)
        try:
            return pc.replace_substring_regex(values, pattern=pat, replacement=new,
                                              max_replacements=1)
        except pa.ArrowInvalid as e:
            raise ExpressionError(f"Invalid regular expression '{pat}': {e}") from e
    return map_distinct_params(kernel, s, [pattern, repl], STRING, frame.n)


def _extract_all(compiled: re.Pattern):
    def one(text: str) -> str:
        if compiled.groups == 0:
            return ""
        found = [m.group(1) or "" for m in compiled.finditer(text)]
        return "[" + ",".join(f"'{f}'" for f in found) + "]" if found else ""
    return one


def eval_regexp_extract_all(node: exp.Expression, frame: Frame) -> Value:
    s, pattern = (cast_value(v, STRING) for v in _strings(node, frame, (2,), "regexp_extract_all"))

    def kernel(values: Value, pat: str | None) -> Value:
        if pat is None:
            return _nulls(values, STRING)
        try:
            compiled = compile_re2(pat)
        except re.error as e:
            raise ExpressionError(f"Invalid regular expression '{pat}': {e}") from e
        return map_distinct(values, _extract_all(compiled), STRING)
    return map_distinct_params(kernel, s, [pattern], STRING, frame.n)


def eval_extract_url_parameter(node: exp.Expression, frame: Frame) -> Value:
    """RE2 over the trimmed URL: the query starts after the first '?', ends at '#'; the key
    is a whole '&'-separated segment's text before its first '='."""
    url, name = (cast_value(v, STRING)
                 for v in _strings(node, frame, (2,), "extract_url_parameter"))

    def kernel(values: Value, key: str | None) -> Value:
        if key is None:
            return _nulls(values, STRING)
        pattern = r"^[^?]*\?(?:[^#&]*&)*?" + re.escape(key) + r"=(?P<v>[^&#]*)"
        found = pc.struct_field(pc.extract_regex(pc.utf8_trim(values, " "), pattern), [0])
        return pc.if_else(pc.is_null(values), null_of(STRING), pc.fill_null(found, ""))
    return map_distinct_params(kernel, url, [name], STRING, frame.n)


def _characters(values: pa.Array) -> pa.ListArray:
    """Each string as the list of its UTF-8 characters, cut from the same data buffer: a byte
    starts a character unless it is a continuation byte (10xxxxxx)."""
    clean = pc.fill_null(values, "")
    data, starts, lengths = string_layout(clean)
    lo = int(starts[0]) if len(clean) else 0
    hi = int(starts[-1] + lengths[-1]) if len(clean) else 0
    char_starts = np.nonzero((data[lo:hi] & 0xC0) != 0x80)[0] + lo
    child_offsets = np.append(char_starts, hi).astype(np.int32)
    child = pa.Array.from_buffers(STRING, len(char_starts),
                                  [None, pa.py_buffer(child_offsets.tobytes()),
                                   clean.buffers()[2]])
    list_offsets = np.append(np.searchsorted(char_starts, starts), len(char_starts))
    mask = pc.is_null(values) if values.null_count else None
    return pa.ListArray.from_arrays(pa.array(list_offsets.astype(np.int32)), child, mask=mask)


def eval_split_by_string(node: exp.Expression, frame: Frame) -> Value:
    args = call_args(node)
    if len(args) != 2:
        raise ExpressionError("split_by_string takes a string and a separator")
    s, sep = (cast_value(frame.eval(a), STRING) for a in args)
    out = pa.list_(STRING)

    def kernel(values: Value, separator: str | None) -> Value:
        arr = to_array(values, 1) if isinstance(values, pa.Scalar) else values
        if separator is None:
            result = pa.nulls(len(arr), out)
        elif separator == "":
            result = _characters(arr)
        else:
            split = pc.split_pattern(arr, pattern=separator)
            empty = pc.equal(arr, "")
            result = pc.if_else(empty, pa.scalar([], out), split)
        return result[0] if isinstance(values, pa.Scalar) else result
    return map_distinct_params(kernel, s, [sep], out, frame.n)


def eval_sub_replace(node: exp.Expression, frame: Frame) -> Value:
    values = _strings(node, frame, (3, 4), "sub_replace")
    s, new = cast_value(values[0], STRING), cast_value(values[1], STRING)
    start = cast_value(values[2], pa.int64())
    length = cast_value(values[3], pa.int64()) if len(values) == 4 else \
        cast_value(pc.utf8_length(new), pa.int64())
    scalar = all(isinstance(v, pa.Scalar) for v in (s, new, start, length))
    rows = 1 if scalar else frame.n
    pairs = pa.StructArray.from_arrays([to_array(s, rows), to_array(new, rows)], ["s", "new"])

    def kernel(pair: pa.StructArray, first: int | None, count: int | None) -> Value:
        texts, replacement = pair.field("s"), pair.field("new")
        if first is None or count is None or first < 0 or count < 0:
            return pa.nulls(len(pair), STRING)
        head = pc.utf8_slice_codeunits(texts, start=0, stop=first)
        tail = pc.utf8_slice_codeunits(texts, start=min(first + count, _BIG), stop=_BIG)
        joined = pc.binary_join_element_wise(head, replacement, tail, "")
        return pc.if_else(pc.greater(pc.utf8_length(texts), first), joined, null_of(STRING))
    result = map_distinct_params(kernel, pairs, [start, length], STRING, rows)
    return result[0] if scalar else result


def eval_strcmp(node: exp.Expression, frame: Frame) -> Value:
    """strcmp(a, b): 0 when equal, -1 when a sorts first (byte order), 1 otherwise; NULL with
    a NULL argument."""
    a, b = (cast_value(v, STRING) for v in _strings(node, frame, (2,), "strcmp"))
    less = pc.cast(pc.less(a, b), pa.int8())
    greater = pc.cast(pc.greater(a, b), pa.int8())
    return pc.cast(pc.subtract(greater, less), pa.int32())


HANDLERS = {exp.RegexpExtractAll: eval_regexp_extract_all, exp.StringToArray: eval_split_by_string}
FUNCTIONS = {
    "REGEXP_REPLACE_ONE": eval_regexp_replace_one,
    "REGEXP_EXTRACT_ALL": eval_regexp_extract_all,
    "EXTRACT_URL_PARAMETER": eval_extract_url_parameter,
    "SPLIT_BY_STRING": eval_split_by_string,
    "SUB_REPLACE": eval_sub_replace,
    "STRCMP": eval_strcmp,
}
