"""Storage errors.

Owns the exceptions raised below the tablet boundary. They do not import the catalog's error
hierarchy (storage must not depend on the catalog); each carries the MySQL error number the server
should report, and the server maps them when they escape a statement.
"""

from __future__ import annotations


class StorageError(Exception):
    """A storage operation failed; nothing visible was changed."""

    code = 1105
    sqlstate = "HY000"

    def client_message(self) -> str:
        return f"errCode = 2, detailMessage = {self}"


class CorruptionError(StorageError):
    """Bytes on disk do not match what was written (bad checksum, magic, bounds or layout).

    The message always names the tablet, the segment file and, for a data or index page, the
    column, so an operator can find the damaged file. Readers raise it instead of returning data.
    """

    def __init__(self, message: str, *, tablet_id: int | None = None, path: str = "",
                 column: str | None = None):
        where = [f"tablet {tablet_id}" if tablet_id is not None else "tablet ?",
                 f"segment {path}" if path else "segment ?"]
        if column is not None:
            where.append(f"column {column}")
        super().__init__(f"Corrupted segment data ({', '.join(where)}): {message}")
        self.tablet_id = tablet_id
        self.path = path
        self.column = column
