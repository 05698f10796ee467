"""MATCH predicates answered by segments' inverted indexes during a scan.

The planner turns a top-level `col MATCH_xxx 'query'` conjunct on a column with an INVERTED
index into a `MatchFilter` on the scan (planner/match_columns.py); the MATCH itself stays in
the Filter above the scan, which evaluates it exactly on the rows storage returns. The scan
operator makes the filters active for the tablet read of its thread (`using`); a segment scan
(segment/reader.py) then asks `segment_rows` for the rows its inverted indexes allow: the
intersection over the filters whose column has the index the tablet schema names, in the file
or in a BUILD INDEX side file; a segment where it is empty is not read at all. Segments
without the index (written before ADD INDEX and not built) are read whole.

Only reads that do not merge rows by key use the filters (Duplicate tables, merge-on-write
Unique tables, pre-aggregated reads of key columns are excluded: `suspended` around a merging
read), since a value's older version may match where its newest does not.
"""

from __future__ import annotations

import contextvars
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Iterator

from pyroaring import BitMap

from storage.segment import filters

if TYPE_CHECKING:
    from storage.segment.column_reader import SegmentIO
    from storage.segment.reader import IndexOptions, SegmentReader


@dataclass(frozen=True)
class MatchFilter:
    """`column kind 'query'`; kind in storage/inverted/match.py KINDS."""

    column: str
    kind: str
    query: str


_ACTIVE: contextvars.ContextVar[tuple] = contextvars.ContextVar("match_filters", default=())


@contextmanager
def using(filters) -> Iterator[None]:
    """Make `filters` active for the segment scans of this thread's block."""
    token = _ACTIVE.set(tuple(filters))
    try:
        yield
    finally:
        _ACTIVE.reset(token)


def suspended():
    """No filter is used inside (a read that merges rows by key)."""
    return using(())


def active() -> tuple:
    return _ACTIVE.get()


def segment_rows(reader: SegmentReader, io: SegmentIO,
                 indexes: IndexOptions | None) -> BitMap | None:
    """Rows the active filters allow in this segment, or None when none applies."""
    matches = active()
    if not matches or indexes is None or not indexes.inverted:
        return None
    allowed = {column: (index_id, side) for column, index_id, side in indexes.inverted}
    answer: BitMap | None = None
    for f in matches:
        if not isinstance(f, MatchFilter) or f.column not in allowed \
                or f.column not in reader.columns:
            continue
        found = reader.inverted_index(f.column, *allowed[f.column])
        if found is None:
            continue
        index, path = found
        rows = filters.answer(reader, io, path, f.column, "inverted",
                              lambda load, f=f, index=index: index.rows(f.kind, f.query, load))
        answer = rows if answer is None else answer & rows
        if not answer:
            break
    return answer
