"""Statement objects of resources and asynchronous loads (parsed by server/parser/load.py).

    CREATE [EXTERNAL] RESOURCE [IF NOT EXISTS] "name" PROPERTIES (...)   CreateResourceStmt
    DROP RESOURCE [IF EXISTS] "name"                                      DropResourceStmt
    SHOW RESOURCES [WHERE NAME = "x" | NAME LIKE "x%" | RESOURCETYPE = "spark"]
    LOAD LABEL [db.]label (DATA INFILE (...) INTO TABLE t ...) WITH RESOURCE 'r' (...)
        PROPERTIES (...)                                                  LoadStmt
    SHOW LOAD [FROM db] [WHERE LABEL = "x" | LABEL LIKE "x" | STATE = "s"] [ORDER BY ...]
        [LIMIT n]                                                         ShowLoadStmt
    CANCEL LOAD [FROM db] WHERE LABEL = "x" | LABEL LIKE "x" | STATE = "s" CancelLoadStmt
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class CreateResourceStmt:
    name: str
    properties: dict[str, str]
    if_not_exists: bool = False


@dataclass
class DropResourceStmt:
    name: str
    if_exists: bool = False


@dataclass
class ShowResourcesStmt:
    name: str | None = None          # NAME = "x"
    name_like: str | None = None     # NAME LIKE "x%"
    resource_type: str | None = None
    tail: str = ""                   # [ORDER BY ...] [LIMIT ...] (server/handlers/show_filter.py)


@dataclass
class DataDescription:
    """One `DATA INFILE (...) INTO TABLE t ...` clause of a LOAD."""

    files: list[str]
    table: str
    partitions: list[str] = field(default_factory=list)
    column_separator: str = "\t"
    line_delimiter: str = "\n"
    format: str = "csv"              # csv | parquet | orc | json
    columns: list[str] | None = None  # source columns in file order
    set_exprs: list[tuple[str, str]] = field(default_factory=list)  # (column, SQL expression)
    where: str | None = None         # SQL predicate over the converted columns
    negative: bool = False


@dataclass
class LoadStmt:
    db: str | None
    label: str
    data: list[DataDescription]
    resource: str | None             # WITH RESOURCE 'name'
    resource_properties: dict[str, str] = field(default_factory=dict)
    properties: dict[str, str] = field(default_factory=dict)


@dataclass
class LoadFilter:
    label: str | None = None
    label_like: str | None = None
    state: str | None = None


@dataclass
class ShowLoadStmt:
    db: str | None
    where: LoadFilter = field(default_factory=LoadFilter)
    order_by: list[tuple[str, bool]] = field(default_factory=list)  # (column, descending)
    limit: int | None = None
    offset: int = 0


@dataclass
class ShowStreamLoadStmt:
    """SHOW STREAM LOAD [FROM db] [WHERE LABEL = | LIKE ..., STATUS = ...] [ORDER BY] [LIMIT]"""

    db: str | None
    where: LoadFilter = field(default_factory=LoadFilter)
    order_by: list[tuple[str, bool]] = field(default_factory=list)  # (column, descending)
    limit: int | None = None
    offset: int = 0


@dataclass
class CancelLoadStmt:
    db: str | None
    where: LoadFilter = field(default_factory=LoadFilter)
