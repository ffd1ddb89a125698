"""User text -> a safe FTS5 MATCH expression. User text is never passed to FTS5 as syntax.

Each whitespace-separated word is split into word tokens the way the index's unicode61 tokenizer
splits (letters and digits; `-`, `_`, `.`, `:` separate), then:
- a word with several tokens (`svc-checkout`, `orders_api`) becomes a phrase, so it finds the
  identifier and its spelled-out form;
- a Cyrillic word of five letters or more loses its inflection ending and becomes a prefix query
  (`стримах` -> `стрим*`), a small stand-in for a Russian stemmer that FTS5 lacks;
- every token is double-quoted, so `AND`, `OR`, `NOT`, `NEAR`, `*`, `title:`, `(`, `-x` are plain text;
- function words ("how", "do", "the", "где", "wie", "les", …) are left out when at least one other
  word remains: ORed in, they let any record holding "how" outrank the one that holds the meaning
  (measured with bench/eval_search.py). A question made only of them keeps them.
Words combine with OR; BM25 ranks records that match more of them first.
"""

from __future__ import annotations

import re

_TOKEN = re.compile(r"[^\W_]+", re.UNICODE)
_CYRILLIC = r"^[а-яё]+$"  # a pattern, compiled by re's cache on the first non-ASCII token (~0.1 ms, issue 38)
MAX_WORDS = 32

# Common Russian inflection endings, longest first (nouns, adjectives, verbs).
_ENDINGS = sorted("""
ами ями ого его ому ему ыми ими ться тся ешь ете ите ует уют ают яют ает яет ать ять ить еть ость
ах ях ов ев ей ой ий ый ая яя ое ее ом ем ам ям ую юю ых их ии ия ие ию иям иях ями ой ью ья ье
а я о е ы и у ю ь й
""".split(), key=len, reverse=True)
MIN_STEM = 4

# Function words of the languages the eval covers (en, ru, uk, de, fr, es, pt; zh has no spaces).
# Negations and words that carry meaning in operations ("not", "no", "down", "off", "up", "out",
# "нельзя", "nicht", "pas") are not here, nor words that double as common terms elsewhere
# ("us" region, "os", "es" for Elasticsearch, German "die"/"hat"). AND/OR/NOT/NEAR stay words: they are the FTS operator
# words that every-token quoting is about, and their frequency keeps their BM25 weight low anyway.
_FUNCTION_WORDS = frozenset("""
a am an any are as at be been being but by can could did do does doing done each for from had has
have having he her here hers him his how i if in into is it its me my of on our ours shall she
should so some such than that the their theirs them then there these they this those to too
very was we were what when where which while who whom whose why will with would you your yours
где куда откуда когда как что кто какой какая какое какие каким почему зачем сколько и а но или в
во на с со к ко у о об от до по за из для про при это этот эта эти тот та то те он она оно они мы
вы я ты же ли бы ещё уже вот там тут здесь есть был была было были быть мне нам нас вас их его ее
де коли як хто який яка яке які чому скільки і й та або із від це цей ця ці вона воно вони ми ви ти
чи є був була було були бути нам вам
der das den dem des ein eine einer einem einen eines und oder ist sind war waren wird werden
wurde wurden haben wie wo was wer wann warum welche welcher welches ich du er sie wir ihr
mich mir uns euch bei mit von zu zum zur im am auf für aus als auch woher wohin
le la les l un une des du de d et ou est sont été être ont avoir que qui quoi quand où comment
pourquoi quel quelle quels quelles ce cet cette ces il elle ils elles on nous vous je tu se sa son
ses leur leurs dans sur par pour avec au aux y
el los las unos unas y o son está están ser fue qué quien quién cuando cuándo donde dónde como
cómo cuál cuáles cuanto cuánto cada del al en por para con su sus lo le les mi nos se
um uma uns umas e é são foi que quem quando onde como qual quais com do da dos das no na nos nas
em ao aos seu sua seus suas
""".split())


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


def is_function_word(tokens: list[str]) -> bool:
    """A one-token word on the function-word list (identifiers and numbers never are)."""
    return len(tokens) == 1 and tokens[0] in _FUNCTION_WORDS
