"""The semantic side of a search: the nearest versions to a question inside exactly the slice the
lexical side searched, by the vectors the index holds (index/vectors.py fills them, never a query).

A query embeds only its own text: passages without a vector are counted as `pending_vectors` and
the answer ranks by meaning over what is embedded. Distances are computed by sqlite-vec
(`vec_distance_cosine`) over the slice's rows, an exact scan: a KNN index would pick neighbours
before the slice and filters cut them. A long-lived door, which holds numpy with its models
(embed.resident), picks the candidates of a large slice by one matrix product first and scores
only those by sqlite-vec (_exact_of_nearest): the same answers. Elsewhere no numpy: the lexical
path and the CLI client stay light.
"""

from __future__ import annotations

import math
from collections import namedtuple

from kyb_cli.core.index.slice import Slice
from kyb_cli.core.index.vectors import PASSAGE_VECTOR, centred_cosine_sql, cosine_sql, db_state, load_vec, pending
from kyb_cli.core.plain import plain
from kyb_cli.core.search import few_vectors
from kyb_cli.core.search.matrix_rank import by_product, held_at as _held_at
from kyb_cli.core.search.matrix_rank import product as _product  # noqa: F401 (the tests')
from kyb_cli.core.search.matrix_rank import SliceArrays, rows_by_version as _rows_by_version, several as _multi
from kyb_cli.core.search.answer_memo import answer_memo as _answer_memo, approx as _approx
from kyb_cli.core.search.answer_memo import begin_answer, kept_slices as _kept_slices  # noqa: F401 (begin_answer: the pipeline's)


# One hit of the vector side. A collections.namedtuple, as typing.NamedTuple makes it, without importing
# typing (~3 ms of a hybrid `kyb query`): vid, key, state; cos: the cosine of the best passage; part:
# which passage (0 = the first: title and the body's opening); score: the calibrated score of that
# passage (search/relevance.py), None uncalibrated; meaning: what the vector side ranks by (its two best
# passages, _version_score).
Near = namedtuple("Near", ("vid", "key", "state", "cos", "part", "score", "meaning"))


# A version scores by its two best passages, 0.7 x the best + 0.3 x the second (a one-passage
# version: its passage), the first passage (title + the body's opening, what a record is about)
# counted FIRST_PASSAGE_BONUS higher. On the dev set (recipe 2, docs/SEARCH.md "Passages"), against the best
# passage alone, top-3 by vectors alone went paraphrase 0.37 -> 0.39, tail 0.77 -> 0.80,
# cross-language 0.91 -> 0.93, identifier 0.82 -> 0.83 (hybrid: 0.37 -> 0.40, 0.97, 0.91 -> 0.93):
# a record that answers in two places is more likely the answer than one lucky passage. The best
# passage without the bonus lost paraphrase and cross-language.
FIRST_PASSAGE_BONUS = 0.02
BEST_WEIGHT = 0.7
# A version of N passages has N chances at a high cosine (the expected best of N grows about as
# ln N): its score is lowered by LENGTH_PENALTY x ln(N) (0 for one passage), so a long record does
# not win by its number of passages (issue 41: a 27 kB essay of 24 passages outranked the short
# note that answered). Chosen on the dev set's fit half (hybrid top-3 / MRR, docs/SEARCH.md "The
# last points"): 0 / 0.003 / 0.005 / 0.0075 / 0.01 -> paraphrase 0.60 / 0.60 / 0.60 / 0.62 / 0.62
# (MRR 0.486 / 0.510 / 0.506 / 0.485 / 0.480), reworded MRR 0.906 / 0.912 / 0.906 / 0.907 / 0.893,
# cross-language top-1 0.96 / 0.93 / 0.93 / 0.81 / 0.78; the check half: paraphrase 0.59 -> 0.60,
# cross-language 0.86 -> 0.89 at 0.003.
LENGTH_PENALTY = 0.003

# The statements' cosines (index/vectors.py names them): a passage x's to the question :qv in the
# index's join, the door copy's (door_scan.py: table p) to `?`, and the centred ones of _calibrated.
_COSINE = cosine_sql("x.vec", ":qv")
_COPY_PASSAGES = f"SELECT vid, state, part, {cosine_sql('vec', '?')} FROM p"
_CENTRED = centred_cosine_sql("x.vec", ":cp", ":qc")
_CENTRED_COPY = centred_cosine_sql("vec", ":cp", ":qc")


