"""The warm vector side (issue 38): a long-lived door embeds its questions with models it holds
(no helper hop), the route's models side by side; the vector side scores versions from one scan per
answer. Same answers as before, and nothing kept is ever stale: a write or a vector filled by
another process, a changed model, are seen by the next answer. In-process through the porcelain."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from kyb_cli import api
from kyb_cli.core.search import semantic
from tests.support.index_helpers import T0, put


@pytest.fixture
def both(tiny, monkeypatch):
    """The tiny model as e5 and as the English side (CLS pooling: another fingerprint)."""
    monkeypatch.setenv("KYB_MODEL_EN", str(tiny))
    return tiny


@pytest.fixture
def warm_door():
    api.keep_warm()
    yield
    api.keep_warm(False)


@pytest.fixture(params=["scan", "matrix"])
def side(request, monkeypatch):
    """The vector side as a door runs it on a small store (scan) and on a large one (matrix)."""
    if request.param == "matrix":
        monkeypatch.setattr(semantic, "MATRIX_FROM", 0)
    return request.param


def seed(store_path):
    put(store_path, "checkout-path", "Checkout path", "checkout writes go through node 3", T0)
    put(store_path, "db-primary", "Database primary", "the primary database host\n\n" + "replica lag " * 200, T0 + 10)
    put(store_path, "cache", "Cache", "redis cache in front of the checkout", T0 + 20)
    put(store_path, "checkout-path", "Checkout path", "checkout writes go through node 4 now", T0 + 30)
    put(store_path, "queue", "Queue", "kafka queue for checkout events", T0 + 40)


def _other_process(store_path, code: str) -> None:
    subprocess.run([sys.executable, "-c", "import sys; from kyb_cli import api; " + code, str(store_path)],
                   check=True, capture_output=True, env=dict(os.environ, PYTHONPATH=os.getcwd()))


def per_version(rows: str) -> str:
    """SQL turning passage rows (vid, part, cos) into one row per version (vid, part, cos, s): the
    best passage's part and cosine, and `s` = BEST_WEIGHT x the best + the rest x the second best
    (a one-passage version: its passage), the first passage counted FIRST_PASSAGE_BONUS higher.
    Binds :bonus, :wbest and :lpen. What semantic.py ranked by before _version_score, kept here as
    its reference. max(adj) is the only min/max aggregate, so the bare columns (part, cos) are the
    best passage's."""
    ranked = (f"SELECT *, row_number() OVER (PARTITION BY vid ORDER BY adj DESC, part) AS pr FROM "
              f"(SELECT *, cos + (part = 0) * :bonus AS adj FROM ({rows}))")
    grouped = (f"SELECT vid, part, cos, max(adj) AS a1, total(CASE WHEN pr = 2 THEN adj END) AS a2, "
               f"count(*) AS np FROM ({ranked}) GROUP BY vid")
    return (f"SELECT vid, part, cos, a1 * :wbest + (CASE WHEN np > 1 THEN a2 ELSE a1 END) * (1 - :wbest)"
            f" - :lpen * ln(np) AS s "
            f"FROM ({grouped})")


