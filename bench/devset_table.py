"""docs/SEARCH.md's tables from bench/eval_devset.py result files: top-3 per kind and mode, on all
questions and on the fit / check halves (the split is fixed by question id), and the confident rates.

    python bench/eval_devset.py --modes lexical,vectors,hybrid,also --json both.json
    python bench/eval_devset.py --modes vectors,hybrid --e5-only --json e5.json
    python bench/devset_table.py both.json [e5.json]

A second file's columns are added with the prefix "e5 " (the product without the English model).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from evalset import checks  # noqa: E402


def load(path: str, prefix: str = "") -> tuple[list[str], dict]:
    data = json.loads(Path(path).read_text(encoding="utf-8"))
    rows = {r["id"]: r for r in data["questions"]}
    # a row's "also" is its list of other phrasings; the mode's answer is a dict
    modes = [m for m in ("lexical", "vectors", "hybrid", "also") if all(isinstance(r.get(m), dict) for r in rows.values())]
    return [prefix + m for m in modes], {i: {prefix + m: r[m] for m in modes} | {"row": r} for i, r in rows.items()}


def rate(sel: list[dict], mode: str, test) -> str:
    return f"{sum(1 for r in sel if test(r[mode])) / len(sel):.2f}" if sel else "-"


def main() -> None:
    modes, rows = load(sys.argv[1])
    if len(sys.argv) > 2:
        more, extra = load(sys.argv[2], "e5 ")
        modes += more
        for i, r in extra.items():
            rows.setdefault(i, {}).update({k: v for k, v in r.items() if k != "row"})
    halves = {"all": lambda q: True, "fit": lambda q: checks.split_of(q) == "fit",
              "check": lambda q: checks.split_of(q) == "check"}
    print("| kind (n all / fit / check) | " + " | ".join(modes) + " |")
    print("|---|" + "---|" * len(modes))
    for kind in [k for k in checks.KINDS if k != "off_topic"]:
        parts = {h: [r for r in rows.values() if r["row"]["kind"] == kind and f(r["row"])] for h, f in halves.items()}
        n = " / ".join(str(len(v)) for v in parts.values())
        cells = [" / ".join(rate(parts[h], m, lambda x: (x["rank"] or 99) <= 3) for h in halves) for m in modes]
        if kind == "identifier":
            cells = [c + " (top-1 " + rate(parts["all"], m, lambda x: x["rank"] == 1) + ")" for c, m in zip(cells, modes)]
        print(f"| {kind} ({n}) | " + " | ".join(cells) + " |")
    for label, on_topic, want in (("on-topic confident: true", True, True), ("off-topic confident: false", False, False)):
        parts = {h: [r for r in rows.values() if (r["row"]["kind"] != "off_topic") == on_topic and f(r["row"])]
                 for h, f in halves.items()}
        n = " / ".join(str(len(v)) for v in parts.values())
        cells = [" / ".join(rate(parts[h], m, lambda x: x.get("confident") is want) for h in halves)
                 for m in modes if m.split()[-1] != "lexical" or True]
        print(f"| {label} ({n}) | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
