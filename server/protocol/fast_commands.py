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
"""

from __future__ import annotations

import asyncio
from typing import Callable

_LIMIT = 2 ** 16  # asyncio.start_server's default buffer limit


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
