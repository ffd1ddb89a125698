"""Warm answers: one query's cost inside a running `kyb mcp` (stdio) and `kyb serve` (GET /search, POST
/mcp), lexical and hybrid with an uncached question, and `kyb query`'s CPU against `python -c pass`.

    KYB_MODEL=../shared/models/multilingual-e5-small python bench/bench_warm.py [--keys 10000] [--runs 30]
    python bench/bench_warm.py --keys 0 --skip warm --large /tmp/kyb-1k --large /tmp/kyb-10k   # the CLI floor
    KYB_MODEL=… KYB_MODEL_EN=… python bench/bench_warm.py --keys 0 --runs 20 --skip cli --skip serve  # `kyb mcp` alone
    KYB_MODEL=… KYB_MODEL_EN=… python bench/bench_warm.py --keys 0 --large /tmp/kyb-10k --random-vectors --skip cli
    python bench/bench_warm.py --keys 0 --large /tmp/kyb-10k --bytes-only   # bytes of a 10-hit answer only
    KYB_MODEL=… KYB_MODEL_EN=… python bench/bench_warm.py --keys 0 --large /tmp/kyb-10k --deadlines  # as users run them

Corpus: 108 runbooks (bench/bench_import.py's notes folder, `kyb import`ed, every version embedded),
plus a generated store of --keys keys (bench/gen_store.py; vectors may be pending there: hybrid then
searches what is embedded; the background filler is off so it does not embed meanwhile). Each server is started once, initialized, warmed
with each of the six questions asked once of each kind (their words' postings read: search/bm25.py), then answers --runs calls per kind, lexical and hybrid interleaved, the
doors of a server taking turns --block calls at a time (time_doors; each server alone unless
--side-by-side); every call is timed
from writing the request to reading the whole reply (p50 in ms). Every hybrid call asks a new text
(a number appended), so the question's vector is never cached. The CLI part measures CPU (user+sys of
the child) over --cli-runs runs of `kyb query … --no-semantic` and of `python -c pass`, alternating,
bytecode cached and the deadlines block on, as a user runs it: the `kyb` console script of a wheel of
this checkout installed NON-editable in a venv of its own (built once per source hash under the bench
dir), against that venv's python. The repo's .venv would flatter the ratio: its editable install's
.pth imports pathlib and urllib in every `python -c pass` there. It also prints the bytes of a 10-hit
lexical answer without bodies (the default) and with them (--full). Server CPU per call (p50, and the mean) is read from
/proc schedstat (all threads, ns), which a loaded machine does not blur as it does wall time; a
server embeds its questions itself (embed.resident), so its CPU per hybrid call includes the models'
runs (with a helper, they were the helper's CPU, outside this figure); its two models run side by
side on two threads, so a hybrid call's CPU is its wall plus the shorter model's run. Targets
(issue 27): lexical <= 3 ms, hybrid <= 15 ms at 108 runbooks, <= 2x that at 10k keys; CLI <= 4x.
First it prints the models' floor: the same hybrid texts embedded in-process by the models alone,
side by side as a door runs them (model_floor), and at the end the floor again (a shared host's
speed moves within a run) and each door's hybrid p50 above the first.
The doors run with KYB_DEADLINES=off unless --deadlines: a user's doors add the deadlines block to
every query answer (~1.8 ms at 10k keys, docs/BENCHMARKS.md), the CLI part always has it on.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
BASE = Path(os.environ.get("KYB_BENCH_DIR", tempfile.gettempdir())) / "kyb-bench-warm"
QUESTIONS = ["postgres replica failover", "checkout latency timeout", "where are backups kept",
             "rollback of the helm release", "kafka queue worker retry", "ingress token auth session"]


def new_words(i: int) -> str:
    """The i-th two-word question made of QUESTIONS' words, never the same twice in a run (up to 18x17
    questions, n x (n - 1) of them for n words): a lexical question a door has not answered yet (its
    known answers, search/known.py, serve a repeated one), of words the stores hold."""
    words = sorted({w for q in QUESTIONS for w in q.split() if len(w) > 3})
    n = len(words)
    return f"{words[i % n]} {words[(i // n + 1 + i) % n]}"


def kyb(args: list[str], env: dict, check: bool = True) -> subprocess.CompletedProcess:
    res = subprocess.run([sys.executable, "-m", "kyb_cli", *args], env=env, capture_output=True, text=True)
    if check and res.returncode != 0:
        raise SystemExit(f"kyb {' '.join(args)} failed: {res.stderr.strip()}")
    return res


def runbooks(env: dict) -> Path:
    """The 108-runbook store, built once (import + embed) and reused."""
    from bench.bench_import import make_notes

    store = BASE / "store-108"
    if (store / ".kyb-bench-done").exists():
        return store
    shutil.rmtree(store, ignore_errors=True)
    notes = BASE / "notes-108"
    if not notes.exists():
        make_notes(notes, 108)
    kyb(["init", str(store)], env)
    kyb(["--store", str(store), "import", str(notes)], env)
    kyb(["--store", str(store), "index", "--embed"], env)
    (store / ".kyb-bench-done").write_text("ok")
    return store


def generated(keys: int) -> Path:
    out = subprocess.run([sys.executable, str(ROOT / "bench" / "gen_store.py"), str(keys)],
                         capture_output=True, text=True, check=True).stdout
    return Path(json.loads(out.strip().splitlines()[-1])["path"])


def random_vectors(store: Path, env: dict) -> int:
    """Give every passage of `store` still without one a random unit vector (seeded) under each model
    found here: a door's hybrid answer timed at 10k keys without hours of embedding. What a ranking
    costs does not depend on the vectors' values (the question's vector is the model's own); a store
    filled this way says nothing of quality and is never used for a quality figure."""
    code = (
        "import sys, numpy as np\n"
        "from kyb_cli.core import embed\n"
        "from kyb_cli.core.index import vectors\n"
        "from kyb_cli.core.index.fresh import with_index\n"
        "def run(f):\n"
        "    n = 0\n"
        "    for spec, fp, _loc in embed.available()[0]:\n"
        "        rows = [r[0] for r in f.conn.execute('SELECT DISTINCT text_sha FROM vtext t WHERE NOT EXISTS '\n"
        "                '(SELECT 1 FROM vectors x WHERE x.text_sha = t.text_sha AND x.fingerprint = ?)', (fp,))]\n"
        "        m = np.random.default_rng(1).standard_normal((len(rows), spec.dim)).astype(np.float32)\n"
        "        m /= np.linalg.norm(m, axis=1, keepdims=True)\n"
        "        vectors.store(f.conn, fp, {h: m[i].tobytes() for i, h in enumerate(rows)}, spec)\n"
        "        n += len(rows)\n"
        "    return n\n"
        f"print(with_index({str(store)!r}, run))\n")
    res = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    return int(res.stdout.strip().splitlines()[-1])


def _p50(xs: list[float]) -> float:
    return round(statistics.median(xs) * 1000, 2)


class Stdio:
    """`kyb mcp` over stdio, spoken to in raw JSON-RPC lines (no client library in the timing)."""

    def __init__(self, store: Path, env: dict, cwd: Path | None = None) -> None:
        self.proc = subprocess.Popen([sys.executable, "-m", "kyb_cli", "mcp", "--store", str(store)], env=env,
                                     cwd=cwd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.DEVNULL)
        self.n = 0
        self.rpc("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                                "clientInfo": {"name": "bench", "version": "0"}})
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def send(self, msg: dict) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(msg).encode() + b"\n")
        self.proc.stdin.flush()

    def rpc(self, method: str, params: dict) -> dict:
        self.n += 1
        self.send({"jsonrpc": "2.0", "id": self.n, "method": method, "params": params})
        assert self.proc.stdout is not None
        while True:
            reply = json.loads(self.proc.stdout.readline())
            if reply.get("id") == self.n:
                return reply

    def query(self, text: str, semantic: bool) -> dict:
        reply = self.rpc("tools/call", {"name": "query", "arguments": {"text": text, "semantic": semantic}})
        return reply["result"]["structuredContent"]

    def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        self.proc.wait(10)


class Http:
    """`kyb serve`: GET /search and POST /mcp over one keep-alive connection."""

    def __init__(self, store: Path, env: dict) -> None:
        from tests.support.serve_proc import Served

        self.server = Served.start(store, env=env, timeout=600)
        self.conn = http.client.HTTPConnection("127.0.0.1", self.server.port, timeout=600)
        self.n = 0

    def _do(self, method: str, path: str, body: bytes | None = None, headers: dict | None = None) -> bytes:
        self.conn.request(method, path, body=body, headers={"Host": f"localhost:{self.server.port}", **(headers or {})})
        resp = self.conn.getresponse()
        raw = resp.read()
        if resp.status != 200:
            raise SystemExit(f"{method} {path}: {resp.status} {raw[:300]!r}")
        return raw

    def search(self, text: str, semantic: bool) -> dict:
        from urllib.parse import quote

        return json.loads(self._do("GET", f"/search?q={quote(text)}&semantic={'true' if semantic else 'false'}"))

    def mcp(self, text: str, semantic: bool) -> dict:
        self.n += 1
        body = json.dumps({"jsonrpc": "2.0", "id": self.n, "method": "tools/call",
                           "params": {"name": "query", "arguments": {"text": text, "semantic": semantic}}}).encode()
        raw = self._do("POST", "/mcp", body, {"Content-Type": "application/json",
                                               "Accept": "application/json, text/event-stream"})
        return json.loads(raw)["result"]["structuredContent"]

    def close(self) -> None:
        self.conn.close()
        self.server.stop()


def cpu_of(pid: int) -> float:
    """CPU seconds a process has used so far, all its threads, to the nanosecond (schedstat), so one
    call's CPU is measured even while a loaded machine makes its wall time meaningless; clock ticks
    (10 ms) where schedstat is missing."""
    try:
        return sum(int(open(f"/proc/{pid}/task/{t}/schedstat").read().split()[0])
                   for t in os.listdir(f"/proc/{pid}/task")) / 1e9
    except (OSError, ValueError, IndexError):
        fields = open(f"/proc/{pid}/stat").read().rpartition(")")[2].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def time_doors(doors: dict, runs: int, block: int = 10) -> dict:
    """Per door ({name: (ask, server pid, tag)}): p50 of lexical and of hybrid (uncached question)
    calls, and the server's CPU per call, p50 and mean (load-proof where wall time is not: the
    machine is shared). The doors take turns, their order rotating each round, so a swing of the
    machine's load lands on all of them (timed one door after another, a busy minute of another
    job showed as one door's wall 12-22 ms above its CPU at 10k keys); a turn is `block` calls of
    one door, as a door serving one agent sees them: taking turns call by call, every hybrid call
    followed another server's (two resident processes' models and threads, one after the other),
    which raised a 10k hybrid call's server CPU from ~26 to ~44 ms (load 0.1-2, 2026-12-06) and is
    not what a running `kyb mcp` pays (`--block 1` measures it). Every one of the six questions is asked once of each kind
    first: a door reads a word's postings the first time a question holds it (search/bm25.py, ~4 ms
    a common word at 10k keys, on the answering thread), and with half of them cold the first
    round's three calls (~40 ms each) made the mean CPU of 30 calls twice its p50."""
    for name, (ask, _pid, tag) in doors.items():
        for i, q in enumerate(QUESTIONS):
            ask(q, False)
            ask(f"{q} warm{tag}{i}", True)
    names = list(doors)
    lex = {n: [] for n in names}
    fresh = {n: [] for n in names}
    hyb = {n: [] for n in names}
    cpu = {n: {"lex": [], "hyb": []} for n in names}
    semantic = dict.fromkeys(names, True)
    block = max(1, min(block, runs))
    for turn, start in enumerate(range(0, runs, block)):
        for name in names[turn % len(names):] + names[:turn % len(names)]:
            ask, pid, tag = doors[name]
            for i in range(start, min(start + block, runs)):
                q = QUESTIONS[i % len(QUESTIONS)]
                c0 = cpu_of(pid)
                t0 = time.perf_counter()
                ask(q, False)
                lex[name].append(time.perf_counter() - t0)
                c1 = cpu_of(pid)
                t0 = time.perf_counter()
                # a question no door of this server was asked yet (no known answer, search/known.py)
                ask(new_words(names.index(name) * runs + i), False)
                fresh[name].append(time.perf_counter() - t0)
                c2 = cpu_of(pid)
                t0 = time.perf_counter()
                r = ask(f"{q} {tag}{i}", True)  # a new text every call: its vector is not in any cache
                hyb[name].append(time.perf_counter() - t0)
                cpu[name]["lex"].append(c1 - c0)
                cpu[name]["hyb"].append(cpu_of(pid) - c2)
                semantic[name] = semantic[name] and bool(r.get("semantic"))
    return {n: {"lexical_ms": _p50(lex[n]), "lexical_new_ms": _p50(fresh[n]), "hybrid_ms": _p50(hyb[n]),
                "semantic": semantic[n],
                "lexical_cpu_ms": _p50(cpu[n]["lex"]), "hybrid_cpu_ms": _p50(cpu[n]["hyb"]),
                "lexical_cpu_mean_ms": round(statistics.mean(cpu[n]["lex"]) * 1000, 2),
                "hybrid_cpu_mean_ms": round(statistics.mean(cpu[n]["hyb"]) * 1000, 2)} for n in names}


