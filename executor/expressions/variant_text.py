"""VARIANT values: their canonical text, and sub-values (`v['a']['b']`, element_at(v, 'a')).

Doris 2.1 stores a VARIANT column as sub-columns, one per JSON path, and rebuilds a value from
them when it prints one; minidoris keeps each value's text (in Arrow's JSON extension type,
like a JSON column) and extracts sub-values when read. The text is written in the form Doris
prints a rebuilt value (regression-test/data/variant_p0/load.out, ban_variant_orderby.out):

- object keys sorted (byte order), members whose value is null left out (`{"c":456,"e":7.1}`);
- booleans as 1 / 0 (Doris's sub-column type for them is UInt8: `[false, true]` -> `[0,1]`);
- a double with an integral value without its fraction (`5.0` -> `5`);
- text that is not a JSON document is a string value (`'hello'` -> `"hello"`); a top-level
  JSON `null` is SQL NULL.

A sub-value prints as Doris prints a sub-column: a string without its quotes (`hello`), a
number, array or object as its JSON text, and NULL where the path does not exist
(element_function.out). It is returned as a string; the comparisons, arithmetic and casts
over strings then give Doris's implicit casts of a sub-column (compared with a number it is
read as a number).

Each distinct text is parsed once (`vectors.map_distinct`), never each row.
"""

from __future__ import annotations

import json
from typing import Any

import pyarrow as pa

from executor.expressions.context import Value
from executor.expressions.json_text import INVALID, load
from executor.expressions.vectors import map_distinct
from storage.types import JSON_ARROW, as_json, is_json_type, json_storage

_EXACT_FLOAT = 1e15  # doubles below this print as integers when integral (Doris: 5.0 -> 5)


def _canonical(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _canonical(value[k]) for k in sorted(value) if value[k] is not None}
    if isinstance(value, list):
        return [_canonical(x) for x in value]
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, float) and value.is_integer() and abs(value) < _EXACT_FLOAT:
        return int(value)
    return value


def _dumps(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def canonical_text(text: str) -> str | None:
    """The canonical text of one input text (NULL for a JSON `null`)."""
    value = load(text)
    if value is INVALID:
        value = text  # not a JSON document: a string value
    return None if value is None else _dumps(_canonical(value))


def to_variant(values: Value) -> Value:
    """Any values (text, JSON, numbers, ...) -> VARIANT values (JSON extension type)."""
    if isinstance(values, pa.Scalar):
        if not values.is_valid:
            return pa.scalar(None, JSON_ARROW)
        text = values.value.as_py() if is_json_type(values.type) else _scalar_text(values)
        return pa.scalar(canonical_text(text), JSON_ARROW)
    if isinstance(values, pa.ChunkedArray):
        values = values.combine_chunks()
    if is_json_type(values.type):
        texts = json_storage(values)
    elif pa.types.is_string(values.type) or pa.types.is_large_string(values.type):
        texts = values.cast(pa.string())
    else:  # numbers, booleans, dates: their JSON text (dates as strings)
        texts = map_distinct(values, lambda x: _dumps(x if isinstance(x, (int, float, bool))
                                                      else str(x)), pa.string())
    return as_json(map_distinct(texts, canonical_text, pa.string()))


def _scalar_text(s: pa.Scalar) -> str:
    x = s.as_py()
    if isinstance(x, str):
        return x
    return _dumps(x if isinstance(x, (int, float, bool)) else str(x))


def _element(keys: tuple) -> Any:
    def extract(text: str) -> str | None:
        cur = json.loads(text)
        for key in keys:
            if not isinstance(cur, dict) or not isinstance(key, str) or key not in cur:
                return None  # Doris 2.1 reads object paths only: a missing one is NULL
            cur = cur[key]
        if cur is None:
            return None
        return cur if isinstance(cur, str) else _dumps(cur)
    return extract


def variant_element(values: Value, keys: tuple) -> Value:
    """The sub-value at `keys` of each VARIANT value, as Doris prints it (module docstring)."""
    if isinstance(values, pa.Scalar):
        if not values.is_valid:
            return pa.scalar(None, pa.string())
        return pa.scalar(_element(keys)(values.value.as_py()), pa.string())
    if isinstance(values, pa.ChunkedArray):
        values = values.combine_chunks()
    return map_distinct(json_storage(values), _element(keys), pa.string())


def constant_keys(keys: list[Value]) -> tuple | None:
    """The path of `v[k1][k2]...` when every key is a constant (else None)."""
    out = []
    for k in keys:
        if not isinstance(k, pa.Scalar) or not k.is_valid:
            return None
        out.append(k.as_py())
    return tuple(out)

