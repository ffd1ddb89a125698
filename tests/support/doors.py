"""A door for calling `api.handle` in-process: what the CLI, MCP and HTTP doors give it (a store, its
path, the caller's attribution), without a door library."""

from __future__ import annotations


class StoreDoor:
    def __init__(self, store, transport: str = "test"):
        from kyb_cli import api

        self._store = store if hasattr(store, "path") else api.open_store(store)
        self._transport = transport

    def store(self):
        return self._store

    def path(self):
        return self._store.path

    def attribution(self):
        from kyb_cli import api

        return api.attribution(self._transport)

    store_arg = None