def nearest(conn, qvec: bytes, fp: str, s: Slice, n: int, *, require: str | None = None,
            exclude: str | None = None, centre: tuple[bytes, bytes] | None = None,
            only: list[int] | None = None) -> list[Near]:
    """The `n` closest versions in the slice, best first, each by its two best passages (_version_score).

    One hit per key in every mode but history (which lists versions); in changed_between a key is
    represented by its closest version inside the window. Ties by key. `require`/`exclude` are the
    question's operators as FTS5 MATCH strings (search/syntax.py): a version must hold the required
    terms and none of the excluded ones, as on the lexical side. `centre` = (centred question,
    passage centre) gives each hit its calibrated score. `only`: these version ids alone.

    The distances are sqlite-vec's, one flat scan of the slice's passages (_scanned); the per-version
    scores and the order are made here, the same arithmetic as the SQL of before (tests/test_warm_semantic.py
    holds it to that) at a fifth of its cost: SQLite's window functions cost more than the distances. One scan
    per (question, model, slice) serves the answer's every call (the English route asks e5's side
    again for the English side's hits, and meaning_of for the words' hits).
    """
    n = max(int(n), 0)
    copy, large = None, _resident() and len(_matrix(conn, fp)[0]) >= MATRIX_FROM
    if s.mode != "changed_between" and large:
        rows = _exact_of_nearest(conn, qvec, fp, s, n, require, exclude, only)
    else:
        if _resident() and not (large or require or exclude):
            from kyb_cli.core.search.door_scan import centred, copy_of

            copy = copy_of(conn, fp, s)
        scanned = _scanned(conn, qvec, fp, s, require, exclude, copy)
        rows = scanned if only is None else {v: scanned[v] for v in dict.fromkeys(only) if v in scanned}
    if s.mode == "changed_between":  # a key by its closest version in the window (ties: the newest)
        keys = _keys(conn, list(rows)) if copy is None else {v: copy.keys[v] for v in rows}
        best: dict[str, int] = {}
        for vid, _row in sorted(rows.items(), key=lambda kv: (-kv[1][3], -kv[0])):
            best.setdefault(keys[vid], vid)
        pool = list(best.values())
    else:
        # Only the top n and whatever ties the n-th need their key (the tie-break): reading every
        # version's key cost 3x the distances at 10k keys.
        # The n-th best score by its floats sorted alone, then those at or above it (the n best and
        # whatever ties the n-th): a sort by key function cost ~4x (108 runbooks: ~20 µs a call).
        pool = list(rows)
        if len(pool) > n:
            last = sorted([row[3] for row in rows.values()], reverse=True)[n - 1] if n else None
            pool = [v for v, row in rows.items() if last is not None and row[3] >= last]
        keys = {v: copy.keys[v] for v in pool} if copy is not None else _kept_keys(conn, fp, pool) if large \
            else _keys(conn, pool)
    top = sorted(pool, key=lambda v: (-rows[v][3], keys[v], -v))[:n]
    scores = {}
    if centre and top:
        picks = [(vid, rows[vid][1]) for vid in top]
        kept = _kept_slices().get((*_db_state(conn), fp)) if large else None
        if kept is not None:
            from kyb_cli.core.search import kept_rows

            scores = kept_rows.calibrated(conn, centre, picks, kept)
        else:
            scores = (copy is not None and centred(copy, centre, picks)) or _calibrated(  # centred: numpy
                conn if copy is None else copy.db, fp, centre, picks, copy is not None)
    return [Near(vid, keys[vid], rows[vid][0], rows[vid][2], rows[vid][1], scores.get(vid), rows[vid][3])
            for vid in top]


def _kept_keys(conn, fp: str, vids: list[int]) -> dict[int, str]:
    """_keys of versions of the slice this answer just ranked by the matrix, kept with its arrays
    while the index is unchanged: only those not asked before are read (10k keys, the warm
    questions: _keys' SQL ~0.1 ms a call, 3 calls an English answer). Read with the slice instead,
    the join cost its every making ~25 ms more (10k keys: 40 -> 70 ms)."""
    kept = _kept_slices().get((*_db_state(conn), fp))
    if kept is None:
        return _keys(conn, vids)
    known = kept.keys
    missing = [v for v in vids if v not in known]
    if missing:
        known.update(_keys(conn, missing))  # one dict, several answering threads: update() is atomic
    return {v: known[v] for v in vids}


def _keys(conn, vids: list[int]) -> dict[int, str]:
    if not vids:
        return {}
    marks = ",".join(str(int(v)) for v in vids)
    return dict(conn.execute(f"SELECT id, key FROM versions WHERE id IN ({marks})"))


