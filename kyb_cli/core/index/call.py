"""One call's state: whether its historical questions wait for a staged index's history, what shows
the wait, and whether any of its reads answered from an incomplete history.

It lives in a `contextvars.ContextVar`, never in a module global: under `kyb serve`'s thread pool
(each request runs in its own copy of the context) or in threads of one process, every call sees and
reports only its own reads. A door starts a call with `begin()`; the core reads `current()`.
"""

from __future__ import annotations

try:  # contextvars.py only re-exports its C module's names: one module fewer on every `kyb query` (issue 38)
    from _contextvars import ContextVar
except ImportError:  # an interpreter without CPython's module
    from contextvars import ContextVar
from kyb_cli.core.plain import plain

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (~5 ms of every `kyb query`)
if TYPE_CHECKING:
    from typing import Callable


@plain
class Call:
    wait: bool = True
    # progress(done, total, stage) while waiting; None = silent
    progress: Callable[[int, int, str], None] | None = None
    history_complete: bool = True


_CALL: ContextVar[Call | None] = ContextVar("kyb_call", default=None)


def current() -> Call:
    """This context's call, made on first use (a thread that began none gets its own)."""
    call = _CALL.get()
    if call is None:
        call = Call()
        _CALL.set(call)
    return call


def begin(wait: bool = True, progress: Callable[[int, int, str], None] | None = None) -> Call:
    """A new call in this context: its own policy, nothing seen yet."""
    call = Call(wait=wait, progress=progress)
    _CALL.set(call)
    return call
