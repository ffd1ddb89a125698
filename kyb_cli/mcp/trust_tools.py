"""The MCP tools of "Knowing whether to trust a record": verify, stale, rules (as the CLI's commands)."""

from typing import Annotated, Any

from mcp.types import CallToolResult
from pydantic import Field

Key = Annotated[str, Field(description="Record key: [a-z0-9-], at most 100 characters.")]


class TrustTools:
    """Mixed into `Tools` (mcp/tools.py); `self.door` resolves the store and shapes answers and errors."""

    door: Any

    def verify(self, key: Key,
               source: Annotated[str, Field(description="What the fact was checked against: file, URL, command.")],
               rev: Annotated[str, Field(description="The source's revision that was checked (commit, version).")] = "",
               note: Annotated[str, Field(description="How it was checked, in a line.")] = "",
               ) -> CallToolResult:
        """Record that knowledge KEY was checked (the CLI's `kyb verify`): one commit; who and when are
        its attribution and time. `get` and query hits then carry `verified` with `current`."""

        def run() -> dict[str, Any]:
            from kyb_cli import api

            return api.verify(self.door.store(), key, source=source, rev=rev, note=note,
                              attribution=self.door.attribution()).to_json()

        return self.door.call(run)

    def stale(self,
              days: Annotated[int | None, Field(ge=0, description="Older than N days is stale (default: config "
                                                "stale.days, else 90).")] = None,
              today: Annotated[str | None, Field(description="Judge as if today were YYYY-MM-DD.")] = None,
              ) -> CallToolResult:
        """Knowledge to check again: last verification (else last change) older than N days, a
        verification that no longer covers the text, or a passed `review_by`."""

        def run() -> dict[str, Any]:
            from kyb_cli import api

            return api.stale(self.door.path(), days=days, today=today)

        return self.door.call(run)

    def rules(self) -> CallToolResult:
        """The store's standing rules for agents: live knowledge tagged `rule` (`context` shows them first)."""

        def run() -> dict[str, Any]:
            from kyb_cli import api

            return api.rules(self.door.path())

        return self.door.call(run)
