"""The kyb library: everything that knows about records, Git, the index and search.

Nothing in here imports Click or rich; the doors reach it only through `kyb_cli.api`. Its folders
are its rooms (docs/ARCHITECTURE.md has one line per module).
"""
