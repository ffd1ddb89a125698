"""One hybrid question in a running `kyb mcp`, in-process: the door path (`Tools(Door).query`, what
the stdio server calls, minus the SDK and the pipe) timed per call with a per-stage breakdown, for
checkouts side by side. bench_warm.py times the whole stdio round trip; this says where the time goes.

    KYB_MODEL=… KYB_MODEL_EN=… python bench/bench_door_hybrid.py [--against /work/main] [--n 120] [--stages]
    KYB_MODEL=… KYB_MODEL_EN=/nonexistent python bench/bench_door_hybrid.py --stages   # e5 alone: the 2nd model's cost
    … bench_door_hybrid.py --lexical [--profile /tmp/door]   # the lexical door; cProfile to /tmp/door-<i>.prof
    … bench_door_hybrid.py --lexical --warm-questions --store /tmp/kyb-10k --deadlines --against /tmp/old  # 10k, block on
    python bench/bench_door_hybrid.py --lexical --warm-questions --n 200 --against /tmp/old   # bench_warm's asks
    KYB_MODEL=… KYB_MODEL_EN=… python bench/bench_door_hybrid.py --timeline --warm-questions   # when each step runs

The 108-runbook store of bench_warm.py (built there once; copied here, never written) and its vector
cache (copied per run and per checkout, so no question's vector is cached and the checkouts do not
share one). Each checkout runs in its own child process (PYTHONPATH = the checkout), warmed with 3
calls; every call asks a NEW question: the dev set's (bench/evalset/questions.jsonl, then also.jsonl),
each asked once of every checkout, the checkouts interleaved (alternating who goes first). Prints
p50/p90 per checkout and its CPU per call (all threads: what load does not blur), the stages' p50 (with --stages: wall time inside wrappers of the model runs,
the tokenizer, the vector ranking, fusion, coverage, snippets and the JSON; one model's run is on
another thread, side by side with the other's) and how many answers differ between checkouts (the
whole hits: keys, order, strengths, found_by, snippets; 0 unless the model computation changed).
--timeline prints, per checkout, when each step of a call starts and ends (median ms from the call's
start; `@w` marks a step on a worker thread, `#2` a step's second run in the call): which thread is the
long pole, and what runs after the models end, in order.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
WARM = Path(os.environ.get("KYB_BENCH_DIR", tempfile.gettempdir())) / "kyb-bench-warm"


def _questions(n: int, warm: bool = False, new: bool = False) -> list[str]:
    if warm:  # bench_warm.py's six questions, asked in turn: known (lexical), or `new`, a number appended, as its hybrid
        from bench_warm import QUESTIONS  # bench/ is sys.path[0] of this script

        return [QUESTIONS[i % len(QUESTIONS)] + (f" {i}" if new else "") for i in range(n)]
    out: list[str] = []
    for name in ("questions.jsonl", "also.jsonl"):
        for line in (ROOT / "bench" / "evalset" / name).read_text().splitlines():
            row = json.loads(line)
            for q in [row["query"]] if "query" in row else row.get("also", []):  # also.jsonl: other phrasings
                if q not in out:
                    out.append(q)
    return out[:n]


# --- the child: one checkout's door, answering questions read from stdin ------------------------

class Stages:
    """Wall time per stage of the current call, summed over calls of a stage within it."""

    def __init__(self) -> None:
        self.now: dict[str, float] = {}

    def wrap(self, owner, name: str, label: str) -> None:
        """Time `owner.name` on the main thread, its outermost call only (query_vectors calls itself)."""
        import threading

        fn = getattr(owner, name)
        now, main, inside = self.now, threading.main_thread().ident, set()

        def timed(*a, **k):
            if threading.get_ident() != main or label in inside:
                return fn(*a, **k)
            inside.add(label)
            t0 = time.perf_counter()
            try:
                return fn(*a, **k)
            finally:
                inside.discard(label)
                now[label] = now.get(label, 0.0) + time.perf_counter() - t0

        setattr(owner, name, timed)


def _install(st: Stages) -> None:
    from kyb_cli.api import failure
    from kyb_cli.core import embed
    from kyb_cli.core.embed import embedder
    from kyb_cli.core.search import pipeline, relevance, route, semantic

    st.wrap(embed, "query_vectors", "embed: both models (wall)")
    if hasattr(embed, "finish_query"):  # a door's English question (h38w): e5's run here, the English one beside
        st.wrap(embed, "start_query", "embed: look-ups (both)")
        st.wrap(embed, "finish_query", "embed: e5's run (wall)")
    original = embedder.Embedder._run
    now = st.now

    def run(self, encodings):
        t0 = time.perf_counter()
        try:
            return original(self, encodings)
        finally:
            label = f"onnx+pool {self.path.name}"
            now[label] = now.get(label, 0.0) + time.perf_counter() - t0

    embedder.Embedder._run = run
    orig_embed = embedder.Embedder.embed

    def emb(self, inputs, *a, **k):
        t0 = time.perf_counter()
        try:
            return orig_embed(self, inputs, *a, **k)
        finally:
            label = f"embed() {self.path.name}"
            now[label] = now.get(label, 0.0) + time.perf_counter() - t0

    embedder.Embedder.embed = emb
    if hasattr(embedder.Embedder, "question"):  # a question's own path (h38m): tokenizer to bytes
        orig_question = embedder.Embedder.question

        def question(self, text):
            t0 = time.perf_counter()
            try:
                return orig_question(self, text)
            finally:
                label = f"embed() {self.path.name}"
                now[label] = now.get(label, 0.0) + time.perf_counter() - t0

        embedder.Embedder.question = question
    st.wrap(pipeline, "lexical", "lexical")
    st.wrap(semantic, "nearest", "vector ranking (nearest)")
    for name, label in (("_approximate", "  nearest: matrix product"), ("_exact", "  nearest: exact rescoring"),
                        ("meaning_of", "meaning_of (outside hits)")):
        if hasattr(semantic, name):
            st.wrap(semantic, name, label)
    from kyb_cli.core.search import door_scan

    for name, label in (("scan", "  nearest: door copy scan"), ("centred", "  nearest: centred scores")):
        if hasattr(door_scan, name):  # imported by name when called: the wrapper is what runs
            st.wrap(door_scan, name, label)
    st.wrap(semantic, "pending", "pending count")
    st.wrap(relevance, "calibration", "calibration")
    if hasattr(route, "combine"):
        st.wrap(route, "combine", "route.combine")
    st.wrap(pipeline, "_fused_order", "fusion")
    st.wrap(pipeline, "_coverage", "coverage (relevance)")
    st.wrap(pipeline, "_hits", "hits+grade")
    st.wrap(pipeline, "_snipped", "snippets")
    st.wrap(failure, "answer_text", "json")


# (module, attribute, label) of the steps --timeline follows; a missing one is skipped (older checkouts)
STEPS = [("kyb_cli.core.search.pipeline", "with_index", "with_index"),
         ("kyb_cli.core.embed", "start_query", "look-up"), ("kyb_cli.core.embed", "finish_query", "embed"),
         ("kyb_cli.core.embed.embedder", "Embedder.question", "model run"),
         ("kyb_cli.core.embed", "write_pending", "vector-cache write"),
         ("kyb_cli.core.search.semantic", "semantic_side", "semantic_side"),
         ("kyb_cli.core.search.pipeline", "lexical", "lexical"),
         ("kyb_cli.core.search.pipeline", "_english_side", "_english_side"),
         ("kyb_cli.core.search.route", "combine", "route.combine"),
         ("kyb_cli.core.search.pipeline", "_answer", "_answer"), ("kyb_cli.core.search.pipeline", "_coverage", "coverage"),
         ("kyb_cli.core.search.pipeline", "_fused_order", "fusion"), ("kyb_cli.core.search.pipeline", "_hits", "hits"),
         ("kyb_cli.core.search.pipeline", "_response", "_response"), ("kyb_cli.core.search.pipeline", "_snipped", "snippets"),
         ("kyb_cli.core.index.receipts", "record", "read log"), ("kyb_cli.api.failure", "answer_text", "json")]


def _follow(log: list, start: list) -> None:
    """Wrap STEPS so that each run appends (label, start, end) to `log`, in s from start[0]."""
    import importlib
    import threading

    main = threading.main_thread().ident
    for module, attr, label in STEPS:
        try:
            owner = importlib.import_module(module)
        except ModuleNotFoundError:  # a module an older checkout does not have
            continue
        *path, name = attr.split(".")
        for part in path:
            owner = getattr(owner, part)
        fn = getattr(owner, name, None)
        if fn is None:
            continue

        def timed(*a, _fn=fn, _label=label, **k):
            t0 = time.perf_counter()
            try:
                return _fn(*a, **k)
            finally:
                tag = "" if threading.get_ident() == main else "@w"
                log.append((_label + tag, t0 - start[0], time.perf_counter() - start[0]))

        setattr(owner, name, timed)


def _timeline(rs: list[dict]) -> None:
    """Median start and end of each step over the calls, in order of start."""
    steps: dict[str, list] = {}
    for r in rs:
        seen: dict[str, int] = {}
        for label, a, b in r["timeline"]:
            seen[label] = seen.get(label, 0) + 1
            steps.setdefault(label + (f"#{seen[label]}" if seen[label] > 1 else ""), []).append((a, b))
    rows = [(statistics.median(a for a, _b in xs), statistics.median(b for _a, b in xs),
             statistics.median(b - a for a, b in xs), label, len(xs)) for label, xs in steps.items()]
    for a, b, d, label, n in sorted(rows):
        print(f"    {label:22s} start {a * 1000:6.2f}  end {b * 1000:6.2f}  took {d * 1000:5.2f} ms  ({n} calls)")
    print(f"    {'the call':22s} start   0.00  end {statistics.median(r['ms'] for r in rs):6.2f}")


def child(store: str, stages: bool, semantic: bool = True, profile: str = "", timeline: bool = False) -> None:
    from kyb_cli import api
    from kyb_cli.mcp.server import Door
    from kyb_cli.mcp.tools import Tools

    api.keep_warm()
    tools = Tools(Door(store))
    st = Stages()
    for i, q in enumerate(("postgres replica failover", "where are backups kept", "kafka queue worker retry")):
        tools.query(text=f"{q} warm{i}", semantic=semantic)
    if stages:
        _install(st)
    log: list = []
    start = [0.0]
    if timeline:
        _follow(log, start)
    import kyb_cli

    print(json.dumps({"ready": kyb_cli.__file__}), flush=True)
    prof = None
    if profile:
        import cProfile

        prof = cProfile.Profile()
    for line in sys.stdin:
        q = json.loads(line)
        st.now.clear()
        if prof:
            prof.enable()
        log.clear()
        c0, t0 = time.process_time(), time.perf_counter()
        start[0] = t0
        res = tools.query(text=q, semantic=semantic)
        ms, cpu = (time.perf_counter() - t0) * 1000, (time.process_time() - c0) * 1000
        if prof:
            prof.disable()
        data = res.structured_content or {}
        hits = data.get("hits", [])  # whole hits: keys, order, strengths, found_by, snippets
        print(json.dumps({"ms": ms, "cpu": cpu, "stages": {k: v * 1000 for k, v in st.now.items()}, "hits": hits,
                          "semantic": data.get("semantic"), "timeline": log}), flush=True)
    if prof:
        prof.dump_stats(profile)


# --- the parent ----------------------------------------------------------------------------------

def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--against", action="append", default=[], help="another checkout to time side by side")
    ap.add_argument("--n", type=int, default=120, help="questions (each new to every checkout)")
    ap.add_argument("--stages", action="store_true", help="per-stage breakdown (wrappers cost a few µs)")
    ap.add_argument("--lexical", action="store_true", help="ask lexically (semantic=False): the lexical door")
    ap.add_argument("--warm-questions", action="store_true",
                    help="bench_warm.py's six questions in turn instead of the dev set's (hybrid: a number appended, as it asks)")
    ap.add_argument("--profile", metavar="PREFIX", help="cProfile each checkout's calls to PREFIX-<i>.prof")
    ap.add_argument("--store", help="time this indexed store instead of the runbooks (used as is, never copied:"
                    " copy it first, e.g. a 10k store of bench/gen_store.py)")
    ap.add_argument("--deadlines", action="store_true", help="leave the deadlines block on (a door's default)")
    ap.add_argument("--timeline", action="store_true", help="when each step of a call starts and ends, by thread")
    ap.add_argument("--child", help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.child:
        return child(a.child, a.stages, not a.lexical, a.profile or "", a.timeline)
    src = WARM / "store-108"
    if not a.store and not (src / ".kyb-bench-done").exists():
        raise SystemExit(f"no {src}: run bench/bench_warm.py once (it builds the 108-runbook store)")
    work = Path(tempfile.mkdtemp(prefix="kyb-door-hybrid-"))
    checkouts = [ROOT, *(Path(p).resolve() for p in a.against)]
    procs = []
    try:
        for i, co in enumerate(checkouts):
            store = Path(a.store) if a.store else work / f"store-{i}"
            if not a.store:  # a live reader's -wal/-shm come and go (another bench): the index catches up from Git
                shutil.copytree(src, store, symlinks=True, ignore=shutil.ignore_patterns("*-wal", "*-shm", "*.lock"))
            home = work / f"home-{i}"
            (home / "cache").mkdir(parents=True)
            if (WARM / "home" / "cache" / "kyb").is_dir():
                shutil.copytree(WARM / "home" / "cache" / "kyb", home / "cache" / "kyb",
                                ignore=shutil.ignore_patterns("run", "*.sock*"))
            env = {k: v for k, v in os.environ.items() if k not in ("KYB_STORE", "KYB_SERVE_TOKEN")}
            env.update(PYTHONPATH=str(co), HOME=str(home), XDG_CACHE_HOME=str(home / "cache"),
                       XDG_DATA_HOME=str(home / "data"), XDG_CONFIG_HOME=str(home / "config"),
                       KYB_DEADLINES="on" if a.deadlines else "off", KYB_BACKGROUND="off", KYB_FSYNC="off")
            cmd = [sys.executable, str(ROOT / "bench" / "bench_door_hybrid.py"), "--child", str(store)]
            cmd += (["--stages"] if a.stages else []) + (["--lexical"] if a.lexical else [])
            cmd += ["--timeline"] if a.timeline else []
            cmd += [f"--profile={a.profile}-{i}.prof"] if a.profile else []
            p = subprocess.Popen(cmd, env=env, text=True,
                                 stdin=subprocess.PIPE, stdout=subprocess.PIPE)
            procs.append(p)
        for co, p in zip(checkouts, procs):
            print(f"{co}: {json.loads(p.stdout.readline())['ready']}", flush=True)
        print("load average:", " ".join(open("/proc/loadavg").read().split()[:3]), flush=True)
        results: list[list[dict]] = [[] for _ in procs]
        for j, q in enumerate(_questions(a.n, a.warm_questions, not a.lexical)):
            order = list(range(len(procs)))
            if j % 2:
                order.reverse()
            for i in order:
                procs[i].stdin.write(json.dumps(q) + "\n")
                procs[i].stdin.flush()
                results[i].append(json.loads(procs[i].stdout.readline()))
        for co, rs in zip(checkouts, results):
            ms = sorted(r["ms"] for r in rs)
            cpu = statistics.median(r["cpu"] for r in rs)
            print(f"{co}: door {'lexical' if a.lexical else 'hybrid'} p50 {statistics.median(ms):.2f} ms  p90 {ms[int(len(ms) * 0.9)]:.2f} ms"
                  f"  CPU/call p50 {cpu:.2f} ms (all threads)"
                  f"  ({len(ms)} questions, semantic {any(r['semantic'] for r in rs)})")
            if a.stages:
                names = sorted({k for r in rs for k in r["stages"]})
                for name in names:
                    xs = [r["stages"].get(name, 0.0) for r in rs]
                    print(f"    {name:28s} p50 {statistics.median(xs):6.2f} ms  mean {statistics.mean(xs):6.2f} ms")
            if a.timeline:
                _timeline(rs)
        for i in range(1, len(results)):
            diff = sum(1 for x, y in zip(results[0], results[i]) if x["hits"] != y["hits"])
            print(f"answers differing {checkouts[0].name} vs {checkouts[i].name}: {diff} of {len(results[0])}")
            # the same question asked of both one after the other: a burst of load counts on both sides
            paired = sorted(x["ms"] - y["ms"] for x, y in zip(results[0], results[i]))
            ratio = statistics.median(x["ms"] / y["ms"] for x, y in zip(results[0], results[i]))
            print(f"paired {checkouts[0].name} - {checkouts[i].name}: median {statistics.median(paired):+.2f} ms"
                  f" (quartiles {paired[len(paired) // 4]:+.2f} / {paired[3 * len(paired) // 4]:+.2f}),"
                  f" median ratio {ratio:.3f}")
        print("load average:", " ".join(open("/proc/loadavg").read().split()[:3]))
    finally:
        for p in procs:
            p.stdin.close()
            p.wait()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
