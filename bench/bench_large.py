"""Growth: a fresh clone of a 1k, 10k or 100k-key store, every stage timed with its peak memory.

    python bench/gen_store.py 100000 --out /tmp/kyb-100k --progress        # once, one commit per version
    python bench/gen_store.py 100000 --flat --per-commit 1000 --out /tmp/kyb-100k-flat   # for `migrate`
    python bench/bench_large.py --keys 1000 --keys 10000 --no-local --out /tmp/growth.jsonl
    python bench/bench_large.py --store /tmp/kyb-100k --flat-store /tmp/kyb-100k-flat --no-local --out …
    KYB_MODEL=… python bench/bench_large.py --store /tmp/kyb-100k --hybrid --out /tmp/growth.jsonl
    python bench/bench_large.py --table --plot docs/growth.png --out /tmp/growth.jsonl  # table and plot only
    python bench/bench_large.py --keys 10000 --no-local --stages clone,history        # the outside run

Each stage is a separate process (`python -m kyb_cli …`, or `git`), run under `/usr/bin/time` for
its peak resident memory (the process and the children it waited for); the background filler is a
detached process, so its peak is read from /proc/<pid>/status (VmHWM) while it runs. The load
average is printed next to every figure (`load`), as the machine is shared. Stages:

- clone        `git clone` (local: the pack is linked; `--no-local`: through the pack protocol);
- first        the first `kyb query … --history --no-wait` on the clone (HEAD's snapshot; `cpu_s`:
               its CPU seconds with its workers', index/spread.py);
- history      the same question asked in a loop, as an agent would, until `history_complete` is
               no longer false: seconds from the first call's start (the filler's peak memory);
- lexical      p50/p95 of `kyb query … --no-semantic` on the complete index;
- hybrid       (--hybrid, KYB_MODEL) p50 of the lexical stage's questions asked by meaning, against the
               same questions with `--no-semantic`, the two interleaved in one run, once the filler
               is committing vector batches (filler.json: stage `vectors`, `pending` going down);
- catch_up     `fresh()` after 100 new commits on top;
- write        `--writes` (default 9) `kyb add`s of new keys, one after the other: p50, p95, the
               first, the peak; and what .git grows by per write, measured twice: the loose objects
               (`git count-objects -v` size, KiB on disk — objects as kyb writes them, unpacked, the
               way a user's disk sees them until a gc packs them) and `du -sk .git` less `.git/kyb`
               (the sidecar), which also counts git's index file, refs and the reflog;
- sync         `kyb sync` merging a peer commit of 1,000 new records with one local write;
- import       `kyb import` of 10,000 Markdown documents into the clone;
- migrate      a clone of an old flat store of the same size (gen_store.py --flat; `--keys` builds it
               batched: 1 write a commit at 1k, 100 at 10k, 1,000 beyond), its index built, then
               `kyb migrate` (the one move commit), what .git grew by, and the next `kyb query`
               (the sidecar's catch-up over a commit that moves every record).
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
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))
sys.path.insert(0, str(ROOT / "tests"))

from bench_coldstart import WORDS, _stop_filler  # noqa: E402
from gen_store import generate, stats  # noqa: E402

WORK = Path(os.environ.get("KYB_BENCH_DIR", "/tmp")) / "kyb-bench-large"
STAGES = ("clone", "first", "history", "lexical", "hybrid", "catch_up", "write", "sync", "import", "migrate")
WRITES = 9
QUESTION = "checkout port 9090"
SYNC_RECORDS = 1000
IMPORT_DOCS = 10_000


def load() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


def timed(cmd: list[str], env: dict[str, str] | None = None, check: bool = True) -> dict:
    """Run `cmd` to its end: seconds, peak RSS (MiB), stdout; a failure stops the bench."""
    with tempfile.NamedTemporaryFile("r", suffix=".time") as out:
        t, cpu = time.perf_counter(), _children_cpu()
        res = subprocess.run(["/usr/bin/time", "-f", "%M", "-o", out.name, *cmd], env=env,
                             capture_output=True, text=True)
        took, cpu = time.perf_counter() - t, _children_cpu() - cpu
        lines = [ln for ln in Path(out.name).read_text().splitlines() if ln.strip().isdigit()]
    if check and res.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed ({res.returncode}): {res.stderr.strip()[-600:]}")
    return {"s": round(took, 3), "peak_mib": round(int(lines[-1]) / 1024, 1) if lines else None,
            "cpu_s": round(cpu, 3), "stdout": res.stdout, "rc": res.returncode}


def _children_cpu() -> float:
    """CPU seconds (user + system) of the waited-for children so far: a command and every process it
    waited for (kyb's snapshot workers too), the figure a loaded machine does not inflate much."""
    import resource

    use = resource.getrusage(resource.RUSAGE_CHILDREN)
    return use.ru_utime + use.ru_stime


def kyb(env: dict[str, str], *args: str) -> dict:
    return timed([sys.executable, "-m", "kyb_cli", *args], env)


def git_kib(path: Path) -> dict:
    """KiB .git holds: its loose objects (`git count-objects -v` size) and all of it less the sidecar."""
    counts = dict(line.split(": ") for line in subprocess.run(
        ["git", "-C", str(path), "count-objects", "-v"], capture_output=True, text=True, check=True).stdout.splitlines())
    du = subprocess.run(["du", "-sk", "--exclude=kyb", str(path / ".git")], capture_output=True, text=True, check=True)
    return {"loose_kib": int(counts["size"]), "loose_count": int(counts["count"]), "git_kib": int(du.stdout.split()[0])}


def growth(before: dict, after: dict, n: int) -> dict:
    return {"loose_kb_per_write": round((after["loose_kib"] - before["loose_kib"]) * 1.024 / n, 1),
            "loose_objects_per_write": round((after["loose_count"] - before["loose_count"]) / n, 1),
            "git_kb_per_write": round((after["git_kib"] - before["git_kib"]) * 1.024 / n, 1)}


def write_stage(path: Path, env: dict[str, str], out: dict, args) -> None:
    """`args.writes` `kyb add`s of new keys: latency p50/p95, the first, peak memory, .git growth a write."""
    before = git_kib(path)
    runs = [kyb(env, "add", "--key", f"bench-write-{i}", "--title", f"Bench write {i}",
                "--body", f"write {i} of the growth bench: {WORDS[i % len(WORDS)]} port 8080")
            for i in range(args.writes)]
    after = git_kib(path)
    out["write"] = pcts([r["s"] for r in runs]) | {
        "s": round(statistics.median(r["s"] for r in runs), 3), "first_s": runs[0]["s"], "writes": args.writes,
        "peak_mib": max(r["peak_mib"] or 0 for r in runs), "load": load()} | growth(before, after, args.writes)


def migrate_stage(flat: Path, args, out: dict) -> None:
    """A fresh clone of an old flat store, its index built, then `kyb migrate` and the next query."""
    info = stats(flat)
    work = WORK / f"{flat.name}-migrate"
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    path, home = work / "clone", work / "home"
    home.mkdir()
    subprocess.run(["git", "clone", "-q", *(["--no-local"] if args.no_local else []), str(flat), str(path)], check=True)
    env = environment(path, home, None)
    seen: dict = {}
    history_loop(path, env, seen)
    _stop_filler(path)
    before = git_kib(path)
    run = kyb(env, "migrate")
    reply = json.loads(run["stdout"])
    after = git_kib(path)
    grew = growth(before, after, 1)
    query = kyb(env, "query", QUESTION, "--no-semantic")
    out["migrate"] = figure(run) | {"moved": reply.get("moved"), "flat_versions": info["versions"],
                                    "flat_commits": info["commits"],
                                    "loose_kb": grew["loose_kb_per_write"], "git_kb": grew["git_kb_per_write"],
                                    "flat_history_s": (seen.get("history") or {}).get("s")}
    out["after_migrate_query"] = figure(query)
    _stop_filler(path)
    if not args.keep:
        shutil.rmtree(work, ignore_errors=True)


def flat_source(keys: int) -> Path:
    """The old-shape store of `keys` keys (cached): one write a commit at 1k, batched beyond (a flat tree
    of every key rewritten by each commit makes fast-import itself take hours one write a commit)."""
    return generate(keys, flat=True, per_commit=1 if keys <= 1000 else 100 if keys <= 10_000 else 1000)


def figure(run: dict) -> dict:
    return {"s": run["s"], "cpu_s": run.get("cpu_s"), "peak_mib": run["peak_mib"], "load": load()}


def pcts(samples: list[float]) -> dict:
    samples = sorted(samples)
    p95 = samples[min(len(samples) - 1, int(round(0.95 * (len(samples) - 1))))]
    return {"p50_ms": round(statistics.median(samples) * 1000, 1), "p95_ms": round(p95 * 1000, 1)}


def filler_peak(path: Path, seen: dict) -> None:
    """The running filler's peak memory so far (VmHWM), kept in `seen` by pid."""
    try:
        pid = (path / ".git" / "kyb" / "filler.lock").read_text().strip()
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                seen[pid] = max(seen.get(pid, 0), int(line.split()[1]))
    except (OSError, ValueError):
        pass


def environment(path: Path, home: Path, model: str | None) -> dict[str, str]:
    env = dict(os.environ, KYB_STORE=str(path), KYB_DEADLINES="off", KYB_OUTPUT="json",
               XDG_CACHE_HOME=str(home / "cache"), XDG_DATA_HOME=str(home / "data"),
               XDG_CONFIG_HOME=str(home / "config"), HOME=str(home), KYB_BACKGROUND="on",
               GIT_AUTHOR_NAME="bench", GIT_AUTHOR_EMAIL="bench@kyb.invalid",
               GIT_COMMITTER_NAME="bench", GIT_COMMITTER_EMAIL="bench@kyb.invalid",
               PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])))
    env["KYB_MODEL"] = model or str(home / "no-model")
    for name in ("KYB_STAGE_AT", "PYTHONDONTWRITEBYTECODE"):
        env.pop(name, None)
    return env


