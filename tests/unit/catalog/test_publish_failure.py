"""A load whose publish entry is durable is never undone: a failure after the journal write
(here the checkpoint that follows it, on a full disk) reaches the client as an error, but the
load's files stay, its rows are read, and a restart replays it."""

from __future__ import annotations

from datetime import datetime

import pyarrow as pa
import pytest

from catalog.catalog import Catalog
from catalog.load import load_table
from server.parser.create_table import parse_create_table
from server.parser.tokens import TokenCursor
from test_compaction import open_catalog, rows

DDL = ("CREATE TABLE t (k INT NOT NULL, v INT) UNIQUE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 2 "
       'PROPERTIES ("replication_num" = "1")')


def load(cat: Catalog, keys: list[int]) -> None:
    load_table(cat, "db", "t", pa.table({"k": pa.array(keys, pa.int32()),
                                         "v": pa.array(keys, pa.int32())}), datetime.now())


@pytest.mark.parametrize("keys", [[1, 2, 3], list(range(2000))],  # a load file; segments
                         ids=["load_file", "segments"])
def test_failure_after_the_publish_is_durable_keeps_the_load(tmp_path, keys):
    cat = open_catalog(tmp_path)
    cat.create_database("db")
    cat.create_table("db", parse_create_table(TokenCursor(DDL)))

    def full_disk(state):
        raise OSError(28, "No space left on device")

    cat.journal.checkpoint = full_disk
    cat.edit_log_roll_num = 1  # the publish's entry makes the checkpoint due
    with pytest.raises(OSError):
        load(cat, keys)
    expected = [(k, k) for k in keys]
    assert rows(cat) == expected  # visible, its files in place
    cat.close()
    again = open_catalog(tmp_path)
    assert rows(again) == expected
    again.close()
