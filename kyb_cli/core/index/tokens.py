"""User text -> a safe FTS5 MATCH expression. User text is never passed to FTS5 as syntax.

Each whitespace-separated word is split into word tokens the way the index's unicode61 tokenizer
splits (letters and digits; `-`, `_`, `.`, `:` separate), then:
- a word with several tokens (`svc-checkout`, `orders_api`) becomes a phrase, so it finds the
  identifier and its spelled-out form;
- a Cyrillic word of five letters or more loses its inflection ending and becomes a prefix query
  (`стримах` -> `стрим*`), a small stand-in for a Russian stemmer that FTS5 lacks;
- every token is double-quoted, so `AND`, `OR`, `NOT`, `NEAR`, `*`, `title:`, `(`, `-x` are plain text.
Words combine with OR; BM25 ranks records that match more of them first.
"""

from __future__ import annotations

import re

_TOKEN = re.compile(r"[^\W_]+", re.UNICODE)
_CYRILLIC = re.compile(r"^[а-яё]+$")
MAX_WORDS = 32

# Common Russian inflection endings, longest first (nouns, adjectives, verbs).
_ENDINGS = sorted("""
ами ями ого его ому ему ыми ими ться тся ешь ете ите ует уют ают яют ает яет ать ять ить еть ость
ах ях ов ев ей ой ий ый ая яя ое ее ом ем ам ям ую юю ых их ии ия ие ию иям иях ями ой ью ья ье
а я о е ы и у ю ь й
""".split(), key=len, reverse=True)
MIN_STEM = 4


def fold(text: str) -> str:
    return text.lower().replace("ё", "е")


def russian_stem(word: str) -> str:
    """`стримах` -> `стрим`, `терраформе` -> `терраформ`; words shorter than 5 stay as they are."""
    if len(word) < 5:
        return word
    for ending in _ENDINGS:
        if word.endswith(ending) and len(word) - len(ending) >= MIN_STEM:
            return word[: -len(ending)]
    return word


def words(text: str) -> list[list[str]]:
    """The token lists of each whitespace-separated word that has any."""
    out: list[list[str]] = []
    for raw in fold(text or "").split():
        tokens = _TOKEN.findall(raw)
        if tokens:
            out.append(tokens)
    return out[:MAX_WORDS]


def match_expression(text: str) -> str | None:
    """The MATCH string for `text`, or None when it has no searchable word."""
    parts: list[str] = []
    seen: set[str] = set()
    for tokens in words(text):
        if len(tokens) == 1:
            token = tokens[0]
            if _CYRILLIC.match(token):
                part = f'"{russian_stem(token)}" *'
            else:
                part = f'"{token}"'
        else:
            part = '"' + " ".join(tokens) + '"'
        if part not in seen:
            seen.add(part)
            parts.append(part)
    return " OR ".join(parts) if parts else None