def history_loop(path: Path, env: dict[str, str], out: dict) -> None:
    """first + history: the outside run's loop (`--history --no-wait` until history_complete)."""
    started, asked, peaks = time.perf_counter(), 0, {}
    while True:
        run = kyb(env, "query", QUESTION, "--history", "--no-wait", "--no-semantic")
        asked += 1
        if asked == 1:
            out["first"] = figure(run)
        filler_peak(path, peaks)
        if json.loads(run["stdout"]).get("history_complete", True):
            break
        if time.perf_counter() - started > 3600:
            out["history"] = {"s": None, "note": "not complete after an hour"}
            return
    out["history"] = {"s": round(time.perf_counter() - started, 3), "queries": asked, "load": load(),
                      "filler_peak_mib": round(max(peaks.values(), default=0) / 1024, 1) or None}


def filler_status(path: Path) -> dict:
    try:
        return json.loads((path / ".git" / "kyb" / "filler.json").read_text())
    except (OSError, ValueError):
        return {}


def wait_embedding(path: Path, env: dict[str, str], limit: float = 600.0) -> dict:
    """Until the filler is in its vectors stage and has committed two batches (its `pending` went down
    between two of its status writes): the hybrid row is about queries beside a filler that embeds."""
    started, seen, before = time.perf_counter(), [], filler_status(path).get("pid")
    _stop_filler(path)  # the history loop's filler embeds for the models its env finds (no KYB_MODEL: USE alone)
    while staged_running(path) and time.perf_counter() - started < 60:
        time.sleep(0.1)
    kyb(env, "query", "warm up the helper")  # starts a filler with the query's models, and the warm helper
    while time.perf_counter() - started < limit:
        st = filler_status(path)
        if (st.get("stage") == "vectors" and st.get("pid") != before and isinstance(st.get("pending"), int)
                and st["pending"] not in seen):
            seen.append(st.get("pending"))
        if len(seen) >= 2 and seen[-1] < seen[0]:
            return {"waited_s": round(time.perf_counter() - started, 1), "filler_pending_at_start": seen[-1],
                    "filler_model": st.get("model")}
        time.sleep(0.2)
    raise SystemExit(f"the filler committed no vector batch in {limit:g} s: {filler_status(path)}")