def warm(store: Path, env: dict, runs: int, tag: str, serve: bool = True, block: int = 10,
         side_by_side: bool = False) -> dict:
    """The doors' figures (time_doors). By default each server runs alone, as a user runs `kyb mcp`
    or `kyb serve`: `kyb mcp` timed and stopped, then `kyb serve`'s two doors taking turns. With
    `side_by_side` both servers are up and all three doors take turns (a shared machine's load
    swings land on all of them), at a price: with a second resident server (its own two models) a
    10k hybrid call cost ~26% more wall (28 -> 35.6 ms p50, load 0.0-0.7, 2026-12-06)."""
    stdio = Stdio(store, env)
    web = None
    out: dict = {}
    try:
        doors = {"mcp stdio": (stdio.query, stdio.proc.pid, tag + "s")}
        if serve and not side_by_side:
            out = time_doors(doors, runs, block)
            stdio.close()
            doors = {}
        if serve:
            web = Http(store, env)
            doors["serve /search"] = (web.search, web.server.proc.pid, tag + "h")
            doors["serve /mcp"] = (web.mcp, web.server.proc.pid, tag + "m")
        return out | time_doors(doors, runs, block)
    finally:
        stdio.close()
        if web is not None:
            web.close()


FLOOR = r"""
import json, os, statistics, sys, time
from concurrent.futures import ThreadPoolExecutor
from kyb_cli.core.embed.embedder import Embedder
from kyb_cli.core.embed.models import BGE, E5
texts = json.loads(sys.argv[1])
specs = [s for s in (E5, BGE) if os.environ.get(s.env) and os.path.isdir(os.environ[s.env])]
models = [(s, Embedder(os.environ[s.env], s.pooling)) for s in specs]
pool = ThreadPoolExecutor(1)
def both(text):  # as a door runs them (core/embed query_vectors): the first here, the others beside
    others = [pool.submit(m.question, s.query_input(text)) for s, m in models[1:]]
    models[0][1].question(models[0][0].query_input(text))
    [f.result() for f in others]
for t in texts[:5]:
    both(t + " warm")
out = {"models": [s.name for s in specs], "both": [], "alone": {s.name: [] for s in specs}}
for t in texts:
    t0 = time.perf_counter(); both(t); out["both"].append(time.perf_counter() - t0)
    for s, m in models:
        t0 = time.perf_counter(); m.question(s.query_input(t + " alone")); out["alone"][s.name].append(time.perf_counter() - t0)
print(json.dumps({"models": out["models"], "both_ms": round(statistics.median(out["both"]) * 1000, 2),
                  "alone_ms": {k: round(statistics.median(v) * 1000, 2) for k, v in out["alone"].items()}}))
"""


