"""JSON functions over JSON text columns, as Doris evaluates them.

    get_json_string(j, path) / get_json_int / get_json_bigint / get_json_double
        the value at `path`: a string as itself, an object or array as compact JSON text (for
        get_json_string); a value of another type, a missing path or bad JSON give NULL
    json_extract(j, path[, path...])   the value as JSON text (strings quoted); several paths
                                       give a JSON array of their values
    json_extract_string / _int / _bigint / _double / _bool, json_extract_isnull
    json_valid(j)  json_length(j[, path])  json_unquote(s)  json_object(k, v, ...)
    json_array(v, ...)

Paths are Doris's: `$`, `.key`, `."key.with.dots"`, `[n]`. No Arrow kernel parses JSON, so each
distinct document (and path) is parsed once (`vectors.map_distinct*`), not each row.
"""

from __future__ import annotations

import json
import re
from typing import Any, Callable

import pyarrow as pa
import pyarrow.compute as pc
from sqlglot import exp

from executor.expressions.casts import cast_value
from executor.expressions.context import Frame, Value
from executor.expressions.errors import ExpressionError
from executor.expressions.json_text import json_scalar
from executor.expressions.vectors import map_distinct, map_distinct_params
from storage.types import as_json, is_json_type

_MISSING = object()
_STEP = re.compile(r'\.(?:"((?:[^"\\]|\\.)*)"|([^.\[\]]+))|\.?\[(\d+|\*|-0|last(?:-\d+)?)\]')
# (`$.[1]`, Doris's spelling of the root array's element, as `$[1]`)


def _parse_path(path: str) -> list | None:
    """The steps of a Doris JSON path (keys and indexes), or None if it is not one."""
    path = path.strip()
    if not path.startswith("$"):
        return None
    steps, pos = [], 1
    while pos < len(path):
        m = _STEP.match(path, pos)
        if m is None:
            return None
        quoted, key, index = m.groups()
        if index is not None and index.startswith("last"):
            steps.append(_Last(int(index[5:] or 0)))
        elif index == "-0":
            steps.append(0)
        else:
            steps.append(int(index) if index is not None and index != "*" else
                         (quoted if quoted is not None else key))
        pos = m.end()
    return steps


class _Last(int):
    """`[last]` / `[last-n]`: n places before an array's last element."""


def _at(doc: Any, steps: list) -> Any:
    for step in steps:
        if isinstance(step, _Last):
            step = len(doc) - 1 - int(step) if isinstance(doc, list) else -1
            if step < 0:
                return _MISSING
        if isinstance(step, int):
            if not isinstance(doc, list) or step >= len(doc):
                return _MISSING
            doc = doc[step]
        elif isinstance(doc, dict) and step in doc:
            doc = doc[step]
        else:
            return _MISSING
    return doc


