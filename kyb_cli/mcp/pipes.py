"""stdio on the event loop when fd 0 and fd 1 are pipes or sockets (how an agent runs `kyb mcp`).

The SDK reads and writes stdio through anyio's worker threads: three hand-offs per call (read the
line, write the reply, flush it), each waiting for a thread to be scheduled, which on a loaded
2-core machine cost as much as a warm lexical answer (issue 27). A pipe or a socket is read and
written by asyncio's own pipe transports instead: no thread, and the loop still never blocks (a
reply the client is slow to read is buffered, and requests keep being read meanwhile). Anything
else (a regular file, a terminal, whose O_NONBLOCK would leak to the shell) keeps the SDK's threads.
"""

from __future__ import annotations

import asyncio
import os
import stat

LINE_LIMIT = 1 << 30  # one frame may be as long as this (the SDK's own reader has no limit either)


def pipe_like(fd: int) -> bool:
    """Whether `fd` is a pipe or a socket (the only files asyncio's pipe transports take safely)."""
    try:
        mode = os.fstat(fd).st_mode
    except OSError:
        return False
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)


def divert_stdout() -> int | None:
    """A private duplicate of fd 1 for the protocol, fd 1 itself pointed at stderr (stray output of
    a handler or a child misses the wire), as the SDK does when it writes stdout itself; None when
    fd 1 is not a pipe or a socket (the SDK's threads then write it) or cannot be duplicated."""
    import fcntl

    if not pipe_like(1):
        return None
    try:
        private = fcntl.fcntl(1, fcntl.F_DUPFD_CLOEXEC, 3)
    except OSError:
        return None
    try:
        os.dup2(2, 1)
    except OSError:
        os.close(private)
        return None
    return private


def restore(fd: int, private: int) -> None:
    """Point `fd` back at the wire `private` duplicates, blocking again as the client made it."""
    try:
        os.set_blocking(private, True)
        os.dup2(private, fd)
    except OSError:
        pass


class LoopLines:
    """`await readline()` of a pipe read on the event loop; b"" at the end, as a file's readline."""

    def __init__(self, reader: asyncio.StreamReader, transport=None) -> None:
        self.reader, self.transport = reader, transport

    @classmethod
    async def open(cls, fileobj) -> "LoopLines":
        loop = asyncio.get_running_loop()
        reader = asyncio.StreamReader(limit=LINE_LIMIT, loop=loop)
        transport, _ = await loop.connect_read_pipe(
            lambda: asyncio.StreamReaderProtocol(reader, loop=loop), fileobj)
        return cls(reader, transport)

    def interrupt(self) -> None:
        """End the reading here, as the pipe's end would (a stop by a signal: stop.py): the read
        under way returns what it has, the next ones b"". Nothing more is read (no bytes fed
        after the end)."""
        if self.transport is not None:
            self.transport.pause_reading()
        self.reader.feed_eof()

    async def readline(self) -> bytes:
        try:
            return await self.reader.readuntil(b"\n")
        except asyncio.IncompleteReadError as exc:  # the end: the last line had no newline
            return exc.partial


class LoopWriter:
    """The SDK's `stdout` (text `write`, then `flush`) over a pipe written on the event loop: each
    write goes out at once when the pipe has room, the rest is buffered; `flush` waits for room."""

    def __init__(self, writer: asyncio.StreamWriter) -> None:
        self.writer = writer

    @classmethod
    async def open(cls, fileobj) -> "LoopWriter":
        loop = asyncio.get_running_loop()
        transport, protocol = await loop.connect_write_pipe(
            lambda: asyncio.streams.FlowControlMixin(loop=loop), fileobj)
        return cls(asyncio.StreamWriter(transport, protocol, None, loop))

    async def write(self, text: str) -> None:
        self.writer.write(text.encode("utf-8"))

    async def flush(self) -> None:
        await self.writer.drain()

    def close(self) -> None:
        self.writer.close()
