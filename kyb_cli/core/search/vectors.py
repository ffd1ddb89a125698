"""Vectors in the index: the nearest versions to a question inside exactly the slice the lexical side
searched, and filling what is missing (user cache first, then the model) outside any query.

A query embeds only its own text: passages without a vector are left to the background filler
(search/background.py, `fill_background`: current versions first, then the rest newest first) or to
`kyb index --embed` (`embed_all`); the answer reports them as `pending_vectors` and ranks by
meaning over what is embedded.

Vectors are keyed by (text hash, fingerprint): versions with the same text share one, and only rows
of the current model+recipe fingerprint are ever read, so a changed model never serves an old vector.
The index is a cache: after a rebuild, vectors come back from the user-wide embedding cache without
loading the model. Distances are computed by sqlite-vec (`vec_distance_cosine`) over the slice's
rows, an exact scan: a KNN index would pick neighbours before the slice and filters cut them.
No numpy here: the lexical path and the CLI client stay light.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field
from typing import NamedTuple

from kyb_cli.core.index import schema
from kyb_cli.core.search.slice import Slice

CHUNK = 256  # texts per passage_vectors call when filling everything
BACKGROUND_BATCH = 64  # texts per committed step of the background filler (~2 s of embedding)


def load_vec(conn) -> None:
    """Load sqlite-vec into an apsw connection (idempotent per connection)."""
    try:
        conn.execute("SELECT vec_version()").fetchone()
        return
    except Exception:
        pass
    conn.enable_load_extension(True)
    try:
        conn.load_extension(_vec_path())
    finally:
        conn.enable_load_extension(False)


def _vec_path() -> str:
    """The sqlite-vec extension file, found without importing `sqlite_vec` (it imports numpy)."""
    import importlib.util

    spec = importlib.util.find_spec("sqlite_vec")
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError("sqlite-vec is not installed (pip install sqlite-vec)")
    return os.path.join(list(spec.submodule_search_locations)[0], "vec0")


def _missing_sql(s: Slice, select: str, tail: str = "") -> tuple[str, dict]:
    with_, where, params = s.sql()
    versions = "JOIN versions v ON v.id = c.vid " if where else ""  # only filters read it (hot path)
    return (f"{with_}SELECT {select} FROM cand c {versions}"
            f"JOIN vtext t ON t.version_id = c.vid WHERE NOT EXISTS (SELECT 1 FROM vectors x "
            f"WHERE x.text_sha = t.text_sha AND x.fingerprint = :fp){where} {tail}", params)


def missing(conn, fp: str, s: Slice) -> list[str]:
    """Text hashes in the slice without a vector under `fp`, newest version first."""
    sql, params = _missing_sql(s, "t.text_sha, max(c.vid) AS m, min(t.part) AS p",
                               "GROUP BY t.text_sha ORDER BY m DESC, p")
    return [row[0] for row in conn.execute(sql, params | {"fp": fp})]


def missing_in_order(conn, fp: str, limit: int, current_only: bool = False) -> list[str]:
    """The next text hashes the filler should embed: current versions first, then newest first
    (`current_only`: current versions only)."""
    having = "HAVING cur = 1 " if current_only else ""
    sql = ("SELECT t.text_sha, max(k.key IS NOT NULL) AS cur, max(t.version_id) AS m FROM vtext t "
           "LEFT JOIN keys k ON k.version_id = t.version_id AND k.state != 'retracted' "
           "WHERE NOT EXISTS (SELECT 1 FROM vectors x WHERE x.text_sha = t.text_sha AND x.fingerprint = :fp) "
           f"GROUP BY t.text_sha {having}ORDER BY cur DESC, m DESC LIMIT :n")
    return [row[0] for row in conn.execute(sql, {"fp": fp, "n": int(limit)})]


def pending(conn, fp: str, s: Slice) -> int:
    """Versions of the slice that still lack a vector under `fp`."""
    sql, params = _missing_sql(s, "count(DISTINCT c.vid)")
    return conn.execute(sql, params | {"fp": fp}).fetchone()[0]


def _texts(conn, hashes: list[str]) -> dict[str, str]:
    """Recipe text for each hash, from one version and passage that has it."""
    import json

    from kyb_cli.core.embed.recipe import passages

    out: dict[str, str] = {}
    for h in hashes:
        row = conn.execute("SELECT v.doc, t.part FROM vtext t JOIN versions v ON v.id = t.version_id "
                           "WHERE t.text_sha = ? LIMIT 1", (h,)).fetchone()
        if row is not None:
            parts = passages(schema.decode(row[0]))
            if row[1] < len(parts):
                out[h] = parts[row[1]]
    return out


def meta_key(spec) -> str:
    """The meta row naming the fingerprint a model's vectors are under (e5's kept its old name)."""
    from kyb_cli.core.embed.models import E5

    return "vec_fingerprint" if spec is None or spec.name == E5.name else f"vec_fingerprint:{spec.name}"


def store(conn, fp: str, vectors: dict[str, bytes], spec=None) -> None:
    """Install vectors under `fp` (model `spec`, default e5); the first fill under a new fingerprint
    of a model drops every vector under a fingerprint no model of the registry is under now."""
    key = meta_key(spec)
    with conn:
        row = conn.execute("SELECT v FROM meta WHERE k = ?", (key,)).fetchone()
        if row is None or row[0] != fp:
            conn.execute("INSERT OR REPLACE INTO meta(k, v) VALUES(?, ?)", (key, fp))
            kept = [r[0] for r in conn.execute("SELECT v FROM meta WHERE k LIKE 'vec_fingerprint%'")]
            marks = ",".join("?" * len(kept))
            conn.execute(f"DELETE FROM vectors WHERE fingerprint NOT IN ({marks})", kept)
        if vectors:
            conn.executemany("INSERT OR REPLACE INTO vectors(text_sha, fingerprint, vec) VALUES(?,?,?)",
                             [(h, fp, v) for h, v in vectors.items()])


@dataclass
class Filled:
    from_cache: int = 0
    embedded: int = 0
    reason: str | None = None


def fill(conn, fp: str, hashes: list[str], progress=None, spec=None) -> Filled:
    """Give `hashes` vectors: from the user cache (no model), then embedded, CHUNK texts a step.

    Queries never call it (they never wait for the model): `kyb index --embed` and the background
    filler do, one committed batch at a time. `spec`: the model (default e5)."""
    from kyb_cli.core import embed

    spec = spec or embed.E5
    done = Filled()
    if not hashes:
        store(conn, fp, {}, spec)
        return done
    cached = embed.open_cache().get_many(fp, hashes)
    store(conn, fp, cached, spec)
    done.from_cache = len(cached)
    rest = [h for h in hashes if h not in cached]
    total = len(rest)
    for i in range(0, len(rest), CHUNK):
        texts = _texts(conn, rest[i:i + CHUNK])
        base = done.embedded

        def step(n: int, _of: int, base: int = base) -> None:
            if progress is not None:
                progress(base + n, total)

        got = embed.passage_vectors(list(texts.values()), progress=step, spec=spec)
        if got.fingerprint == fp and got.vectors:
            store(conn, fp, got.vectors, spec)
            done.embedded += len(got.vectors)
        if got.reason:
            done.reason = got.reason
            break
        if got.pending:
            break
    return done


def fill_background(conn, gdir) -> bool:
    """One step of the background filler: the next batch of missing vectors, committed.

    Order: current versions under e5, current versions under each other model of the registry,
    then the rest newest first in the same model order — so a store is searchable by e5 as soon
    as it was with e5 alone, and the English side follows. False when there is nothing (more) to
    do here: no model, nothing missing, a broken model, or `kyb index --embed` asked the filler to
    stop (it fills everything itself)."""
    from kyb_cli.core import embed
    from kyb_cli.core.index import staged

    found, _missing = embed.available()
    if not found or staged.stop_requested(gdir):
        return False
    for current_only in (True, False):
        for spec, fp, _loc in found:
            hashes = missing_in_order(conn, fp, BACKGROUND_BATCH, current_only)
            if not hashes:
                continue
            done = fill(conn, fp, hashes, spec=spec)
            per = {sp.name: pending(conn, f, Slice("history")) for sp, f, _l in found}
            staged.write_status(gdir, stage="vectors", model=spec.name, pending=per[found[0][0].name],
                                pending_by_model=per, embedded=done.embedded, from_cache=done.from_cache)
            return done.reason is None and done.from_cache + done.embedded > 0
    return False


class Near(NamedTuple):
    vid: int
    key: str
    state: str
    cos: float        # cosine of the best passage
    part: int         # which passage (0 = the first: title and the body's opening)
    score: float | None  # the calibrated score of that passage (search/relevance.py), None uncalibrated
    meaning: float    # what the vector side ranks by (its two best passages, _per_version)


# A version scores by its two best passages, 0.7 x the best + 0.3 x the second (a one-passage
# version: its passage), the first passage (title + the body's opening, what a record is about)
# counted FIRST_PASSAGE_BONUS higher. On the dev set (recipe 2, docs/SEARCH.md "Passages"), against the best
# passage alone, top-3 by vectors alone went paraphrase 0.37 -> 0.39, tail 0.77 -> 0.80,
# cross-language 0.91 -> 0.93, identifier 0.82 -> 0.83 (hybrid: 0.37 -> 0.40, 0.97, 0.91 -> 0.93):
# a record that answers in two places is more likely the answer than one lucky passage. The best
# passage without the bonus lost paraphrase and cross-language.
FIRST_PASSAGE_BONUS = 0.02
BEST_WEIGHT = 0.7


def nearest(conn, qvec: bytes, fp: str, s: Slice, n: int, *, require: str | None = None,
            exclude: str | None = None, centre: tuple[bytes, bytes] | None = None,
            only: list[int] | None = None) -> list[Near]:
    """The `n` closest versions in the slice, best first, each by its two best passages (_per_version).

    One hit per key in every mode but history (which lists versions); in changed_between a key is
    represented by its closest version inside the window. Ties by key. `require`/`exclude` are the
    question's operators as FTS5 MATCH strings (search/syntax.py): a version must hold the required
    terms and none of the excluded ones, as on the lexical side. `centre` = (centred question,
    passage centre) gives each hit its calibrated score. `only`: these version ids alone.
    """
    with_, where, params = s.sql()
    if only is not None:
        where += " AND c.vid IN (" + ",".join(str(int(v)) for v in only) + ")"
    if require:
        where += " AND c.vid IN (SELECT rowid FROM fts WHERE fts MATCH :req)"
        params["req"] = require
    if exclude:
        where += " AND c.vid NOT IN (SELECT rowid FROM fts WHERE fts MATCH :exc)"
        params["exc"] = exclude
    # Distances first, carrying only (vid, part, cos): the vectors themselves, keys and states join
    # in after the per-version aggregate (carrying the blobs through it cost 8x the scan itself).
    versions = "JOIN versions v ON v.id = c.vid " if where else ""  # only filters read it
    rows = (f"SELECT c.vid AS vid, t.part AS part, 1.0 - vec_distance_cosine(x.vec, :qv) AS cos FROM cand c "
            f"{versions}JOIN vtext t ON t.version_id = c.vid "
            f"JOIN vectors x ON x.text_sha = t.text_sha AND x.fingerprint = :fp WHERE 1{where}")
    grouped = _per_version(rows)
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
    bound = params | {"fp": fp, "qv": qvec, "n": int(n), "bonus": FIRST_PASSAGE_BONUS, "wbest": BEST_WEIGHT}
    if centre:
        bound |= {"qc": centre[0], "cp": centre[1]}
    return [Near(vid, key, state, float(cos), part, None if z is None else float(z), float(m))
            for vid, key, state, cos, part, z, m in conn.execute(sql, bound)]


def _per_version(rows: str) -> str:
    """SQL turning passage rows (vid, part, cos) into one row per version (vid, part, cos, s): the
    best passage's part and cosine, and `s` = BEST_WEIGHT x the best + the rest x the second best
    (a one-passage version: its passage), the first passage counted FIRST_PASSAGE_BONUS higher.
    Binds :bonus and :wbest. max(adj) is the only min/max aggregate, so the bare columns (part,
    cos) are the best passage's."""
    ranked = (f"SELECT *, row_number() OVER (PARTITION BY vid ORDER BY adj DESC, part) AS pr FROM "
              f"(SELECT *, cos + (part = 0) * :bonus AS adj FROM ({rows}))")
    grouped = (f"SELECT vid, part, cos, max(adj) AS a1, total(CASE WHEN pr = 2 THEN adj END) AS a2, "
               f"count(*) AS np FROM ({ranked}) GROUP BY vid")
    return (f"SELECT vid, part, cos, a1 * :wbest + (CASE WHEN np > 1 THEN a2 ELSE a1 END) * (1 - :wbest) AS s "
            f"FROM ({grouped})")


