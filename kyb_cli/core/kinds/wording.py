"""Checks made when knowledge is written, from the index (docs/ARCHITECTURE.md, "index"):

- retired wording (rule "retired wording"): an update that removed distinctive wording (a line or
  sentence that is gone; a number, port, host or identifier that no longer appears) is looked for in
  every other live record, since a copy under another key keeps the old instruction alive;
- similar (rule "similar at create"): a new key near one that ever existed (edit distance), a live
  record with the same title, or a live record with nearly the same text (lexical: word sets);
- revived: a create of a key that was retracted says when and why.
Common words never count as retired wording: a token qualifies only with a digit, `_`, `.`, `/`,
`:` or `-` inside it, and a sentence only with at least four words.
"""

from __future__ import annotations

import re
from typing import Any

from kyb_cli.core.index import schema
from kyb_cli.core.records.model import Record

_SENTENCE_SPLIT = re.compile(r"(?<=[.!?;])\s+|\n+")
_TOKEN = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.:/-]*[A-Za-z0-9]|[0-9]")
MAX_PHRASES = 24
MAX_FOUND = 50
MAX_SIMILAR = 10
_DIGITS = re.compile(r"\d+")


def key_distance(key: str) -> int:
    """How many edits still read as the same key: one (a plural, a typo), two for long keys."""
    return 1 if len(key) < 16 else 2

TEXT_SIMILAR = 0.8


def _norm(text: str) -> str:
    return " ".join(text.split()).lower()


def _text(title: str, body: str) -> str:
    return title + "\n" + body


def distinctive_tokens(text: str) -> set[str]:
    """Numbers, ports, hosts and identifiers: tokens with a digit or `_ . / : -` inside."""
    out = set()
    for tok in _TOKEN.findall(text):
        tok = tok.rstrip(".:")
        if any(c.isdigit() for c in tok) or any(c in tok for c in "_./:-"):
            out.add(tok)
    return out


def sentences(text: str) -> list[str]:
    out = []
    for part in _SENTENCE_SPLIT.split(text):
        part = " ".join(part.strip().strip("-*#>").split()).rstrip(".!?;")
        if len(part.split()) >= 4:
            out.append(part)
    return out


def retired_phrases(old: Record, new: Record) -> list[str]:
    """What the update removed: gone sentences first (longest first), then gone tokens."""
    old_text, new_text = _text(old.title, old.body), _text(new.title, new.body)
    new_norm = _norm(new_text)
    gone_sentences = [s for s in dict.fromkeys(sentences(old_text)) if _norm(s) not in new_norm]
    gone_sentences.sort(key=len, reverse=True)
    new_tokens = {t.lower() for t in distinctive_tokens(new_text)}
    gone_tokens = sorted(t for t in distinctive_tokens(old_text) if t.lower() not in new_tokens)
    return (gone_sentences + gone_tokens)[:MAX_PHRASES]


# As the index's unicode61 tokenizer splits, and as search/tokens.py (a sibling room) folds.
_FTS_TOKEN = re.compile(r"[^\W_]+", re.UNICODE)


def _tokens(text: str) -> list[str]:
    return _FTS_TOKEN.findall(text.lower().replace("ё", "е"))


def _fts_phrase(phrase: str) -> str | None:
    """An FTS5 phrase query of our own tokens (never raw text as syntax)."""
    ws = _tokens(phrase)
    return '"' + " ".join(ws) + '"' if ws else None


def _contains(text: str, phrase: str) -> bool:
    """`phrase` in `text` as whole words (case and spacing aside)."""
    pattern = r"(?<![A-Za-z0-9_])" + re.escape(_norm(phrase)).replace(r"\ ", r"\s+") + r"(?![A-Za-z0-9_])"
    return re.search(pattern, _norm(text)) is not None


# Words that say nothing about *what* a value is for: a shared "port" or "the" is no shared instruction.
_GENERIC = frozenset("""
the and for with from into onto via are was were has have had its this that these those then than
but not all any can may must should will would when where which while each per
port ports host hosts listen listens listening run runs running use uses used using default defaults
set sets call calls called http https tcp udp localhost server servers service services api apis
endpoint endpoints url urls address value values number config configured configuration
change changed changes new old now also only here there
на в и по для с от до из или не это как что порт порта порту сервис сервиса адрес
""".split())


def _content_words(text: str, phrase: str = "") -> set[str]:
    """The words that say what `text` is about. An identifier with a digit (`node-3`, `db-7.internal`)
    counts whole, never as its word parts: the "node" of `node-3` is no shared subject with a "Node
    Exporter" (issue 25 item 9). One holding `phrase` itself (`localhost:9090/graph`) is the value,
    not its subject."""
    words: set[str] = set()

    def identifier(m: re.Match) -> str:
        tok = m.group(0).lower()
        if not (any(c.isdigit() for c in tok) and any(c.isalpha() for c in tok)):
            return m.group(0)
        if not phrase or phrase.lower() not in tok:
            words.add(tok)
        return " "

    rest = _TOKEN.sub(identifier, text)
    return words | {w for w in _tokens(rest) if len(w) >= 3 and not w.isdigit() and w not in _GENERIC}


