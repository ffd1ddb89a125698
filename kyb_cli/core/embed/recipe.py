"""The embedding recipe: what text a record becomes, the prefixes, and the hash that keys a vector.

Everything that changes what the model is handed lives here, and all of it is part of the
fingerprint (`RECIPE`), so changing the recipe can never serve a vector made by the old one.
A version is embedded as one or more *passages*: a body that fits the model's 512 tokens is one
passage (title, then the body; incidents add service and hosts, as rule "passage text" of the original); a longer
body is cut into overlapping chunks, each carrying the title, so the end of a long record is seen by
vectors too. A version scores by its two best passages (search/semantic.py). Chunks are measured in estimated tokens (CJK
characters count as about one token each, other text about four characters a token), since the
index is built without loading the model's tokenizer.
"""

from __future__ import annotations

import functools
import re
import sys
from collections.abc import Mapping
from itertools import accumulate

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (~5 ms of every `kyb query`)
if TYPE_CHECKING:
    from typing import Any

QUERY_PREFIX = "query: "
PASSAGE_PREFIX = "passage: "
MAX_TOKENS = 512
BODY_CHARS = 1200
RECIPE_VERSION = 3
# Chunks: a body whose estimated size passes CHUNK_UNITS is cut into chunks of CHUNK_UNITS with
# OVERLAP_UNITS of overlap (units: one per CJK/kana/hangul character, 1/4 per other character, so
# ~CHUNK_UNITS tokens), at most MAX_PASSAGES per version (about 30k characters of English).
CHUNK_UNITS = 240
OVERLAP_UNITS = 48
MAX_PASSAGES = 24
# Texts per model run, and padded tokens per run: every text runs alone. The int8 models quantise
# activations with one scale per run, so a text that shared a run got a vector that depended on
# its run-mates (cosine 0.997 to itself alone), and with it the dev set's figures on who embedded
# the store (docs/SEARCH.md "A second, English vector side in the pipeline"); alone, a text gets
# the same vector whoever embeds it. Cost: short texts (29 tokens) 311/s at 16 a run vs 188/s
# alone; ~300-token passages were faster alone already (11.4 vs 9.5 passages/s per core).
BATCH = 1
BATCH_TOKENS = 512

# The fingerprint's recipe half: bump RECIPE_VERSION when passage_text changes shape.
RECIPE: dict[str, Any] = {
    "version": RECIPE_VERSION,
    "query_prefix": QUERY_PREFIX,
    "passage_prefix": PASSAGE_PREFIX,
    "max_tokens": MAX_TOKENS,
    "body_chars": BODY_CHARS,
    "chunks": {"units": CHUNK_UNITS, "overlap": OVERLAP_UNITS, "max": MAX_PASSAGES, "unit": "cjk1-other0.25"},
    "pooling": "mean-attention-mask",
    "normalise": "l2",
    "output": "last_hidden_state",
    # int8 models quantise activations per run, so how texts share a run is part of the maths
    "runs": {"order": "length", "texts": BATCH, "padded_tokens": BATCH_TOKENS},
}


def _get(record: Any, name: str, default: Any = "") -> Any:
    if record.__class__ is dict or isinstance(record, Mapping):  # a doc: no ABC check (a snapshot's every record)
        return record.get(name, default)
    return getattr(record, name, default)


def _header(record: Any) -> str:
    title = str(_get(record, "title") or "").strip()
    key = str(_get(record, "key") or "")
    kind = _get(record, "kind", None)
    if not isinstance(kind, str):
        kind = "incident" if key.startswith("inc-") else ("task" if key.startswith("task-") else "knowledge")
    if kind == "incident":
        service = str(_get(record, "service") or "")
        hosts = ", ".join(_get(record, "hosts", None) or [])
        return f"{title}. Incident on {service} ({hosts}). "
    return f"{title}. "


def passage_text(record: Any) -> str:
    """The first passage of a record (a Record or a mapping), without the prefix (rule "passage text")."""
    return passages(record)[0]


def passages(record: Any, narrow: bool = False) -> list[str]:
    """Every passage of a record's version, in body order (at least one; none has the prefix).
    `narrow`: the caller knows the body holds no character from U+2000 on (see `chunks`)."""
    header = _header(record)
    return [header + chunk for chunk in chunks(str(_get(record, "body") or ""), narrow)]


# The characters _units counts as 1.0: CJK, kana, hangul, compatibility ideographs, full width forms.
_WIDE_CLASS = "[\u2e80-\u9fff\uac00-\ud7af\uf900-\ufaff\uff00-\uffef]"


@functools.cache
def _wide():
    """The CJK/kana/hangul class, compiled on first use: its wide ranges take ~3 ms to compile, a
    tenth of a `kyb query`, which imports this module (the index schema's recipe version) but never
    cuts a passage."""
    return re.compile(_WIDE_CLASS)


def _units(ch: str) -> float:
    o = ord(ch)
    if 0x2E80 <= o <= 0x9FFF or 0xAC00 <= o <= 0xD7AF or 0xF900 <= o <= 0xFAFF or 0xFF00 <= o <= 0xFFEF:
        return 1.0
    return 0.25


