"""Targeted edits of a user's JSON file: add or remove one object member or array item, byte for byte.

`kyb agents install --mcp/--hook` writes into files the agents own (`~/.claude.json`,
`settings.json`, `mcp.json`, `hooks.json`). Rewriting them with `json.dump` would reorder keys,
change indentation and drop comments (Gemini's settings.json may carry `//` comments), so kyb
edits the text instead: it finds the spans of the values it needs with a small scanner and inserts
or deletes exactly one fragment. Uninstall deletes exactly what install inserted, so an untouched
file comes back byte-identical (rule: uninstall restores user files byte for byte).

Insertion, so that removal can undo it exactly:
- into a container with entries: `,` + the first entry's line break and indent + the entry,
  right after the last entry;
- into an empty container: the entry right after `{` / `[` (compact: `{"kyb": …}`);
- a missing container is created in multi-line form (`{\\n  "a": …\\n}`) as an entry of its parent;
  a missing or blank file becomes a new document.
Removal finds the entry by its value (what kyb writes, compared as JSON), deletes it with the
separator before it (or after it, when it is first), and removes a container left empty that has
the multi-line form kyb creates (a container kyb made), up to deleting a file kyb created.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Callable


class JsonEditError(ValueError):
    """The text is not JSON kyb can edit safely (syntax error, trailing comma, wrong shape)."""


@dataclass
class Node:
    kind: str  # object | array | scalar
    start: int
    end: int
    entries: list["Entry"] = field(default_factory=list)

    def value(self, text: str) -> Any:
        try:
            return json.loads(text[self.start:self.end])
        except (ValueError, RecursionError):
            return _NOT_JSON


@dataclass
class Entry:
    key: str | None  # None for array items
    start: int  # where the entry's text begins (its key, or the item itself)
    node: Node


_NOT_JSON = object()


class _Scanner:
    def __init__(self, text: str) -> None:
        self.text = text

    def ws(self, i: int) -> int:
        text, n = self.text, len(self.text)
        while i < n:
            if text[i] in " \t\r\n\ufeff":
                i += 1
            elif text.startswith("//", i):
                nl = text.find("\n", i)
                i = n if nl < 0 else nl + 1
            elif text.startswith("/*", i):
                close = text.find("*/", i + 2)
                if close < 0:
                    raise JsonEditError("unclosed /* comment")
                i = close + 2
            else:
                break
        return i

    def string(self, i: int) -> int:
        text, n = self.text, len(self.text)
        j = i + 1
        while j < n:
            c = text[j]
            if c == "\\":
                j += 2
                continue
            if c == '"':
                return j + 1
            j += 1
        raise JsonEditError("unclosed string")

    def value(self, i: int) -> Node:
        i = self.ws(i)
        if i >= len(self.text):
            raise JsonEditError("unexpected end of file")
        c = self.text[i]
        if c == "{":
            return self.container(i, "object", "}")
        if c == "[":
            return self.container(i, "array", "]")
        if c == '"':
            return Node("scalar", i, self.string(i))
        j = i
        while j < len(self.text) and self.text[j] not in ",}] \t\r\n/":
            j += 1
        if j == i:
            raise JsonEditError(f"unexpected {c!r} at offset {i}")
        return Node("scalar", i, j)

    def container(self, i: int, kind: str, close: str) -> Node:
        node = Node(kind, i, -1)
        j = self.ws(i + 1)
        if j < len(self.text) and self.text[j] == close:
            node.end = j + 1
            return node
        while True:
            start = j
            key = None
            if kind == "object":
                if j >= len(self.text) or self.text[j] != '"':
                    raise JsonEditError(f"expected a member name at offset {j}")
                k_end = self.string(j)
                key = json.loads(self.text[j:k_end])
                j = self.ws(k_end)
                if j >= len(self.text) or self.text[j] != ":":
                    raise JsonEditError(f"expected ':' at offset {j}")
                j += 1
            child = self.value(j)
            node.entries.append(Entry(key, start, child))
            j = self.ws(child.end)
            if j < len(self.text) and self.text[j] == ",":
                j = self.ws(j + 1)
                if j < len(self.text) and self.text[j] == close:
                    raise JsonEditError("trailing comma")
                continue
            if j < len(self.text) and self.text[j] == close:
                node.end = j + 1
                return node
            raise JsonEditError(f"expected ',' or {close!r} at offset {j}")


def parse(text: str) -> Node:
    scanner = _Scanner(text)
    try:
        root = scanner.value(0)
    except RecursionError:
        raise JsonEditError("nested too deeply") from None
    if scanner.ws(root.end) != len(text):
        raise JsonEditError("text after the JSON value")
    return root


def _indent_unit(text: str, root: Node) -> str:
    if root.entries:
        ws = text[root.start + 1:root.entries[0].start]
        if "\n" in ws:
            unit = ws.rsplit("\n", 1)[1]
            if unit.strip() == "" and unit:
                return unit
    return "  "


def _walk(text: str, root: Node, path: list[str]) -> tuple[Node, int, list[str]]:
    """(deepest existing object on `path`, its depth, the rest of the path that does not exist)."""
    node, depth = root, 0
    for i, name in enumerate(path):
        if node.kind != "object":
            raise JsonEditError(f"{'.'.join(path[:i]) or 'the top level'} is not a JSON object")
        child = next((e.node for e in node.entries if e.key == name), None)
        if child is None:
            return node, depth, path[i:]
        node, depth = child, depth + 1
    return node, depth, []


def _insert(text: str, container: Node, entry_text: str) -> str:
    if not container.entries:
        at = container.start + 1
        return text[:at] + entry_text + text[at:]
    ws = text[container.start + 1:container.entries[0].start]
    sep = ("\n" + ws.rsplit("\n", 1)[1]) if "\n" in ws else " "
    at = container.entries[-1].node.end
    return text[:at] + "," + sep + entry_text + text[at:]


def add(text: str | None, path: list[str], value: Any, *, key: str | None = None,
        same: Callable[[Any], bool] | None = None) -> tuple[str, str]:
    """Add member `key: value` to the object at `path`, or `value` as an item of the array at `path`
    (key None). Returns (new text, status): added | present | foreign (the key holds another value)."""
    value_text = json.dumps(value, ensure_ascii=False)
    same = same or (lambda v: v == value)
    if text is None or text.strip() == "":  # a new document (a blank file counts as none)
        unit = "  "
        if key is None:
            leaf = f"[\n{unit * (len(path) + 1)}{value_text}\n{unit * len(path)}]"
            return _nest(path, leaf, 0, unit) + "\n", "added"
        return _nest(path + [key], value_text, 0, unit) + "\n", "added"
    root = parse(text)
    if root.kind != "object":
        raise JsonEditError("the top level is not a JSON object")
    unit = _indent_unit(text, root)
    node, depth, rest = _walk(text, root, path)
    if not rest:
        if key is not None:
            if node.kind != "object":
                raise JsonEditError(f"{'.'.join(path)} is not a JSON object")
            found = next((e for e in node.entries if e.key == key), None)
            if found is not None:
                return text, ("present" if same(found.node.value(text)) else "foreign")
            return _insert(text, node, f"{json.dumps(key)}: {value_text}"), "added"
        if node.kind != "array":
            raise JsonEditError(f"{'.'.join(path)} is not a JSON array")
        if any(same(e.node.value(text)) for e in node.entries):
            return text, "present"
        return _insert(text, node, value_text), "added"
    # Create the missing chain under `node` (an object at `depth`).
    if key is None:
        level = depth + len(rest)
        leaf = f"[\n{unit * (level + 1)}{value_text}\n{unit * level}]"
        return _insert(text, node, _nest(rest, leaf, depth, unit, as_member=True)), "added"
    return _insert(text, node, _nest(rest + [key], value_text, depth, unit, as_member=True)), "added"


def _nest(names: list[str], leaf: str, level: int, unit: str, *, as_member: bool = False) -> str:
    """The chain `names` -> `leaf` in kyb's multi-line form, for a container at depth `level`:
    as a member (`"a": {\n    "b": leaf\n  }`) or as the object holding it (`{\n  "a": …\n}`)."""
    if as_member:
        head, rest = names[0], names[1:]
        return f"{json.dumps(head)}: " + (_nest(rest, leaf, level + 1, unit) if rest else leaf)
    return f"{{\n{unit * (level + 1)}{_nest(names, leaf, level, unit, as_member=True)}\n{unit * level}}}"


def remove(text: str | None, path: list[str], *, key: str | None = None,
           ours: Callable[[Any], bool]) -> str | None | bool:
    """Remove kyb's entry: member `key` of the object at `path` whose value `ours(value)` accepts,
    or the first such item of the array at `path`. Returns the new text, None when the file should
    be deleted (kyb created it and nothing else is left), or False when there is nothing of kyb's."""
    if text is None or text.strip() == "":
        return False
    root = parse(text)
    chain: list[tuple[Node, Entry]] = []  # (container, entry) from the root down
    node = root
    for name in path:
        if node.kind != "object":
            return False
        entry = next((e for e in node.entries if e.key == name), None)
        if entry is None:
            return False
        chain.append((node, entry))
        node = entry.node
    if key is not None:
        if node.kind != "object":
            return False
        target = next((e for e in node.entries if e.key == key and ours(e.node.value(text))), None)
    else:
        if node.kind != "array":
            return False
        target = next((e for e in node.entries if ours(e.node.value(text))), None)
    if target is None:
        return False
    container = node
    while True:
        if len(container.entries) > 1 or not _made_by_kyb(text, container, target):
            return _delete(text, container, target)
        # kyb made this container for its entry alone: remove the container itself
        if not chain:  # the whole document is kyb's
            return None
        container, target = chain.pop()


def _made_by_kyb(text: str, container: Node, only: Entry) -> bool:
    """A container whose one entry sits on its own line (the multi-line form kyb creates)."""
    before = text[container.start + 1:only.start]
    after = text[only.node.end:container.end - 1]
    return "\n" in before and before.strip() == "" and after.strip() == ""


def _delete(text: str, container: Node, target: Entry) -> str:
    i = container.entries.index(target)
    if i > 0:
        start = container.entries[i - 1].node.end
        return text[:start] + text[target.node.end:]
    if len(container.entries) > 1:
        return text[:target.start] + text[container.entries[1].start:]
    return text[:target.start] + text[target.node.end:]
