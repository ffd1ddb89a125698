"""Regenerate README's test-suite figures (how many tests, how long) from the suite itself.

    python bench/readme_figures.py --count        # print the collected count (pytest --collect-only)
    python bench/readme_figures.py                # write that count into README
    python bench/readme_figures.py --check        # exit 1 when README's count is off by more than TOLERANCE
    python bench/readme_figures.py --write TIME   # write a measured time ("15 min", "14 min 20 s") into README
    python bench/readme_figures.py --run          # run the lanes as README says; write count, times and load

Why: README's "about 740 tests, about a minute" went stale while the suite grew to 1,600; a figure a
command writes cannot drift silently, and tests/test_readme_figures.py fails when the count drifts.
The sentence README carries is built here only (FIGURES), so the command and the test read one format.
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import re
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
TOLERANCE = 0.10  # README's count may lag the collected count by this fraction before the drift test fails
PLACEHOLDER = "TIME NOT YET MEASURED"  # what README says until someone runs --run or --write TIME
FIGURES = re.compile(
    r"<!-- readme-figures -->The whole suite \(about (?P<count>[\d,]+) tests\) took (?P<time>.*?) "
    r"\(measured by (?P<how>.*?)\)\.<!-- /readme-figures -->", re.S)


def collected() -> int:
    """How many tests pytest collects: the figure README states."""
    out = subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider",
                          "-n", "0"], cwd=ROOT, capture_output=True, text=True).stdout
    m = re.search(r"(\d+) tests? collected", out) or re.search(r"^(\d+) tests?", out, re.M)
    if m:
        return int(m.group(1))
    return sum(1 for line in out.splitlines() if "::" in line)


def stated(text: str) -> dict[str, str] | None:
    """README's figures as written: count, time and the measurement note, or None without the sentence."""
    m = FIGURES.search(text)
    return m.groupdict() if m else None


def within_tolerance(readme_count: int, actual: int) -> bool:
    return abs(readme_count - actual) <= TOLERANCE * actual


def sentence(count: int, took: str, how: str) -> str:
    return (f"<!-- readme-figures -->The whole suite (about {count:,} tests) took {took} "
            f"(measured by {how}).<!-- /readme-figures -->")


def machine(load: float) -> str:
    return (f"`python bench/readme_figures.py --run` on {os.cpu_count()} cores, load {load:.1f} at the start, "
            f"{dt.date.today().isoformat()}")


def _took(seconds: float) -> str:
    seconds = int(round(seconds))
    return f"{seconds // 60} min {seconds % 60} s" if seconds >= 60 else f"{seconds} s"


def timed_run() -> tuple[str, str]:
    """Run the lanes as README's test command does (tests/lanes.py) and word their figures."""
    import json
    import tempfile

    load = os.getloadavg()[0]
    start = time.monotonic()
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "lanes.json"
        subprocess.run([sys.executable, "-m", "tests.lanes", "--json", str(out)], cwd=ROOT)
        lanes = json.loads(out.read_text()) if out.exists() else []
    per = "; ".join(f"{r['lane']} {_took(r['wall_s'])} wall, {r['cpu_s']:.0f} CPU-s" for r in lanes)
    return f"{_took(time.monotonic() - start)} ({per})", machine(load)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--count", action="store_true", help="print the collected count and exit")
    mode.add_argument("--check", action="store_true", help="exit 1 when README's count drifted")
    mode.add_argument("--run", action="store_true", help="run the suite and record its time")
    mode.add_argument("--write", metavar="TIME", help="record a time measured by hand, e.g. '15 min'")
    args = parser.parse_args()
    n = collected()
    if args.count:
        print(n)
        return 0
    text = README.read_text()
    figures = stated(text)
    if figures is None:
        print("README has no <!-- readme-figures --> sentence", file=sys.stderr)
        return 1
    if args.check:
        ok = within_tolerance(int(figures["count"].replace(",", "")), n)
        print(f"README says about {figures['count']} tests; {n:,} collected"
              f"{'' if ok else f' (more than {TOLERANCE:.0%} off: run python bench/readme_figures.py)'}")
        return 0 if ok else 1
    took, how = figures["time"], figures["how"]
    if args.run:
        took, how = timed_run()
    elif args.write:
        took, how = args.write, (f"`python -m pytest -n 2 -q` on {os.cpu_count()} cores, recorded with "
                                 f"`python bench/readme_figures.py --write TIME` on {dt.date.today().isoformat()}")
    m = FIGURES.search(text)
    README.write_text(text[:m.start()] + sentence(n, took, how) + text[m.end():])
    print(f"README: {n:,} tests, took {took} (measured by {how})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
