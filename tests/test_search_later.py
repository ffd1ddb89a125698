"""The pipeline shapes only the hits it keeps (search/lexical.Later): each kept hit is the hit
lexical() shapes, given what fusion and grading set, the same keys in the same order, in every mode."""

from __future__ import annotations

from kyb_cli.core.index.fresh import with_index
from kyb_cli.core.search.lexical import Later, lexical, shaped
from tests.support.index_helpers import T0, put, query, remove


def _store(store_path) -> None:
    for i in range(8):
        put(store_path, f"db-{i}", f"Postgres replica {i}", f"failover drill {i} " * (i + 1),
            when=T0 + i, tags=["db"], service="pg")
    put(store_path, "db-2", "Postgres replica 2 again", "failover twice", when=T0 + 50)
    remove(store_path, "db-5", when=T0 + 60)


def test_a_later_hit_shaped_is_the_hit_lexical_shapes(store_path):
    _store(store_path)

    def check(f):
        asked = 0
        for mode, extra in (("current", {}), ("history", {}), ("as_of", {"as_of": T0 + 55}),
                            ("changed_between", {"window": (T0, T0 + 100)})):
            for text in ("replica failover", "", "drill"):
                now = lexical(f.conn, text, mode=mode, limit=20, **extra)
                later = lexical(f.conn, text, mode=mode, limit=20, later=True, **extra)
                assert [v for v, _h in later] == [v for v, _h in now]
                assert all(isinstance(h, Later) and h["key"] == n["key"] and h["score"] == n["score"]
                           for (_v, h), (_w, n) in zip(later, now))
                for (_v, h), (_w, n) in zip(later, now):
                    h["score"], h["strength"], n["score"], n["strength"] = 0.5, "weak", 0.5, "weak"
                    assert list(shaped(h).items()) == list(n.items())
                asked += len(now)
        return asked

    assert with_index(store_path, check) > 20


def test_kept_hits_are_whole_and_lexical_only_fields_kept(store_path):
    _store(store_path)
    hits = query(store_path, "replica failover", explain=True, limit=3)["hits"]
    assert len(hits) == 3 and not any(isinstance(h, Later) for h in hits)
    assert list(hits[0])[:5] == ["key", "title", "kind", "body", "tags"]
    assert list(hits[0])[-4:] == ["strength", "found_by", "snippet", "explain"]


def test_unread_hits_kept_are_every_row_read_then_a_cut(store_path):
    """A vector side's hit is read once kept (lexical.Unread, readable): a version that is gone is
    left out and the next one fills the limit, each kept hit the one every row read gives, rows read
    for the kept hits only."""
    from kyb_cli.core.search.lexical import Unread, readable

    _store(store_path)

    def check(f):
        vids = [v for (v,) in f.conn.execute("SELECT id FROM versions ORDER BY id DESC")]
        picks = [(v, "live") for v in vids[:3]] + [(10_000_001, "live")] + [(v, "live") for v in vids[3:]]
        whole = readable(f.conn, [Unread(v, s) for v, s in picks])
        assert [h.vid for h in whole] == [v for v, _s in picks if v != 10_000_001]
        for h in whole:  # as lexical() shapes the same version's hit
            row = f.conn.execute("SELECT key FROM versions WHERE id = ?", (h.vid,)).fetchone()
            assert shaped(h)["key"] == row[0] and shaped(h)["state"] == "live" and shaped(h)["score"] == 0.0
        for limit in (None, 0, 1, 3, 4, 5, len(picks) + 2):
            unread = [Unread(v, s) for v, s in picks]
            for h in unread:
                h["strength"] = "weak"
            kept = readable(f.conn, unread, limit)
            want = whole[:limit]
            assert [h.vid for h in kept] == [h.vid for h in want]
            assert [list(shaped(h).items()) for h in kept] == [list({**shaped(w), "strength": "weak"}.items())
                                                              for w in want]
            assert all(h.row is None for h in unread[len(kept) + 1:])  # past the cut: never read
        return len(whole)

    assert with_index(store_path, check) > 5