def meaning_of(conn, qvec: bytes, fp: str, vids: list[int]) -> dict[int, float]:
    """The score `nearest` ranks by (Near.meaning), for given versions — lexical hits outside the
    vector side's top — those that have a vector; the others are pending."""
    if not vids:
        return {}
    marks = ",".join(f":v{i}" for i in range(len(vids)))
    rows = (f"SELECT t.version_id AS vid, t.part AS part, 1.0 - vec_distance_cosine(x.vec, :qv) AS cos FROM vtext t "
            f"JOIN vectors x ON x.text_sha = t.text_sha AND x.fingerprint = :fp WHERE t.version_id IN ({marks})")
    bound = {"qv": qvec, "fp": fp, "bonus": FIRST_PASSAGE_BONUS, "wbest": BEST_WEIGHT,
             **{f"v{i}": vid for i, vid in enumerate(vids)}}
    return {vid: float(score) for vid, _part, _cos, score in conn.execute(_per_version(rows), bound)}


@dataclass
class SemanticSide:
    ranked: list[Near] | None  # None: the vector side did not run
    pending: int = 0
    reason: str | None = None
    calibration: object = None  # search.relevance.Calibration for the fingerprint in use
    qvec: bytes | None = None   # the question's vector (meaning_of)
    fingerprint: str | None = None
    meanings: dict | None = None  # vid -> meaning for versions outside `ranked` (the fused sides)
    centre: tuple | None = None   # (centred question, passage centre): the calibrated score's inputs


