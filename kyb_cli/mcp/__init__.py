"""The MCP door (`kyb mcp`): needs the optional SDK, `pip install kyb-cli[mcp]`."""
