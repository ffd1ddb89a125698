"""known.pure is `str(Path(p))` without importing pathlib (issue 38: pathlib's urllib.parse and
ipaddress were ~4 ms of every one-shot `kyb query`): the store, config and data paths a query
builds go through it, so it must say what pathlib says, for any string."""

from __future__ import annotations

import random
from pathlib import Path

from kyb_cli.core.known import pure

EDGES = ["", ".", "..", "/", "//", "///", "////x", "//x", "//x/", "///x", "a", "a/", "a//b", "a/./b", "./a",
         "a/..", "../a", "/a/../b", "/./", "a/.", ".a", "a./b", "/tmp//kyb/./store/", "~/x", "a b/ c", "é/ü"]


def test_pure_says_what_pathlib_says_on_the_edges():
    for p in EDGES:
        assert pure(p) == str(Path(p)), p


def test_pure_says_what_pathlib_says_on_random_paths():
    rng = random.Random(38)
    pieces = ["", ".", "..", "a", "bb", " ", "x.y", "é", "~"]
    for _ in range(20000):
        p = "/".join(rng.choice(pieces) for _ in range(rng.randint(0, 7)))
        if rng.random() < 0.3:
            p = "/" * rng.randint(1, 4) + p
        assert pure(p) == str(Path(p)), p
