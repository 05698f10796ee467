"""Doris's functions over JSONB values (JSON columns or JSON text), beside json_functions.py.

    json_exists_path(j, path) / jsonb_exists_path     the path exists in the document (BOOLEAN)
    json_type(j, path) / jsonb_type                   object, array, null, bool, int, bigint,
                                                      largeint, double or string; NULL if the
                                                      path does not exist
    json_contains(j, candidate[, path])               the candidate document is contained in j
                                                      (at path): MySQL's containment rules
    json_quote(s)                                     s as a JSON string literal
    json_parse / jsonb_parse(s)                       s as a JSON value; text that is not JSON
                                                      is an error
    jsonb_parse_error_to_null(s)                      ... NULL instead
    jsonb_parse_error_to_value(s, default)            ... the default instead
    jsonb_extract_string / _int / _bigint / _double / _bool / _isnull, jsonb_valid
                                                      the json_* functions under Doris's jsonb
                                                      names (the same implementations)

As in json_functions.py, documents are parsed once per distinct text (`vectors.map_distinct`).
"""

from __future__ import annotations

from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
from sqlglot import exp

from executor.expressions import json_functions as jf
from executor.expressions.casts import cast_value
from executor.expressions.context import Frame, Value
from executor.expressions.errors import ExpressionError
from executor.expressions.json_text import INVALID, dumps, load, parse_json_text
from executor.expressions.vectors import map_distinct, map_distinct_params
from storage.types import JSON_ARROW


def _type_name(v: Any) -> str:
    if isinstance(v, dict):
        return "object"
    if isinstance(v, list):
        return "array"
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "bool"
    if isinstance(v, int):
        return "int" if -2 ** 31 <= v < 2 ** 31 else "bigint" if -2 ** 63 <= v < 2 ** 63 \
            else "largeint"
    if isinstance(v, float):
        return "double"
    return "string"


def _path_function(fn, out: pa.DataType, missing: Any):
    """A handler `f(j, path)` giving fn(value at path), or `missing` where the path is absent
    (NULL documents and paths give NULL)."""
    def handler(node: exp.Expression, frame: Frame) -> Value:
        args = jf.call_args(node)
        if len(args) != 2:
            raise ExpressionError(f"{jf._name(node)} takes a JSON document and a path")
        doc = cast_value(frame.eval(args[0]), pa.string())
        path = cast_value(frame.eval(args[1]), pa.string())

        def kernel(docs: Value, path_text: str | None) -> Value:
            steps = jf._parse_path(path_text) if path_text is not None else None
            if steps is None:
                if path_text is not None:
                    raise ExpressionError(f"Json path error: Invalid Json Path for value: "
                                          f"{path_text}")
                return map_distinct(docs, lambda _: None, out)

            def one(text: str) -> Any:
                document = load(text)
                if document is INVALID:
                    return None
                value = jf._at(document, steps)
                return missing if value is jf._MISSING else fn(value)
            return map_distinct(docs, one, out)
        return map_distinct_params(kernel, doc, [path], out, frame.n)
    return handler


def _contains(target: Any, candidate: Any) -> bool:
    """MySQL's JSON_CONTAINS: objects by key subsets, arrays by every candidate element
    being contained in some element, scalars by equality."""
    if isinstance(target, dict):
        return isinstance(candidate, dict) and all(
            k in target and _contains(target[k], v) for k, v in candidate.items())
    if isinstance(target, list):
        if isinstance(candidate, list):
            return all(any(_contains(t, c) for t in target) for c in candidate)
        return any(_contains(t, candidate) for t in target)
    return type(target) is type(candidate) and target == candidate or \
        _is_number(target) and _is_number(candidate) and target == candidate


