"""`kyb import` speed: N Markdown documents (a notes folder) into a new store, then the first query.

Targets (issue "kyb import"): 108 documents <= 1 s; 10,000 documents <= 30 s on 2 cores; the first
query right after <= 2 s. Each run is a separate `python -m kyb_cli` process, start to exit, as a
user runs it. The machine's load average is printed next to the figures.

    python bench/bench_import.py                   # 108 and 10,000 documents
    python bench/bench_import.py --docs 108 --one-commit
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
WORDS = ("checkout orders payments billing gateway cache redis postgres kafka deploy rollout terraform "
         "helm ingress latency timeout retry queue worker cron backup replica shard index migration "
         "schema token auth session webhook metrics alert pager oncall runbook restart drain").split()


def make_notes(folder: Path, n: int, seed: int = 7) -> None:
    """A notes folder as people keep one: runbooks with YAML or TOML front matter, headings only, ADRs."""
    rng = random.Random(seed)
    for i in range(n):
        sub = folder / ("runbooks", "decisions", "notes", "incidents")[i % 4]
        sub.mkdir(parents=True, exist_ok=True)
        words = " ".join(rng.choice(WORDS) for _ in range(rng.randint(80, 260)))
        title = f"{rng.choice(WORDS).capitalize()} {rng.choice(WORDS)} {i}"
        if i % 3 == 0:
            text = f"---\ntitle: {title}\ntags: [{rng.choice(WORDS)}, ops]\n---\n\n{words}\n"
        elif i % 3 == 1:
            text = f"+++\ntitle = \"{title}\"\n+++\n\n{words}\n"
        else:
            status = rng.choice(("Accepted", "Proposed", "Superseded", "Accepted"))
            text = f"# {title}\n\nStatus: {status}\n\n## Context\n\n{words}\n"
        (sub / f"{i:05d}-{title.lower().replace(' ', '-')}.md").write_text(text)


def run(args: list[str], env: dict) -> tuple[float, str]:
    t = time.perf_counter()
    res = subprocess.run([sys.executable, "-m", "kyb_cli", *args], env=env, capture_output=True, text=True)
    took = time.perf_counter() - t
    if res.returncode != 0:
        raise SystemExit(f"kyb {' '.join(args)} failed: {res.stderr.strip()}")
    return took, res.stdout


def bench(n: int, one_commit: bool, tmp: Path, env: dict) -> dict:
    notes, store = tmp / f"notes-{n}", tmp / f"store-{n}{'-one' if one_commit else ''}"
    if not notes.exists():
        make_notes(notes, n)
    shutil.rmtree(store, ignore_errors=True)
    run(["init", str(store)], env)
    extra = ["--one-commit"] if one_commit else []
    took, out = run(["--store", str(store), "import", str(notes), *extra], env)
    reply = json.loads(out)
    q, _ = run(["--store", str(store), "query", "postgres replica", "--no-semantic"], env)
    again, out2 = run(["--store", str(store), "import", str(notes)], env)
    return {"docs": n, "one_commit": one_commit, "import_s": round(took, 2), "created": len(reply["created"]),
            "commits": reply["commits"], "first_query_s": round(q, 2), "reimport_unchanged_s": round(again, 2),
            "reimport_commits": json.loads(out2)["commits"]}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--docs", type=int, action="append", help="document counts (default 108 and 10000)")
    ap.add_argument("--one-commit", action="store_true")
    ap.add_argument("--fsync", action="store_true", help="keep KYB_FSYNC on (the default for users)")
    a = ap.parse_args()
    env = dict(os.environ, PYTHONPATH=str(ROOT), KYB_OUTPUT="json", GIT_AUTHOR_NAME="bench",
               GIT_AUTHOR_EMAIL="bench@kyb.invalid")
    env.pop("KYB_STORE", None)
    if not a.fsync:
        env["KYB_FSYNC"] = "off"
    tmp = Path(os.environ.get("KYB_BENCH_DIR", tempfile.gettempdir())) / "kyb-bench-import"
    tmp.mkdir(parents=True, exist_ok=True)
    env["HOME"] = str(tmp / "home")
    print("load average:", " ".join(open("/proc/loadavg").read().split()[:3]), "| cpus:", os.cpu_count(),
          "| fsync:", "on" if a.fsync else "off")
    for n in a.docs or [108, 10000]:
        print(json.dumps(bench(n, a.one_commit, tmp, env)), flush=True)
    print("load average:", " ".join(open("/proc/loadavg").read().split()[:3]))


if __name__ == "__main__":
    main()
