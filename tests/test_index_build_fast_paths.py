"""The index build's per-version shortcuts give exactly what the long way gives (issue 27: the secret
scan and the chunking had made a 10k clone's first answer and history 2-3x slower).

- the secret scan looks for every rule's keywords once per record, then runs on each field only
  the rules whose keywords occur: the same first finding as every rule on every field;
- a body whose estimated size fits one chunk is one chunk without walking its characters, and the
  sum is exact (quarters and ones), so the boundary falls where the walk put it."""

from __future__ import annotations

import itertools
import random

from kyb_cli.core.embed import recipe
from kyb_cli.core.records import secrets
from tests.support.secret_corpus import every_rule_on_every_field

PIECES = ["token", "password: hunter2x9Q", "ghp_aB3dE6gH9jK2mN5pQ8sT1vW4yZ7bC0eF3hJ6", "sk", "key=",
          "AKIAIOSFODNN7ABCDEFG", "prose", "ey", "basic ", "пароль: Zx9kLm2Qw", "postgres://u:Sup3rS3cr3t@h/db",
          "xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx", " ", "\n", "İ"]


def test_scanning_a_record_once_for_keywords_finds_what_scanning_each_field_finds():
    rng = random.Random(27)
    for _ in range(3000):
        fields = [(f"f{j}", "".join(rng.choice(PIECES) for _ in range(rng.randint(0, 5))))
                  for j in range(rng.randint(0, 4))]
        assert secrets.scan_fields(fields) == every_rule_on_every_field(fields), fields


def _walked(body: str) -> float:
    return sum(recipe._units(ch) for ch in body[:recipe.MAX_PASSAGES * recipe.CHUNK_UNITS * 6])


def test_a_body_that_fits_one_chunk_is_one_chunk_without_walking_it_and_the_boundary_is_exact():
    limit = recipe.CHUNK_UNITS
    for wide, narrow in itertools.product(range(0, limit + 2, 7), (0, 1, 2, 3, 4, 5)):
        body = "日" * wide + "a" * max(0, int((limit - wide) * 4) + narrow - 2)
        chunks = recipe.chunks(body)
        assert (chunks == [body]) == (_walked(body) <= limit), (wide, narrow)
    long = "word " * 2000 + "終わり"
    assert len(recipe.chunks(long)) > 1 and recipe.chunks(long)[-1].endswith("終わり")


def _walked_chunks(body: str) -> list[str]:
    """recipe.chunks the long way: every character's units summed, the windows found by bisect."""
    import bisect

    body = body[:recipe.MAX_PASSAGES * recipe.CHUNK_UNITS * 6]
    units = [0.0, *itertools.accumulate(map(recipe._units, body))]
    if units[-1] <= recipe.CHUNK_UNITS:
        return [body]
    out: list[str] = []
    start = 0
    while start < len(body) and len(out) < recipe.MAX_PASSAGES:
        end = recipe._cut(body, start, max(bisect.bisect_right(units, units[start] + recipe.CHUNK_UNITS) - 1, start + 1))
        out.append(body[start:end].strip())
        if end >= len(body):
            break
        back = bisect.bisect_left(units, units[end] - recipe.OVERLAP_UNITS)
        start = max(start + 1, recipe._restart(body, back, end))
    return [c for c in out if c] or [body[:recipe.BODY_CHARS]]


def test_a_long_body_without_wide_characters_is_cut_where_the_walk_cuts_it():
    """Without CJK, kana or hangul a body's units are i / 4 exactly, so its chunks are found without
    walking it (a snippet cuts a long runbook's chunks for every hit it returns)."""
    rng = random.Random(26)
    words = ["alert", "disk", "node-3", "journalctl --vacuum-size=500M", "Ärger", "проверьте", "\n", "\n\n", ". ", "; "]
    for _ in range(200):
        body = " ".join(rng.choice(words) for _ in range(rng.randint(50, 3000)))
        if rng.random() < 0.3:
            body = body[:len(body) // 2] + "日本" + body[len(body) // 2:]  # the walk, for comparison
        assert recipe.chunks(body) == _walked_chunks(body)


TOML_PIECES = ['key = "a"', 'title = "Кафка ё"', 'tags = ["x", "y"]', "tags = []", 'tags = ["x"]', "t = true",
               "f = false", 'a = "x\\ty"', 'a = "q\\"q"', 'a = "tab\there"', "a = 1", "a = 'lit'", "[verified]",
               'source = "s"', "", "# note", 'a.b = "c"', 'a = ["x",]', 'a = ["x","y"]', 'x = "\x7f"',
               'x = "\x01"', "x = \"a\"  ", 'bad key = "a"', "[[affected]]", 'x = """m"""', 'u = "é\\u00e9"']


def test_the_plain_front_matter_reader_reads_what_tomllib_reads_or_leaves_it_to_tomllib():
    import tomllib

    from kyb_cli.core.records.model import plain_toml

    rng = random.Random(39)
    read = 0
    for _ in range(4000):
        text = "".join(rng.choice(TOML_PIECES) + "\n" for _ in range(rng.randint(0, 5)))
        fast = plain_toml(text)
        if fast is None:
            continue
        read += 1
        assert fast == tomllib.loads(text), text  # never a different dict, never one tomllib refuses
    assert read > 200  # it does read kyb's own shape
