"""kyb: a local-first memory for coding agents, kept in Git.

`kyb_cli.core` is the library (records, store, index, search, embedding) and knows nothing of Click;
`kyb_cli.cli` is the command line, `kyb_cli.mcp` the MCP server: thin doors over the same core.
"""

__version__ = "0.1.0"
