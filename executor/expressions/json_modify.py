"""Doris's JSON functions that change or search a document, with MySQL's rules (Doris
transcribes them; regression suites test_query_json_insert / _replace / _set).

    json_set(doc, path, value[, path, value...])      replace existing values, add missing ones
    json_insert(doc, path, value[, ...])              only add missing ones
    json_replace(doc, path, value[, ...])             only replace existing ones
    json_keys(doc[, path])                            the object's keys as a JSON array; NULL
                                                      when the value is not an object / missing
    json_search(doc, 'one' | 'all', pattern)          the path of the first string value LIKE
                                                      pattern ('"$.a"'), or every such path
                                                      (a JSON array when several); NULL if none

Modification rules, applied pair by pair: every step but the last must exist (else the pair
does nothing); `[0]` on a value that is not an array is that value itself; the last step adds
a member missing from an object, appends past the end of an array, and wraps a non-array in
an array before appending to it; `$` itself can be replaced but not inserted. A NULL document
or path gives NULL; a NULL value is JSON null. Values go in as JSON: strings as strings (not
parsed), numbers, booleans, JSON values as themselves, dates as their text. Paths with * or **
are an error, as in Doris.

Results: json_set / json_insert / json_replace return the document's text (VARCHAR, as in Doris
2.1), json_keys and json_search a JSON value. No Arrow kernel edits JSON: each distinct
combination of arguments is computed once in Python (`vectors.map_distinct_rows`).
"""

from __future__ import annotations

import json
import re
from decimal import Decimal
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
from sqlglot import exp

from executor.expressions import json_functions as jf
from executor.expressions.casts import cast_value, kind
from executor.expressions.context import Frame, Value
from executor.expressions.errors import ExpressionError
from executor.expressions.json_text import INVALID, dumps, json_texts, load
from executor.expressions.vectors import all_scalar, map_distinct_rows, to_array
from storage.types import as_json, is_json_type

STRING = pa.string()
_ABSENT = object()


def parse_modify_path(text: str) -> list:
    """The steps of a path for the modifying functions ('$.[1]' reads as '$[1]')."""
    if "*" in text:
        raise ExpressionError(
            "In this situation, path expressions may not contain the * and ** tokens")
    steps = jf._parse_path(text.replace("$.[", "$["))
    if steps is None:
        raise ExpressionError(f"Json path error: Invalid Json Path for value: {text}")
    return steps


def _index(step: Any, size: int) -> int:
    return size - 1 - int(step) if isinstance(step, jf._Last) else int(step)


def _child(doc: Any, step: Any) -> Any:
    if isinstance(step, int):
        if isinstance(doc, list):
            i = _index(step, len(doc))
            return doc[i] if 0 <= i < len(doc) else _ABSENT
        return doc if _index(step, 1) == 0 else _ABSENT
    return doc.get(step, _ABSENT) if isinstance(doc, dict) else _ABSENT


def modify(doc: Any, steps: list, value: Any, mode: str) -> Any:
    """`doc` with `value` at `steps`: mode 'set', 'insert' or 'replace'."""
    if not steps:
        return value if mode != "insert" else doc
    *parents, last = steps
    holder = doc
    trail = []
    for step in parents:
        nxt = _child(holder, step)
        if nxt is _ABSENT:
            return doc
        trail.append((holder, step))
        holder = nxt
    replaced = _put(holder, last, value, mode)
    if replaced is holder:
        return doc
    for parent, step in reversed(trail):  # rebuild the path down to the changed value
        replaced = _with_child(parent, step, replaced)
    return replaced


def _put(holder: Any, step: Any, value: Any, mode: str) -> Any:
    if isinstance(step, int):
        if isinstance(holder, list):
            i = _index(step, len(holder))
            if 0 <= i < len(holder):
                return holder[:i] + [value] + holder[i + 1:] if mode != "insert" else holder
            return holder + [value] if mode != "replace" and i >= 0 else holder
        if _index(step, 1) == 0:
            return value if mode != "insert" else holder
        return [holder, value] if mode != "replace" else holder
    if not isinstance(holder, dict):
        return holder
    if step in holder:
        return {**holder, step: value} if mode != "insert" else holder
    return {**holder, step: value} if mode != "replace" else holder


def _with_child(parent: Any, step: Any, child: Any) -> Any:
    if isinstance(step, int) and isinstance(parent, list):
        i = _index(step, len(parent))
        return parent[:i] + [child] + parent[i + 1:]
    if isinstance(step, int):
        return child  # [0] of a non-array: the value itself
    return {**parent, step: child}


def _json_values(v: Value) -> Value:
    """Each value as JSON text, the way the modifying functions insert it."""
    if is_json_type(v.type):
        return json_texts(v)
    k = kind(v.type)
    if k in ("date", "datetime"):
        return jf._encode(cast_value(v, STRING))
    if k == "list":
        def one(items: Any) -> str:
            return json.dumps(items, separators=(",", ":"), ensure_ascii=False,
                              default=lambda o: float(o) if isinstance(o, Decimal) else str(o))
        arr = to_array(v, 1) if isinstance(v, pa.Scalar) else v
        texts = pa.array([None if x is None else one(x) for x in arr.to_pylist()], STRING)
        texts = pc.fill_null(texts, "null")
        return texts[0] if isinstance(v, pa.Scalar) else texts
    return jf._encode(v)


