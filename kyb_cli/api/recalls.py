"""Recall: what the store holds that bears on a text, only when the answer is confident (issue 43);
and the prompt hook built on it (`kyb recall --hook-json`).

`recall` is the query pipeline (api.search.query) asked for strong hits only, cut to three, each
with its freshness; not confident is an empty answer. `recall_hook` reads a client's hook JSON
(Claude Code UserPromptSubmit, Codex UserPromptSubmit, Gemini CLI BeforeAgent), recalls with its
`prompt` by words only, past a higher bar than `strong`, under a hard time budget, and answers the hook JSON to print, or None: it
never stands in a session's way (the CLI turns any error into one stderr line and exit 0).
"""

from __future__ import annotations

import os
from typing import Any

# The hook's budget for the recall itself (ms): the lexical answer on a 10k store takes a few tens of
# ms; past this the hook prints nothing rather than hold up the prompt. KYB_RECALL_BUDGET_MS overrides.
HOOK_BUDGET_MS = 250


def recall(store: str | os.PathLike[str] | None, text: str, *, limit: int = 3, semantic: bool = True,
           hook_bar: bool = False) -> dict[str, Any]:
    """`{confident, count, hits}`: at most `limit` (1-3) strong hits for `text`, each with key, title,
    kind, sha, state, snippet (<= 72 characters), stale, verified, strength, found_by; no hits unless
    confident. `semantic`: fuse search by meaning when a model is there. `hook_bar`: only hits that
    clear the prompt hook's higher bar (core/tools/recall.py HOOK_COVER, HOOK_LEAD; words only).
    Raises what `query` raises."""
    from kyb_cli.api.search import query
    from kyb_cli.core.tools.recall import MAX_HITS, over_the_bar, shaped, topic_of

    if not text.strip():
        return shaped({})
    if hook_bar:
        text = topic_of(text)  # what the prompt is about, not how it asks
    limit = max(1, min(int(limit), MAX_HITS))
    _path, response = query(store, text, limit=limit, semantic=semantic and not hook_bar, min_strength="strong",
                            explain=hook_bar)
    return shaped(over_the_bar(response) if hook_bar else response, limit)


def recall_hook(raw: str, store: str | os.PathLike[str] | None = None, *,
                budget_ms: float | None = None) -> str | None:
    """The hook answer (JSON text) for the client's hook input `raw`, or None when there is nothing
    new and confident to add. Raises ValueError (not hook JSON), TimeoutError (past the budget),
    KybError (no store, an index that cannot be read)."""
    from kyb_cli.api.store import locate
    from kyb_cli.core.errors import StoreError
    from kyb_cli.core.tools.recall import Session, hook_json, hook_text, prompt_of, sessions_dir

    if not raw.strip():
        raise ValueError("no hook input on stdin")
    prompt, session_id, event = prompt_of(raw)
    if not prompt.strip():
        return None
    location = locate(store)
    if not (location.path / ".git").exists():  # a hook never creates the default store
        raise StoreError(f"no store at {location.path}")
    answer = _within(lambda: recall(store, prompt, hook_bar=True), _budget(budget_ms))
    if not answer["confident"]:
        return None
    session = Session(sessions_dir(), session_id) if session_id else None
    hits = session.fresh(answer["hits"]) if session else answer["hits"]
    if not hits:
        return None
    text = hook_text(hits)
    if session:
        session.record(hits, text)
    from kyb_cli.api._receipts import hook_read

    hook_read(location.path, session_id, hits)  # what the hook showed the agent is read (receipts)
    return hook_json(text, event)


def _budget(given: float | None) -> float:
    if given is not None:
        return given
    try:
        return float(os.environ.get("KYB_RECALL_BUDGET_MS", "") or HOOK_BUDGET_MS)
    except ValueError:
        return HOOK_BUDGET_MS


def _within(fn, budget_ms: float) -> Any:
    """fn() in a daemon thread, given `budget_ms`; TimeoutError past it (the thread is left to end
    with the process: an index read is a cache read, a cut write is rolled back by SQLite)."""
    import contextvars
    import threading
    import time

    out: dict[str, Any] = {}

    def run() -> None:
        try:
            out["value"] = fn()
        except BaseException as exc:  # noqa: BLE001 - handed to the caller
            out["error"] = exc

    ctx = contextvars.copy_context()
    worker = threading.Thread(target=ctx.run, args=(run,), daemon=True, name="kyb-recall")
    start = time.monotonic()
    worker.start()
    worker.join(budget_ms / 1000)
    if worker.is_alive() or (time.monotonic() - start) * 1000 > budget_ms:  # late is as good as never
        raise TimeoutError(f"no answer within {budget_ms:.0f} ms")
    if "error" in out:
        raise out["error"]
    return out["value"]
