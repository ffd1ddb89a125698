"""A term's count of versions (df) kept on disk for one-shot processes (issue 38).

relevance.term_weights counts each question word's versions in the index's term list (fts5vocab
`row`): ~1 ms a common word at 10k keys, which a door keeps per index state in memory and a
one-shot `kyb query` paid every time. Here the counts are kept in search/passage_file.py's file by
the index's state: the index file's identity (device, inode: a rebuild renames a new file over the
path), HEAD and the newest version id. `fts` only ever gains rows, numbered 1, 2, 3... (index/build.py:
INSERT and 'optimize', never a delete), so one file's first N versions always hold the same words;
any write, pull or sync moves HEAD or the newest id, and the counts of an older state are deleted
when a new state's are written. A file that cannot be used keeps nothing: the words are counted.
"""

from __future__ import annotations

import os


def state_of(conn, head: str | None, newest: int) -> str | None:
    """The key the counts of `conn`'s index as it is now are kept by; None when it has no file."""
    where = getattr(conn, "filename", "") or ""
    try:
        st = os.stat(where)
    except OSError:
        return None
    return f"{st.st_dev}:{st.st_ino}:{head}:{newest}"


def known(conn, state: str, terms: list[str]) -> dict[str, int]:
    """{term: df} of `terms` kept for `state` (those not kept are left out)."""
    import apsw

    kept = _file(conn)
    if kept is None:
        return {}
    out = {}
    try:
        for t in terms:
            row = kept.conn.execute("SELECT n FROM df WHERE state = ? AND term = ?", (state, t)).fetchone()
            if row is not None:
                out[t] = row[0]
    except apsw.Error:
        return {}
    return out


def remember(conn, state: str, counts: dict[str, int]) -> None:
    """Keep `counts` for `state`, dropping every other state's (never an error: a cache)."""
    import apsw

    kept = _file(conn)
    if kept is None or not counts:
        return
    try:
        with kept.conn:
            kept.conn.execute("DELETE FROM df WHERE state != ?", (state,))
            kept.conn.executemany("INSERT OR REPLACE INTO df VALUES (?, ?, ?)",
                                  [(state, t, int(n)) for t, n in counts.items()])
    except apsw.Error:
        pass


def _file(conn):
    from kyb_cli.core.search import passage_file

    return passage_file.opened(conn)