def semantic_side(conn, text: str, s: Slice, n: int, *, require: str | None = None,
                  exclude: str | None = None, spec=None) -> SemanticSide:
    """Embed the question (only it: cache, warm helper, else in-process), rank the slice by cosine
    over the versions that have a vector, and count those that do not yet (`pending`). `require` /
    `exclude`: the question's operators (nearest); the hits carry the calibrated score.

    `spec`: the model (default e5). Never raises: any failure comes back as a one-line reason (the
    caller goes lexical).
    """
    from kyb_cli.core import embed

    spec = spec or embed.E5
    try:
        fp, reason, _loc = embed.current_fingerprint(spec)
        if fp is None:
            return SemanticSide(None, 0, reason)
        qvec, reason = embed.query_vector(text, spec)
        if qvec is None:
            return SemanticSide(None, 0, reason)
        load_vec(conn)
        from kyb_cli.core.search.relevance import calibration, centred_query

        cal = calibration(fp)
        centre = (centred_query(cal, qvec), cal.center_p) if cal.center_p is not None else None
        near = nearest(conn, qvec, fp, s, n, require=require, exclude=exclude, centre=centre)
        if centre is None and cal.floor is not None:  # calibrated on raw cosines
            near = [x._replace(score=x.cos) for x in near]
        return SemanticSide(near, pending(conn, fp, s), None, cal, qvec, fp, centre=centre)
    except Exception as exc:  # never a traceback, never a failed query
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        return SemanticSide(None, 0, f"semantic search failed: {first[:200]}")


