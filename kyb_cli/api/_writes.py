"""The one place a write's aftermath happens: a background sync when `sync.auto` is on, and the
background filler, which gives the new version its vector (the write itself never waits for it)."""

from __future__ import annotations


class writes:  # noqa: N801 - used as `with writes(store):`, like the function it was
    """Around a write: when HEAD moved, start the optional background sync (never blocks, never raises).
    A class, not `@contextmanager`: `kyb query` imports this module (through api.work) and contextlib
    was ~0.5 ms of its floor (issue 38). A failed write (an exception) has no aftermath."""

    __slots__ = ("store", "before")

    def __init__(self, store) -> None:
        self.store = store

    def __enter__(self) -> None:
        self.before = self.store.head_sha()

    def __exit__(self, *exc) -> None:
        if exc[0] is not None or self.store.head_sha() == self.before:
            return
        from kyb_cli.core.index.staged import after_write as fill_after
        from kyb_cli.core.sync.background import after_write

        after_write(self.store)
        fill_after(self.store.path)
