"""The body of an HTTP refusal that is not a KybError: the same {error, exit_code, kind} every answer has.

A client reads one error shape whether the guard refused the request (401, 403, 413, 421) or the
router did (404, 405), so `exit_code` means what it means on the CLI: 1 not found, 2 usage, 3 refused
by a rule. `kind` says which refusal it was.
"""

from __future__ import annotations

from typing import Any

REFUSALS: dict[int, tuple[int, str]] = {
    400: (2, "usage"),
    401: (2, "unauthorized"),  # no or a wrong bearer token: the call was not made as it must be
    403: (3, "forbidden"),  # read-only server, a browser write from another origin: refused by a rule
    404: (1, "not_found"),
    405: (2, "usage"),  # a method the route does not have
    413: (3, "rejected"),  # over the body limit, as a record over 1 MiB is rejected
    421: (2, "misdirected"),  # a Host header that does not name this server
}


def refusal(status: int, message: str) -> dict[str, Any]:
    """`{"error": message, "exit_code": n, "kind": k}` for an HTTP status the guard or the router answers."""
    code, kind = REFUSALS.get(status, (70, "internal") if status >= 500 else (2, "usage"))
    return {"error": message, "exit_code": code, "kind": kind}


def json_media_problem(content_type: str | None) -> str | None:
    """Why a body sent with `content_type` is refused (it must be application/json), or None: the
    one rule of the API routes and /mcp."""
    media = (content_type or "").split(";")[0].strip().lower()
    if media == "application/json":
        return None
    return f"send the body as application/json (got '{media or 'no content type'}')"