def model_floor(env: dict, runs: int, tag: str) -> dict:
    """The models' own run for the questions the doors' hybrid calls ask (the same six texts, a new
    number appended), in-process in a child with the doors' environment: each model alone, and the
    models of an English question side by side as a door runs them (the first on the asking thread,
    the other on a kept worker thread). What no door can answer under: a door's hybrid p50 minus
    this is what kyb adds."""
    texts = [f"{QUESTIONS[i % len(QUESTIONS)]} {tag}f{i}" for i in range(runs)]
    res = subprocess.run([sys.executable, "-c", FLOOR, json.dumps(texts)], env=env, capture_output=True, text=True)
    if res.returncode != 0:
        raise SystemExit(f"the models' floor failed: {res.stderr.strip()[-500:]}")
    return json.loads(res.stdout)


def _cpu_once(cmd: list[str], env: dict) -> float:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime


def _source_hash() -> str:
    """What the installed copy is made of: pyproject.toml and every file of the package."""
    import hashlib

    h = hashlib.sha256((ROOT / "pyproject.toml").read_bytes())
    for f in sorted((ROOT / "kyb_cli").rglob("*")):
        if f.is_file() and "__pycache__" not in f.parts:
            h.update(str(f.relative_to(ROOT)).encode() + b"\0" + f.read_bytes())
    return h.hexdigest()[:16]


