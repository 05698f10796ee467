"""storage: the columnar engine of a (simulated) Doris backend.

Entry points:

    StorageEngine(root_dir, page_size, short_key_interval, max_segment_size)
        .create_tablet(id, TabletSchema) / .get_tablet / .drop_tablet / .restore_tablet
        .remove_orphans
    Tablet.write_rowset(table, txn_id) -> RowsetMeta      pending, invisible
    Tablet.write_delete([ColumnPredicate], txn_id)         a pending DELETE version (no files)
    Tablet.prepare_publish(meta, version)                  merge-on-write: the delete bitmap
                                                           entries, into meta (journaled)
    Tablet.publish(meta, version)                          visible at [version, version]
    Tablet.read(version, columns, [ColumnPredicate], ScanStats) -> pa.Table
    Tablet.set_schema / build_bitmap_index                 optional indexes added or dropped
    Tablet.build_inverted_index                            BUILD INDEX: side files of an
                                                           inverted index
    bucket_ids(columns, types, num_buckets)                hash distribution (hashing.py)
    bucket_of(values, types, num_buckets)                  ... of one row of Python values

Layering, bottom-up: types, schema -> segment/ (encoding, page, ordinal, zone_map, short_key,
murmur, bloom_filter, bitmap_index, footer, writer, side_index, filters, reader; inverted/:
analyzer, match, index, filter) -> memtable,
merge, rowset, delete_bitmap -> mow, mow_tablet -> tablet -> engine. Storage imports neither
the catalog, the planner, the executor nor the server. The on-disk format is drawn in
docs/storage-format.md and in each segment module's docstring.
"""

from storage.engine import StorageEngine
from storage.errors import CorruptionError, StorageError
from storage.hashing import bucket_ids, bucket_of
from storage.predicate import ColumnPredicate
from storage.rowset import RowsetMeta
from storage.schema import TabletColumn, TabletSchema
from storage.stats import ScanStats
from storage.tablet import Tablet
from storage.types import DataType

__all__ = [
    "StorageEngine", "Tablet", "TabletSchema", "TabletColumn", "ColumnPredicate", "ScanStats",
    "RowsetMeta", "bucket_ids", "bucket_of", "DataType", "StorageError", "CorruptionError",
]