def counts(conn) -> dict:
    """For `kyb doctor`/`kyb index`: versions, distinct texts, vectors per fingerprint."""
    versions = conn.execute("SELECT count(*) FROM versions").fetchone()[0]
    texts = conn.execute("SELECT count(DISTINCT text_sha) FROM vtext").fetchone()[0]
    per_fp = dict(conn.execute("SELECT fingerprint, count(*) FROM vectors GROUP BY fingerprint"))
    return {"versions": versions, "texts": texts, "vectors": per_fp}


def embed_all(store_path, progress=None) -> dict:
    """`kyb index --embed`: bring the index to HEAD and give every version a vector (no budget)."""
    from kyb_cli.core import embed
    from kyb_cli.core.errors import StoreError
    from kyb_cli.core.index import staged
    from kyb_cli.core.index.fresh import with_index

    started = time.monotonic()
    found, absent = embed.available()
    if not found or found[0][0] is not embed.E5:
        raise StoreError(embed.off_message(absent.get(embed.E5.name) or "no model"))
    fp = found[0][1]

    def run(f) -> dict:
        s = Slice("history")
        per: dict = {}
        for spec, mfp, _loc in found:  # e5 first: searchable by meaning before the English side
            todo = missing(f.conn, mfp, s)
            done = fill(f.conn, mfp, todo, progress, spec=spec)
            if done.reason:
                raise StoreError(embed.off_message(f"{spec.name}: {done.reason}"))
            per[spec.name] = {"fingerprint": mfp, "texts": len(todo), "from_cache": done.from_cache,
                              "embedded": done.embedded, "pending_vectors": pending(f.conn, mfp, s)}
        first = per[embed.E5.name]
        return {"head": f.head, "fingerprint": fp, "texts": first["texts"], "from_cache": first["from_cache"],
                "embedded": first["embedded"], "pending_vectors": first["pending_vectors"],
                "models": per | {name: {"missing": why} for name, why in absent.items()},
                **{k: v for k, v in counts(f.conn).items() if k != "vectors"}}

    with staged.filler_paused(store_path):  # one of us embeds at a time: here, with the progress bar
        out = with_index(store_path, run, history=True)
    out["seconds"] = round(time.monotonic() - started, 3)
    return out


def status(store_path) -> dict:
    """Index head, versions, vectors per fingerprint, and what is pending under the current model."""
    from kyb_cli.core import embed
    from kyb_cli.core.index.fresh import with_index

    fp, reason, _loc = embed.current_fingerprint()
    found, absent = embed.available()

    def run(f) -> dict:
        from kyb_cli.core.index import staged

        out = {"head": f.head, **counts(f.conn), "fingerprint": fp, "history_complete": f.history_complete}
        if fp is not None:
            out["pending_vectors"] = pending(f.conn, fp, Slice("history"))
        else:
            out["model"] = reason
        # Each model of the registry: its fingerprint and what is pending, or why it is missing.
        out["models"] = {spec.name: {"fingerprint": mfp, "pending_vectors": pending(f.conn, mfp, Slice("history"))}
                         for spec, mfp, _loc in found} | {name: {"missing": why} for name, why in absent.items()}
        # The background filler's progress, as any later call sees it (.git/kyb/filler.json).
        out["background"] = {"running": staged.filler_running(f.git_dir), **staged.status(f.git_dir)}
        return out

    return with_index(store_path, run)
