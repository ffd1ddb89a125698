"""Every record of one kind with its latest version and state, archived ones included.

Listings (`kyb tasks --all`, `kyb incidents --all`) must show finished work next to live work, and
finished work is no longer in the tree. The index's `keys` table already holds each key's latest
version and state, so a listing is one query (index/reads.py); the Git walk that answers the same
question is the test oracle (tests/support/oracle.py).
"""

from __future__ import annotations

from typing import Any

from kyb_cli.core.records.versions import CatalogEntry


def catalog(store: Any, kind: str) -> list[CatalogEntry]:
    """All keys of `kind` ever committed, each with its latest readable version (`store`: Store or path)."""
    from kyb_cli.core.index.reads import catalog as from_index

    return from_index(store, kind)
