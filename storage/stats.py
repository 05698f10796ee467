"""Scan counters: what a storage read did, named after Doris's OLAP scan profile.

Owns `ScanStats`. One instance per scan (or per fragment instance); `merge` adds another's
counters. `profile()` gives the counters under their Doris-style names, as PROFILE output and
tests read them:

    SegmentsTotal          NumSegmentTotal      segments considered by the scan
    SegmentsRead           (Total - Filtered)   segments whose rows were read at all
    SegmentsFiltered       NumSegmentFiltered   segments dropped whole by their segment zone map
    PagesTotal             TotalPagesNum        data pages of the needed columns in segments read
    PagesRead                                   data pages decoded
    PagesZoneMapFiltered                        pages of predicate columns dropped by zone maps
    RowsTotal                                   rows in all segments considered
    RowsShortKeyFiltered   RowsKeyRangeFiltered rows outside the short key index's key ranges
    RowsZoneMapFiltered    RowsStatsFiltered    further rows dropped by zone maps (page or
                                                segment level)
    RowsRead               RawRowsRead          rows decoded for predicate evaluation / output
    RowsConditionsFiltered RowsVectorPredFiltered  decoded rows that failed the predicates
    RowsMerged                                  rows folded away by merge-on-read (AGG/UNIQUE)
    RowsValueFiltered                           merged rows failing value-column predicates
    RowsReturned           RowsReturned         rows handed back to the caller
    BytesRead              CompressedBytesRead  bytes read from segment files (pages + indexes)
    UncompressedBytesRead  UncompressedBytesRead data page bytes after decompression
    RowsetsRead                                 rowsets in the snapshot that was read

Invariant per segment read: RowsTotal = RowsShortKeyFiltered + RowsZoneMapFiltered + RowsRead,
and RowsRead = RowsConditionsFiltered + rows the segment returned.
"""

from __future__ import annotations

from dataclasses import dataclass, fields

PROFILE_NAMES = {
    "segments_total": "SegmentsTotal", "segments_read": "SegmentsRead",
    "segments_filtered": "SegmentsFiltered", "pages_total": "PagesTotal",
    "pages_read": "PagesRead", "pages_zone_map_filtered": "PagesZoneMapFiltered",
    "rows_total": "RowsTotal", "rows_short_key_filtered": "RowsShortKeyFiltered",
    "rows_zone_map_filtered": "RowsZoneMapFiltered", "rows_read": "RowsRead",
    "rows_conditions_filtered": "RowsConditionsFiltered", "rows_merged": "RowsMerged",
    "rows_value_filtered": "RowsValueFiltered", "rows_returned": "RowsReturned",
    "bytes_read": "BytesRead", "uncompressed_bytes_read": "UncompressedBytesRead",
    "rowsets_read": "RowsetsRead",
}


@dataclass
class ScanStats:
    segments_total: int = 0
    segments_read: int = 0
    segments_filtered: int = 0
    pages_total: int = 0
    pages_read: int = 0
    pages_zone_map_filtered: int = 0
    rows_total: int = 0
    rows_short_key_filtered: int = 0
    rows_zone_map_filtered: int = 0
    rows_read: int = 0
    rows_conditions_filtered: int = 0
    rows_merged: int = 0
    rows_value_filtered: int = 0
    rows_returned: int = 0
    bytes_read: int = 0
    uncompressed_bytes_read: int = 0
    rowsets_read: int = 0

    def merge(self, other: ScanStats) -> None:
        for f in fields(self):
            setattr(self, f.name, getattr(self, f.name) + getattr(other, f.name))

    def profile(self) -> dict[str, int]:
        return {PROFILE_NAMES[f.name]: getattr(self, f.name) for f in fields(self)}
