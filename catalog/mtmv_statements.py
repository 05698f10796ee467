"""Statement objects of Doris's asynchronous materialized views (MTMV), as
server/parser/async_mv.py builds them and server/handlers/async_mv.py runs them."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class RefreshTrigger:
    """ON MANUAL | ON SCHEDULE EVERY n UNIT [STARTS '...'] | ON COMMIT."""
    kind: str = "MANUAL"        # MANUAL / SCHEDULE / COMMIT
    interval: int = 0
    unit: str = ""              # MINUTE / HOUR / DAY / WEEK (SECOND too, as Doris's tests use)
    starts: str | None = None   # 'yyyy-MM-dd HH:mm:ss'

    def to_dict(self) -> dict:
        return {"kind": self.kind, "interval": self.interval, "unit": self.unit,
                "starts": self.starts}

    @staticmethod
    def from_dict(d: dict) -> RefreshTrigger:
        return RefreshTrigger(d["kind"], d.get("interval", 0), d.get("unit", ""), d.get("starts"))


@dataclass
class ColumnSpec:
    name: str
    comment: str | None = None


@dataclass
class CreateMTMVStmt:
    db: str | None
    name: str
    query: str                              # the AS query's text
    if_not_exists: bool = False
    columns: list[ColumnSpec] = field(default_factory=list)
    build_mode: str = "IMMEDIATE"           # IMMEDIATE / DEFERRED
    refresh_method: str = "AUTO"            # COMPLETE / AUTO / NEVER
    trigger: RefreshTrigger = field(default_factory=RefreshTrigger)
    keys: list[str] = field(default_factory=list)
    comment: str = ""
    partition_column: str | None = None
    distribution_kind: str | None = None    # HASH / RANDOM
    distribution_columns: list[str] = field(default_factory=list)
    buckets: int | None = None              # None: AUTO
    properties: dict[str, str] = field(default_factory=dict)


@dataclass
class DropMTMVStmt:
    db: str | None
    name: str
    if_exists: bool = False


@dataclass
class RefreshMTMVStmt:
    db: str | None
    name: str
    mode: str = "AUTO"                      # AUTO / COMPLETE / PARTITIONS
    partitions: list[str] = field(default_factory=list)


@dataclass
class AlterMTMVStmt:
    db: str | None
    name: str
    new_name: str | None = None             # RENAME
    refresh_method: str | None = None       # REFRESH COMPLETE | AUTO | NEVER
    trigger: RefreshTrigger | None = None   # REFRESH ON ...
    properties: dict[str, str] | None = None  # SET ("k" = "v")


@dataclass
class MTMVJobStmt:
    """PAUSE / RESUME MATERIALIZED VIEW JOB ON mv."""
    db: str | None
    name: str
    pause: bool


@dataclass
class CancelMTMVTaskStmt:
    db: str | None
    name: str
    task_id: int


@dataclass
class ShowCreateMTMVStmt:
    db: str | None
    name: str
