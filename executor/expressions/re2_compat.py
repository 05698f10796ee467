"""RE2 patterns (Doris's regexp functions) for Python's `re`, where the two differ in syntax:
POSIX classes inside brackets (`[[:lower:]]`, `[[:digit:]]`, ...) and the Unicode script and
category classes `\\p{Han}`, `\\p{L}`, `\\p{N}` (and their `\\P{...}` negations), which `re`
rejects or reads differently. Anything else is passed through; `compile_re2` caches.
"""

from __future__ import annotations

import re
from functools import lru_cache

_POSIX = {
    "alpha": "a-zA-Z", "digit": "0-9", "alnum": "a-zA-Z0-9", "lower": "a-z", "upper": "A-Z",
    "space": r" \t\r\n\v\f", "blank": r" \t", "punct": r"!-/:-@\[-`{-~", "xdigit": "0-9A-Fa-f",
    "word": r"\w", "cntrl": r"\x00-\x1f\x7f", "print": r" -~", "graph": r"!-~",
}
_HAN = r"\u2e80-\u2fdf\u3005\u3007\u3021-\u3029\u3038-\u303b\u3400-\u4dbf\u4e00-\u9fff" \
    r"\uf900-\ufaff"
_UNICODE = {"Han": (_HAN, None), "L": (None, r"[^\W\d_]"), "N": (None, r"\d"),
            "Nd": (None, r"\d")}
_PROPERTY = re.compile(r"\\([pP])\{(\w+)\}")
_POSIX_CLASS = re.compile(r"\[:(\w+):\]")


def _property(m: re.Match) -> str:
    negated, name = m.group(1) == "P", m.group(2)
    ranges, whole = _UNICODE.get(name, (None, None))
    if ranges is not None:
        return f"[{'^' if negated else ''}{ranges}]"
    if whole is not None:
        return f"(?:(?!{whole}).)" if negated else f"(?:{whole})"
    return m.group(0)


def translate(pattern: str) -> str:
    out = _POSIX_CLASS.sub(lambda m: _POSIX.get(m.group(1), m.group(0)), pattern)
    return _PROPERTY.sub(_property, out)


@lru_cache(maxsize=256)
def compile_re2(pattern: str) -> re.Pattern:
    return re.compile(translate(pattern))