def _scanned(conn, qvec: bytes, fp: str, s: Slice, require: str | None, exclude: str | None,
             copy=None) -> dict:
    """{vid: (state, part, cos, meaning)} for every version of the slice with a vector, made once
    per answer (begin_answer), on this connection and while the index is unchanged. `copy`: the
    door's copy of the slice's passages (door_scan.py), scanned instead of the index's join."""
    with_, where, params = s.sql()
    memo = _answer_memo()
    key = ("scan", *_db_state(conn), fp, qvec, with_, where, repr(sorted(params.items())), require, exclude)
    if key in memo:
        return memo[key]
    if copy is not None:
        from kyb_cli.core.search.door_scan import scan

        out = scan(copy, qvec, FIRST_PASSAGE_BONUS, BEST_WEIGHT, LENGTH_PENALTY)
        if out is None:  # a zero vector: its NULL cosine sorts as in SQL
            out = _by_version(copy.db.execute(_COPY_PASSAGES, (qvec,)))
    else:
        out = _score_rows(conn, s, qvec, fp, require, exclude)
    memo[key] = out
    return out


def _resident() -> bool:
    from kyb_cli.core import embed

    return embed.is_resident()


# How far a version's score by numpy's float32 product may be from sqlite-vec's (a 384-dim dot of
# unit vectors rounds within ~2.3e-5 either way): every version within this of the n-th best by
# numpy is scored again by sqlite-vec, so the top n are exactly the SQL's.
MARGIN = 1e-3
# Below this many vectors of a model the flat scan is cheaper than the matrix and the exact pass
# (108 runbooks, 204 passages: 0.6 ms a side scanned, 0.75 ms by the matrix; 10k keys, 8.9k
# passages: 35 ms against 2.5 ms).
MATRIX_FROM = 2000


def _exact_of_nearest(conn, qvec: bytes, fp: str, s: Slice, n: int, require, exclude, only) -> dict:
    """A long-lived door's vector side (it holds numpy with its models): every version of the
    slice scored at once by one matrix product over the model's vectors (kept per connection
    until the index changes), then the versions that can be in the top n scored again exactly
    (sqlite-vec, _scanned's arithmetic). {vid: (state, part, cos, meaning)} of those."""
    import numpy as np

    vids, approx, states, kept = _approximate(conn, qvec, fp, s, require, exclude)
    if only is not None:
        at = _held_at(vids, only)
        vids, approx = vids[at], approx[at]
    if len(vids) > n:
        nth = np.partition(approx, len(approx) - n)[len(approx) - n] if n else np.inf
        vids = vids[approx >= nth - MARGIN]
    slices = _kept_slices()
    if len(slices) >= 8:
        slices.clear()
    slices[(*_db_state(conn), fp)] = kept  # meaning_of reads the lexical hits' rows from it
    return _exact(conn, qvec, fp, [int(v) for v in vids], states, kept)


def _exact(conn, qvec: bytes, fp: str, vids: list[int], states: dict, kept=None) -> dict:
    """{vid: (state, part, cos, meaning)} of versions already known to be in the slice, by
    sqlite-vec over all their passages (remembered for meaning_of, as _scanned). `kept`: the
    slice's kept passages (_approximate), whose rows are the index's blobs byte for byte: bound
    to sqlite-vec's function as they are, instead of read again from the index."""
    if not vids:
        return {}
    memo = _answer_memo()
    key = ("scan", *_db_state(conn), fp, qvec, "vids", tuple(sorted(vids)))
    if key not in memo:
        memo[key] = {vid: (states[vid], *score) for vid, score in _scored(conn, qvec, fp, vids, kept).items()}
    return memo[key]


def _scored(conn, qvec: bytes, fp: str, vids: list[int], kept=None) -> dict:
    """{vid: (part, cos, meaning)} of the versions among `vids` with a vector under `fp`, by
    sqlite-vec over their passages and _version_score (the arithmetic of the SQL of before, which
    tests/test_warm_semantic.py keeps as the reference). `kept`: the ranked slice's kept rows,
    holding every one of `vids` (search/kept_rows.py: the same blobs, not read again)."""
    if kept is not None:
        from kyb_cli.core.search import kept_rows

        passages = kept_rows.cosines(conn, qvec, vids, kept)
        if passages is not None:
            return {vid: _version_score(ps) for vid, ps in passages.items()}
    marks = ",".join(str(int(v)) for v in vids)
    passages = {}
    for vid, part, cos in conn.execute(
            f"SELECT t.version_id, t.part, {_COSINE} FROM vtext t {PASSAGE_VECTOR} WHERE t.version_id IN ({marks})",
            {"qv": qvec, "fp": fp}):
        passages.setdefault(vid, []).append((part, cos))
    return {vid: _version_score(ps) for vid, ps in passages.items()}


