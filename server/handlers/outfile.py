"""SELECT ... INTO OUTFILE "file:///dir/prefix_" [FORMAT AS ...] [PROPERTIES (...)].

As Doris's OutFileClause: the query's rows are written to `<prefix><query id>_<n>.<ext>`
(a new file past `max_file_size`), and the statement returns FileNumber, TotalRows, FileSize
and URL. Local files are refused unless the FE config `enable_outfile_to_local` is true
(Doris's default is false: it lets any account with SELECT write where the server can); other
schemes (s3://, hdfs://) are not available here. CSV text is the MySQL protocol's text of each
value (`\\N` for NULL), joined column by column with pyarrow compute; PARQUET and ORC are
written by pyarrow.
"""

from __future__ import annotations

import os
import re
import uuid

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.orc as orc
import pyarrow.parquet as pq

from catalog.errors import AnalysisError, NotSupported
from server.handlers.context import StatementContext
from server.handlers.query import computed_type, query_batches
from server.parser.outfile import FORMATS, OutfileStmt
from server.parser.statement import parse_sqlglot
from server.protocol.format import to_text
from server.results import RowsResult, rows_from_python
from storage.types import DataType

_EXT = {"CSV": "csv", "CSV_WITH_NAMES": "csv", "CSV_WITH_NAMES_AND_TYPES": "csv",
        "PARQUET": "parquet", "ORC": "orc"}
_MIN_FILE, _MAX_FILE, _DEFAULT_FILE = 5 << 20, 2 << 30, 1 << 30


def check_target(path: str, properties: dict[str, str], ctx: StatementContext) -> str:
    """The local prefix files are written under, after Doris's checks of the path (also what
    EXPORT checks before it records a job)."""
    if not path.startswith("file://"):
        raise NotSupported("INTO OUTFILE can only write local files (file:///...) here")
    if not ctx.catalog.fe_config_get("enable_outfile_to_local"):
        raise AnalysisError("Exporting results to local disk is not allowed. To enable this "
                            "feature, you need to add `enable_outfile_to_local=true` in fe.conf "
                            "and restart FE")
    prefix = path[len("file://"):]
    directory = os.path.dirname(prefix) or "/"
    if not os.path.isabs(prefix) or not os.path.isdir(directory):
        raise AnalysisError(f"The directory of the outfile path does not exist: {directory}")
    props = {k.lower(): v for k, v in properties.items()}
    if props.get("delete_existing_files", "false").lower() == "true":
        raise AnalysisError("Deleting existing files is not allowed. To enable this feature, "
                            "you need to add `enable_delete_existing_files=true` in fe.conf")
    _file_size(props.get("max_file_size"))
    return prefix


def outfile(stmt: OutfileStmt, ctx: StatementContext) -> RowsResult:
    fmt = stmt.format.upper()
    if fmt not in FORMATS:
        raise AnalysisError(f"format:{stmt.format.lower()} is not supported.")
    prefix = check_target(stmt.path, stmt.properties, ctx)
    directory = os.path.dirname(prefix) or "/"
    props = {k.lower(): v for k, v in stmt.properties.items()}
    max_size = _file_size(props.get("max_file_size"))
    columns, batches = query_batches(parse_sqlglot(stmt.query), ctx)
    writer = _Writer(prefix + uuid.uuid4().hex[:16] + "-" + uuid.uuid4().hex[:16] + "_", fmt,
                     columns, props, max_size)
    try:
        for batch in batches:
            writer.write(batch)
    except BaseException:
        writer.close()
        raise
    finally:
        batches.close()
    writer.close()
    if props.get("success_file_name"):
        open(os.path.join(directory, os.path.basename(props["success_file_name"])), "w").close()
    names = ["FileNumber", "TotalRows", "FileSize", "URL"]
    types = [DataType("INT"), DataType("BIGINT"), DataType("BIGINT"),
             DataType("VARCHAR", length=1024)]
    return rows_from_python(names, types, [(writer.files, writer.rows, writer.bytes,
                                            "file://" + writer.base)])


