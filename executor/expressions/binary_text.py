"""Byte strings among the project's UTF-8 strings.

Doris's VARCHAR holds any bytes; here a VARCHAR is an Arrow (UTF-8) string, so functions whose
results are arbitrary bytes (aes_encrypt, unhex, from_base64) return Arrow binary, as a string
array whenever every value happens to be UTF-8 (`text_or_bytes`). A binary value reaching a
string function is read as text with invalid sequences replaced (`binary_to_text`, used by
`casts.cast_value`); the wire sends its bytes as they are (`server/protocol/format.py`).
"""

from __future__ import annotations

import pyarrow as pa
import pyarrow.compute as pc

from executor.expressions.context import Value

STRING = pa.string()


def is_binary(t: pa.DataType) -> bool:
    return pa.types.is_binary(t) or pa.types.is_large_binary(t)


def text_or_bytes(v: Value) -> Value:
    """A binary value as a string when all of it is valid UTF-8, else unchanged."""
    try:
        return v.cast(STRING)
    except (pa.ArrowInvalid, UnicodeDecodeError):
        return v


def binary_to_text(v: Value) -> Value:
    """Binary as a string, invalid UTF-8 replaced by U+FFFD (once per distinct value)."""
    if not is_binary(v.type):
        return v
    try:
        return v.cast(STRING)
    except (pa.ArrowInvalid, UnicodeDecodeError):
        pass
    if isinstance(v, pa.Scalar):
        return pa.scalar(None if not v.is_valid else v.as_py().decode("utf-8", "replace"),
                         STRING)
    encoded = pc.dictionary_encode(v)
    texts = pa.array([b.decode("utf-8", "replace") for b in encoded.dictionary.to_pylist()],
                     STRING)
    return pc.take(texts, encoded.indices)