def dumps(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def _load(text: str) -> Any:
    try:
        return json.loads(text)
    except (ValueError, TypeError):
        return _MISSING


def _lookup(convert: Callable[[Any], Any], out: pa.DataType):
    """A handler `f(j, path)` giving convert(value at path) (None: NULL)."""
    def handler(node: exp.Expression, frame: Frame) -> Value:
        args = call_args(node)
        if len(args) != 2:
            raise ExpressionError(f"{_name(node)} takes a JSON document and a path")
        doc = cast_value(frame.eval(args[0]), pa.string())
        path = cast_value(frame.eval(args[1]), pa.string())

        def kernel(docs: Value, path_text: str | None) -> Value:
            steps = _parse_path(path_text) if path_text is not None else None
            if steps is None:
                return map_distinct(docs, lambda _: None, out)

            def one(text: str) -> Any:
                value = _at(_load(text), steps)
                return None if value is _MISSING else convert(value)
            return map_distinct(docs, one, out)
        return map_distinct_params(kernel, doc, [path], out, frame.n)
    return handler


def _as_string(v: Any) -> str | None:
    if v is None:
        return None
    return v if isinstance(v, str) else dumps(v)


def _as_int(bits: int) -> Callable[[Any], int | None]:
    limit = 2 ** (bits - 1)

    def convert(v: Any) -> int | None:
        if isinstance(v, bool) or not isinstance(v, int) or not -limit <= v < limit:
            return None
        return v
    return convert


def _as_double(v: Any) -> float | None:
    return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else None


def _as_bool(v: Any) -> bool | None:
    return v if isinstance(v, bool) else None


def _json_text(v: Any) -> str:
    return dumps(v)


def eval_json_extract(node: exp.Expression, frame: Frame) -> Value:
    """json_extract / jsonb_extract: a JSON value (of a JSON document, or for jsonb_extract),
    else JSON text as a string."""
    args = call_args(node)
    if len(args) < 2:
        raise ExpressionError("json_extract takes a JSON document and one or more paths")
    text = _extract_text(node, frame, args)
    if _name(node).startswith("jsonb") or is_json_type(frame.eval(args[0]).type):
        return json_scalar(text.as_py()) if isinstance(text, pa.Scalar) else as_json(text)
    return text


def _extract_text(node: exp.Expression, frame: Frame, args: list) -> Value:
    if len(args) == 2:
        return _lookup(_json_text, pa.string())(node, frame)
    doc = cast_value(frame.eval(args[0]), pa.string())
    paths = [cast_value(frame.eval(a), pa.string()) for a in args[1:]]

    def kernel(docs: Value, *texts: str | None) -> Value:
        all_steps = [_parse_path(t) if t is not None else None for t in texts]

        def one(text: str) -> str | None:
            loaded = _load(text)
            found = [_at(loaded, s) if s is not None else _MISSING for s in all_steps]
            if all(v is _MISSING for v in found):
                return None
            return dumps([None if v is _MISSING else v for v in found])  # [null,"doris"]
        return map_distinct(docs, one, pa.string())
    return map_distinct_params(kernel, doc, paths, pa.string(), frame.n)


def _unary(fn: Callable[[str], Any], out: pa.DataType, name: str):
    def handler(node: exp.Expression, frame: Frame) -> Value:
        args = call_args(node)
        if len(args) != 1:
            raise ExpressionError(f"{name} takes one argument")
        return map_distinct(cast_value(frame.eval(args[0]), pa.string()), fn, out)
    return handler


def _valid(text: str) -> bool:
    return _load(text) is not _MISSING


def _unquote(text: str) -> str:
    value = _load(text)
    return value if isinstance(value, str) else text


def eval_json_length(node: exp.Expression, frame: Frame) -> Value:
    args = call_args(node)
    if len(args) == 2:
        return _lookup(_length, pa.int32())(node, frame)
    return _unary(lambda t: _length(_load(t)), pa.int32(), "json_length")(node, frame)


def _length(v: Any) -> int | None:
    if v is _MISSING:
        return None
    return len(v) if isinstance(v, (list, dict)) else 1


def _encode(v: Value) -> Value:
    """Each value as JSON text, vectorised: numbers as their text, booleans true/false, NULL
    null, anything else a JSON string (backslash, quote and control characters escaped)."""
    t = v.type
    if pa.types.is_null(t):
        return pa.scalar("null", pa.string()) if isinstance(v, pa.Scalar) else \
            pa.array(["null"] * len(v), pa.string())
    if pa.types.is_boolean(t):
        out = pc.if_else(v, "true", "false")
    elif pa.types.is_integer(t) or pa.types.is_floating(t) or pa.types.is_decimal(t):
        out = pc.cast(v, pa.string())
    else:
        out = cast_value(v, pa.string())
        for raw, escaped in (("\\", "\\\\"), ('"', '\\"'), ("\n", "\\n"), ("\r", "\\r"),
                             ("\t", "\\t")):
            out = pc.replace_substring(out, raw, escaped)
        out = pc.binary_join_element_wise('"', out, '"', "")
    return pc.fill_null(out, "null")


def _constructor(opening: str, closing: str, pairs: bool):
    """json_object (pairs: "k":v) / json_array: one JSON text per row, built by string
    kernels over the encoded arguments."""
    def handler(node: exp.Expression, frame: Frame) -> Value:
        values = [frame.eval(a) for a in call_args(node)]
        if pairs and len(values) % 2:
            raise ExpressionError("json_object takes key, value pairs")
        parts: list = [opening]
        for i, v in enumerate(values):
            if i:
                parts.append(":" if pairs and i % 2 else ",")
            parts.append(_encode(cast_value(v, pa.string()) if pairs and i % 2 == 0 else v))
        parts.append(closing)
        if all(isinstance(p, (str, pa.Scalar)) for p in parts):
            return pa.scalar("".join(p if isinstance(p, str) else p.as_py() for p in parts),
                             pa.string())
        return pc.binary_join_element_wise(*parts, "")
    return handler


def call_args(node: exp.Expression) -> list[exp.Expression]:
    """A call's arguments in order, whatever node sqlglot made of it (json_object's pairs
    are flattened to key, value, ...)."""
    if isinstance(node, exp.Anonymous):
        return list(node.expressions)
    out = []
    for key in type(node).arg_types:
        value = node.args.get(key)
        for item in value if isinstance(value, list) else [value]:
            if isinstance(item, exp.JSONKeyValue):
                out += [item.this, item.expression]
            elif isinstance(item, exp.Expression):
                out.append(item)
    return out


def eval_json_path(node: exp.JSONPath, frame: Frame) -> Value:
    """A path sqlglot parsed (json_extract's argument) as the text Doris reads."""
    return pa.scalar(node.sql(dialect="doris").strip("'"), pa.string())


def _name(node: exp.Expression) -> str:
    return str(node.this).lower() if isinstance(node, exp.Anonymous) else node.sql_name().lower()


HANDLERS = {exp.JSONExtract: eval_json_extract, exp.JSONBExtract: eval_json_extract,
            exp.JSONPath: eval_json_path,
            exp.JSONObject: _constructor("{", "}", True)}
FUNCTIONS = {
    "GET_JSON_STRING": _lookup(_as_string, pa.string()),
    "GET_JSON_INT": _lookup(_as_int(32), pa.int32()),
    "GET_JSON_BIGINT": _lookup(_as_int(64), pa.int64()),
    "GET_JSON_DOUBLE": _lookup(_as_double, pa.float64()),
    "JSON_EXTRACT": eval_json_extract, "JSONB_EXTRACT": eval_json_extract,
    "JSON_EXTRACT_STRING": _lookup(_as_string, pa.string()),
    "JSON_EXTRACT_INT": _lookup(_as_int(32), pa.int32()),
    "JSON_EXTRACT_BIGINT": _lookup(_as_int(64), pa.int64()),
    "JSON_EXTRACT_DOUBLE": _lookup(_as_double, pa.float64()),
    "JSON_EXTRACT_BOOL": _lookup(_as_bool, pa.bool_()),
    "JSON_EXTRACT_ISNULL": _lookup(lambda v: v is None, pa.bool_()),
    "JSON_VALID": _unary(_valid, pa.bool_(), "json_valid"),
    "JSON_UNQUOTE": _unary(_unquote, pa.string(), "json_unquote"),
    "JSON_LENGTH": eval_json_length,
    "JSON_ARRAY": _constructor("[", "]", False),
    "JSON_OBJECT": _constructor("{", "}", True),
}
