"""How much a hit can be trusted: per hit `strength` (strong | weak) and `found_by` (lexical |
semantic | both), per answer `confident` (true only when at least one hit is strong).

"Finding is not knowing": a ranked list always has a first hit, so rank says nothing about whether
anything matched. Two kinds of evidence make a hit strong:
- lexical: the hit holds the question's words — at least `lexical_cover` of their weight (each
  term weighs its inverse document frequency, so a hit holding only the commonest word of five is
  weak), or the whole question as written when it looks like an identifier;
- semantic: its vector score clears the floor calibrated on data for this model and recipe. e5's
  raw cosines are compressed (~0.7-0.9 for anything), so the score is the cosine after removing
  the mean direction of queries and of passages (the model's anisotropy), with the floor set where
  on-topic and off-topic questions of the dev set separate best (bench/calibrate_search.py);
- both at once: it holds `agree_cover` of the question's weight AND its vector score is within
  reach of the floor (`agree_floor`): two partial pieces of evidence that agree. On the dev set
  lifted on-topic `confident: true` 0.88 -> 0.91 (recipe 2), 0.88 -> 0.91 (recipe 3), off-topic
  `confident: false` staying at or above 0.915 (bench/calibrate_search.py agree). And the
  question's words recur in the store (`agree_typical`: a quarter of the candidates hold that
  share): an off-topic question's few words meeting in one record by chance do not agree (issue
  41: off-topic `confident: false` 0.85 -> 0.94, bench/exp_agree_typical.py).
The calibration is kept per vector fingerprint (model files + recipe) in calibration.json; under a
model or recipe it has no entry for, only lexical evidence can make a hit strong.
"""

from __future__ import annotations

import json
import math
import os
import re
from kyb_cli.core.plain import plain
from functools import lru_cache

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing
if TYPE_CHECKING:
    from pathlib import Path  # pathlib only for annotations: importing it (urllib.parse, ipaddress) was ~4 ms of a `kyb query`

CALIBRATION_FILE = os.path.join(os.path.dirname(__file__), "calibration.json")  # a str: no pathlib (issue 38)
LEXICAL_COVER = 0.5  # used when a calibration does not say (and with no model at all)
# A lexical top hit is decisive (it leads a hybrid answer) when its BM25 is at least this many
# times the second's and it holds this share of the question's weight (dev set, docs/SEARCH.md).
DECISIVE_BM25_RATIO = 1.3
DECISIVE_COVER = 0.67
# ... and, when the vector side ran, the vector side ranks it among its first 10: a word match the
# meaning puts nowhere does not lead (dev set, fit half: paraphrase top-3 0.56 -> 0.58, nothing
# else moved; docs/SEARCH.md "A second, English vector side").
DECISIVE_VECTOR_RANK = 10


@plain(frozen=True)
class Calibration:
    floor: float | None                 # semantic score at or above which a vector match is strong
    center_q: bytes | None = None       # float32 mean of query vectors (None: not centred)
    center_p: bytes | None = None       # float32 mean of passage vectors
    lexical_cover: float = LEXICAL_COVER
    lexical_boost: float = 0.0          # a hit's semantic score + lexical_boost * its word coverage
                                        # (fitted by bench/calibrate_search.py pipeline; 0 so far)
    agree_cover: float | None = None    # words and meaning agreeing: this much of the question's
    agree_floor: float | None = None    # weight held and a semantic score of at least this
    agree_typical: float | None = None  # ... and the question's words recur in the store: a quarter
                                        # of the candidates hold at least this share (fusion.typical)
    source: str = "none"
    floor_other: float | None = None    # the floor for a question the router does not call English
                                        # (search/route.py; None: `floor` for every question)


NONE = Calibration(None)


def _pack(values) -> bytes | None:
    import struct  # semantic only: not on a lexical query's import floor (issue 38)

    return None if not values else struct.pack(f"<{len(values)}f", *values)


@lru_cache(maxsize=4)
def _table(path: str) -> dict:
    try:
        with open(path, encoding="utf-8") as fh:
            return json.loads(fh.read())
    except (OSError, ValueError):
        return {}


def calibration(fingerprint: str | None) -> Calibration:
    """The calibration for a vector fingerprint, or NONE (semantic evidence alone is never strong)."""
    entry = _table(str(CALIBRATION_FILE)).get(fingerprint or "") if fingerprint else None
    if not isinstance(entry, dict):
        return NONE
    return Calibration(floor=float(entry["floor"]), center_q=_pack(entry.get("center_q")),
                       center_p=_pack(entry.get("center_p")),
                       lexical_cover=float(entry.get("lexical_cover", LEXICAL_COVER)),
                       lexical_boost=float(entry.get("lexical_boost", 0.0)),
                       agree_cover=_float(entry.get("agree_cover")), agree_floor=_float(entry.get("agree_floor")),
                       agree_typical=_float(entry.get("agree_typical")),
                       source=str(entry.get("source", "")), floor_other=_float(entry.get("floor_other")))