def _is_number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def eval_json_contains(node: exp.Expression, frame: Frame) -> Value:
    args = jf.call_args(node)
    if len(args) not in (2, 3):
        raise ExpressionError("json_contains takes a JSON document, a candidate and a path")
    doc = cast_value(frame.eval(args[0]), pa.string())
    params = [cast_value(frame.eval(a), pa.string()) for a in args[1:]]

    def kernel(docs: Value, candidate_text: str | None, path_text: str | None = "$") -> Value:
        candidate = load(candidate_text) if candidate_text is not None else INVALID
        steps = jf._parse_path(path_text) if path_text is not None else None
        if candidate is INVALID or steps is None:
            return map_distinct(docs, lambda _: None, pa.bool_())

        def one(text: str) -> bool | None:
            document = load(text)
            if document is INVALID:
                return None
            value = jf._at(document, steps)
            return None if value is jf._MISSING else _contains(value, candidate)
        return map_distinct(docs, one, pa.bool_())
    return map_distinct_params(kernel, doc, params, pa.bool_(), frame.n)


def eval_json_quote(node: exp.Expression, frame: Frame) -> Value:
    args = jf.call_args(node)
    if len(args) != 1:
        raise ExpressionError("json_quote takes one argument")
    return map_distinct(cast_value(frame.eval(args[0]), pa.string()), dumps, pa.string())


def _parse(on_error: str):
    """jsonb_parse (error), jsonb_parse_error_to_null (NULL), _error_to_value (the default)."""
    def handler(node: exp.Expression, frame: Frame) -> Value:
        args = jf.call_args(node)
        if len(args) != (2 if on_error == "value" else 1):
            raise ExpressionError(f"{jf._name(node)}: wrong number of arguments")
        texts = cast_value(frame.eval(args[0]), pa.string())
        parsed, bad = parse_json_text(texts)
        if on_error == "error" and (bad if isinstance(bad, bool) else bad.any()):
            first = texts.as_py() if isinstance(texts, pa.Scalar) else \
                texts[int(bad.nonzero()[0][0])].as_py()
            raise ExpressionError(f"json parse error: Invalid document for value: {first}")
        if on_error == "value":
            default = cast_value(frame.eval(args[1]), JSON_ARROW)
            if isinstance(parsed, pa.Scalar):
                return default if bad else parsed
            fallback = default if isinstance(default, pa.Array) else \
                pa.array([default.value.as_py()] * len(parsed), pa.string())
            texts_out = pc.if_else(pa.array(bad), jf_storage(fallback), jf_storage(parsed))
            return cast_value(texts_out, JSON_ARROW)
        return parsed
    return handler


def jf_storage(v: pa.Array) -> pa.Array:
    return v.storage if isinstance(v, pa.ExtensionArray) else v


FUNCTIONS = {
    "JSON_EXISTS_PATH": _path_function(lambda _: True, pa.bool_(), False),
    "JSONB_EXISTS_PATH": _path_function(lambda _: True, pa.bool_(), False),
    "JSON_TYPE": _path_function(_type_name, pa.string(), None),
    "JSONB_TYPE": _path_function(_type_name, pa.string(), None),
    "JSON_CONTAINS": eval_json_contains, "JSONB_CONTAINS": eval_json_contains,
    "JSON_QUOTE": eval_json_quote,
    "JSON_PARSE": _parse("error"), "JSONB_PARSE": _parse("error"),
    "JSON_PARSE_ERROR_TO_NULL": _parse("null"), "JSONB_PARSE_ERROR_TO_NULL": _parse("null"),
    "JSON_PARSE_ERROR_TO_VALUE": _parse("value"), "JSONB_PARSE_ERROR_TO_VALUE": _parse("value"),
    **{f"JSONB_{name[5:]}": jf.FUNCTIONS[name] for name in (
        "JSON_EXTRACT_STRING", "JSON_EXTRACT_INT", "JSON_EXTRACT_BIGINT", "JSON_EXTRACT_DOUBLE",
        "JSON_EXTRACT_BOOL", "JSON_EXTRACT_ISNULL", "JSON_VALID")},
}
HANDLERS = {exp.JSONType: FUNCTIONS["JSON_TYPE"]}
