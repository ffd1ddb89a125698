"""Issue 39: while the model's vectors are few (the filler embedding after a fresh clone), the vector
side's rows are found from the vectors present by lookups (search/few_vectors.py), not from the
whole slice materialized: the same rows (vid, state, part, cosine, meaning) at every fill level,
and the lookups are the statement run while vectors are fewer than half the slice."""

from __future__ import annotations

import random
import struct

from tests.support.index_helpers import T0, put, remove

FP = "fp-few"
DIM = 8
LONG = "\n\n".join(f"Paragraph {i}: " + " ".join(f"word{i}x{j}" for j in range(120)) for i in range(6))


def seed(store_path) -> None:
    for n in range(10):
        put(store_path, f"note-{n:02d}", f"Note {n}", f"checkout note {n} on port {9000 + n}", T0 + n,
            tags=["red" if n % 2 else "blue"])
    put(store_path, "alpha", "Alpha", "first text", T0 + 20, tags=["red"])
    put(store_path, "alpha", "Alpha", "alpha again", T0 + 21, tags=["red"])
    put(store_path, "alpha", "Alpha", "alpha a third time checkout", T0 + 22, tags=["red"])
    put(store_path, "long", "Long", LONG, T0 + 23, tags=["red"])
    put(store_path, "gone", "Gone", "checkout retracted text", T0 + 24)
    remove(store_path, "gone", T0 + 25)
    put(store_path, "leaked", "Leaked", "token ghp_aB3dE6gH9jK2mN5pQ8sT1vW4yZ7bC0eF3hJ6", T0 + 26)


def conn(store_path):
    from kyb_cli.core.index.fresh import fresh
    from kyb_cli.core.index.vectors import load_vec

    c = fresh(store_path).conn
    load_vec(c)
    return c


def unit(rng) -> bytes:
    v = [rng.gauss(0, 1) for _ in range(DIM)]
    norm = sum(x * x for x in v) ** 0.5
    return struct.pack(f"<{DIM}f", *(x / norm for x in v))


def fill(c, shas, rng) -> None:
    with c:
        c.executemany("INSERT OR REPLACE INTO vectors(text_sha, fingerprint, vec) VALUES(?, ?, ?)",
                      [(h, FP, unit(rng)) for h in shas])


def slices():
    from kyb_cli.core.index.slice import Filters, Slice

    return [(Slice("current"), None, None), (Slice("history"), None, None),
            (Slice("current", filters=Filters(tags=["red"])), None, None),
            (Slice("history", filters=Filters(tags=["red"])), "checkout", None),
            (Slice("current"), "checkout", "alpha"), (Slice("history"), None, "note"),
            (Slice("as_of", as_of=T0 + 22), None, None),
            (Slice("changed_between", window=(T0 + 5, T0 + 30)), None, None)]


def test_the_lookups_give_the_rows_of_the_materialized_slice_at_every_fill(store_path):
    from kyb_cli.core.search.semantic import _score_rows

    seed(store_path)
    c = conn(store_path)
    held = c.execute("SELECT version_id FROM keys WHERE key = 'note-03'").fetchone()[0]
    with c:  # a held-out version that has passages (and will have vectors): in no slice
        c.execute("INSERT OR REPLACE INTO unreadable(version_id, reason) VALUES(?, 'test')", (held,))
    shas = sorted({r[0] for r in c.execute("SELECT text_sha FROM vtext")})
    retracted = {r[0] for r in c.execute("SELECT id FROM versions WHERE key = 'gone'")}
    assert len(shas) > 20 and retracted
    rng = random.Random(39)
    rng.shuffle(shas)
    qv = unit(rng)
    done, seen = 0, set()
    for level in (0, 1, 3, len(shas) // 4, len(shas) // 2, len(shas) - 2, len(shas)):
        fill(c, shas[done:level], rng)
        done = level
        for s, req, exc in slices():
            req, exc = (f'"{w}"' if w else None for w in (req, exc))  # FTS5 MATCH strings
            found = _score_rows(c, s, qv, FP, req, exc, by_lookups=True)
            scanned = _score_rows(c, s, qv, FP, req, exc, by_lookups=False)
            assert found == scanned, (level, s, req, exc)
            assert held not in found and (s.mode != "current" or not retracted & set(found))
            seen.add((s.mode, len(found)))
    versions = c.execute("SELECT count(*) FROM versions WHERE key = 'alpha'").fetchone()[0]
    assert versions == 3 and max(n for mode, n in seen if mode == "history") > max(
        n for mode, n in seen if mode == "current") > 0
    c.close()


def statements(c, run) -> list[str]:
    said: list[str] = []

    def tracer(_cursor, sql, _bindings):
        said.append(sql)
        return True

    c.exec_trace = tracer
    try:
        run()
    finally:
        c.exec_trace = None
    return [s for s in said if "vec_distance_cosine" in s]


def test_few_vectors_are_scanned_by_lookups_and_many_by_the_slice(store_path):
    """The hybrid answer's vector side (nearest) on a one-shot connection: with a few vectors the one
    scoring statement starts from the vectors; past half the slice, from the materialized slice.
    The count behind it is brought forward over the batches another connection commits."""
    from kyb_cli.core.index.slice import Slice
    from kyb_cli.core.search import semantic

    seed(store_path)
    c = conn(store_path)
    shas = [r[0] for r in c.execute("SELECT t.text_sha FROM keys k JOIN vtext t ON t.version_id = k.version_id "
                                    "WHERE k.state != 'retracted' ORDER BY k.key, t.part")]
    c.close()
    rng = random.Random(7)
    qv = unit(rng)

    def asked(mode: str = "current") -> list[str]:
        c = conn(store_path)
        try:
            semantic.begin_answer()
            return statements(c, lambda: semantic.nearest(c, qv, FP, Slice(mode), 5))
        finally:
            c.close()

    c = conn(store_path)
    fill(c, shas[:2], rng)
    c.close()
    said = asked()
    assert len(said) == 1 and said[0].startswith("SELECT") and "FROM vectors x CROSS JOIN" in said[0]
    assert asked() == said  # the kept counts
    said = asked("history")
    assert len(said) == 1 and "FROM vectors x CROSS JOIN" in said[0] and "WITH cand" not in said[0]
    c = conn(store_path)
    fill(c, shas[2:], rng)  # past half the current slice (a batch: the count brought forward)
    c.close()
    said = asked()
    assert len(said) == 1 and "WITH cand AS MATERIALIZED" in said[0] and "FROM cand c" in said[0]
