"""A batch's objects three ways (canon/batch.write_objects): the in-process pack writer, `git
fast-import`, pygit2's loose objects — CPU seconds (this process and the children it waited for),
on fanned-out record paths (`<dir>/<bucket>/<key>.md`), one record a commit, every 20th a retract.
The machine's load average is printed with the figures.

    python bench/bench_packwrite.py --commits 10000
"""

from __future__ import annotations

import argparse
import os
import resource
import tempfile
import time
from pathlib import Path


def cpu() -> float:
    me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--commits", type=int, default=10000)
    ap.add_argument("--ways", default="pack,git", help="comma-separated subset of pack,git,pygit2")
    args = ap.parse_args()
    from kyb_cli.core.canon import batch
    from kyb_cli.core.canon.repo import Store, init_store
    from kyb_cli.core.records.keys import path_of_key

    commits = []
    for i in range(args.commits):
        if i % 20 == 19:
            commits.append(batch.Commit(f"kyb: retract n{i - 10}\n", {path_of_key(f"n{i - 10}"): None}))
        else:
            text = f"+++\nkey = \"n{i}\"\n+++\n# Note {i}\n\nport {8000 + i} on node-{i % 7}\n"
            commits.append(batch.Commit(f"kyb: add n{i}\n", {path_of_key(f"n{i}"): text.encode()}))
    ways = {"pack": True, "git": "git", "pygit2": False}
    for way in args.ways.split(","):
        with tempfile.TemporaryDirectory() as tmp:
            init_store(Path(tmp) / "store")
            store = Store(Path(tmp) / "store")
            c0, t0 = cpu(), time.perf_counter()
            batch.write_objects(store, store.head_commit(), commits, fast_import=ways[way])
            print(f"{way:7s} {args.commits} commits: {cpu() - c0:.2f} s CPU, {time.perf_counter() - t0:.2f} s wall "
                  f"(load {' '.join(f'{x:.2f}' for x in os.getloadavg())})", flush=True)


if __name__ == "__main__":
    main()
