"""FTS5's own `bm25()` over `fts_now`, computed in numpy from postings a long-lived door keeps (issue 38).

At 10k keys a question's common words match ~9k current rows, and SQLite scores every one of them
through bm25() (~1 µs a row: 5-10 ms of a 9 ms warm answer); a bound skips rows only where FTS5's
clamped idf proves them out of the top (rare_top, issue 39: what a one-shot process does). A door
(`kyb mcp`, `kyb serve`) asks the same index many times, so it keeps, per index connection and state (vectors.db_state: any write, here or in another process, drops it), each
row's token count and, per word, the rows holding it and its weighted count there (fts5vocab
`instance`), and scores a question with one array pass per word. The arithmetic is fts5_aux.c's
fts5Bm25Function, operation by operation and in its order (k1 1.2, b 0.75, idf clamped to 1e-6,
avgdl = tokens / rows), so scores are the same doubles bm25() returns and the order (score, then
newest version) is the same: tests/test_search_bm25.py compares them row by row.
Each word adds to the rows holding it only, the per-row length term is kept with the state, and only
the rows scoring at least the limit-th best are sorted (ties all kept): 1.1 -> 0.3 ms at 10k keys.

Only the hot path's shape is scored here: the current slice, no filter, an any-match of single
words ("a" OR "b"); a phrase some row holds, a prefix, a required or excluded word goes to SQLite. A
phrase no row holds (a word the tokenizer splits, `"h38q 10k 7"`) adds 0.0 to every row's score and
matches none: it is left out (issue 38: at 10k keys it sent a new question's OR to bm25() over every
row, ~8 ms). A one-shot CLI process never keeps postings (reading them costs more than one
bm25() pass): `lexical` asks only when the door keeps connections (index/warm.py), else rare_top.
"""

from __future__ import annotations

import math
import re

from kyb_cli.core.index import schema

K1 = 1.2
B = 0.75
# rare_top scores the rarer words' rows by their own bm25() when at most 1/FEW_RARE of the rows: ~4 µs
# a rarer row (common_rows.few_rare) against ~0.7 µs a row of the OR by bm25() (100k keys, h39u)
FEW_RARE = 8
MAX_POSTINGS = 4_000_000  # (row, word) entries kept per connection; past it the words start afresh
_WORD = re.compile(r'"([^"\s*]+)"')
# a quoted word or phrase (top: a phrase no row holds is left out); a door's only (top, Held): compiled
# by re's cache on its first use, not by every one-shot `kyb query` (~0.1 ms, issue 38)
_TERM = r'"[^"*]+"'


def words_of(match: str) -> list[str] | None:
    """The words of an any-match of single quoted words (`"a" OR "b"`), else None."""
    parts = match.split(" OR ")
    out = []
    for part in parts:
        m = _WORD.fullmatch(part)
        if m is None:
            return None
        out.append(m.group(1))
    return out


