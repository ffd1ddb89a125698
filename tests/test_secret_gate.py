"""Issue 39: scan_fields chooses its rules with a few passes in C over the text's bytes
(secrets.rules_in) instead of rules_for's split and keyword loop (kept below as the old oracle). What
makes that safe, proved here:

- every match of a rule in secrets._ASCII_RUN is printable ASCII without a space, at least Rule.run
  long, and holds (in some case) one of the rule's keywords: read off each pattern's parse tree;
- U+0130 and U+212A are the only characters whose str.lower() holds an ASCII character (so without
  them an ASCII keyword is in text.lower() exactly when it is in the UTF-8 bytes' ASCII lowercase);
- and, the result that matters: the first finding over a record's fields is the one every rule on
  every field gives (no prefilter at all), and the one the old rules_for choice gave, over thousands
  of generated records holding every rule's secrets and look-alikes in every field, glued to
  Cyrillic, upper-cased, beside `İ` and the Kelvin sign, with and without `:`, `=`, `@`;
- and for receipts.scrubbed's `scan(text, anywhere=True)`: every finding of every rule, glued to
  letters and digits before it, is found with rules_in's choice too."""

from __future__ import annotations

import json
import random
import re
import string
from pathlib import Path

from bisect import bisect_right

from kyb_cli.core.records import secrets
from tests.test_secrets_round_three import CAUGHT, LOOKALIKES
from tests.support.secret_corpus import every_rule_on_every_field

try:
    from re import _parser as sre_parse  # Python 3.11+
    from re import _constants as sre_constants
except ImportError:  # pragma: no cover - older Pythons
    import sre_constants  # type: ignore[no-redef]
    import sre_parse  # type: ignore[no-redef]

CORPUS = Path(__file__).resolve().parent / "data" / "secrets_corpus.jsonl"
ROWS = [json.loads(line) for line in CORPUS.read_text(encoding="utf-8").splitlines() if line.strip()]


def _graphic(code: int) -> bool:
    return 0x21 <= code <= 0x7E


def _ascii_graphic_only(items) -> bool:
    """Every character the parsed pattern `items` can consume is printable ASCII (no space)."""
    for op, av in items:
        if op is sre_constants.LITERAL:
            if not _graphic(av):
                return False
        elif op is sre_constants.IN:
            for iop, iav in av:
                if iop is sre_constants.LITERAL:
                    if not _graphic(iav):
                        return False
                elif iop is sre_constants.RANGE:
                    if not (_graphic(iav[0]) and _graphic(iav[1])):
                        return False
                else:  # NEGATE, CATEGORY (\s, \S, \w …): could consume anything
                    return False
        elif op in (sre_constants.MAX_REPEAT, sre_constants.MIN_REPEAT, sre_constants.POSSESSIVE_REPEAT):
            if not _ascii_graphic_only(av[2]):
                return False
        elif op is sre_constants.SUBPATTERN:
            if not _ascii_graphic_only(av[3]):
                return False
        elif op is sre_constants.BRANCH:
            if not all(_ascii_graphic_only(alt) for alt in av[1]):
                return False
        elif op in (sre_constants.ASSERT, sre_constants.ASSERT_NOT, sre_constants.AT):
            continue  # consumes nothing
        else:
            return False
    return True


def _paths(items, paths):
    """The literal text every way through the parsed pattern `items` surely holds: each path is
    (closed pieces, the open piece); a literal, a small set of literals or a branch extends or
    forks it, anything else (a repeat, a class) closes the open piece."""
    for op, av in items:
        if op is sre_constants.LITERAL:
            paths = [(closed, open_ + chr(av)) for closed, open_ in paths]
        elif (op is sre_constants.IN and len(av) <= 32
              and all(iop is sre_constants.LITERAL for iop, _iav in av)):
            paths = [(closed, open_ + chr(iav)) for closed, open_ in paths for _iop, iav in av]
        elif op is sre_constants.SUBPATTERN:
            paths = _paths(av[3], paths)
        elif op is sre_constants.BRANCH:
            paths = [path for alt in av[1] for path in _paths(alt, paths)]
        elif op in (sre_constants.ASSERT, sre_constants.ASSERT_NOT, sre_constants.AT):
            continue  # consumes nothing: the text on either side is one piece
        else:
            paths = [(closed + (open_,), "") for closed, open_ in paths]
        assert len(paths) < 10_000
    return paths


