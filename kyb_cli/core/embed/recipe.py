"""The embedding recipe: what text a record becomes, the prefixes, and the hash that keys a vector.

Everything that changes what the model is handed lives here, and all of it is part of the
fingerprint (`RECIPE`), so changing the recipe can never serve a vector made by the old one.
Passage text follows rule "passage text" of the original: title, then the first 1200 characters of the body;
incidents add service and hosts.
"""

from __future__ import annotations

import hashlib
from typing import Any, Mapping

QUERY_PREFIX = "query: "
PASSAGE_PREFIX = "passage: "
MAX_TOKENS = 512
BODY_CHARS = 1200
RECIPE_VERSION = 1
# Texts per model run, and padded tokens per run. Long passages run alone: measured 11.4 vs 9.5
# passages/s per core for ~300-token texts at batch 1 vs 16, and the int8 model quantises
# activations with one scale per run, so a text alone gets the same vector whatever its
# neighbours. Short texts still share a run (29-token texts: 311/s at 16 vs 188/s at 1).
BATCH = 16
BATCH_TOKENS = 512

# The fingerprint's recipe half: bump RECIPE_VERSION when passage_text changes shape.
RECIPE: dict[str, Any] = {
    "version": RECIPE_VERSION,
    "query_prefix": QUERY_PREFIX,
    "passage_prefix": PASSAGE_PREFIX,
    "max_tokens": MAX_TOKENS,
    "body_chars": BODY_CHARS,
    "pooling": "mean-attention-mask",
    "normalise": "l2",
    "output": "last_hidden_state",
    # int8 models quantise activations per run, so how texts share a run is part of the maths
    "runs": {"order": "length", "texts": BATCH, "padded_tokens": BATCH_TOKENS},
}


def _get(record: Any, name: str, default: Any = "") -> Any:
    if isinstance(record, Mapping):
        return record.get(name, default)
    return getattr(record, name, default)


def passage_text(record: Any) -> str:
    """The recipe text of a record (a Record or a mapping), without the prefix (rule "passage text")."""
    title = str(_get(record, "title") or "").strip()
    body = str(_get(record, "body") or "")[:BODY_CHARS]
    key = str(_get(record, "key") or "")
    kind = _get(record, "kind", None)
    if not isinstance(kind, str):
        kind = "incident" if key.startswith("inc-") else ("task" if key.startswith("task-") else "knowledge")
    if kind == "incident":
        service = str(_get(record, "service") or "")
        hosts = ", ".join(_get(record, "hosts", None) or [])
        return f"{title}. Incident on {service} ({hosts}). {body}"
    return f"{title}. {body}"


def passage_input(text: str) -> str:
    """What the model is handed for a passage: the prefix, then the recipe text."""
    return PASSAGE_PREFIX + text


def query_input(question: str) -> str:
    return QUERY_PREFIX + question


def text_hash(model_input: str) -> str:
    """The cache key of one model input (prefix included): sha256 hex of its UTF-8 bytes."""
    return hashlib.sha256(model_input.encode("utf-8")).hexdigest()
