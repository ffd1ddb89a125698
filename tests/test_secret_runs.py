"""Issue 39: scan_fields (the held-out check of every record a snapshot indexes) skips a rule whose
matches need a longer run of non-space characters than the record has (Rule.run), or a character
(Rule.marks: `=`/`:` of an assignment) the record lacks. These say it finds what the full scan finds:
every secret and look-alike the other secret tests hold, and each format at its shortest."""

from __future__ import annotations

import json
import random
import re
import string
from pathlib import Path

import pytest

from kyb_cli.core.records import secrets
from tests.test_secrets_round_three import CAUGHT, LOOKALIKES

CORPUS = Path(__file__).resolve().parent / "data" / "secrets_corpus.jsonl"
ROWS = [json.loads(line) for line in CORPUS.read_text(encoding="utf-8").splitlines() if line.strip()]
TEXTS = ([(r["field"], r["text"]) for r in ROWS]
         + [("body", f"the credential is {v} for now") for v in {**CAUGHT, **LOOKALIKES}.values()])


def _same(field: str, text: str):
    full = secrets.first_secret(text, field)
    fast = secrets.scan_fields([(field, text)])
    return (full.rule, full.start) if full else None, (fast.rule, fast.start) if fast else None


def test_scan_fields_finds_what_the_full_scan_finds():
    """Every text of the corpus in one test (one item a text made ~1,200 items to collect in every
    lane); a difference names the text's index and field."""
    differ = [(i, field, full, fast) for i, (field, text) in enumerate(TEXTS)
              for full, fast in [_same(field, text)] if fast != full]
    assert differ == []


def test_the_corpus_holds_secrets_the_skips_must_not_lose():
    assert sum(1 for f, t in TEXTS if secrets.first_secret(t, f) is not None) >= 90


def _shortest(rule: str, prefixes: tuple[str, ...], body: str, low: int) -> str:
    alphabet = [ch for ch in string.ascii_letters + string.digits if re.fullmatch(f"[{body}]", ch)]
    rng = random.Random(rule)
    return min(prefixes, key=len) + "".join(rng.choice(alphabet) for _ in range(low))


@pytest.mark.parametrize("fmt", secrets.FORMATS, ids=[f[0] for f in secrets.FORMATS])
def test_each_format_at_its_shortest_is_caught_among_short_words(fmt):
    rule, prefixes, body, low, _high, _entropy = fmt
    token = _shortest(rule, prefixes, body, low)
    text = f"deploy note: rotate {token} now"
    assert secrets.first_secret(text, "body") is not None  # the full scan catches it…
    found = secrets.scan_fields([("title", "short words only"), ("body", text)])
    assert found is not None and found.rule == secrets.first_secret(text).rule and found.field == "body"


@pytest.mark.parametrize("text,rule", [
    ("db at postgres://:p4s@db.internal", "url-credentials"),  # the run is 10: `://:p4s@db`
    ("login pwd:x7k2m9 here", "password-assignment"),
    ("machine host login bob password hunter2x", "netrc-password"),  # no `=` or `:` at all
    ("-----BEGIN RSA PRIVATE KEY----- in a note", "private-key"),  # the match spans spaces
])
def test_short_context_secrets_are_caught(text, rule):
    found = secrets.scan_fields([("body", text)])
    assert found is not None and found.rule == rule


def test_prose_of_short_words_with_keywords_is_clean():
    text = "token auth key secret pass rotation every week, port 9090"
    assert secrets.scan_fields([("body", text)]) is None
