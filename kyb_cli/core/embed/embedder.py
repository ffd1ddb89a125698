"""The model itself: onnxruntime + tokenizers + numpy, loaded from a directory (rules "model files", "pooling").

Only this module (and the helper process that wraps it) imports numpy and onnxruntime. Inputs are
model inputs, prefixes already added (see recipe.py). Batches are sorted by length so padding is
short; each batch is padded by hand to its own max length (ids 0, mask 0).
"""

from __future__ import annotations

import math
import os
from pathlib import Path

from kyb_cli.core.embed.recipe import BATCH, BATCH_TOKENS, MAX_TOKENS


def _threads() -> int:
    """Runs in parallel: KYB_EMBED_THREADS, else the CPU count capped at 4.

    Each model run uses one thread and runs go to the cores side by side: on 2 cores that gave
    27.6 passages/s against 23.2 for one run at a time on 2 intra-op threads (~250-token passages,
    identical vectors; `python bench/bench_embed.py`)."""
    from kyb_cli.core.settings import env_int

    return env_int("KYB_EMBED_THREADS", max(1, min(4, os.cpu_count() or 1)), minimum=1)


def _session(path: Path):
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.intra_op_num_threads = 1  # parallelism is across runs (see _threads); Run is thread-safe
    options.inter_op_num_threads = 1
    # EXTENDED fuses the int8 MatMulInteger chains (MatMulIntegerToFloat, DynamicQuantizeMatMul),
    # LayerNorm and Gelu: 2x over BASIC here. ALL and a pre-optimised graph measured no better.
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_EXTENDED
    options.log_severity_level = 3
    return ort.InferenceSession(str(path / "model.onnx"), options, providers=["CPUExecutionProvider"])


def _load(path: Path):
    """(tokenizer, session), built at the same time: parsing tokenizer.json (~0.5 s) dominates cold
    start, and building the ONNX session in a thread meanwhile hides the session's ~0.15-0.35 s."""
    import threading

    from tokenizers import Tokenizer

    box: dict = {}

    def build() -> None:
        try:
            box["session"] = _session(path)
        except BaseException as exc:  # re-raised in the caller's thread
            box["error"] = exc

    worker = threading.Thread(target=build, name="kyb-onnx-load", daemon=True)
    worker.start()
    try:
        tokenizer = Tokenizer.from_file(str(path / "tokenizer.json"))
        tokenizer.no_padding()
        tokenizer.enable_truncation(MAX_TOKENS)
    finally:
        worker.join()
    if "error" in box:
        raise box["error"]
    return tokenizer, box["session"]


def runs(lengths: list[int], batch: int = BATCH, budget: int = BATCH_TOKENS) -> list[list[int]]:
    """Split positions of ascending `lengths` into runs: <= batch texts, <= budget padded tokens."""
    out: list[list[int]] = []
    for pos, length in enumerate(lengths):
        if out and len(out[-1]) < batch and (len(out[-1]) + 1) * length <= budget:
            out[-1].append(pos)
        else:
            out.append([pos])
    return out


class ModelLoadError(Exception):
    """The directory does not hold a usable model; the message is one line for a user."""


