"""JSON text <-> JSON values: parsing, normalizing and checking the text of JSON columns.

A JSON value (Doris's JSONB) is held as its normalized text in Arrow's JSON extension type
(`storage.types.JSON_ARROW`): compact (no spaces), object keys in the order written (a
repeated key keeps its last value), numbers as written (big integers exact), strings with
non-ASCII characters as they are. That is the text Doris prints for a JSONB value
(regression-test/data/jsonb_p0/test_jsonb_load_and_function.out: `{"k1":"v31","k2":300}`,
`[null,true,false,100,6.18,"abc"]`, `18446744073709551615`).

Text that is not one JSON document (`''`, `abc`, `{"a":1`, `NaN`) is invalid: a load filters
its row, CAST and the non-strict parse functions give NULL.

No Arrow kernel parses JSON, so each distinct text is parsed once with Python's json module
(`vectors.map_distinct`), never each row.
"""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from executor.expressions.context import Value
from executor.expressions.vectors import map_distinct
from storage.types import JSON_ARROW, as_json, is_json_type, json_storage

INVALID = object()  # what `load` gives for text that is not JSON


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")  # NaN / Infinity: Python accepts them, JSON does not


def load(text: str) -> Any:
    """The document `text` holds, or INVALID."""
    try:
        return json.loads(text, parse_constant=_no_constant)
    except (ValueError, TypeError, RecursionError):
        return INVALID


def dumps(value: Any) -> str:
    """A document's normalized text."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def normalize(text: str) -> str | None:
    value = load(text)
    return None if value is INVALID else dumps(value)


def parse_json_text(texts: Value) -> tuple[Value, np.ndarray | bool]:
    """Strings (or JSON values) -> JSON values, and which non-NULL texts were invalid (those
    are NULL in the result). A scalar gives a scalar and a bool."""
    if is_json_type(texts.type):
        return texts, (np.zeros(len(texts), bool) if isinstance(texts, pa.Array) else False)
    if isinstance(texts, pa.Scalar):
        out = None if not texts.is_valid else normalize(str(texts.as_py()))
        return pa.scalar(out, JSON_ARROW) if out is not None else pa.scalar(None, JSON_ARROW), \
            texts.is_valid and out is None
    if not pa.types.is_string(texts.type):
        texts = pc.cast(texts, pa.string())
    normalized = map_distinct(texts, normalize, pa.string())
    bad = np.asarray(pc.and_(pc.is_valid(texts), pc.is_null(normalized))
                     .to_numpy(zero_copy_only=False), dtype=bool)
    return as_json(normalized), bad


def json_texts(v: Value) -> Value:
    """The texts under JSON values (string); strings pass through."""
    if not is_json_type(v.type):
        return v
    if isinstance(v, pa.Scalar):
        return pa.scalar(v.value.as_py() if v.is_valid else None, pa.string())
    return json_storage(v)


def json_scalar(text: str | None) -> pa.Scalar:
    return pa.scalar(text, JSON_ARROW)
