"""NGRAM_BF indexes narrow `LIKE` scans without changing answers: random strings over a small
alphabet (many matches, many bloom false positives) in a table with the index (small and
large filters) and one without; every random pattern (substrings of stored values, random
text, `_` / `%` wildcards, escapes, runs shorter than gram_size) gives the same rows, and a
selective pattern skips pages, counted as PagesBloomFilterFiltered in the query profile."""

from __future__ import annotations

import random
import re

from test_stream_load import _put, _rows

DDL = """CREATE TABLE {name} (k INT, s VARCHAR(64){index}) DUPLICATE KEY(k)
DISTRIBUTED BY HASH(k) BUCKETS 2 PROPERTIES ("replication_num" = "1")"""
INDEX = ", INDEX i_s (s) USING NGRAM_BF PROPERTIES(\"gram_size\" = \"{g}\", \"bf_size\" = \"{b}\")"


def _word(rng: random.Random) -> str:
    return "".join(rng.choice("abcdeé") for _ in range(rng.randint(0, 14)))


NULL = "\\N"


def _like(value: str, pattern: str) -> bool:
    """LIKE's meaning, independently of the server: `%` any run, `_` one character, `\\x` x."""
    parts, i = [], 0
    while i < len(pattern):
        c = pattern[i]
        if c == "\\" and i + 1 < len(pattern):
            parts.append(re.escape(pattern[i + 1]))
            i += 2
            continue
        parts.append(".*" if c == "%" else "." if c == "_" else re.escape(c))
        i += 1
    return re.fullmatch("".join(parts), value, re.S) is not None


def _patterns(rng: random.Random, values: list[str]) -> list[str]:
    out = ["%", "%%", "abc%", "%é_a%", "%a\\%b%", "_b%", ""]
    for _ in range(40):
        v = rng.choice(values) or "ab"
        i = rng.randint(0, len(v))
        sub = v[i:i + rng.randint(1, 8)]
        out.append(rng.choice(["%{}%", "{}%", "%{}", "%{}_%", "{}"]).format(sub))
        out.append("%" + _word(rng)[:6] + "%")
    return out


def test_like_answers_equal_with_and_without_ngram_bf(server, fresh_db):
    rng = random.Random(20240229)
    conn = server.connect(fresh_db)
    with conn.cursor() as cur:
        cur.execute(DDL.format(name="plain", index=""))
        cur.execute(DDL.format(name="small", index=INDEX.format(g=3, b=64)))
        cur.execute(DDL.format(name="large", index=INDEX.format(g=2, b=65535)))
    conn.close()
    values = [None if i % 97 == 0 else _word(rng) for i in range(30000)]
    body = "\n".join(f"{i}\t{NULL if v is None else v}" for i, v in enumerate(values))
    for name in ("plain", "small", "large"):
        status, reply = _put(server, fresh_db, name, body.encode())
        assert reply["Status"] == "Success", reply
        _rows(server, fresh_db, f"INSERT INTO {name} VALUES (30000, 'xxneedlexx')")
        _rows(server, fresh_db, f"ADMIN COMPACT TABLE {name} PARTITION {name} WHERE type = 'BASE'")
    values.append("xxneedlexx")
    for pattern in [*_patterns(rng, [v for v in values if v]), "%needle%"]:
        quoted = pattern.replace("\\", "\\\\").replace("'", "\\'")
        sql = "SELECT k FROM {} WHERE s LIKE '" + quoted + "' ORDER BY k"
        expected = _rows(server, fresh_db, sql.format("plain"))
        assert [k for (k,) in expected] == [i for i, v in enumerate(values)
                                           if v is not None and _like(v, pattern)], pattern
        for name in ("small", "large"):
            assert _rows(server, fresh_db, sql.format(name)) == expected, (name, pattern)

    conn = server.connect(fresh_db)
    with conn.cursor() as cur:
        cur.execute("SET enable_profile = true")
        cur.execute("SELECT k FROM large WHERE s LIKE '%xxneedlexx%'")
        assert list(cur.fetchall()) == [(30000,)]
        cur.execute("SHOW QUERY PROFILE '/'")
        query_id = cur.fetchall()[0][0]
        cur.execute(f"SHOW QUERY PROFILE '/{query_id}'")
        profile = cur.fetchall()[0][0]
    conn.close()
    skipped = sum(int(n) for n in re.findall(r"PagesBloomFilterFiltered: (\d+)", profile))
    assert skipped > 0, profile
