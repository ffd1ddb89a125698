"""Query syntax people already know, parsed into our own tokens (never passed to FTS5 as syntax).

- plain words rank any-match (OR; BM25 puts records matching more of them first);
- `"exact phrase"` and `+word` / `+"phrase"` are required; `A AND B` requires both;
- `-word`, `-"phrase"` and `NOT word` exclude (`--flag` is a word: a command-line option): no hit holds them, on the lexical and the vector side;
- `prefix*` matches words that start with `prefix` (at least two letters);
- `OR` between words is the default and changes nothing.
Operators are upper-case `AND`, `OR`, `NOT` and the marks `+ - " *`; lower-case `and`/`or`/`not` are
words. Bad syntax is never an error: an unclosed quote, a dangling `NOT`/`AND`, a lone `-` or `*`
degrade to the words they hold. Every token reaching FTS5 is double-quoted (see tokens.py).
"""

from __future__ import annotations

import re
from kyb_cli.core.plain import Factory, plain

_TOKEN = re.compile(r"[^\W_]+", re.UNICODE)
_PIECE = re.compile(r'([+-]?)"([^"]*)"(\*?)|(\S+)')
MIN_PREFIX = 2
MAX_TERMS = 32


def fold(text: str) -> str:
    return text.lower().replace("ё", "е")


@plain(frozen=True)
class Term:
    """One searchable unit: a word's tokens (several = a phrase), optionally a prefix, or quoted."""

    tokens: tuple[str, ...]
    prefix: bool = False
    quoted: bool = False


@plain
class Parsed:
    should: list[Term] = Factory(list)   # ranked any-match
    must: list[Term] = Factory(list)     # every one required
    exclude: list[Term] = Factory(list)  # none may appear
    positive_text: str = ""                             # what the vector side embeds

    @property
    def positive(self) -> list[Term]:
        return self.must + self.should


def _term(raw: str, quoted: bool = False, star: bool = False) -> Term | None:
    tokens = tuple(_TOKEN.findall(fold(raw)))
    if not tokens:
        return None
    prefix = star and len(tokens[-1]) >= MIN_PREFIX
    return Term(tokens, prefix, quoted)


def parse(text: str) -> Parsed:
    """Split `text` into should / must / exclude terms; never raises."""
    out = Parsed()
    pieces: list[tuple[str, str, bool, bool]] = []  # (sign, body, quoted, star)
    raw = text or ""
    if raw.count('"') % 2:  # an unclosed quote is a plain mark: drop the last one
        i = raw.rfind('"')
        raw = raw[:i] + " " + raw[i + 1:]
    for m in _PIECE.finditer(raw):
        if m.group(4) is not None:
            word = m.group(4)
            # `-word` excludes, `+word` requires; `--flag` (a command-line option) is a word
            sign = word[0] if word[0] in "+-" and len(word) > 1 and word[1] not in "+-" else ""
            body = word[len(sign):]
            star = body.endswith("*")
            pieces.append((sign, body.rstrip("*") if star else body, False, star))
        else:
            pieces.append((m.group(1), m.group(2), True, bool(m.group(3))))
    positive_words: list[str] = []
    pending_not = False
    i = 0
    while i < len(pieces):
        sign, body, quoted, star = pieces[i]
        nxt = pieces[i + 1] if i + 1 < len(pieces) else None
        if not quoted and not sign and body in ("AND", "OR", "NOT") and not star:
            operand = nxt is not None and not (not nxt[2] and not nxt[0] and nxt[1] in ("AND", "OR", "NOT"))
            if body == "NOT" and operand:
                pending_not = True
                i += 1
                continue
            if body == "OR" and operand and (out.should or out.must):
                i += 1
                continue
            if body == "AND" and operand and (out.should or out.must):
                # `A AND B`: the word before and the word after are both required
                if out.should:
                    out.must.append(out.should.pop())
                _s, b2, q2, st2 = nxt  # type: ignore[misc]
                term = _term(b2, q2, st2)
                if term is not None and _s != "-":
                    out.must.append(term)
                    positive_words.append(b2)
                elif term is not None:
                    out.exclude.append(term)
                i += 2
                continue
            # a dangling operator is a word
        term = _term(body, quoted, star)
        if term is None:
            pending_not = False
            i += 1
            continue
        if pending_not or sign == "-":
            out.exclude.append(term)
        elif sign == "+" or quoted:
            out.must.append(term)
            positive_words.append(body)
        else:
            out.should.append(term)
            positive_words.append(body)
        pending_not = False
        i += 1
    for name in ("should", "must", "exclude"):
        seen: set[Term] = set()
        kept = []
        for t in getattr(out, name):
            if t not in seen:
                seen.add(t)
                kept.append(t)
        setattr(out, name, kept[:MAX_TERMS])
    must = set(out.must)
    out.should = [t for t in out.should if t not in must]
    out.positive_text = " ".join(positive_words)
    return out


@plain
class Plan:
    """FTS5 MATCH strings built from a Parsed query (every token quoted; None = no such part)."""

    match: str | None      # the lexical side: positive terms, required ones ANDed, excluded NOTed
    require: str | None    # AND of the required terms: the vector side keeps only versions matching it
    exclude: str | None    # OR of the excluded terms: no side returns a version matching it
    terms: list[str]       # the positive terms one by one (to tell which of them a hit holds)


def term_expression(term: Term, stem=None) -> str:
    """One term as an FTS5 string: quoted tokens; a phrase for several; `*` for a prefix."""
    if len(term.tokens) == 1 and not term.quoted and not term.prefix and stem is not None:
        stemmed = stem(term.tokens[0])
        if stemmed is not None:
            return f'"{stemmed}" *'
    body = '"' + " ".join(term.tokens) + '"'
    return body + " *" if term.prefix else body


def plan(parsed: Parsed, *, stem=None, is_function_word=None) -> Plan:
    """The MATCH strings for `parsed`. `stem(token)` returns a prefix stem or None (Russian endings);
    function words are left out of the any-match words when another positive term remains."""
    should = parsed.should
    if is_function_word is not None:
        kept = [t for t in should if t.quoted or t.prefix or not is_function_word(list(t.tokens))]
        if kept or parsed.must:
            should = kept
    must = [term_expression(t, stem) for t in parsed.must]
    any_ = _unique([term_expression(t, stem) for t in should])
    must = _unique(must)
    exclude = _unique([term_expression(t, stem) for t in parsed.exclude])
    require = " AND ".join(must) if must else None
    if must and any_:
        core = f"({require}) AND ({' OR '.join([must[0]] + any_)})"
    elif must:
        core = require
    elif any_:
        core = " OR ".join(any_)
    else:
        core = None
    excl = " OR ".join(exclude) if exclude else None
    match = f"({core}) NOT ({excl})" if core and excl else core
    return Plan(match, require, excl, must + [t for t in any_ if t not in must])


def _unique(items: list[str]) -> list[str]:
    seen: set[str] = set()
    return [x for x in items if not (x in seen or seen.add(x))]


def query_plan(text: str) -> tuple[Parsed, Plan]:
    """Parse `text` and build its MATCH strings with the index's own token rules (tokens.py)."""
    from kyb_cli.core.search.tokens import _CYRILLIC, is_function_word, russian_stem

    def stem(token: str) -> str | None:  # an ASCII token is no Cyrillic word: no regex (compiled on first use)
        return None if token.isascii() else russian_stem(token) if re.match(_CYRILLIC, token) else None

    parsed = parse(text)
    return parsed, plan(parsed, stem=stem, is_function_word=is_function_word)