def for_question(cal: Calibration, english: bool) -> Calibration:
    """The calibration that grades one question: e5 scores a question against passages in another
    language lower than in the same language, so a question the router does not call English is
    held to `floor_other` when the calibration has one (bench/calibrate_routes.py)."""
    if english or cal.floor_other is None:
        return cal
    from kyb_cli.core.plain import replace

    return replace(cal, floor=cal.floor_other)


def words_only(cal: Calibration) -> Calibration:
    """`cal` with no semantic evidence: while a candidate of the answer has no vector yet, the
    meaning side is known to be partial, so a hit is strong by its words alone (rule "how sure")."""
    from kyb_cli.core.plain import replace

    return replace(cal, floor=None, agree_cover=None, agree_floor=None, agree_typical=None)


def _float(value) -> float | None:
    return None if value is None else float(value)


def centred_query(cal: Calibration, qvec: bytes) -> bytes:
    """normalise(q - center_q): the query side of the calibrated score (q as is without a centre)."""
    if cal.center_q is None:
        return qvec
    import sys

    np = sys.modules.get("numpy")  # a door holds numpy with its models: the same IEEE arithmetic, ~10x faster
    if np is not None:
        d = np.frombuffer(qvec, dtype="<f4").astype(np.float64) - np.frombuffer(cal.center_q, dtype="<f4")
        norm = math.sqrt(sum((d * d).tolist())) or 1.0  # summed in order, as below
        return (d / norm).astype("<f4").tobytes()
    import struct

    n = len(qvec) // 4
    q = struct.unpack(f"<{n}f", qvec)
    c = struct.unpack(f"<{n}f", cal.center_q)
    d = [a - b for a, b in zip(q, c)]
    norm = math.sqrt(sum(x * x for x in d)) or 1.0
    return struct.pack(f"<{n}f", *(x / norm for x in d))


# Compiled by re's cache on first use (~0.2 ms): a lower-case word of letters never matches it.
_IDENT = r"-{0,2}[^\W_][\w]*(?:[-_./:@#=][\w]+)+|\w*\d\w*|\w*[a-z][A-Z]\w*|[A-Z]{2,}[a-z]\w*|--\w+"
_HEX = re.compile(r"^[0-9a-f]{7,40}$")


def looks_like_identifier(raw_words: list[str]) -> bool:
    """A short question that reads like a name in a system: `fs.file-nr`, `system-cluster-critical`,
    `orders_api`, `9090`, `kubeApiserver`, a sha, `etcdserver: no leader`, a path."""
    words = [w.strip("\"'`()[]{},;") for w in raw_words]
    words = [w for w in words if w]
    if not words:
        return False
    if 1 < len(words) <= 10 and words[0].endswith(":") and re.fullmatch(r"[\w.-]+:", words[0]):
        return True  # an error message as logged: `etcdserver: no leader`
    if len(words) > 4:
        return False
    return any(not (w.isalpha() and w.islower()) and re.fullmatch(_IDENT, w) or _HEX.match(w.lower()) or "/" in w
               for w in words)


def term_weights(conn, terms: list[str], head: str | None = None) -> list[float]:
    """Inverse document frequency of each term over all indexed versions (log((N+1)/(df+0.5))).

    A term's df is counted once per state of the index (`head`, the index file, its newest version id)
    and kept: counting a common word's rows costs ~1 ms at 10k keys, a lookup nothing. N is the newest
    id: the build numbers versions 1, 2, 3... and never deletes one (tests/test_search_relevance_total.py),
    and a count(*) of 369k versions was ~9 ms of every question at 100k keys."""
    if not terms:
        return []
    from kyb_cli.core.index import warm

    total, state = warm.index_state(conn, head)
    known = warm.kept_for(_DF, state, _DF_MAX)
    missing = [t for t in terms if t not in known]
    kept_at = None
    if missing and not warm.keeping():  # a one-shot process: the counts kept on disk (search/df_file.py)
        from kyb_cli.core.search import df_file

        kept_at = df_file.state_of(conn, head, total)
        if kept_at is not None:
            known.update(df_file.known(conn, kept_at, missing))
            missing = [t for t in missing if t not in known]
    if missing:
        from kyb_cli.core.search import bm25

        tokenize = bm25.tokenizer(conn)
        for t in missing:
            known[t] = _df(conn, t, tokenize)
        if kept_at is not None:
            df_file.remember(conn, kept_at, {t: known[t] for t in missing})
    return [max(0.05, math.log((total + 1) / (known[t] + 0.5))) for t in terms]