class _Quarters:
    """The sequence 0, 0.25, 0.5, ... of length n for bisect: the units of a body without wide
    characters, without walking it (a snippet cuts a long runbook's chunks on every hit it returns)."""

    def __init__(self, n: int) -> None:
        self.n = n

    def __len__(self) -> int:
        return self.n

    def __getitem__(self, i: int) -> float:
        if not 0 <= i < self.n:
            raise IndexError(i)
        return i * 0.25


def _cut(text: str, start: int, end: int) -> int:
    """A cut point near `end` (a paragraph, line, sentence or word boundary in the last third)."""
    if end >= len(text):
        return len(text)
    floor = start + (end - start) * 2 // 3
    for mark in ("\n\n", "\n", ". ", "? ", "! ", "。", "; ", ", ", " "):
        i = text.rfind(mark, floor, end)
        if i > start:
            return i + len(mark)
    return end


def _restart(text: str, back: int, end: int) -> int:
    """Where the next chunk starts: the first line or sentence start after `back`, else a word."""
    for mark in ("\n", ". ", "。", " "):
        i = text.find(mark, back, end)
        if i != -1:
            return i + len(mark)
    return back


def chunks(body: str, narrow: bool = False) -> list[str]:
    """The body's chunks: the whole body when it fits, else overlapping windows (see CHUNK_UNITS).
    `narrow`: the caller knows the body holds no character from U+2000 on, so none of _WIDE_CLASS
    (all from U+2E80): the class is not searched (~3 µs a record of Cyrillic prose, issue 39)."""
    # MAX_PASSAGES chunks never reach past this many characters (CHUNK_UNITS*4 each, less overlap):
    # a 1 MiB body costs no more to cut than a 40 kB one.
    body = body[:MAX_PASSAGES * CHUNK_UNITS * 6]
    wide = 0 if narrow or body.isascii() else len(_wide().findall(body))  # the class compiles in ~3-10 ms: not for ASCII
    if wide * 1.0 + (len(body) - wide) * 0.25 <= CHUNK_UNITS:  # the same sum, exact (quarters)
        return [body]  # most bodies: no per-character walk (it was ~0.25 ms a record, issue 27)
    # units[i]: the units before body[i]; without wide characters that is i / 4, exactly (quarters)
    units = _Quarters(len(body) + 1) if not wide else [0.0, *accumulate(map(_units, body))]
    out: list[str] = []
    start = 0
    import bisect

    while start < len(body) and len(out) < MAX_PASSAGES:
        end = bisect.bisect_right(units, units[start] + CHUNK_UNITS) - 1
        end = _cut(body, start, max(end, start + 1))
        out.append(body[start:end].strip())
        if end >= len(body):
            break
        back = bisect.bisect_left(units, units[end] - OVERLAP_UNITS)
        start = max(start + 1, _restart(body, back, end))
    return [c for c in out if c] or [body[:BODY_CHARS]]


def passage_hashes(record: Any, narrow: bool = False) -> list[str]:
    """The cache key of each passage of a record's version, in order (what the index's vtext holds).
    `narrow`: as `chunks` says. Hashing in bulk: OpenSSL's sha256 (see `sha256`)."""
    import hashlib  # noqa: F401 - loaded, `sha256` takes OpenSSL's (a no-op after the first record)

    return [text_hash(passage_input(p)) for p in passages(record, narrow)]


def passage_input(text: str) -> str:
    """What the model is handed for a passage: the prefix, then the recipe text."""
    return PASSAGE_PREFIX + text


def query_input(question: str) -> str:
    return QUERY_PREFIX + question


def text_hash(model_input: str) -> str:
    """The cache key of one model input (prefix included): sha256 hex of its UTF-8 bytes."""
    return sha256(model_input.encode("utf-8")).hexdigest()


def sha256(data: bytes = b""):
    """A sha256 object of `data`, the same digest either way: hashlib's (OpenSSL) once the process has
    loaded it, else the interpreter's builtin one. Loading hashlib costs a one-shot hybrid `kyb query`
    ~3 ms for its question's one hash; but OpenSSL hashes a 700-byte passage 3.6x and a 3 kB one 5x
    faster than the builtin (1.15 vs 4.16 µs, 3.4 vs 16.4 µs here), so the paths that hash in bulk
    load it first (passage_hashes: a snapshot's or a history build's every version)."""
    loaded = sys.modules.get("hashlib")
    if loaded is not None:
        return loaded.sha256(data)
    global _BUILTIN_SHA256
    if _BUILTIN_SHA256 is None:
        try:
            from _sha2 import sha256 as made  # Python 3.12 on
        except ImportError:
            try:
                from _sha256 import sha256 as made
            except ImportError:  # an interpreter built without them
                from hashlib import sha256 as made
        _BUILTIN_SHA256 = made
    return _BUILTIN_SHA256(data)


_BUILTIN_SHA256 = None
