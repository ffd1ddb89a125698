"""KEEP: the one marker for "an argument the caller did not give: keep the stored value".

A leaf module (imports nothing of kyb) so the porcelain can name it at import time without loading the
core, and the core's writers and every door compare against the very same object.
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (~5 ms of every `kyb query`)
if TYPE_CHECKING:
    from typing import Any


class _Keep:
    """Marks an argument the caller did not give: keep the stored value (tags, deadline fields, blocked_by)."""

    _instance = None

    def __new__(cls):
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "KEEP"

    def __bool__(self) -> bool:
        return False


KEEP: Any = _Keep()
