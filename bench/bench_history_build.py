"""The history build of a clone, in-process (`build.build_file`), with where its wall time goes.

    PYTHONPATH=<checkout> python bench/bench_history_build.py /tmp/h39k-100k /tmp/out.sqlite

Prints the wall, this process's CPU and its children's (git, the parsing workers), and when the
first and last commits were read and each closing step (fts_now, the indexes made after the rows,
optimize) began and took: the parts of `history complete` (issue 39) that no query loop and no
clone blur. Compare two checkouts by running it with each on PYTHONPATH, interleaved, on one clone.
"""

from __future__ import annotations

import resource
import sys
import time
from pathlib import Path

from kyb_cli.core.index import build, gitlog, schema  # the checkout on PYTHONPATH: the one measured


def cpu(who: int) -> float:
    use = resource.getrusage(who)
    return use.ru_utime + use.ru_stime


def main() -> None:
    store, out = Path(sys.argv[1]), Path(sys.argv[2])
    head = gitlog.head(store)
    t0, marks = time.perf_counter(), []

    def timed(obj, name: str) -> None:
        real = getattr(obj, name)

        def step(*a, **k):
            t = time.perf_counter()
            try:
                return real(*a, **k)
            finally:
                marks.append((name, round(t - t0, 2), round(time.perf_counter() - t, 2)))
        setattr(obj, name, step)

    for obj, name in ((build.Builder, "_fill_now"), (build, "optimize"), (schema, "create_later")):
        if hasattr(obj, name):  # an older checkout may lack one
            timed(obj, name)
    run = build.Builder.run

    def watched(self, commits, *rest):
        def read():
            for n, commit in enumerate(commits):
                if n == 0:
                    marks.append(("first_commit", round(time.perf_counter() - t0, 2), 0))
                yield commit
            marks.append(("last_commit", round(time.perf_counter() - t0, 2), 0))
        return run(self, read(), *rest)
    build.Builder.run = watched
    stats = build.build_file(store, out, head, note=False)
    print(f"wall={time.perf_counter() - t0:.2f} main_cpu={cpu(resource.RUSAGE_SELF):.2f} "
          f"children_cpu={cpu(resource.RUSAGE_CHILDREN):.2f} versions={stats['versions']} {marks}")


if __name__ == "__main__":
    main()