def hybrid_stage(path: Path, env: dict[str, str], out: dict, args) -> None:
    """Issue 39's row as it reads: the same questions asked by meaning and lexically (`--no-semantic`),
    interleaved in one run (each pair in turn lexical or hybrid first), so both see the same load and the
    same filler, and only while the filler is committing vector batches (pending counts recorded)."""
    ready = wait_embedding(path, env)
    hyb, lex, peaks, pending, filler = [], [], {}, [], [filler_status(path).get("pending")]
    for i in range(args.runs):
        question = f"{WORDS[i % len(WORDS)]} port 9090"
        for semantic in ((False, True) if i % 2 else (True, False)):
            r = kyb(env, "query", question, *(() if semantic else ("--no-semantic",)))
            (hyb if semantic else lex).append(r)
            if semantic:
                pending.append(json.loads(r["stdout"]).get("pending_vectors", 0))
        filler_peak(path, peaks)
    filler.append(filler_status(path).get("pending"))
    still = filler_status(path).get("stage") == "vectors" and staged_running(path)
    lexical = pcts([r["s"] for r in lex])
    out["hybrid"] = pcts([r["s"] for r in hyb]) | {
        "peak_mib": max(r["peak_mib"] or 0 for r in hyb), "pending_first": pending[0],
        "pending_last": pending[-1], "filler_pending_first": filler[0], "filler_pending_last": filler[-1],
        "filler_embedding_throughout": bool(still and filler[-1] < filler[0]),
        "filler_peak_mib": round(max(peaks.values(), default=0) / 1024, 1), "questions": "<WORD> port 9090",
        "lexical_p50_ms": lexical["p50_ms"], "lexical_p95_ms": lexical["p95_ms"], "load": load()} | ready
    out["hybrid_over_lexical"] = round(out["hybrid"]["p50_ms"] / lexical["p50_ms"], 2)
    _stop_filler(path)