def _df(conn, term: str, tokenize) -> int:
    """The versions holding `term` (an FTS5 expression): a single word's from the index's term list
    (fts5vocab `row`: its count of rows, read ~3x faster than counting the MATCH, 100k keys), else
    counted. `fts` never deletes a row, so the two are the same number. `tokenize`: the index's
    tokenizer (search/bm25.tokenizer)."""
    from kyb_cli.core.search import bm25

    words = bm25.words_of(term)
    token = bm25.token_of(tokenize, words[0]) if words is not None and len(words) == 1 else None
    if token is not None:
        conn.execute("CREATE VIRTUAL TABLE IF NOT EXISTS temp.kyb_rows USING fts5vocab(main, fts, row)")
        row = conn.execute("SELECT doc FROM temp.kyb_rows WHERE term = ?", (token,)).fetchone()
        return row[0] if row is not None else 0
    return conn.execute("SELECT count(*) FROM fts WHERE fts MATCH ?", (term,)).fetchone()[0]


_DF: list = [(None, {})]  # [(index state, {term: df})] (term_weights)
_DF_MAX = 20_000


def term_hits(conn, terms: list[str], vids: list[int], head: str | None = None) -> dict[int, set[int]]:
    """For each version id, the indexes of the terms it holds. In a long-lived door (`head` given),
    a term held by few versions has its rows read once per state of the index and kept (_rows): one
    FTS query per term of every question cost ~0.17 ms each, 108 runbooks; the same sets. A common
    word's is read from the postings the door's BM25 already holds for this state (bm25.Held: ~0.6
    ms a word at 10k keys, where FTS5 walked its whole doclist for ~70 candidates)."""
    out: dict[int, set[int]] = {v: set() for v in vids}
    if not terms or not vids:
        return out
    kept = _rows(conn, terms, head) if head is not None else {}
    posted = None
    for i, t in enumerate(terms):
        rows = kept.get(t)
        if rows is not None:
            for vid in rows.intersection(out) if isinstance(rows, frozenset) else _among(rows, vids):
                out[vid].add(i)
            continue
        asked = vids
        if head is not None:  # a door: a common word's current rows from the postings BM25 read
            if posted is None:
                from kyb_cli.core.search.bm25 import Held

                posted = Held.of(conn, vids) or False
            held = posted.holding(t) if posted else None
            if held is not None:
                for vid in held:
                    out[vid].add(i)
                asked = posted.outside  # versions fts_now does not hold (history): asked as before
        if asked:
            marks = ",".join("?" * len(asked))
            for (vid,) in conn.execute(f"SELECT rowid FROM fts WHERE fts MATCH ? AND rowid IN ({marks})", (t, *asked)):
                out[vid].add(i)
    return out


# A term's rows are kept when at most ROWS_MAX versions hold it (its df, counted by term_weights for
# the same state), up to ROWS_BUDGET rows in all (then kept anew): a common word is asked with the
# candidates' ids, as before. A prefix (`"депл" *`: a stemmed Cyrillic word, a `rep*`) is kept up to
# PREFIX_MAX: FTS5 merges the doclists of every token it starts on each query, candidates' ids or not
# (~12 ms a common Cyrillic stem at 10k keys, every call: issue 38); kept, an intersection.
ROWS_MAX = 1000
PREFIX_MAX = 50_000
ROWS_BUDGET = 200_000
_ROWS: list = [(None, {}, 0)]  # [(index state, {term: frozenset(rowids) | sorted array}, rows kept)]


def _rows(conn, terms: list[str], head: str) -> dict:
    """{term: every version holding it} for the terms whose df this state counted at most ROWS_MAX (a
    prefix: PREFIX_MAX), in a long-lived door only (index/warm.keeping): a one-shot process would read
    them for nothing."""
    from kyb_cli.core.index import warm

    if not warm.keeping():
        return {}
    _total, state = warm.index_state(conn, head)
    seen_df, df = _DF[0]
    if seen_df != state:
        return {}
    seen, kept, size = _ROWS[0]
    if seen != state or size > ROWS_BUDGET:
        kept, size = {}, 0
    for t in terms:
        prefix = t.endswith("*")
        if t not in kept and df.get(t, PREFIX_MAX + 1) <= (PREFIX_MAX if prefix else ROWS_MAX):
            rows = [r for (r,) in conn.execute("SELECT rowid FROM fts WHERE fts MATCH ?", (t,))]
            if prefix:  # thousands of rows: a sorted array, 8 bytes a row (a set's is ~60), counted so
                import numpy as np

                kept[t] = np.sort(np.asarray(rows, dtype=np.int64))
                size += len(rows) // 8
            else:
                kept[t] = frozenset(rows)
                size += len(rows)
    _ROWS[0] = (state, kept, size)  # a reader of another state fills its own dict, never this one
    return {t: kept[t] for t in terms if t in kept}


