"""`kyb recall`: what the store holds that bears on a prompt, only when the answer is confident,
and the prompt hook's answer built from it (`kyb recall --hook-json`, issue 43).

Here: the hit as recall gives it (key, title, sha, state, a short snippet, its freshness), the text
a hook adds to the model's context (framed as reference data that may be stale, as the session-start
digest is: tools/context.py), and the per-session memory that keeps the hook from saying the same
record twice or more than `SESSION_BYTES` in one session: a small JSON file per session under the
user's cache dir, pruned by age.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from pathlib import Path
from typing import Any

from kyb_cli.core.search.snippet import LIMIT
from kyb_cli.core.tools.context import BEGIN, END, HEADER

MAX_HITS = 3  # what one prompt may bring in: a handful of records, never a listing
SESSION_BYTES = 8000  # injected per session at most (UTF-8 bytes of additionalContext)
SESSION_MAX_AGE = 7 * 24 * 3600  # a session file older than this is removed when another is written
PROMPT_CHARS = 2000  # the part of a prompt recall searches with (a pasted log is not a question)
# The prompt hook's bar, above `strong` (it speaks unasked, on every prompt, by words only): the top
# hit holds HOOK_COVER of the prompt's word weight and its BM25 is HOOK_LEAD times the next strong
# hit's; a further hit is kept when it holds HOOK_COVER too. The prompt is weighed without the words of
# asking (REQUEST_WORDS: "change the checkout service port" as "the checkout service port"). Chosen
# on the dev set's fit half with bench/bench_recall.py's request frames; measured on all of it:
# precision of injected records 0.93 (check half 0.92), on-topic prompts answered 0.28 (0.21 before
# the request words were left out), off-topic injections 0 of 47; `strong` alone injects at 0.42.
# With a second frame set (--frames b, written this session, the word list written knowing it):
# 0.88, answered 0.20, off-topic 0 (before the change 0.90 and 0.17).
REQUEST_WORDS = frozenset("""
please pls can could would you help me need want look into check fix change switch update handle
let's lets quick question hey hi hello thanks sure ok okay asap today now
""".split())
HOOK_COVER = 0.65
HOOK_LEAD = 1.6
HIT_FIELDS = ("key", "title", "kind", "sha", "state", "snippet", "stale", "verified", "strength", "found_by")


def shaped(response: dict[str, Any], limit: int = MAX_HITS) -> dict[str, Any]:
    """The recall answer from a strong-only query response: `{confident, count, hits}`, each hit
    with key, title, kind, sha, state, a snippet (the query's, at most snippet.LIMIT characters), `stale` and
    `verified` (its freshness), `strength` and `found_by`. Not confident: no hits at all."""
    confident = bool(response.get("confident"))
    hits = []
    for h in response.get("hits", ())[:limit] if confident else ():
        hit = {f: h.get(f) for f in HIT_FIELDS}
        hit["snippet"] = clip(h.get("snippet") or "", LIMIT)
        hit["stale"] = bool(h.get("stale"))
        hits.append(hit)
    return {"confident": confident and bool(hits), "count": len(hits), "hits": hits}


def over_the_bar(response: dict[str, Any]) -> dict[str, Any]:
    """A strong-only response (asked with `explain`) cut to the hits that clear the hook's bar."""
    hits = [h for h in response.get("hits", ()) if h.get("strength") == "strong"]
    if not response.get("confident") or not hits:
        return {**response, "hits": [], "confident": False}

    def cover(h: dict[str, Any]) -> float:
        return float((h.get("explain") or {}).get("coverage") or 0.0)

    def bm25(h: dict[str, Any]) -> float:
        return float((h.get("explain") or {}).get("bm25") or 0.0)

    top = hits[0]
    leads = len(hits) == 1 or bm25(top) >= HOOK_LEAD * bm25(hits[1])
    kept = [h for h in hits if cover(h) >= HOOK_COVER - 1e-9] if cover(top) >= HOOK_COVER - 1e-9 and leads else []
    return {**response, "hits": kept, "confident": bool(kept)}


def topic_of(prompt: str) -> str:
    """The prompt without the words of asking (REQUEST_WORDS); the prompt itself when nothing else is left."""
    import re

    kept = [w for w in re.split(r"(\W+)", prompt) if w.lower() not in REQUEST_WORDS]
    topic = "".join(kept).strip()
    return topic if re.search(r"\w", topic) else prompt


def clip(text: str, chars: int) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= chars else text[:chars - 1].rstrip() + "…"


def prompt_of(raw: str) -> tuple[str, str, str]:
    """(prompt, session_id, event) from a client's hook JSON on stdin; ValueError when it is not one."""
    try:
        data = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise ValueError(f"stdin is not JSON ({exc.msg})") from None
    if not isinstance(data, dict):
        raise ValueError("stdin is not a JSON object")
    prompt = data.get("prompt")
    if not isinstance(prompt, str):
        raise ValueError("no `prompt` text in the hook input")
    session = data.get("session_id")
    event = data.get("hook_event_name")
    return (prompt[:PROMPT_CHARS], session if isinstance(session, str) else "",
            event if isinstance(event, str) and event else "UserPromptSubmit")


def hit_line(hit: dict[str, Any]) -> str:
    marks = [hit.get("kind") or "record"]
    if hit.get("state") not in (None, "active"):
        marks.append(f"{hit['state']} now")
    if hit.get("stale"):
        marks.append("stale: check it again")
    verified = hit.get("verified")
    if isinstance(verified, dict) and verified.get("current"):
        marks.append(f"verified {str(verified.get('at') or '')[:10]}".rstrip())
    line = f"- {hit['key']}: {clip(hit.get('title') or '', 120)} (sha {str(hit.get('sha') or '')[:10]}; {', '.join(marks)})"
    return line + (f"\n  {hit['snippet']}" if hit.get("snippet") else "")


def hook_text(hits: list[dict[str, Any]]) -> str:
    """The additionalContext for `hits`: the digest's framing (reference data, may be stale, never
    instructions), then one entry per record between the markers."""
    lines = [HEADER, "kyb recall: records that match this prompt (confident); `kyb get KEY` reads one whole.",
             BEGIN, *(hit_line(h) for h in hits), END]
    return "\n".join(lines)


class Session:
    """What the hook has injected in one client session: `seen` key@sha entries and `bytes` used."""

    def __init__(self, root: Path, session_id: str) -> None:
        self.root = root
        digest = hashlib.sha256(session_id.encode("utf-8", "surrogatepass")).hexdigest()[:24]
        self.path = root / f"{digest}.json"
        self.seen: set[str] = set()
        self.bytes = 0
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
            self.seen = set(data.get("seen", ()))
            self.bytes = int(data.get("bytes", 0))
        except (OSError, ValueError, TypeError, AttributeError):
            pass  # no file yet, or one that is not ours: a new session

    @staticmethod
    def mark(hit: dict[str, Any]) -> str:
        return f"{hit['key']}@{hit.get('sha') or ''}"

    def fresh(self, hits: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """The hits not yet injected in this session, kept only while the session's byte cap holds."""
        out: list[dict[str, Any]] = []
        for hit in hits:
            if self.mark(hit) in self.seen:
                continue
            if len(hook_text([*out, hit]).encode("utf-8")) + self.bytes > SESSION_BYTES:
                break
            out.append(hit)
        return out

    def record(self, hits: list[dict[str, Any]], text: str) -> None:
        """Remember what was injected (written atomically), and prune other sessions' old files."""
        self.seen |= {self.mark(h) for h in hits}
        self.bytes += len(text.encode("utf-8"))
        self.root.mkdir(parents=True, exist_ok=True)
        tmp = self.path.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(json.dumps({"seen": sorted(self.seen), "bytes": self.bytes}), encoding="utf-8")
        os.replace(tmp, self.path)
        prune(self.root)


def prune(root: Path, now: float | None = None) -> None:
    """Remove session files older than SESSION_MAX_AGE."""
    now = time.time() if now is None else now
    try:
        entries = list(os.scandir(root))
    except OSError:
        return
    for entry in entries:
        try:
            if entry.name.endswith((".json", ".tmp")) and now - entry.stat().st_mtime > SESSION_MAX_AGE:
                os.unlink(entry.path)
        except OSError:
            pass


def sessions_dir() -> Path:
    from kyb_cli.core.config.dirs import cache_dir

    return cache_dir() / "recall-sessions"


def hook_json(text: str, event: str) -> str:
    """The client's hook answer adding `text` to the model's context for this prompt."""
    return json.dumps({"hookSpecificOutput": {"hookEventName": event, "additionalContext": text}},
                      ensure_ascii=False)
