"""What a statement returns to the connection layer: an OK, or rows with typed columns.

Rows travel as Arrow tables (a list of them, so large results can be produced in batches);
each result column carries the Doris type it is reported as, from which the connection derives
MySQL column metadata (type code, length, decimals, flags).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterable

import pyarrow as pa

from storage.types import DataType


@dataclass
class OkResult:
    affected_rows: int = 0
    warnings: int = 0
    info: str = ""


@dataclass
class ResultColumn:
    name: str
    type: DataType
    nullable: bool = True


@dataclass
class RowsResult:
    columns: list[ResultColumn]
    # Column i of each batch is columns[i]. A list, or an iterator that computes batches as
    # they are consumed (a streaming query: consume it off the event loop).
    batches: Iterable[pa.Table] = field(default_factory=list)


def rows_from_python(names: list[str], types: list[DataType], rows: list[tuple]) -> RowsResult:
    """A small result (SHOW statements) from Python rows."""
    cols = [ResultColumn(n, t) for n, t in zip(names, types)]
    arrays = [pa.array([r[i] for r in rows], type=t.arrow()) for i, t in enumerate(types)]
    return RowsResult(cols, [pa.Table.from_arrays(arrays, names=[f"c{i}" for i in range(len(names))])])


def text_columns(names: list[str], rows: list[tuple]) -> RowsResult:
    """A result whose columns are all VARCHAR (most SHOW output)."""
    varchar = DataType("VARCHAR", length=65533)
    return rows_from_python(names, [varchar] * len(names),
                            [tuple(None if v is None else str(v) for v in r) for r in rows])
