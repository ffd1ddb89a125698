"""The prompt hook on the dev set (issue 43): what `kyb recall --hook-json` injects, and how fast.

    python bench/bench_recall.py [--timing N] [--store PATH] [--json out.json]

Each dev-set question (bench/evalset/questions.jsonl, 484: on-topic kinds and 47 off-topic) becomes
a request a person would type to an agent by REQUESTS below: one frame per question, picked by a
hash of its id, wrapped around the question's own text. The frames were written before any run of
this bench, from how people phrase requests to a coding agent (ask to look into, to fix, to change,
to explain), without reading any document or result, and are not to be tuned on its figures.

Recall runs as the hook runs it: words only (semantic off), strong hits that clear the hook's bar
(core/tools/recall.py HOOK_COVER, HOOK_LEAD, chosen on the `fit` half; `--split check` reports on the
other half alone), at most 3. Reported:
- precision of what is injected: injected records that are a question's relevant record, over all
  injected records (target >= 0.90); and per prompt, the share whose injection holds a relevant one;
- injection rate on on-topic prompts (how often the hook speaks up) and on off-topic prompts (target
  <= 0.05);
- the hook's wall time from a cold process (`python -m kyb_cli recall --hook-json`, stdin to exit),
  p50/p95 over N prompts, on the dev-set store or on `--store` (bench/gen_store.py 10000 for the 10k
  figure); budget misses (nothing printed, `no answer within`) are counted.

Figures (2026-12-06, 2 shared cores, no model), request words left out and HOOK_COVER 0.65: injected-
record precision 0.93 (128 records; fit 0.94, check 0.92), on-topic prompts answered 0.28, off-topic
injections 0 of 47; `--frames b`: 0.88 (92 records), answered 0.20, off-topic 0. Before (cover 0.60, the
prompt as typed): 0.908 and 0.213 (frames b: 0.895, 0.17). Cold hook, 40 runs: dev-set store (176
records) p50 131 ms, p95 144 ms; bench/gen_store.py 10000 store p50 128 ms, p95 163 ms, no budget miss.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))
import eval_devset  # noqa: E402
from evalset import checks  # noqa: E402

# Written before the first run; `{q}` is the question as the dev set has it (trailing ? or . kept).
REQUESTS = (
    "{q}",
    "can you look into this: {q}",
    "{q} please check and fix it",
    "I'm on call and {q}",
    "before you change anything — {q}",
    "quick question: {q}",
    "we need to handle this today: {q} what should I do?",
    "help me with this. {q}",
)


# A second set, written (2026-12-06, before any run with it) to validate a change made after the first
# set's figures were known: other people's ways of asking, none of the first set's frames.
REQUESTS_B = (
    "{q} — can you sort this out?",
    "please update whatever is needed: {q}",
    "my ticket says: {q}",
    "could you switch it so that {q}",
    "{q}. fix it please",
    "hey, {q}",
    "need a hand: {q}",
    "let's deal with this now — {q}",
)
FRAMES = {"a": REQUESTS, "b": REQUESTS_B}


def request_of(question: dict, frames: tuple[str, ...] = REQUESTS) -> str:
    pick = int(hashlib.sha256(question["id"].encode()).hexdigest(), 16) % len(frames)
    return frames[pick].format(q=question["query"].strip())


def quality(store: Path, questions: list[dict], frames: tuple[str, ...] = REQUESTS) -> dict:
    from kyb_cli import api

    injected = relevant_injected = prompts_on = spoke_on = right_on = prompts_off = spoke_off = 0
    rows = []
    for q in questions:
        text = request_of(q, frames)
        answer = api.recall(str(store), text, hook_bar=True)  # what the hook injects
        keys = [h["key"] for h in answer["hits"]]
        off = q["kind"] == "off_topic"
        rows.append({"id": q["id"], "kind": q["kind"], "request": text, "injected": keys, "relevant": q["relevant"]})
        if off:
            prompts_off += 1
            spoke_off += bool(keys)
            injected += len(keys)  # anything injected for an off-topic prompt is wrong
            continue
        prompts_on += 1
        spoke_on += bool(keys)
        right_on += any(k in q["relevant"] for k in keys)
        injected += len(keys)
        relevant_injected += sum(k in q["relevant"] for k in keys)
    spoke = spoke_on + spoke_off
    return {
        "prompts_on_topic": prompts_on, "prompts_off_topic": prompts_off,
        "records_injected": injected,
        "precision_records": round(relevant_injected / injected, 3) if injected else None,
        "precision_prompts": round(right_on / spoke, 3) if spoke else None,
        "on_topic_injection_rate": round(spoke_on / prompts_on, 3) if prompts_on else None,
        "on_topic_right_record_rate": round(right_on / prompts_on, 3) if prompts_on else None,
        "off_topic_injection_rate": round(spoke_off / prompts_off, 3) if prompts_off else None,
        "rows": rows,
    }


def timing(store: Path, prompts: list[str], env: dict[str, str]) -> dict:
    times, misses = [], 0
    for i, prompt in enumerate(prompts):
        given = json.dumps({"prompt": prompt, "session_id": f"bench-{os.getpid()}-{i}",
                            "hook_event_name": "UserPromptSubmit", "cwd": str(store)})
        t0 = time.perf_counter()
        proc = subprocess.run([sys.executable, "-m", "kyb_cli", "recall", "--hook-json"], input=given,
                              capture_output=True, text=True, env={**env, "KYB_STORE": str(store)})
        times.append((time.perf_counter() - t0) * 1000)
        if proc.returncode != 0:
            sys.exit(f"bench_recall: the hook exited {proc.returncode}: {proc.stderr}")
        misses += "no answer within" in proc.stderr
    times.sort()
    return {"runs": len(times), "p50_ms": round(statistics.median(times), 1),
            "p95_ms": round(times[max(0, int(len(times) * 0.95) - 1)], 1), "max_ms": round(times[-1], 1),
            "budget_misses": misses}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--timing", type=int, default=40, help="cold-process hook runs to time (0: none)")
    ap.add_argument("--store", type=Path, help="time the hook on this store instead of the dev-set store")
    ap.add_argument("--split", choices=("all", "fit", "check"), default="all",
                    help="only one half of the questions (fixed by id, as eval_devset.py splits them)")
    ap.add_argument("--json", type=Path, help="write the figures and every prompt's injection here")
    ap.add_argument("--frames", choices=tuple(FRAMES), default="a", help="a: REQUESTS; b: REQUESTS_B (validation)")
    args = ap.parse_args()
    docs, questions = checks.load(checks.DOCS), checks.load(checks.QUESTIONS)
    if args.split != "all":
        questions = [q for q in questions if checks.split_of(q) == args.split]
    store, _took = eval_devset.prepare(docs, rebuild=False, embed=False)
    os.environ.pop("KYB_MODEL", None)  # the hook searches by words; no model is loaded
    report = quality(store, questions, FRAMES[args.frames])
    if args.timing:
        target = args.store or store
        env = {k: v for k, v in os.environ.items() if k != "KYB_MODEL"}
        env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
        subprocess.run([sys.executable, "-m", "kyb_cli", "query", "warm", "--store", str(target)],
                       capture_output=True, env=env)  # the index is brought to HEAD before timing
        prompts = [request_of(q) for q in questions][:: max(1, len(questions) // args.timing)][:args.timing]
        report["timing"] = {"store": str(target), **timing(target, prompts, env)}
    shown = {k: v for k, v in report.items() if k != "rows"}
    print(json.dumps(shown, indent=2))
    if args.json:
        args.json.write_text(json.dumps(report, indent=2, ensure_ascii=False))


if __name__ == "__main__":
    main()
