"""Embeddings for hybrid search: the model, the recipe, the shared vector cache, the warm helper.

Importing this package is cheap (no numpy, no onnxruntime); the model is loaded only on a cache miss,
preferably in the warm helper process (helper.py), else in-process. Nothing here raises for a missing
or broken model: callers get a one-line reason and go lexical.

API for the index and the fusion step (every call takes `spec`, a model of models.py; default e5):

    locate_model(spec) -> ModelLocation | str      # its setting > its config key > default dir; str = why not
    passage_text(record) -> str                     # Rule "passage text" recipe text (no prefix)
    passage_input(text) / query_input(q) -> str     # what the model is handed (prefix added)
    text_hash(model_input) -> str                   # sha256 hex: the cache key of one model input
    current_fingerprint(spec) -> (fingerprint | None, reason | None, location)   # model files + recipe
    query_vector(q, spec) -> (bytes | None, reason | None)         # float32 LE; cache -> helper -> in-process
    query_vectors(q, specs) -> [(fingerprint | None, bytes | None, reason | None)]  # the models side by side
    start_query(q, specs) / finish_query(started)  # query_vectors in two halves: look up, then run
    finish_beside(started) -> future                # finish_query on a kept worker thread (a door)
    write_pending(batched)                          # a door's new vectors written (batched: after its search)
    resident(on)                                    # a long-lived door holds its models itself (no helper hop)
    passage_vectors(texts, budget_s, spec=) -> PassageVectors      # texts = passage_text() results
    available() -> [(spec, fingerprint, location)], {name: reason} # the models found, and why not the others
        .vectors: {text_hash(passage_input(text)): bytes}, .pending: int, .fingerprint, .reason
    off_message(reason) -> str                      # the one stderr line when semantic search is off
    vector_from_bytes(b) -> list[float]             # without numpy (struct)

Vectors are L2-normalised, so cosine = dot product. The dimension is len(bytes) // 4.
"""

from __future__ import annotations

import _thread
import os
import time
from kyb_cli.core.plain import Factory, plain

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (~5 ms of every `kyb query`)

from kyb_cli.core.embed.recipe import passage_input, passage_text, query_input, text_hash

if TYPE_CHECKING:
    from pathlib import Path  # pathlib only for annotations: importing it (urllib.parse, ipaddress) was ~4 ms of a `kyb query`
    from kyb_cli.core.embed.files import ModelLocation
    from kyb_cli.core.embed.models import ModelSpec

# Imported on first use (PEP 562): the index imports this package for the recipe's version on every
# `kyb query`, which needs neither the model files nor the registry (issue 27: the CLI's floor).
_LAZY = {"ModelLocation": "files", "locate_model": "files", "E5": "models", "MODELS": "models",
         "ModelSpec": "models"}


def __getattr__(name: str):
    area = _LAZY.get(name)
    if area is None:
        raise AttributeError(f"module 'kyb_cli.core.embed' has no attribute '{name}'")
    import importlib

    value = getattr(importlib.import_module(f"kyb_cli.core.embed.{area}"), name)
    globals()[name] = value
    return value


def _e5():
    from kyb_cli.core.embed.models import E5

    return E5

__all__ = [
    "ModelLocation", "locate_model", "passage_text", "passage_input", "query_input", "text_hash",
    "current_fingerprint", "query_vector", "passage_vectors", "PassageVectors", "off_message",
    "vector_from_bytes", "open_cache", "available", "ModelSpec", "E5", "MODELS",
]

_CACHE = None
_EMBEDDERS: dict[tuple[str, str, str], object] = {}  # (directory, fingerprint, model name) -> Embedder
_LOADING: dict[str, object] = {}  # model directory -> the lock its loading holds
_RESIDENT = False  # a long-lived door (`kyb mcp`, `kyb serve`): its questions are embedded in-process


def resident(on: bool = True) -> None:
    """A long-lived door calls this once (through index/warm.keep): questions are embedded by models
    this process holds, not through the helper. The hop cost more than the model: a short question
    is 2 ms of e5 in-process, 3.7 ms through the helper (socket, JSON, the helper's own wake-up).
    The models loaded are keyed by their fingerprint (_in_process), so a changed model is loaded anew.
    The price is memory: each such process holds its models (~640 MB with both, against ~80 MB and one
    shared helper), so KYB_EMBED_RESIDENT=off keeps the hop for machines that run many servers."""
    from kyb_cli.core.settings import env_off

    global _RESIDENT
    _RESIDENT = on and not env_off("KYB_EMBED_RESIDENT")
    if _RESIDENT:  # its new question vectors wait in memory (_write_later): the exit writes what is left
        import atexit

        atexit.unregister(write_pending)  # once, however often a door says so
        atexit.register(write_pending)


