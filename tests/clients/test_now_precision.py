"""NOW(n) / CURRENT_TIMESTAMP(n) / LOCALTIMESTAMP(n) are DATETIME(n): their values print n
fractional digits (Doris's DATETIMEV2(n)), also through date arithmetic; NOW() prints none."""

from __future__ import annotations

import re

import pymysql
from pymysql.constants import FIELD_TYPE


def test_now_prints_its_precision(server):
    conv = dict(pymysql.converters.conversions)
    conv.pop(FIELD_TYPE.DATETIME)  # the values as the server wrote them
    conn = server.connect(read_timeout=30, conv=conv)
    try:
        with conn.cursor() as cur:
            cur.execute("SELECT CAST(now(3) AS STRING), CAST(current_timestamp(6) AS STRING)")
            cur.execute("SELECT now(3), current_timestamp(6), now(), localtimestamp(2), "
                        "date_add(now(3), INTERVAL 1 DAY)")
            row = cur.fetchone()
            names = [d[0] for d in cur.description]
    finally:
        conn.close()
    stamp = r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d"
    for value, digits in zip(row, (3, 6, 0, 2, 3)):
        text = str(value)
        fraction = f"\\.\\d{{{digits}}}" if digits else ""
        assert re.fullmatch(stamp + fraction, text), (value, digits)
    assert names[1] == "now(6)"  # CURRENT_TIMESTAMP(6) keeps its precision when written back
