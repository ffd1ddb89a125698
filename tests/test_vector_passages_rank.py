"""Rule "passages": a version ranks by its two best passages (0.7 x best + 0.3 x second, a one-passage
version by its passage), the first passage counted FIRST_PASSAGE_BONUS higher; the hit still
names its best passage. Vectors are written by hand so each passage's cosine is exact."""

from __future__ import annotations

import math
import struct

import pytest

from tests.support.index_helpers import T0, put

DIM = 8
FP = "test-fingerprint"


def unit(cos: float) -> bytes:
    """A vector at exactly `cos` from the question e1."""
    v = [cos, math.sqrt(max(0.0, 1 - cos * cos))] + [0.0] * (DIM - 2)
    return struct.pack(f"<{DIM}f", *v)


def long_body(word: str) -> str:
    return "\n\n".join(f"{word} paragraph {i}: " + "lorem ipsum dolor sit amet " * 12 for i in range(12))


@pytest.fixture
def ranked(store_path):
    from kyb_cli.core.index.fresh import fresh
    from kyb_cli.core.search import semantic
    from kyb_cli.core.index.slice import Slice

    put(store_path, "one-passage", "One", "short", T0)
    put(store_path, "one-lucky", "Lucky", long_body("lucky"), T0 + 1)
    put(store_path, "two-good", "Good", long_body("good"), T0 + 2)
    cosines = {("one-passage", 0): 0.90,
               ("one-lucky", 1): 0.95, ("one-lucky", 2): 0.30,
               ("two-good", 1): 0.91, ("two-good", 2): 0.90}
    f = fresh(store_path)
    rows = f.conn.execute("SELECT v.key, t.part, t.text_sha FROM vtext t JOIN versions v ON v.id = t.version_id").fetchall()
    assert {k for k, part, _sha in rows if part >= 2} >= {"one-lucky", "two-good"}  # long bodies are chunked
    with f.conn:
        for key, part, sha in rows:
            f.conn.execute("INSERT OR REPLACE INTO vectors(text_sha, fingerprint, vec) VALUES (?, ?, ?)",
                           (sha, FP, unit(cosines.get((key, part), 0.10))))
    semantic.load_vec(f.conn)
    near = semantic.nearest(f.conn, unit(1.0), FP, Slice("current"), 10)
    yield near, f.conn, {n.key: n.vid for n in near}
    f.conn.close()


def test_a_version_ranks_by_its_two_best_passages(ranked):
    import math

    from kyb_cli.core.search.semantic import BEST_WEIGHT, FIRST_PASSAGE_BONUS, LENGTH_PENALTY

    near, conn, vids = ranked
    order = [n.key for n in near]
    # two-good 0.7*0.91 + 0.3*0.90 = 0.907; one-passage (0.90 + bonus) = 0.92; one-lucky 0.7*0.95 + 0.3*0.30,
    # each long one less LENGTH_PENALTY x ln(its passages) (a record does not win by its number of passages)
    assert order == ["one-passage", "two-good", "one-lucky"]
    by_key = {n.key: n for n in near}

    def less(key: str) -> float:
        (count,), = conn.execute("SELECT count(*) FROM vtext WHERE version_id = ?", (vids[key],)).fetchall()
        return LENGTH_PENALTY * math.log(count)

    assert less("two-good") > 0 and less("one-passage") == 0
    assert by_key["two-good"].meaning == pytest.approx(
        BEST_WEIGHT * 0.91 + (1 - BEST_WEIGHT) * 0.90 - less("two-good"), abs=1e-5)
    assert by_key["one-passage"].meaning == pytest.approx(0.90 + FIRST_PASSAGE_BONUS, abs=1e-5)
    assert by_key["one-lucky"].meaning == pytest.approx(
        BEST_WEIGHT * 0.95 + (1 - BEST_WEIGHT) * 0.30 - less("one-lucky"), abs=1e-5)


def test_the_hit_names_its_best_passage(ranked):
    near, _conn, _vids = ranked
    by_key = {n.key: n for n in near}
    assert (by_key["one-lucky"].part, round(by_key["one-lucky"].cos, 4)) == (1, 0.95)
    assert (by_key["two-good"].part, round(by_key["two-good"].cos, 4)) == (1, 0.91)


def test_meaning_of_scores_given_versions_the_same_way(ranked):
    from kyb_cli.core.search.semantic import meaning_of

    near, conn, vids = ranked
    got = meaning_of(conn, unit(1.0), FP, sorted(vids.values()))
    for n in near:
        assert got[n.vid] == pytest.approx(n.meaning, abs=1e-6)
    assert meaning_of(conn, unit(1.0), "no-such-fingerprint", sorted(vids.values())) == {}
