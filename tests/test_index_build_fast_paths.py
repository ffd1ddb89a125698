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

PIECES = ["token", "password: hunter2x9Q", "ghp_aB3dE6gH9jK2mN5pQ8sT1vW4yZ7bC0eF3hJ6", "sk", "key=",
          "AKIAIOSFODNN7ABCDEFG", "prose", "ey", "basic ", "пароль: Zx9kLm2Qw", "postgres://u:Sup3rS3cr3t@h/db",
          "xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx", " ", "\n", "İ"]


def _every_rule_on_every_field(fields):
    for name, text in fields:
        if text:
            found = next(secrets.scan(text, name), None)
            if found is not None:
                return found
    return None


def test_scanning_a_record_once_for_keywords_finds_what_scanning_each_field_finds():
    rng = random.Random(27)
    for _ in range(3000):
        fields = [(f"f{j}", "".join(rng.choice(PIECES) for _ in range(rng.randint(0, 5))))
                  for j in range(rng.randint(0, 4))]
        assert secrets.scan_fields(fields) == _every_rule_on_every_field(fields), fields


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
