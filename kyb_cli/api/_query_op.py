"""The operations table's `query` entry, apart: a `kyb query` reads its fields (the fast path's options,
the bounds every door checks) and its compact-hit rules without building the other ~30 operations
(api/operations.py, which re-exports every name here: ~1.5 ms of each one-shot query, issue 38)."""

from __future__ import annotations

from kyb_cli.api._table import Field, Operation
from kyb_cli.api.search import FILTER_TAGS_MAX  # declared beside its check (a query needs no table)

KINDS = ("knowledge", "incident", "task")
STRENGTHS = ("weak", "strong")
# Every `limit` takes 1 to its maximum, in every door (exit 2 / HTTP 400 / MCP error result otherwise):
# 0 is refused, never "no rows" nor "no limit" (docs/guide/sharing.md "Limits").
LIMIT_MIN = 1

QUERY = Operation("query", "Search records: current state, `history`, `as_of`, `as_of_event` or `changed_between` (one mode at a time).", (
    Field("text", default="", description="Words to search; empty lists newest first. Any text is valid.",
          http="q", example="checkout port", positional=True, metavar="[TEXT]..."),
    Field("also", "texts", [], (
        "Other phrasings of the same question (up to 7), fused with it into one answer with one `confident`. "
        "Give them when the words of the records are unknown: a paraphrase in other words, the question in "
        "English when asked in another language, a likely identifier; or when a first answer was not confident. "
        "They vouch together, the same in any order: a hit is strong when every phrasing grades it strong, or "
        "one does and every one ranks it in its first two."),
        example=["how is an order written to the database"], maximum=7, metavar="TEXT"),
    Field("limit", "integer", 10, "At most this many hits.", minimum=LIMIT_MIN, maximum=100),
    Field("tags", "strings", [], f"Only records with all these tags (comma list; on the CLI repeatable too; at most "
          f"{FILTER_TAGS_MAX}, repeats counted once).", aliases=("--tag",), multiple=True, metavar="TAG[,TAG]",
          maximum=FILTER_TAGS_MAX),
    Field("kind", description="Only this kind.", enum=KINDS),
    Field("history", "boolean", False, "Search every content version, current included."),
    Field("as_of", description="Search the store as it was at T: RFC 3339, a date (end of day UTC) or a revision.",
          example="2026-11-30", metavar="T"),
    Field("as_of_event", description=(
        "What was true in the world at T (event time: effective_at, else write time), by what the store knows "
        "now, or knew at `as_of` when both are given."), example="2026-11-30", metavar="T"),
    Field("changed_between", "strings", None, "Two times A and B (HTTP: A,B): versions written in this window; the "
          "latest match per key.",
          example=["2026-11-01", "2026-11-30"], minimum=2, maximum=2, metavar="A B"),
    Field("semantic", "boolean", True, "Fuse search by meaning when a model is there; false: words only."),
    Field("explain", "boolean", False, "Per hit: lexical rank, vector rank, cosine, fused score."),
    Field("min_strength", default="weak", enum=STRENGTHS, description=(
        "strong: only hits that hold the question's words or clear the calibrated floor by meaning.")),
    Field("status", description="Only this status (exact)."),
    Field("service", description="Only this service (any case)."),
    Field("priority", description="Only this priority (exact)."),
    Field("assignee", description="Only this assignee (exact)."),
    Field("parent", description="Only sub-tasks of this task key."),
    Field("recent", "boolean", False, "Newest first instead of by relevance."),
    Field("full", "boolean", False, "Each hit with its whole body. Default: a snippet (the best-matching passage) "
          "and no body, a few kB for 10 hits; `get` reads the one record you choose."),
), example="kyb query 'checkout port' --as-of 2026-11-30")

# What a compact hit (a query without `full`) leaves out, 10 hits in 4 kB (issue 38): the body, and the
# lists, times and the rank score (BM25 or cosine: not comparable across answers; `strength` says how
# good a hit is) an agent does not choose by; `effective_at` stays in the mode that slices by it
# (--as-of-event). Asking for one of them by name (`--fields key,tags`) asks for the full hits.
COMPACT_DROPS = ("body", "tags", "refs", "effective_at", "score")
# What every compact hit carries, set or not: what an agent chooses by (issue 38's list; `committed_at`
# and `stale` are the freshness fields every record has). Any other field (the kind's own: status,
# assignee, resolution, due, hosts…; `review_by`, `verified`, `extra`) is there only when the record
# sets it: an empty string, list or map, null or false says nothing an agent chooses by (a task hit's
# 13 kind fields were 10 empty ones, 151 of a 10k store's 4,635 bytes). A door that lets a caller pick
# fields asks for the full hits when one outside this list is picked (`get` / `--full` show every field).
COMPACT_KEEPS = ("key", "title", "kind", "sha", "committed_at", "state", "is_head", "strength", "found_by",
                 "snippet", "stale")


def compact(hits, *, as_of_event: bool = False) -> None:
    """Make `hits` compact in place: COMPACT_DROPS out, and every field outside COMPACT_KEEPS that is
    unset ("", [], {}, null, false; never 0). Under `as_of_event` its mode's `effective_at` stays, set
    or not, as the fields of COMPACT_KEEPS do."""
    drop, keep = COMPACT_DROPS, _KEEPS
    if as_of_event:
        drop, keep = tuple(f for f in drop if f != "effective_at"), keep | {"effective_at"}
    for hit in hits:
        for name in drop:
            hit.pop(name, None)
        # `not v` first: most fields are set, and one test then says so (10 hits: ~30 → ~10 µs)
        for name in [n for n, v in hit.items() if not v and _unset(v) and n not in keep]:
            del hit[name]


def _unset(v) -> bool:
    """An empty string, list or map, null or false: what a compact hit leaves out (never 0)."""
    return v is None or v is False or v == "" or v == [] or v == {}


_KEEPS = frozenset(COMPACT_KEEPS)