def _holds_a_keyword(rule: secrets.Rule) -> bool:
    """Every way through the pattern holds a literal piece that holds a keyword (lowercased)."""
    paths = _paths(sre_parse.parse(rule.pattern), [((), "")])
    return all(any(k in piece.lower() for piece in closed + (open_,) for k in rule.keywords)
               for closed, open_ in paths)


def test_the_ascii_run_rules_match_only_printable_ascii_runs_holding_a_keyword():
    assert secrets._ASCII_RUN <= {rule.id for rule in secrets.RULES}
    for rule in secrets.RULES:
        if rule.id not in secrets._ASCII_RUN:
            continue
        parsed = sre_parse.parse(rule.pattern)
        assert not rule.nocase, rule.id  # run on the text as it is
        assert _ascii_graphic_only(parsed), rule.id
        assert parsed.getwidth()[0] >= rule.run, rule.id  # a match is at least Rule.run long
        assert all(k.isascii() for k in rule.keywords), rule.id
        assert _holds_a_keyword(rule), rule.id


def test_the_other_rules_are_those_that_need_spaces_or_other_text():
    others = [rule.id for rule in secrets.RULES if rule.id not in secrets._ASCII_RUN]
    assert all(rule.nocase or not _ascii_graphic_only(sre_parse.parse(rule.pattern))
               for rule in secrets.RULES if rule.id in others)


def test_only_two_characters_lowercase_to_something_holding_ascii():
    odd = [code for code in range(0x80, 0x110000) if any(ord(ch) < 0x80 for ch in chr(code).lower())]
    assert odd == [0x130, 0x212A]



def _flat(items):
    """The pattern's top-level sequence with its groups' contents inlined (a group's text is contiguous)."""
    out = []
    for op, av in items:
        if op is sre_constants.SUBPATTERN:
            out.extend(_flat(av[3]))
        else:
            out.append((op, av))
    return out


def _ascii_stretch(pattern: str) -> int:
    """The most printable-ASCII characters in a row every match surely holds: consecutive top-level
    items that consume only printable ASCII, their shortest widths summed."""
    best = here = 0
    for item in _flat(sre_parse.parse(pattern)):
        if item[0] in (sre_constants.ASSERT, sre_constants.ASSERT_NOT, sre_constants.AT):
            continue  # zero width: the text on either side is contiguous
        if _ascii_graphic_only([item]):
            here += sre_parse.SubPattern(sre_parse.State(), [item]).getwidth()[0]
            best = max(best, here)
        else:
            here = 0
    return best


def test_the_rules_gated_by_a_run_hold_that_run_in_every_match():
    for rule_id, (need, always) in secrets._ASCII_NEED.items():
        rule = next(r for r in secrets.RULES if r.id == rule_id)
        assert rule.id not in secrets._ASCII_RUN
        assert need >= secrets._RUN_MIN  # a text whose runs are all shorter than _RUN_MIN is too short
        assert _ascii_stretch(rule.pattern) >= need, rule.id
        assert always == (not rule.nocase), rule.id  # a lowercased text's run is the text's only without U+0130/U+212A
    # U+0130 is the one character whose lowercase is not one character (then scan runs re.I on the text)
    assert [code for code in range(0x110000) if len(chr(code).lower()) != 1] == [0x130]


_KEYWORDS_RUNS = tuple(sorted((min(rule.run for rule in secrets.RULES if k in rule.keywords), k)
                              for k in {k for rule in secrets.RULES for k in rule.keywords}))
_KEYWORDS = tuple(k for _run, k in _KEYWORDS_RUNS)
_KEYWORD_RUNS = [run for run, _k in _KEYWORDS_RUNS]


def _old_rules_for(joined: str) -> list:
    """The choice of rules before issue 39's gate (secrets.rules_for, verbatim): a keyword occurs, a
    run of non-space characters is long enough (Rule.run), a mark they need is there."""
    longest = max(map(len, joined.split()), default=0)  # no match spans a space (Rule.run)
    lowered = joined.lower()
    present = {k for k in _KEYWORDS[:bisect_right(_KEYWORD_RUNS, longest)] if k in lowered}
    if not present:
        return []
    return [rule for rule in secrets.RULES if rule.run <= longest and not present.isdisjoint(rule.keywords)
            and (not rule.marks or any(mark in joined for mark in rule.marks))]