def nearest_sql(conn, qvec: bytes, fp: str, s, n: int, *, require: str | None = None,
                exclude: str | None = None, centre: tuple[bytes, bytes] | None = None,
                only: list[int] | None = None) -> list:
    """`nearest` as it was, in SQL alone (window functions): the reference `nearest` is held to."""
    with_, where, params = s.sql()
    if only is not None:
        where += " AND c.vid IN (" + ",".join(str(int(v)) for v in only) + ")"
    if require:
        where += " AND c.vid IN (SELECT rowid FROM fts WHERE fts MATCH :req)"
        params["req"] = require
    if exclude:
        where += " AND c.vid NOT IN (SELECT rowid FROM fts WHERE fts MATCH :exc)"
        params["exc"] = exclude
    versions = "JOIN versions v ON v.id = c.vid " if where else ""  # only filters read it
    rows = (f"SELECT c.vid AS vid, t.part AS part, 1.0 - vec_distance_cosine(x.vec, :qv) AS cos FROM cand c "
            f"{versions}JOIN vtext t ON t.version_id = c.vid "
            f"JOIN vectors x ON x.text_sha = t.text_sha AND x.fingerprint = :fp WHERE 1{where}")
    grouped = per_version(rows)
    inner = (f"SELECT g.vid AS vid, v.key AS key, c.state AS state, g.part AS part, g.cos AS cos, g.s AS s "
             f"FROM ({grouped}) g JOIN versions v ON v.id = g.vid JOIN cand c ON c.vid = g.vid")
    if s.mode == "changed_between":
        inner = (f"SELECT * FROM (SELECT i.*, row_number() OVER (PARTITION BY i.key "
                 f"ORDER BY i.s DESC, i.vid DESC) AS rn FROM ({inner}) i) WHERE rn = 1")
    top = f"SELECT vid, key, state, cos, part, s FROM ({inner}) ORDER BY s DESC, key, vid DESC LIMIT :n"
    score = "NULL"
    if centre:  # the calibrated score of the best passage, for the top n only
        score = ("(SELECT 1.0 - vec_distance_cosine(vec_sub(x.vec, :cp), :qc) FROM vtext t JOIN vectors x "
                 "ON x.text_sha = t.text_sha AND x.fingerprint = :fp WHERE t.version_id = top.vid AND t.part = top.part)")
    sql = f"{with_}SELECT vid, key, state, cos, part, {score}, s FROM ({top}) AS top ORDER BY s DESC, key, vid DESC"
    bound = params | {"fp": fp, "qv": qvec, "n": int(n), "bonus": semantic.FIRST_PASSAGE_BONUS, "wbest": semantic.BEST_WEIGHT,
                      "lpen": semantic.LENGTH_PENALTY}
    if centre:
        bound |= {"qc": centre[0], "cp": centre[1]}
    return [semantic.Near(vid, key, state, float(cos), part, None if z is None else float(z), float(m))
            for vid, key, state, cos, part, z, m in conn.execute(sql, bound)]


@pytest.mark.parametrize("mode", ["current", "history", "changed_between", "as_of"])
@pytest.mark.parametrize("ops", [{}, {"require": "checkout"}, {"exclude": "redis"}])
@pytest.mark.parametrize("resident", [False, "copy", "matrix"])  # a door: its copy of the slice scanned
def test_nearest_equals_the_sql_of_before(store_path, both, mode, ops, resident, monkeypatch):  # or numpy picks
    from kyb_cli.core import embed

    monkeypatch.setattr(embed, "_RESIDENT", bool(resident))
    monkeypatch.setattr(semantic, "MATRIX_FROM", 0 if resident == "matrix" else semantic.MATRIX_FROM)  # tiny store
    from kyb_cli.core.index import schema
    from kyb_cli.core.index.slice import Slice
    from kyb_cli.core.index.vectors import load_vec
    from kyb_cli.core.search.relevance import calibration, centred_query

    seed(store_path)
    api.embed_all(store_path)
    conn, _meta = schema.open_valid(schema.index_path(store_path / ".git"))
    load_vec(conn)
    time = {"as_of": T0 + 25} if mode == "as_of" else {"window": (T0, T0 + 45)} if mode == "changed_between" else {}
    s = Slice(mode, time.get("as_of"), time.get("window"))
    for spec in [m for m in embed.MODELS if not m.package]:  # the directory models (USE: off in tests)
        for text in ("where do checkout writes go", "database replica", "zzz"):
            fp, qvec, _why = embed.query_vectors(text, [spec])[0]
            cal = calibration(fp)
            centre = (centred_query(cal, qvec), cal.center_p) if cal.center_p is not None else None
            for n in (1, 3, 50):
                semantic.begin_answer()
                got = semantic.nearest(conn, qvec, fp, s, n, centre=centre, **ops)
                assert got == nearest_sql(conn, qvec, fp, s, n, centre=centre, **ops)
                assert got  # the comparison is not between two empty lists
                only = [x.vid for x in got][::-1]
                assert semantic.nearest(conn, qvec, fp, s, n, only=only, **ops) == \
                    nearest_sql(conn, qvec, fp, s, n, only=only, **ops)
            vids = [r[0] for r in conn.execute("SELECT id FROM versions ORDER BY id DESC")]
            semantic.begin_answer()
            fresh = semantic.meaning_of(conn, qvec, fp, vids)
            semantic.nearest(conn, qvec, fp, s, 50, **ops)  # now partly read from the answer's scan
            assert semantic.meaning_of(conn, qvec, fp, vids) == fresh
            assert list(fresh) == sorted(fresh)
            rows = ("SELECT t.version_id AS vid, t.part AS part, 1.0 - vec_distance_cosine(x.vec, :qv) AS cos "
                    "FROM vtext t JOIN vectors x ON x.text_sha = t.text_sha AND x.fingerprint = :fp")
            bound = {"qv": qvec, "fp": fp, "bonus": semantic.FIRST_PASSAGE_BONUS, "wbest": semantic.BEST_WEIGHT,
                     "lpen": semantic.LENGTH_PENALTY}
            assert fresh == {v: m for v, _p, _c, m in conn.execute(per_version(rows), bound)}  # the SQL of before
    conn.close()


