"""Errors with the exit codes of the CLI contract.

0 success, 1 not found, 2 usage, 3 rejected by a rule (nothing written), 4 store error, 5 remote error;
70 (EXIT_INTERNAL, sysexits' EX_SOFTWARE) an internal error: any exception that is no KybError is a bug
of kyb, never "your store is broken". Every layer raises these; each door (CLI, MCP, HTTP) maps them
to its own way of saying no, and an unexpected exception to `internal_error_message(exc)`.
"""

from __future__ import annotations


class KybError(Exception):
    """Base of every error kyb reports to a user; `exit_code` is the CLI's exit status."""

    exit_code = 4
    kind = "store_error"

    def __init__(self, message: str, *, field: str | tuple[str, ...] | None = None, **details: object) -> None:
        super().__init__(message)
        self.message = message
        self.details = details
        # the parameter(s) the message names, in the table's spelling (`remind_days`): each door
        # says it its own way (`--remind-days` on the CLI), see kyb_cli/api/operations.spelled
        self.fields: tuple[str, ...] = (field,) if isinstance(field, str) else tuple(field or ())


class NotFound(KybError):
    """A key or a revision that does not exist (exit 1)."""

    exit_code = 1
    kind = "not_found"


class UsageError(KybError):
    """A call whose arguments are off (exit 2)."""

    exit_code = 2
    kind = "usage"


class Rejected(KybError):
    """A write refused by a rule; nothing was written (exit 3)."""

    exit_code = 3
    kind = "rejected"


class StoreError(KybError):
    """The store cannot be used: not a store, corrupt, locked past the wait, I/O (exit 4)."""

    exit_code = 4
    kind = "store_error"


class LockTimeout(StoreError):
    """Another writer held the store lock longer than the bounded wait."""


class RemoteError(KybError):
    """The remote could not be reached or refused us (exit 5)."""

    exit_code = 5
    kind = "remote_error"


EXIT_INTERNAL = 70


def internal_error_message(exc: BaseException) -> str:
    """What every door says of an exception that is no KybError (after `kyb: ` on the CLI)."""
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    name = type(exc).__name__
    return f"internal error: {name}: {text} (a bug: please report it)" if text else \
        f"internal error: {name} (a bug: please report it)"


EXIT_CODES = {
    0: "success (a query with no hits is a success)",
    1: "not found (key or revision)",
    2: "usage error",
    3: "rejected by a rule (nothing written)",
    4: "store error (not a store, corrupt, locked past the wait, I/O)",
    5: "remote error (sync)",
}