def staged_running(path: Path) -> bool:
    """Whether a filler holds the lock now (another could not take it)."""
    import fcntl

    try:
        fd = os.open(path / ".git" / "kyb" / "filler.lock", os.O_RDWR)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        fcntl.flock(fd, fcntl.LOCK_UN)
        return False
    except OSError:
        return True
    finally:
        os.close(fd)


def sync_stage(path: Path, env: dict[str, str], work: Path, out: dict, args) -> None:
    """A bare remote of the clone, a peer commit of SYNC_RECORDS new records, one local write."""
    from support.hostile import Peer, record_text

    remote = work / "remote.git"
    subprocess.run(["git", "clone", "-q", "--bare", str(path), str(remote)], check=True)
    subprocess.run(["git", "-C", str(path), "remote", "set-url", "origin", str(remote)], check=True)
    subprocess.run(["git", "-C", str(path), "fetch", "-q", "origin"], check=True)
    subprocess.run(["git", "-C", str(path), "branch", "-q", "--set-upstream-to=origin/main"], check=True)
    texts = {f"peer-{i}": record_text(f"peer-{i}", body=f"peer record {i} {WORDS[i % len(WORDS)]} port 8080")
             for i in range(args.sync_records)}
    Peer(remote).push_records(texts, work / "bulk", "peer: 1000 records\n")
    out["sync_local_write"] = figure(kyb(env, "add", "--key", "bench-local-write", "--title", "Local write",
                                         "--body", "a local write before the sync"))
    run = kyb(env, "sync")
    out["sync"] = figure(run) | {"records": args.sync_records}


