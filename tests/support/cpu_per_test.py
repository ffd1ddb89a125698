"""Where a lane's CPU seconds go, test by test: an opt-in pytest plugin and its summary.

    PYTHONPATH=tests python -m tests.lanes fast -p support.cpu_per_test     # writes $KYB_CPU_DIR/rows-*.json
    python -m tests.support.cpu_per_test [DIR]                               # the costliest files and tests

`--durations` gives wall time, which the machine's load decides; a lane's budget is CPU (tests/lanes.py).
Each test's CPU is this process's (user + system) plus that of the processes it waited for (a
`kyb` or `git` it ran), measured around the whole test protocol (setup, call, teardown). What the
rows do not hold is each worker's start and collection: the lane's CPU minus their sum.
"""

from __future__ import annotations

import json
import os
import resource
import sys
import time
from collections import defaultdict
from pathlib import Path

import pytest

_ROWS: list[tuple[str, float, float, float]] = []


def _dir() -> Path:
    return Path(os.environ.get("KYB_CPU_DIR", "/tmp/kyb-cpu-per-test"))


def _cpu() -> tuple[float, float]:
    own, waited = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime, waited.ru_utime + waited.ru_stime


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    own, waited = _cpu()
    start = time.monotonic()
    yield
    own2, waited2 = _cpu()
    _ROWS.append((item.nodeid, own2 - own, waited2 - waited, time.monotonic() - start))


def pytest_sessionfinish(session):
    if not _ROWS:
        return
    folder = _dir()
    folder.mkdir(parents=True, exist_ok=True)
    worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
    (folder / f"rows-{worker}.json").write_text(json.dumps(_ROWS))


def summary(folder: Path, top: int = 25) -> str:
    rows = [row for f in sorted(folder.glob("rows-*.json")) for row in json.loads(f.read_text())]
    by_file: dict[str, list[float]] = defaultdict(lambda: [0.0, 0.0, 0])
    for node, own, waited, _wall in rows:
        acc = by_file[node.split("::")[0]]
        acc[0] += own
        acc[1] += waited
        acc[2] += 1
    lines = [f"{len(rows)} tests: {sum(r[1] for r in rows):.1f} CPU-s in pytest, "
             f"{sum(r[2] for r in rows):.1f} in the processes they waited for", "", "costliest files:"]
    for name, (own, waited, n) in sorted(by_file.items(), key=lambda kv: -(kv[1][0] + kv[1][1]))[:top]:
        lines.append(f"{own + waited:7.1f} CPU-s  (own {own:5.1f}, waited {waited:5.1f})  {n:4d} tests  {name}")
    lines += ["", "costliest tests:"]
    for node, own, waited, wall in sorted(rows, key=lambda r: -(r[1] + r[2]))[:top]:
        lines.append(f"{own + waited:7.2f} CPU-s  {wall:6.2f} s wall  {node}")
    return "\n".join(lines)


if __name__ == "__main__":
    print(summary(Path(sys.argv[1]) if len(sys.argv) > 1 else _dir()))
