"""Commands answered in the socket's data callback, without waking the connection's task.

With asyncio's streams every command costs two turns of the event loop: the data callback
feeds the reader and wakes the connection's task, whose next turn parses, answers and goes
back to waiting (a future, a task step, an extra epoll call). For a key lookup, whose answer
takes ~40 us, that overhead is as large as the work, and a prepared lookup from
mysql-connector is two commands (COM_STMT_RESET, then COM_STMT_EXECUTE).

`CommandReader` is the connection's StreamReader. While the connection's task waits for the
first bytes of a command (`idle`, set by server/limits.BoundedStream.read) and one whole packet
arrives, it first offers the packet to the connection (`answer`, DorisConnection.answer_at_once),
which may answer it right there: the reply is written before the callback returns and the task
never wakes. Anything it declines (another command, a statement the short circuit does not take,
a partial or pipelined packet, a reply that would not fit in one write) is fed to the reader as
before and handled by the task, in order. `start_server` is asyncio.start_server building this
reader.

After answering a command this way the event loop polls its sockets for a moment
(`PollingSelector`, POLL_AFTER_ANSWER_S) instead of going to sleep in epoll at once: a client
issuing key lookups sends its next command within ~100-200 us, and sleeping and being woken for
it cost the server more than the lookup (on this 2-core VM, a fifth of its CPU samples were the
kernel's task switch; one client's prepared lookups went from ~3,300 to ~4,100 a second). It
polls only while no statement runs in a worker thread (`cpu_slots.idle`), never longer than the
loop's own timeout, and an idle client costs the loop one such moment.
"""

from __future__ import annotations

import asyncio
import selectors
import time
from typing import Callable

from storage import cpu_slots

_LIMIT = 2 ** 16  # asyncio.start_server's default buffer limit
POLL_AFTER_ANSWER_S = 0.0003


class CommandReader(asyncio.StreamReader):
    """A StreamReader that lets its connection answer a whole command packet at once."""

    answer: Callable[[bytes], bool] | None = None  # True: answered, the bytes are consumed
    idle = False  # the connection's task waits for the first bytes of a command

    def feed_data(self, data: bytes) -> None:
        answer = self.answer
        if answer is not None and self.idle and not self._buffer and answer(data):
            return
        super().feed_data(data)


async def start_server(client_connected_cb, **kwargs) -> asyncio.AbstractServer:
    """asyncio.start_server, each connection reading through a CommandReader."""
    loop = asyncio.get_running_loop()

    def factory() -> asyncio.StreamReaderProtocol:
        reader = CommandReader(limit=_LIMIT, loop=loop)
        return asyncio.StreamReaderProtocol(reader, client_connected_cb, loop=loop)

    return await loop.create_server(factory, **kwargs)


class PollingSelector(selectors.DefaultSelector):
    """The loop's selector: after `poll_until` is set, the next wait first polls (timeout 0)
    until that moment or the wait's own timeout, then sleeps as usual."""

    def __init__(self) -> None:
        super().__init__()
        self.poll_until = 0.0

    def select(self, timeout: float | None = None):
        until = self.poll_until
        if not until or (timeout is not None and timeout <= 0):
            return super().select(timeout)
        self.poll_until = 0.0
        began = time.monotonic()
        if timeout is not None:
            until = min(until, began + timeout)
        poll = super().select
        while True:
            ready = poll(0)
            now = time.monotonic()
            if ready or now >= until:
                break
        if ready or timeout is not None and now - began >= timeout:
            return ready
        return poll(None if timeout is None else timeout - (now - began))


_SELECTOR: PollingSelector | None = None


def new_event_loop() -> asyncio.AbstractEventLoop:
    """The server's event loop (asyncio.Runner's loop_factory), over a PollingSelector."""
    global _SELECTOR
    _SELECTOR = PollingSelector()
    return asyncio.SelectorEventLoop(_SELECTOR)


def keep_polling() -> None:
    """A command was just answered in the data callback: poll for the next one a moment,
    unless statements run in worker threads (they need the GIL the polling loop would take)."""
    selector = _SELECTOR
    if selector is not None and cpu_slots.idle():
        selector.poll_until = time.monotonic() + POLL_AFTER_ANSWER_S