class _Postings:
    """One index state's rows and the words asked so far (see the module docstring)."""

    def __init__(self, conn) -> None:
        import numpy as np

        ids, sizes = [], []
        for rowid, blob in conn.execute("SELECT id, sz FROM fts_now_docsize"):
            ids.append(rowid)
            sizes.append(sum(_varints(blob)))  # one per column: that row's tokens
        order = np.argsort(np.asarray(ids, dtype=np.int64), kind="stable")
        self.ids = np.asarray(ids, dtype=np.int64)[order]
        self.size = np.asarray(sizes, dtype=np.float64)[order]
        self.rows = len(ids)
        self.avgdl = float(sum(sizes)) / float(self.rows) if self.rows else 0.0
        self.words: dict[str, tuple] = {}
        self.parts: dict[str, tuple] = {}  # token -> (row positions, its part of each row's score): part()
        self.entries = 0
        self._norm = None
        self.tokenize = tokenizer(conn)
        self.weights = np.asarray(schema.FTS_WEIGHTS, dtype=np.float64)  # by column number
        self.instance_sql = ("SELECT group_concat(doc * 8 + CASE col " + " ".join(
            f"WHEN '{name}' THEN {i}" for i, name in enumerate(schema.FTS_COLUMNS))
            + " END) FROM temp.kyb_vocab WHERE term = ?")

    def norm(self):
        """k1 * (1 - b + b * D / avgdl) per row, in fts5_aux.c's order: the same for every question."""
        if self._norm is None:
            self._norm = K1 * ((1 - B) + B * self.size / self.avgdl)
        return self._norm

    def part(self, conn, token: str) -> tuple:
        """(row positions, the token's part of each one's score) of one token: its idf x the
        saturated count, a function of the token and the index's state alone, so kept with its
        postings: the same doubles as made anew (10k keys, ~7k rows a common word: ~40 us a word of
        each question)."""
        got = self.parts.get(token)
        if got is not None:
            return got
        at, freq, hits = self.word(conn, token)
        idf = math.log((self.rows - hits + 0.5) / (hits + 0.5))
        if idf <= 0.0:
            idf = 1e-6
        got = (at, idf * ((freq * (K1 + 1.0)) / (freq + self.norm()[at])))
        if token in self.words:  # kept while its postings are (MAX_POSTINGS: both start afresh)
            self.parts[token] = got
            self.entries += len(at)
        return got

    def word(self, conn, token: str) -> tuple:
        """(row positions, weighted count per row, rows holding it) of one token."""
        import numpy as np

        got = self.words.get(token)
        if got is not None:
            return got
        # A row's count: its instances' column weights summed (multiples of 0.5: exact in any order).
        # The instances come as one string of `doc * 8 + column number` read by numpy, not as a row
        # per instance summed by SQLite's GROUP BY: a word new to a door cost ~8 -> ~3 ms at 10k keys
        # (~15k instances of a common word), on the answering thread (issue 38).
        text = conn.execute(self.instance_sql, (token,)).fetchone()[0]
        packed = np.sort(np.fromstring(text, dtype=np.int64, sep=",")) if text else np.zeros(0, dtype=np.int64)
        starts = np.flatnonzero(np.diff(packed >> 3, prepend=-1))  # each row's first instance
        docs = packed[starts] >> 3
        counts = (np.add.reduceat(self.weights[packed & 7], starts) if len(packed)
                  else np.zeros(0, dtype=np.float64))
        where = np.minimum(np.searchsorted(self.ids, docs), self.rows - 1)
        known = self.ids[where] == docs  # a row deleted from fts_now is in no count of bm25()'s
        got = (where[known], counts[known], int(known.sum()))
        if self.entries + len(docs) > MAX_POSTINGS:
            self.words.clear()
            self.parts.clear()
            self.entries = 0
        self.words[token] = got
        self.entries += len(docs)
        return got


class Held:
    """Which of some versions hold a word, from the postings this connection keeps for the index as
    it is now (relevance.term_hits: the candidates' share of the question). A version of fts_now
    holds the same text in `fts` (rowid = version id, the same columns), so its rows holding a word
    are the rows FTS5 would match; the versions fts_now does not hold are left to it (`outside`)."""

    __slots__ = ("p", "vids", "at", "outside")

    def __init__(self, p: _Postings, vids: list[int]) -> None:
        import numpy as np

        v = np.asarray(vids, dtype=np.int64)
        at = np.minimum(np.searchsorted(p.ids, v), max(p.rows - 1, 0))
        inside = p.ids[at] == v if p.rows else np.zeros(len(v), dtype=bool)
        self.p, self.vids, self.at = p, v[inside], at[inside]
        self.outside = v[~inside].tolist()

    @classmethod
    def of(cls, conn, vids: list[int]) -> Held | None:
        """None unless this connection keeps postings of the index's present state."""
        from kyb_cli.core.index.kept_state import memo_if_any

        if memo_if_any(conn) is None:  # no memo made: a one-shot process (it keeps none), which then
            return None  # imports neither vectors.py nor weakref (~1 ms of a 10k-key query, issue 38)
        from kyb_cli.core.index.vectors import conn_memo, db_state

        kept = conn_memo(conn).get("bm25")
        if kept is None or kept[1] is None or kept[0] != db_state(conn) or not kept[1].rows:
            return None
        return cls(kept[1], vids)

    def holding(self, term: str) -> list[int] | None:
        """The versions (among those fts_now holds) whose row holds `term` (a quoted word); None when
        it is not one word whose postings are kept (the caller asks FTS5)."""
        import numpy as np

        if not re.fullmatch(_TERM, term):
            return None
        token = token_of(self.p.tokenize, term[1:-1])
        got = self.p.words.get(token) if token is not None else None
        if got is None:
            return None
        mask = np.zeros(self.p.rows, dtype=bool)
        mask[got[0]] = True
        return self.vids[mask[self.at]].tolist()


def tokenizer(conn):
    """The index's tokenizer (schema.TOKENIZER) as a callable, for token_of."""
    name, *args = schema.TOKENIZER.split()
    return conn.fts5_tokenizer(name, args)


