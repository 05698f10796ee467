"""Scan counters: what a storage read did, named after Doris's OLAP scan profile.

Owns `ScanStats`. One instance per scan (or per fragment instance); `merge` adds another's
counters. `profile()` gives the counters under their minidoris names, `doris_profile()` under
the names Doris's SegmentIterator profile uses (where Doris has the counter):

    SegmentsTotal            NumSegmentTotal         segments considered by the scan
    SegmentsRead                                     segments whose rows were read at all
    SegmentsFiltered         NumSegmentFiltered      segments dropped whole by their zone map
    PagesTotal               TotalPagesNum           data pages of the needed columns
    PagesRead                                        data pages decoded
    CachedPagesNum           CachedPagesNum          pages served from a cache instead of read:
                                                     decoded data pages reused within the scan,
                                                     index pages already loaded on the segment
    PagesZoneMapFiltered                             pages of predicate columns dropped by zone maps
    PagesBloomFilterFiltered                         further pages dropped by bloom filters
    RowsTotal                                        rows in all segments considered
    RowsShortKeyFiltered     RowsKeyRangeFiltered    rows outside the short key index's key ranges
    RowsZoneMapFiltered      RowsStatsFiltered       further rows dropped by zone maps (page or
                                                     segment level)
    RowsBloomFilterFiltered  RowsBloomFilterFiltered further rows dropped by bloom filters
    RowsBitmapIndexFiltered  RowsBitmapIndexFiltered further rows dropped by bitmap indexes
    RowsRead                 RawRowsRead             rows decoded for predicate evaluation / output
    RowsConditionsFiltered   RowsVectorPredFiltered  decoded rows that failed the predicates
    RowsDelFiltered          RowsDelFiltered         rows removed by DELETE predicates and by a
                                                     merge-on-write delete bitmap (Doris adds
                                                     rows_del_by_bitmap to this counter)
    RowsMerged                                       rows folded away by merge-on-read (AGG/UNIQUE)
    MergedBaseRows                                   merged rows of older versions a merge-on-read
                                                     took from the page cache instead of reading
                                                     and merging them (storage/merged_base.py)
    RowsValueFiltered                                merged rows failing value-column predicates
    RowsReturned             RowsReturned            rows handed back to the caller
    BytesRead                CompressedBytesRead     bytes read from segment files (pages + indexes)
    UncompressedBytesRead    UncompressedBytesRead   data page bytes after decompression
    RowsetsRead                                      rowsets in the snapshot that was read

Invariants per segment read:
    RowsTotal = RowsShortKeyFiltered + RowsZoneMapFiltered + RowsBloomFilterFiltered
                + RowsBitmapIndexFiltered + RowsRead
    RowsRead  = RowsConditionsFiltered + RowsDelFiltered + rows the segment returned
"""

from __future__ import annotations

from dataclasses import dataclass, fields

PROFILE_NAMES = {
    "segments_total": "SegmentsTotal", "segments_read": "SegmentsRead",
    "segments_filtered": "SegmentsFiltered", "pages_total": "PagesTotal",
    "pages_read": "PagesRead", "cached_pages_num": "CachedPagesNum",
    "pages_zone_map_filtered": "PagesZoneMapFiltered",
    "pages_bloom_filter_filtered": "PagesBloomFilterFiltered",
    "rows_total": "RowsTotal", "rows_short_key_filtered": "RowsShortKeyFiltered",
    "rows_zone_map_filtered": "RowsZoneMapFiltered",
    "rows_bloom_filter_filtered": "RowsBloomFilterFiltered",
    "rows_bitmap_index_filtered": "RowsBitmapIndexFiltered",
    "rows_inverted_index_filtered": "RowsInvertedIndexFiltered", "rows_read": "RowsRead",
    "rows_conditions_filtered": "RowsConditionsFiltered", "rows_del_filtered": "RowsDelFiltered",
    "rows_merged": "RowsMerged", "merged_base_rows": "MergedBaseRows",
    "rows_value_filtered": "RowsValueFiltered",
    "rows_returned": "RowsReturned", "bytes_read": "BytesRead",
    "uncompressed_bytes_read": "UncompressedBytesRead", "rowsets_read": "RowsetsRead",
}

DORIS_NAMES = {
    "segments_total": "NumSegmentTotal", "segments_filtered": "NumSegmentFiltered",
    "pages_total": "TotalPagesNum", "cached_pages_num": "CachedPagesNum",
    "rows_short_key_filtered": "RowsKeyRangeFiltered",
    "rows_zone_map_filtered": "RowsStatsFiltered",
    "rows_bloom_filter_filtered": "RowsBloomFilterFiltered",
    "rows_bitmap_index_filtered": "RowsBitmapIndexFiltered",
    "rows_inverted_index_filtered": "RowsInvertedIndexFiltered", "rows_read": "RawRowsRead",
    "rows_conditions_filtered": "RowsVectorPredFiltered", "rows_del_filtered": "RowsDelFiltered",
    "bytes_read": "CompressedBytesRead", "uncompressed_bytes_read": "UncompressedBytesRead",
}


@dataclass
class ScanStats:
    segments_total: int = 0
    segments_read: int = 0
    segments_filtered: int = 0
    pages_total: int = 0
    pages_read: int = 0
    cached_pages_num: int = 0
    pages_zone_map_filtered: int = 0
    pages_bloom_filter_filtered: int = 0
    rows_total: int = 0
    rows_short_key_filtered: int = 0
    rows_zone_map_filtered: int = 0
    rows_bloom_filter_filtered: int = 0
    rows_bitmap_index_filtered: int = 0
    rows_inverted_index_filtered: int = 0
    rows_read: int = 0
    rows_conditions_filtered: int = 0
    rows_del_filtered: int = 0
    rows_merged: int = 0
    merged_base_rows: int = 0
    rows_value_filtered: int = 0
    rows_returned: int = 0
    bytes_read: int = 0
    uncompressed_bytes_read: int = 0
    rowsets_read: int = 0

    def merge(self, other: ScanStats) -> None:
        mine, theirs = self.__dict__, other.__dict__
        for name in _FIELD_NAMES:  # a scan merges one per tablet: no fields() per call
            mine[name] += theirs[name]

    def profile(self) -> dict[str, int]:
        return {PROFILE_NAMES[f.name]: getattr(self, f.name) for f in fields(self)}

    def doris_profile(self) -> dict[str, int]:
        return {DORIS_NAMES[f.name]: getattr(self, f.name) for f in fields(self)
                if f.name in DORIS_NAMES}


_FIELD_NAMES = tuple(f.name for f in fields(ScanStats))
