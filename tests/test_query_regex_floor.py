"""Issue 38: a lower-case, ASCII question compiles none of the patterns only other words need (an
identifier's, Cyrillic's, a dead rebuild's temp file's: ~0.4 ms of every one-shot query), and the
shortcuts answer as the patterns do."""

from __future__ import annotations

import random
import re

import pytest

from kyb_cli.core.search import relevance, tokens
from kyb_cli.core.search.syntax import query_plan

IDENT = re.compile(relevance._IDENT)


def test_a_lower_case_ascii_question_compiles_no_identifier_or_cyrillic_pattern():
    """In a new interpreter, as a one-shot query runs: re's cache holds neither pattern afterwards."""
    import subprocess
    import sys

    script = ("import re; from kyb_cli.core.search import relevance, tokens; "
              "from kyb_cli.core.search.syntax import query_plan; query_plan('postgres replica failover'); "
              "assert not relevance.looks_like_identifier(['postgres', 'replica']); "
              "cache = getattr(re, '_cache', None); "
              "print('skip' if cache is None else "
              "sorted(p for p, x in (('ident', relevance._IDENT), ('cyrillic', tokens._CYRILLIC)) "
              "if getattr(x, 'pattern', x) in {k[1] for k in cache}))")
    res = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert res.returncode == 0, res.stderr
    if res.stdout.strip() == "skip":
        pytest.skip("re keeps no _cache in this Python")
    assert res.stdout.strip() == "[]"


def test_the_shortcuts_answer_as_the_patterns_do():
    rng = random.Random(38)
    alphabet = "abcdefXYZ019-_./:é ёжд"
    for _ in range(3000):
        word = "".join(rng.choice(alphabet) for _ in range(rng.randint(1, 9)))
        if word.isalpha() and word.islower():
            assert not IDENT.fullmatch(word), word
    assert relevance.looks_like_identifier(["fs.file-nr"]) and relevance.looks_like_identifier(["deadbeef1"])
    assert relevance.looks_like_identifier(["etcdserver:", "no", "leader"])
    assert query_plan("стримах")[1].match == query_plan("стрим")[1].match
