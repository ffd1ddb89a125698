"""Search quality on the dev set (bench/evalset/): lexical, vectors only and hybrid, per kind.

    KYB_MODEL=../shared/models/multilingual-e5-small python bench/eval_devset.py [--verbose]
        [--modes lexical,vectors,hybrid[,also]] [--kinds paraphrase_en,...] [--split all|fit|check]
        [--json out.json] [--against old.json] [--rebuild] [--e5-only]

The English model (bge-small-en-v1.5) is taken from KYB_MODEL_EN, else ../shared/models/; `--e5-only`
measures without it.

176 public documents and 315 questions (bench/evalset/LICENSES.md). The store is built once with
`git fast-import` (one commit per document, as kyb writes them) and cached under
$KYB_BENCH_DIR/kyb-evalset/<docs hash>-<code hash>/ with its vector cache, so a second run only
asks the questions; the code hash is the kyb_cli directory in use, so every worktree (PYTHONPATH)
keeps its own index. Prints top-1, top-3 and MRR@10 per kind and mode, and — when the response
carries `confident` — the off-topic `confident: false` rate and the on-topic `confident: true`
rate. "vectors" ranks by the vector side alone (KYB_SEARCH_RANKING=vectors, a bench hook of the
porcelain: api.query hands the pipeline its VECTORS ordering). The JSON file holds the figures and every question's ranks.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))
from evalset import checks  # noqa: E402  (no kyb import: runs before the environment is set)

BASE = Path(os.environ.get("KYB_BENCH_DIR", "/tmp")) / "kyb-evalset"
MODES = ("lexical", "vectors", "hybrid", "also")  # also: hybrid with bench/evalset/also.jsonl's phrasings
ALSO_FILE = ROOT / "bench" / "evalset" / "also.jsonl"
FORMAT = "3"  # 3: records fanned out (keys.path_of_key, issue 39); bump when the way the store is built changes
LIMIT = 10


def code_dir() -> Path:
    """The kyb_cli package that will answer (PYTHONPATH decides), without importing it."""
    import importlib.util

    spec = importlib.util.find_spec("kyb_cli")
    if spec is None or spec.origin is None:
        sys.exit("eval_devset: kyb_cli is not importable (set PYTHONPATH to a checkout)")
    return Path(spec.origin).resolve().parent


def cache_dir(docs_path: Path) -> Path:
    h = hashlib.sha256(docs_path.read_bytes() + FORMAT.encode()).hexdigest()[:12]
    c = hashlib.sha256(str(code_dir()).encode()).hexdigest()[:8]
    return BASE / f"{h}-{c}"


def toml_string(text: str) -> str:
    return json.dumps(text, ensure_ascii=False)  # JSON string escapes are valid TOML basic strings


def redacted(body: str) -> str:
    """The body as kyb would take it: a value its secret rules refuse (one runbook quotes a bcrypt
    hash after `password:`) becomes `<redacted>`, as a user storing the page would have to write it."""
    from kyb_cli.core.records import secrets

    for _ in range(20):
        found = secrets.first_secret(body)
        if found is None:
            break
        end = found.start
        while end < len(body) and not body[end].isspace():
            end += 1
        body = body[:found.start] + "<redacted>" + body[end:]
    return body


def record_text(doc: dict) -> str:
    """A kyb knowledge record file: TOML front matter between `+++` lines, a blank line, the body."""
    front = f"key = {toml_string(doc['key'])}\ntitle = {toml_string(doc['title'])}\n"
    if doc.get("tags"):
        front += "tags = [" + ", ".join(toml_string(t) for t in doc["tags"]) + "]\n"
    return "+++\n" + front + "+++\n\n" + redacted(doc["body"]).strip() + "\n"


def build_store(path: Path, docs: list[dict]) -> None:
    """One `kyb: add` commit per document on branch main, streamed into git fast-import, each record
    at the path kyb writes it (`knowledge/<h>/<key>.md`)."""
    from kyb_cli.core.records.keys import path_of_key

    if path.exists():
        shutil.rmtree(path)
    path.mkdir(parents=True)
    subprocess.run(["git", "init", "-q", "-b", "main", str(path)], check=True)
    proc = subprocess.Popen(["git", "-C", str(path), "fast-import", "--quiet", "--done"], stdin=subprocess.PIPE)
    out = proc.stdin
    assert out is not None
    when = 1_735_689_600  # 2025-01-01T00:00:00Z

    def commit(message: str, ops: bytes) -> None:
        raw = message.encode()
        out.write(b"commit refs/heads/main\n")
        out.write(f"committer kyb <kyb@localhost> {when} +0000\n".encode())
        out.write(b"data %d\n" % len(raw) + raw + b"\n" + ops)

    commit("kyb: init store\n", b"")
    for doc in docs:
        when += 60
        raw = record_text(doc).encode()
        msg = f"kyb: add {doc['key']}\n\nKyb-Action: add\nKyb-Agent: evalset\nKyb-Transport: cli\n"
        commit(msg, f"M 100644 inline {path_of_key(doc['key'])}\n".encode() + b"data %d\n" % len(raw) + raw + b"\n")
    out.write(b"done\n")
    out.close()
    if proc.wait() != 0:
        sys.exit("eval_devset: git fast-import failed")
    subprocess.run(["git", "-C", str(path), "reset", "-q", "--hard", "main"], check=True)


def engine():
    """(search(store, text, semantic, explain) -> response, embed_all(store)) from whichever layout
    the code has: `kyb_cli.api` (the porcelain) when it exists, else the flat core of before."""
    try:
        from kyb_cli import api

        if not Path(api.__file__).resolve().is_relative_to(code_dir()):
            raise ImportError("kyb_cli.api of another checkout")  # an editable install's finder
        query, embed_all = api.query, api.embed_all
    except (ImportError, AttributeError):
        from kyb_cli.core.index.search import search as core_search
        from kyb_cli.core.index.vectors import embed_all

        def search(store: Path, text: str, semantic: bool, explain: bool = False) -> dict:
            return core_search(store, text, semantic=semantic, limit=LIMIT, explain=explain)

        return search, embed_all

    def search(store: Path, text: str, semantic: bool, explain: bool = False, also=()) -> dict:  # noqa: F811
        return query(str(store), text, semantic=semantic, limit=LIMIT, explain=explain, also=list(also))[1]

    return search, embed_all


def prepare(docs: list[dict], rebuild: bool, embed: bool = True) -> tuple[Path, float]:
    """The cached store for these documents and this code (built, and embedded when `embed`)."""
    base = cache_dir(checks.DOCS)
    store = base / "store"
    for name, sub in (("XDG_CACHE_HOME", "cache"), ("XDG_CONFIG_HOME", "config"), ("XDG_DATA_HOME", "data")):
        os.environ[name] = str(base / sub)
    if os.environ.get("KYB_BENCH_VECTORS"):  # a vector cache kept across runs (keyed by model fingerprint and text)
        os.environ["XDG_CACHE_HOME"] = os.environ["KYB_BENCH_VECTORS"]
    os.environ.setdefault("KYB_EMBED_HELPER", "0")
    os.environ["KYB_DEADLINES"] = "off"
    done = base / "built"
    started = time.monotonic()
    if rebuild or not done.exists():
        build_store(store, docs)
        done.write_text(json.dumps({"documents": len(docs)}))
    if embed:
        _search, embed_all = engine()
        embed_all(store)  # no-op when every vector is cached
    return store, time.monotonic() - started


def rank_of(hits: list[dict], relevant: list[str]) -> int | None:
    for i, hit in enumerate(hits, 1):
        if hit["key"] in relevant:
            return i
    return None


def also_phrasings() -> dict[str, dict]:
    """id -> {also: [...], seen: bool} from bench/evalset/also.jsonl (its first line says how they were written)."""
    rows = [json.loads(line) for line in ALSO_FILE.read_text(encoding="utf-8").splitlines() if line.strip()]
    return {r["id"]: r for r in rows if "id" in r}


def ask(store: Path, questions: list[dict], modes: list[str], verbose: bool) -> list[dict]:
    search, _embed = engine()
    phrasings = also_phrasings() if "also" in modes else {}
    rows = []
    for q in questions:
        row = {"id": q["id"], "kind": q["kind"], "lang": q["lang"], "query": q["query"], "relevant": q["relevant"],
               "also": phrasings.get(q["id"], {}).get("also", []), "seen": phrasings.get(q["id"], {}).get("seen", False)}
        for mode in modes:
            if mode == "vectors":
                os.environ["KYB_SEARCH_RANKING"] = "vectors"
            try:
                t0 = time.perf_counter()
                if mode == "also":
                    r = search(store, q["query"], semantic=True, also=phrasings.get(q["id"], {}).get("also", []))
                else:
                    r = search(store, q["query"], semantic=mode != "lexical")
                took = time.perf_counter() - t0
            finally:
                os.environ.pop("KYB_SEARCH_RANKING", None)
            if mode != "lexical" and not r.get("semantic"):
                sys.exit(f"eval_devset: semantic search is off ({r.get('semantic_off')}); set KYB_MODEL")
            if mode != "lexical" and r.get("semantic_missing") and os.environ.get("KYB_EVAL_E5_ONLY") != "1":
                sys.exit(f"eval_devset: a vector side is missing ({r['semantic_missing']}); set KYB_MODEL_EN or --e5-only")
            if mode == "vectors" and r.get("ranking") != "vectors":
                sys.exit("eval_devset: this code ignores KYB_SEARCH_RANKING=vectors (no vectors-only ranking)")
            hits = r["hits"]
            rank = rank_of(hits, q["relevant"])
            row[mode] = {"rank": rank, "top": [h["key"] for h in hits[:LIMIT]], "count": r["count"], "ms": round(took * 1000, 1),
                         "confident": r.get("confident"),
                         "strong": sum(1 for h in hits if h.get("strength") == "strong"),
                         "strong_relevant": sum(1 for h in hits if h.get("strength") == "strong"
                                                and h["key"] in q["relevant"]),
                         "found_by": hits[rank - 1].get("found_by") if rank else None}
            if verbose and q["relevant"] and rank != 1:
                print(f"  {mode:7} {q['kind']:14} {q['id']} rank {rank}: {q['query']!r} -> {q['relevant'][0]}; "
                      f"top {row[mode]['top']}")
        rows.append(row)
    return rows


def ask_in(jobs: int, store: Path, questions: list[dict], modes: list[str], verbose: bool) -> list[dict]:
    """`ask` over `jobs` processes (spawned after the store is ready: no model threads forked), each taking every jobs-th question;
    the rows come back in the questions' order. The store is only read while they ask."""
    if jobs <= 1 or len(questions) < 2:
        return ask(store, questions, modes, verbose)
    import multiprocessing

    parts = [questions[i::jobs] for i in range(jobs)]
    with multiprocessing.get_context("spawn").Pool(jobs) as pool:
        answered = pool.starmap(ask, [(store, part, modes, verbose) for part in parts])
    by_id = {row["id"]: row for rows in answered for row in rows}
    return [by_id[q["id"]] for q in questions]


