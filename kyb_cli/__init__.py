"""kyb: a local-first memory for coding agents, kept in Git.

`kyb_cli.core` is the library (records, canon, index, search, embedding) and knows nothing of Click;
`kyb_cli.api` is its porcelain, the Python API; `kyb_cli.cli` (the command line) and `kyb_cli.mcp`
(the MCP server) are thin doors over that one porcelain. See docs/ARCHITECTURE.md.
"""

__version__ = "0.1.0"
