"""What a statement handler gets: the session's state and the server's shared services."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import datetime

from catalog.catalog import Catalog
from catalog.dynamic_scheduler import DynamicPartitionScheduler
from catalog.fe_config import FeConfig
from storage import StorageEngine


@dataclass
class StatementContext:
    catalog: Catalog
    engine: StorageEngine
    pool: ThreadPoolExecutor
    session: object          # server.session.DorisSession (variables, database)
    now: datetime
    sql: str
    fragments: list | None = None  # a profiled query's distributed plan (handlers/query.py)
    # the statement run is `sql` as the client sent it (not a rewrite such as COM_STMT_PREPARE's
    # LIMIT 0): its plan may be kept under that text (handlers/plan_cache.py)
    as_sent: bool = False

    @property
    def db(self) -> str | None:
        return self.session.database

    @property
    def fe_config(self) -> "FeConfig":
        """FE configs at runtime (ADMIN SET FRONTEND CONFIG changes them)."""
        return self.session.services.fe_config

    @property
    def dynamic(self) -> "DynamicPartitionScheduler":
        """The dynamic partition scheduler (its clock, runtime info, passes)."""
        return self.session.services.dynamic_scheduler
