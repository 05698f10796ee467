"""Storage engine: the tablets of this (simulated) backend and where their files live.

Owns the directory layout and the tablet registry:

    <root_dir>/data/<tablet_id>/<rowset_id>_<segment_no>.dat
    <root_dir>/data/loads/<txn_id>_<index_id>.arrow     small loads' rows (load_file.py)
    <root_dir>/spill/<query_id>/<n>.arrow               queries' spill files (executor/spill/),
                                                        all removed when the engine starts

Identifiers in paths are integers only, never user strings. The engine keeps no metadata of its
own: the catalog journals tablet schemas and published rowsets, and at start-up calls
`restore_tablet` for each tablet, then `remove_orphans` to delete files of loads that crashed
before publishing. It also owns the page cache its tablets share (storage/page_cache.py).
"""

from __future__ import annotations

import os
import shutil
import threading

from storage import load_file
from storage.errors import StorageError
from storage.load_file import LoadFiles
from storage.memtable import DEFAULT_WRITE_BUFFER_SIZE, MemTableLimiter
from storage.process_memory import ProcessMemory
from storage.page_cache import PageCache
from storage.rowset import DEFAULT_MAX_SEGMENT_SIZE, RowsetMeta
from storage.schema import TabletSchema
from storage.segment.writer import DEFAULT_PAGE_SIZE, DEFAULT_SHORT_KEY_INTERVAL, SegmentOptions
from storage.tablet import Tablet, TabletOptions


SPILL_DIRECTORY = "spill"


class StorageEngine:
    def __init__(self, root_dir: str, page_size: int = DEFAULT_PAGE_SIZE,
                 short_key_interval: int = DEFAULT_SHORT_KEY_INTERVAL,
                 max_segment_size: int = DEFAULT_MAX_SEGMENT_SIZE, page_cache_bytes: int = 0):
        if page_size <= 0 or short_key_interval <= 0 or max_segment_size <= 0:
            raise ValueError("page_size, short_key_interval and max_segment_size must be positive")
        self.root_dir = root_dir
        self.data_dir = os.path.join(root_dir, "data")
        os.makedirs(self.data_dir, exist_ok=True)
        self.spill_dir = os.path.join(root_dir, SPILL_DIRECTORY)
        shutil.rmtree(self.spill_dir, ignore_errors=True)  # a crashed query's spill files
        self.page_cache = PageCache(page_cache_bytes)  # 0: no page cache
        self.load_files = LoadFiles(os.path.join(self.data_dir, load_file.DIRECTORY))
        self.options = TabletOptions(SegmentOptions(page_size, short_key_interval),
                                     max_segment_size, self.page_cache, self.load_files)
        self._tablets: dict[int, Tablet] = {}
        self._lock = threading.Lock()
        # Loads' memtables (storage/memtable.py): a tablet's flushes at write_buffer_size, all
        # of the process's at the limiter's soft limit (set from the conf by server/main.py).
        self.write_buffer_size = DEFAULT_WRITE_BUFFER_SIZE
        self.memtables = MemTableLimiter()
        self.process_memory = ProcessMemory()  # mem_limit: loads fail past it

    def create_tablet(self, tablet_id: int, schema: TabletSchema) -> Tablet:
        """A new, empty tablet."""
        with self._lock:
            if tablet_id in self._tablets:
                raise StorageError(f"Tablet {tablet_id} already exists")
            tablet = Tablet(tablet_id, schema, self._directory(tablet_id), self.options)
            self._tablets[tablet_id] = tablet
        return tablet

    def get_tablet(self, tablet_id: int) -> Tablet:
        with self._lock:
            tablet = self._tablets.get(tablet_id)
        if tablet is None:
            raise StorageError(f"Tablet {tablet_id} does not exist")
        return tablet

    def has_tablet(self, tablet_id: int) -> bool:
        with self._lock:
            return tablet_id in self._tablets

    def tablet_ids(self) -> list[int]:
        with self._lock:
            return sorted(self._tablets)

    def drop_tablet(self, tablet_id: int) -> None:
        """Forget the tablet and delete its files (scans already running keep their handles)."""
        with self._lock:
            tablet = self._tablets.pop(tablet_id, None)
        if tablet is not None:
            tablet.destroy()

    def restore_tablet(self, tablet_id: int, schema: TabletSchema,
                       published: list[tuple[RowsetMeta, int]]) -> Tablet:
        """Re-open a tablet at start-up from the catalog's journal: its schema and rowsets."""
        with self._lock:
            if tablet_id in self._tablets:
                raise StorageError(f"Tablet {tablet_id} already exists")
            tablet = Tablet(tablet_id, schema, self._directory(tablet_id), self.options)
            for meta, version in published:
                tablet.publish(meta, version)
            self._tablets[tablet_id] = tablet
        return tablet

    def remove_orphans(self, tablet_id: int) -> list[str]:
        """Delete files of the tablet's unpublished, not-in-flight rowsets; returns their names."""
        return self.get_tablet(tablet_id).remove_orphans()

    def remove_unreferenced_load_files(self) -> list[str]:
        """At start-up, once every tablet is restored: delete load files no rowset reads."""
        return self.load_files.remove_unreferenced()

    def remove_unknown_tablets(self, keep: set[int]) -> list[int]:
        """Delete tablet directories the catalog does not know (a drop interrupted by a
        crash, or a create that never got journaled); returns their ids."""
        removed = []
        for name in os.listdir(self.data_dir):
            if name.isdigit() and int(name) not in keep and not self.has_tablet(int(name)):
                shutil.rmtree(os.path.join(self.data_dir, name), ignore_errors=True)
                removed.append(int(name))
        return removed

    def _directory(self, tablet_id: int) -> str:
        if isinstance(tablet_id, bool) or not isinstance(tablet_id, int) or tablet_id < 0:
            raise StorageError(f"Tablet id must be a non-negative integer, got {tablet_id!r}")
        return os.path.join(self.data_dir, str(tablet_id))