def _approximate(conn, qvec: bytes, fp: str, s: Slice, require, exclude):
    """(vids, meaning by numpy, {vid: state}, the kept arrays) of every version of the slice with a
    vector under `fp`. The slice's passages are kept per connection while the index is unchanged (a question
    with operators reads its own), grouped by version, with their own contiguous copy of their
    rows of the model's matrix: a question is one product over the slice's passages (not every
    vector of the model: 10k keys with history embedded, 75k rows against ~9k current ones)."""
    import numpy as np

    from kyb_cli.core.index.vectors import conn_memo
    from kyb_cli.core.search.door_scan import run_firsts, run_lengths

    with_, where, params = s.sql()
    key = ("passages", fp, with_, where, repr(sorted(params.items())), require, exclude)
    memo = conn_memo(conn) if not (require or exclude) else _answer_memo()
    state = db_state(conn)
    known = memo.get(key)
    if known is None or known[0] != state:
        rows, matrix = _matrix(conn, fp)
        versions = "JOIN versions v ON v.id = c.vid " if where else ""
        where, params = _operators(where, params, require, exclude)
        found = conn.execute(f"{with_}SELECT c.vid, c.state, t.part, t.text_sha FROM cand c {versions}"
                             f"JOIN vtext t ON t.version_id = c.vid WHERE 1{where}", params).fetchall()
        picked = sorted((vid, part, rows[sha]) for vid, _st, part, sha in found if sha in rows)
        vid, part, at = (np.array([p[i] for p in picked], dtype=np.int64) for i in range(3))
        new = run_firsts(vid)  # a version's first row
        starts, group = np.flatnonzero(new), np.cumsum(new) - 1
        sub = np.ascontiguousarray(matrix[at]) if len(at) else np.zeros((0, matrix.shape[1]), dtype="<f4")
        count = run_lengths(starts, len(vid))
        # the state's constants, made once, not per question: each passage's first-passage bonus and
        # each version's length penalty (the same float64 arrays the per-question lines made)
        fixed = ((part == 0) * FIRST_PASSAGE_BONUS, LENGTH_PENALTY * np.log(count), _multi(starts, count))
        known = memo[key] = (state, SliceArrays(vid[starts], fixed, sub, starts, group, count,
                                                {v: st for v, st, _p, _s in found}, part, {},
                                                _rows_by_version(vid[starts], starts, count, part)))
    uniq, states = known[1].versions, known[1].states
    if not len(uniq):
        return uniq, np.zeros(0), states, known[1]
    kept = _approx()
    # The English route asks e5's side again after the English model's (combine: e5's Near for the
    # English side's hits): one product per model and question, so one kept per model, not the last.
    last = kept.get(fp)
    if last is not None and last[0] is known and last[1] == qvec:
        return last[2]
    from kyb_cli.core.search import door_scan

    out = door_scan.primed(fp, qvec, known) or _by_product(known, qvec)  # primed: on the model's thread
    door_scan.offer(fp, known, _by_product)  # the next question under `fp` may be primed with it
    if len(kept) >= 4 and fp not in kept:  # models come and go (a fingerprint change): start over
        kept.clear()
    kept[fp] = (known, qvec, out)  # held, so `is` cannot match another state's arrays
    return out


def _by_product(known, qvec: bytes):
    """_approximate's ranking of one question by the kept arrays `known` (matrix_rank.by_product);
    what door_scan.prime runs on a model's thread."""
    return by_product(known, qvec, BEST_WEIGHT)


def _matrix(conn, fp: str):
    """({text hash: row}, float32 matrix) of the index's vectors under `fp`, kept per connection
    while the index is unchanged (vectors.db_state: its own changes, another connection's commit)."""
    import numpy as np

    from kyb_cli.core.index.vectors import per_state

    def make():
        found = conn.execute("SELECT text_sha, vec FROM vectors WHERE fingerprint = ?", (fp,)).fetchall()
        rows = {sha: i for i, (sha, _v) in enumerate(found)}
        matrix = (np.frombuffer(b"".join(v for _s, v in found), dtype="<f4").reshape(len(found), -1)
                  if found else np.zeros((0, 1), dtype="<f4"))
        return rows, matrix

    return per_state(conn, ("matrix", fp), make)


