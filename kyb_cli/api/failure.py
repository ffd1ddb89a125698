"""A bug, told as one: every door turns an unexpected exception into this error (exit 70, `internal`).

An agent must be able to tell "your store is broken" (exit 4) from "kyb failed" (exit 70, the BSD
EX_SOFTWARE code), so no door maps an ordinary exception to a store error.
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (~5 ms of every `kyb query`)
if TYPE_CHECKING:
    from typing import Any, Callable

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


def answer(run: Callable[[], Any], *, wait: bool = True, own: tuple[type[BaseException], ...] = ()) -> Any:
    """The one per-call envelope of every door (CLI, MCP, HTTP): `run()` in a fresh call context
    (nothing seen yet; `wait=False`: a question about the past does not wait for a new index's
    history, as a server answers), its answer with `"history_complete": false` when a read of the call
    answered before that history was in (`with_history_flag`), or one KybError raised for whatever
    failed (`as_error`: a store error, exit 4 for an OSError, a bug, exit 70, for anything else; the
    exception it came from is its `__cause__`). `own`: exceptions the door handles itself (Click's
    exits, a closed pipe), raised as they are."""
    from kyb_cli.api.search import history_wait_policy, reset_history_state, with_history_flag

    reset_history_state()
    if not wait:
        history_wait_policy(False)
    try:
        data = run()
    except KybError:
        raise
    except own:
        raise
    except Exception as exc:  # noqa: BLE001 — every other failure is told as a KybError, in every door
        raise as_error(exc) from exc
    return with_history_flag(data)


def answer_text(data: Any) -> str:
    """An answer as every door writes it for a program: one line of JSON, text as is (not \\u-escaped),
    no space after `,` and `:` (the same as the HTTP API's bodies; ~6% of a query answer's bytes)."""
    import json

    return json.dumps(data, ensure_ascii=False, separators=(",", ":"))


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
