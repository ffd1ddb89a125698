"""The deadlines block on stderr after successful `query`, `get`, `tasks` and `incidents`.

Owned by the deadlines work (issue 5); other commands just call `print_deadlines_block(store)` after
they emitted their answer. It must never fail the command: any error is swallowed here.
"""

from __future__ import annotations


def print_deadlines_block(store) -> None:
    """Print up to five due/overdue open tasks to stderr (no-op until deadlines exist)."""
    return None
