"""The one place a write's aftermath happens: a background sync when `sync.auto` is on, and the
background filler, which gives the new version its vector (the write itself never waits for it)."""

from __future__ import annotations

from contextlib import contextmanager

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (~5 ms of every `kyb query`)
if TYPE_CHECKING:
    from typing import Iterator


@contextmanager
def writes(store) -> Iterator[None]:
    """Around a write: when HEAD moved, start the optional background sync (never blocks, never raises)."""
    before = store.head_sha()
    yield
    if store.head_sha() != before:
        from kyb_cli.core.index.staged import after_write as fill_after
        from kyb_cli.core.sync.background import after_write

        after_write(store)
        fill_after(store.path)
