"""One `kyb add` of a new key, as a user runs it (a fresh `python -m kyb_cli` process each): CPU
seconds (user + system of the process and its children, from rusage: less sensitive to a shared
machine's load than wall time) and wall seconds, p50 over --writes, with the load average.

    python bench/bench_write_cpu.py --store /tmp/kyb-100k-clone --writes 9
    PYTHONPATH=/path/to/other/checkout python bench/bench_write_cpu.py --store …   # another version

Run it on a clone whose index is complete (bench_large.py --keep leaves one); it writes to it.
One untimed write comes first (--warm): it writes the bytecode caches and warms the page cache.
PYTHONDONTWRITEBYTECODE is dropped for the runs: with it every process compiled kyb's ~130 modules
(~0.15 s of CPU at any size, as no user's install does); PYTHONPYCACHEPREFIX keeps them elsewhere.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import time
import uuid


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--store", required=True)
    ap.add_argument("--writes", type=int, default=9)
    ap.add_argument("--warm", type=int, default=1, help="untimed writes first")
    args = ap.parse_args()
    env = {**os.environ, "KYB_STORE": args.store, "KYB_BACKGROUND": "off", "KYB_DEADLINES": "off",
           "KYB_MODEL": os.path.join(args.store, ".no-model"), "GIT_AUTHOR_NAME": "bench",  # as bench_large.py
           "GIT_AUTHOR_EMAIL": "bench@kyb.invalid", "GIT_COMMITTER_NAME": "bench",
           "GIT_COMMITTER_EMAIL": "bench@kyb.invalid"}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    cpu, wall = [], []
    tag = uuid.uuid4().hex[:6]
    for i in range(-args.warm, args.writes):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        t0 = time.perf_counter()
        subprocess.run([sys.executable, "-m", "kyb_cli", "add", "--key", f"bench-cpu-{tag}-{i + args.warm}", "--title",
                        f"Bench write {i}", "--body", f"port {9000 + i} on node-{i % 5}"],
                       env=env, check=True, capture_output=True)
        wall.append(time.perf_counter() - t0)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        if i < 0:
            wall.pop()
            continue
        cpu.append(after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime)
    load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    print(f"{args.store}: kyb add p50 {statistics.median(cpu):.3f} s CPU, {statistics.median(wall):.3f} s wall "
          f"(max {max(wall):.3f}; {args.writes} writes; load {load})")


if __name__ == "__main__":
    main()
