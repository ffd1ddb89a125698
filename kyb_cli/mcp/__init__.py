"""The MCP door (`kyb mcp`): needs the optional SDK, kyb's `mcp` extra (`pipx install '.[mcp]'`)."""
