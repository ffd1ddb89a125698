"""`snippet`: the part of a hit's body that best matches the question, at most 72 characters.

The body is split into sentences and lines; the window of consecutive pieces (within the limit)
holding the most distinct question words wins (a word matches a body word that starts with its
first five letters, or is equal to it when shorter: a cheap stand-in for the index's stemmers).
With no word in common (a question in another language, a match by meaning), the snippet starts
the passage the vector side found best. Whitespace is collapsed; a cut ends on a word with `…`, and
starts at the first question word (after `…`) when a long sentence holds it past the cut.
Pure: no index, no model.
"""

from __future__ import annotations

import re
from functools import lru_cache

LIMIT = 72  # a line: enough to choose by (`get` reads the record), 10 compact hits in 4 kB (issue 38)
LATE = 25  # a first question word starting within `limit - LATE` characters is shown from the start
SCAN = 50_000  # characters of a body searched for the window (bodies may be 1 MiB)
_ASCII_PIECES = re.compile(r"[^\n.!?]*(?:[.!?]+|\n|$)")  # _pieces_of_any_text's, for text without CJK stops
_TOKEN = re.compile(r"[^\W_]+", re.UNICODE)
STEM = 5


def _norm(text: str) -> str:
    return " ".join(text.split())


def _stem(token: str) -> str:
    return token[:STEM]


@lru_cache(maxsize=None)
def _pieces_of_any_text():
    """Sentences and lines, the CJK stops too: compiled on first non-ASCII body (its wide class took
    ~0.7 ms of every one-shot `kyb query`, issue 38). On ASCII text it splits as _ASCII_PIECES does."""
    return re.compile(r"[^\n.!?。！？]*(?:[.!?。！？]+|\n|$)")


def _has_cjk_stop(body: str) -> bool:
    """Whether `body` holds a CJK stop: without one both patterns split it alike, so an accent or a
    dash does not compile the wide class (~0.7 ms of a one-shot query at 10k keys, issue 38)."""
    return "。" in body or "！" in body or "？" in body


def _pieces(body: str) -> list[str]:
    split = _pieces_of_any_text() if not body.isascii() and _has_cjk_stop(body) else _ASCII_PIECES
    out = [" ".join(p.split()) for p in split.findall(body)]  # _norm, inlined: the costliest line per hit
    return [p for p in out if p]


@lru_cache(maxsize=256)
def _prepared(body: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """A body's pieces and their lower case, kept by the text itself (never stale): a long-lived door
    cuts the same bodies for question after question, and splitting was half of a snippet's cost."""
    pieces = tuple(_pieces(body[:SCAN]))
    return pieces, tuple(p.lower() for p in pieces)


def _cut(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    head = text[: limit - 1]
    space = head.rfind(" ")
    if space > limit // 2:
        head = head[:space]
    return head.rstrip(" ,;:-") + "…"


def _cut_at_words(text: str, stems: list[str], limit: int) -> str:
    """`text` cut to `limit`, from its start, or (after `…`) from its first question word, or the word
    that lets the window end with the text, when the cut would leave that word out (one long sentence
    whose match is late): a snippet shows what matched."""
    if len(text) <= limit:
        return text
    low = text.lower()
    if len(low) != len(text):  # a letter whose lower case is longer (İ): positions would not agree
        return _cut(text, limit)
    first = min((i for i in (_first_at(low, s) for s in stems) if i >= 0), default=0)
    return _cut_from(text, first, limit)


def _cut_from(text: str, first: int, limit: int) -> str:
    """_cut_at_words once its first question word is known to start at `first` (`text` is longer
    than `limit`, its lower case as long as it)."""
    if first + LATE <= limit:
        return _cut(text, limit)
    start = min(first, len(text) - (limit - 1))  # a late word near the end: the window ends with the text
    if text[start - 1] != " ":  # start on a word
        space = text.find(" ", start, first)
        start = first if space < 0 else space + 1
    return "…" + _cut(text[start:], limit - 1)


def _first_at(text: str, stem: str) -> int:
    """Where in `text` (lower case) the first token with `stem` starts, else -1: a full-length stem
    starts a token, a shorter one is a whole token (`_held`'s match)."""
    n = len(stem)
    i = text.find(stem)
    while i >= 0:
        if (i == 0 or not text[i - 1].isalnum()) and (n >= STEM or i + n == len(text) or not text[i + n].isalnum()):
            return i
        i = text.find(stem, i + 1)
    return -1


def _held(text: str, stems: list[str]) -> dict[str, int]:
    """The stems of `stems` that some token of `text` (lower case) has (`_stem(token)`), each with
    where its first such token starts (`_first_at`): a full-length stem starts a token, a shorter one
    is a whole token. Found with str.find (tokens are runs of alphanumerics, `[^\\W_]`, which is what
    str.isalnum tells), not by splitting every token out (a regex's findall of the tokens of a 1.2 kB
    runbook was ~50 us, these finds ~5)."""
    out = {}
    for stem in stems:
        i = _first_at(text, stem)
        if i >= 0:
            out[stem] = i
    return out


@lru_cache(maxsize=64)
def _usable(words: tuple[str, ...]) -> list[str]:
    """The question's stems that can match a token (sorted): the same for every hit of an answer, so
    made once per answer, not per hit (~4 us a hit of a 9-word question, issue 38)."""
    wanted = {_stem(w.lower()) for w in words if w}
    return sorted(w for w in wanted if _TOKEN.fullmatch(w))  # a stem with other characters never matches


def _lead(text: str, limit: int) -> str:
    """`_cut(_norm(text), limit)`, normalising only the start of a long text: `_norm` of a prefix is
    a prefix of `_norm(text)`, and `_cut` reads only the first `limit` characters of a text longer
    than `limit` (a hit no word matches: ~6 us a 1.2 kB runbook body, most hits of a paraphrase)."""
    head = _norm(text[:4 * limit])
    if len(head) <= limit and len(text) > 4 * limit:
        head = _norm(text)  # mostly whitespace at the start: the whole text
    return _cut(head, limit)


def snippet(body: str, words: list[str], passage: str | None = None, limit: int = LIMIT) -> str:
    """The best window of `body` for the question `words` (folded tokens); `passage` = the body
    text of the best vector passage, used when no word matches."""
    pieces, lowered = _prepared(body)
    if not pieces:
        return ""
    best, best_score = None, 0
    usable = _usable(tuple(words))
    if usable:
        stems = [_held(p, usable) for p in lowered]
        sizes = [len(p) for p in pieces]
        n, most = len(pieces), len(usable)
        for i in range(n):
            found: set[str] = set()
            length = -1
            for j in range(i, n):
                if length >= 0 and length + 1 + sizes[j] > limit:
                    break
                length += 1 + sizes[j]
                if stems[j]:
                    found.update(stems[j])
                    if len(found) > best_score:
                        best, best_score = (i, j), len(found)
            if best_score == most:
                break  # every word is held: no later window can do better
    if best is not None:
        i, j = best
        # widen with the following pieces while they fit: more context, same words
        text = " ".join(pieces[i:j + 1])
        end = j + 1
        for k in range(j + 1, len(pieces)):
            if len(text) + 1 + len(pieces[k]) > limit:
                break
            text += " " + pieces[k]
            end = k + 1
        if end == i + 1 and len(text) > limit and len(lowered[i]) == len(text):
            # one piece: its words' first places are known (_held), so it is not lowered and searched
            # again (~6 us a hit whose words match, a 1.2 kB runbook body, issue 38)
            return _cut_from(text, min(stems[i].values()), limit)
        return _cut_at_words(text, usable, limit)
    return _lead(passage or body, limit)