def installed() -> Path:
    """A venv with this checkout installed as a user installs it: a wheel, NOT editable. An editable
    install's finder (.pth) makes every `python -c pass` of its venv import pathlib and urllib, which
    flatters the ratio (20.7 ms instead of 9.2 at load 2.5: issue 38). Cached per source hash under BASE. The
    dependencies are the running interpreter's (a .pth naming its site-packages, read as a plain path:
    no .pth of that directory runs), so no network is needed but for the wheel's build backend."""
    import sysconfig

    venv = BASE / f"venv-{_source_hash()}"
    if (venv / ".kyb-bench-done").exists():
        return venv
    for old in BASE.glob("venv-*"):
        shutil.rmtree(old, ignore_errors=True)
    wheels = BASE / "wheel"
    shutil.rmtree(wheels, ignore_errors=True)
    subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(wheels), str(ROOT)], check=True)
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    py = venv / "bin" / "python"
    subprocess.run([str(py), "-m", "pip", "install", "-q", "--no-deps", str(next(wheels.glob("*.whl")))], check=True)
    site = subprocess.run([str(py), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                          capture_output=True, text=True, check=True).stdout.strip()
    Path(site, "_kyb_bench_deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    (venv / ".kyb-bench-done").write_text("ok")
    return venv


def _answer_bytes(venv: Path | None, store: Path, env: dict, full: bool) -> int:
    """Bytes of a 10-hit lexical answer on stdout (JSON: not a terminal): the venv's console script, or
    this checkout's `python -m kyb_cli` when `venv` is None (--bytes-only: the same answer)."""
    kyb_cmd = [str(venv / "bin" / "kyb")] if venv is not None else [sys.executable, "-m", "kyb_cli"]
    cmd = kyb_cmd + ["--store", str(store), "query", "postgres replica failover", "--no-semantic",
                     "--limit", "10"] + (["--full"] if full else [])
    return len(subprocess.run(cmd, env=env, capture_output=True, check=True).stdout)


def answer_bytes(store: Path, env: dict) -> dict:
    """--bytes-only: the bytes of a 10-hit lexical answer without bodies (the default) and with them,
    once the store's history is read (main() asks a question about the past first; before, a fresh
    index's hits say `sha` and `committed_at` null and the answer is smaller than a user's): issue 38's figure."""
    return {"bytes": _answer_bytes(None, store, env, False), "bytes_full": _answer_bytes(None, store, env, True)}


def cli(store: Path, env: dict, runs: int) -> dict:
    """As a user runs it: the console script of a non-editable install (installed()), bytecode written
    and reused, the deadlines block on (the defaults). The query and that venv's `python -c pass`
    alternate run by run, so both see the same machine (medians). Also the bytes of a 10-hit lexical
    answer, without bodies (the default) and with them (`--full`)."""
    venv = installed()
    env = {k: v for k, v in env.items() if k not in ("PYTHONDONTWRITEBYTECODE", "KYB_DEADLINES", "PYTHONPATH")}
    kyb_script = str(venv / "bin" / "kyb")
    subprocess.run([kyb_script, "--store", str(store), "query", "warm up", "--no-semantic"], env=env,
                   capture_output=True, check=True)
    floor_cmd = [str(venv / "bin" / "python"), "-c", "pass"]
    query_cmd = [kyb_script, "--store", str(store), "query", "postgres replica", "--no-semantic"]
    floor, query = [], []
    for _ in range(runs):
        floor.append(_cpu_once(floor_cmd, env))
        query.append(_cpu_once(query_cmd, env))
    f, q = statistics.median(floor), statistics.median(query)
    return {"python_ms": round(f * 1000, 1), "query_ms": round(q * 1000, 1), "ratio": round(q / f, 2),
            "bytes": _answer_bytes(venv, store, env, False), "bytes_full": _answer_bytes(venv, store, env, True)}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--keys", type=int, default=10000, help="keys of the large store (0: skip it)")
    ap.add_argument("--large", type=Path, action="append", default=[],
                    help="also a store already made by `bench/gen_store.py N --out PATH` (repeatable)")
    ap.add_argument("--runs", type=int, default=30)
    ap.add_argument("--side-by-side", action="store_true",
                    help="both servers up at once, the three doors taking turns (default: each server alone)")
    ap.add_argument("--block", type=int, default=10,
                    help="calls a door answers in a row before the next door's turn (1: call by call)")
    ap.add_argument("--cli-runs", type=int, default=15)
    ap.add_argument("--random-vectors", action="store_true",
                    help="fill the --keys/--large stores' missing vectors with random unit vectors (cost only)")
    ap.add_argument("--skip", action="append", default=[], choices=["warm", "cli", "serve"],
                    help="warm: no server door; serve: `kyb mcp` alone (no `kyb serve`); cli: no CLI floor")
    ap.add_argument("--deadlines", action="store_true",
                    help="the doors answer with the deadlines block on, as a user's do (default: off)")
    ap.add_argument("--bytes-only", action="store_true",
                    help="only the bytes of a 10-hit lexical answer per store (no server, no wheel, no timing)")
    a = ap.parse_args()
    BASE.mkdir(parents=True, exist_ok=True)
    model = os.environ.get("KYB_MODEL") or str(ROOT.parent / "shared" / "models" / "multilingual-e5-small")
    home = BASE / "home"
    env = {k: v for k, v in os.environ.items() if k not in ("KYB_STORE", "KYB_SERVE_TOKEN")}
    env.update(PYTHONPATH=str(ROOT), KYB_MODEL=model, KYB_DEADLINES="off", HOME=str(home),
               XDG_CACHE_HOME=str(home / "cache"), XDG_DATA_HOME=str(home / "data"),
               XDG_CONFIG_HOME=str(home / "config"), GIT_AUTHOR_NAME="bench", GIT_AUTHOR_EMAIL="bench@kyb.invalid",
               KYB_FSYNC="off", KYB_BACKGROUND="off")  # no detached filler embedding the 10k store meanwhile
    if a.deadlines:  # every answer then reads tasks/ for the deadlines block (kinds/undated.py)
        env.pop("KYB_DEADLINES")
    stores = {"108 runbooks": runbooks(env)}
    if a.keys:
        stores[f"{a.keys} keys"] = generated(a.keys)
    for path in a.large:
        stores[f"{path.name}"] = path.resolve()
    print("load average:", " ".join(open("/proc/loadavg").read().split()[:3]), "| cpus:", os.cpu_count(), flush=True)
    result: dict = {}
    if "warm" not in a.skip and not a.bytes_only:
        floor = result["models' floor"] = model_floor(env, max(a.runs, 30), f"{os.getpid()}-")
        alone = ", ".join(f"{k} alone {v:.2f}" for k, v in floor["alone_ms"].items())
        print(f"models' floor  {' + '.join(floor['models'])} side by side p50 {floor['both_ms']:6.2f} ms ({alone};"
              f" in-process, the doors' hybrid texts)", flush=True)
    for name, store in stores.items():
        kyb(["--store", str(store), "query", "warm up", "--no-semantic"], env)  # the index is built before timing
        # and its history read (a question about the past waits for it): a user's store past its first
        # minute. Before, a fresh clone's hits said `sha: null` (smaller answers) and each one-shot
        # query of the CLI floor paid for naming them (10k: 7.03x against ~3.6x once the history is in).
        kyb(["--store", str(store), "query", "warm up", "--history", "--limit", "1", "--no-semantic"], env)
        if a.random_vectors and name != "108 runbooks":
            print(f"{name:14s} random vectors for {random_vectors(store, env)} passages (cost only)", flush=True)
        row: dict = {}
        if a.bytes_only:
            row["bytes"] = b = answer_bytes(store, env)
            print(f"{name:14s} 10 hits: {b['bytes']} bytes, {b['bytes_full']} with --full", flush=True)
            result[name] = row
            continue
        if "warm" not in a.skip:
            tag = f"{name.split()[0]}-{os.getpid()}-"  # a new text every run too: no vector an earlier run cached
            row["warm"] = warm(store, env, a.runs, tag, serve="serve" not in a.skip, block=a.block,
                               side_by_side=a.side_by_side)
            for door, r in row["warm"].items():
                print(f"{name:14s} {door:14s} lexical p50 {r['lexical_ms']:6.2f} ms (new question {r['lexical_new_ms']:5.2f})"
                      f"   hybrid p50 {r['hybrid_ms']:6.2f} ms"
                      f"   server CPU/call p50 {r['lexical_cpu_ms']:5.2f} / {r['hybrid_cpu_ms']:5.2f} ms"
                      f" (mean {r['lexical_cpu_mean_ms']:5.2f} / {r['hybrid_cpu_mean_ms']:5.2f})"
                      f"   (semantic {r['semantic']})", flush=True)
        if "cli" not in a.skip:
            row["cli"] = c = cli(store, env, a.cli_runs)
            print(f"{name:14s} kyb query --no-semantic CPU {c['query_ms']:.1f} ms / python -c pass {c['python_ms']:.1f} ms"
                  f" = {c['ratio']:.2f}x (installed wheel, console script)   10 hits: {c['bytes']} bytes,"
                  f" {c['bytes_full']} with --full", flush=True)
        result[name] = row
    if "warm" not in a.skip and not a.bytes_only:
        # the floor again, once the doors are done: the same machine can run the same work ~30% slower
        # a few minutes later (a shared host: 2026-12-07, three runs at load < 1, a hybrid call's server
        # CPU 19.9 ms in one and 27.3 in the next); a floor that moved says the run's figures did too
        after = result["models' floor after"] = model_floor(env, max(a.runs, 30), f"{os.getpid()}-after-")
        floor_ms = result["models' floor"]["both_ms"]
        print(f"models' floor after the doors: side by side p50 {after['both_ms']:6.2f} ms (before {floor_ms:.2f})",
              flush=True)
        for name in stores:
            print(f"{name:14s} hybrid p50 above the models' floor: " + ", ".join(
                f"{door} {r['hybrid_ms'] - floor_ms:+.2f} ms" for door, r in result[name]["warm"].items()))
    if len(stores) == 2 and "warm" not in a.skip and not a.bytes_only:
        (_s, small), (big, large) = ((n, result[n]["warm"]) for n in stores)
        for door in small:
            print(f"{door:14s} {big} / 108 runbooks: lexical {large[door]['lexical_ms'] / small[door]['lexical_ms']:.2f}x"
                  f"  hybrid {large[door]['hybrid_ms'] / small[door]['hybrid_ms']:.2f}x")
    print("load average:", " ".join(open("/proc/loadavg").read().split()[:3]))
    print(json.dumps(result))


if __name__ == "__main__":
    main()