def test_hybrid_answers_are_the_same_warm_and_cold(store_path, both, side):
    seed(store_path)
    api.embed_all(store_path)
    questions = ["where do checkout writes go", "database replica lag", "kafka events -redis", "cache"]
    cold = [api.query(store_path, q, explain=True)[1] for q in questions]
    api.keep_warm()
    try:
        warm = [api.query(store_path, q, explain=True)[1] for q in questions]
        again = [api.query(store_path, q, explain=True)[1] for q in questions]  # the kept state reused
    finally:
        api.keep_warm(False)
    assert all(r["semantic"] for r in cold)
    assert warm == cold and again == cold


def test_warm_door_embeds_in_process_never_through_the_helper(store_path, both, monkeypatch, warm_door):
    from kyb_cli.core import embed
    from kyb_cli.core.embed import client

    monkeypatch.delenv("KYB_EMBED_HELPER", raising=False)  # the helper would be used by a CLI process

    def no_helper(*_a, **_k):
        raise AssertionError("a warm door went through the helper")

    monkeypatch.setattr(client, "embed_via_helper", no_helper)
    seed(store_path)
    api.embed_all(store_path)
    _p, answer = api.query(store_path, "where do checkout writes go")
    assert answer["semantic"] and "semantic_missing" not in answer
    assert len(embed._EMBEDDERS) == 2  # both models held here
    api.keep_warm(False)
    assert not embed._RESIDENT


def test_query_vectors_side_by_side_equal_one_at_a_time(both):
    from kyb_cli.core import embed
    from kyb_cli.core.embed.embedder import Embedder

    models = [m for m in embed.MODELS if not m.package]  # the tiny model as e5 and bge (USE: off in tests)
    together = embed.query_vectors("a new question", models)
    for spec, (fp, vector, reason) in zip(models, together):
        assert reason is None and fp == embed.current_fingerprint(spec)[0]
        direct = Embedder(both, pooling=spec.pooling).embed_bytes([spec.query_input("a new question")])[0]
        assert vector == direct
    assert together[0][1] != together[1][1]


