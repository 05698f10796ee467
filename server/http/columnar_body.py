"""Stream Load bodies in typed columnar formats: `format: parquet | orc | arrow`.

Doris reads these formats whole rather than streamed (BE `is_format_support_streaming`; the
body is saved to a local file first): so does this module, spooling the body to a temporary
file (bounded by `streaming_load_max_mb` like any body) and reading it back in batches of at
most BATCH_ROWS rows: Parquet row groups (`ParquetFile.iter_batches`), ORC stripes, Arrow IPC
record batches (the stream format that Doris's connectors send, or the file format).

Columns are matched to the load's source names case-insensitively, as Doris matches Parquet
and ORC fields; a name the file lacks is a column of NULLs. The values keep their Arrow types:
the load converts them to the table's types as it does JSON values (server/http/load_rows.py).
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator

import pyarrow as pa
import pyarrow.ipc as ipc
import pyarrow.orc as paorc
import pyarrow.parquet as pq

from catalog.errors import DataQualityError

BATCH_ROWS = 65536
SPOOL_CHUNK = 1 << 20
ARROW_FILE_MAGIC = b"ARROW1"


def read_columnar(stream, fmt: str, names: list[str], named: bool) -> Iterator[pa.Table]:
    """The body's rows as tables of the columns `names`, a batch at a time. A name the file
    lacks is left out (the load gives the column its default, as Doris fills a missing
    column), or, when the `columns` header named it (`named`), a column of NULLs."""
    with tempfile.TemporaryFile(prefix="minidoris-load-") as spool:
        shutil.copyfileobj(stream, spool, SPOOL_CHUNK)
        spool.seek(0)
        try:
            yield from _batches(spool, fmt, names if named else None, names)
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError, OSError) as e:
            raise DataQualityError(f"[DATA_QUALITY_ERROR]failed to read the {fmt} body: "
                                   f"{_first_line(e)}") from None


def _first_line(e: Exception) -> str:
    return str(e).splitlines()[0] if str(e) else type(e).__name__


def _batches(spool, fmt: str, required: list[str] | None,
             names: list[str]) -> Iterator[pa.Table]:
    if fmt == "parquet":
        pf = pq.ParquetFile(spool)
        wanted = _matching(pf.schema_arrow.names, names)
        empty = True
        for batch in pf.iter_batches(BATCH_ROWS, columns=list(wanted.values())):
            empty = False
            yield _by_name(batch, wanted, required)
        if empty:
            yield _by_name(pf.schema_arrow.empty_table(), wanted, required)
    elif fmt == "orc":
        of = paorc.ORCFile(spool)
        wanted = _matching(of.schema.names, names)
        for i in range(of.nstripes):
            yield _by_name(of.read_stripe(i, columns=list(wanted.values())), wanted, required)
        if not of.nstripes:
            yield _by_name(of.schema.empty_table(), wanted, required)
    else:
        reader = _ipc_reader(spool)
        wanted = _matching(reader.schema.names, names)
        empty = True
        for batch in _ipc_batches(reader):
            empty = False
            yield _by_name(batch, wanted, required)
        if empty:
            yield _by_name(reader.schema.empty_table(), wanted, required)


def file_columns(f, fmt: str) -> list[str]:
    """The column names of a seekable file in the typed format `fmt`."""
    try:
        if fmt == "parquet":
            return pq.ParquetFile(f).schema_arrow.names
        if fmt == "orc":
            return paorc.ORCFile(f).schema.names
        return _ipc_reader(f).schema.names
    except (pa.ArrowInvalid, OSError) as e:
        raise DataQualityError(f"[DATA_QUALITY_ERROR]failed to read the {fmt} file: "
                               f"{_first_line(e)}") from None


def _ipc_reader(spool):
    """An Arrow IPC stream reader, or a file reader when the body is the file format."""
    magic = spool.read(len(ARROW_FILE_MAGIC))
    spool.seek(0)
    return ipc.open_file(spool) if magic == ARROW_FILE_MAGIC else ipc.open_stream(spool)


def _ipc_batches(reader) -> Iterator[pa.RecordBatch]:
    if isinstance(reader, ipc.RecordBatchFileReader):
        for i in range(reader.num_record_batches):
            yield reader.get_batch(i)
    else:
        yield from reader


def _matching(file_names: list[str], names: list[str]) -> dict[str, str]:
    """source name -> the file's column of that name (any case), for those the file has."""
    by_lower: dict[str, str] = {}
    for n in file_names:
        by_lower.setdefault(n.lower(), n)
    return {n: by_lower[n.lower()] for n in names if n.lower() in by_lower}


def _by_name(batch: pa.RecordBatch | pa.Table, wanted: dict[str, str],
             required: list[str] | None) -> pa.Table:
    """The file's wanted columns under the load's names; `required` names the file lacks as
    NULLs."""
    rows = batch.num_rows
    columns = {}
    for n in required if required is not None else list(wanted):
        src = wanted.get(n)
        col = batch.column(src) if src is not None else pa.nulls(rows, pa.string())
        if pa.types.is_dictionary(col.type):
            col = col.cast(col.type.value_type)
        columns[n] = col
    return pa.table(columns)
