"""Key ranges: which predicates the short key index can answer, as encoded key bounds.

Owns the translation of predicates on the leading short key columns into scan key ranges (Doris
`OlapScanKeys`): equality (`=`, `IN`, `IS NULL`) on a prefix of the short key columns, then at
most one range (`<`, `<=`, `>`, `>=`) on the next column. `IN` lists expand into one range per
combination while the product stays within MAX_SCAN_KEYS (Doris `max_scan_key_num`, 48); a
column that would exceed it ends the prefix. Only values exactly representable in the column
type take part. On a string column (cut to its prefix width) range bounds are made inclusive:
the cut key of a row that satisfies `> 'abc'` may equal the cut of 'abc'.

A range is [first row >= / > lower, first row >= / > upper): see short_key.ShortKeyIndex.
All ranges share one form (the equality prefixes differ, the range column's bounds do not), so
their bounds are encoded together, as arrays of keys.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

from storage.predicate import PreparedPredicate
import numpy as np

from storage.segment.short_key import encode_bounds, encode_prefixes, fill_bounds
from storage.types import DataType

MAX_SCAN_KEYS = 48


@dataclass
class KeyRanges:
    """Ranges i = [first row (> if lower_strict else >=) lower[i],
                   first row (> if upper_strict else >=) upper[i])."""

    lower: np.ndarray  # S{W} encoded keys, one per range
    lower_strict: bool
    upper: np.ndarray
    upper_strict: bool

    def __len__(self) -> int:
        return len(self.lower)


@dataclass
class _Range:
    lower: object = None
    lower_strict: bool = False
    upper: object = None
    upper_strict: bool = False
    has_lower: bool = False
    has_upper: bool = False


def key_ranges(predicates: list[PreparedPredicate], types: list[DataType], names: list[str],
               widths: list[int], total_width: int) -> KeyRanges | None:
    """Key ranges implied by the predicates; None if they do not restrict the short key."""
    prefixes: list[tuple] = [()]
    rng: _Range | None = None
    for i, (name, dtype) in enumerate(zip(names, types)):
        preds = [p for p in predicates if p.column == name and p.key_values is not None
                 or p.column == name and p.op == "is_null"]
        equal = _equal_values(preds)
        if equal is not None:
            if not equal:  # contradictory equalities: no row can match
                none = np.zeros(0, dtype=f"S{total_width}")
                return KeyRanges(none, False, none, False)
            if len(prefixes) * len(equal) > MAX_SCAN_KEYS:
                break
            prefixes = [p + (v,) for p, v in itertools.product(prefixes, equal)]
            continue
        rng = _range(preds, dtype.is_string)
        break
    if prefixes == [()] and rng is None:
        return None
    return _build(prefixes, rng, types, widths, total_width)


def _equal_values(preds: list[PreparedPredicate]) -> list | None:
    """Sorted values (None = NULL, first) the column must equal, or None if unconstrained."""
    allowed: set | None = None
    for p in preds:
        if p.op == "in" and p.value_set is not None and len(p.value_set) > MAX_SCAN_KEYS:
            continue  # too many keys to scan one by one (a runtime filter's set): unconstrained
        if p.op == "=" or p.op == "in":
            values = set(p.key_values)
        elif p.op == "is_null":
            values = {None}
        else:
            continue
        allowed = values if allowed is None else allowed & values
    if allowed is None:
        return None
    return sorted(allowed, key=lambda v: (v is not None, v if v is not None else 0))


def _range(preds: list[PreparedPredicate], inclusive_only: bool) -> _Range | None:
    rng = _Range()
    for p in preds:
        if p.op not in ("<", "<=", ">", ">="):
            continue
        value = p.key_values[0]
        strict = p.op in ("<", ">") and not inclusive_only
        if p.op in (">", ">="):
            if not rng.has_lower or value > rng.lower or (value == rng.lower and strict):
                rng.lower, rng.lower_strict, rng.has_lower = value, strict, True
        elif not rng.has_upper or value < rng.upper or (value == rng.upper and strict):
            rng.upper, rng.upper_strict, rng.has_upper = value, strict, True
    return rng if rng.has_lower or rng.has_upper else None


def _build(prefixes: list[tuple], rng: _Range | None, types: list[DataType], widths: list[int],
           total_width: int) -> KeyRanges:
    columns = [list(values) for values in zip(*prefixes)]  # the prefix values, per column
    n = len(prefixes)
    shared: list = []  # the prefixes alone, encoded once for every bound that uses them

    def bound(with_value, fill: int, not_null_next: bool = False) -> np.ndarray:
        # (no column at all only for the empty prefix alone: one bound, as encode_bounds gives)
        if with_value is _NONE:
            if not shared:
                shared.append(encode_prefixes(columns, types, widths))
            return fill_bounds(shared[0], total_width, fill, not_null_next)
        return encode_bounds(columns + [[with_value] * n], types, widths, total_width, fill,
                             not_null_next)

    if rng is not None and rng.has_lower:
        # >= v: first row >= (prefix, v, 00..); > v: first row > (prefix, v, FF..)
        lower = bound(rng.lower, 0xFF if rng.lower_strict else 0x00)
        lower_strict = rng.lower_strict
    elif rng is not None:
        # only an upper bound: a comparison is never true for NULL, start after the NULLs
        lower, lower_strict = bound(_NONE, 0x00, not_null_next=True), False
    else:
        lower, lower_strict = bound(_NONE, 0x00), False
    if rng is not None and rng.has_upper:
        # <= v: first row > (prefix, v, FF..); < v: first row >= (prefix, v, 00..)
        upper = bound(rng.upper, 0x00 if rng.upper_strict else 0xFF)
        upper_strict = not rng.upper_strict
    else:
        upper, upper_strict = bound(_NONE, 0xFF), True
    return KeyRanges(lower, lower_strict, upper, upper_strict)


_NONE = object()  # no range value: the bound is the prefix alone