def _file_size(raw: str | None) -> int:
    if raw is None:
        return _DEFAULT_FILE
    m = re.fullmatch(r"\s*(\d+)\s*(B|KB|MB|GB)?\s*", raw, re.IGNORECASE)
    if m is None:
        raise AnalysisError(f"max_file_size: {raw} is invalid.")
    size = int(m.group(1)) * {"B": 1, "KB": 1 << 10, "MB": 1 << 20, "GB": 1 << 30}[
        (m.group(2) or "B").upper()]
    if not _MIN_FILE <= size <= _MAX_FILE:
        raise AnalysisError("max file size should between 5MB and 2GB. Given: " + str(size))
    return size


class _Writer:
    def __init__(self, base: str, fmt: str, columns: list, props: dict, max_size: int):
        self.base, self.fmt, self.columns, self.max_size = base, fmt, columns, max_size
        self.sep = props.get("column_separator", "\t").encode().decode("unicode_escape")
        self.line = props.get("line_delimiter", "\n").encode().decode("unicode_escape")
        self.files = self.rows = self.bytes = 0
        self._file = None
        self._size = 0
        self._parquet = None

    def _path(self) -> str:
        return f"{self.base}{self.files}.{_EXT[self.fmt]}"

    def _open(self, batch: pa.Table) -> None:
        schema = batch.schema
        path = self._path()
        self.files += 1
        self._size = 0
        if self.fmt == "PARQUET":
            self._file = pq.ParquetWriter(path, schema)
        elif self.fmt == "ORC":
            self._file = orc.ORCWriter(path)
        else:
            self._file = open(path, "wb")
            self._write_header(batch)
        self._current = path

    def _write_header(self, batch: pa.Table) -> None:
        lines = []
        if self.fmt in ("CSV_WITH_NAMES", "CSV_WITH_NAMES_AND_TYPES"):
            lines.append(self.sep.join(c.name for c in self.columns))
        if self.fmt == "CSV_WITH_NAMES_AND_TYPES":
            lines.append(self.sep.join(self._type(i, batch).sql().upper()
                                       for i in range(len(self.columns))))
        for line in lines:
            self._file.write((line + self.line).encode())

    def _type(self, i: int, batch: pa.Table) -> DataType:
        info, col = self.columns[i], batch.column(i)
        return info.type if info.type is not None else computed_type(col, col.type)

    def write(self, batch: pa.Table) -> None:
        if batch.num_rows == 0 and self._file is not None:
            return
        if self._file is None or self._size >= self.max_size:
            self.close_file()
            self._open(batch)
        self.rows += batch.num_rows
        if self.fmt in ("PARQUET", "ORC"):
            self._file.write_table(batch) if self.fmt == "PARQUET" else self._file.write(batch)
            self._size += batch.nbytes
            return
        texts = []
        for i in range(len(self.columns)):
            texts.append(pc.fill_null(to_text(batch.column(i), self._type(i, batch)), "\\N"))
        row = pc.binary_join_element_wise(*texts, self.sep) if len(texts) > 1 else texts[0]
        data = _string_bytes(pc.binary_join_element_wise(row, pa.scalar(self.line), ""))
        self._file.write(data)
        self._size += len(data)

    def close_file(self) -> None:
        if self._file is None:
            return
        self._file.close()
        self.bytes += os.path.getsize(self._current)
        self._file = None

    def close(self) -> None:
        self.close_file()


def _string_bytes(arr: pa.Array) -> bytes:
    """The concatenated values of a string array without nulls (its data buffer's used part)."""
    arr = arr.combine_chunks() if isinstance(arr, pa.ChunkedArray) else arr
    if len(arr) == 0:
        return b""
    arr = pa.concat_arrays([arr])  # offsets from the array's own start
    offsets = arr.buffers()[1]
    off = np.frombuffer(offsets, dtype=np.int32, count=len(arr) + 1, offset=arr.offset * 4)
    return arr.buffers()[2].to_pybytes()[off[0]:off[-1]]
