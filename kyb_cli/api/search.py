"""Search: THE query pipeline every door calls (time mode -> slice -> lexical + vectors -> fusion),
the index (rebuild, embed all, status) and the session-start context digest.

Light on purpose: `kyb query` imports this module on its hot path, so core is imported inside the
functions and the lexical path never loads pygit2, numpy, onnxruntime, rich or platformdirs.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from kyb_cli.api.store import _ensure_default, locate


def query(store: str | os.PathLike[str] | None = None, text: str = "", *, history: bool = False,
          as_of: str | None = None, changed_between: tuple[str, str] | list[str] | None = None,
          tags: list[str] | tuple[str, ...] = (), kind: str | None = None, status: str | None = None,
          service: str | None = None, priority: str | None = None, assignee: str | None = None,
          parent: str | None = None, limit: int = 10, recent: bool = False, semantic: bool = True,
          explain: bool = False, as_of_event: str | None = None,
          min_strength: str | None = None) -> tuple[Path, dict[str, Any]]:
    """(store path, response) for one query; `store` is the explicit --store (else the usual lookup).

    The response is `{count, hits, confident, semantic, mode, head}` (+ `pending_vectors`,
    `semantic_off`); each hit has `strength`, `found_by` and `snippet`. `min_strength="strong"`
    keeps only strong hits (docs/SEARCH.md "How sure is an answer").
    Time arguments are checked before anything is created, so a bad `--as-of` writes nothing.
    `as_of_event` T asks what was true in the world at T (event time), by what the store knows now,
    or at `as_of` W when both are given (bi-temporal)."""
    from kyb_cli.core.search.pipeline import search
    from kyb_cli.core.search.slice import Filters
    from kyb_cli.core.times.parse import time_mode

    location = locate(store)
    mode, as_of_t, window = time_mode(history=history, as_of=as_of, changed_between=changed_between,
                                      store_path=location.path)
    event_t = None
    if as_of_event is not None:
        from kyb_cli.core.errors import UsageError
        from kyb_cli.core.times.parse import END, parse_time

        if mode in ("history", "changed_between"):
            raise UsageError("--as-of-event combines with --as-of only (not --history or --changed-between)")
        event_t = parse_time(as_of_event, bound=END, store_path=location.path)
        mode = "as_of_event"
    _ensure_default(location)
    filters = Filters(tags=list(tags), kind=kind, status=status, service=service, priority=priority,
                      assignee=assignee, parent=parent)
    response = search(location.path, text, mode=mode, as_of=as_of_t, window=window, filters=filters,
                      limit=limit, recent=recent, semantic=semantic, explain=explain, as_of_event=event_t,
                      min_strength=min_strength)
    return location.path, response


def semantic_off_message(reason: str) -> str:
    """The one-line remark a door prints when semantic search is off, with the fix."""
    from kyb_cli.core.embed import off_message

    return off_message(reason)


def rebuild_index(store_path: Path, progress=None) -> dict:
    """`kyb reindex`: rebuild the index from Git now; counts and timing."""
    from kyb_cli.core.index.fresh import rebuild

    return rebuild(store_path, progress=progress)


def embed_all(store_path: Path, progress=None) -> dict:
    """`kyb index --embed`: fill every missing vector."""
    from kyb_cli.core.search.vectors import embed_all as core

    return core(store_path, progress=progress)


def index_status(store_path: Path) -> dict:
    """Counts of the index and its vectors."""
    from kyb_cli.core.search.vectors import status

    return status(store_path)


def context(store_path: Path, **kwargs: Any) -> dict[str, Any]:
    """The session-start digest's data (render it with `render_context`)."""
    from kyb_cli.core.tools.context import gather

    return gather(store_path, **kwargs)


def render_context(data: dict[str, Any], *, brief: bool = False) -> str:
    from kyb_cli.core.tools.context import render, render_brief

    return render_brief(data) if brief else render(data)


def context_unavailable(reason: str) -> str:
    from kyb_cli.core.tools.context import unavailable

    return unavailable(reason)


def context_hook_json(text: str) -> str:
    from kyb_cli.core.tools.context import hook_json

    return hook_json(text)
