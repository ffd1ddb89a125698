"""Cost of cutting bodies into passages (recipe.chunks): the dev set's 176 bodies, the shipped way
against the per-character walk (tests/test_index_build_fast_paths.py's reference), best of 5.

    PYTHONPATH=. python bench/bench_chunks.py

A hybrid answer cuts the chunks of each hit it returns to show the passage found by meaning.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))
sys.path.insert(0, str(ROOT))
from evalset import checks  # noqa: E402

from kyb_cli.core.embed import recipe  # noqa: E402
from tests.test_index_build_fast_paths import _walked_chunks  # noqa: E402


def best(fn, bodies: list[str]) -> float:
    times = []
    for _ in range(5):
        t0 = time.perf_counter()
        for b in bodies:
            fn(b)
        times.append(time.perf_counter() - t0)
    return min(times)


def main() -> None:
    bodies = [d["body"] for d in checks.load(checks.DOCS)]
    assert all(recipe.chunks(b) == _walked_chunks(b) for b in bodies)
    walk, shipped = best(_walked_chunks, bodies), best(recipe.chunks, bodies)
    print(f"{len(bodies)} bodies, same chunks: walk {walk * 1000:.0f} ms, shipped {shipped * 1000:.0f} ms")


if __name__ == "__main__":
    main()
