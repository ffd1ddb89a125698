"""A generated file committed to the repository: whether it is stale, and the command line every
generator of one shares (`--check` exits 1 when stale; otherwise write it). gen_api_docs and
gen_reference are made of their `generate()` and this."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Callable


def stale(root: Path, target: str, generate: Callable[[], str]) -> bool:
    """True when `root/target` is missing or differs from what `generate()` makes now."""
    path = root / target
    return not path.is_file() or path.read_text(encoding="utf-8") != generate()


def main(argv: list[str] | None, *, target: str, generate: Callable[[], str], regenerate: str,
         description: str, root: Path) -> int:
    parser = argparse.ArgumentParser(prog=regenerate, description=description)
    parser.add_argument("--check", action="store_true", help=f"only report whether {target} is stale (exit 1)")
    parser.add_argument("--root", type=Path, default=root, help="project root (default: this checkout)")
    args = parser.parse_args(argv)
    if args.check:
        if stale(args.root, target, generate):
            print(f"stale: {target}; regenerate with: {regenerate}", file=sys.stderr)
            return 1
        return 0
    (args.root / target).write_text(generate(), encoding="utf-8")
    print(f"wrote {target}")
    return 0