def bench(label: str, src: Path, args, model: str | None, flat: Path | None = None) -> dict:
    info = stats(src)
    if args.stages == "migrate" and flat is not None:  # the move alone: no clone of the new-shape store
        out = {"keys": info["keys"], "commits": info["commits"], "versions": info["versions"], "load_before": load()}
        migrate_stage(flat, args, out)
        return out | {"load_after": load()}
    work = WORK / label
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    path, home = work / "clone", work / "home"
    home.mkdir()
    out: dict = {"keys": info["keys"], "commits": info["commits"], "versions": info["versions"],
                 "writes_per_commit": info.get("writes_per_commit", 1), "shape": info.get("shape", "flat"),
                 "load_before": load()}
    stages = set(args.stages.split(",")) if args.stages else set(STAGES) - ({"hybrid"} if not args.hybrid else set())
    clone = ["git", "clone", "-q", *(["--no-local"] if args.no_local else []), str(src), str(path)]
    out["clone"] = figure(timed(clone)) | {"no_local": args.no_local}
    env = environment(path, home, None)
    kyb(dict(env, KYB_STORE=str(work / "none")), "--version")  # .pyc files written before the timings
    history_loop(path, env, out)
    if "lexical" in stages:
        kyb(env, "query", "warm", "--no-semantic")
        lex = [kyb(env, "query", f"{WORDS[i % len(WORDS)]} port 9090", "--no-semantic") for i in range(args.runs)]
        base = [timed([sys.executable, "-c", "pass"])["s"] for _ in range(args.runs)]
        out["lexical"] = pcts([r["s"] for r in lex]) | {"peak_mib": max(r["peak_mib"] or 0 for r in lex),
                                                         "python_pass_p50_ms": pcts(base)["p50_ms"], "load": load()}
    if "hybrid" in stages and model:
        hybrid_stage(path, environment(path, home, model), out, args)
    if "catch_up" in stages:
        from bench_index import add_commits

        last = int(subprocess.run(["git", "-C", str(path), "log", "-1", "--format=%ct"], capture_output=True,
                                  text=True).stdout.strip() or "0")
        add_commits(path, 100, last + 60)
        code = ("import sys, time; from pathlib import Path; from kyb_cli.core.index.fresh import fresh; "
                "t = time.perf_counter(); f = fresh(Path(sys.argv[1])); print(time.perf_counter() - t)")
        run = timed([sys.executable, "-c", code, str(path)], dict(env, KYB_BACKGROUND="off"))
        out["catch_up"] = figure(run) | {"commits": 100, "in_process_s": round(float(run["stdout"]), 3)}
    if "write" in stages:
        write_stage(path, env, out, args)
    if "sync" in stages:
        sync_stage(path, env, work, out, args)
    if "import" in stages:
        from bench_import import make_notes

        notes = WORK / f"notes-{args.import_docs}"
        if not notes.exists():
            make_notes(notes, args.import_docs)
        run = kyb(dict(env, KYB_FSYNC="off"), "import", str(notes))
        reply = json.loads(run["stdout"])
        out["import"] = figure(run) | {"docs": args.import_docs, "created": len(reply.get("created", [])),
                                       "commits": reply.get("commits")}
        n = int(reply.get("commits") or 0)
        if n:  # what one tree diff costs git at this size: the history build pays it once per commit
            log = timed(["git", "-C", str(path), "log", "--raw", "--no-renames", "--no-abbrev", "--format=C %H",
                         f"HEAD~{n}..HEAD"])
            out["log_per_commit_ms"] = round(log["s"] / n * 1000, 3)
            out["log_per_commit_load"] = load()
    _stop_filler(path)
    if not args.keep:
        shutil.rmtree(work, ignore_errors=True)
    if "migrate" in stages and flat is not None:
        migrate_stage(flat, args, out)
    out["load_after"] = load()
    return out


