"""The kyb library: everything that knows about records, Git, the index and search.

Nothing in here imports Click or rich; the CLI, MCP server and hooks are thin layers on top.
"""
