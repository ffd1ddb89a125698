"""`kyb mcp` stopped by a signal (SIGTERM, SIGHUP, SIGINT) the way the end of stdin stops it.

A door keeps rows in memory and writes them a little later (a new question's vectors: core/embed
`_write_later`; the read log: core/index/receipts `_write_later`); an atexit hook writes what is left
when the process ends. A signal's default action kills the process without running atexit, and MCP
clients stop a stdio server by closing its stdin and, after a grace period, SIGTERM (some send
SIGTERM alone; a terminal sends SIGHUP, Ctrl-C SIGINT, which the SDK's loop turned into an internal
error, exit 70). So the door's own loop takes these signals: the first one ends the read of stdin
as its end would (the session closes, `kyb mcp` returns, the process exits 0 and atexit writes what
was kept), which is what `kyb serve` does on SIGINT/SIGTERM (serve/run.py: exit 0). A call in
flight gets GRACE_S to finish and be answered (kyb serve's graceful timeout); after that, or at a
second signal (uvicorn's force_exit), the atexit hooks run at once and the process exits 0 without
waiting for it.

A read answered on the loop itself (server.answer_reads_inline, lean.py: milliseconds) is not
interrupted: the signal is taken once it has returned. A stdin that is not a pipe (a terminal, a
file) is read on a worker thread, which a stop cannot interrupt: on a terminal waiting for a line
the stop takes GRACE_S (before this, Ctrl-C there hung until a line came).
"""

from __future__ import annotations

import asyncio
import signal
from contextlib import contextmanager
from typing import Callable, Iterator

GRACE_S = 3.0  # as `kyb serve`'s timeout_graceful_shutdown (serve/run.py)
SIGNALS = (signal.SIGTERM, signal.SIGHUP, signal.SIGINT)


class Stop:
    """Whether a stop was asked, and the read of stdin it ends (`readline`). `busy()`: whether a
    tool call is under way (server.KybServer.calls)."""

    def __init__(self, busy: Callable[[], bool] = lambda: False) -> None:
        self.requested = False
        self.busy = busy
        self.interrupt: Callable[[], None] | None = None  # ends a read of stdin under way (pipes.LoopLines)

    async def readline(self, raw) -> bytes:
        """`raw.readline()`, or b"" (the end of stdin) once a stop is asked, before or during the read;
        either end only once the calls under way are done: the end of stdin cancels the SDK's
        handlers (a write on its thread was finished anyway, its answer dropped), so a call that
        finishes in time is answered first — a client may close stdin right after its last request,
        or just before the signal. A line read once the stop is asked is left unanswered.
        Two flag checks a line, no cancel scope (anyio's: ~4.7 us a line, measured)."""
        if not self.requested:
            line = await raw.readline()
            if line and not self.requested:
                return line
        import anyio

        while self.busy():  # only while stopping, GRACE_S at most (`ask`): a poll is enough
            await anyio.sleep(0.02)
        return b""

    def ask(self, loop: asyncio.AbstractEventLoop) -> None:
        """The first signal: stop reading (a pipe read on the loop at once; a terminal or a file, read
        on a worker thread, cannot be interrupted), and exit anyway if the stop is not over in
        GRACE_S; a second one: exit now."""
        if self.requested:
            exit_now()
            return
        self.requested = True
        loop.call_later(GRACE_S, exit_now)
        if self.interrupt is not None:
            self.interrupt()


def exit_now() -> None:
    """Write what the process kept (its atexit hooks: the pending vectors and read-log rows), then
    exit 0 without waiting for a call in flight or a client that does not read its reply."""
    import atexit
    import os
    import sys

    try:
        sys.stderr.write("kyb: stopped without waiting further (for a call in flight, or a terminal's read)\n")
        sys.stderr.flush()
    except (OSError, ValueError):  # no stderr left: the exit matters, not the note
        pass
    atexit._run_exitfuncs()  # each hook runs once: the registry is emptied as they run
    os._exit(0)


@contextmanager
def on_signals(busy: Callable[[], bool] = lambda: False) -> Iterator[Stop]:
    """The running loop takes SIGNALS for the block (the process's defaults again after it: the exit
    that follows writes what was kept); `busy` says whether a call is under way."""
    loop = asyncio.get_running_loop()
    stop = Stop(busy)
    taken = []
    for sig in SIGNALS:
        try:
            loop.add_signal_handler(sig, stop.ask, loop)
        except (RuntimeError, ValueError):  # a loop off the main thread (an embedding): no signals there
            continue
        taken.append(sig)
    try:
        yield stop
    finally:
        for sig in taken:
            loop.remove_signal_handler(sig)