def _needs_context(phrase: str) -> bool:
    """A bare value (a number, a port, a version, `localhost:8080`) names no instruction by itself:
    it counts as the same instruction only next to the same subject words. A sentence, or a token
    with a word of its own (a host, a path, a flag name), is distinctive on its own."""
    if " " in phrase:
        return False
    return not _content_words(" ".join(re.findall(r"[^\W\d_]+", phrase)))


def _context(title: str, body: str, phrase: str) -> set[str]:
    """The subject words around `phrase`: its sentences' content words and the title's."""
    words = _content_words(title, phrase)
    for part in _SENTENCE_SPLIT.split(title + "\n" + body):
        if _contains(part, phrase):
            words |= _content_words(part, phrase)
    return words


def retired_elsewhere(conn, key: str, phrases: list[str], old: Record | None = None) -> list[dict[str, str]]:
    """[{key, phrase}] for every other live record still holding a retired phrase (a token already
    inside a sentence found in the same record is not repeated).

    A bare value (`8080`, `2.4.1`) is only the same *instruction* where the other record says it about
    the same subject: a sentence (or title) of theirs holding the value shares a content word with
    the old record's sentences holding it, or its title (issue 25 item 9: after importing docs,
    every port change named unrelated runbooks that mention 8080). `old`: the version the update
    replaced (without it, bare values are not looked for)."""
    found: dict[str, list[str]] = {}
    for phrase in phrases:
        expr = _fts_phrase(phrase)
        if expr is None:
            continue
        subject = None
        if _needs_context(phrase):
            if old is None:
                continue
            subject = _context(old.title, old.body, phrase)
            if not subject:
                continue
        rows = conn.execute(
            f"SELECT k.key, v.doc FROM {_CURRENT_MATCHES} ORDER BY k.key LIMIT ?", (expr, key, MAX_FOUND)).fetchall()
        for other, doc in rows:
            d = schema.decode(doc)
            title, body = d.get("title", ""), d.get("body", "")
            if not _contains(_text(title, body), phrase):
                continue
            if subject is not None and subject.isdisjoint(_context(title, body, phrase)):
                continue  # the same number about something else
            have = found.setdefault(other, [])
            if not any(_contains(p, phrase) for p in have):
                have.append(phrase)
    return [{"key": k, "phrase": p} for k in sorted(found) for p in found[k]][:MAX_FOUND]


# -- similar at create -------------------------------------------------------------------------------


def edit_distance(a: str, b: str, cap: int) -> int:
    """Levenshtein distance, or cap + 1 once it is certainly over `cap`."""
    if abs(len(a) - len(b)) > cap:
        return cap + 1
    prev = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        cur = [i] + [0] * len(b)
        for j, cb in enumerate(b, 1):
            cur[j] = min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (ca != cb))
        if min(cur) > cap:
            return cap + 1
        prev = cur
    return prev[-1]


def _bigrams(s: str) -> set[str]:
    return {s[i:i + 2] for i in range(len(s) - 1)}


def _words(text: str) -> set[str]:
    return set(_tokens(text))


def _title_index(conn) -> None:
    """An index built before `versions_title` was in the schema gets it on its first write's check (about a
    second at 100k keys, once); a connection that cannot write leaves the look-up to a scan."""
    try:
        conn.execute("CREATE INDEX IF NOT EXISTS versions_title ON versions(lower(title))")
    except Exception:  # noqa: BLE001 — read-only or busy: the same answer, by a scan
        pass


