"""VARIANT columns through Stream Load: JSON lines whose fields are objects, arrays, scalars
and strings (the GitHub-events shape of Doris's VARIANT docs: `actor`, `repo`, `payload`
objects), the whole line into one VARIANT column with `jsonpaths` `$`, and CSV text; values
print as Doris prints a VARIANT (keys sorted, NULL members left out, booleans 1/0) and
sub-values read through `v['a']['b']`."""

from __future__ import annotations

import json

import pytest
from test_stream_load import _put, _rows


@pytest.fixture
def events(server, fresh_db):
    conn = server.connect(fresh_db)
    with conn.cursor() as cur:
        cur.execute("""CREATE TABLE github_events (id BIGINT NOT NULL, type VARCHAR(30) NULL,
            actor VARIANT NULL, repo VARIANT NULL, payload VARIANT NULL, public BOOLEAN NULL)
            DUPLICATE KEY(id) DISTRIBUTED BY HASH(id) BUCKETS 3
            PROPERTIES ("replication_num" = "1")""")
    conn.close()
    return fresh_db


LINES = [
    {"id": 1, "type": "PushEvent", "actor": {"login": "ann", "id": 282080, "gravatar_id": ""},
     "repo": {"name": "apache/doris", "id": 1920851},
     "payload": {"size": 4, "ref": "refs/heads/master", "commits": [{"sha": "91e", "distinct": True}],
                 "before": None}, "public": True},
    {"id": 2, "type": "WatchEvent", "actor": {"login": "bob", "id": 7},
     "repo": {"name": "apache/doris", "id": 1920851}, "payload": {"action": "started"},
     "public": True},
    {"id": 3, "type": "IssueCommentEvent", "actor": {"login": "cy", "id": 9},
     "repo": {"name": "x/y", "id": 5}, "payload": {"issue": {"number": 35228}, "action": "created"},
     "public": False},
    {"id": 4, "type": "WatchEvent", "actor": "ghost", "repo": [1, 2], "payload": 12.5},
]


def test_json_lines_into_variant_columns(server, events):
    body = "\n".join(json.dumps(x) for x in LINES).encode()
    status, reply = _put(server, events, "github_events", body,
                         {"format": "json", "read_json_by_line": "true"})
    assert status == 200 and reply["Status"] == "Success", reply
    assert reply["NumberLoadedRows"] == 4 and reply["NumberFilteredRows"] == 0
    assert _rows(server, events, "SELECT id, actor, repo, payload FROM github_events ORDER BY id") == [
        (1, '{"gravatar_id":"","id":282080,"login":"ann"}', '{"id":1920851,"name":"apache/doris"}',
         '{"commits":[{"distinct":1,"sha":"91e"}],"ref":"refs/heads/master","size":4}'),
        (2, '{"id":7,"login":"bob"}', '{"id":1920851,"name":"apache/doris"}',
         '{"action":"started"}'),
        (3, '{"id":9,"login":"cy"}', '{"id":5,"name":"x/y"}',
         '{"action":"created","issue":{"number":35228}}'),
        (4, '"ghost"', "[1,2]", "12.5")]
    # the docs' queries: sub-values cast for GROUP BY and filters
    assert _rows(server, events, """SELECT cast(repo["name"] as text) AS repo_name, count() AS stars
        FROM github_events WHERE type = 'WatchEvent' GROUP BY repo_name
        ORDER BY stars DESC, repo_name""") == [(None, 1), ("apache/doris", 1)]
    assert _rows(server, events, """SELECT cast(repo["name"] as string),
        cast(payload["issue"]["number"] as int), actor['login'] FROM github_events
        WHERE cast(payload["action"] as string) = 'created'
        AND cast(payload["issue"]["number"] as int) > 10""") == [("x/y", 35228, "cy")]


def test_whole_line_into_one_variant(server, fresh_db):
    conn = server.connect(fresh_db)
    with conn.cursor() as cur:
        cur.execute("""CREATE TABLE logs (k BIGINT, v VARIANT) DUPLICATE KEY(k)
            DISTRIBUTED BY HASH(k) BUCKETS 1 PROPERTIES ("replication_num" = "1")""")
    conn.close()
    body = b'{"k": 1, "msg": "hi", "tags": {"b": false, "a": null}}\n{"k": 2, "n": 1.0}\n'
    status, reply = _put(server, fresh_db, "logs", body,
                         {"format": "json", "read_json_by_line": "true",
                          "jsonpaths": '["$.k", "$"]', "columns": "k, v"})
    assert status == 200 and reply["Status"] == "Success", reply
    assert _rows(server, fresh_db, "SELECT k, v, v['tags'], v['msg'] FROM logs ORDER BY k") == [
        (1, '{"k":1,"msg":"hi","tags":{"b":0}}', '{"b":0}', "hi"),
        (2, '{"k":2,"n":1}', None, None)]


def test_csv_into_variant(server, fresh_db):
    conn = server.connect(fresh_db)
    with conn.cursor() as cur:
        cur.execute("""CREATE TABLE c (k BIGINT, v VARIANT NOT NULL) UNIQUE KEY(k)
            DISTRIBUTED BY HASH(k) BUCKETS 1 PROPERTIES ("replication_num" = "1")""")
    conn.close()
    body = b'1|{"b": [1, 2], "a": "x"}\n2|plain text\n3|42\n1|{"a": "y"}\n4|\\N\n'
    status, reply = _put(server, fresh_db, "c", body, {"column_separator": "|",
                                                       "max_filter_ratio": "0.5"})
    assert status == 200 and reply["Status"] == "Success", reply
    assert reply["NumberLoadedRows"] == 4 and reply["NumberFilteredRows"] == 1, reply
    assert _rows(server, fresh_db, "SELECT k, v, v['a'] FROM c ORDER BY k") == [
        (1, '{"a":"y"}', "y"), (2, '"plain text"', None), (3, "42", None)]
