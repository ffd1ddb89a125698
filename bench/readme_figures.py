"""Regenerate README's test-suite figures (how many tests, how long) from the suite itself.

    python bench/readme_figures.py           # count the tests (pytest --collect-only), rewrite README
    python bench/readme_figures.py --run     # also run the suite as README says, record time and load
    python bench/readme_figures.py --check   # exit 1 when README's count is not the collected one

Why: README's "about 740 tests, about a minute" went stale while the suite grew to 1,600; a figure a
command writes cannot drift silently.
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
SENTENCE = re.compile(r"The whole suite \(about [\d,]+ tests\)(?P<rest>.*?)(?= The fast lane)", re.S)


def collected() -> int:
    out = subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q", "-n", "0"], cwd=ROOT,
                         capture_output=True, text=True).stdout
    m = re.search(r"(\d+) tests? collected", out) or re.search(r"^(\d+) tests?", out, re.M)
    if m:
        return int(m.group(1))
    return sum(1 for line in out.splitlines() if "::" in line)


def timed_run() -> str:
    load = os.getloadavg()[0]
    start = time.monotonic()
    subprocess.run([sys.executable, "-m", "pytest", "-n", "2", "-q"], cwd=ROOT)
    took = int(time.monotonic() - start)
    return (f" took {took // 60} min {took % 60} s on this machine ({os.cpu_count()} cores, load {load:.1f} "
            f"at the start, {dt.date.today().isoformat()}, measured by `python bench/readme_figures.py --run`);"
            " expect longer on a machine shared with other jobs.")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--run", action="store_true")
    parser.add_argument("--check", action="store_true")
    args = parser.parse_args()
    text = README.read_text()
    m = SENTENCE.search(text)
    if not m:
        print("README has no 'The whole suite (about N tests)' sentence", file=sys.stderr)
        return 1
    n = collected()
    if args.check:
        return 0 if f"(about {n:,} tests)" in m.group(0) else 1
    rest = timed_run() if args.run else m.group("rest")
    README.write_text(text[:m.start()] + f"The whole suite (about {n:,} tests)" + rest + text[m.end():])
    print(f"README: {n:,} tests" + (f";{rest}" if args.run else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
