"""The Stream Loads the server ran, for SHOW STREAM LOAD (server/handlers/show_stream_load.py).

Doris's BE keeps a record of each Stream Load when its config `enable_stream_load_record` is
true (default false) and the FE fetches them; here both are one process, so the HTTP service
hands each finished load's reply to `StreamLoadRecords.record`, which keeps it when the FE
config `enable_stream_load_record` is on (ADMIN SET FRONTEND CONFIG turns it on or off at
runtime), at most `max_stream_load_record_size` records, the oldest dropped first. Records live
in memory: a restart forgets them (Doris keeps them in the BE's RocksDB for a while).

A record holds Doris's columns: Label, Db, Table, ClientIp, Status, Message, Url (the ErrorURL),
TotalRows, LoadedRows, FilteredRows, UnselectedRows, LoadBytes, StartTime, FinishTime, User,
Comment.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from datetime import datetime

COLUMNS = ("Label", "Db", "Table", "ClientIp", "Status", "Message", "Url", "TotalRows",
           "LoadedRows", "FilteredRows", "UnselectedRows", "LoadBytes", "StartTime",
           "FinishTime", "User", "Comment")


def _time_ms(ts: float) -> str:
    return datetime.fromtimestamp(ts).strftime("%Y-%m-%d %H:%M:%S.%f")[:-3]


class StreamLoadRecords:
    def __init__(self, fe_config) -> None:
        self._fe_config = fe_config
        self._records: deque[dict] = deque()
        self._lock = threading.Lock()

    def record(self, reply: dict, db: str, table: str, user: str, client_ip: str,
               comment: str) -> None:
        """Keep a finished load's reply (when recording is on)."""
        if not self._fe_config.get("enable_stream_load_record"):
            return
        finished = time.time()
        started = finished - reply.get("LoadTimeMs", 0) / 1000
        row = {"Label": reply.get("Label", ""), "Db": db, "Table": table, "ClientIp": client_ip,
               "Status": reply.get("Status", ""), "Message": reply.get("Message", ""),
               "Url": reply.get("ErrorURL", "N/A"),
               "TotalRows": reply.get("NumberTotalRows", 0),
               "LoadedRows": reply.get("NumberLoadedRows", 0),
               "FilteredRows": reply.get("NumberFilteredRows", 0),
               "UnselectedRows": reply.get("NumberUnselectedRows", 0),
               "LoadBytes": reply.get("LoadBytes", 0), "StartTime": _time_ms(started),
               "FinishTime": _time_ms(finished), "User": user, "Comment": comment,
               "_finished": finished}
        keep = max(0, int(self._fe_config.get("max_stream_load_record_size")))
        with self._lock:
            self._records.append(row)
            while len(self._records) > keep:
                self._records.popleft()

    def of_db(self, db: str) -> list[dict]:
        """The records of database `db` (case-insensitive), oldest first."""
        with self._lock:
            return [r for r in self._records if r["Db"].lower() == db.lower()]
