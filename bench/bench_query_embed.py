"""One new question's embedding, in-process, both models (e5 and bge): where its CPU goes, and
onnxruntime session settings A/B against the shipped session, alternating question by question.

    KYB_MODEL=… KYB_MODEL_EN=… python bench/bench_query_embed.py [--n 200] [--rounds 2] [--variants base,all,noarena]

Questions: the dev set's (bench/evalset/questions.jsonl, then also.jsonl), each with its model's
prefix. Prints per model: the steps' p50 thread CPU in µs of the old path (tokenizer encode, the
numpy feed, session.run, pooling + normalise, the bytes) and of the shipped whole
(`embed_bytes([text])`), then for each variant the p50 wall and CPU of one question's whole
embedding (tokenizer to bytes), the part of it outside session.run, and how many of the n vectors are byte-identical to the shipped
path's. Variant `old` is the path before Embedder.question (kept here verbatim), the others the
shipped path on a session with one setting changed. Variants run in turn per question (which goes first
alternates), so the machine's load falls on all alike; `uptime` is printed before and after.
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
sys.path.insert(0, str(ROOT))

MODELS = (("KYB_MODEL", "multilingual-e5-small", "mean", "query: "),
          ("KYB_MODEL_EN", "bge-small-en-v1.5", "cls", "Represent this sentence for searching relevant passages: "))


def questions(n: int) -> list[str]:
    out: list[str] = []
    for name in ("questions.jsonl", "also.jsonl"):
        for line in (ROOT / "bench" / "evalset" / name).read_text().splitlines():
            row = json.loads(line)
            for q in [row["query"]] if "query" in row else row.get("also", []):
                if q not in out:
                    out.append(q)
    return out[:n]


class Timed:
    """A session whose run's CPU (the last call's) is kept: what the Python around it costs is the rest."""

    def __init__(self, session, clock) -> None:
        self.session, self.clock, self.cpu = session, clock, 0.0

    def run(self, *args):
        c0 = self.clock()
        try:
            return self.session.run(*args)
        finally:
            self.cpu = self.clock() - c0


def old_path(model, text: str) -> bytes:
    """One question as Embedder.embed_bytes made it before Embedder.question (b194666, verbatim),
    on the shipped session: the variant `old`."""
    import numpy as np

    encodings = [model.tokenizer.encode(text)]
    ids = np.array([encodings[0].ids], dtype=np.int64)
    mask = np.ones_like(ids)
    feed = {"input_ids": ids, "attention_mask": mask}
    if model.wants_token_types:
        feed["token_type_ids"] = np.zeros_like(ids)
    hidden = model.session.run([model.output] if model.output else None, feed)[0]
    if model.pooling == "cls":
        pooled = hidden[:, 0, :]
    else:
        weights = mask[:, :, None].astype(np.float32)
        pooled = (hidden * weights).sum(axis=1) / np.maximum(weights.sum(axis=1), 1.0)
    norms = np.linalg.norm(pooled, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return [vec.astype("<f4").tobytes() for vec in (pooled / norms).astype(np.float32)][0]


def variant_options(name: str):
    """SessionOptions of a variant: the shipped ones (embedder._session) with one setting changed."""
    import onnxruntime as ort

    o = ort.SessionOptions()
    o.intra_op_num_threads = 1
    o.inter_op_num_threads = 1
    o.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_EXTENDED
    o.log_severity_level = 3
    if name == "all":
        o.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    elif name == "noarena":
        o.enable_cpu_mem_arena = False
    elif name == "nopattern":
        o.enable_mem_pattern = False
    elif name == "intra2":
        o.intra_op_num_threads = 2
    elif name == "intra2nospin":
        o.intra_op_num_threads = 2
        o.add_session_config_entry("session.intra_op.allow_spinning", "0")
    elif name == "noprepack":
        o.add_session_config_entry("session.disable_prepacking", "1")
    elif name not in ("base", "old"):
        raise SystemExit(f"unknown variant {name}")
    return o


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--n", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=2, help="passes over the questions (the first warms)")
    parser.add_argument("--variants", default="old,base",
                        help="old (the path before Embedder.question), base (shipped), all, noarena, "
                             "nopattern, intra2, intra2nospin, noprepack")
    args = parser.parse_args()
    import numpy as np
    import onnxruntime as ort

    from kyb_cli.core.embed.embedder import Embedder

    print("load:", subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip())
    qs = questions(args.n)
    names = args.variants.split(",")
    for env, default, pooling, prefix in MODELS:
        path = Path(os.environ.get(env) or ROOT.parent / "shared" / "models" / default)
        model = Embedder(path, pooling=pooling)
        sessions = {v: ort.InferenceSession(str(path / "model.onnx"), variant_options(v),
                                            providers=["CPUExecutionProvider"]) for v in names if v != "old"}
        steps: dict[str, list[float]] = {k: [] for k in ("tokenize", "feed", "run", "pool", "bytes", "whole")}
        wall: dict[str, list[float]] = {v: [] for v in names}
        cpu: dict[str, list[float]] = {v: [] for v in names}
        outside: dict[str, list[float]] = {v: [] for v in names}
        digests: dict[str, list[str]] = {v: [] for v in names}
        clock = time.thread_time if all("intra2" not in v for v in names) else time.process_time
        for rnd in range(args.rounds):
            for i, q in enumerate(qs):
                text = prefix + q
                now = time.thread_time
                t0 = now()
                enc = model.tokenizer.encode(text)
                t1 = now()
                ids = np.array([enc.ids], dtype=np.int64)
                mask = np.ones_like(ids)
                feed = {"input_ids": ids, "attention_mask": mask}
                if model.wants_token_types:
                    feed["token_type_ids"] = np.zeros_like(ids)
                t2 = now()
                hidden = model.session.run([model.output] if model.output else None, feed)[0]
                t3 = now()
                if pooling == "cls":
                    pooled = hidden[:, 0, :]
                else:
                    w = mask[:, :, None].astype(np.float32)
                    pooled = (hidden * w).sum(axis=1) / np.maximum(w.sum(axis=1), 1.0)
                norms = np.linalg.norm(pooled, axis=1, keepdims=True)
                norms[norms == 0] = 1.0
                vec = (pooled / norms).astype(np.float32)[0]
                t4 = now()
                vec.astype("<f4").tobytes()
                t5 = now()
                whole = model.embed_bytes([text])[0]
                t6 = now()
                order = names if (i + rnd) % 2 == 0 else names[::-1]
                for v in order:
                    kept = model.session
                    model.session = Timed(kept if v == "old" else sessions[v], clock)
                    c0, w0 = clock(), time.perf_counter()
                    blob = old_path(model, text) if v == "old" else model.embed_bytes([text])[0]
                    w1, c1 = time.perf_counter(), clock()
                    outside[v].append(c1 - c0 - model.session.cpu)
                    model.session = kept
                    if rnd == args.rounds - 1:
                        wall[v].append(w1 - w0)
                        cpu[v].append(c1 - c0)
                        digests[v].append(hashlib.sha256(blob).hexdigest())
                if rnd == args.rounds - 1:
                    for k, a, b in (("tokenize", t0, t1), ("feed", t1, t2), ("run", t2, t3), ("pool", t3, t4),
                                    ("bytes", t4, t5), ("whole", t5, t6)):
                        steps[k].append(b - a)
                    digests.setdefault("shipped", []).append(hashlib.sha256(whole).hexdigest())
        print(f"{path.name}: {len(qs)} questions, steps p50 µs: " +
              ", ".join(f"{k} {statistics.median(v) * 1e6:.0f}" for k, v in steps.items()))
        for v in names:
            same = sum(a == b for a, b in zip(digests[v], digests["shipped"]))
            print(f"  {v:14s} p50 {statistics.median(wall[v]) * 1e3:6.3f} ms wall, "
                  f"{statistics.median(cpu[v]) * 1e3:6.3f} ms CPU ({clock.__name__}), outside "
                  f"session.run {statistics.median(outside[v]) * 1e6:4.0f} µs; "
                  f"identical {same}/{len(qs)}")
    print("load:", subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip())


if __name__ == "__main__":
    main()
