"""The error hierarchy: every error a client can see, with its MySQL error number and SQLSTATE.

Doris reports most analysis and DDL errors as `errCode = 2, detailMessage = <text>` under MySQL
error 1105 (or a more specific number such as 1049 for an unknown database). Each class here fixes
the number and SQLSTATE; `doris_message()` adds Doris's prefix. Only the connection loop in
`server/` turns these into ERR packets; anything else that escapes becomes 1105 and is logged.
"""

from __future__ import annotations

import errno


class DorisError(Exception):
    """Base class: a statement failed and changed nothing."""

    code = 1105
    sqlstate = "HY000"
    doris_prefix = True

    def __init__(self, message: str):
        super().__init__(message)
        self.message = message

    def client_message(self) -> str:
        if self.doris_prefix:
            return f"errCode = 2, detailMessage = {self.message}"
        return self.message


class AnalysisError(DorisError):
    """Semantic errors found while binding or validating a statement."""


class SyntaxError_(DorisError):
    """The statement does not parse. Doris reports this as 1105 (not MySQL's 1064)."""


class UnknownDatabase(DorisError):
    code = 1049
    sqlstate = "42000"

    def __init__(self, name: str):
        super().__init__(f"Unknown database '{name}'")


class DatabaseExists(DorisError):
    code = 1007
    sqlstate = "HY000"

    def __init__(self, name: str):
        super().__init__(f"Can't create database '{name}'; database exists")


class UnknownTable(DorisError):
    code = 1146
    sqlstate = "42S02"

    def __init__(self, name: str, db: str = ""):
        super().__init__(f"Unknown table '{name}'" if not db else f"Table [{name}] does not exist in database [{db}]")


class DatabaseDropNotExists(DorisError):
    code = 1008
    sqlstate = "HY000"

    def __init__(self, name: str):
        super().__init__(f"Can't drop database '{name}'; database doesn't exist")


class UnknownTableToDrop(DorisError):
    code = 1109
    sqlstate = "42S02"

    def __init__(self, name: str, db: str):
        super().__init__(f"Unknown table '{name}' in {db}")


class TableExists(DorisError):
    code = 1050
    sqlstate = "42S01"

    def __init__(self, name: str):
        super().__init__(f"Table '{name}' already exists")


class NoDatabaseSelected(DorisError):
    code = 1046
    sqlstate = "3D000"

    def __init__(self) -> None:
        super().__init__("No database selected")


class UnknownColumn(DorisError):
    code = 1054
    sqlstate = "42S22"


class DdlError(DorisError):
    """DDL validation failures (Doris's DdlException)."""


class CodedDdlError(DdlError):
    """A DdlException Doris raises with its own error number (ErrorReport.reportDdlException
    with an ErrorCode: 1507 for an unknown partition, 5066 for a bad dynamic partition start,
    ...); the text keeps the `errCode = 2, detailMessage = ` prefix."""

    def __init__(self, message: str, code: int, sqlstate: str = "42000"):
        super().__init__(message)
        self.code = code
        self.sqlstate = sqlstate


class DataQualityError(DorisError):
    """Rows that do not fit the schema or any partition (strict mode)."""


class LabelAlreadyUsed(DorisError):
    """A load's label was taken by an earlier transaction of the database."""

    def __init__(self, label: str, txn_id: int):
        super().__init__(f"Label [{label}] has already been used, relate to txn [{txn_id}]")
        self.label, self.txn_id = label, txn_id


class NotSupported(DorisError):
    code = 1235
    sqlstate = "42000"


class ResourceLimit(DorisError):
    """A query exceeded a session limit such as exec_mem_limit."""


class MemLimitExceeded(DorisError):
    """The process's memory is over `mem_limit` (storage/process_memory.py): the load fails
    with Doris's MEM_LIMIT_EXCEEDED status and changes nothing."""

    def __init__(self, message: str):
        super().__init__(f"[MEM_LIMIT_EXCEEDED]{message}")


class StorageIOError(DorisError):
    """The machine refused a write or a read: a full disk, a read-only or failing data
    directory. Not a bug: the statement failed and changed nothing (its partial files are
    removed), and the server goes on serving."""

    ERRNOS = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EROFS, errno.EIO, errno.EFBIG})

    @classmethod
    def of(cls, e: BaseException) -> "StorageIOError | None":
        """The error to report for `e`, or None when `e` is not such an environment error."""
        if not isinstance(e, OSError) or e.errno not in cls.ERRNOS:
            return None
        where = f" ({e.filename})" if getattr(e, "filename", None) else ""
        return cls(f"Write to the data directory failed: {e.strerror}{where}")


class InternalError(DorisError):
    """A bug: logged with its traceback, reported as 1105."""

    @classmethod
    def of(cls, e: BaseException, statement: str = "") -> "InternalError":
        """The error a client sees for an unexpected exception: which construct of its
        statement could not be handled, never a bare Python exception name."""
        what = f" '{statement[:120]}'" if statement else ""
        return cls(f"Unsupported statement{what}: the server could not handle it "
                   f"({type(e).__name__}: {e}); the error is logged")
