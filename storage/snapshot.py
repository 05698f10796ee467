"""Snapshot reads: the rowsets of one tablet at one published version, held while read.

Doris's MVCC (the BE's `capture_rs_readers`): a query fixes, per tablet, the rowsets of the
version it reads when it starts; compaction, loads and DELETEs then only add rowsets or retire
them, and a retired (stale) rowset's files stay until no query holds it.

    Tablet.capture(version)  under the tablet's lock: the version path at `version` (live
                             rowsets with end_version <= version; where a compaction output
                             spans past `version`, the stale rowsets it replaced), registered
                             with their ids in the tablet's reader registry
    TabletSnapshot.read(...) the rows of exactly those rowsets (storage/tablet_reader.py)
    TabletSnapshot.release() drops the references (idempotent); a stale rowset nobody holds
                             loses its files at once. A snapshot that is garbage-collected
                             without release() (a client gone mid-query, a plan dropped on an
                             error) is released by its `__del__` when collected.

`version_path(live, stale, version)` is the pure part: among rowsets whose end_version <=
version, choose in version order the widest rowset at each start (compaction outputs nest, so
the chosen ones never overlap and cover every version the tablet has up to `version`).
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING

import pyarrow as pa

from storage.errors import StorageError
from storage.predicate import ColumnPredicate
from storage.rowset import RowsetMeta
from storage.rowset_summary import RowsetSummary
from storage.schema import TabletSchema
from storage.stats import ScanStats

if TYPE_CHECKING:
    from storage.tablet import Tablet


def version_path(live: list[RowsetMeta], stale: list[RowsetMeta],
                 version: int) -> list[RowsetMeta]:
    """The rowsets a read at `version` uses (see the module docstring); raises StorageError if a
    compaction merged `version` into a wider rowset and the rowsets it replaced are gone."""
    if not live or live[-1].end_version <= version:
        return list(live)  # the common case: the whole published list
    visible = [r for r in live if r.end_version <= version]
    straddling = [r for r in live if r.start_version <= version < r.end_version]
    if not straddling:
        return visible
    older = [r for r in stale if r.end_version <= version]
    for r in straddling:
        if not any(r.start_version <= s.start_version <= version for s in older):
            raise StorageError(f"version already merged: tablet {r.tablet_id} has no rowsets "
                               f"for version {version} any more (merged into "
                               f"[{r.start_version}-{r.end_version}])")
    path, next_version = [], None
    for r in sorted([*visible, *older], key=lambda r: (r.start_version, -r.end_version)):
        if next_version is None or r.start_version >= next_version:
            path.append(r)
            next_version = r.end_version + 1
    return path


_RELEASE_LOCK = threading.Lock()  # short: guards the released flag of every snapshot


class TabletSnapshot:
    """One tablet's rowsets at one version, referenced in the tablet's reader registry."""

    def __init__(self, tablet: Tablet, version: int, rowsets: tuple[RowsetMeta, ...],
                 schema: TabletSchema, key: int):
        self.tablet, self.version, self.rowsets, self.schema = tablet, version, rowsets, schema
        self._key = key
        self._released = False
        self._facts: dict[str, object] = {}  # memo's answers, asked again within a query

    @property
    def summary(self) -> RowsetSummary:
        """What the scan asks of these rowsets (storage/rowset_summary.py)."""
        found = self._facts.get("summary")
        if found is None:
            found = self._facts["summary"] = self.tablet.summary_of(self.rowsets)
        return found

    def read(self, columns: list[str], predicates: list[ColumnPredicate],
             stats: ScanStats, merge: bool = True) -> pa.Table:
        from storage.tablet_reader import read_rowsets  # tablet_reader imports the tablet
        if self._released:
            raise StorageError(f"Snapshot of tablet {self.tablet.tablet_id} at version "
                               f"{self.version} was released")
        return read_rowsets(self.tablet, self.schema, self.rowsets, columns, predicates,
                            stats, self.version, merge, self.summary)

    def release(self) -> None:
        with _RELEASE_LOCK:  # once, even when two threads release the same snapshot
            if self._released:
                return
            self._released = True
        self.tablet._release(self._key)

    def __del__(self) -> None:
        # Collected unreleased (the reader failed to release it): `_dropped` never waits for
        # a lock. (A finalizer per snapshot cost more than the capture itself; a snapshot is
        # in no reference cycle, so CPython runs this as soon as the last reference goes.)
        if not self._released:
            self._released = True
            self.tablet._dropped(self._key)

    @property
    def released(self) -> bool:
        return self._released

    def memo(self, key, compute):
        """`compute(self)` for this snapshot's rowsets, kept on the tablet for as long as its
        published rowsets stay that list (a capture of the latest version shares one tuple
        object): the per-tablet facts a scan asks on every query (is it a plain concatenation,
        which segments) are worked out once per change of the tablet, not once per query,
        and kept on the snapshot too for the scan's later asks."""
        facts = self._facts
        if key in facts:
            return facts[key]
        found = facts[key] = self.tablet.snapshot_memo(self.rowsets, self.schema, key,
                                                        lambda: compute(self))
        return found

    def __enter__(self) -> TabletSnapshot:
        return self

    def __exit__(self, *exc) -> None:
        self.release()
