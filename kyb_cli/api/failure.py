"""A bug, told as one: every door turns an unexpected exception into this error (exit 70, `internal`).

An agent must be able to tell "your store is broken" (exit 4) from "kyb failed" (exit 70, the BSD
EX_SOFTWARE code), so no door maps an ordinary exception to a store error.
"""

from __future__ import annotations

from kyb_cli.core.errors import EXIT_INTERNAL, KybError, internal_error_message


class InternalError(KybError):
    """An exception kyb did not expect: a bug in kyb, never a property of the store or the input."""

    exit_code = EXIT_INTERNAL
    kind = "internal"


def internal_error(exc: BaseException) -> InternalError:
    """`internal error: ZeroDivisionError: … (a bug: please report it)` for an unexpected exception."""
    return InternalError(internal_error_message(exc))


def io_error(exc: OSError) -> KybError:
    """The store error (exit 4) a door gives for an OSError that reached it: `I/O error: …`, or for
    a permission error the path and the fix (`chmod u+w PATH`, or run kyb as its owner)."""
    from kyb_cli.core.canon.permissions import io_error as worded

    return worded(exc)


def as_error(exc: Exception) -> KybError:
    """The one mapping every door's call envelope uses for an exception that reached it: a KybError
    stands, an OSError (disk full, permissions…) is the store error `io_error` words (exit 4),
    anything else is a bug (`internal_error`, exit 70). KeyboardInterrupt and BrokenPipeError are
    the doors' own (a signal, a closed pipe), not errors of the call."""
    if isinstance(exc, KybError):
        return exc
    if isinstance(exc, OSError):
        return io_error(exc)
    return internal_error(exc)


def argument_shown(value: str) -> str:
    """A stray argument as a usage error may quote it: itself when it is short, printable and passes
    the secret scan, else `<N characters, not shown>` (a pasted token or PEM block never echoes)."""
    from kyb_cli.core.records.secrets import SHOWN_MAX, scan

    clean = value.isprintable() and len(value) <= SHOWN_MAX and next(scan(value, anywhere=True), None) is None
    return value if clean else f"<{len(value)} characters, not shown>"


def argument_shown_in(message: str) -> str:
    """`message` cut where a secret-looking value starts (what is left of an argument Click quoted
    in another spelling), with `<not shown>` in its place."""
    from kyb_cli.core.records.secrets import scan

    found = next(scan(message, anywhere=True), None)
    return message if found is None else message[:found.start] + "<not shown>"
