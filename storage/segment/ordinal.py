"""Ordinal index: where each data page of a column lives and which rows it holds (seed 003 §3).

Owns `PageLocations` and the ordinal index page body. One entry per data page:

    body := u32 count | u32 0
            | count x u64 first_row      (row id of the page's first row; strictly increasing)
            | count x u64 offset         (file offset of the page)
            | count x u32 size           (page size, header included)

As seed 003 §3.1 says, a column with a single data page has no ordinal index page: its footer
column meta holds that page's (offset, size) directly (`data_page`), and its first row is 0.
Page i holds rows [first_row[i], first_row[i+1]) (the last page ends at the segment's num_rows).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np
import pyarrow as pa


@dataclass
class PageLocations:
    first_rows: np.ndarray  # int64
    offsets: np.ndarray     # int64
    sizes: np.ndarray       # int64
    num_rows: int

    @property
    def num_pages(self) -> int:
        return len(self.first_rows)

    @cached_property
    def ends(self) -> np.ndarray:  # computed once per reader (locations are immutable)
        return np.append(self.first_rows[1:], self.num_rows).astype(np.int64)

    @cached_property
    def first_rows_list(self) -> list[int]:
        """`first_rows` as Python ints, for bisecting a single row without numpy calls."""
        return self.first_rows.tolist()

    @cached_property
    def ends_list(self) -> list[int]:
        return self.ends.tolist()

    def page_of_rows(self, rows: np.ndarray) -> np.ndarray:
        """Index of the page holding each (sorted or not) row id."""
        return np.searchsorted(self.first_rows, rows, side="right") - 1

    def validate(self) -> str | None:
        """A description of what is inconsistent, or None."""
        if self.num_pages == 0:
            return "column has no pages" if self.num_rows else None
        if self.first_rows[0] != 0 or np.any(np.diff(self.first_rows) <= 0):
            return "page first rows are not increasing from 0"
        if self.first_rows[-1] >= self.num_rows:
            return "a page starts after the last row"
        return None


def encode(locations: PageLocations) -> bytes:
    count = locations.num_pages
    return b"".join((np.array([count, 0], dtype="<u4").tobytes(),
                     locations.first_rows.astype("<u8").tobytes(),
                     locations.offsets.astype("<u8").tobytes(),
                     locations.sizes.astype("<u4").tobytes()))


def decode(body: pa.Buffer, num_rows: int) -> PageLocations:
    count = int(np.frombuffer(body, dtype="<u4", count=1)[0])
    if body.size != 8 + 20 * count:
        raise ValueError(f"ordinal index of {count} entries cannot be {body.size} bytes")
    first = np.frombuffer(body, dtype="<u8", count=count, offset=8).astype(np.int64)
    offsets = np.frombuffer(body, dtype="<u8", count=count, offset=8 + 8 * count).astype(np.int64)
    sizes = np.frombuffer(body, dtype="<u4", count=count, offset=8 + 16 * count).astype(np.int64)
    return PageLocations(first, offsets, sizes, num_rows)


def single(offset: int, size: int, num_rows: int) -> PageLocations:
    """The locations of a column whose only page the footer points at."""
    return PageLocations(np.zeros(1, np.int64), np.array([offset], np.int64),
                         np.array([size], np.int64), num_rows)
