"""The store one `kyb serve` process serves, and who is writing in the request being answered.

Attribution over HTTP is what the client says (headers `X-Kyb-Agent`, `X-Kyb-Session`,
`X-Kyb-Workspace`, the HTTP spelling of KYB_AGENT/KYB_SESSION/KYB_WORKSPACE); what it does not say
falls back to the server's own KYB_* settings, then `human` (the console's person). The server's
process tree is not walked: it describes whoever started the server, not whoever sends the request.
Labels are an audit aid supplied by the client, not an identity, exactly as on the CLI.
"""

from __future__ import annotations

import contextvars
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

LABEL_MAX = 200


@dataclass(frozen=True)
class Caller:
    agent: str
    session: str = ""
    workspace: str = ""


CALLER: contextvars.ContextVar[Caller | None] = contextvars.ContextVar("kyb_serve_caller", default=None)


def _label(value: str | None) -> str:
    return " ".join((value or "").split())[:LABEL_MAX]


def caller_from_headers(headers: Any) -> Caller:
    """The request's attribution labels; missing ones fall back to the server's KYB_* settings."""
    agent = _label(headers.get("x-kyb-agent")) or _label(os.environ.get("KYB_AGENT")) or "human"
    session = _label(headers.get("x-kyb-session")) or _label(os.environ.get("KYB_SESSION"))
    workspace = _label(headers.get("x-kyb-workspace"))
    return Caller(agent, session, workspace)


def caller_attribution(transport: str, default_workspace: str = ""):
    """The commit attribution of the request being answered (labels as the KYB_* settings would give
    them; a label is always there, so no process tree is walked)."""
    from kyb_cli import api

    caller = CALLER.get() or caller_from_headers({})
    return api.attribution(transport, environ={"KYB_AGENT": caller.agent, "KYB_SESSION": caller.session,
                                               "KYB_WORKSPACE": caller.workspace or default_workspace})


@dataclass
class Door:
    """What every route handler gets: the store path, the server's mode, this request's caller."""

    store_path: Path
    readonly: bool = False
    token_required: bool = False
    default_workspace: str = ""
    extra_capabilities: dict[str, Any] = field(default_factory=dict)

    def path(self) -> Path:
        return self.store_path

    @property
    def store_arg(self) -> Path:
        """The store this server was started on (api.handle's query takes it as a caller's --store)."""
        return self.store_path

    def store(self):
        from kyb_cli import api

        return api.open_store(self.store_path)

    def attribution(self, transport: str = "http"):
        return caller_attribution(transport, self.default_workspace)

    def capabilities(self) -> dict[str, Any]:
        from kyb_cli import api

        data = {"write": not self.readonly, "readonly": self.readonly, "semantic": api.semantic_available(),
                "mcp": True,
                "console": True, "token_required": self.token_required}
        data.update(self.extra_capabilities)
        return data
