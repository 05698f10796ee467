"""What a statement handler gets: the session's state and the server's shared services."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import datetime

from catalog.catalog import Catalog
from storage import StorageEngine


@dataclass
class StatementContext:
    catalog: Catalog
    engine: StorageEngine
    pool: ThreadPoolExecutor
    session: object          # server.session.DorisSession (variables, database)
    now: datetime
    sql: str

    @property
    def db(self) -> str | None:
        return self.session.database