def _operators(where: str, params: dict, require, exclude, vid: str = "c.vid") -> tuple[str, dict]:
    if require:
        where += f" AND {vid} IN (SELECT rowid FROM fts WHERE fts MATCH :req)"
        params["req"] = require
    if exclude:
        where += f" AND {vid} NOT IN (SELECT rowid FROM fts WHERE fts MATCH :exc)"
        params["exc"] = exclude
    return where, params


def _score_rows(conn, s: Slice, qvec: bytes, fp: str, require, exclude, by_lookups: bool | None = None) -> dict:
    """_scanned's rows from the index: the slice materialized and joined to the vectors, or, while
    the model's vectors are few (`by_lookups` None: few_vectors.few), found from them: the same rows."""
    with_, where, params = s.sql()
    if by_lookups is None:
        by_lookups = few_vectors.few(conn, fp, s)
    sql = None
    if by_lookups:
        found_where, params = _operators(where, params, require, exclude, "t.version_id")
        sql = few_vectors.lookups(s, f"t.version_id, k.state, t.part, {_COSINE}", found_where)
    if sql is None:
        versions = "JOIN versions v ON v.id = c.vid " if where else ""  # only filters read it
        where, params = _operators(where, params, require, exclude)
        sql = (f"{with_}SELECT c.vid, c.state, t.part, {_COSINE} FROM cand c "
               f"{versions}JOIN vtext t ON t.version_id = c.vid {PASSAGE_VECTOR} WHERE 1{where}")
    return _by_version(conn.execute(sql, params | {"fp": fp, "qv": qvec}))


def _by_version(found) -> dict:
    """{vid: (state, part, cos, meaning)} from passage rows (vid, state, part, cos)."""
    passages: dict[int, list] = {}
    state: dict[int, str] = {}
    for vid, st, part, cos in found:
        passages.setdefault(vid, []).append((part, cos))
        state.setdefault(vid, st)
    return {vid: (state[vid], *_version_score(ps)) for vid, ps in passages.items()}


def _version_score(passages: list[tuple[int, float]]) -> tuple[int, float, float]:
    """(part, cos, meaning) of one version from its passages' (part, cosine): as the SQL of before
    did (tests/test_warm_semantic.py: per_version) — the best passage by cosine + FIRST_PASSAGE_BONUS
    for part 0 (ties: the lower part),
    meaning = BEST_WEIGHT x its adjusted cosine + the rest x the second's (a one-passage version:
    its own)."""
    if len(passages) == 1 and passages[0][1] is not None:  # most versions: one passage
        part, cos = passages[0]
        a1 = cos + (part == 0) * FIRST_PASSAGE_BONUS
        return part, cos, a1 * BEST_WEIGHT + a1 * (1 - BEST_WEIGHT)  # ln(1) = 0: no length penalty
    adj = sorted(((None if cos is None else cos + (part == 0) * FIRST_PASSAGE_BONUS, part, cos)
                  for part, cos in passages), key=lambda x: (x[0] is None, -(x[0] or 0.0), x[1]))
    a1, part, cos = adj[0]  # a NULL distance (a zero vector) sorts last, as in SQL
    a2 = (adj[1][0] or 0.0) if len(adj) > 1 else a1  # total() of a NULL is 0.0
    return part, cos, a1 * BEST_WEIGHT + a2 * (1 - BEST_WEIGHT) - LENGTH_PENALTY * math.log(len(passages))


def _calibrated(conn, fp: str, centre: tuple[bytes, bytes], picks: list[tuple[int, int]],
                copy: bool = False) -> dict[int, float | None]:
    """The calibrated score (centred cosine) of each (vid, part) passage; `copy`: `conn` is door_scan's copy."""
    marks = ",".join(f"(:v{i}, :p{i})" for i in range(len(picks)))
    bound = {"qc": centre[0], "cp": centre[1]}
    for i, (vid, part) in enumerate(picks):
        bound[f"v{i}"], bound[f"p{i}"] = vid, part
    if copy:
        sql = f"SELECT vid, {_CENTRED_COPY} FROM p WHERE (vid, part) IN (VALUES {marks})"
    else:
        bound["fp"] = fp
        sql = (f"SELECT t.version_id, {_CENTRED} FROM vtext t {PASSAGE_VECTOR} "
               f"WHERE (t.version_id, t.part) IN (VALUES {marks})")
    return {vid: None if z is None else float(z) for vid, z in conn.execute(sql, bound)}


