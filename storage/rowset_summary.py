"""What a scan asks of a tablet's rowsets on every query, kept as loads append rowsets.

A tablet fed by a stream of small loads holds tens to hundreds of rowsets: load slices wait for
compaction (seed 002's skip window keeps the newest rowsets out of cumulative compaction; slice
compactions run once a second). Every query asked of them, in Python, rowset by rowset and
several times over: which hold rows, whether one is a DELETE, whether they overlap, how many
rows in all, whether they are slices or segments. With 600 rowsets in each of 8 tablets these
walks were ~60% of an aggregate query's time. A `RowsetSummary` answers them at once:

    RowsetSummary.of(rowsets)   one walk over a list of rowsets (version order)
    summary.plus(rowset)        the summary of the list with `rowset` appended

The tablet keeps the summary of its published list with the list (storage/tablet.py): a
publish that appends a rowset, the common case, extends it by one; any other change (a
compaction's swap, a publish below newer versions) walks the new list once. A snapshot of the
latest version shares it (`TabletSnapshot.summary`); an older snapshot walks its own rowsets.
"""

from __future__ import annotations

from dataclasses import dataclass

from storage.rowset import RowsetMeta


@dataclass(frozen=True)
class RowsetSummary:
    data: tuple[RowsetMeta, ...] = ()  # the rowsets holding rows, in version order
    rows: int = 0                       # rows in all
    deletes: int = 0                    # DELETE rowsets (delete predicates)
    overlapping: int = 0                # data rowsets whose segments may repeat keys
    slices: int = 0                     # data rowsets that are slices of a load file
    segmented: int = 0                  # data rowsets of segment files only
    largest_segmented: int = 0          # rows of the largest of those

    @staticmethod
    def of(rowsets) -> RowsetSummary:
        data = []
        rows = deletes = overlapping = slices = segmented = largest = 0
        for r in rowsets:
            if r.delete_predicate is not None:
                deletes += 1
            n = r.num_rows
            if not n:
                continue
            data.append(r)
            rows += n
            overlapping += r.overlapping
            if r.load_file is not None:
                slices += not r.segments
            elif r.segments:
                segmented += 1
                largest = max(largest, n)
        return RowsetSummary(tuple(data), rows, deletes, overlapping, slices, segmented, largest)

    def plus(self, r: RowsetMeta) -> RowsetSummary:
        deletes = self.deletes + (r.delete_predicate is not None)
        n = r.num_rows
        if not n:
            return RowsetSummary(self.data, self.rows, deletes, self.overlapping, self.slices,
                                 self.segmented, self.largest_segmented)
        segmented = r.load_file is None and bool(r.segments)
        return RowsetSummary(
            self.data + (r,), self.rows + n, deletes, self.overlapping + r.overlapping,
            self.slices + (r.load_file is not None and not r.segments),
            self.segmented + segmented,
            max(self.largest_segmented, n) if segmented else self.largest_segmented)