def test_vectors_filled_by_another_process_are_in_the_next_warm_answer(store_path, both, warm_door, side):
    seed(store_path)
    api.embed_all(store_path)
    question = "where does the ledger live"
    _p, before = api.query(store_path, question)
    assert before["semantic"] and before["pending_vectors"] == 0
    put(store_path, "ledger", "Ledger", "the ledger lives on node 9", T0 + 50)
    # the same question again: nothing of the last answer is reused (one version, two models pending)
    _p, seen = api.query(store_path, question, explain=True)
    assert seen["pending_vectors"] == 2
    assert next(h for h in seen["hits"] if h["key"] == "ledger")["explain"]["cosine"] is None
    _other_process(store_path, "api.embed_all(sys.argv[1])")
    _p, after = api.query(store_path, question, explain=True)
    assert after["pending_vectors"] == 0
    assert next(h for h in after["hits"] if h["key"] == "ledger")["explain"]["cosine"] is not None


def test_write_from_another_process_is_in_the_next_warm_answer_by_meaning(store_path, both, warm_door, side):
    seed(store_path)
    api.embed_all(store_path)
    question = "giraffe enclosure"
    _p, before = api.query(store_path, question)
    assert "zoo" not in [h["key"] for h in before["hits"]]
    _other_process(store_path, "s = api.open_store(sys.argv[1]); "
                   "api.add_knowledge(s, key='zoo', title='Zoo', body='the giraffe enclosure is north', tags=[], "
                   "refs=[], attribution=api.attribution('other')); api.embed_all(sys.argv[1])")
    _p, after = api.query(store_path, question)
    assert after["hits"][0]["key"] == "zoo" and after["pending_vectors"] == 0


def test_model_replaced_under_a_warm_door_is_loaded_anew(store_path, tmp_path, tiny_dir, monkeypatch, warm_door, side):
    import shutil

    from kyb_cli.core import embed
    from tests.support.tiny_model import build_tiny_model

    model = tmp_path / "model"
    shutil.copytree(tiny_dir, model)
    monkeypatch.setenv("KYB_MODEL", str(model))
    monkeypatch.delenv("KYB_EMBED_HELPER", raising=False)
    seed(store_path)
    api.embed_all(store_path)
    old_fp = embed.current_fingerprint()[0]
    old = embed.query_vector("checkout writes")[0]
    _p, before = api.query(store_path, "checkout writes")
    assert before["semantic"] and before["pending_vectors"] == 0
    build_tiny_model(model, seed=8)  # another model in the same place (`kyb model import` over it)
    new_fp = embed.current_fingerprint()[0]
    assert new_fp != old_fp  # the in-memory digest memo saw the new files
    _p, after = api.query(store_path, "checkout writes")
    assert after["semantic"] and after["pending_vectors"] == 4  # no vector of the old model is read
    assert embed.query_vector("checkout writes")[0] != old
    assert [k[:2] for k in embed._EMBEDDERS if k[0] == str(model)] == [(str(model), new_fp)]


def test_concurrent_first_answers_of_a_door_load_each_model_once(store_path, both, monkeypatch, warm_door):
    """`kyb serve` answers from threads: the first answers, side by side, all go by meaning, and
    each model is loaded once (the others wait for it)."""
    from concurrent.futures import ThreadPoolExecutor

    from kyb_cli.core import embed
    from kyb_cli.core.embed import embedder

    seed(store_path)
    api.embed_all(store_path)
    embed._EMBEDDERS.clear()
    loads = []
    real = embedder.Embedder.__init__

    def counted(self, *a, **k):
        loads.append(k.get("pooling"))
        real(self, *a, **k)

    monkeypatch.setattr(embedder.Embedder, "__init__", counted)
    with ThreadPoolExecutor(6) as pool:
        answers = list(pool.map(lambda i: api.query(store_path, f"checkout writes {i}")[1], range(12)))
    assert all(a["semantic"] and "semantic_missing" not in a for a in answers)
    assert sorted(loads) == ["cls", "mean"]


