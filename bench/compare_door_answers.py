"""The door's whole lexical answers of two checkouts compared: every question of bench_warm.py and the
dev set, in several time modes (current, history, as_of, changed_between, explain, full, a limit), each
asked twice in one process (the second from whatever a door keeps warm), on copies of the 108-runbook
store. Prints how many answers differ (0: a speed change kept every answer; a read note's `read_at`,
a clock time, is left out) and the fields where the first three differ.

    python bench/compare_door_answers.py --against /tmp/old-checkout [--n 30] [--store /tmp/kyb-10k] [--deadlines]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
MODES = [{}, {"history": True}, {"as_of": "HEAD~20"}, {"changed_between": ["HEAD~40", "HEAD"]},
         {"explain": True}, {"full": True}, {"limit": 3}, {"min_strength": "strong"}]


def child(store: str, questions: list[str]) -> None:
    from kyb_cli import api
    from kyb_cli.mcp.server import Door
    from kyb_cli.mcp.tools import Tools

    api.keep_warm()
    tools = Tools(Door(store))
    out = []
    for _round in range(2):
        for q in questions:
            for mode in MODES:
                data = dict(tools.query(text=q, semantic=False, **mode).structured_content or {})
                out.append(data)
    print(json.dumps(out))


def _runbook_questions(n: int) -> list[str]:
    """Two words of a runbook's name and a third from the next one's ("rollout postgres metrics"): words
    the runbooks hold (the dev set's questions are of another corpus and find nothing here)."""
    from bench.bench_door_hybrid import WARM

    names = sorted(p.stem.split("-")[1:] for p in (WARM / "notes-108").rglob("*.md"))
    return [" ".join([*names[i][:2], names[(i + 1) % len(names)][0]]) for i in range(0, len(names), 4)][:n]


def main() -> None:
    from bench.bench_door_hybrid import WARM
    from bench.bench_warm import QUESTIONS

    ap = argparse.ArgumentParser()
    ap.add_argument("--against", required=True)
    ap.add_argument("--n", type=int, default=24, help="questions from the runbooks' names besides bench_warm's six")
    ap.add_argument("--store", type=Path, help="compare on this store instead (copied per checkout, never written)")
    ap.add_argument("--deadlines", action="store_true", help="leave the deadlines block on (a door's default)")
    ap.add_argument("--child", help=argparse.SUPPRESS)
    a = ap.parse_args()
    questions = QUESTIONS + _runbook_questions(a.n)
    if a.child:
        return child(a.child, questions)
    work = Path(tempfile.mkdtemp(prefix="kyb-compare-"))
    answers = []
    try:
        for i, co in enumerate((ROOT, Path(a.against).resolve())):
            store = work / f"store-{i}"
            shutil.copytree(a.store.resolve() if a.store else WARM / "store-108", store, symlinks=True,
                            ignore=shutil.ignore_patterns("*-wal", "*-shm", "*.lock"))
            home = work / f"home-{i}"
            env = {k: v for k, v in os.environ.items() if k not in ("KYB_STORE", "KYB_SERVE_TOKEN")}
            env.update(PYTHONPATH=f"{co}:{ROOT}", HOME=str(home), XDG_CACHE_HOME=str(home / "cache"),
                       XDG_DATA_HOME=str(home / "data"), XDG_CONFIG_HOME=str(home / "config"),
                       KYB_DEADLINES="on" if a.deadlines else "off", KYB_BACKGROUND="off", KYB_FSYNC="off",
                       KYB_MODEL="/nonexistent")
            res = subprocess.run([sys.executable, __file__, "--child", str(store), "--against", a.against,
                                  "--n", str(a.n)], env=env, capture_output=True, text=True, check=True)
            answers.append(json.loads(res.stdout))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    mine, theirs = (_untimed(a) for a in answers)
    differ = [i for i, (x, y) in enumerate(zip(mine, theirs)) if x != y]
    hits = sum(len(x.get("hits", ())) for x in mine)
    per_mode = [sum(len(x.get("hits", ())) for x in mine[m::len(MODES)]) for m in range(len(MODES))]
    print("hits per mode:", dict(zip((json.dumps(m) for m in MODES), per_mode)))
    print(f"{len(mine)} answers ({len(questions)} questions x {len(MODES)} modes x 2 rounds, {hits} hits): "
          f"{len(differ)} differ")
    for i in differ[:3]:  # where they differ: each differing leaf (path, this checkout's, the other's)
        x, y = dict(_leaves(mine[i])), dict(_leaves(theirs[i]))
        at = [(k, x.get(k), y.get(k)) for k in sorted(set(x) | set(y)) if x.get(k) != y.get(k)]
        print(f"answer {i} ({questions[i // len(MODES) % len(questions)]!r}, {json.dumps(MODES[i % len(MODES)])}):"
              f" {len(at)} fields differ, e.g. {at[:4]}")


def _untimed(answers: list[dict]) -> list[dict]:
    """`answers` without `changed_since_your_read.read_at`: when this run's first round read a key, a
    clock time (the checkouts run one after the other), never the same twice; the rest of the note is
    compared."""
    def strip(value):
        if isinstance(value, dict):
            out = {k: strip(v) for k, v in value.items()}
            note = out.get("changed_since_your_read")
            if isinstance(note, dict):
                note.pop("read_at", None)
            return out
        if isinstance(value, list):
            return [strip(v) for v in value]
        return value

    return [strip(a) for a in answers]


def _leaves(value, path: str = ""):
    """(path, value) of every leaf of a JSON value: `hits[0].key`."""
    if isinstance(value, dict):
        for k, v in value.items():
            yield from _leaves(v, f"{path}.{k}" if path else k)
    elif isinstance(value, list):
        for n, v in enumerate(value):
            yield from _leaves(v, f"{path}[{n}]")
    else:
        yield path, value


if __name__ == "__main__":
    main()
