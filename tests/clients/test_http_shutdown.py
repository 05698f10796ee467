"""The HTTP port stops with the server: SIGTERM during a Stream Load whose client is still
sending ends the load with a Fail reply (nothing loaded) and the process exits cleanly, in
seconds, with keep-alive connections open."""

from __future__ import annotations

import base64
import http.client
import json
import threading
import time


def test_sigterm_during_a_streamed_load(server_factory):
    server = server_factory()
    server.start()
    conn = server.connect()
    with conn.cursor() as cur:
        cur.execute("CREATE DATABASE d")
        cur.execute("CREATE TABLE d.t (k INT, v INT) DISTRIBUTED BY HASH(k) BUCKETS 1 "
                    "PROPERTIES ('replication_num' = '1')")
    conn.close()
    idle = http.client.HTTPConnection("127.0.0.1", server.http_port, timeout=30)
    idle.request("GET", "/api/health")
    assert idle.getresponse().read()  # a keep-alive connection left open

    def slow_body():
        for i in range(60):
            yield b"%d,%d\n" % (i, i)
            time.sleep(0.25)

    replies = []

    def load():
        client = http.client.HTTPConnection("127.0.0.1", server.http_port, timeout=30)
        try:
            client.request("PUT", "/api/d/t/_stream_load", body=slow_body(), headers={
                "Authorization": "Basic " + base64.b64encode(b"root:").decode(),
                "column_separator": ",", "Transfer-Encoding": "chunked"},
                encode_chunked=True)
            replies.append(json.loads(client.getresponse().read()))
        except (OSError, http.client.HTTPException) as e:  # the body cut short by the stop
            replies.append(e)

    sender = threading.Thread(target=load)
    sender.start()
    time.sleep(1.5)
    started = time.monotonic()
    assert server.stop() == 0 and server.graceful
    assert time.monotonic() - started < 10
    sender.join(30)
    reply = replies[0]  # the Fail reply, unless the client was still sending when the
    if isinstance(reply, dict):  # connection closed (http.client: a broken pipe; curl reads it)
        assert reply["Status"] == "Fail" and "shutting down" in reply["Message"]
    server.start()
    conn = server.connect()
    with conn.cursor() as cur:
        cur.execute("SELECT count(*) FROM d.t")
        assert cur.fetchone()[0] == 0
    conn.close()