def plot(results: list[dict], png: Path) -> None:
    """Seconds of each stage against keys (log-log), with the issue's targets as dotted lines."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = sorted({r["keys"]: r for r in results}.values(), key=lambda r: r["keys"])
    fig, ax = plt.subplots(figsize=(8, 5), dpi=110)
    series = {"first answer": lambda r: r.get("first", {}).get("s"),
              "history complete": lambda r: r.get("history", {}).get("s"),
              "lexical p50": lambda r: (r.get("lexical") or {}).get("p50_ms", 0) / 1000 or None,
              "catch-up (100 commits)": lambda r: r.get("catch_up", {}).get("s"),
              "one write (kyb add)": lambda r: r.get("write", {}).get("s"),
              "sync (1,000 incoming)": lambda r: r.get("sync", {}).get("s"),
              "import (10,000 docs)": lambda r: r.get("import", {}).get("s")}
    for name, get in series.items():
        pts = [(r["keys"], get(r)) for r in rows if get(r)]
        if pts:
            ax.plot(*zip(*pts), marker="o", label=name)
    keys = [r["keys"] for r in rows]
    ax.plot(keys, [k / keys[0] * 0.05 for k in keys], ls=":", c="grey", label="linear (slope 1)")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("keys in the store (~3.7 versions each)")
    ax.set_ylabel("seconds (wall, shared 2-core machine)")
    ax.set_title("kyb on a fresh clone: growth 1k → 10k → 100k keys")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(png)


def table(results: list[dict]) -> str:
    """The growth table of BENCHMARKS.md (Markdown), one column per store size, load in each cell."""
    rows = sorted({r["keys"]: r for r in results}.values(), key=lambda r: r["keys"])

    def cell(r: dict, stage: str, ms: bool = False) -> str:
        f = r.get(stage) or {}
        value = f.get("p50_ms") if ms else f.get("s")
        if value is None:
            return "—"
        peak = f.get("filler_peak_mib") or f.get("peak_mib")
        text = f"{value:g} ms" if ms else f"{value:g} s"
        if stage == "hybrid" and f.get("lexical_p50_ms"):  # against the same questions, same run
            text += f" = {r.get('hybrid_over_lexical'):g}× {f['lexical_p50_ms']:g} ms lexical"
        return f"{text} ({peak:g} MiB; load {f.get('load', '?').split()[0]})" if peak else text

    head = "| stage | " + " | ".join(f"{r['keys']:,} keys ({r['versions']:,} versions, {r['commits']:,} commits)"
                                     for r in rows) + " |"
    lines = [head, "|---|" + "---|" * len(rows)]
    for label, stage, ms in (("`git clone` (`--no-local`: the pack protocol)", "clone", False),
                             ("first answer (≤ 3 s)", "first", False),
                             ("history complete, asked in a loop (≤ 120 s)", "history", False),
                             ("lexical p50 (≤ 150 ms)", "lexical", True),
                             ("hybrid p50, vectors pending (≤ 2× lexical)", "hybrid", True),
                             ("catch-up after 100 commits (≤ 1 s)", "catch_up", False),
                             ("one write (`kyb add`), p50 (at 100k ≤ 2× at 1k)", "write", False),
                             ("sync merging 1,000 incoming records (≤ 10 s)", "sync", False),
                             ("import of 10,000 documents", "import", False)):
        lines.append(f"| {label} | " + " | ".join(cell(r, stage, ms) for r in rows) + " |")
    lines.insert(9, "| .git growth a write: loose objects / all of .git (≤ 64 kB) | " + " | ".join(
        f"{r['write']['loose_kb_per_write']:g} kB / {r['write']['git_kb_per_write']:g} kB"
        if "loose_kb_per_write" in (r.get("write") or {}) else "—" for r in rows) + " |")
    lines.append("| `kyb migrate` of the old flat shape (one commit) | " + " | ".join(cell(r, "migrate") for r in rows) + " |")
    lines.append("| first `kyb query` after the migrate (catch-up over the move) | " + " | ".join(
        cell(r, "after_migrate_query") for r in rows) + " |")
    lines.append("| `python -c pass` p50 (same run) | " + " | ".join(
        f"{(r.get('lexical') or {}).get('python_pass_p50_ms', '—')} ms" for r in rows) + " |")
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--keys", type=int, action="append", default=[], help="a gen_store.py store (cached)")
    ap.add_argument("--store", type=Path, action="append", default=[], help="a store gen_store.py built (--out)")
    ap.add_argument("--runs", type=int, default=9)
    ap.add_argument("--writes", type=int, default=WRITES, help="`kyb add`s in the write stage")
    ap.add_argument("--flat-store", type=Path, action="append", default=[],
                    help="an old-shape store (gen_store.py --flat --out) for each --store, in order, for `migrate`")
    ap.add_argument("--hybrid", action="store_true", help="also hybrid p50 while vectors are pending (KYB_MODEL)")
    ap.add_argument("--no-local", action="store_true", help="clone through the pack protocol (the outside run)")
    ap.add_argument("--stages", help=f"comma-separated subset of {','.join(STAGES)} (clone, first, history always "
                                     "run, except for migrate alone)")
    ap.add_argument("--sync-records", type=int, default=SYNC_RECORDS, help="records in the peer's commit")
    ap.add_argument("--import-docs", type=int, default=IMPORT_DOCS, help="documents imported into the clone")
    ap.add_argument("--out", type=Path, help="append each result as a JSON line here")
    ap.add_argument("--plot", type=Path, help="draw the growth plot from --out's lines (PNG)")
    ap.add_argument("--table", action="store_true", help="print the growth table from --out's lines (Markdown)")
    ap.add_argument("--keep", action="store_true", help="keep the clone under $KYB_BENCH_DIR/kyb-bench-large")
    args = ap.parse_args()
    model = os.environ.get("KYB_MODEL") if args.hybrid else None
    migrating = not args.stages or "migrate" in args.stages.split(",")
    sources = [(f"{k}", generate(k), flat_source(k) if migrating else None) for k in args.keys]
    sources += [(p.name, p, args.flat_store[i] if i < len(args.flat_store) else None) for i, p in enumerate(args.store)]
    for label, src, flat in sources:
        result = bench(label, src, args, model, flat)
        print(json.dumps(result), flush=True)
        if args.out:
            with args.out.open("a") as f:
                f.write(json.dumps(result) + "\n")
    if args.plot or args.table:
        if not args.out or not args.out.exists():
            raise SystemExit("--plot and --table draw from --out's JSON lines: give --out")
        results = [json.loads(line) for line in args.out.read_text().splitlines() if line.strip()]
        if args.table:
            print(table(results))
        if args.plot:
            plot(results, args.plot)
            print(f"wrote {args.plot}")


if __name__ == "__main__":
    main()
