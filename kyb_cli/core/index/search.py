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

    f = fresh(store_path)
    try:
        return fn(f)
    except (apsw.CorruptError, apsw.NotADBError, apsw.SchemaChangeError, apsw.SQLError) as exc:
        if isinstance(exc, apsw.SQLError) and "no such" not in str(exc) and "malformed" not in str(exc):
            raise
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
           recent: bool = False, semantic: bool = False) -> dict:
    """The response `{count, hits, semantic, mode, head}`; `semantic` stays false until vectors exist."""

    def run(f: Fresh) -> dict:
        ranked = lexical(f.conn, text, mode=mode, as_of=as_of, window=window, filters=filters,
                         limit=limit, recent=recent)
        hits = [hit for _vid, hit in ranked]
        return {"count": len(hits), "hits": hits, "semantic": False, "mode": mode, "head": f.head}

    response = with_index(store_path, run)
    if mode == "as_of" and as_of is not None:
        from kyb_cli.core.timefmt import rfc3339

        response["as_of"] = rfc3339(as_of)
    elif mode == "changed_between" and window is not None:
        from kyb_cli.core.timefmt import rfc3339

        response["window"] = [rfc3339(window[0]), rfc3339(window[1])]
    return response