def similar(conn, record: Record) -> list[dict[str, Any]]:
    """[{key, title, why, score}], best first: near keys (any that ever existed), same title, near text."""
    out: dict[str, dict[str, Any]] = {}
    key = record.key
    grams = _bigrams(key)
    digits = _DIGITS.findall(key)
    cap = key_distance(key)
    # every key within `cap` of this one's length (keys are ASCII: length() counts bytes): SQLite's scan,
    # not a Python loop over 100k keys (issue 39: a write's cost must not grow with the store)
    # and holding the same numbers (checked exactly below): SQLite skips the rest, not Python's regex
    same_digits = " AND ".join(["instr(key, ?) > 0"] * len(digits)) or "key NOT GLOB '*[0-9]*'"
    for other, state, vid in conn.execute("SELECT key, state, version_id FROM keys WHERE key != ? AND "
                                          f"length(key) BETWEEN ? AND ? AND {same_digits}",
                                          (key, len(key) - cap, len(key) + cap, *digits)):
        if _DIGITS.findall(other) != digits:
            continue  # svc-3-port and svc-4-port name different things
        # q-gram filter: an edit removes at most two of the key's bigrams
        if len(grams & _bigrams(other)) < min(len(grams), len(_bigrams(other))) - 2 * cap:
            continue
        d = edit_distance(key, other, cap)
        if d <= cap:
            doc = conn.execute("SELECT doc FROM versions WHERE id = ?", (vid,)).fetchone()[0]
            why = f"key within {d} edit{'s' if d > 1 else ''}" + ("" if state == "active" else f" ({state})")
            out[other] = {"key": other, "title": schema.decode(doc).get("title", ""), "why": why,
                          "score": round(1 - d / max(len(key), len(other)), 3)}
    title = _norm(record.title)
    _title_index(conn)
    for other, doc in conn.execute(  # the versions of that title (versions_title), each kept if current
            "SELECT k.key, v.doc FROM versions v JOIN keys k ON k.key = v.key AND k.version_id = v.id "
            "WHERE lower(v.title) = ? AND k.state = 'active' AND k.key != ?", (record.title.lower(), key)):
        if _norm(schema.decode(doc).get("title", "")) == title:
            if other in out:
                out[other].update(why=out[other]["why"] + "; same title", score=1.0)
            else:
                out[other] = {"key": other, "title": record.title, "why": "same title", "score": 1.0}
    mine = _words(_text(record.title, record.body))
    if len(mine) >= 3:
        expr = _near_text_query(mine)
        if expr:
            for other, doc in _near_text_candidates(conn, expr, key):
                d = schema.decode(doc)
                theirs = _words(_text(d.get("title", ""), d.get("body", "")))
                score = len(mine & theirs) / len(mine | theirs) if theirs else 0.0
                if score >= TEXT_SIMILAR and other not in out:
                    out[other] = {"key": other, "title": d.get("title", ""), "why": "near-duplicate text",
                                  "score": round(score, 3)}
    return sorted(out.values(), key=lambda s: (-s["score"], s["key"]))[:MAX_SIMILAR]


# The live records (other than key ?) whose current version matches the FTS query ?. Versions first,
# then keys by its primary key: joined on keys.version_id (no index) SQLite built an automatic index
# over every key for each query, 0.12-0.14 s at 100k keys for a handful of matches.
_CURRENT_MATCHES = ("fts JOIN versions v ON v.id = fts.rowid JOIN keys k ON k.key = v.key AND k.version_id = v.id "
                    "WHERE fts MATCH ? AND k.state = 'active' AND k.key != ?")
NEAR_CANDIDATES = 1000  # candidates of `near-duplicate text` all checked; above it, the best by bm25


def _near_text_candidates(conn, expr: str, key: str) -> list[tuple[str, str]]:
    """(key, doc) of the live records matching `expr`: all of them when at most NEAR_CANDIDATES (every
    text the Jaccard test would keep is among them), else the 20 best by bm25. Unranked because bm25
    reads the whole doclist of each word of the query to weigh it ("port": 369k versions at 100k keys)."""
    rows = conn.execute(f"SELECT k.key, v.doc FROM {_CURRENT_MATCHES} LIMIT ?",
                        (expr, key, NEAR_CANDIDATES + 1)).fetchall()
    if len(rows) <= NEAR_CANDIDATES:
        return rows
    return conn.execute(f"SELECT k.key, v.doc FROM {_CURRENT_MATCHES} ORDER BY bm25(fts) LIMIT 20",
                        (expr, key)).fetchall()


def _near_text_query(mine: set[str]) -> str:
    """An FTS query every near duplicate matches, and few others. Words-in-common >= TEXT_SIMILAR means
    at most (1 - TEXT_SIMILAR) x len(mine) of our words are missing from it, so with one more group
    than that it holds every word of some group: (g1 AND ...) OR (g2 AND ...). Any-word (OR) matched
    every version sharing a common word ("on", "port": all 369k at 100k keys) and ranked them all
    (0.64 s of CPU a write). Our own tokens, quoted: never syntax."""
    words = sorted(mine)
    groups = int((1 - TEXT_SIMILAR) * len(words) + 1e-9) + 1
    return " OR ".join("(" + " AND ".join(f'"{w}"' for w in words[g::groups]) + ")" for g in range(groups))


def retraction(conn, store_path, key: str) -> dict[str, Any] | None:
    """When and why `key` was retracted, if it is (for a `revived` create)."""
    row = conn.execute("SELECT state, ended_sha, ended_at FROM keys WHERE key = ?", (key,)).fetchone()
    if row is None or row[0] != "retracted":
        return None
    from kyb_cli.core.canon import git
    from kyb_cli.core.records.trailers import parse_trailers
    from kyb_cli.core.timestamps import rfc3339

    reason = None
    obj = git.cat_file(store_path, [row[1]])[0] if row[1] else None
    if obj is not None and obj[1] == "commit":
        reason = parse_trailers(obj[2].partition(b"\n\n")[2].decode("utf-8", errors="replace")).get("Kyb-Reason")
    return {"retracted_sha": row[1], "retracted_at": rfc3339(row[2]) if row[2] else None,
            "retracted_reason": reason,
            "hint": f"'{key}' was retracted as wrong; `kyb history {key}` shows its earlier versions "
                    "and why — make sure the new text does not repeat what was wrong"}