def is_resident() -> bool:
    """Whether this process holds its models itself (a door: `resident()`); a door's search reads it."""
    return _RESIDENT


# How to get a model, the offline way first: `import` copies a model directory you already have
# (no network); `pull` downloads it.
MODEL_FIX = "kyb model import DIR (a multilingual-e5-small directory you have), kyb model pull " \
    "(downloads it) or set KYB_MODEL"


def off_message(reason: str) -> str:
    return f"semantic search off: {reason} — fix: {MODEL_FIX}"


def open_cache():
    """The user's shared vector cache (one connection per process), with every vector this process
    made written first, so whoever reads it sees them."""
    write_pending()
    return _cache()


def _cache():
    """The cache without writing a door's pending question vectors: a question's own look-up
    (start_query: it reads them from memory) and the model files' digests (current_fingerprint)."""
    global _CACHE
    from kyb_cli.core.embed.cache import VectorCache, default_cache_path

    path = default_cache_path()
    if _CACHE is None or _CACHE.path != path:
        _CACHE = VectorCache(path)
    return _CACHE


def current_fingerprint(spec: ModelSpec | None = None, cache=None) -> tuple[str | None, str | None, ModelLocation | None]:
    """(fingerprint, reason, location): the fingerprint of model `spec` (default e5), or why there is none.
    `cache`: open_cache()'s, when the caller holds it already."""
    from kyb_cli.core.embed.files import fingerprint, locate_model

    spec = spec or _e5()
    location = locate_model(spec)
    if isinstance(location, str):
        return None, location, None
    try:
        return fingerprint(location, cache or _cache()), None, location
    except OSError as exc:
        return None, f"cannot read model files in {location.path}: {exc.strerror}", location


def available() -> tuple[list[tuple[ModelSpec, str, ModelLocation]], dict[str, str]]:
    """The registry's models that are found here, in embedding order (e5 first), and for each
    model that is not, the one-line reason."""
    from kyb_cli.core.embed.models import MODELS

    found, missing = [], {}
    for spec in MODELS:
        fp, reason, location = current_fingerprint(spec)
        if fp is None:
            missing[spec.name] = reason or "no model"
        else:
            found.append((spec, fp, location))
    return found, missing


def _in_process(location: ModelLocation, fingerprint: str):
    """The model loaded in this process (one copy per model directory, of its current fingerprint).
    A door answers from several threads: one of them loads a model, the others wait for it."""
    key = (str(location.path), fingerprint, location.spec.name)
    found = _EMBEDDERS.get(key)
    if found is not None:
        return found
    with _LOADING.setdefault(key[0], _thread.allocate_lock()):
        found = _EMBEDDERS.get(key)
        if found is None and location.spec.package:
            from kyb_cli.core.embed.package import PackageEmbedder

            found = _EMBEDDERS[key] = PackageEmbedder(location.spec)
        if found is None:
            from kyb_cli.core.embed.embedder import Embedder

            for old in [k for k in list(_EMBEDDERS) if k[0] == key[0] and k[2] == key[2]]:
                _EMBEDDERS.pop(old, None)  # one loaded copy per model directory and model
            found = _EMBEDDERS[key] = Embedder(location.path, pooling=location.spec.pooling)
    return found


def _embed(location: ModelLocation, fingerprint: str, inputs: list[str]) -> list[bytes]:
    """Through the helper when it can serve, else in-process. Raises ModelLoadError for a bad model."""
    from kyb_cli.core.embed import client

    if client.enabled() and not _RESIDENT:
        vectors, _why = client.embed_via_helper(location.path, fingerprint, inputs, location.spec.pooling)
        if vectors is not None:
            return vectors
    return _in_process(location, fingerprint).embed_bytes(inputs)


def query_vector(question: str, spec: ModelSpec | None = None) -> tuple[bytes | None, str | None]:
    """The query's vector (float32 bytes) under `spec` (default e5), or (None, reason). A cached query
    costs no model load."""
    _fp, vector, reason = query_vectors(question, [spec or _e5()])[0]
    return vector, reason


def query_vectors(question: str, specs: list[ModelSpec]) -> list[tuple[str | None, bytes | None, str | None]]:
    """(fingerprint, vector, reason) of the question under each model of `specs`, in that order: the
    cached ones at once, the others embedded side by side (one thread per model beyond the first:
    onnxruntime and the helper's socket both let the GIL go, so two models cost about one on 2 cores)."""
    return finish_query(start_query(question, specs))