def _old_scan_fields(fields):
    """scan_fields as it was before issue 39's gate: rules_for's choice over the joined text."""
    pairs = [(name, text) for name, text in fields if text]
    if not pairs:
        return None
    rules = _old_rules_for("\n".join(text for _name, text in pairs))
    if not rules:
        return None
    for name, text in pairs:
        found = next(secrets.scan(text, name, rules=rules), None)
        if found is not None:
            return found
    return None


def _shortest(prefixes, body, low, rng):
    alphabet = [ch for ch in string.ascii_letters + string.digits + "_-./+=" if re.fullmatch(f"[{body}]", ch)]
    return rng.choice(prefixes) + "".join(rng.choice(alphabet) for _ in range(low + rng.randint(0, 6)))


def _secrets(rng: random.Random) -> list[str]:
    texts = [r["text"] for r in ROWS] + list(CAUGHT.values()) + list(LOOKALIKES.values())
    texts += [_shortest(prefixes, body, low, rng) for _rule, prefixes, body, low, _high, _e in secrets.FORMATS]
    return texts


WORDS = ["Authorization: Bearer", "bearer ", "SSWS ", "token", "key", "secret", "pass", "пароль", "ПАРОЛЬ", "machine", "bearer", "Bearer", "basic",
         "ssws", "-----BEGIN", "://", '"auth"', "accountkey", "сервис", "очередь", "port", "9090",
         "inc-000001-outage", "svc-checkout.prod.internal", "\u0130", "\u212a", "K\u0130", "ſ", "=", ":", "@",
         "\t", "  ", "\n", "ё", "Σ", "ß"]


def _dress(text: str, rng: random.Random) -> str:
    """A secret or look-alike as a record might hold it: beside words, glued, cased, odd characters."""
    how = rng.randrange(8)
    if how == 1:
        text = text.upper()
    elif how == 2:
        text = text.lower()
    elif how == 3:
        text = "сервис" + text  # glued to Cyrillic
    elif how == 4:
        text = text.replace("k", "\u212a", 1).replace("K", "\u212a", 1)  # the Kelvin sign
    elif how == 5:
        text = "\u0130" + text
    elif how == 6:
        cut = rng.randrange(len(text) + 1)
        text = text[:cut] + rng.choice([" ", "\n", "\u00a0", "ё"]) + text[cut:]
    around = " ".join(rng.choice(WORDS) for _ in range(rng.randint(0, 6)))
    return (around + " " + text) if rng.random() < 0.5 else (text + " " + around)


FIELDS = ["key", "title", "body", "tags", "refs", "hosts", "service", "detection", "assignee", "affected",
          "verified source", "owner"]


def test_scan_fields_finds_what_every_rule_on_every_field_finds():
    rng = random.Random(39)
    texts = _secrets(rng)
    checked = found = 0
    for _ in range(6000):
        fields = []
        for _f in range(rng.randint(1, 5)):
            name = rng.choice(FIELDS)
            if rng.random() < 0.45:
                text = _dress(rng.choice(texts), rng)
            else:
                text = " ".join(rng.choice(WORDS) for _ in range(rng.randint(0, 12)))
            fields.append((name, text))
        expected = every_rule_on_every_field(fields)
        assert secrets.scan_fields(fields) == expected, fields
        assert _old_scan_fields(fields) == expected, fields
        checked += 1
        found += expected is not None
    assert checked == 6000 and found > 1500  # the corpus is mostly secrets: the gate must not lose one


def test_each_text_alone_in_each_field():
    rng = random.Random(7)
    for text in _secrets(rng):
        for dressed in (text, text.upper(), "пароль " + text, text + "\u212a", "\u0130 " + text):
            for name in ("body", "key", "tags"):
                fields = [("title", "short words"), (name, dressed)]
                assert secrets.scan_fields(fields) == every_rule_on_every_field(fields), (name, dressed)


def test_scan_anywhere_with_rules_in_finds_what_every_rule_finds():
    """receipts.scrubbed scans with anywhere=True (a match glued to a letter or digit counts) through
    rules_in's choice: every rule's findings, in order, are the same as with no choice at all."""
    rng = random.Random(38)
    texts = _secrets(rng)
    found = 0
    for n in range(4000):
        text = _dress(rng.choice(texts), rng)
        if n % 2:
            text = rng.choice(["x", "2026-13-45", "id9", "É", "k"]) + text.lstrip()  # glued on
        every = list(secrets.scan(text, anywhere=True))
        assert list(secrets.scan(text, anywhere=True, rules=secrets.rules_in(text))) == every, text
        found += bool(every)
    assert found > 1500  # mostly secrets: a choice that lost one would show