class Embedder:
    """Turns model inputs into L2-normalised float32 vectors, mean pooled over the attention mask
    (`pooling="mean"`, e5) or the first token's state (`"cls"`, bge; core/embed/models.py)."""

    def __init__(self, path: Path | str, pooling: str = "mean") -> None:
        path = Path(path)
        self.pooling = pooling
        try:
            self.tokenizer, self.session = _load(path)
        except Exception as exc:
            first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            raise ModelLoadError(f"model at {path} does not load: {first[:200]}") from None
        names = {i.name for i in self.session.get_inputs()}
        if not {"input_ids", "attention_mask"} <= names:
            raise ModelLoadError(f"model at {path} does not take input_ids/attention_mask")
        self.wants_token_types = "token_type_ids" in names
        self.output = "last_hidden_state" if any(
            o.name == "last_hidden_state" for o in self.session.get_outputs()) else None
        self._outputs = [self.output] if self.output else None
        self._masks: dict[int, dict] = {}  # question length -> its fixed inputs (_fixed)
        self.path = path
        self.dim = int(self.embed(["query: probe"]).shape[1])

    def question(self, text: str) -> bytes:
        """One model input's vector as little-endian float32 bytes: the arithmetic of _run on one text
        (its own length, no padding; mean pooling sums the rows in the same order and divides by the
        same float32 count, the norm is linalg.norm's own sum of squares, its square root rounded to
        float32 once either way) in fewer numpy steps and no copies after the run: right after a model
        run each numpy call is slow (its code and data were evicted), 0.32 -> 0.2 ms of CPU for e5's
        steps, 0.23 -> 0.15 for bge's. Byte for byte the old vectors (tests/test_embed_question_path.py)."""
        import numpy as np

        ids = np.array([self.tokenizer.encode(text).ids], dtype=np.int64)
        n = ids.shape[1]
        feed = {"input_ids": ids, **self._fixed(n)}
        hidden = self.session.run(self._outputs, feed)[0][0]
        if self.pooling == "cls":
            pooled = hidden[0]
        else:
            pooled = np.add.reduce(hidden, axis=0)
            pooled /= np.float32(max(n, 1))
        norm = math.sqrt(np.add.reduce(pooled * pooled))  # float32 sum; its root rounds to np.sqrt's
        if norm:  # a zero vector is left as it is (rule "pooling")
            pooled /= norm  # a Python float divides a float32 array as float32 (NEP 50)
        return pooled.astype("<f4", copy=False).tobytes()

    def _fixed(self, n: int) -> dict:
        """The attention mask (ones) and token types (zeros) of a question of n tokens: made once per
        length and kept, read-only (onnxruntime only reads its inputs)."""
        found = self._masks.get(n)
        if found is None:
            import numpy as np

            found = {"attention_mask": np.ones((1, n), dtype=np.int64)}
            if self.wants_token_types:
                found["token_type_ids"] = np.zeros((1, n), dtype=np.int64)
            for array in found.values():
                array.setflags(write=False)
            self._masks[n] = found
        return found

    def _run(self, encodings):
        import numpy as np

        if len(encodings) == 1:  # a question: its own length, no padding (the same arrays, made at once)
            ids = np.array([encodings[0].ids], dtype=np.int64)
            mask = np.ones_like(ids)
        else:
            width = max(len(e.ids) for e in encodings)
            ids = np.zeros((len(encodings), width), dtype=np.int64)
            mask = np.zeros((len(encodings), width), dtype=np.int64)
            for row, enc in enumerate(encodings):
                ids[row, :len(enc.ids)] = enc.ids
                mask[row, :len(enc.ids)] = 1
        feed = {"input_ids": ids, "attention_mask": mask}
        if self.wants_token_types:
            feed["token_type_ids"] = np.zeros_like(ids)
        hidden = self.session.run([self.output] if self.output else None, feed)[0]
        if self.pooling == "cls":
            pooled = hidden[:, 0, :]
        else:
            weights = mask[:, :, None].astype(np.float32)
            pooled = (hidden * weights).sum(axis=1) / np.maximum(weights.sum(axis=1), 1.0)
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        norms[norms == 0] = 1.0  # zero vectors are left as they are (rule "pooling")
        return (pooled / norms).astype(np.float32)

    def embed(self, inputs: list[str], batch: int = BATCH, budget: int = BATCH_TOKENS):
        """(len(inputs), dim) float32, in input order; runs of texts sorted by token length, at most
        `batch` texts and `budget` padded tokens each (a longer text runs alone)."""
        import numpy as np

        if not inputs:
            return np.zeros((0, getattr(self, "dim", 0)), dtype=np.float32)
        # One text (a question) is encoded on this thread: encode_batch hands even one text to the
        # tokenizers' rayon pool and waits for a free core, which the other model holds in a door's
        # hybrid answer (3.2 ms at load 4, 1.2 at load 2, 0.27 quiet: 0.5 / 0.4 / 0.2 encoded
        # here; identical ids on the dev set's 2,097 texts; bench/bench_door_hybrid.py --stages).
        if len(inputs) == 1:  # nothing to sort or split: the run's rows are the answer
            return self._run([self.tokenizer.encode(inputs[0])])
        encodings = self.tokenizer.encode_batch(list(inputs))
        order = sorted(range(len(inputs)), key=lambda i: len(encodings[i].ids))
        chunks = [[order[j] for j in chunk] for chunk in runs([len(encodings[i].ids) for i in order], batch, budget)]

        def run(picked: list[int]):
            return self._run([encodings[i] for i in picked])

        if len(chunks) == 1 or _threads() == 1:
            results = map(run, chunks)
        else:
            from concurrent.futures import ThreadPoolExecutor

            with ThreadPoolExecutor(max_workers=_threads(), thread_name_prefix="kyb-embed") as pool:
                results = list(pool.map(run, chunks))
        out = [None] * len(inputs)
        for picked, vectors in zip(chunks, results):
            for i, vec in zip(picked, vectors):
                out[i] = vec
        return np.stack(out)

    def embed_bytes(self, inputs: list[str]) -> list[bytes]:
        """The same as embed(), each vector as little-endian float32 bytes (the cache's format)."""
        if len(inputs) == 1:  # one text (a question; or one passage): question()'s arithmetic is _run's on it
            return [self.question(inputs[0])]
        return [vec.astype("<f4").tobytes() for vec in self.embed(inputs)]
