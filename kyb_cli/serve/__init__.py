"""The HTTP door (`kyb serve`): the API, MCP over HTTP and the web console, over the same core."""
