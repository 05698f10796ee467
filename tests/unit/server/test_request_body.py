"""The Stream Load body over ASGI `receive` (server/http/request_body.py): read from a worker
thread while the pieces arrive on the event loop, in reads of any size; a chunked body past its
limit, a body cut short, and the server's stop end the read with an error."""

from __future__ import annotations

import asyncio
import threading

import pytest

from server.http.request_body import BodyTooLarge, MalformedBody, RequestBody


@pytest.fixture()
def loop():
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    yield loop
    loop.call_soon_threadsafe(loop.stop)
    thread.join(5)
    loop.close()


def _receive(pieces: list[bytes], end: str = "complete"):
    """An ASGI receive giving `pieces`, then the end: complete, disconnect, or never."""
    queue = list(pieces)

    async def receive():
        if queue:
            piece = queue.pop(0)
            return {"type": "http.request", "body": piece,
                    "more_body": bool(queue) or end != "complete"}
        if end == "disconnect":
            return {"type": "http.disconnect"}
        await asyncio.sleep(3600)
    return receive


def test_reads_of_any_size_see_the_whole_body(loop):
    pieces = [bytes([i]) * (1000 + i) for i in range(50)]
    body = RequestBody(_receive(pieces), loop, sum(map(len, pieces)))
    assert not body.started
    out = bytearray()
    while chunk := body.read(777):
        out += chunk
    assert bytes(out) == b"".join(pieces) and body.received == len(out) and body.done
    assert body.started and not body.unread_beyond(0)


def test_a_chunked_body_past_its_limit(loop):
    body = RequestBody(_receive([b"x" * 1000] * 10), loop, None, limit=2500,
                       too_large=lambda n: BodyTooLarge(f"too large: {n}"))
    with pytest.raises(BodyTooLarge):
        while body.read(1000):
            pass
    assert body.unread_beyond(10**9)  # the rest of a chunked body is unknown


def test_a_body_cut_short(loop):
    body = RequestBody(_receive([b"abc"], end="disconnect"), loop, 10)
    with pytest.raises(MalformedBody, match="before its declared length"):
        body.read()


def test_the_stop_ends_a_wait_for_the_client(loop):
    stopped = threading.Event()
    body = RequestBody(_receive([], end="never"), loop, 100, stopped=stopped)
    threading.Timer(0.2, stopped.set).start()
    with pytest.raises(MalformedBody, match="shutting down"):
        body.read(10)


def test_read_all_refuses_a_body_over_the_limit(loop):
    body = RequestBody(_receive([b"a" * 600, b"b" * 600]), loop, 1200)
    assert asyncio.run_coroutine_threadsafe(body.read_all(1000), loop).result(5) is None
    body = RequestBody(_receive([b"a" * 600, b"b" * 600]), loop, 1200)
    assert asyncio.run_coroutine_threadsafe(body.read_all(2000), loop).result(5) == \
        b"a" * 600 + b"b" * 600