def start_query(question: str, specs: list[ModelSpec]):
    """query_vectors' first half: each model's fingerprint and cached vector, no model run. A door
    looks both models up on its answering thread before handing one model's run to another thread
    (finish_beside): looked up on two threads at once, each thread's stats and cache read gave
    the GIL to the other and waited for it back (~0.7 ms before the models started, 108 runbooks)."""
    out: list = []
    asked: list[tuple[int, object, str, str, str]] = []  # (position, location, fingerprint, key, model input)
    cache = None  # opened once a model is found, then handed to the others' fingerprints
    for pos, spec in enumerate(specs):
        fp, reason, location = current_fingerprint(spec, cache)
        cache = cache or (_cache() if fp is not None else None)
        out.append((None, None, reason) if fp is None else (fp, None, None))
        if fp is not None:
            model_input = spec.query_input(question)
            asked.append((pos, location, fp, text_hash(model_input), model_input))
    kept = {(job[2], job[3]): _pending_hit(job[2], job[3]) for job in asked} if _PENDING else {}
    wanted = [(fp, key) for _p, _l, fp, key, _i in asked if not kept.get((fp, key))]
    hits = cache.get_each(wanted) if wanted else {}  # one statement
    todo = []
    for job in asked:
        hit = kept.get((job[2], job[3])) or hits.get((job[2], job[3]))
        out[job[0]] = (job[2], hit, None)
        if hit is None:
            todo.append(job)
    return out, todo, cache


def one_of(started, pos: int):
    """start_query's look-ups of several models, the model at `pos` alone: what finish_query or
    finish_beside of that model takes (a door looks both models up at once, then runs them apart)."""
    out, todo, cache = started
    return [out[pos]], [(0, *job[1:]) for job in todo if job[0] == pos], cache


def finish_query(started) -> list[tuple[str | None, bytes | None, str | None]]:
    """query_vectors' second half: start_query's models without a cached vector run (side by side),
    their vectors written to the cache (a door: on a kept worker thread, _write_later)."""
    out, todo, cache = started
    if not todo:
        return out  # no model, or every vector cached: embedder.py (and its pathlib, ~4 ms) not imported
    from kyb_cli.core.embed.embedder import ModelLoadError

    def run(job, worker: bool = False) -> tuple[bytes | None, str | None]:
        _pos, location, fp, _key, model_input = job
        try:
            vector = _embed(location, fp, [model_input])[0]
            if worker:
                _then(fp, vector)
            return vector, None
        except ModelLoadError as exc:
            return None, str(exc)
        except Exception as exc:  # never a traceback for a query
            return None, f"embedding failed: {str(exc)[:200]}"

    results = _side_by_side(run, todo)
    made: list[tuple[str, str, bytes]] = []
    for (pos, _location, fp, key, _input), (vector, reason) in zip(todo, results):
        out[pos] = (fp, vector, reason)
        if vector is not None:
            made.append((fp, key, vector))
    if made and _RESIDENT:
        _write_later(cache, made)
    elif made:
        cache.put_each(made)  # every model's vector in one commit
    return out


_PENDING: list = []  # a door's new vectors not written yet: [(cache, rows)] (write_pending)
_SINCE = [0.0]  # when the oldest of them was made (time.monotonic)
# A door writes its new question vectors once this many rows wait, or the oldest waited this long
# (seconds), checked at each answer's end; the rest at exit. One commit of the cache was ~0.15-0.3 ms
# on every new question's answering thread (bench_door_hybrid --timeline, 108 runbooks).
WRITE_BATCH = 16
WRITE_AFTER_S = 2.0


def _write_later(cache, made: list[tuple[str, str, bytes]]) -> None:
    """A door's new question: its vectors are kept in memory (a question asked again reads them
    there, _pending_hit) and written with others' in one commit (write_pending). Made on a worker
    thread as each model's vector came, the writes took the GIL from the answering thread while it
    ranked (108 runbooks, paired -0.29 ms an answer against the worker's write). open_cache() writes
    them first, so every other reader of the cache sees them as before; the door's exit writes what
    is left. A door killed outright loses them: a later question pays an embedding."""
    if not _PENDING:
        _SINCE[0] = time.monotonic()
    _PENDING.append((cache, made))


def _pending_hit(fp: str, key: str) -> bytes | None:
    """A vector this door made and has not written yet, by (fingerprint, text hash)."""
    for _cache_of, rows in list(_PENDING):
        for row_fp, row_key, vector in rows:
            if row_key == key and row_fp == fp:
                return vector
    return None


