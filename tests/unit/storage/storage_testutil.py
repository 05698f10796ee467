"""Helpers shared by the storage unit tests (plain functions; no conftest to keep names unique)."""

from __future__ import annotations

import os

import pyarrow as pa

from storage import DataType, ScanStats, TabletColumn, TabletSchema
from storage.segment import SegmentOptions, SegmentReader, write_segment


def column(name: str, kind: str, *args: int, key: bool = False, agg: str | None = None,
           nullable: bool = True) -> TabletColumn:
    return TabletColumn(name, DataType.of(kind, *args), key, agg, nullable)


def schema(columns: list[TabletColumn], keys_type: str = "DUP_KEYS") -> TabletSchema:
    return TabletSchema(columns, keys_type)


def table_for(sch: TabletSchema, data: dict) -> pa.Table:
    return pa.table({c.name: pa.array(data[c.name], type=c.type.arrow()) for c in sch.columns})


def write_and_open(tmp_path, sch: TabletSchema, table: pa.Table, name: str = "1_0.dat",
                   page_size: int = 64 * 1024, interval: int = 1024,
                   tablet_id: int = 42) -> SegmentReader:
    path = os.path.join(str(tmp_path), name)
    write_segment(path, table, sch, SegmentOptions(page_size, interval))
    return SegmentReader(path, tablet_id)


def read_all(reader: SegmentReader, predicates=(), columns=None) -> tuple[pa.Table, ScanStats]:
    stats = ScanStats()
    cols = columns if columns is not None else list(reader.columns)
    return reader.read(cols, list(predicates), stats), stats
