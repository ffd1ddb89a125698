"""A long body's best passage (issue 41): which of the question's terms meet in one passage.

The passages (the ones the vector side embeds, core/embed/recipe.py) are matched by FTS5 with the
index's own tokenizer, in an in-memory database of this process. They stay there between answers,
keyed by the version's key and Git blob, what its doc is made of (index/rows.version_rows: the
record loaded from that blob at that key's path): cutting a 27 kB runbook into passages and tokenizing
them was ~1 ms of every lexical answer on the runbooks, the same work each time. A key that is the
content cannot go stale (an edited record is another blob; a rebuilt index gives the same blob the same
passages), so nothing needs invalidating; the table is emptied when it holds KEEP_ROWS passages.
A one-shot process (not a door, index/warm.keeping) keeps nothing of its own between answers:
it reads and adds them in a file next to the index instead (search/passage_file.py), and falls back
to this table when the file cannot be used. One table for every thread (`kyb serve` answers each request on any thread of its pool: a table per
thread was filled again on most requests), used under a lock for the few statements of one answer.
"""

from __future__ import annotations

from _thread import allocate_lock

# Only bodies over PASSAGE_CHARS can have two passages (relevance.PASSAGE_CHARS, the rule's home).
KEEP_ROWS = 20_000  # passages kept (MAX_PASSAGES per version at most), then all dropped
_KEPT: list = [None]  # [_Kept], made on first use
_LOCK = allocate_lock()


def best_passage(conn, terms: list[str], weights: list[float], vids: list[int], long_body: int,
                 coverage) -> dict[int, float]:
    """{vid: the share of the question's weight its best passage holds} for the versions of `vids`
    whose body is over `long_body` characters and cut into several passages; the others are left out.
    `coverage(held term indexes, weights)` is the share (relevance.coverage)."""
    if not vids or not terms:
        return {}
    marks = ",".join(str(int(v)) for v in vids)
    made = conn.execute(f"SELECT id, key, blob FROM versions WHERE id IN ({marks})").fetchall()
    found = None
    if not _door():  # a one-shot process keeps nothing itself: the passages kept on disk, if usable
        from kyb_cli.core.search import passage_file

        found = passage_file.matches(conn, made, terms, long_body, lambda vid: _cut(conn, vid, long_body))
    owner, held = found if found is not None else _in_memory(conn, made, terms, long_body)
    if not owner:
        return {}
    out = {vid: 0.0 for vid in owner.values()}
    for rowid, got in held.items():
        vid = owner[rowid]
        out[vid] = max(out[vid], coverage(got, weights))
    return out


def _in_memory(conn, made: list, terms: list[str], long_body: int) -> tuple[dict, dict]:
    """(passage rowid -> vid, passage rowid -> indexes of `terms` it holds) from this process's table."""
    from kyb_cli.core.search.passage_file import terms_held

    owner: dict[int, int] = {}
    with _LOCK:
        kept = _kept(len(made))
        for vid, key, blob in made:
            rows = kept.of.get((key, blob))
            if rows is None:
                rows = kept.of[(key, blob)] = kept.add(_cut(conn, vid, long_body))
            for rowid in rows:
                owner[rowid] = vid
        held = terms_held(kept.conn, terms, owner)
    return owner, held


def _door() -> bool:
    """Whether this process is a long-lived door (index/warm.keeping): it keeps its passages in memory."""
    from kyb_cli.core.index import warm

    return warm.keeping()


def _cut(conn, vid: int, long_body: int) -> list[str]:
    """The passages of version `vid` when its body is over `long_body` characters and makes several, else []."""
    from kyb_cli.core.embed.recipe import passages
    from kyb_cli.core.index.schema import decode

    (raw,), = conn.execute("SELECT doc FROM versions WHERE id = ?", (vid,)).fetchall()
    doc = decode(raw)
    if len(str(doc.get("body") or "")) <= long_body:
        return []
    parts = passages(doc)
    return parts if len(parts) >= 2 else []


class _Kept:
    """The kept passages: an FTS5 table in memory (the index's tokenizer) and, per (key, blob), the
    rowids of its passages (empty: a body that is short or one passage)."""

    def __init__(self) -> None:
        import apsw

        from kyb_cli.core.search.passage_file import passage_table

        # not a temp table of the index's connection: its row changes would count in total_changes,
        # the stamp a long-lived door keeps its postings, matrices and counts by (index/vectors.db_state)
        self.conn = apsw.Connection(":memory:")
        self.conn.execute(passage_table())
        self.of: dict[tuple[str, str], tuple[int, ...]] = {}
        self.size = 0

    def add(self, parts: list[str]) -> tuple[int, ...]:
        """The rowids of `parts` (a version's passages, _cut), added to the table."""
        if not parts:
            return ()
        first = self.size + 1
        self.conn.executemany("INSERT INTO passage_words(rowid, text) VALUES (?, ?)",
                              [(first + n, text) for n, text in enumerate(parts)])
        self.size += len(parts)
        return tuple(range(first, first + len(parts)))


def _kept(versions: int) -> _Kept:
    """The kept passages (under _LOCK), emptied first when `versions` more might not fit (never during
    an answer: the rowids it has collected stay valid)."""
    from kyb_cli.core.embed.recipe import MAX_PASSAGES

    kept = _KEPT[0]
    if kept is None:
        kept = _KEPT[0] = _Kept()
    elif kept.size + versions * MAX_PASSAGES > KEEP_ROWS:
        kept.conn.execute("DELETE FROM passage_words")
        kept.of.clear()
        kept.size = 0
    return kept