def write_pending(batched: bool = False) -> None:
    """The vectors kept by _write_later written, each cache's in one commit. `batched` (a door's
    answer end, pipeline.search): only once WRITE_BATCH rows wait or the oldest waited WRITE_AFTER_S."""
    if batched and (not _PENDING or (sum(len(rows) for _c, rows in list(_PENDING)) < WRITE_BATCH
                                     and time.monotonic() - _SINCE[0] < WRITE_AFTER_S)):
        return
    jobs: dict = {}
    while _PENDING:
        try:
            cache, made = _PENDING.pop(0)
        except IndexError:  # another thread took the last one
            break
        jobs.setdefault(id(cache), (cache, []))[1].extend(made)
    for cache, rows in jobs.values():
        try:
            cache.put_each(rows)
        except Exception:
            pass


_POOL = None  # the threads that run the other models' questions, kept: a new thread per run cost 4 ms
_AFTER = None  # called (fingerprint, vector) on a worker thread after it made a question's vector


def _then(fp: str, vector: bytes) -> None:
    """On a worker thread that made a question's vector: the answer's next step for it (door_scan.prime)."""
    if _AFTER is not None:
        try:
            _AFTER(fp, vector)
        except Exception:  # only ever a head start: the answering thread makes it anyway
            pass


def finish_beside(started):
    """finish_query of one model's `started` look-up on a kept worker thread, followed there by the
    answer's next step for its vector (_then), as every model but the first of query_vectors: a future
    of its (fingerprint, vector, reason). A door's English question (search/pipeline._semantic): the
    answering thread runs e5 and ranks by it meanwhile instead of waiting for the slower English run
    and its product (10k keys: ~2 ms an answer)."""

    def run():
        got = finish_query(started)[0]
        if got[1] is not None:
            _then(got[0], got[1])
        return got

    return _pool().submit(run)


def after_query_vector(fn) -> None:
    """`fn(fingerprint, vector)` runs on the worker thread that made a question's vector (every
    model's but the first, which runs on the caller's thread): a door's search starts that model's
    ranking there, side by side with the first model (search/door_scan.prime)."""
    global _AFTER
    _AFTER = fn


def _pool():
    global _POOL
    if _POOL is None:
        from concurrent.futures import ThreadPoolExecutor

        _POOL = ThreadPoolExecutor(max_workers=2, thread_name_prefix="kyb-query-embed")
    return _POOL


def _side_by_side(run, jobs: list) -> list:
    """run(job) for each job, the first in this thread and the others on kept worker threads."""
    if len(jobs) < 2:
        return [run(job) for job in jobs]
    others = [_pool().submit(run, job, True) for job in jobs[1:]]
    first = run(jobs[0])
    return [first, *(f.result() for f in others)]


@plain
class PassageVectors:
    """Vectors by text hash, how many are still missing, and the fingerprint they belong to."""

    vectors: dict[str, bytes] = Factory(dict)
    pending: int = 0
    fingerprint: str | None = None
    reason: str | None = None


def passage_vectors(texts: list[str], budget_s: float | None = None, batch: int = 16,
                    progress=None, spec: ModelSpec | None = None) -> PassageVectors:
    """Vectors for recipe texts under `spec`: cached ones at once, then missing ones in batches until the budget.

    Keys are text_hash(passage_input(text)) for every model (models.py: the passage's key, the
    fingerprint tells the models apart); the model is handed spec.passage_input(text).
    `budget_s=None` embeds everything; a batch is not
    started when the time spent plus the last batch's time would pass the budget. `progress(done,
    total)` is called after each batch. Missing vectors are counted in `pending`.
    """
    from kyb_cli.core.embed.embedder import ModelLoadError

    spec = spec or _e5()
    fp, reason, location = current_fingerprint(spec)
    inputs = {text_hash(passage_input(t)): spec.passage_input(t) for t in texts}
    if fp is None:
        return PassageVectors({}, len(inputs), None, reason)
    cache = open_cache()
    found = cache.get_many(fp, list(inputs))
    missing = sorted((h for h in inputs if h not in found), key=lambda h: len(inputs[h]))
    result = PassageVectors(found, len(missing), fp, None)
    start = time.monotonic()
    last = 0.0
    done = 0
    for i in range(0, len(missing), batch):
        if budget_s is not None and (time.monotonic() - start) + last > budget_s:
            break
        chunk = missing[i:i + batch]
        t0 = time.monotonic()
        try:
            vectors = _embed(location, fp, [inputs[h] for h in chunk])
        except ModelLoadError as exc:
            result.reason = str(exc)
            break
        except Exception as exc:
            result.reason = f"embedding failed: {str(exc)[:200]}"
            break
        last = time.monotonic() - t0
        new = dict(zip(chunk, vectors))
        cache.put_many(fp, new)
        result.vectors.update(new)
        result.pending -= len(new)
        done += len(new)
        if progress is not None:
            progress(done, len(missing))
    return result


def vector_from_bytes(blob: bytes) -> list[float]:
    import struct

    return list(struct.unpack(f"<{len(blob) // 4}f", blob))