def token_of(tokenize, word: str) -> str | None:
    """The one token the index's tokenizer makes of a quoted query word, as FTS5 would match it;
    None when it makes several (a phrase) or none."""
    import apsw

    got = tokenize(word.encode(), apsw.FTS5_TOKENIZE_QUERY, None, include_offsets=False, include_colocated=False)
    return got[0] if len(got) == 1 else None


def _varints(blob: bytes):
    """The SQLite varints of `blob` in order (sqlite3GetVarint: 7 bits a byte, the high bit = more;
    a 9th byte gives all 8 bits): FTS5's docsize rows and its averages record are made of them."""
    value, n = 0, 0
    for byte in blob:
        if n == 8:
            yield (value << 8) | byte
            value, n = 0, 0
            continue
        value, n = (value << 7) | (byte & 0x7F), n + 1
        if not byte & 0x80:
            yield value
            value, n = 0, 0


def _postings(conn) -> _Postings | None:
    """This connection's postings for the index as it is now; None for the first answer of a state.

    Reading a state's rows and a common word's postings costs a few bm25() passes (~20 + ~25 ms a
    word at 10k keys), and any write makes a new state: an agent that writes then asks once would pay
    it every time. A state is kept from its second answer on, so alternating writes and questions
    cost what they cost without it, and a run of questions pays it once."""
    from kyb_cli.core.index.vectors import conn_memo, db_state

    memo = conn_memo(conn)
    state = db_state(conn)
    kept = memo.get("bm25")
    if kept is None or kept[0] != state:
        memo["bm25"] = (state, None)
        return None
    if kept[1] is None:
        conn.execute("CREATE VIRTUAL TABLE IF NOT EXISTS temp.kyb_vocab USING fts5vocab(main, fts_now, instance)")
        memo["bm25"] = (db_state(conn), _Postings(conn))
    return memo["bm25"][1]


def top(conn, match: str, limit: int) -> list[tuple[int, float]] | None:
    """The `limit` best (rowid, score) of `fts_now MATCH match` by -bm25 with schema.FTS_WEIGHTS,
    newest first among equal scores; None when the question is not of the shape scored here."""
    import numpy as np

    terms = match.split(" OR ")
    if not all(re.fullmatch(_TERM, t) for t in terms):
        return None
    p = _postings(conn)
    if p is None or not p.rows:
        return None
    tokens = []
    for term in terms:
        token = token_of(p.tokenize, term[1:-1])
        if token is not None:
            tokens.append(token)
        elif conn.execute("SELECT 1 FROM fts_now WHERE fts_now MATCH ? LIMIT 1", (term,)).fetchone():
            return None  # a phrase some row holds: SQLite's
        # else a phrase no row holds (a new identifier, `h38q-10k-7`): its part of every score is
        # idf * 0 / norm = 0.0, added to nothing, and it matches no row: left out, the same doubles
    if len(set(tokens)) != len(tokens):
        return None
    score = np.zeros(p.rows, dtype=np.float64)
    matched = np.zeros(p.rows, dtype=bool)
    for token in tokens:
        at, part = p.part(conn, token)
        # `at` holds each row once: the rows lacking the word keep their score, as C adds idf * 0 / norm = 0.0
        score[at] += part
        matched[at] = True
    rows = np.flatnonzero(matched)
    if not len(rows):
        return []
    ids, scores = p.ids[rows], score[rows]
    n = min(int(limit), len(rows))
    if n <= 0:
        return []
    if len(rows) > 4 * n:  # only rows scoring at least the n-th best can be in the top (ties all kept)
        kth = np.partition(scores, len(scores) - n)[len(scores) - n]
        keep = scores >= kth
        ids, scores = ids[keep], scores[keep]
    order = np.lexsort((-ids, -scores))[:n]  # score descending, then the newest version
    return [(int(ids[i]), float(scores[i])) for i in order]


