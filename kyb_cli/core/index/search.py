"""`kyb query` as a library call: bring the index to HEAD, ask one question, shape the response."""

from __future__ import annotations

from pathlib import Path
from typing import Callable, TypeVar

from kyb_cli.core.index import Fresh, fresh, schema
from kyb_cli.core.index.query import Filters, lexical

T = TypeVar("T")


def with_index(store_path: Path, fn: Callable[[Fresh], T]) -> T:
    """Run `fn` on a current index; a corrupt file found mid-read is rebuilt and the read retried."""
    import apsw

    from kyb_cli.core.errors import KybError

    f = fresh(store_path)
    try:
        return fn(f)
    except (KybError, apsw.BusyError, apsw.LockedError):
        raise
    except Exception:  # any damage met mid-read (bad pages, undecodable rows): rebuild once, retry once
        f.conn.close()
        schema.index_path(f.git_dir).unlink(missing_ok=True)
        f = fresh(store_path, force_rebuild=True)
        return fn(f)
    finally:
        try:
            f.conn.close()
        except Exception:  # pragma: no cover - closing a broken handle
            pass


def search(store_path: Path, text: str = "", *, mode: str = "current", as_of: int | None = None,
           window: tuple[int, int] | None = None, filters: Filters | None = None, limit: int = 10,
           recent: bool = False, semantic: bool = False, explain: bool = False) -> dict:
    """The response `{count, hits, semantic, mode, head}` (+ `pending_vectors` when vectors ran).

    With `semantic`, a non-blank question and no `--recent`, the vector side runs in every time mode
    on the same slice and filters, and is fused with BM25 (RRF). When it cannot run, the answer is
    lexical with `semantic: false` and `semantic_off` holds the one-line reason (the CLI prints it).
    """
    from kyb_cli.core.index.tokens import words

    hybrid = semantic and not recent and bool(words(text))

    def run(f: Fresh) -> dict:
        n = fusion_candidates(limit) if hybrid else limit
        ranked = lexical(f.conn, text, mode=mode, as_of=as_of, window=window, filters=filters,
                         limit=n, recent=recent)
        out: dict = {"semantic": False}
        if hybrid:
            from kyb_cli.core.index.vectors import Slice, semantic_side

            side = semantic_side(f.conn, text, Slice(mode, as_of, window, filters or Filters()), n)
            if side.ranked is not None:
                hits = _fuse(f.conn, mode, ranked, side.ranked, limit, explain)
                out.update(semantic=True, pending_vectors=side.pending)
            else:
                hits = [hit for _vid, hit in ranked[:limit]]
                out["semantic_off"] = side.reason
        else:
            hits = [hit for _vid, hit in ranked[:limit]]
        if explain and not out["semantic"]:
            for rank, hit in enumerate(hits, 1):
                hit["explain"] = {"lexical_rank": rank, "vector_rank": None, "cosine": None,
                                  "bm25": hit["score"], "fused": None}
        return {"count": len(hits), "hits": hits, **out, "mode": mode, "head": f.head}

    response = with_index(store_path, run)
    if mode == "as_of" and as_of is not None:
        from kyb_cli.core.timefmt import rfc3339

        response["as_of"] = rfc3339(as_of)
    elif mode == "changed_between" and window is not None:
        from kyb_cli.core.timefmt import rfc3339

        response["window"] = [rfc3339(window[0]), rfc3339(window[1])]
    return response


def fusion_candidates(limit: int) -> int:
    from kyb_cli.core.fusion import candidates

    return candidates(limit)


def _fuse(conn, mode: str, ranked: list[tuple[int, dict]], near: list[tuple[int, str, str, float]],
          limit: int, explain: bool) -> list[dict]:
    """RRF of both lists. Identity is the version in --history, else the key (one hit per key).

    A lexical hit is reused; a semantic-only one is read from the index (it already passed the same
    slice and filters). `score` is the cosine when the hit has one, else BM25 (as SRCH-10).
    """
    from kyb_cli.core.fusion import rrf
    from kyb_cli.core.index.query import hits_for

    def ident(vid: int, key: str):
        return vid if mode == "history" else key

    lex = {ident(vid, hit["key"]): (vid, hit) for vid, hit in ranked}
    sem = {}
    for vid, key, state, cos, *_ in near:
        sem.setdefault(ident(vid, key), (vid, state, cos))
    tie = {i: (h["key"], -v) for i, (v, h) in lex.items()}
    tie.update({ident(n.vid, n.key): (n.key, -n.vid) for n in near})
    fused = rrf(list(lex), list(sem), tie)[:limit]
    need = [(sem[f.ident][0], sem[f.ident][1]) for f in fused if f.ident not in lex]
    extra = hits_for(conn, need)
    hits = []
    for f in fused:
        if f.ident in lex:
            hit = lex[f.ident][1]
        else:
            hit = extra.get(sem[f.ident][0])
            if hit is None:
                continue
        bm25 = hit["score"] if f.ident in lex else None
        cos = sem[f.ident][2] if f.ident in sem else None
        if cos is not None:
            hit["score"] = round(cos, 6)
        if explain:
            hit["explain"] = {"lexical_rank": f.lexical_rank, "vector_rank": f.vector_rank,
                              "cosine": None if cos is None else round(cos, 6), "bm25": bm25,
                              "fused": round(f.score, 6)}
        hits.append(hit)
    return hits