def summarize(rows: list[dict], modes: list[str]) -> dict:
    """{kind: {mode: {n, top1, top3, mrr10}}} for answerable kinds; confident rates per mode."""
    out: dict = {"kinds": {}, "confident": {}}
    kinds = [k for k in checks.KINDS if k != "off_topic" and any(r["kind"] == k for r in rows)]
    for kind in kinds + ["all_on_topic"]:
        sel = [r for r in rows if (r["kind"] == kind if kind != "all_on_topic" else r["kind"] != "off_topic")]
        if not sel:
            continue
        out["kinds"][kind] = {}
        for mode in modes:
            ranks = [r[mode]["rank"] for r in sel]
            n = len(ranks)
            out["kinds"][kind][mode] = {
                "n": n,
                "top1": round(sum(1 for x in ranks if x == 1) / n, 4),
                "top3": round(sum(1 for x in ranks if x is not None and x <= 3) / n, 4),
                "mrr10": round(sum(1 / x for x in ranks if x is not None and x <= 10) / n, 4),
            }
    cross = sorted({r["lang"] for r in rows if r["kind"] == "cross_language"})
    for lang in cross:
        sel = [r for r in rows if r["kind"] == "cross_language" and r["lang"] == lang]
        out.setdefault("cross_language_by_lang", {})[lang] = {
            mode: {"n": len(sel), "top3": round(sum(1 for r in sel if (r[mode]["rank"] or 99) <= 3) / len(sel), 4)}
            for mode in modes}
    for mode in modes:
        on = [r[mode]["confident"] for r in rows if r["kind"] != "off_topic"]
        off = [r[mode]["confident"] for r in rows if r["kind"] == "off_topic"]
        if any(c is not None for c in on + off):
            on_rows = [r for r in rows if r["kind"] != "off_topic"]
            strong = sum(r[mode]["strong"] for r in on_rows)
            out["confident"][mode] = {
                "on_topic_confident_true": round(sum(1 for c in on if c is True) / max(len(on), 1), 4),
                "off_topic_confident_false": round(sum(1 for c in off if c is False) / max(len(off), 1), 4),
                "n_on": len(on), "n_off": len(off),
                # of the strong hits given to on-topic questions, the share that is a right answer
                "strong_precision": round(sum(r[mode]["strong_relevant"] for r in on_rows) / strong, 4) if strong else None,
            }
        ms = sorted(r[mode]["ms"] for r in rows)
        out.setdefault("latency_ms", {})[mode] = {"p50": ms[len(ms) // 2], "p90": ms[int(len(ms) * 0.9)], "max": ms[-1]}
        off_rows = [r for r in rows if r["kind"] == "off_topic"]
        out.setdefault("off_topic_hits", {})[mode] = {
            "mean_count": round(sum(r[mode]["count"] for r in off_rows) / max(len(off_rows), 1), 2),
            "mean_strong": round(sum(r[mode]["strong"] for r in off_rows) / max(len(off_rows), 1), 2),
        }
    return out


def markdown(summary: dict, modes: list[str]) -> str:
    head = "| kind (n) | " + " | ".join(f"{m} top-1 / top-3 / MRR@10" for m in modes) + " |"
    lines = [head, "|---|" + "---|" * len(modes)]
    for kind, per in summary["kinds"].items():
        n = next(iter(per.values()))["n"]
        cells = [f"{v['top1']:.2f} / {v['top3']:.2f} / {v['mrr10']:.3f}" for v in (per[m] for m in modes)]
        lines.append(f"| {kind} ({n}) | " + " | ".join(cells) + " |")
    if summary["confident"]:
        lines += ["", "| mode | on-topic confident:true | off-topic confident:false | strong hits that are right |",
                  "|---|---|---|---|"]
        for mode, c in summary["confident"].items():
            sp = "-" if c["strong_precision"] is None else f"{c['strong_precision']:.2f}"
            lines.append(f"| {mode} | {c['on_topic_confident_true']:.2f} ({c['n_on']}) | "
                         f"{c['off_topic_confident_false']:.2f} ({c['n_off']}) | {sp} |")
    else:
        lines += ["", "(responses carry no `confident`: relevance signal not in this code)"]
    if summary.get("off_topic_hits"):
        lines.append("\noff-topic questions, mean hits / mean strong hits: " + "; ".join(
            f"{m} {v['mean_count']:.1f} / {v['mean_strong']:.1f}" for m, v in summary["off_topic_hits"].items()))
    if summary.get("latency_ms"):
        lines.append("in-process query latency p50 / p90 ms (warm, this machine's load): " + "; ".join(
            f"{m} {v['p50']:.0f} / {v['p90']:.0f}" for m, v in summary["latency_ms"].items()))
    if summary.get("cross_language_by_lang"):
        lines.append("cross-language top-3 by language (" + "/".join(modes) + "): " + "; ".join(
            f"{lang} " + "/".join(f"{v[m]['top3']:.2f}" for m in modes)
            for lang, v in summary["cross_language_by_lang"].items()))
    return "\n".join(lines)


def compare(rows: list[dict], old_path: Path, modes: list[str], verbose: bool) -> str:
    """Per kind and mode, how many questions ranked better / worse than in an earlier JSON result."""
    old = {r["id"]: r for r in json.loads(old_path.read_text(encoding="utf-8"))["questions"]}
    worse_list = []
    lines = [f"\nagainst {old_path}: better / worse rank (top-10; missing counts as 11)"]
    for kind in [k for k in checks.KINDS if k != "off_topic"]:
        cells = []
        for mode in modes:
            better = worse = 0
            for r in rows:
                o = old.get(r["id"], {}).get(mode)
                if r["kind"] != kind or o is None:
                    continue
                a, b = o["rank"] or 11, r[mode]["rank"] or 11
                better += b < a
                worse += b > a
                if b > a:
                    worse_list.append(f"  {mode:7} {r['id']} {a} -> {b}: {r['query']!r}")
            cells.append(f"{mode} +{better}/-{worse}")
        lines.append(f"  {kind:15} " + "  ".join(cells))
    if verbose and worse_list:
        lines += ["worse:"] + worse_list
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--modes", default="lexical,vectors,hybrid",
                    help="comma list of lexical,vectors,hybrid,also (also: hybrid with bench/evalset/also.jsonl)")
    ap.add_argument("--kinds", help="comma list of kinds to ask (default: all)")
    ap.add_argument("--split", choices=("all", "fit", "check"), default="all",
                    help="ask only one half of the questions (fixed by id): tune on fit, report on check")
    ap.add_argument("--json", type=Path, help="where to write the figures (default: <cache>/results.json)")
    ap.add_argument("--rebuild", action="store_true", help="rebuild the cached store")
    ap.add_argument("--against", type=Path, metavar="OLD.json",
                    help="also count questions ranked better / worse than in an earlier result file")
    ap.add_argument("--verbose", action="store_true", help="print every question not ranked first")
    ap.add_argument("--jobs", type=int, default=1, help="ask the questions in this many processes (a 2-core "
                    "machine: 2 halves the wall time; the per-question ms then include the other's load)")
    ap.add_argument("--e5-only", action="store_true",
                    help="without the English model (KYB_MODEL_EN pointed at nothing): e5 ranks every question")
    args = ap.parse_args()
    modes = [m for m in args.modes.split(",") if m]
    if bad := [m for m in modes if m not in MODES]:
        sys.exit(f"eval_devset: unknown mode(s) {bad}; choose from {list(MODES)}")
    problems = checks.problems()
    if problems:
        sys.exit("eval_devset: the dev set breaks its own rules:\n  " + "\n  ".join(problems))
    for env, name in (("KYB_MODEL", "multilingual-e5-small"), ("KYB_MODEL_EN", "bge-small-en-v1.5")):
        if not os.environ.get(env) and not (env == "KYB_MODEL_EN" and args.e5_only):
            for cand in (ROOT.parent / "shared" / "models" / name, Path("/work/shared/models") / name):
                if cand.is_dir():
                    os.environ[env] = str(cand)
                    break
    if args.e5_only:
        os.environ["KYB_MODEL_EN"] = str(cache_dir(checks.DOCS) / "no-english-model")
        os.environ["KYB_EVAL_E5_ONLY"] = "1"
    docs = checks.load(checks.DOCS)
    questions = checks.load(checks.QUESTIONS)
    if args.kinds:
        wanted = set(args.kinds.split(","))
        questions = [q for q in questions if q["kind"] in wanted]
    if args.split != "all":
        questions = [q for q in questions if checks.split_of(q) == args.split]
    store, prep_s = prepare(docs, args.rebuild, embed=modes != ["lexical"])
    started = time.monotonic()
    rows = ask_in(args.jobs, store, questions, modes, args.verbose)
    ask_s = time.monotonic() - started
    summary = summarize(rows, modes)
    load = os.getloadavg()
    meta = {"documents": len(docs), "questions": len(questions), "split": args.split, "code": str(code_dir()),
            "store": str(store), "model": os.environ.get("KYB_MODEL"), "model_en": os.environ.get("KYB_MODEL_EN"),
            "prepare_s": round(prep_s, 1),
            "ask_s": round(ask_s, 1), "loadavg": [round(x, 2) for x in load]}
    out = args.json or cache_dir(checks.DOCS) / "results.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({"meta": meta, "summary": summary, "questions": rows}, ensure_ascii=False, indent=1))
    print(f"{len(docs)} documents, {len(questions)} questions; code {meta['code']}; "
          f"prepare {prep_s:.1f} s, questions {ask_s:.1f} s; load {load[0]:.2f}")
    print(markdown(summary, modes))
    if args.against:
        print(compare(rows, args.against, modes, args.verbose))
    print(f"\nJSON: {out}")


if __name__ == "__main__":
    main()
