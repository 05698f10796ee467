"""The LATERAL VIEW table functions over object values: explode_bitmap and explode_json_object.

    explode_bitmap(b)          one BIGINT row per id of the bitmap, ascending (a NULL bitmap
                               or an empty one: no rows; ids past 2^63 - 1 wrap negative)
    explode_json_object(j)     two columns per member of a JSON object: its key (VARCHAR) and
                               its value (JSON), in the written order; NULL, text that is not
                               JSON, a JSON value that is not an object, or `{}`: no rows

Each gives, per input row, one list (of ids; of {k, v} structs) that the table function
operator unnests (executor/operators/table_function.py). A bitmap is decoded and a JSON text
parsed once per distinct value (`map_distinct`): a value is one object, with no Arrow kernel.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from executor.expressions import json_text
from executor.expressions.errors import ExpressionError
from executor.expressions.vectors import map_distinct, to_array
from storage.objects import decode_bitmap
from storage.types import JSON_ARROW, is_json_type, json_storage

BITMAP_LIST = pa.list_(pa.int64())
ENTRY = pa.struct([("k", pa.string()), ("v", pa.string())])
JSON_OBJECT_LIST = pa.list_(ENTRY)


def _ids(value: str) -> list[int]:
    try:
        bm = decode_bitmap(value)
        # ids are unsigned 64-bit; Doris writes them into a BIGINT column as they are
        # (ids of 2^63 and above come out negative)
        return np.fromiter(bm, dtype=np.uint64, count=len(bm)).view(np.int64).tolist()
    except ValueError:  # not a serialized bitmap: a VARCHAR passed for the BITMAP
        raise ExpressionError(_NOT_BITMAP) from None


_NOT_BITMAP = "Can not find the compatibility function signature: explode_bitmap(VARCHAR)"


def bitmap_lists(bitmaps: pa.Array) -> pa.Array:
    """Each bitmap's ids as a list (NULL stays NULL: no rows)."""
    if pa.types.is_null(bitmaps.type):
        return pa.nulls(len(bitmaps), BITMAP_LIST)
    if not pa.types.is_string(bitmaps.type):
        raise ExpressionError(_NOT_BITMAP.replace("VARCHAR", _type_name(bitmaps.type)))
    return to_array(map_distinct(bitmaps, _ids, BITMAP_LIST), len(bitmaps))


def _type_name(t: pa.DataType) -> str:
    return "JSON" if is_json_type(t) else str(t).upper()


def _members(text: str) -> list[dict] | None:
    doc = json_text.load(text)
    if not isinstance(doc, dict):
        return None
    return [{"k": k, "v": json_text.dumps(v)} for k, v in doc.items()]


def json_object_lists(docs: pa.Array) -> pa.Array:
    """Each JSON object's members as a list of {k, v} (v: the member's JSON text)."""
    if pa.types.is_null(docs.type):
        return pa.nulls(len(docs), JSON_OBJECT_LIST)
    texts = json_storage(docs)
    if not pa.types.is_string(texts.type):
        texts = texts.cast(pa.string())
    return to_array(map_distinct(texts, _members, JSON_OBJECT_LIST), len(docs))


def json_object_columns(entries: pa.Array) -> list[pa.Array]:
    """The unnested {k, v} entries as the view's two columns: k VARCHAR, v JSON."""
    k, v = entries.flatten()
    return [k, pa.ExtensionArray.from_storage(JSON_ARROW, v)]


LISTS = {"explode_bitmap": bitmap_lists, "explode_json_object": json_object_lists}
