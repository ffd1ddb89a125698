"""Every size limit on what a caller or a peer controls, declared once (docs/guide/sharing.md "Limits").

A local write, an import and a peer's push are checked against the same numbers, so a record that
cannot be written here is never served from a peer either. Each limit is a clear refusal (Rejected,
exit 3, for a record; a refused sync, exit 4, for a peer's tree) naming the limit — never an internal
error. The sync totals are configurable by environment because a team may legitimately move more.
"""

from __future__ import annotations

from operator import itemgetter

from kyb_cli.core.records.fields import stored_fields

NAME_MAX_BYTES = 255  # one path component (NAME_MAX on Linux, macOS and Windows)
PATH_MAX_BYTES = 1024  # a whole store path: well under PATH_MAX, within what every filesystem holds
TREE_DEPTH_MAX = 16  # directories below the store root (records live one level down)
FRONT_MATTER_MAX_BYTES = 64 * 1024  # all front-matter fields together (the body has its own 1 MiB)
TAGS_MAX = 100  # tags, refs, hosts, knowledge, blocked_by: entries per list
YAML_ALIASES_MAX = 0  # YAML front matter on import: aliases refused before anything expands
JSON_DEPTH_MAX = 64  # nesting of a JSON value (import rows, HTTP bodies)
COMMIT_MAX_BYTES = 256 * 1024  # one incoming commit object (headers and message)
SYNC_INCOMING_MAX_DEFAULT = 256 * 1024 * 1024  # new blob bytes one sync may bring in (KYB_SYNC_MAX_INCOMING)
LIST_FIELDS = ("tags", "refs", "hosts", "knowledge", "blocked_by")
_TEXT = itemgetter(1)  # of a stored_fields pair


def sync_incoming_max() -> int:
    """The total of new blob bytes one sync may bring in; `KYB_SYNC_MAX_INCOMING` raises or lowers it."""
    from kyb_cli.core.settings import env_int

    return env_int("KYB_SYNC_MAX_INCOMING", SYNC_INCOMING_MAX_DEFAULT, minimum=1)


def path_problem(path: str) -> str | None:
    """Why a repository path is one the filesystem may not hold (too long a name, path or depth)."""
    parts = path.split("/")
    if len(parts) - 1 > TREE_DEPTH_MAX:
        return f"a path {len(parts) - 1} directories deep, over the limit of {TREE_DEPTH_MAX}"
    if len(path.encode("utf-8", "surrogateescape")) > PATH_MAX_BYTES:
        return f"a path over {PATH_MAX_BYTES} bytes"
    for part in parts:
        if len(part.encode("utf-8", "surrogateescape")) > NAME_MAX_BYTES:
            return f"a file name over {NAME_MAX_BYTES} bytes (NAME_MAX): no filesystem can hold it"
    return None


def record_problem(record, fields=None) -> str | None:
    """Why `record`'s fields break a size limit (list lengths, front matter), or None. `fields`:
    stored_fields(record) when the caller has it already (served.py scans the same list for secrets)."""
    # each entry of these lists is one of stored_fields's pairs: no list is longer than they are many
    for name in (LIST_FIELDS if fields is None or len(fields) > TAGS_MAX else ()):
        count = len(getattr(record, name, ()) or ())
        if count > TAGS_MAX:
            return f"{name} has {count:,} entries; the limit is {TAGS_MAX}"
    if fields is not None and _within(fields):
        return None
    texts = [text for name, text in (stored_fields(record) if fields is None else fields)
             if name != "body" and isinstance(text, str)]
    if sum(map(len, texts)) * 4 <= FRONT_MATTER_MAX_BYTES:  # 4 bytes a character at most: under the limit
        return None  # without encoding each field (every record a snapshot indexes comes here)
    size = sum(len(text.encode("utf-8", "surrogateescape")) for text in texts)
    if size > FRONT_MATTER_MAX_BYTES:
        return f"front matter is {size:,} bytes; the limit is {FRONT_MATTER_MAX_BYTES:,} (64 KiB)"
    return None


def _within(fields) -> bool:
    """True when the front matter is surely under its limit: every value joined, the body too (at
    least the characters record_problem counts), within it at 4 bytes a character. One join in C
    instead of building the list of texts: most records are small (issue 39)."""
    try:
        return len("".join(map(_TEXT, fields))) * 4 <= FRONT_MATTER_MAX_BYTES
    except TypeError:  # a value that is not text: record_problem's own walk skips it
        return False


def has_lone_surrogate(text: str) -> bool:
    """A code point in U+D800-U+DFFF, the only ones strict UTF-8 refuses: found by the codec in C
    (a character loop was ~0.1 ms of every /mcp frame the guard walks). The one test of it: JSON
    values here, the MCP frame guard (mcp/frames.py) too."""
    if text.isascii():
        return False
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def json_depth(value) -> int:
    """How deeply `value` nests lists and dicts, walked without recursion; ValueError on a string
    holding a lone surrogate (`"\\ud800"` is valid JSON but no UTF-8 text: it cannot be stored)."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, str) and has_lone_surrogate(item):
            raise ValueError("a string holds a lone surrogate (\\ud800-\\udfff): not text kyb can store")
        if isinstance(item, dict):
            stack.extend((k, depth) for k in item)
            item = list(item.values())
        if isinstance(item, list):
            deepest = max(deepest, depth)
            stack.extend((v, depth + 1) for v in item if isinstance(v, (list, dict, str)))
    return deepest


def loads_json(text: str):
    """json.loads with the depth limit: ValueError (a clear refusal) instead of RecursionError."""
    import json

    try:
        value = json.loads(text)
    except RecursionError:
        raise ValueError(f"JSON nested deeper than {JSON_DEPTH_MAX} levels") from None
    if json_depth(value) > JSON_DEPTH_MAX:
        raise ValueError(f"JSON nested deeper than {JSON_DEPTH_MAX} levels")
    return value


def yaml_load(text: str):
    """YAML front matter without aliases: `&a`/`*a` are refused before anything expands (a 353-byte
    note of nested aliases once became 75 MB)."""
    import yaml

    class _NoAliases(yaml.SafeLoader):
        def compose_node(self, parent, index):  # noqa: ANN001 - PyYAML's hook
            if self.check_event(yaml.AliasEvent) and YAML_ALIASES_MAX == 0:
                raise ValueError("YAML aliases (*name) are not accepted in front matter")
            return super().compose_node(parent, index)

    return yaml.load(text, Loader=_NoAliases)  # noqa: S506 - a SafeLoader subclass