def rare_top(conn, match: str, limit: int) -> list[tuple[int, float]] | None:
    """The `limit` best (rowid, score) of `fts_now MATCH match`, as top() returns them, scored by
    SQLite's bm25() over the rows that can enter the top only; None when that cannot be proved to be
    the same answer (then bm25() must see every row).

    FTS5 clamps the idf of a word in at least half of the rows to 1e-6 (fts5_aux.c: idf <= 0), and a
    word's part of a row's score is idf * f * (k1 + 1) / (f + k1 * (1 - b + b * D / avgdl)) < idf *
    (k1 + 1): a row holding j such words and nothing rarer scores below j * 1e-6 * 2.2. So
    - with rarer words: when `limit` rows holding one score above n_common * 2.2e-6, a row holding
      none cannot enter the top; those rows are scored by the same bm25() call (same MATCH, so the
      same per-word counts and the same doubles), filtered to the rarer words' rows;
    - every word that common: when `limit` rows holding all of them score above (n - 1) * 2.2e-6, a
      row missing one cannot; `"a" AND "b"` visits those rows with the same phrases in the same
      order (bm25() sums per phrase in order; a word no row holds adds 0.0 and is left out).
    Costs the per-word counts (~3 ms a common word at 100k keys) when the proof fails. A one-shot
    process reads the counts, and scores the common words' parts, from what search/common_rows.py keeps."""
    words = words_of(match)
    if not words or len(words) < 2 or limit <= 0:
        return None
    rows = _fts_now_rows(conn)
    half = (rows + 1) // 2  # idf <= 0  <=>  n >= rows / 2 (integers: exact)
    if half <= 0:
        return None
    phrases = [f'"{w}"' for w in words]  # a word no row holds adds 0.0 to every score: left out
    kept = _kept(conn, phrases, half)  # a one-shot process: the counts and parts kept on disk
    if kept is not None:
        phrases = [p for p in phrases if kept[p].n]
    else:
        phrases = [p for p in phrases if conn.execute("SELECT 1 FROM fts_now WHERE fts_now MATCH ? LIMIT 1",
                                                      (p,)).fetchone()]
    if len(phrases) < 2:  # one word (and words no row holds): nothing to skip; no common word counted
        return None
    common, rare, rare_rows = [], [], 0
    for phrase in phrases:
        held = kept[phrase].n if kept is not None else conn.execute(
            "SELECT count(*) FROM (SELECT 1 FROM fts_now WHERE fts_now MATCH ? LIMIT ?)", (phrase, half)).fetchone()[0]
        if held >= half:
            common.append(phrase)
        else:
            rare.append(phrase)
            rare_rows += held
    ranked = (f"SELECT rowid, -bm25(fts_now, {schema.FTS_WEIGHTS_SQL}) AS s FROM fts_now WHERE fts_now MATCH ? "
              "{also}ORDER BY s DESC, rowid DESC LIMIT ?")
    if common and rare_rows >= limit:
        sql = ranked.format(also="AND +rowid IN (SELECT rowid FROM fts_now WHERE fts_now MATCH ?) ")
        args: tuple = (match, " OR ".join(rare), int(limit))
        outside = len(common)  # phrases a row without a rarer word can hold
    elif len(common) >= 2 and not rare:
        sql, args, outside = ranked.format(also=""), (" AND ".join(common), int(limit)), len(common) - 1
    else:
        return None
    got = None
    if kept is not None and common and all(kept[p].ids is not None for p in common):
        from kyb_cli.core.search import common_rows

        distinct = len(set(phrases)) == len(phrases)  # a phrase twice: left to bm25()
        if not rare:
            got = common_rows.top([kept[p] for p in common], int(limit))
        elif distinct and all(kept[p].ids is not None for p in rare):
            got = common_rows.or_top([kept[p] for p in phrases], int(limit))
        elif distinct and rare_rows * FEW_RARE <= rows:
            got = common_rows.few_rare(conn, phrases, kept, rare, int(limit), schema.FTS_WEIGHTS_SQL)
    if got is None:
        got = [(int(r[0]), float(r[1])) for r in conn.execute(sql, args)]
    ceiling = outside * 1e-6 * (K1 + 1.0) * (1 + 1e-9)  # the most a row left out can score
    if len(got) < limit or not got[-1][1] > ceiling:
        return None
    return got


def _kept(conn, phrases: list[str], half: int):
    """search/common_rows.py's {phrase: Rows} in a one-shot process, else None (a door keeps postings)."""
    from kyb_cli.core.index import warm

    if warm.keeping():
        return None
    from kyb_cli.core.search import common_rows

    return common_rows.kept(conn, phrases, half, schema.FTS_WEIGHTS_SQL)


def _fts_now_rows(conn) -> int:
    """fts_now's row count as bm25() reads it (xRowCount): the first varint of the index's averages
    record (fts5_index.c, the row with id 1 of fts_now_data), not a count of the rows."""
    row = conn.execute("SELECT block FROM fts_now_data WHERE id = 1").fetchone()
    return next(_varints(row[0]), 0) if row is not None and row[0] else 0
