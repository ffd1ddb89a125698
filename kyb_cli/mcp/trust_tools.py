"""The MCP tools of "Knowing whether to trust a record": verify, stale, rules (as the CLI's commands)."""

from typing import Any

from mcp.types import CallToolResult

from kyb_cli.mcp.params import tool_params


class TrustTools:
    """Mixed into `Tools` (mcp/tools.py); `self.door` resolves the store and shapes answers and errors."""

    door: Any

    @tool_params("verify")
    def verify(self, **a: Any) -> CallToolResult:
        """Record that knowledge KEY was checked (the CLI's `kyb verify`): one commit; who and when are
        its attribution and time. `get` and query hits then carry `verified` with `current`."""

        def run() -> dict[str, Any]:
            from kyb_cli import api

            return api.handle("verify", self.door, a)

        return self.door.call(run)

    @tool_params("stale")
    def stale(self, **a: Any) -> CallToolResult:
        """Knowledge to check again: last verification (else last change) older than N days, a
        verification that no longer covers the text, or a passed `review_by`."""

        def run() -> dict[str, Any]:
            from kyb_cli import api

            return api.handle("stale", self.door, a)

        return self.door.call(run)

    @tool_params("rules")
    def rules(self, **_: Any) -> CallToolResult:
        """The store's standing rules for agents: live knowledge tagged `rule` (`context` shows them first)."""

        def run() -> dict[str, Any]:
            from kyb_cli import api

            return api.handle("rules", self.door, {})

        return self.door.call(run)