def _among(rows, vids: list[int]) -> list[int]:
    """The ids of `vids` in `rows` (a sorted int64 array: a prefix's rows, _rows)."""
    import numpy as np

    if not len(rows):
        return []
    v = np.asarray(vids, dtype=np.int64)
    at = np.minimum(np.searchsorted(rows, v), len(rows) - 1)
    return v[rows[at] == v].tolist()


# A long body is judged by its best passage: its words count when they meet in one passage (the
# passages the vector side embeds, core/embed/recipe.py), not anywhere in 27 kB (issue 41: an essay
# held most of any question's common words and led, `strong`, over the short note that answers).
# The best passage's share decides a word lead (pipeline._leaders) and strength by words alone
# (grade); fusion and the agreement rule keep the whole record's share: on the dev set, the
# agreement rule by passage cost on-topic `confident: true` 0.92 -> 0.89 (off-topic `confident:
# false` 0.85 -> 0.89) and fusion by passage paraphrase top-3 0.59 -> 0.57 (docs/SEARCH.md "The
# last points"). Only candidates holding at least PASSAGE_FROM of the question are looked at (the
# least either use needs, LEXICAL_COVER), and only bodies over PASSAGE_CHARS can have two passages.
PASSAGE_FROM = 0.5
PASSAGE_CHARS = 900


def passage_cover(conn, terms: list[str], weights: list[float], cover: dict[int, float]) -> dict[int, float]:
    """{vid: the share of the question's weight its best passage holds} for the versions of `cover`
    (vid -> coverage of the whole version) cut into several passages; the others are left out
    (search/passage_words.py matches them, kept between answers)."""
    from kyb_cli.core.search.passage_words import best_passage

    look = sorted(v for v, c in cover.items() if c >= PASSAGE_FROM - 1e-9)
    return best_passage(conn, terms, weights, look, PASSAGE_CHARS, coverage)


def coverage(held: set[int], weights: list[float]) -> float:
    total = sum(weights)
    return 0.0 if total <= 0 else sum(weights[i] for i in held) / total


def coverages(held: dict[int, set[int]], vids, weights: list[float]) -> dict[int, float]:
    """{vid: coverage(held.get(vid, set()), weights)} for each of `vids`, the weights' total summed
    once, not once a candidate (~40 of a hybrid answer); each share summed over the same set, in
    the same order: the same doubles (0 / total is 0.0)."""
    total = sum(weights)
    if total <= 0:
        return {v: 0.0 for v in vids}
    get = held.get
    return {v: sum(weights[i] for i in h) / total if (h := get(v)) else 0.0 for v in vids}


def grade(hit: dict, *, lexical: bool, cover: float, whole: bool, sem_score: float | None,
          cal: Calibration, best_cover: float | None = None, usual: float | None = None) -> None:
    """Set `strength` and `found_by` on one hit. `whole`: it holds an identifier question as written.
    `best_cover`: the share its best passage holds (passage_cover; default `cover`): words alone
    make a hit strong only when they meet in one passage. `usual`: the share a quarter of the
    answer's candidates hold (fusion.typical): words and meaning agree only on a subject the store
    talks about (`agree_typical`), not where an off-topic question's few words meet in one record."""
    best_cover = cover if best_cover is None else best_cover
    sem_strong = (cal.floor is not None and sem_score is not None
                  and sem_score + cal.lexical_boost * cover >= cal.floor)
    lex_strong = lexical and (whole or best_cover >= cal.lexical_cover - 1e-9)
    agree = (lexical and cal.agree_cover is not None and cal.agree_floor is not None and sem_score is not None
             and cover >= cal.agree_cover - 1e-9 and sem_score >= cal.agree_floor
             and (cal.agree_typical is None or (usual is not None and usual >= cal.agree_typical - 1e-9)))
    hit["strength"] = "strong" if (lex_strong or sem_strong or agree) else "weak"
    if lexical and (sem_strong or agree):
        hit["found_by"] = "both"
    elif lexical:
        hit["found_by"] = "lexical"
    else:
        hit["found_by"] = "semantic"