def test_resident_models_can_be_switched_off_for_many_servers(monkeypatch):
    """KYB_EMBED_RESIDENT=off: a long-lived door keeps the shared helper (memory over a few ms)."""
    from kyb_cli.core import embed

    monkeypatch.setattr(embed, "_RESIDENT", False)
    monkeypatch.setenv("KYB_EMBED_RESIDENT", "off")
    embed.resident(True)
    assert embed._RESIDENT is False
    monkeypatch.delenv("KYB_EMBED_RESIDENT")
    embed.resident(True)
    assert embed._RESIDENT is True
    embed.resident(False)


def test_centred_query_by_numpy_equals_the_pure_python_one(monkeypatch):
    """A door (numpy loaded) centres the question by numpy: bit for bit what the CLI computes."""
    import random
    import struct

    from kyb_cli.core.search import relevance

    rng = random.Random(7)
    for _ in range(200):
        q = struct.pack("<384f", *(rng.gauss(0, 0.05) for _ in range(384)))
        c = struct.pack("<384f", *(rng.gauss(0, 0.05) for _ in range(384)))
        cal = relevance.Calibration(0.5, center_q=c)
        import numpy  # noqa: F401 - loaded, as in a door

        fast = relevance.centred_query(cal, q)
        with monkeypatch.context() as m:
            m.setitem(sys.modules, "numpy", None)
            assert relevance.centred_query(cal, q) == fast


def test_the_second_models_ranking_primed_on_its_thread_is_the_one_the_answer_makes(store_path, both, monkeypatch):
    """door_scan.prime: the English model's matrix ranking made on its worker thread right after the
    question's vector, from the arrays the door ranked that model by last, is taken only when they
    are the arrays it ranks now; answers are the cold ones (the same doubles)."""
    from kyb_cli.core.search import door_scan

    monkeypatch.setattr(semantic, "MATRIX_FROM", 0)
    seed(store_path)
    api.embed_all(store_path)
    questions = ["where do checkout writes go", "database replica lag", "kafka events for checkout", "cache"]
    taken, real = [], door_scan.primed
    monkeypatch.setattr(door_scan, "primed", lambda *a: taken.append(real(*a)) or taken[-1])
    with_door = lambda: [api.query(store_path, q, explain=True)[1] for q in questions]  # noqa: E731
    api.keep_warm()
    try:
        warm = with_door()
    finally:
        api.keep_warm(False)
    assert warm == with_door()  # cold (the questions' vectors cached by the warm answers)
    assert sum(r is not None for r in taken) >= len(questions) - 1  # every English question after the first
    put(store_path, "cache", "Cache", "a redis cache in front of checkout and search", T0 + 50)
    taken.clear()
    api.keep_warm()
    try:
        after = api.query(store_path, "cache in front of checkout", explain=True)[1]
    finally:
        api.keep_warm(False)
    assert taken and all(r is None for r in taken)  # a new state: the arrays of before are never taken
    assert after == api.query(store_path, "cache in front of checkout", explain=True)[1]


def test_a_doors_product_is_blas_on_one_thread_else_einsum_within_the_margin():
    """semantic._product: numpy's BLAS once door_scan.blas_one_thread told OpenBLAS to use one thread
    (its threads spin on the models' cores), else einsum; the two round alike far inside MARGIN, and
    the exact pass decides every score (test_nearest_equals_the_sql_of_before, resident="matrix")."""
    import numpy as np

    from kyb_cli.core.search import door_scan

    rng = np.random.default_rng(5)
    sub = rng.standard_normal((3000, 384)).astype("<f4")
    sub /= np.linalg.norm(sub, axis=1, keepdims=True)
    q = sub[7] * 0.6 + sub[8] * 0.8
    q = (q / np.linalg.norm(q)).astype("<f4")
    got = semantic._product(sub, q.tobytes())
    assert got.dtype == np.float64 and got.shape == (3000,)
    assert np.max(np.abs(got - np.einsum("ij,j->i", sub.astype(np.float64), q.astype(np.float64)))) < semantic.MARGIN / 20
    assert door_scan.blas_one_thread() in (True, False) and door_scan.blas_one_thread() == door_scan._BLAS[0]