def _modifier(mode: str):
    name = f"json_{mode}"

    def handler(node: exp.Expression, frame: Frame) -> Value:
        args = jf.call_args(node)
        if len(args) < 3 or len(args) % 2 == 0:
            raise ExpressionError(f"{name} takes a JSON document and path, value pairs")
        doc = json_texts(frame.eval(args[0]))
        doc = cast_value(doc, STRING) if not pa.types.is_null(doc.type) else doc
        parts: list[Value] = [doc]
        for i in range(1, len(args), 2):
            parts.append(cast_value(frame.eval(args[i]), STRING))
            parts.append(_json_values(frame.eval(args[i + 1])))
        if any(pa.types.is_null(p.type) for p in parts[:1] + parts[1::2]):
            return pa.scalar(None, STRING) if all_scalar(*parts) else pa.nulls(frame.n, STRING)

        def apply(text: str, *pairs: str) -> str | None:
            value = load(text)
            if value is INVALID:
                return None
            for path, item in zip(pairs[::2], pairs[1::2]):
                value = modify(value, parse_modify_path(path), json.loads(item, strict=False), mode)
            return dumps(value)

        scalar = all_scalar(*parts)
        rows = 1 if scalar else frame.n
        # A NULL value is JSON null, never a NULL result: only the document and paths count.
        arrays = [to_array(p, rows) for p in parts]
        result = map_distinct_rows(arrays, apply)
        return result[0] if scalar else result
    return handler


def eval_json_keys(node: exp.Expression, frame: Frame) -> Value:
    args = jf.call_args(node)
    if len(args) not in (1, 2):
        raise ExpressionError("json_keys takes a JSON document and an optional path")
    parts = [json_texts(frame.eval(args[0]))] + [cast_value(frame.eval(a), STRING)
                                                 for a in args[1:]]
    parts = [cast_value(p, STRING) for p in parts]

    def apply(text: str, path: str = "$") -> str | None:
        steps = jf._parse_path(path)
        if steps is None:
            raise ExpressionError(f"Json path error: Invalid Json Path for value: {path}")
        value = jf._at(load(text), steps)
        return dumps(list(value)) if isinstance(value, dict) else None

    scalar = all_scalar(*parts)
    rows = 1 if scalar else frame.n
    result = as_json(map_distinct_rows([to_array(p, rows) for p in parts], apply))
    return result[0] if scalar else result


_IDENTIFIER = re.compile(r"^[A-Za-z_$][A-Za-z0-9_$]*$")


def _like_regex(pattern: str) -> re.Pattern:
    """LIKE with '\\' as the escape character."""
    out, i = [], 0
    while i < len(pattern):
        ch = pattern[i]
        if ch == "\\" and i + 1 < len(pattern):
            out.append(re.escape(pattern[i + 1]))
            i += 2
            continue
        out.append(".*" if ch == "%" else "." if ch == "_" else re.escape(ch))
        i += 1
    return re.compile("".join(out), re.DOTALL)


def _paths(value: Any, path: str):
    """(path, string) of every string value in document order."""
    if isinstance(value, str):
        yield path, value
    elif isinstance(value, list):
        for i, item in enumerate(value):
            yield from _paths(item, f"{path}[{i}]")
    elif isinstance(value, dict):
        for key, item in value.items():
            name = key if _IDENTIFIER.match(key) else json.dumps(key, ensure_ascii=False)
            yield from _paths(item, f"{path}.{name}")


def eval_json_search(node: exp.Expression, frame: Frame) -> Value:
    args = jf.call_args(node)
    if len(args) != 3:
        raise ExpressionError("json_search takes a JSON document, 'one' or 'all', and a pattern")
    parts = [cast_value(json_texts(frame.eval(args[0])), STRING),
             cast_value(frame.eval(args[1]), STRING), cast_value(frame.eval(args[2]), STRING)]

    def apply(text: str, one_or_all: str, pattern: str) -> str | None:
        mode = one_or_all.lower()
        if mode not in ("one", "all"):
            raise ExpressionError("The oneOrAll argument to json_search may take these values: "
                                  "'one' or 'all'.")
        value = load(text)
        if value is INVALID:
            return None
        regex = _like_regex(pattern)
        found = [p for p, s in _paths(value, "$") if regex.fullmatch(s)]
        if not found:
            return None
        if mode == "one" or len(found) == 1:
            return dumps(found[0])
        return dumps(found)

    scalar = all_scalar(*parts)
    rows = 1 if scalar else frame.n
    result = as_json(map_distinct_rows([to_array(p, rows) for p in parts], apply))
    return result[0] if scalar else result


HANDLERS = {exp.JSONKeys: eval_json_keys, exp.JSONSet: _modifier("set")}
FUNCTIONS = {
    "JSON_SET": _modifier("set"), "JSON_INSERT": _modifier("insert"),
    "JSON_REPLACE": _modifier("replace"), "JSON_KEYS": eval_json_keys,
    "JSON_SEARCH": eval_json_search,
}