def _db_state(conn) -> tuple:
    """The connection and what its view of the index was made from (vectors.db_state)."""
    return (id(conn), *db_state(conn))


def meaning_of(conn, qvec: bytes, fp: str, vids: list[int]) -> dict[int, float]:
    """The score `nearest` ranks by (Near.meaning), for given versions — lexical hits outside the
    vector side's top — those that have a vector; the others are pending. Versions this answer's
    scans already scored are not read again (a version's score depends on its passages alone)."""
    if not vids:
        return {}
    known: dict[int, float] = {}
    state = _db_state(conn)
    for key, rows in _answer_memo().items():
        if key[1:4] == state and key[4] == fp and key[5] == qvec:
            known.update({v: rows[v][3] for v in vids if v in rows})
    rest = [v for v in vids if v not in known]
    if not rest:
        return {v: known[v] for v in sorted(known)}
    # the scores by _version_score, not SQL's window functions (as before): the same
    # scores at a third of the cost (10k keys: ~2 ms an English answer, both models' outside hits)
    memo = _answer_memo()
    key = ("scan", *state, fp, qvec, "meaning", tuple(sorted(rest)))
    if key not in memo:
        kept, inside = _kept_slices().get((*state, fp)), []
        if kept is not None:  # the versions the ranked slice holds: from its kept rows (kept_rows.py)
            from kyb_cli.core.search.kept_rows import holding

            inside = holding(kept, rest)
        held = frozenset(inside)
        outside = [v for v in rest if v not in held]
        scored = (_scored(conn, qvec, fp, inside, kept) if inside else {}) | (
            _scored(conn, qvec, fp, outside) if outside else {})
        memo[key] = {vid: (None, *score) for vid, score in scored.items()}
    known |= {vid: float(row[3]) for vid, row in memo[key].items()}
    return {v: known[v] for v in sorted(known)}  # in vid order, as GROUP BY gives it (sums read it in order)


@plain  # not dataclasses (inspect, ast: ~8 ms of a hybrid `kyb query`)
class SemanticSide:
    ranked: list[Near] | None  # None: the vector side did not run
    pending: int = 0
    reason: str | None = None
    calibration: object = None  # search.relevance.Calibration for the fingerprint in use
    qvec: bytes | None = None   # the question's vector (meaning_of)
    fingerprint: str | None = None
    meanings: dict | None = None  # vid -> meaning for versions outside `ranked` (the fused sides)
    centre: tuple | None = None   # (centred question, passage centre): the calibrated score's inputs
    vote: list | None = None      # the multilingual vote's top hits (Near, search/vote.py), None: no vote


def semantic_side(conn, text: str, s: Slice, n: int, *, require: str | None = None,
                  exclude: str | None = None, spec=None, given: tuple | None = None,
                  scored: bool = True) -> SemanticSide:
    """Embed the question (only it: cache, warm helper, else in-process), rank the slice by cosine
    over the versions that have a vector, and count those that do not yet (`pending`). `require` /
    `exclude`: the question's operators (nearest); the hits carry the calibrated score.

    `spec`: the model (default e5). `given`: the question's (fingerprint, vector, reason) under it,
    already embedded (embed.query_vectors: the route's models side by side). `scored=False`: the hits
    carry no calibrated score (the English side: an answer's strength is e5's, search/route.py), which
    spares its SQL. Never raises: any failure comes back as a one-line reason (the
    caller goes lexical).
    """
    from kyb_cli.core import embed

    spec = spec or embed.E5
    try:
        fp, qvec, reason = given if given is not None else embed.query_vectors(text, [spec])[0]
        if fp is None or qvec is None:
            return SemanticSide(None, 0, reason)
        load_vec(conn)
        from kyb_cli.core.search.relevance import calibration, centred_query

        cal = calibration(fp)
        centre = (centred_query(cal, qvec), cal.center_p) if scored and cal.center_p is not None else None
        near = nearest(conn, qvec, fp, s, n, require=require, exclude=exclude, centre=centre)
        if scored and centre is None and cal.floor is not None:  # calibrated on raw cosines
            near = [x._replace(score=x.cos) for x in near]
        return SemanticSide(near, pending(conn, fp, s), None, cal, qvec, fp, centre=centre)
    except Exception as exc:  # never a traceback, never a failed query
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        return SemanticSide(None, 0, f"semantic search failed: {first[:200]}")
