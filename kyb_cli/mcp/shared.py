"""What the MCP tools share: the reader's day as a parameter type (the deadlines block rides along
through api.handle_dated)."""

from kyb_cli.api.operations import TODAY
from kyb_cli.mcp.params import annotation

Day = annotation(TODAY)  # the reader's day of the deadlines block: the table's `today`
