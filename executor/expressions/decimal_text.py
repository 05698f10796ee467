"""DECIMAL values as text, always positional: `0.0000000000`, `0.0000001000`.

Arrow's decimal -> string cast writes a value whose adjusted exponent is below -6 in
scientific notation (`0E-10`, `1.000E-7`); Doris (and MySQL) never do. For a scale of 7 or
more the text is built from the unscaled integer instead (the same bytes read as scale 0, whose
text has no exponent): zero-padded to scale + 1 digits, the point put before the last `scale`.
"""

from __future__ import annotations

import pyarrow as pa
import pyarrow.compute as pc

_EXPONENT_FROM_SCALE = 7  # below, Arrow's text is positional for every value


def decimal_text(arr: pa.Array) -> pa.Array:
    t = arr.type
    if t.scale < _EXPONENT_FROM_SCALE:
        return arr.cast(pa.string())
    unscaled_type = (pa.decimal128 if pa.types.is_decimal128(t) else pa.decimal256)(t.precision, 0)
    unscaled = pa.Array.from_buffers(unscaled_type, len(arr), arr.buffers(), arr.null_count,
                                     arr.offset)
    digits = unscaled.cast(pa.string())
    negative = pc.starts_with(digits, "-")
    magnitude = pc.utf8_lpad(pc.utf8_ltrim(digits, "-"), width=t.scale + 1, padding="0")
    whole = pc.utf8_slice_codeunits(magnitude, 0, -t.scale)
    fraction = pc.utf8_slice_codeunits(magnitude, -t.scale)
    text = pc.binary_join_element_wise(whole, fraction, ".")
    return pc.if_else(negative, pc.binary_join_element_wise("-", text, ""), text)
